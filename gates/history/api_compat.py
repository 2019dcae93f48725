"""G5: the public API of the checked packages only grows, and the default route holds until D.

The packages are the policy's `api.packages` plus every base record's `api.packages`,
looked for under the policy's `api.package_roots` (default `.` then `src`); a policy
package found under none of them is an error. Each changed module is read at the
merge base and at head (`gates.python_api.api_surface`), its imports followed into the
repository's modules at the same commit; anything that would break a caller fails.
A module added to a package must be readable statically. A module that did not
change but imports from one that did (`from .impl import *` or `from ._impl import
_v2 as attention_decode`) is read the same way, and what breaks its surface is
reported at the changed file it came through. A changed module whose base surface cannot
be read is an error, unless the change makes it readable (then a warning: judged against
nothing, once). The
default-route switches (the policy's `api.switches` and a record's `api.switch`, as
`package.module:NAME`, with the defaults the module reads each one with, such as
`os.environ.get(NAME, "0")`) may change only when a record governing that module has passed
stage D on base (its `series.closed.D` is in the base history) and no governing
record still declares `api.default_route_unchanged: true`.
"""

from __future__ import annotations

import ast
import re
from contextlib import ExitStack
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path

from gates.history import archive_substitution, partial_checkout, reused_checkouts
from gates.history.comment_edits import edits_only_comments
from gates.history.context import SeriesContext, field_of, line_of
from gates.history.object_cache import kept_in
from gates.history.run_state import left_as_found
from gates.model.errors import GitContextError, InputError
from gates.model.policy import POLICY_PATH, any_glob_matches
from gates.model.record import question_decisions
from gates.python_api.api_surface import ApiChange, ModuleSurface, diff_surfaces, module_surface
from gates.python_api.import_server import ReadingNotEnded
from gates.python_api.module_patches import imports_module, patches_of
from gates.python_api.imported_surface import (
    LOOKED_KINDS,
    outline_names,
    read_by_importing,
    start_importing,
    suspiciously_small,
)
from gates.python_api.module_scope import (
    CONFLICT_MARKERS,
    ReadText,
    ScopeStore,
    module_name,
    module_paths,
    module_reader,
    opaque_when_unreadable,
    package_homes,
)
from gates.python_api.scope_binder import absolute_import
from gates.python_api.scope_model import decode_source
from gates.python_api.static_guard import PATH_CHANGE
from gates.python_api.syntax_walk import nodes


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


def _locate(ctx: SeriesContext, packages: list[str], base: ReadText, head: ReadText) -> dict[str, str]:
    """package -> the package root it lives under (at base, else at head).

    A policy package found nowhere, or a package found under two roots, is an error."""
    roots = list(ctx.policy.api_package_roots)
    located = {}
    for package in packages:
        seen: list[str] = []
        for side, read_text in (("base", base), ("head", head)):
            homes = package_homes(package, lambda path, read_text=read_text: _exists(read_text, path), roots)
            added = [home for home in homes if home not in seen]
            seen += homes
            if len(homes) > 1 and added:
                ctx.report("G5", added[-1], 1, f"api package {package!r} is found under more than one package root "
                           f"on {side} ({', '.join(homes)}); which one Python imports depends on sys.path: keep "
                           "one, or name its root alone in api.package_roots")
        for read_text in (base, head):
            found = next((root for root, path in module_paths(package, roots) if _exists(read_text, path)), None)
            if found is not None:
                located[package] = found
                break
        else:
            if package in ctx.policy.api_packages and package not in _dropped_at_head(ctx):
                looked = ", ".join(path for _, path in module_paths(package, roots))
                ctx.report("G5", POLICY_PATH, _policy_line(ctx, "packages", package),
                           f"api package {package!r} resolves to no module on base or head: looked for {looked} "
                           f"(package roots {', '.join(roots)}; set api.package_roots); a misspelt name checks "
                           "nothing: correct it in the policy, a change of the rules that waits for its reviewed "
                           "record (or one single-pr change that carries the record and its approval)")
    return located


def resolves_nowhere_at_base(ctx: SeriesContext, package: str) -> bool:
    """The base policy's api package `package` is found under none of its package roots at the base commit."""
    base = _files_at(ctx, ctx.change.merge_base)
    return not any(_exists(base, where) for _, where in module_paths(package, list(ctx.policy.api_package_roots)))


def _dropped_at_head(ctx: SeriesContext) -> set[str]:
    """The base policy's api packages that the policy at head no longer lists: a package found nowhere that the
    change takes out is the fix of a misspelt name, not a finding of it (the policy change itself is L4, judged
    by G8)."""
    try:
        policy = ctx.head_policy
    except InputError:
        return set()
    return set(ctx.policy.api_packages) - set(policy.api_packages if policy is not None else [])


def _exists(read_text: ReadText, path: str) -> bool:
    try:
        return read_text(path) is not None
    except InputError:
        return True  # there, but unreadable: the surface reports it


def _policy_line(ctx: SeriesContext, key: str, name: str) -> int:
    """The line of the base policy that names `name` in its `key` list (inline or one item per line); 1 if none."""
    lines = (ctx.change.read_at(ctx.change.base, POLICY_PATH) or "").splitlines()
    start = next((n for n, line in enumerate(lines) if key in line), None)
    if start is None:
        return 1
    return next((n for n, line in enumerate(lines[start:], start + 1) if name in line), 1)


def _prefix(root: str) -> str:
    return "" if root in (".", "") else root.strip("/") + "/"


def _package_root(path: str, located: dict[str, str]) -> str | None:
    """The package root of a module of one of the checked packages; None when `path` is in none of them."""
    if not path.endswith(".py"):
        return None
    for package, root in located.items():
        folder = _prefix(root) + package.replace(".", "/")
        if path.startswith(folder + "/") or path == folder + ".py":
            return root
    return None


_IMPORT = re.compile(r"\bimport\b")


_TEXTS: dict[str, str] = {}
"""Python sources already decoded, by git object id: one commit's head is the next one's base, and most files are the
same in every commit. A file's text is what its bytes decode to by their own coding cookie, whatever its path."""
_KEPT_TEXTS = 4_000


def _files_at(ctx: SeriesContext, ref: str) -> ReadText:
    """Reads files as they are at `ref`, each file once (None: not there; InputError: unreadable); Python
    sources are decoded the way Python decodes them (their coding cookie)."""
    change = ctx.change

    def read(path: str) -> str | None:
        path = change.resolved_at(ref, path)  # a module that is a symbolic link is the file it names, as Python reads it
        if not path.endswith(".py"):
            return change.read_at(ref, path)
        def decoded() -> str | None:
            data = change.read_bytes_at(ref, path)
            return None if data is None else decode_source(data, path)

        blob = change.blob_id(ref, path) if change.identifies_blobs else None
        return kept_in(_TEXTS, _KEPT_TEXTS, blob, decoded)

    cached = lru_cache(maxsize=None)(read)
    cached.ref = ref
    return cached


