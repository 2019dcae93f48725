"""G5: the public API of the checked packages only grows, and the default route holds until D.

The packages are the policy's `api.packages` plus every base record's `api.packages`.
Each changed module is read at the merge base and at head (`gates.api_surface`),
its star imports followed into the repository's modules at the same commit; anything
that would break a caller fails. A module that did not change but star-imports one
that did (`from .impl import *` in an `__init__.py`) is read the same way, and what
breaks its surface is reported at the changed file it came through. The
default-route switches (the policy's `api.switches` and a record's `api.switch`, as
`package.module:NAME`) may change only when a record governing that module has passed
stage D on base (its `series.closed.D` is in the base history) and no governing
record still declares `api.default_route_unchanged: true`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from gates.api_surface import ApiChange, ModuleSurface, diff_surfaces, module_surface
from gates.errors import InputError
from gates.module_scope import ReadText, module_name, module_reader
from gates.policy import any_glob_matches
from gates.series.context import SeriesContext, field_of, line_of


def _packages(ctx: SeriesContext) -> list[str]:
    names = list(ctx.policy.api_packages)
    for snapshot in ctx.base_records.values():
        declared = field_of(snapshot.front_matter, "api", "packages", default=[])
        names += [n for n in declared if isinstance(n, str)] if isinstance(declared, list) else []
    return sorted(set(names))


def _switches(ctx: SeriesContext) -> dict[str, set[str]]:
    """module -> switch constant names."""
    specs = list(ctx.policy.switches)
    for snapshot in list(ctx.base_records.values()) + [rc.head for rc in ctx.change.records if rc.head]:
        declared = field_of(snapshot.front_matter, "api", "switch", default=[])
        if isinstance(declared, str):
            declared = [declared]
        specs += [s for s in declared if isinstance(s, str)] if isinstance(declared, list) else []
    by_module: dict[str, set[str]] = {}
    for spec in specs:
        module, _, name = spec.partition(":")
        if module and name:
            by_module.setdefault(module, set()).add(name)
    return by_module


def _in_packages(path: str, packages: list[str]) -> bool:
    return path.endswith(".py") and any(path.startswith(p.replace(".", "/") + "/") for p in packages)


_STAR_IMPORT = re.compile(r"\bimport[\s\\]*\*")


def _files_at(ctx: SeriesContext, ref: str) -> ReadText:
    """Reads files as they are at `ref`, each file once (None: not there; InputError: unreadable)."""
    return lru_cache(maxsize=None)(lambda path: ctx.change.read_at(ref, path))


def _surface(read_text: ReadText, path: str, names) -> ModuleSurface | None:
    """The module's surface in one tree, star imports followed in the same tree; None when the file is not there."""
    try:
        text = read_text(path)
    except InputError as exc:
        return ModuleSurface(module_name(path), path, error=exc.message)
    return module_surface(text, path, sorted(names), module_reader(read_text)) if text is not None else None


def _route_findings(ctx: SeriesContext, path: str, line: int, message: str) -> None:
    governing = [
        (rid, snap) for rid, snap in ctx.base_records.items()
        if snap.front_matter and any_glob_matches(field_of(snap.front_matter, "covers", default=[]), path)
    ]
    head_by_path = {rc.rel_path: rc.head for rc in ctx.change.records if rc.head and rc.head.front_matter}
    passed = [rid for rid, snap in governing if _passed_d(ctx, snap.front_matter)]
    still_pinned = [
        rid for rid, snap in governing
        if field_of((head_by_path.get(snap.rel_path) or snap).front_matter, "api", "default_route_unchanged") is True
    ]
    if not governing:
        ctx.report("G5", path, line, f"default route changed with no record governing {path}: {message}")
    elif not passed:
        stages = ", ".join(f"{rid} at stage {field_of(s.front_matter, 'stage')}" for rid, s in governing)
        ctx.report("G5", path, line, f"default route changed before stage D passed ({stages} on base): {message}")
    elif still_pinned:
        ctx.report("G5", path, line,
                   f"default route changed while {', '.join(still_pinned)} declares "
                   f"api.default_route_unchanged: true: {message}")


