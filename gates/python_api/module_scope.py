"""What a module's top level binds, read from source with `ast`, star imports followed.

`module_scope` returns every name bound at top level, public or not, with the
parameters of functions, methods and constructors; `gates.python_api.api_surface` chooses a
module's public surface from it. Statements are run in order by `gates.python_api.scope_binder`
(with `gates.python_api.dunder_all` for `__all__`), the way Python runs them: `del name`
unbinds, `f = g` binds `f` to what `g` is, `__all__` changes (`+=`, `.extend`,
`.append`, `.insert`, `.remove`, `.pop`, slices, `del __all__[i]`) are applied. An
`if` whose test is a constant (`if False:`, `if 0:`, `if TYPE_CHECKING:`) runs one
branch only. Where the branches of an `if`, `try`, `with`, loop or `match`
bind a name differently (or one leaves it unbound), the name is recorded in
`conditional`; a public one makes the module unreadable (below).

A star import (`from .impl import *`, `from kernels.impl import *`) brings in what
Python would: the imported module's `__all__`, otherwise every top-level name of it
not starting with `_` (its own imports included). The names are public in the
importing module and keep the parameters of their definition, so a change there
shows through the re-export. `from X import y` records where `y` comes from, and
`ModuleScope.definition` follows it into the repository's modules, so that a name
re-bound to another function by an import carries that function's parameters.
Modules are read through a `read_module` callback (`module_reader` builds one over
the working tree or a git ref, under package roots such as `src/`); chains are followed
and a cycle is cut where it closes. A star import that cannot be followed (no
callback, or a module the repository does not hold, such as `from torch import *`)
stays in the surface as the entry `*:torch`, so dropping it is a break.

Names a module hands out through the import machinery are read by evaluating it
(`gates.python_api.lazy_exports`): a module `def __getattr__(name)` over a literal map, a
package replacing itself by an `_import_structure` lazy module, `import_module(...)` of a
computable name. A `try` whose handlers catch `ImportError` (with at most `AttributeError`, `OSError` or
`RuntimeError` beside it) binds what its body
binds, with the handlers' bindings kept as fallbacks (`alternatives`).

Fail closed: a module that cannot be read or parsed, or whose surface its own code
can change at run time (`gates.python_api.static_guard`: `globals()`, `exec`, `sys.modules`,
`setattr` on a module-level definition, `f.__kwdefaults__ = ...`, a module
`__getattr__` the evaluator cannot run ...), a computed `__all__`, or a public name bound only on some paths
gets an `error`: "the checker cannot read this module's surface statically:
<construct> at path:line".
"""

from __future__ import annotations

import ast
import hashlib
import re
from typing import Callable
from dataclasses import dataclass, field, fields, replace

from gates.model.errors import InputError
from gates.python_api.decorators import ADDITIVE, BINDING, DIRECT, FACTORY, callee, is_known_transparent
from gates.python_api.scope_binder import bind_module
from gates.python_api.scope_model import (  # noqa: F401  (re-exported: the surface readers import them from here)
    DEFAULT_PACKAGE_ROOTS,
    KEYWORD_ONLY,
    POSITIONAL,
    POSITIONAL_ONLY,
    STAR_IMPORT,
    UNREADABLE,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Entry,
    Parameter,
    ReadModule,
    ReadText,
    evolve,
    module_name,
    module_paths,
    module_reader,
    package_homes,
)
from gates.python_api.static_guard import dynamic_constructs, walk_module
from gates.python_api.switch_reads import NameRead, name_reads

_ALL = "__all__"