_SURFACES: dict[tuple, list["_Kept"]] = {}
"""Surfaces already read, by what they were read with: a history run meets the same module, with the same
files under it, in commit after commit. Each is kept with the git object id of every file its reading looked
at (None: looked for, not there), and used again only where each of those files is the same."""
_SCOPES: dict[tuple, list["_Kept"]] = {}  # the same for module scopes
_KEPT = 20_000
_HELD: dict[int, list] = {}  # id of a table of readings -> [the table, how many readings it holds], counted as kept


class _Kept:
    """One kept reading: the files it looked at with their object ids, what it read, and the root trees (commits'
    whole trees, by id) where those files were found the same. Commit i's head tree is commit i+1's base tree, so a
    history run asks about the same tree again; an equal root tree id is an equal file under every path."""

    __slots__ = ("files", "value", "trees", "by_path")

    def __init__(self, files: tuple[tuple[str, str | None], ...], value, tree: str | None):
        self.files = files
        self.value = value
        self.trees = {tree} if tree is not None else set()
        self.by_path = dict(files)


_UNSEEN = object()
_BLOB_IDS: dict[str | None, dict[str, str | None]] = {}
_KEPT_BLOB_TREES = 8


_SIDES: dict[tuple[str, str], tuple[dict[str, str | None], frozenset[str]]] = {}
_KEPT_SIDES = 8


def _sides(ctx: SeriesContext) -> tuple[dict[str, str | None], frozenset[str]]:
    """({merge base: head's root tree id, head: merge base's root tree id}, every path the change touches), once per
    change: a path the change leaves alone is the same file (or the same absence) in both trees."""
    change = ctx.change

    def sides():
        base_tree, head_tree = change.tree_id(change.merge_base, ""), change.tree_id(change.head, "")
        other = {change.merge_base: head_tree, change.head: base_tree} if base_tree and head_tree else {}
        return other, frozenset(change.changed_paths())

    return kept_in(_SIDES, _KEPT_SIDES, (change.merge_base, change.head), sides)


def _blob_ids(tree: str | None) -> dict[str, str | None]:
    """path -> object id in the root tree `tree`, as far as asked (a surface's reuse asks about the same paths of
    one tree tens of thousands of times); a fresh table where the tree has no id."""
    if tree is None:
        return {}
    found = _BLOB_IDS.get(tree)
    if found is None:
        if len(_BLOB_IDS) >= _KEPT_BLOB_TREES:
            del _BLOB_IDS[next(iter(_BLOB_IDS))]
        found = _BLOB_IDS[tree] = {}
    return found


_LINKED_TREES: dict[str, bool] = {}  # root tree id -> whether the tree holds a symbolic link


def _has_links(ctx: SeriesContext, ref: str, tree: str | None) -> bool:
    if tree is None:
        return bool(ctx.change.symlinks_at(ref))
    if tree not in _LINKED_TREES:
        if len(_LINKED_TREES) >= _KEPT:
            _LINKED_TREES.clear()
        _LINKED_TREES[tree] = bool(ctx.change.symlinks_at(ref))
    return _LINKED_TREES[tree]


class _Recorded(ScopeStore):
    """Notes the files each reading looks at in one tree, and finds surfaces and scopes read from the same files."""

    def __init__(self, ctx: SeriesContext, read_text: ReadText, ref: str):
        self.ctx = ctx
        self.ref = ref
        # where modules are found, and which of them read as outside the repository (`_module_reader`)
        self.roots = (tuple(ctx.policy.api_package_roots), tuple(ctx.policy.api_unchecked_modules))
        self.frames: list[dict[str, str | None]] = []
        self.read_text = read_text
        self.tree = ctx.change.tree_id(ref, "")
        self.links = _has_links(ctx, ref, self.tree)
        self.blobs = _blob_ids(self.tree) if not self.links else {}
        other, self.changed = _sides(ctx)
        self.other_tree = other.get(ref)  # the change's other side, whose files differ only at `changed`

    def blob_id(self, path: str) -> str | None:
        """The object id of the file at `path`, through its symbolic links (the file a reading of it reads)."""
        found = self.blobs.get(path, _UNSEEN)
        if found is _UNSEEN:
            found = self.blobs[path] = self.ctx.change.blob_id(self.ref, self.ctx.change.resolved_at(self.ref, path))
        return found

    def read(self, path: str) -> str | None:
        if self.frames:
            # a symbolic link is read as the file it names: that file is what the reading looked at, under both names
            resolved = self.ctx.change.resolved_at(self.ref, path) if self.links else path
            looked = [path] if resolved == path else [path, resolved]
            blob = self.blob_id(path)
            for frame in self.frames:
                for name in looked:
                    frame.setdefault(name, blob)
        return self.read_text(path)

    def same(self, files) -> bool:
        blob_id = self.blob_id
        return all(blob_id(path) == blob for path, blob in files)

    def same_where_changed(self, by_path: dict[str, str | None]) -> bool:
        blob_id, changed = self.blob_id, self.changed
        if len(by_path) < len(changed):  # the same paths either way: those the reading looked at and the change touches
            return all(blob_id(path) == blob for path, blob in by_path.items() if path in changed)
        return all(blob_id(path) == by_path[path] for path in changed if path in by_path)

    def found(self, kept: dict, key: tuple):
        readings = kept.get(key, ())
        known = next((reading for reading in readings if self.tree in reading.trees), None)
        if known is None and self.other_tree is not None:  # found the same on the change's other side: only the
            # files the change touches can differ
            known = next((reading for reading in readings if self.other_tree in reading.trees
                          and self.same_where_changed(reading.by_path)), None)
        if known is None:
            known = next((reading for reading in readings
                          if self.other_tree not in reading.trees and self.same(reading.files)), None)
        if known is None:
            return None, False
        if self.tree is not None:
            known.trees.add(self.tree)
        for frame in self.frames:
            frame.update(known.files)
        return known.value, True

    def put(self, kept: dict, key: tuple, files: dict, value) -> None:
        held = _HELD.get(id(kept))
        if held is None or held[0] is not kept:  # a table not counted yet
            held = _HELD[id(kept)] = [kept, sum(len(entries) for entries in kept.values())]
        if held[1] > _KEPT:
            kept.clear()
            held[1] = 0
        kept.setdefault(key, []).append(_Kept(tuple(files.items()), value, self.tree))
        held[1] += 1

    def recall(self, dotted: str, text: tuple[str, str] | None = None):
        scope, _ = self.found(_SCOPES, (dotted, self.roots, text))
        return scope

    def begin(self) -> None:
        self.frames.append({})

    def end(self) -> dict[str, str | None]:
        files = self.frames.pop()
        for frame in self.frames:
            frame.update(files)
        return files

    def keep(self, dotted: str, scope, text: tuple[str, str] | None = None) -> None:
        files = self.end()
        if scope is not None:
            self.put(_SCOPES, (dotted, self.roots, text), files, scope)

    def drop(self) -> None:
        self.end()


