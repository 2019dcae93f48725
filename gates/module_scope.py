"""What a module's top level binds, read from source with `ast`, star imports followed.

`module_scope` returns every name bound at top level (in top-level `if` / `try` blocks
too), public or not, with the parameters of functions, methods and constructors;
`gates.api_surface` chooses a module's public surface from it.

A star import (`from .impl import *`, `from kernels.impl import *`) brings in what
Python would: the imported module's literal `__all__`, otherwise every top-level name
of it not starting with `_` (its own imports included). The names are public in the
importing module and keep the parameters of their definition, so a change there
shows through the re-export. Modules are read through a `read_module` callback
(`module_reader` builds one over the working tree or a git ref); chains are followed
and a cycle is cut where it closes. A star import that cannot be followed (no
callback, or a module the repository does not hold, such as `from torch import *`)
stays in the surface as the entry `*:torch`, so dropping it is a break. A module that
is there but cannot be read or parsed makes the surface's `error` (fail closed).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from gates.errors import InputError

POSITIONAL_ONLY = "positional-only"
POSITIONAL = "positional"
KEYWORD_ONLY = "keyword-only"
VAR_POSITIONAL = "*args"
VAR_KEYWORD = "**kwargs"
STAR_IMPORT = "star-import"
_PUBLIC_DUNDERS = ("__init__", "__call__")

ReadText = Callable[[str], "str | None"]
"""`read_text("kernels/api.py")` -> one repository file's text, or None when it is not there;
raises `InputError` when it is there but unreadable."""

ReadModule = Callable[[str], "tuple[str, str] | None"]
"""`read_module("kernels.impl")` -> (source text, repository path), or None when the
repository holds no such module; raises `InputError` when the file is there but unreadable."""


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: str
    default: str | None = None  # source text of the default, None when required

    @property
    def required(self) -> bool:
        return self.default is None and self.kind not in (VAR_POSITIONAL, VAR_KEYWORD)


@dataclass(frozen=True)
class Entry:
    """One public name: a function, a class, a constant or a re-exported import."""

    name: str
    kind: str  # "function" | "class" | "constant" | "import" | "module-import" | "star-import"
    line: int
    params: tuple[Parameter, ...] | None = None  # functions and methods ("Class.__init__")
    value: str | None = None  # switch constants: the value's source text
    origin: tuple[str, int] | None = None  # (path, line) of the definition, for names a star import brought in


@dataclass
class ModuleScope:
    """Every name a module's top level binds, star imports followed: what its surface is chosen from."""

    module: str
    path: str
    names: dict[str, Entry] = field(default_factory=dict)  # public or not; "*:target" for unfollowed star imports
    members: dict[str, Entry] = field(default_factory=dict)  # "Class.method"
    exports: list[str] | None = None  # __all__ when literal
    error: str | None = None
    star_paths: list[str] = field(default_factory=list)

    def star_names(self) -> list[str]:
        """What `from <this module> import *` binds."""
        if self.exports is not None:
            return list(dict.fromkeys(self.exports))
        return [name for name in self.names if not name.startswith("_")]