def _passed_d(ctx: SeriesContext, front_matter: dict | None) -> bool:
    """Stage D has passed: the record is at D and its closing commit is in the base history."""
    closed_d = field_of(front_matter, "series", "closed", "D")
    return (field_of(front_matter, "stage") == "D" and isinstance(closed_d, str)
            and ctx.change.is_ancestor(closed_d, ctx.change.base))


def check(ctx: SeriesContext) -> None:
    packages = _packages(ctx)
    switches = _switches(ctx)
    change = ctx.change
    base, head = _files_at(ctx, change.merge_base), _files_at(ctx, change.head)
    for entry in change.changed:
        old_path = entry.old_path or entry.path
        if entry.status in ("A", "C") or not _in_packages(old_path, packages):
            continue
        names = switches.get(module_name(old_path), set())
        old = _surface(base, old_path, names)
        if old is None:
            continue
        new = None if entry.status in ("D", "R") else _surface(head, entry.path, names)
        shown = entry.path if new is not None else old_path
        commit = change.last_commit_touching(entry.path)
        for api_change in diff_surfaces(old, new):
            if api_change.kind == "route":
                _route_findings(ctx, shown, api_change.line, api_change.message)
            else:
                moved = f" (module moved to {entry.path})" if entry.status == "R" else ""
                ctx.report("G5", shown, api_change.line,
                           f"public API break: {api_change.message}{moved}; the public API may only grow",
                           commit=commit)
    _check_star_importers(ctx, packages, switches, base, head)
    _check_route_declarations(ctx)


def _unchanged_star_importers(ctx: SeriesContext, packages: list[str], changed: set[str], base: ReadText) -> list[str]:
    """Modules of the checked packages that the change leaves alone and that contain a star import."""
    ref = ctx.change.merge_base
    paths = sorted({path for package in packages for path in ctx.change.list_files(ref, package.replace(".", "/"))})
    found = []
    for path in paths:
        if not _in_packages(path, packages) or path in changed:
            continue
        try:
            text = base(path)
        except InputError:
            continue  # unchanged and unreadable on both sides: nothing to compare
        if text is not None and _STAR_IMPORT.search(text):
            found.append(path)
    return found


def _check_star_importers(ctx: SeriesContext, packages: list[str], switches, base: ReadText, head: ReadText) -> None:
    """An unchanged module whose star imports reach a changed module: its surface may break all the same."""
    change = ctx.change
    changed = set(change.changed_paths())
    for path in _unchanged_star_importers(ctx, packages, changed, base):
        names = switches.get(module_name(path), set())
        old = _surface(base, path, names)
        new = _surface(head, path, names)
        if old is None or new is None:
            continue
        through = [p for p in dict.fromkeys(old.star_paths + new.star_paths) if p in changed]
        if not through:
            continue
        for api_change in diff_surfaces(old, new):
            shown, line = _where(api_change, through)
            message = f"{api_change.message} (through the star import in {path})"
            if api_change.kind == "route":
                _route_findings(ctx, shown, line, message)
            else:
                ctx.report("G5", shown, line, f"public API break: {message}; the public API may only grow",
                           commit=change.last_commit_touching(shown))


def _where(api_change: ApiChange, through: list[str]) -> tuple[str, int]:
    """The changed file to name: where the broken definition lives, else the first changed module star-imported."""
    if api_change.origin is not None and api_change.origin[0] in through:
        return api_change.origin
    return through[0], 1


def _check_route_declarations(ctx: SeriesContext) -> None:
    """Dropping `api.default_route_unchanged: true` is itself a route change before D."""
    for rc in ctx.change.records:
        if rc.head is None or rc.base is None or not rc.head.front_matter or not rc.base.front_matter:
            continue
        before = field_of(rc.base.front_matter, "api", "default_route_unchanged")
        after = field_of(rc.head.front_matter, "api", "default_route_unchanged")
        if before is True and after is not True and not _passed_d(ctx, rc.head.front_matter):
            ctx.report("G5", rc.rel_path, line_of(rc.head, "api", "default_route_unchanged"),
                       "api.default_route_unchanged dropped before stage D passed: record series.closed.D, "
                       "a commit in the base history, first")