def _surface(ctx: SeriesContext, read_text: ReadText, path: str, root: str, names) -> ModuleSurface | None:
    """The module's surface in one tree, imports followed in the same tree; None when the file is not there."""
    ref = getattr(read_text, "ref", None)
    if ref is None or not ctx.change.identifies_blobs:
        return _read_surface(ctx, read_text, path, root, names)
    recorded = getattr(read_text, "recorded", None)
    if recorded is None or recorded.ctx is not ctx or recorded.frames:
        # one per tree of a change: the tree's ids, and the paths it has looked up, serve every module read there
        recorded = read_text.recorded = _Recorded(ctx, read_text, ref)
    key = (path, root, tuple(sorted(names)), recorded.roots, tuple(sorted(_decorator_rules(ctx).items())))
    surface, found = recorded.found(_SURFACES, key)
    if found:
        return surface
    recorded.begin()
    try:
        surface = _read_surface(ctx, recorded.read, path, root, names, recorded)
    finally:
        files = recorded.end()
    recorded.put(_SURFACES, key, files, surface)
    return surface


def _read_surface(ctx: SeriesContext, read_text: ReadText, path: str, root: str, names,
                  store: ScopeStore | None = None) -> ModuleSurface | None:
    module = module_name(path, root)
    try:
        text = read_text(path)
    except InputError as exc:
        return ModuleSurface(module, path, error=exc.message)
    if text is None:
        return None
    return module_surface(text, path, sorted(names), _module_reader(ctx, read_text), module,
                          store=store, **_decorator_rules(ctx))


def _module_reader(ctx: SeriesContext, read_text: ReadText):
    """The repository's modules as the surface reader follows them. A module of the base policy's
    `api.unchecked_modules` stays the repository's (a test that reads its names is no environment's), but where it
    cannot be read, what others import from it is bound as an import the checker does not follow (compared by
    presence, not by signature), so it does not make every module that imports from it unreadable too."""
    read_module = module_reader(read_text, ctx.policy.api_package_roots)
    unchecked = UncheckedModules(ctx.policy.api_unchecked_modules)
    if unchecked.listed:
        read_module = opaque_when_unreadable(read_module, unchecked.__contains__)
    return read_module


def _decorator_rules(ctx: SeriesContext) -> dict:
    """The policy's `api.internal_decorators` and `api.transparent_decorators` (by default Triton's kernel decorators
    and transformers' documentation decorators)."""
    return {"internal_decorators": tuple(ctx.policy.api_internal_decorators),
            "transparent_decorators": tuple(ctx.policy.api_transparent_decorators)}


_IMPORTED: dict[tuple, list[tuple[tuple, ModuleSurface]]] = {}
"""Surfaces read by importing, by (module, root, internal decorators): each kept with the state of every path its
import looked at (`Looked`: the files it opened, the folders it listed, the paths it stat'ed, each as the tree it was
imported from holds it) and used again in a tree where every one of them is the same, so a module is imported again
only where something its import read changed. An import that did not say what it looked at (a timeout, a hard exit)
is kept by the id of the package root's tree instead."""
_KEPT_IMPORTS = 2_000
_SERVER_STARTED: list[bool] = []  # [True] once this process started its import server (or found nothing to import)


# "Torch not compiled with CUDA enabled", "No device were detected on your machine", "no NVIDIA driver": an import
# that needs a GPU, which no dependency installed on a CPU runner provides
_NEEDS_A_GPU = re.compile(r"\bCUDA\b|\bROCm\b|\bHIP\b|\bGPU\b|\bno\s+device\b|\bdevice\s+(?:was|were)\s+detected"
                          r"|\bNVIDIA\b|\bnvidia-smi\b|\bdriver\b", re.IGNORECASE)