@dataclass
class ModuleScope:
    """Every name a module's top level binds, star imports followed: what its surface is chosen from."""

    module: str
    path: str
    names: dict[str, Entry] = field(default_factory=dict)  # public or not; "*:target" for unfollowed star imports
    members: dict[str, Entry] = field(default_factory=dict)  # "Class.method"
    exports: list[str] | None = None  # __all__, with its changes applied
    error: str | None = None
    star_paths: list[str] = field(default_factory=list)
    star_modules: list[str] = field(default_factory=list)  # dotted names of the repository modules star imports read
    import_paths: list[str] = field(default_factory=list)  # files read to follow imports (`definition`)
    conditional: dict[str, tuple[str, int, bool]] = field(default_factory=dict)  # name -> (`if ...:`, line, value only)
    # the other paths' bindings of a name, one per path after the first, in order: `except ImportError:` fallbacks
    alternatives: dict[str, list[Entry]] = field(default_factory=dict)
    # names bound under a `try` whose handlers catch `ImportError` and bind them too: they import without the dependency
    fallback_guarded: set[str] = field(default_factory=set)
    # names whose `alternatives` are the definitions on the other paths through an `if` (name -> `if ...:`)
    path_variants: dict[str, str] = field(default_factory=dict)
    # path-variant classes: each other path's members ("Cache.update" -> entry), in the order of `alternatives`
    alternative_members: dict[str, list[dict[str, Entry]]] = field(default_factory=dict)
    # conditional names that every path binding them imports from outside the repository, and some path leaves
    # unbound (`if is_peft_available(): from peft import X`): a library's name, there or not by the environment
    outside_only: set[str] = field(default_factory=set)
    # conditional names that every path binding them binds by one `from X import Y`, and some path leaves unbound:
    # a submodule when X.Y is a module of the repository that X itself does not shadow (`_is_submodule`)
    import_only: set[str] = field(default_factory=set)
    # public functions and classes that one path through an `if` defines and every other path leaves unbound: name ->
    # (the `if ...:` header, the path that defines it: the header, or "the else of" it, and whether the test reads
    # only the environment); the surface reads such a definition with its path, so becoming conditional, or moving
    # to the other path, is a break, and refuses one whose test reads the repository's own names (a constant, a
    # helper, a flag it imports), which can move the definition without changing the test's text
    some_paths: dict[str, tuple[str, str, bool]] = field(default_factory=dict)
    # names that some path binds to a decorated function and every other path to an attribute of a library
    # (`if HAS_GATHER: gather = tl.gather / else: @triton.jit def gather(...)`): name -> (`if ...:`, line). A
    # kernel on every path when the decorator is an internal one (`api_surface.module_surface` decides)
    kernel_fallbacks: dict[str, tuple[str, int]] = field(default_factory=dict)
    transparent: frozenset = field(default_factory=frozenset)  # decorators from outside that keep the signature
    rebound: dict[str, int] = field(default_factory=dict)  # `global NAME` in a function -> line
    reads: list[NameRead] = field(default_factory=list)  # `os.environ.get(NAME, default)` anywhere in the module
    resolver: "_Resolver | None" = field(default=None, repr=False, compare=False)

    def star_names(self) -> list[str]:
        """What `from <this module> import *` binds."""
        if self.exports is not None:
            return list(dict.fromkeys(self.exports))
        return [name for name in self.names if not name.startswith("_") and not self.imported_when(name)]

    def bound_only_where(self, name: str) -> str | None:
        """The `if ...:` header under which alone `name` is defined (`some_paths`), while it is still conditional."""
        header, path, _ = self.some_paths.get(name, (None, None, None))
        return path if header is not None and self.conditional.get(name, (None,))[0] == header else None

    def bound_by_repository_test(self, name: str) -> bool:
        """`bound_only_where(name)` holds under a test that reads a name of the repository."""
        return self.bound_only_where(name) is not None and not self.some_paths[name][2]

    def imported_when(self, name: str) -> bool:
        """`name` is bound on some paths only, each time by an import from outside the repository (a third-party
        name imported under `if FLAG:`): none of this module's own API unless `__all__` lists it."""
        return name in self.conditional and name in self.outside_only

    def refuse(self, construct: str, line: int) -> None:
        """Mark the surface unreadable (the first reason is kept)."""
        self.error = self.error or f"{UNREADABLE}: {construct} at {self.path}:{line}"

    def definition(self, entry: Entry) -> tuple[Entry, dict[str, Entry], str | None]:
        """What `entry` is bound to, `from X import y` followed through the repository's modules.

        Returns (the entry with the definition's parameters, decorators and origin; its
        class members keyed under `entry.name`; an error when a module on the way cannot
        be read). An import the repository does not hold comes back unchanged.
        """
        current, members, seen = entry, {}, set()
        while current.source and ":" in current.source and self.resolver is not None and len(seen) < 32:
            module, name = current.source.split(":", 1)
            if (module, name) in seen:
                break
            seen.add((module, name))
            try:
                target = self.resolver.scope_of(module)
                if target is None:
                    break  # outside the repository
                self.import_paths += [p for p in [target.path] if p not in self.import_paths]
                if target.error and self.resolver.opaque(module):
                    break  # listed unchecked: bound as the import it is, not followed
                if target.error:
                    return entry, {}, f"cannot follow the import of '{entry.name}' (line {entry.line}): " \
                                      f"{target.path} {target.error}"
                found = target.names.get(name)
                if found is None:
                    submodule = self.resolver.scope_of(f"{module}.{name}")
                    if submodule is not None:
                        return evolve(entry, kind="module-import", params=None, source=f"{module}.{name}"), {}, None
                    return entry, {}, f"'{name}' is not bound by {target.path} (imported as '{entry.name}' at line " \
                                      f"{entry.line})"
            except InputError as exc:
                return entry, {}, f"cannot follow the import of '{entry.name}' (line {entry.line}): " \
                                  f"{exc.path} {exc.message}"
            where = target.conditional.get(name)
            one_path = target.bound_only_where(name) if where is not None else None
            if one_path is not None and target.bound_by_repository_test(name):
                one_path = None
            if where is not None and not where[2] and one_path is None:
                return entry, {}, f"'{name}' is unbound or bound differently on some paths through {where[0]} " \
                                  f"at {target.path}:{where[1]}"
            if one_path is not None:
                # defined there on the one path the environment picks: so it is here, the limit compared as there
                found = evolve(found, limits=found.limits | {BOUND_ONLY_WHERE + one_path})
            origin = found.origin or (target.path, found.line)
            members = {key: evolve(m, origin=m.origin or (target.path, m.line))
                       for key, m in target.members.items() if key.startswith(name + ".")}
            current = evolve(found, origin=origin)
        if current is entry:
            return entry, {}, None
        prefix = len(current.name)
        renamed = {entry.name + key[prefix:]: evolve(m, name=entry.name + key[prefix:]) for key, m in members.items()}
        return evolve(current, name=entry.name, line=entry.line), renamed, None

    def constant_value(self, reference: tuple[str, ...]) -> tuple[str | None, str | None]:
        """The value of the repository constant an imported default names (`Parameter.reference`).

        Returns (its value, None); (None, None) when the name is not a constant the repository
        defines (a function, or something outside it); (None, error) when a module on the way
        cannot be read.
        """
        source, *attributes = reference
        if ":" in source:
            entry = Entry(source.split(":", 1)[1], "import", 1, source=source)
        else:
            entry = Entry(source, "module-import", 1, source=source)
        members: dict[str, Entry] = {}
        for attribute in [None, *attributes]:
            if attribute is not None:
                if entry.kind == "module-import" and entry.source:
                    entry = Entry(attribute, "import", 1, source=f"{entry.source}:{attribute}")
                elif entry.kind == "class" and f"{entry.name}.{attribute}" in members:
                    entry, members = members[f"{entry.name}.{attribute}"], {}
                    continue
                else:
                    return None, None
            if entry.kind == "import":
                source = entry.source
                entry, members, error = self.definition(entry)
                if error:
                    return None, error
                if entry.origin is None and self.resolver is not None:
                    try:
                        submodule = self.resolver.scope_of(source.replace(":", "."))
                    except InputError as exc:
                        return None, f"cannot follow '{source}': {exc.path} {exc.message}"
                    if submodule is not None:  # a submodule of a namespace package (no `__init__.py` binds it)
                        entry = Entry(entry.name, "module-import", 1, source=source.replace(":", "."))
        return (entry.value, None) if entry.kind == "constant" and entry.origin is not None else (None, None)

    def lookup(self, qualified: str) -> tuple[Entry | None, dict[str, Entry]]:
        """The definition a qualified name (`kernels.api:f`, `kernels.api.f`) stands for in the repository;
        (None, {}) when it lies outside or cannot be read."""
        if ":" in qualified:
            module, _, name = qualified.partition(":")
        elif "." in qualified:
            module, _, name = qualified.rpartition(".")
        else:
            return None, {}
        own = self.names.get(name) if module == self.module else None
        if own is not None:
            found, members, error = self.definition(own)
            if found is own:
                prefix = name + "."
                return evolve(own, origin=(self.path, own.line)), {k: v for k, v in self.members.items()
                                                                    if k.startswith(prefix)}
        else:
            found, members, error = self.definition(Entry(name, "import", 1, source=f"{module}:{name}"))
        if error or found.origin is None:
            return None, {}
        return found, members

    def unfollowed_digest(self, qualified: str) -> str | None:
        """For a name (`kernels.flag:Base`) of a module bound without being followed (`opaque_when_unreadable`): a
        digest of that module's text, so that what depends on the name (a decorator, a base class) changes with it;
        None for any other name."""
        module = qualified.partition(":")[0] if ":" in qualified else qualified.rpartition(".")[0]
        if self.resolver is None or not module or not self.resolver.opaque(module):
            return None
        found = self.resolver.find(module)
        target = self.resolver.scope_of(module) if found is not None else None
        if target is None or not target.error:
            return None
        return hashlib.sha256(found[0].encode("utf-8", "surrogatepass")).hexdigest()[:12]

    def _held_object_class(self, target: str) -> str | None:
        """For a decorator that is a method of an object this module holds (`@_registry.register`, `_registry =
        _Registry()`): the object's value and the fingerprint of the module's class that made it, so a change to that
        class changes the decorator; None otherwise."""
        module, _, dotted = target.partition(":")
        root, _, rest = dotted.partition(".")
        held = self.names.get(root) if module == self.module and rest else None
        if held is None or held.kind != "constant" or not held.value:
            return None
        maker = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\(", held.value)
        made_by = self.names.get(maker.group(1)) if maker else None
        if made_by is None or made_by.kind != "class" or made_by.fingerprint is None:
            return None
        return f"{held.value} {made_by.fingerprint}"

    def class_members(self, name: str, entry: Entry, members: dict[str, Entry], depth: int = 0) -> dict[str, Entry]:
        """A class's members with those it inherits from base classes the repository defines (own ones first)."""
        merged = dict(members)
        for base in entry.bases if depth < 8 else ():
            found, inherited = self.lookup(base)
            if found is None or found.kind != "class":
                break  # a base from outside the repository: what it brings cannot be read
            inherited = self.class_members(found.name, found, inherited, depth + 1)
            for key, member in inherited.items():
                renamed = name + key[len(found.name):]
                own = merged.get(renamed)
                if own is not None and own.generated and member.generated and renamed.endswith(".__init__"):
                    merged[renamed] = evolve(own, params=_inherited_fields(member.params, own.params))
                merged.setdefault(renamed, evolve(member, name=renamed))
        return merged

    def decorator_identity(self, decorator: str) -> str | None:
        """How a decorator is compared: None when it keeps the signature, else its text
        (with a digest of its definition when the repository defines it)."""
        plain = decorator.replace(":", ".")
        if plain in BINDING:
            return plain
        if callee(plain) in ADDITIVE:
            return callee(plain)  # compared by which it is: dropping it takes `cache_clear` away
        if is_known_transparent(plain) or callee(plain) in self.transparent:
            return None
        target = callee(decorator)
        found, _ = self.lookup(target)
        if found is None:
            unfollowed = self.unfollowed_digest(target)
            if unfollowed is not None:
                return f"{decorator} [{unfollowed}]"  # any change to that module may change what it decorates with
            held = self._held_object_class(target)
            if held is not None:
                return f"{decorator} [{held}]"
            return decorator  # outside the repository (or unreadable): opaque, compared by its text
        if found.passthrough and target == decorator:
            return None
        if found.returns_argument == (FACTORY if target != decorator else DIRECT):
            return None  # hands back what it decorates (`fn.__doc__ = ...; return fn`), or, called, a factory of that
        if found.fingerprint is None and found.kind == "constant" and found.value:
            return f"{decorator} [{found.value}]"  # `_decorate = torch.no_grad()`: what it holds is what decorates
        return f"{decorator} [{found.fingerprint or found.kind}]"


def _inherited_fields(base: tuple[Parameter, ...], own: tuple[Parameter, ...]) -> tuple[Parameter, ...]:
    """A dataclass's generated constructor after its base's fields: base fields first (a redefined one keeps its
    place), keyword-only fields last, as `dataclasses` orders them."""
    fields = {p.name: p for p in base[1:]}
    fields.update({p.name: p for p in own[1:]})
    ordered = [p for p in fields.values() if p.kind != KEYWORD_ONLY]
    ordered += [p for p in fields.values() if p.kind == KEYWORD_ONLY]
    return (own[0], *ordered)


# The limit of a definition bound on one path only (`ModuleScope.some_paths`), followed by the path
BOUND_ONLY_WHERE = "bound-only-where:"
# How the reason for a module the checker cannot compile starts. Python may still import it: a newer Python's syntax,
# or nesting deeper than the checker's parser goes, so the import fallback still reads it, and removing it is a break
NOT_PARSED = "does not parse"
# ... and the reason for one whose syntax error is a committed merge-conflict marker (`<<<<<<< HEAD`): no Python
# imports it, so no caller can have used it, and removing it takes nothing from one
CONFLICT_MARKERS = f"{NOT_PARSED}: it holds merge-conflict markers"
_MARKER = re.compile(r"(<{7}|>{7})( |$)|={7}$")


def _at_conflict_marker(source: str, exc: Exception) -> bool:
    """The syntax error `exc` of `source` is at a merge-conflict marker line (`<<<<<<< `, `=======`, `>>>>>>> `)."""
    line = getattr(exc, "lineno", None)
    lines = source.splitlines()
    return isinstance(line, int) and 0 < line <= len(lines) and bool(_MARKER.match(lines[line - 1]))


class ScopeStore:
    """Where scopes read before can be found again (a history run reads the same modules commit after commit).

    `recall(dotted)` gives back a scope read from the same files, or None; `begin()` starts noting the files a
    reading looks at, `keep(dotted, scope)` ends it and keeps the scope, `drop()` ends it keeping nothing. This
    default keeps nothing.

    The module a reading starts from (`module_scope`: the module whose surface is read, from the text it is given,
    a cycle cut where it comes back to that module) is kept and recalled with that text, `text=(path, source)`: its
    scope is what that text binds over the files its reading looked at, so it is found again only for the same text
    and the same files. A scope read on the way (`text=None`) is another reading, kept apart.
    """

    def recall(self, dotted: str, text: tuple[str, str] | None = None) -> "ModuleScope | None":
        return None

    def begin(self) -> None:
        pass

    def keep(self, dotted: str, scope: "ModuleScope | None", text: tuple[str, str] | None = None) -> None:
        pass

    def drop(self) -> None:
        pass


def opaque_when_unreadable(read_module: ReadModule, opaque: Callable[[str], bool]) -> ReadModule:
    """`read_module`, marked so that a module `opaque(dotted)` names which cannot be read is bound where it is imported
    as a name the checker does not follow, instead of making the importer unreadable (`api.unchecked_modules`)."""
    def reading(dotted: str):
        return read_module(dotted)

    reading.opaque = opaque
    return reading


class _Resolver:
    """Reads and caches the scopes of the repository's modules for star imports and `definition`."""

    def __init__(self, read_module: ReadModule | None, cache: dict, store: ScopeStore | None = None):
        self.read_module = read_module
        self.cache = cache
        self.store = store or ScopeStore()

    def find(self, dotted: str) -> tuple[str, str] | None:
        return self.read_module(dotted) if self.read_module is not None else None

    def opaque(self, dotted: str) -> bool:
        """`dotted` is to be bound without being followed where it cannot be read (`opaque_when_unreadable`)."""
        opaque = getattr(self.read_module, "opaque", None)
        return opaque is not None and opaque(dotted)

    def top_scope(self, source: str, path: str, module: str) -> ModuleScope:
        """The scope of `module` read from `source`, the module a reading starts from (`module_scope`); one kept by
        the store for the same text over the same files is handed out again (a copy: the surface reader adds to its
        `import_paths`), bound to this resolver."""
        text = (path, source)
        recalled = self.store.recall(module, text)
        if recalled is not None:
            return _handed_out(recalled, self)
        self.store.begin()
        try:
            scope = _read_scope(source, path, self, frozenset({module}), module)
        except BaseException:
            self.store.drop()
            raise
        self.store.keep(module, _handed_out(scope, None), text)
        return scope

    def scope_of(self, dotted: str, visiting=frozenset()) -> ModuleScope | None:
        if dotted not in self.cache:
            recalled = self.store.recall(dotted)
            if recalled is not None:
                self.cache[dotted] = recalled
                return recalled
            self.store.begin()
            try:
                found = self.find(dotted)
                scope = None if found is None else _read_scope(found[0], found[1], self, visiting | {dotted}, dotted)
            except BaseException:
                self.store.drop()
                raise
            self.cache[dotted] = scope
            if scope is not None and (scope.star_modules or any(n.startswith("*:") for n in scope.names)):
                self.store.drop()  # what a star import brought in depends on where the reading started (cycles)
            else:
                self.store.keep(dotted, scope)
        return self.cache[dotted]


@dataclass(frozen=True)
class _Parsed:
    """What one module's text is on its own, whatever the modules around it: its syntax tree (or why it does not
    parse), the constructs that change its namespace at run time, its `global NAME` statements and its switch
    reads. The tree is only read, never changed, so a history run keeps it for every commit with the same text."""

    tree: ast.Module | None
    error: str | None = None
    constructs: tuple = ()
    rebound: tuple = ()
    reads: tuple = ()


_PARSED: dict[tuple[str, str, str], _Parsed] = {}
_KEPT_PARSED = 1_500


def _parsed(source: str, path: str, module: str) -> _Parsed:
    key = (source, path, module)
    found = _PARSED.get(key)
    if found is not None:
        return found
    try:
        tree = ast.parse(source, filename=path)
        walked = walk_module(tree, module.split(".")[0])
        constructs, rebound = dynamic_constructs(tree, module, walked)
        tree._design_gates_mutated = walked.mutated  # what `scope_binder.bind_module` would find with its own walk
        reads = name_reads(tree) if walked.reads_names else ()
        found = _Parsed(tree, None, tuple(constructs), tuple(rebound.items()), tuple(reads))
    except (SyntaxError, ValueError) as exc:
        found = _Parsed(None, f"{CONFLICT_MARKERS} (line {exc.lineno})" if _at_conflict_marker(source, exc)
                        else f"{NOT_PARSED}: {exc}")
    except (RecursionError, MemoryError):
        found = _Parsed(None, f"{NOT_PARSED}: nested too deeply for the checker to read")
    if len(_PARSED) >= _KEPT_PARSED:
        _PARSED.clear()
    _PARSED[key] = found
    return found


def _read_scope(source: str, path: str, resolver: _Resolver, visiting, module: str | None = None) -> ModuleScope:
    scope = ModuleScope(module or module_name(path), path, resolver=resolver)
    parsed = _parsed(source, path, scope.module)
    if parsed.tree is None:
        scope.error = parsed.error
        return scope
    try:
        return _bind_scope(scope, parsed, resolver, visiting)
    except RecursionError:
        scope.error = scope.error or f"{UNREADABLE}: nested too deeply to follow at {path}"
        return scope


def _bind_scope(scope: ModuleScope, parsed: _Parsed, resolver: _Resolver, visiting) -> ModuleScope:
    """What the parsed module binds, over `scope`, refusing what the checker cannot follow."""
    tree = parsed.tree
    constructs, scope.rebound = list(parsed.constructs), dict(parsed.rebound)
    scope.reads = list(parsed.reads)
    for construct, line in constructs[:1]:
        scope.refuse(construct, line)
    bind_module(scope, tree, resolver, visiting)
    for name, line in scope.rebound.items():
        public = name in scope.exports if scope.exports is not None else not name.startswith("_")
        if name == _ALL or (public and name in scope.names):
            scope.refuse(f"`global {name}` in a function (it can rebind or delete the module-level name)", line)
    for name, (header, line, value_only) in scope.conditional.items():
        public = name in scope.exports if scope.exports is not None else not name.startswith("_")
        entry = scope.names.get(name)
        if entry is not None and entry.kind == "module-import" and scope.exports is None:
            continue  # `try: import_module(".cuda", __name__) / except ImportError: pass`: a submodule, no API name
        if scope.imported_when(name) and scope.exports is None:
            continue  # `if is_peft_available(): from peft import X`: the library's name, not this module's API
        if name in scope.import_only and scope.exports is None and _is_submodule(entry, resolver, visiting):
            continue  # `if os.environ.get("DUMP_PTX"): from pkg import ptx_patch`: a submodule, no API name
        if public and not value_only and scope.bound_only_where(name) is None:
            scope.refuse(f"public name '{name}' is unbound or bound differently on some paths through {header}", line)
    return scope


def _is_submodule(entry: Entry | None, resolver: _Resolver, visiting) -> bool:
    """`from X import Y` gives the repository's module X.Y: it exists and X binds no other `Y` (which Python would
    hand out first). False whenever that cannot be read."""
    if entry is None or entry.kind != "import" or ":" not in (entry.source or ""):
        return False
    package, _, name = entry.source.partition(":")
    try:
        if resolver.find(f"{package}.{name}") is None:
            return False
        scope = resolver.scope_of(package, visiting)
    except (InputError, RecursionError):
        return False
    if scope is None or scope.error:
        return False
    bound = scope.names.get(name)
    return bound is None or bound.kind == "module-import" and bound.source == f"{package}.{name}"


def module_scope(source: str, path: str, read_module: ReadModule | None = None,
                 module: str | None = None, store: ScopeStore | None = None) -> ModuleScope:
    """Every name one module's source binds at its top level, star imports followed through `read_module`.

    `module` is the dotted name (default: from `path`, which must then be relative to its package root).
    `store` finds the scopes of other modules read before (`ScopeStore`).
    """
    module = module or module_name(path)
    return _Resolver(read_module, {}, store).top_scope(source, path, module)


_CONTAINERS = tuple(f.name for f in fields(ModuleScope) if f.name not in ("resolver", "transparent"))


def _handed_out(scope: ModuleScope, resolver: "_Resolver | None") -> ModuleScope:
    """A copy of a kept scope with containers of its own, following imports through `resolver` (None: kept, bound to
    no reading's files)."""
    copied = {name: type(value)(value) for name in _CONTAINERS
              for value in [getattr(scope, name)] if isinstance(value, (list, dict, set))}
    return replace(scope, resolver=resolver, **copied)
