"""The public API of a Python module, read from source with `ast`, and how it changed.

The surface of a module is its public names (`__all__` when the module defines it as
a literal list or tuple; otherwise the top-level functions, classes and assignments
whose names do not start with `_`, plus the names a package `__init__.py` imports),
every public function's and method's parameters (name, kind, default as source
text, and the default's value when it names constants: `gates.python_api.default_values`), the
constructor of a class (`__init__`, or the fields of a `@dataclass`), and the values
of the module-level constants a record names as its route switch, with the defaults
each function reads such a switch with (`os.environ.get(SWITCH_ENV, "0")`:
`gates.python_api.switch_reads`).

Star imports count as Python counts them (`gates.python_api.module_scope` reads what a module's
top level binds and follows them): the names a star import brings in are public here
and keep the parameters of their definition, and one that cannot be followed stays
in the surface as the entry `*:module`.

`diff_surfaces(old, new)` lists what breaks a caller: a removed public name or star
import, a removed, renamed or reordered parameter, a parameter that became
keyword-only or required, a changed default (compared by value when it names
constants), a new parameter without a default. Additions are fine. A changed switch
constant, or a changed, new or dropped default it is read with, is reported as a
route change, for the caller to judge.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from gates.model.policy import DOCUMENTATION_DECORATORS, INTERNAL_DECORATORS  # noqa: F401 (G5's defaults)
from gates.python_api.decorators import ADDITIVE, callee
from gates.python_api.default_values import fill, read_chain, read_default
from gates.python_api.module_scope import (
    BOUND_ONLY_WHERE,
    CONFLICT_MARKERS,
    KEYWORD_ONLY,
    POSITIONAL,
    POSITIONAL_ONLY,
    STAR_IMPORT,
    UNREADABLE,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Entry,
    ModuleScope,
    Parameter,
    ReadModule,
    ScopeStore,
    module_scope,
)
from gates.python_api.scope_model import evolve


SWITCH_READ = "switch-read"  # the defaults with which a function reads a switch (`gates.python_api.switch_reads`)
UNBOUND = "unbound"  # listed in `__all__`, bound by nothing the checker can see (a submodule, or a name deleted)


@dataclass
class ModuleSurface:
    module: str
    path: str
    entries: dict[str, Entry] = field(default_factory=dict)  # "name" and "Class.method"
    exports: list[str] | None = None  # __all__ when literal
    error: str | None = None  # why the source (or a module it star-imports) could not be read
    star_paths: list[str] = field(default_factory=list)  # files read to follow star imports
    star_modules: list[str] = field(default_factory=list)  # their dotted names
    import_paths: list[str] = field(default_factory=list)  # files read to follow the imports of public names
    imports: dict[str, Entry] = field(default_factory=dict)  # names a module imports without exporting them
    # "rms_norm (ImportError fallback 1)" -> "rms_norm": the entries that are another path's binding of a name
    alternative_of: dict[str, str] = field(default_factory=dict)
    # class -> its bases from outside the repository (`dict`, `transformers.cache_utils:CacheLayerMixin`), whose
    # members the checker cannot read: a class that stops deriving from one is reported
    outside_bases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # public names bound under `try:` with `except ImportError:` handlers that bind them too (a vendor fallback)
    fallback_guarded: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class ApiChange:
    name: str
    line: int
    message: str
    kind: str = "break"  # "break" | "route" | "unreadable-base" (the base surface could not be read)
    origin: tuple[str, int] | None = None  # (path, line) of the definition when a star import brought it in
    head_readable: bool = False  # unreadable-base only: whether the head surface could be read


_CONSTRUCTORS = ("__init__", "__new__")
_IMPLICIT_BASES = ("object", "builtins:object", "builtins.object")  # every class derives from it


def _public_alias_of_private(scope: ModuleScope, name: str, entry: Entry) -> bool:
    """`from ._impl import _norm as rms_norm` (or `rms_norm = _norm` after importing it): a public name for a
    private definition of the repository is handed out on purpose, in a plain module too."""
    if name.startswith("_") or entry.kind != "import" or not entry.source or ":" not in entry.source:
        return False
    return entry.source.rpartition(":")[2].startswith("_") and scope.lookup(entry.source)[0] is not None


def _is_public(name: str, entry: Entry, is_package: bool) -> bool:
    if name.startswith("_"):
        return False
    if entry.origin is not None or entry.kind == STAR_IMPORT or entry.exported:
        return True  # a star import re-exports on purpose, a module `__getattr__` or lazy module hands out
    return entry.kind != "module-import" and (entry.kind != "import" or is_package)


def _falls_back_to_its_own(scope: ModuleScope, name: str) -> bool:
    """`try: from flash_attn... import rms_norm_fn as rms_norm / except ImportError: def rms_norm(...)` in a module
    that is no package: an import, which is no API of such a module, but where the dependency is missing the module's
    own definition, which is; both are compared."""
    return not name.startswith("_") and any(alternative.kind in ("function", "class")
                                            for alternative in scope.alternatives.get(name, []))


def module_surface(source: str, path: str, switch_names=(), read_module: ReadModule | None = None,
                   module: str | None = None, internal_decorators=INTERNAL_DECORATORS,
                   transparent_decorators=DOCUMENTATION_DECORATORS, store: ScopeStore | None = None
                   ) -> ModuleSurface:
    """Read the public surface of one module's source text.

    `switch_names` are module-level constants to include with their values (the
    default-route switch a record declares), public or not. `read_module` reads the
    modules that star imports and imports name (see `gates.python_api.module_scope.module_reader`);
    without it every star import stays an unfollowed `*:module` entry and imports keep
    no parameters. `module` is the dotted name when `path` lies under a package root
    such as `src/`. A public function or class decorated with one of `internal_decorators`
    (`triton.jit` kernels) is no part of the surface; `transparent_decorators` are decorators from
    outside the repository known to keep the signature. `store` finds the scopes of modules read before.
    """
    scope = module_scope(source, path, read_module, module, store)
    scope.transparent = frozenset(transparent_decorators)
    surface = ModuleSurface(scope.module, path, exports=scope.exports, error=scope.error,
                            star_paths=scope.star_paths, star_modules=scope.star_modules)
    is_package = path.endswith("__init__.py")
    if scope.exports is not None:
        unfollowed = [name for name, entry in scope.names.items() if entry.kind == STAR_IMPORT]
        public = list(dict.fromkeys(scope.exports)) + unfollowed
    else:
        public = [name for name, entry in scope.names.items()
                  if (_is_public(name, entry, is_package) or _public_alias_of_private(scope, name, entry)
                      or _falls_back_to_its_own(scope, name))
                  and not scope.imported_when(name)]
    internal = frozenset(internal_decorators)
    for name in public:
        entry, members = _bound(scope, surface, scope.names.get(name, Entry(name, UNBOUND, 1)))
        if _is_internal(entry, internal) and (scope.exports is None or name not in scope.exports):
            if any(not _is_internal(_bound(scope, surface, alternative)[0], internal)
                   for alternative in scope.alternatives.get(name, [])):
                # `if hip: rms_norm = _rms_norm_kernel / else: rms_norm = _rms_norm_host`: the host path is API
                _refuse(surface, f"public name '{name}' is a kernel on one path and a function callers call on "
                        "another", entry.line)
            continue  # a kernel; with `kernel_fallbacks`, a kernel or the library's own on every path
        if name in scope.kernel_fallbacks:
            header, line = scope.kernel_fallbacks[name]
            _refuse(surface, f"public name '{name}' is bound differently on some paths through {header}", line)
        condition = scope.bound_only_where(name)
        if condition is not None and scope.bound_by_repository_test(name):
            _refuse(surface, f"public name '{name}' is defined on one path through {scope.some_paths[name][0]} only, "
                    "and the test reads a name of the repository, which can move it without changing the test",
                    scope.conditional[name][1])
        elif condition is not None:
            entry = evolve(entry, limits=entry.limits | {BOUND_ONLY_WHERE + condition})
        surface.entries[name] = _with_decorators(scope, entry)
        if name in scope.fallback_guarded:
            surface.fallback_guarded.add(name)
        for index, alternative in enumerate(scope.alternatives.get(name, []), 1):
            fallback, _ = _bound(scope, surface, alternative)
            label = f"another path through {scope.path_variants[name]}, {index}" if name in scope.path_variants \
                else f"ImportError fallback {index}"
            surface.entries[f"{name} ({label})"] = _with_decorators(scope, fallback)
            surface.alternative_of[f"{name} ({label})"] = name
            path_members = scope.alternative_members.get(name)
            if path_members and fallback.kind == "class":  # that path's class, member by member
                for key, member in scope.class_members(name, fallback, path_members[index - 1]).items():
                    if not _is_internal(member, internal):
                        labelled = f"{name} ({label}){key[len(name):]}"
                        surface.entries[labelled] = _with_decorators(scope, member)
                        surface.alternative_of[labelled] = key
        if name in scope.rebound:
            _refuse(surface, f"`global {name}` in a function (it can rebind the public name)", scope.rebound[name])
        if entry.kind == "function":  # attributes set on it (`attention.paged = _paged`)
            surface.entries.update({key: _with_decorators(scope, member) for key, member in scope.members.items()
                                    if key.startswith(name + ".") and not key.rpartition(".")[2].startswith("_")})
        if entry.kind == "class":
            surface.outside_bases[name] = _outside_ancestors(scope, entry.bases)
            members = members or {k: v for k, v in scope.members.items() if k.startswith(name + ".")}
            members = scope.class_members(name, entry, members)
            for key, nested in list(members.items()):
                if key != name and nested.kind == "class" and nested.bases:
                    # `class Scheduler: class Params(_Mixin)`: what the nested class inherits is its API too
                    own = {k: v for k, v in members.items() if k.startswith(key + ".")}
                    members.update(scope.class_members(key, nested, own))
            surface.entries.update({k: _with_decorators(scope, v) for k, v in members.items()
                                    if not _is_internal(v, internal)})
    for name, entry in scope.names.items():
        if name not in surface.entries and entry.kind == "import" and not name.startswith("_"):
            resolved, _, _ = scope.definition(entry)  # unreadable: compared as an import the checker cannot read
            surface.imports[name] = _with_decorators(scope, resolved)
    for entries in (surface.entries, surface.imports):
        for key, entry in entries.items():
            if entry.params and any(p.reference for p in entry.params):
                entries[key] = evolve(entry, params=tuple(_imported_default(scope, surface, p) for p in entry.params))
    for name in switch_names:
        entry = scope.names.get(name)
        if entry is not None:
            entry, _ = _bound(scope, surface, entry)
        if name in scope.conditional:
            header, line, _ = scope.conditional[name]
            _refuse(surface, f"switch '{name}' has a value that depends on {header}", line)
        if name in scope.rebound:
            _refuse(surface, f"`global {name}` in a function (it can change the switch)", scope.rebound[name])
        value = entry.value if entry is not None else None
        line = entry.line if entry is not None else 1
        origin = entry.origin if entry is not None else None
        surface.entries[f"switch:{name}"] = Entry(name, "constant", line, value=value, origin=origin)
        surface.entries.update(_switch_reads(scope, surface, name))
    surface.import_paths = [p for p in scope.import_paths if p != path]
    return surface


_LIMITS = {
    "unhashable": "instances are no longer hashable (`__eq__` without `__hash__`, or `__hash__ = None`): callers "
                  "that keep them in sets or as dict keys break",
    "slots": "now declares `__slots__`: setting an attribute its instances did not declare raises AttributeError",
}




def _limit_message(limit: str) -> str:
    if limit.startswith(BOUND_ONLY_WHERE):
        return f"is now defined on one path through {limit[len(BOUND_ONLY_WHERE):]} only: where another path runs, " \
               "callers lose it"
    return _LIMITS[limit]


def _outside_ancestors(scope: ModuleScope, bases: tuple[str, ...], depth: int = 0) -> tuple[str, ...]:
    """The classes from outside the repository a class derives from, directly or through the repository's own
    classes (`class A(B)` with the repository's `class B(torch.nn.Module)`: `torch.nn:Module`)."""
    found: list[str] = []
    for base in bases:
        if base in _IMPLICIT_BASES:
            continue
        definition, _ = scope.lookup(base)
        unfollowed = scope.unfollowed_digest(base) if definition is None else None
        if unfollowed is not None:
            found.append(f"{base} [{unfollowed}]")  # of a module not followed: any change to it may change the class
        elif definition is None:
            found.append(base)
        elif definition.kind == "class" and depth < 32:
            found.extend(_outside_ancestors(scope, definition.bases, depth + 1))
    return tuple(dict.fromkeys(found))


def _is_internal(entry: Entry, internal: frozenset) -> bool:
    """Decorated with a decorator whose results are no public API (`@triton.jit`, `@triton.autotune(...)`)."""
    return any(callee(d).replace(":", ".") in internal for d in entry.decorators)


def _imported_default(scope: ModuleScope, surface: ModuleSurface, param: Parameter) -> Parameter:
    """A default naming imported constants, with their values (followed into the repository)."""
    if not param.reference:
        return param
    value = fill(param.value, param.reference, param.default,
                 lambda reference: _constant_value(scope, surface, reference, f"'{param.name}' ({param.default})"))
    return evolve(param, value=value, reference=())


def _constant_value(scope: ModuleScope, surface: ModuleSurface, reference: tuple[str, ...], what: str) -> str | None:
    """The value of the imported constant a default names; a module on the way that cannot be read: the error."""
    value, error = scope.constant_value(reference)
    if error:
        surface.error = surface.error or f"{UNREADABLE}: the default of {what}: {error}"
    return value


def _switch_reads(scope: ModuleScope, surface: ModuleSurface, name: str) -> dict[str, Entry]:
    """`switch:NAME@function` entries: the defaults with which each function of the module reads the switch
    (`os.environ.get(NAME, "0")`); a default naming a module constant stands for the constant's value."""
    found: dict[str, list[str]] = {}
    lines: dict[str, int] = {}
    for read in scope.reads:
        if read.name != name:
            continue
        text = "None" if read.default is None else ast.unparse(read.default)
        if read.default is not None:  # compared by value: `SWITCH_DEFAULT` with `SWITCH_DEFAULT = "0"` reads as '0'
            template, references = read_default(read.default, lambda node: read_chain(scope, node))
            text = fill(template, references, text, lambda ref: _constant_value(scope, surface, ref, name)) or text
        found.setdefault(read.where, []).append(text)
        lines.setdefault(read.where, read.line)
    return {f"switch:{name}@{where}": Entry(name, SWITCH_READ, lines[where], value="; ".join(defaults), source=where)
            for where, defaults in found.items()}


def _refuse(surface: ModuleSurface, construct: str, line: int) -> None:
    surface.error = surface.error or f"{UNREADABLE}: {construct} at {surface.path}:{line}"


def _bound(scope: ModuleScope, surface: ModuleSurface, entry: Entry) -> tuple[Entry, dict[str, Entry]]:
    """What a name is bound to, imports followed into the repository (a module that cannot be read: the error)."""
    if not entry.source or ":" not in entry.source:
        return entry, {}
    resolved, members, error = scope.definition(entry)
    if error:
        surface.error = surface.error or error
    return resolved, members


def _with_decorators(scope: ModuleScope, entry: Entry) -> Entry:
    """The entry with only the decorators that can change how it is called (`gates.python_api.decorators`)."""
    kept = tuple(identity for identity in (scope.decorator_identity(d) for d in entry.decorators) if identity)
    return evolve(entry, decorators=kept)


def _diff_params(name: str, line: int, old: tuple[Parameter, ...], new: tuple[Parameter, ...]) -> list[ApiChange]:
    changes = []
    new_by_name = {p.name: p for p in new}
    old_positional = [p for p in old if p.kind in (POSITIONAL_ONLY, POSITIONAL)]
    new_positional = [p for p in new if p.kind in (POSITIONAL_ONLY, POSITIONAL)]
    for index, param in enumerate(old_positional):
        moved_to = new_by_name.get(param.name)
        if moved_to is None:
            continue
        if moved_to.kind == KEYWORD_ONLY:
            changes.append(ApiChange(name, line, f"{name}: parameter '{param.name}' became keyword-only"))
        elif index >= len(new_positional) or new_positional[index].name != param.name:
            position = [p.name for p in new_positional].index(param.name)
            changes.append(
                ApiChange(name, line, f"{name}: parameter '{param.name}' moved from position {index + 1} to {position + 1}")
            )
    for param in old:
        now = new_by_name.get(param.name)
        if param.kind in (VAR_POSITIONAL, VAR_KEYWORD):
            if not any(p.kind == param.kind for p in new):
                changes.append(ApiChange(name, line, f"{name}: variadic parameter '{param.kind}' removed"))
            continue
        if now is None:
            replaced = [p.name for p in new if p.name not in {q.name for q in old} and p.kind == param.kind]
            hint = f" (renamed to '{replaced[0]}'?)" if replaced else ""
            changes.append(ApiChange(name, line, f"{name}: parameter '{param.name}' removed{hint}"))
            continue
        if now.kind == POSITIONAL_ONLY and param.kind != POSITIONAL_ONLY:
            changes.append(ApiChange(name, line, f"{name}: parameter '{param.name}' became positional-only"))
        if param.default is not None and now.default is None and now.kind not in (VAR_POSITIONAL, VAR_KEYWORD):
            changes.append(ApiChange(name, line, f"{name}: parameter '{param.name}' was optional and is now required"))
        elif param.default is not None and now.default is not None and \
                param.effective_default != now.effective_default:
            changes.append(ApiChange(name, line, f"{name}: default of '{param.name}' changed from "
                                     f"{param.shown_default} to {now.shown_default}"))
    old_names = {p.name for p in old}
    for param in new:
        if param.name not in old_names and param.required:
            changes.append(ApiChange(name, line, f"{name}: new parameter '{param.name}' has no default (callers break)"))
    return changes


def _removed(module: str, name: str, entry: Entry, with_module: bool = False) -> ApiChange:
    tail = " with its module" if with_module else ""
    if entry.kind == STAR_IMPORT:
        message = f"star import 'from {name[2:]} import *' removed from '{module}'{tail}"
    else:
        message = f"public name '{module}.{name}' removed{tail}"
    return ApiChange(name, 1, message, origin=(entry.origin[0], 1) if entry.origin else None)


def _shown(source: str | None) -> str:
    return (source or "an unknown object").replace(":", ".")


def _decorator_changes(module: str, name: str, before: Entry, after: Entry) -> list[ApiChange]:
    if before.decorators == after.decorators or \
            tuple(d for d in after.decorators if d not in ADDITIVE or d in before.decorators) == before.decorators:
        return []  # the same, or `@functools.lru_cache` added: it keeps the signature and only adds attributes

    def shown(identities):
        """`kernels.stream:with_stream [digest]` as `kernels.stream.with_stream`; a call's arguments as written
        (`torch.library.custom_op("mylib::attn_op", ...)` keeps its `::`)."""
        named = [d.split(" [", 1)[0] for d in identities]
        return [callee.replace(":", ".") + rest for callee, rest in (_split_call(d) for d in named)]

    added = [d for d in shown(after.decorators) if d not in shown(before.decorators)]
    dropped = [d for d in shown(before.decorators) if d not in shown(after.decorators)]
    parts = [f"is now decorated with @{', @'.join(added)}" if added else "",
             f"is no longer decorated with @{', @'.join(dropped)}" if dropped else ""]
    what = " and ".join(p for p in parts if p) or \
        f"has decorators whose definitions changed (@{', @'.join(shown(after.decorators))})"
    return [ApiChange(name, after.line, f"'{module}.{name}' {what}, which may change its signature or how it is "
                      "called (the checker sees through functools.wraps pass-through wrappers, lru_cache, no_grad and "
                      "TorchDynamo's disable; a decorator that keeps the signature, the repository's own or a library's, "
                      "can be listed in the base policy's api.transparent_decorators)",
                      origin=after.origin)]


def _split_call(decorator: str) -> tuple[str, str]:
    """`torch.library.custom_op('a::b', ...)` -> (`torch.library.custom_op`, `('a::b', ...)`)."""
    at = decorator.find("(")
    return (decorator, "") if at < 0 else (decorator[:at], decorator[at:])


def diff_surfaces(old: ModuleSurface, new: ModuleSurface | None) -> list[ApiChange]:
    """What a caller of `old` would find broken in `new` (None: the module is gone)."""
    if old.error and new is None:
        if old.error.startswith(CONFLICT_MARKERS):
            return []  # no Python could import it on the base: removing it takes nothing from a caller
        return [ApiChange(old.module, 1, f"module {old.module} is removed, and its surface on the base could not be "
                          f"read ({old.error}), so what callers lose cannot be listed")]
    if old.error:
        return [ApiChange(old.module, 1, f"module {old.module}: its surface on the base could not be read "
                          f"({old.error}), so its changes could not be checked", "unreadable-base",
                          head_readable=new is not None and not new.error)]
    if new is None:
        return [
            _removed(old.module, name, entry, with_module=True)
            for name, entry in old.entries.items()
            if not name.startswith("switch:") and ("." not in name or entry.kind == STAR_IMPORT)
        ]
    if new.error:
        return [ApiChange(new.module, 1, f"module {new.module} {new.error}")]
    changes = []
    followed = set(new.star_modules)
    for name, before in old.entries.items():
        after = new.entries.get(name) or new.imports.get(name)
        if before.kind == STAR_IMPORT and name[2:] in followed:
            continue  # the module it names is in the repository now: its names are the surface
        if name.startswith("switch:"):
            if after is not None and before.value != after.value and before.kind == SWITCH_READ:
                changes.append(ApiChange(before.name, after.line,
                                         f"the default with which {before.source} reads switch {old.module}."
                                         f"{before.name} changed from {before.value} to {after.value}", "route"))
            elif after is not None and before.value != after.value:
                changes.append(
                    ApiChange(before.name, after.line,
                              f"switch {old.module}.{before.name} changed from {before.value} to {after.value}",
                              "route", after.origin)
                )
            continue
        if after is None and name in old.alternative_of:
            # every path binds it as the head's name now (or the path is gone): that path's callers get the name
            after = new.entries.get(old.alternative_of[name])
            if after is None:
                continue  # the name itself is reported removed
        if after is None:
            changes.append(_removed(old.module, name, before))
            continue
        changes.extend(_entry_changes(old.module, name, before, after))
        if name in old.fallback_guarded and name not in new.fallback_guarded:
            changes.append(ApiChange(name, after.line, f"'{old.module}.{name}' no longer falls back where its import "
                                     "fails (`except ImportError:`): without that dependency the module stops importing",
                                     origin=after.origin))
        changes.extend(ApiChange(name, after.line, f"'{old.module}.{name}' no longer derives from {_shown(base)}: "
                                 "what its instances inherited from it, and `isinstance` checks against it, may break",
                                 origin=after.origin)
                       for base in old.outside_bases.get(name, ())
                       if after.kind == "class" and base not in new.outside_bases.get(name, ()))
    for name, main in new.alternative_of.items():
        if name not in old.entries and main in old.entries:
            # a path that bound the name as the base's name binds it otherwise now: its callers had the base's
            changes.extend(_entry_changes(old.module, name, old.entries[main], new.entries[name]))
    return changes + _constructor_changes(old, new) + _switch_read_changes(old, new)


def _entry_changes(module: str, name: str, before: Entry, after: Entry) -> list[ApiChange]:
    """What a caller of `before` (the base's binding of `name`) would find broken in `after` (the head's)."""
    changes: list[ApiChange] = []
    if after.kind == UNBOUND and before.kind != UNBOUND:
        return [ApiChange(name, 1, f"'{module}.{name}' is listed in __all__ but no longer bound")]
    if before.kind == "class" and after.kind in ("function", "constant"):
        changes.append(ApiChange(name, after.line, f"'{module}.{name}' is no longer a class: `isinstance`, `except` "
                                 "and subclassing of it break", origin=after.origin))
    changes.extend(_decorator_changes(module, name, before, after))
    changes.extend(ApiChange(name, after.line, f"'{module}.{name}' {_limit_message(limit)}", origin=after.origin)
                   for limit in sorted(after.limits - before.limits))
    if after.is_async and not before.is_async and before.kind == after.kind == "function":
        changes.append(ApiChange(name, after.line, f"'{module}.{name}' is now `async def`: callers get a "
                                 "coroutine instead of its result", origin=after.origin))
    if before.params is not None and after.params is not None:
        found = _diff_params(f"{module}.{name}", after.line, _as_called(name, before.params),
                             _as_called(name, after.params))
        changes.extend(ApiChange(c.name, c.line, c.message, c.kind, after.origin) for c in found)
    elif before.params is not None and after.params is None:
        if after.kind in ("import", "module-import"):
            message = (f"'{module}.{name}' is now bound to {_shown(after.source)}, which the checker cannot "
                       "read from this repository, so its parameters are unknown")
        else:
            message = f"'{module}.{name}' is no longer callable with the same parameters"
        changes.append(ApiChange(name, after.line, message, origin=after.origin))
    elif before.params is None and after.params is None and before.kind in ("import", "module-import") \
            and before.source != after.source and before.source is not None:
        changes.append(ApiChange(name, after.line, f"'{module}.{name}' is now bound to {_shown(after.source)} "
                                 f"instead of {_shown(before.source)}", origin=after.origin))
    return changes


def _as_called(name: str, params: tuple[Parameter, ...]) -> tuple[Parameter, ...]:
    """A protocol method (`__getitem__`, `__eq__`) as Python calls it: by position, so its parameters' names do not
    matter; other callables as they are."""
    method = name.rpartition(".")[2]
    if not (method.startswith("__") and method.endswith("__")) or method in ("__init__", "__new__", "__call__"):
        return params
    return tuple(evolve(p, name=f"#{i}", kind=POSITIONAL_ONLY) if p.kind in (POSITIONAL, POSITIONAL_ONLY) else p
                 for i, p in enumerate(params, 1))


def _constructor_changes(old: ModuleSurface, new: ModuleSurface) -> list[ApiChange]:
    """A class gains `__new__` (or `__init__`) where it had only the other: `Class(...)` calls both with the same
    arguments, so the new one must take what the old constructor took."""
    changes = []
    for name, entry in old.entries.items():
        if entry.kind != "class" or name not in new.entries:
            continue
        for added in _CONSTRUCTORS:
            after = new.entries.get(f"{name}.{added}")
            if after is None or f"{name}.{added}" in old.entries or after.params is None or \
                    {VAR_POSITIONAL, VAR_KEYWORD} <= {p.kind for p in after.params}:
                continue
            other = next((old.entries[f"{name}.{c}"] for c in _CONSTRUCTORS
                          if f"{name}.{c}" in old.entries and old.entries[f"{name}.{c}"].params is not None), None)
            if other is None:
                continue
            found = _diff_params(f"{old.module}.{name}", after.line, other.params[1:], after.params[1:])
            changes += [ApiChange(c.name, c.line, f"{c.message} (the new `{added}` must accept what "
                                  f"`{name}(...)` accepted)", c.kind, after.origin) for c in found]
    return changes


def _switch_read_changes(old: ModuleSurface, new: ModuleSurface) -> list[ApiChange]:
    """A function that starts reading a switch with a default the module did not read it with before, and a
    default that nothing in the module reads the switch with any more."""

    def defaults(surface: ModuleSurface, switch: str) -> set[str]:
        return {d for e in surface.entries.values() if e.kind == SWITCH_READ and e.name == switch
                for d in e.value.split("; ")}

    changes = []
    for name, after in new.entries.items():
        if after.kind != SWITCH_READ or name in old.entries:
            continue
        before = defaults(old, after.name)
        if not set(after.value.split("; ")) <= before:
            was = f" (before, it was read with {', '.join(sorted(before))})" if before else ""
            changes.append(ApiChange(after.name, after.line, f"switch {old.module}.{after.name} is now read in "
                                     f"{after.source} with the default {after.value}{was}", "route"))
    for name, before in old.entries.items():
        if before.kind != SWITCH_READ or name in new.entries:
            continue
        gone = sorted(set(before.value.split("; ")) - defaults(new, before.name))
        if gone:
            changes.append(ApiChange(before.name, 1, f"switch {old.module}.{before.name} is no longer read with the "
                                     f"default {', '.join(gone)} (it was, in {before.source})", "route"))
    return changes