class _Imports:
    """The second way to read a module: importing it from base and from head (`gates.python_api.imported_surface`).

    Each import runs alone, the base's first, each from a checkout brought to its commit's tree and checked to hold
    exactly that tree just before it runs (`gates.history.reused_checkouts`): an import runs the code of its tree,
    and what one side's import wrote into the other side's checkout is gone before that side is imported again.
    An import that wrote what the checks read after it (the repository's git data, the checker's own files,
    `gates.history.run_state`) stops the check (`GitContextError`)."""

    def __init__(self, ctx: SeriesContext, located: dict[str, str]):
        self.ctx = ctx
        self.enabled = ctx.policy.api_import_fallback
        # An import first runs in a part of the tree: the checked packages' folders, and what lies directly in the
        # top folder and in each package root; where it looked beyond that part, it runs again in the whole tree.
        self.whole = sorted({_prefix(root) + package.replace(".", "/") for package, root in located.items()})
        self.tops = sorted({_prefix(root).rstrip("/") for root in located.values()} - {""})

    def surface(self, ref: str, module: str, path: str, root: str) -> ModuleSurface:
        """The module's surface at `ref` read by importing it; one with `error` when importing fails. Read again only
        where a file, folder listing or path the import looked at differs from every import of it kept before."""
        return self.surfaces([(ref, module, path, root)])[0]

    def surfaces(self, requests: list[tuple[str, str, str, str]]) -> list[ModuleSurface]:
        """`surface(ref, module, path, root)` of each request; the imports not kept before run one after the other,
        the base's first."""
        found = [self._kept(*request) for request in requests]
        missing = [index for index, surface in enumerate(found) if surface is None]
        if not missing:
            return found
        if not _SERVER_STARTED:
            _SERVER_STARTED.append(True)
            start_importing(self._package_sources(requests[missing[0]][0]))
        readings = dict(zip(missing, self._imports(requests, missing, partial=True)))
        again = [index for index in missing if not self._part_held(requests[index][0], readings[index][1])]
        if again:
            readings.update(zip(again, self._imports(requests, again, partial=False)))
        for index in missing:
            surface, looked = readings[index]
            found[index] = surface
            self._keep(*requests[index], surface, looked)
        return found

    def _imports(self, requests: list[tuple[str, str, str, str]], indexes: list[int], partial: bool) -> list:
        """(surface, what it looked at) of each request of `indexes`, imported one after the other (the base's first),
        each from a checkout of its side (or its part) made to hold exactly its tree just before the import."""
        found = {}
        for index in sorted(indexes, key=lambda index: requests[index][0] != self.ctx.change.merge_base):
            ref = requests[index][0]
            checkout = self.ctx.change.checked_out(ref, self.whole, self.tops) if partial else \
                self.ctx.change.checked_out(ref)
            with checkout as folder:
                first_change = left_as_found(self.ctx.change.git_data_state)
                try:
                    found[index] = self._import(Path(folder), *requests[index][1:])
                except ReadingNotEnded as exc:
                    raise GitContextError(
                        f"importing {requests[index][1]} at {ref[:12]} (G5's reading of a module it cannot read "
                        f"statically): {exc}, so nothing the checks read after it can be trusted. Review what the "
                        "module runs when it is imported, or set api.import_fallback: false in the base policy"
                    ) from None
                changed = first_change()
            if changed is not None:
                raise GitContextError(
                    f"importing {requests[index][1]} at {ref[:12]} (G5's reading of a module it cannot read "
                    f"statically) wrote {changed}, which the checks read after it (the repository's git data, the "
                    "checker's files or what Python runs at start): nothing they read after it can be trusted. "
                    "Review what the module runs when it is imported; run the check again in a fresh clone and "
                    "environment, or with api.import_fallback: false in the base policy")
        return [found[index] for index in indexes]

    def _package_sources(self, ref: str):
        """The texts of the checked packages' modules at `ref`, for the libraries they import."""
        change = self.ctx.change
        for folder in self.whole:
            for path in change.list_files(ref, folder):
                if path.endswith(".py"):
                    text = change.read_at(ref, path)
                    if text is not None:
                        yield text

    def _part_held(self, ref: str, looked) -> bool:
        """Whether every path an import from the part of `ref`'s tree looked at is one that part holds as the whole
        tree does (False when the import did not say what it looked at)."""
        if looked is None or looked.unsure:
            return False
        change = self.ctx.change
        return all(partial_checkout.holds(where, kind, self.whole, self.tops,
                                          lambda path: change.entry_at(ref, path) is not None,
                                          lambda path: (change.entry_at(ref, path) or ("",))[0] == "40000",
                                          lambda path: [name for _, name in change.listing(ref, path) or ()])
                   for kind in LOOKED_KINDS for where in getattr(looked, kind))

    def _key(self, module: str, root: str) -> tuple:
        return (module, root, tuple(self.ctx.policy.api_internal_decorators))

    def _kept(self, ref: str, module: str, path: str, root: str) -> ModuleSurface | None:
        """An import of `module` kept before whose every looked-at path is the same at `ref`; None when there is none."""
        if not self.ctx.change.identifies_blobs:
            return None
        tree = self.ctx.change.tree_id(ref, _prefix(root).rstrip("/"))  # "." is the top folder, ""
        for looked, found in _IMPORTED.get(self._key(module, root), ()):
            if looked[0] == "tree" and looked[1] == tree and tree is not None or \
                    looked[0] == "looked" and all(self._state(ref, *item[:2]) == item[2] for item in looked[1]):
                return found
        return None

    def _keep(self, ref: str, module: str, path: str, root: str, found: ModuleSurface, looked) -> None:
        """Keep an import's surface with the state of every path it looked at (or the root's tree id)."""
        if not self.ctx.change.identifies_blobs:
            return
        tree = self.ctx.change.tree_id(ref, _prefix(root).rstrip("/"))  # "." is the top folder, ""
        if looked is not None and not looked.unsure:
            kept = ("looked", tuple((kind, where, self._state(ref, kind, where))
                                    for kind in LOOKED_KINDS for where in getattr(looked, kind)))
        elif tree is not None:
            kept = ("tree", tree)
        else:
            return
        if sum(len(readings) for readings in _IMPORTED.values()) > _KEPT_IMPORTS:
            _IMPORTED.clear()
        _IMPORTED.setdefault(self._key(module, root), []).append((kept, found))

    def _state(self, ref: str, kind: str, where: str):
        """What the tree of `ref` holds at `where` as an import sees it: a folder's listing, a file's object id."""
        change = self.ctx.change
        if kind == "listed":
            return change.listing(ref, where)
        if kind == "scanned":
            return change.entry_at(ref, where)  # the folder's tree: what each entry's stat sees lies in it
        found = change.entry_at(ref, where)
        if kind == "probed" and found is not None and found[0] == "40000":
            # a folder stat'ed (the import system checks each folder it searches): there, and its link count, which
            # counts its folders
            return found[0], tuple(name for mode, name in change.listing(ref, where) or () if mode == "40000")
        return found

    def _import(self, folder: Path, module: str, path: str, root: str):
        reading = read_by_importing(folder, module, [root], self.ctx.policy.api_internal_decorators)
        if reading.error is not None:
            return ModuleSurface(module, path, error=reading.error), reading.looked
        return ModuleSurface(module, path, entries=reading.entries, exports=reading.exports), reading.looked

    def compared(self, module: str, root: str, old: ModuleSurface | None, new: ModuleSurface | None,
                 old_path: str | None, new_path: str | None):
        """(old, new, a note) read by importing where a side cannot be read statically; (old, new, None) as they
        are when both can, or when importing fails too (the static error then stands, with why importing failed)."""
        unreadable = [side for side in (old, new) if side is not None and side.error]
        if not unreadable or not self.enabled or any(PATH_CHANGE in side.error for side in unreadable):
            return old, new, None  # a changed `__path__` moves its modules' files, which no import of it shows
        if all(side.error.startswith(CONFLICT_MARKERS) for side in unreadable):
            return old, new, None  # no Python compiles a merge-conflict marker: an import fails the same way
        change = self.ctx.change
        sides = ((change.merge_base, old_path, old), (change.head, new_path, new))
        read = iter(self.surfaces([(ref, module, path, root) for ref, path, side in sides if side is not None]))
        imported = [next(read) if side is not None else None for _, _, side in sides]
        failed = [side.error for side in imported if side is not None and side.error]
        if failed:
            hint = "; install the package's dependencies where gate-check runs to read it this way" \
                if "ModuleNotFoundError" in failed[0] else ""
            if not hint and _NEEDS_A_GPU.search(failed[0]):
                hint = "; importing it needs a GPU, which no dependency installed where gate-check runs provides"

            def also(side):
                return replace(side, error=f"{side.error}; importing it in a subprocess failed too ({failed[0]}{hint})") \
                    if side is not None and side.error else side
            return also(old), also(new), None
        reasons = {label: side.error for label, side in (("base", old), ("head", new)) if side is not None and side.error}
        reason = next(iter(reasons.values())) if len(set(reasons.values())) == 1 else \
            "; ".join(f"at {label}: {error}" for label, error in reasons.items())  # the head's own, where it differs
        for ref, path, side in ((change.merge_base, old_path, imported[0]), (change.head, new_path, imported[1])):
            source = change.read_at(ref, path) if side is not None and path else None
            outline = outline_names(source) if source is not None else set()
            if side is not None and suspiciously_small(set(side.entries), outline):
                error = (f"importing it bound {len(set(side.entries) & outline)} of the {len(outline)} public names "
                         f"its source names ({', '.join(sorted(outline)[:4])}{' ...' if len(outline) > 4 else ''}): an "
                         "import that swallowed a missing dependency cannot stand for its API; install the package's "
                         "dependencies where gate-check runs, or make the module readable statically")
                return (replace(old, error=f"{old.error}; {error}") if old is not None and old.error else old,
                        replace(new, error=f"{new.error}; {error}") if new is not None and new.error else new, None)
        note = (f"module {module} cannot be read statically ({reason}), so its surface on base and head was read by "
                "importing each in a subprocess; a reviewer may want to check what the import ran")
        return imported[0], imported[1], note


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


