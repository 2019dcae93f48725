"""G5: the public API of the checked packages only grows, and the default route holds until D.

The packages are the policy's `api.packages` plus every base record's `api.packages`.
Each changed module is read at the merge base and at head (`gates.api_surface`);
anything that would break a caller fails. The default-route switches (the policy's
`api.switches` and a record's `api.switch`, as `package.module:NAME`) may change
only when a record governing that module has passed stage D on base (its
`series.closed.D` is in the base history) and no governing record still declares
`api.default_route_unchanged: true`.
"""

from __future__ import annotations

from gates.api_surface import ModuleSurface, diff_surfaces, module_name, module_surface
from gates.errors import InputError
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


def _surface(ctx: SeriesContext, ref: str, path: str, names) -> ModuleSurface | None:
    """The module's surface at `ref`; None when the file is not there."""
    try:
        text = ctx.change.read_at(ref, path)
    except InputError as exc:
        return ModuleSurface(module_name(path), path, error=exc.message)
    return module_surface(text, path, sorted(names)) if text is not None else None


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
    for entry in change.changed:
        old_path = entry.old_path or entry.path
        if entry.status in ("A", "C") or not _in_packages(old_path, packages):
            continue
        names = switches.get(module_name(old_path), set())
        old = _surface(ctx, change.merge_base, old_path, names)
        if old is None:
            continue
        new = None if entry.status in ("D", "R") else _surface(ctx, change.head, entry.path, names)
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
    _check_route_declarations(ctx)


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