def module_name(path: str) -> str:
    """`kernels/decode_attention/api.py` -> `kernels.decode_attention.api`."""
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _parameters(args: ast.arguments) -> tuple[Parameter, ...]:
    params: list[Parameter] = []
    positional = [(a, POSITIONAL_ONLY) for a in args.posonlyargs] + [(a, POSITIONAL) for a in args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for (arg, kind), default in zip(positional, defaults):
        params.append(Parameter(arg.arg, kind, ast.unparse(default) if default is not None else None))
    if args.vararg:
        params.append(Parameter(args.vararg.arg, VAR_POSITIONAL))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append(Parameter(arg.arg, KEYWORD_ONLY, ast.unparse(default) if default is not None else None))
    if args.kwarg:
        params.append(Parameter(args.kwarg.arg, VAR_KEYWORD))
    return tuple(params)


def _is_dataclass(node: ast.ClassDef) -> bool:
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "dataclass":
            return True
    return False


def _dataclass_init(node: ast.ClassDef) -> tuple[Parameter, ...]:
    params = [Parameter("self", POSITIONAL)]
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if "ClassVar" in ast.unparse(stmt.annotation):
                continue
            default = None
            if stmt.value is not None:
                default = ast.unparse(stmt.value)
            params.append(Parameter(stmt.target.id, POSITIONAL, default))
    return tuple(params)


def _class_entries(node: ast.ClassDef) -> list[Entry]:
    entries = []
    init = None
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            public = not stmt.name.startswith("_") or stmt.name in _PUBLIC_DUNDERS
            if public:
                entries.append(Entry(f"{node.name}.{stmt.name}", "function", stmt.lineno, _parameters(stmt.args)))
            if stmt.name == "__init__":
                init = _parameters(stmt.args)
    if init is None and _is_dataclass(node):
        entries.append(Entry(f"{node.name}.__init__", "function", node.lineno, _dataclass_init(node)))
    return [Entry(node.name, "class", node.lineno)] + entries


def _top_level(body: list[ast.stmt]):
    """Module statements, descending into top-level `if` / `try` blocks."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from _top_level(stmt.body)
            yield from _top_level(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from _top_level(stmt.body)
            for handler in stmt.handlers:
                yield from _top_level(handler.body)
            yield from _top_level(stmt.orelse)
            yield from _top_level(stmt.finalbody)
        else:
            yield stmt


def _literal_names(value: ast.expr) -> list[str] | None:
    if isinstance(value, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
    ):
        return [e.value for e in value.elts]
    return None


def module_reader(read_text: ReadText) -> ReadModule:
    """A `read_module` over `read_text(path)`, which reads one repository file (None: no such file).

    A dotted name is the package `a/b/__init__.py`, else the module `a/b.py` (the order
    Python's path finder tries them). `read_text` raises `InputError` for a file that is
    there but cannot be read.
    """

    def read_module(dotted: str) -> tuple[str, str] | None:
        rel = dotted.replace(".", "/")
        for path in (f"{rel}/__init__.py", f"{rel}.py"):
            text = read_text(path)
            if text is not None:
                return text, path
        return None

    return read_module


def _star_target(stmt: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute dotted name a star import reads; ValueError when a relative one climbs out."""
    if not stmt.level:
        return stmt.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    if not package or stmt.level - 1 >= len(package):
        raise ValueError("relative import beyond the top-level package")
    parts = package[: len(package) - (stmt.level - 1)]
    return ".".join(parts + ([stmt.module] if stmt.module else []))


def _follow_star(stmt: ast.ImportFrom, scope: ModuleScope, read_module: ReadModule | None, visiting, cache) -> None:
    """Bind in `scope` what `stmt` (`from X import *`) binds, or keep it as an unfollowed entry."""
    statement = ast.unparse(stmt)
    failure = f"cannot follow '{statement}' (line {stmt.lineno})"
    try:
        target = _star_target(stmt, scope.module, scope.path.endswith("__init__.py"))
    except ValueError as exc:
        scope.error = scope.error or f"{failure}: {exc}"
        return
    if target in visiting:
        return  # a cycle: the module being read has bound nothing yet at this point
    try:
        found = read_module(target) if read_module is not None else None
    except InputError as exc:
        scope.error = scope.error or f"{failure}: {exc.path} {exc.message}"
        return
    if found is None:
        name = f"*:{target}"
        scope.names[name] = Entry(name, STAR_IMPORT, stmt.lineno)
        return
    text, path = found
    if target not in cache:
        cache[target] = _read_scope(text, path, read_module, visiting | {target}, cache)
    imported = cache[target]
    scope.star_paths += [p for p in [path, *imported.star_paths] if p not in scope.star_paths]
    if imported.error:
        scope.error = scope.error or f"{failure}: {path} {imported.error}"
        return

    def brought_in(entry: Entry) -> Entry:
        origin = entry.origin or (path, entry.line)
        return Entry(entry.name, entry.kind, stmt.lineno, entry.params, entry.value, origin)

    for name in imported.star_names():
        entry = imported.names.get(name) or Entry(name, "import", 1)
        scope.names[name] = brought_in(entry)
        if entry.kind == "class":
            members = {key: m for key, m in imported.members.items() if key.startswith(name + ".")}
            scope.members.update({key: brought_in(member) for key, member in members.items()})


def _read_scope(source: str, path: str, read_module: ReadModule | None, visiting, cache) -> ModuleScope:
    scope = ModuleScope(module_name(path), path)
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError) as exc:
        scope.error = f"does not parse: {exc}"
        return scope
    for stmt in _top_level(tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope.names[stmt.name] = Entry(stmt.name, "function", stmt.lineno, _parameters(stmt.args))
        elif isinstance(stmt, ast.ClassDef):
            class_entries = _class_entries(stmt)
            scope.names[stmt.name] = class_entries[0]
            scope.members.update({e.name: e for e in class_entries[1:]})
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    if target.id == "__all__" and stmt.value is not None:
                        scope.exports = _literal_names(stmt.value)
                    value = ast.unparse(stmt.value) if stmt.value is not None else None
                    scope.names[target.id] = Entry(target.id, "constant", stmt.lineno, value=value)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
                continue
            kind = "import" if isinstance(stmt, ast.ImportFrom) else "module-import"
            for alias in stmt.names:
                if alias.name == "*":
                    _follow_star(stmt, scope, read_module, visiting, cache)
                else:
                    name = alias.asname or alias.name.split(".")[0]
                    scope.names[name] = Entry(name, kind, stmt.lineno)
    return scope


def module_scope(source: str, path: str, read_module: ReadModule | None = None) -> ModuleScope:
    """Every name one module's source binds at its top level, star imports followed through `read_module`."""
    module = module_name(path)
    return _read_scope(source, path, read_module, frozenset({module}), {})