def _check_packages_the_change_adds(ctx: SeriesContext) -> None:
    """Each package that this change adds to the policy's `api.packages` resolves to a module at head: merged, a
    misspelt one would fail every later change on G5, and removing it again would loosen the base policy."""
    try:
        policy = ctx.head_policy
    except InputError:
        return  # an unreadable policy at head is reported where it is read
    if policy is None:
        return
    path, head, roots = ctx.policy_path, _files_at(ctx, ctx.change.head), policy.api_package_roots
    after = ctx.change.read_at(ctx.change.head, path)  # for the line that names each package
    for package in policy.api_packages:
        if package in ctx.policy.api_packages:
            continue  # the base's own (none where the base has no policy): checked as such
        if any(_exists(head, where) for _, where in module_paths(package, roots)):
            continue
        line = next((n for n, row in enumerate(after.splitlines(), 1) if "packages" in row and package in row), 1)
        looked = ", ".join(where for _, where in module_paths(package, roots))
        ctx.report("G5", path, line, f"api package {package!r}, which this change adds to the policy, resolves to no "
                   f"module at head: looked for {looked} (package roots {', '.join(roots)}; set api.package_roots); "
                   "merged, it would check nothing and fail every later change")


def check(ctx: SeriesContext) -> None:
    _check_packages_the_change_adds(ctx)
    packages = _packages(ctx)
    switches = _switches(ctx)
    change = ctx.change
    base, head = _files_at(ctx, change.merge_base), _files_at(ctx, change.head)
    located = _locate(ctx, packages, base, head)
    reported: set[tuple[str, int]] = set()
    modules: dict[str, str] = {}  # dotted name -> package root, for every module a changed file may be
    for entry in change.changed:
        # a module that is a symbolic link (or lies in a linked folder) changes with the file it names
        named = [name for path in dict.fromkeys([entry.old_path or entry.path, entry.path])
                 for name in change.path_names(path)]
        for path in dict.fromkeys(named):
            root = _package_root(path, located)
            if root is not None:
                modules.setdefault(module_name(path, root), root)
    unchecked = _unchecked_modules(ctx, located, head)
    _check_unreadable_files(ctx, located, unchecked)
    if all(edits_only_comments(change, entry) for entry in change.changed
           if entry.path.endswith(".py") or (entry.old_path or "").endswith(".py")):
        _check_route_declarations(ctx)  # no module changed but in comments or blank lines: every surface is what it was
        return
    with ExitStack() as stack:
        if reused_checkouts.in_effect() is None:
            stack.enter_context(reused_checkouts.reused_checkouts())  # each import's checkout checked before it runs
        imports = _Imports(ctx, located)
        for module, root in modules.items():
            _check_patches(ctx, head, module, root, located)
            path = _module_file(head, module, root)
            if path is not None:
                archive_substitution.check_module(ctx, path)
            if is_private_module(module) and module not in switches:
                continue  # `pkg._impl`: not API itself; what a public module re-exports from it is checked there
            if module in unchecked:
                path = _module_file(head, module, root) or _module_file(base, module, root)
                ctx.report("G5", path or POLICY_PATH, 1, f"module {module} is listed in api.unchecked_modules of the "
                           "base policy: its own surface is not compared", severity="warning")
                continue
            _check_module(ctx, imports, module, root, switches, base, head, located, reported)
        _check_importers(ctx, imports, located, switches, base, head, reported, unchecked)
    _check_outside_patchers(ctx, head, located)
    _check_route_declarations(ctx)


class UncheckedModules:
    """The base policy's `api.unchecked_modules`: dotted module names, and patterns with `*`
    (`unsloth.models.*`, every module below `unsloth.models`), as one `module in unchecked` test."""

    def __init__(self, listed):
        self.listed = list(dict.fromkeys(listed))
        self.names = {name for name in self.listed if "*" not in name}
        self.patterns = [name for name in self.listed if "*" in name]

    def __contains__(self, module: str) -> bool:
        return module in self.names or any(fnmatchcase(module, pattern) for pattern in self.patterns)


def _unchecked_modules(ctx: SeriesContext, located: dict[str, str], head: ReadText) -> UncheckedModules:
    """The base policy's `api.unchecked_modules`; each name that is no module of a checked package at head, and each
    pattern that matches none, is an error (a listed name that matches nothing must not pass silently)."""
    unchecked = UncheckedModules(ctx.policy.api_unchecked_modules)
    present = _modules_at(ctx, located, ctx.change.head) if unchecked.patterns else set()
    for module in unchecked.listed:
        if "*" in module:
            missing = not any(fnmatchcase(name, module) for name in present)
        else:
            package = next((p for p in located if module == p or module.startswith(p + ".")), None)
            missing = package is None or _module_file(head, module, located[package]) is None
        if missing:
            ctx.report("G5", POLICY_PATH, _policy_line(ctx, "unchecked_modules", module),
                       f"api.unchecked_modules lists {module}, which {'matches' if '*' in module else 'is'} no module "
                       f"of the checked packages ({', '.join(sorted(located)) or 'none'}) at head")
    return unchecked


def _modules_at(ctx: SeriesContext, located: dict[str, str], ref: str) -> set[str]:
    """Every module of the checked packages at `ref`, by its dotted name."""
    found = set()
    for package, root in located.items():
        folder = _prefix(root) + package.replace(".", "/")
        for path in [*ctx.change.list_files(ref, folder), folder + ".py"]:
            if path.endswith(".py") and ctx.change.entry_at(ref, path) is not None:
                found.add(module_name(path, root))
    return found


def _check_patches(ctx: SeriesContext, head: ReadText, module: str, root: str, located: dict[str, str]) -> None:
    """A changed module of a checked package, private ones included, that sets or deletes a name of a module of a
    checked package (`_api.attention_decode = _decode`): what callers get there is in neither module's own code."""
    path = _module_file(head, module, root)
    if path is not None:
        _report_patches(ctx, head, path, module, located)


def _report_patches(ctx: SeriesContext, head: ReadText, path: str, module: str, located: dict[str, str],
                    importer: str | None = None) -> None:
    """Report each statement of the module `module` at `path` that sets or deletes a name of a checked package's
    module (`gates.python_api.module_patches`); `importer`: the package module that imports one from outside."""
    try:
        text = head(path)
    except InputError:
        return  # an undecodable module: reported as unreadable where its surface is read
    if text is None:
        return
    roots = list(dict.fromkeys(located.values()))

    def is_repository_module(dotted: str) -> bool:
        return any(_module_file(head, dotted, where) is not None for where in roots)

    imported = f", which {importer} imports" if importer else ""
    unchecked = UncheckedModules(ctx.policy.api_unchecked_modules)
    for patch in patches_of(text, module, path.endswith("/__init__.py"), is_repository_module):
        if not any(patch.target == package or patch.target.startswith(package + ".") for package in located):
            continue
        if patch.target in unchecked:  # its surface is not compared, so nothing compared is bypassed
            ctx.report("G5", path, patch.line, f"`{patch.statement}` sets or deletes a name of module {patch.target} "
                       f"from module {module}{imported}; {patch.target} is listed in api.unchecked_modules of the base "
                       "policy, so its surface is not compared either way", severity="warning",
                       commit=ctx.change.last_commit_touching(path))
            continue
        ctx.report("G5", path, patch.line, f"`{patch.statement}` sets or deletes a name of module {patch.target} "
                   f"from module {module}{imported}: G5 reads each module's names from its own code, so what "
                   f"callers get there goes unchecked; define the name in {patch.target} itself, or list "
                   f"{patch.target} in the base policy's api.unchecked_modules (its surface is then not compared)",
                   commit=ctx.change.last_commit_touching(path))


def _check_outside_patchers(ctx: SeriesContext, head: ReadText, located: dict[str, str]) -> None:
    """A changed module outside the checked packages that one of their modules imports (`import kernels_compat` in
    `kernels/__init__.py`) and that sets or deletes a name of a checked package's module: reported as in the
    package. A module nothing in the packages imports (a test that monkeypatches, a script) is not read."""
    roots = list(dict.fromkeys(located.values()))
    outside = {}
    for entry in ctx.change.changed:
        if entry.status == "D" or not entry.path.endswith(".py") or _package_root(entry.path, located) is not None:
            continue
        for root in roots:
            if root in (".", "") or entry.path.startswith(_prefix(root)):
                outside.setdefault(module_name(entry.path, root), entry.path)
    if not outside:
        return
    package_files = [path for path in _package_files(ctx, located, ctx.change.head) if path.endswith(".py")]
    for module, path in outside.items():
        importer = None
        for package_path in package_files:
            root = _package_root(package_path, located)
            try:
                text = head(package_path) if root is not None else None
            except InputError:
                continue
            if text is not None and imports_module(text, module_name(package_path, root), package_path.endswith(
                    "/__init__.py"), module):
                importer = package_path
                break
        if importer is not None:
            _report_patches(ctx, head, path, module, located, importer)


def is_private_module(module: str) -> bool:
    """A module with a part that starts with `_` (`pkg._impl`, `pkg._backends.cuda`), `__init__` and `__main__`
    aside: by Python's convention its names are not public API; a public module that re-exports them is."""
    return any(part.startswith("_") and not (part.startswith("__") and part.endswith("__"))
               for part in module.split("."))


def _report(ctx: SeriesContext, path: str, line: int, api_change: ApiChange, message: str, commit: str | None,
            reached: list[str] | None = None, module: str = "") -> None:
    """One finding of `api_change` of `module`; `reached`: the edited files through which an unchanged importer was
    read."""
    if api_change.kind == "unreadable-base" and not api_change.head_readable and reached:
        ctx.report("G5", path, line, f"{message}; the module is unchanged, but it imports from {', '.join(reached)}, "
                   "which this change edits, so what it re-exports cannot be compared: make it readable statically, "
                   "let the import read it, or list it in the base policy's api.unchecked_modules (its own surface is then not compared, and a change to "
                   "what it imports is warned about)", commit=commit)
    elif api_change.kind == "route":
        _route_findings(ctx, path, line, message)
    elif api_change.kind == "unreadable-base" and api_change.head_readable:
        ctx.report("G5", path, line, f"{message}; this change makes it readable, so it is judged against nothing "
                   "once (later changes are compared with it)", commit=commit, severity="warning")
    elif api_change.kind == "unreadable-base":
        ctx.report("G5", path, line, f"{message}, and it is not readable at head either: a change to a module of a "
                   "checked package must be checkable, so make the module readable statically in this change",
                   commit=commit)
    elif ctx.policy.api_breaks != "reviewed":
        ctx.report("G5", path, line, f"public API break: {message}; the public API may only grow", commit=commit)
    else:
        qualified = not module or api_change.name == module or api_change.name.startswith(module + ".")
        name = api_change.name if qualified else f"{module}.{api_change.name}"
        accepted = _break_accepted_by(ctx, path, name)
        if accepted:
            ctx.report("G5", path, line, f"public API break accepted by {accepted}: {message}", commit=commit,
                       severity="warning")
        else:
            ctx.report("G5", path, line, f"public API break: {message}; the base policy accepts a break only where an "
                       f"approved record covering {path} lists {name!r} in api.changes or api.removes and its "
                       "api.break_question is accepted", commit=commit)


def _break_accepted_by(ctx: SeriesContext, path: str, name: str) -> str | None:
    """'<record id> (<question>, accepted)' of a record this change edits that is approved at head, covers `path`,
    names in `api.break_question` a question it accepted, and lists `name` in `api.changes` or `api.removes` where
    its base version did not (a break is accepted once, by the change that declares it: `api` is part of the contract,
    so the declaration needs an approval of its own, judged like every approval of the change, G8); None when none
    does."""
    for rc in ctx.change.records:
        front = rc.head.front_matter if rc.head else None
        if not isinstance(front, dict) or front.get("record_status") != "approved":
            continue
        question = field_of(front, "api", "break_question")
        before = rc.base.front_matter if rc.base else None
        if not (name in _declared_breaks(front) and name not in _declared_breaks(before)
                and any_glob_matches(field_of(front, "covers", default=[]) or [], path)
                and question and question_decisions(front.get("questions")).get(question) == "accepted"):
            continue
        return f"{front.get('id')} ({question}, accepted)"
    return None


def _declared_breaks(front: dict | None) -> set[str]:
    """The names a record's `api.changes` and `api.removes` list."""
    return {name for key in ("changes", "removes") for name in (field_of(front, "api", key, default=[]) or [])
            if isinstance(name, str)}


def _check_module(ctx: SeriesContext, imports: _Imports, module: str, root: str, switches, base: ReadText,
                  head: ReadText, located: dict[str, str], reported: set[tuple[str, int]]) -> None:
    """Diff the surface of one module a changed file may be, from the file Python imports it from on each side."""
    names = switches.get(module, set())
    old_path, new_path = _module_file(base, module, root), _module_file(head, module, root)
    if old_path is None:
        if new_path is not None:
            _check_new_module(ctx, imports, head, new_path, located)
        return
    old = _surface(ctx, base, old_path, root, names)
    new = _surface(ctx, head, new_path, root, names) if new_path is not None else None
    if old is None:
        return
    shown = new_path or old_path
    commit = ctx.change.last_commit_touching(shown)
    old, new, note = imports.compared(module, root, old, new, old_path, new_path)
    if note:
        ctx.report("G5", shown, 1, note, commit=commit, severity="warning")
    moved = f" (Python imports {module} from {new_path} now, not from {old_path})" \
        if new_path is not None and new_path != old_path else ""
    for api_change in diff_surfaces(old, new):
        _report(ctx, shown, api_change.line, api_change, api_change.message + moved, commit, module=module)
        reported.add((shown, api_change.line))


def _module_file(read_text: ReadText, module: str, root: str) -> str | None:
    """The file Python imports `module` from under `root`: the package `<module>/__init__.py` before the module
    `<module>.py`, as the path finder tries them; None when neither is there."""
    return next((path for where, path in module_paths(module, [root]) if _exists(read_text, path)), None)


def _check_new_module(ctx: SeriesContext, imports: _Imports, head: ReadText, path: str,
                      located: dict[str, str]) -> str | None:
    """A module added to a checked package must be readable, statically or else by importing it, or its later
    changes go unchecked. How it was read: "static", "imported" or "unreadable" (None: no module there)."""
    root = _package_root(path, located)
    new = _surface(ctx, head, path, root, ()) if root is not None else None
    if new is None:
        return None
    if not new.error:
        return "static"
    commit = ctx.change.last_commit_touching(path)
    _, read, note = imports.compared(new.module, root, None, new, None, path)
    if note:
        ctx.report("G5", path, 1, note, commit=commit, severity="warning")
        return "imported"
    ctx.report("G5", path, 1, f"module {new.module} {read.error}; a module of a checked package must be "
               "readable, or listed in the base policy's api.unchecked_modules", commit=commit)
    return "unreadable"


@dataclass(frozen=True)
class PackageReading:
    """What `read_every_module` found: the packages (package -> the root it lives under), and how many of their
    modules were read each way."""

    packages: dict[str, str]
    modules: dict[str, int]
    unreadable: tuple[str, ...] = ()  # the modules neither reading works for, by dotted name
    unchecked_readable: int = 0  # modules the policy leaves unchecked that the checker could read statically


def read_every_module(ctx: SeriesContext) -> PackageReading:
    """Read each module of the checked packages at the change's head as G5 reads one that a change adds, and report
    what a first change to it would meet: a module neither reading works for (error), one read by importing
    (warning), a statement that rebinds another module's names (error), a native extension or submodule inside a
    package (warning). `gate-check doctor` runs it with base and head the same commit, before a policy merges.

    The ways a module is counted: "static", "imported", "unreadable", "unchecked" (the policy's
    `api.unchecked_modules`) and "private" (`pkg._impl`: read through the public modules that import from it)."""
    head = _files_at(ctx, ctx.change.head)
    located = _locate(ctx, _packages(ctx), head, head)
    unchecked = _unchecked_modules(ctx, located, head)
    switches = _switches(ctx)
    counts = dict.fromkeys(("static", "imported", "unreadable", "unchecked", "private"), 0)
    unreadable, unchecked_readable = [], 0
    with ExitStack() as stack:
        if reused_checkouts.in_effect() is None:
            stack.enter_context(reused_checkouts.reused_checkouts())
        imports = _Imports(ctx, located)
        for path in _package_files(ctx, located, ctx.change.head):
            root = _package_root(path, located)
            if root is None or ctx.change.entry_at(ctx.change.head, path) is None:
                continue
            if _COMPILED.search(path) or ctx.change.entry_at(ctx.change.head, path)[0] == "160000":
                ctx.report("G5", path, 1, "a native extension module or submodule inside a checked package: G5 cannot "
                           "read it, so a change to it fails; build it where the package is built, or list its module "
                           "in the policy's api.unchecked_modules", severity="warning")
                continue
            module = module_name(path, root) if path.endswith(".py") else None
            if module is None or _module_file(head, module, root) != path:
                continue  # not a module, or one a package of the same name shadows
            _report_patches(ctx, head, path, module, located)
            if module in unchecked:
                counts["unchecked"] += 1
                surface = _surface(ctx, head, path, root, ())
                unchecked_readable += surface is not None and not surface.error
            elif is_private_module(module) and module not in switches:
                counts["private"] += 1
            else:
                outcome = _check_new_module(ctx, imports, head, path, located)
                if outcome is not None:
                    counts[outcome] += 1
                if outcome == "unreadable":
                    unreadable.append(module)
    return PackageReading(located, counts, tuple(unreadable), unchecked_readable)


def _package_files(ctx: SeriesContext, located: dict[str, str], ref: str) -> list[str]:
    """The paths of the checked packages at `ref`: every file below each package's folder, and `<package>.py`."""
    folders = {_prefix(root) + package.replace(".", "/") for package, root in located.items()}
    return sorted({path for folder in folders for path in ctx.change.list_files(ref, folder)}
                  | {folder + ".py" for folder in folders})


def _unchanged_importers(ctx: SeriesContext, located: dict[str, str], changed: set[str], base: ReadText) -> list[str]:
    """Modules of the checked packages that the change leaves alone and that import from somewhere."""
    ref = ctx.change.merge_base
    found = []
    for path in _package_files(ctx, located, ref):
        if _package_root(path, located) is None or path in changed:
            continue
        blob = ctx.change.blob_id(ref, path) if ctx.change.identifies_blobs else None
        if blob is not None and blob in _IMPORTING:
            imports = _IMPORTING[blob]
        else:
            try:
                text = base(path)
            except InputError:
                continue  # unchanged and unreadable on both sides: nothing to compare
            imports = text is not None and bool(_IMPORT.search(text))
            if blob is not None:
                _IMPORTING[blob] = imports
        if imports:
            found.append(path)
    return found


_IMPORTING: dict[str, bool] = {}  # git object id of a module -> whether its text imports anything


def _check_importers(ctx: SeriesContext, imports: _Imports, located: dict[str, str], switches, base: ReadText,
                     head: ReadText, reported: set[tuple[str, int]], unchecked=frozenset()) -> None:
    """An unchanged module whose imports reach a changed module: its surface may break all the same."""
    change = ctx.change
    changed = set(change.changed_paths())
    for path in _unchanged_importers(ctx, located, changed, base):
        root = _package_root(path, located)
        module = module_name(path, root)
        if module in unchecked:
            _warn_unchecked_importer(ctx, head, path, root, module, changed, unchecked)
            continue
        names = switches.get(module, set())
        old = _surface(ctx, base, path, root, names)
        new = _surface(ctx, head, path, root, names)
        if old is None or new is None:
            continue
        star = [p for p in dict.fromkeys(old.star_paths + new.star_paths) if p in changed]
        imported = [p for p in dict.fromkeys(old.import_paths + new.import_paths) if p in changed and p not in star]
        if not star and not imported and (old.error or new.error):
            imported = _named_by_unreadable(base, path, root, module, changed)
        if not star and not imported:
            continue
        old, new, note = imports.compared(module, root, old, new, path, path)
        if note:
            ctx.report("G5", path, 1, note, commit=change.last_commit_touching(star[0] if star else imported[0]),
                       severity="warning")
        for api_change in diff_surfaces(old, new):
            shown, line = _where(api_change, star + imported)
            if shown in star:
                message = f"{api_change.message} (through the star import in {path})"
            elif (shown, line) in reported:
                continue  # already reported where the definition changed
            else:
                message = f"{api_change.message} (through the import in {path})"
            _report(ctx, shown, line, api_change, message, change.last_commit_touching(shown), star + imported,
                    module=module)


_COMPILED = re.compile(r"\.(?:[^./]+\.)?(?:so|pyd|dylib)$")  # ops.so, ops.cpython-311-x86_64-linux-gnu.so


def _check_unreadable_files(ctx: SeriesContext, located: dict[str, str], unchecked) -> None:
    """A native extension module (`.so`, `.pyd`) or a submodule that the change adds, edits or removes inside a
    checked package: Python imports it (an extension before a source of the same name) and G5 cannot read it.
    (Compiled bytecode is G0's: `gates.history.compiled_code`.)"""
    change = ctx.change
    folders = {_prefix(root) + package.replace(".", "/"): root for package, root in located.items()}
    for entry in change.changed:
        for path in dict.fromkeys(p for p in (entry.old_path, entry.path) if p):
            root = next((r for folder, r in folders.items() if path.startswith(folder + "/")), None)
            if root is None:
                continue
            submodule = any((change.entry_at(ref, path) or ("",))[0] == "160000"
                            for ref in (change.merge_base, change.head))
            if not submodule and not _COMPILED.search(path):
                continue
            stem = path.split("/")[-1].split(".")[0]
            module = module_name("/".join(path.split("/")[:-1] + [stem + ".py"]), root)
            what = "a submodule" if submodule else "a native extension module"
            if module in unchecked:
                ctx.report("G5", path, 1, f"{what} of module {module}, listed in api.unchecked_modules of the base "
                           "policy, changed: not compared", severity="warning")
                continue
            ctx.report("G5", path, 1, f"{what} inside a checked package changed ({module}): Python imports it (an "
                       "extension before the source of the same name), and G5 cannot read it, so the API it gives "
                       "cannot be compared: build it where the package is built instead of committing it, or list "
                       f"{module} in the base policy's api.unchecked_modules")


def _warn_unchecked_importer(ctx: SeriesContext, head: ReadText, path: str, root: str, module: str,
                             changed: set[str], unchecked) -> None:
    """A module of `api.unchecked_modules` that imports from a module this change edits: what it re-exports from
    there is not compared through it, which the change's reviewer should know (a warning, as for a change to it).
    An edited module that is unchecked itself has its own warning."""
    try:
        text = head(path)
    except InputError:
        text = None
    imported = _imported_modules(text, module, path.endswith("__init__.py")) if text is not None else None
    edited = {name: p for p in changed if p.endswith(".py") and p.startswith(_prefix(root))
              for name in [module_name(p, root)] if name not in unchecked}
    reached = sorted(p for name, p in edited.items() if imported is None or name in imported)
    if reached:
        ctx.report("G5", path, 1, f"module {module} is listed in api.unchecked_modules of the base policy: what it "
                   f"imports from {', '.join(reached)}, which this change edits, is not compared through it",
                   commit=ctx.change.last_commit_touching(reached[0]), severity="warning")


def _named_by_unreadable(base: ReadText, path: str, root: str, module: str, changed: set[str]) -> list[str]:
    """The edited modules an unreadable module names, by an import or by a string of their dotted name
    (`importlib.import_module("kernels._fast")`): what it binds may depend on them, so it is compared (by importing)
    as an importer of them. Every edited module when it does not parse."""
    try:
        text = base(path)
    except InputError:
        return []
    if text is None:
        return []
    named = _imported_modules(text, module, path.endswith("__init__.py"))
    strings = _string_constants(text)
    edited = [p for p in sorted(changed) if p.endswith(".py") and p.startswith(_prefix(root)) and p != path]
    return [p for p in edited if named is None or module_name(p, root) in named or module_name(p, root) in strings]


@lru_cache(maxsize=256)
def _parsed_text(text: str) -> ast.Module | None:
    """The syntax tree of a module's text (None when it does not parse), parsed once for the questions below."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


@lru_cache(maxsize=256)
def _string_constants(text: str) -> frozenset[str]:
    tree = _parsed_text(text)
    if tree is None:
        return frozenset()
    return frozenset(node.value for node in nodes(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str))


@lru_cache(maxsize=256)
def _imported_modules(text: str, module: str, is_package: bool) -> frozenset[str] | None:
    """Every module (and `module.name`) the module's imports name, kept by its text across a history run's commits;
    None when it does not parse (then every edited module counts)."""
    tree = _parsed_text(text)
    if tree is None:
        return None
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            try:
                source = absolute_import(node, module, is_package)
            except ValueError:
                continue  # climbs out of the package: imports nothing of it
            imported.add(source)
            imported.update(f"{source}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    return frozenset(imported)


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
