"""What a module's top level binds, read from source with `ast`, star imports followed.

`module_scope` returns every name bound at top level, public or not, with the
parameters of functions, methods and constructors; `gates.api_surface` chooses a
module's public surface from it. Statements are read in order, the way Python runs
them: `del name` unbinds, `f = g` binds `f` to what `g` is, `__all__` changes
(`+=`, `.extend`, `.append`, `.insert`, `.remove`, `.pop`, slices, `del __all__[i]`)
are applied. An `if` whose test is a constant (`if False:`, `if 0:`, `if TYPE_CHECKING:`)
runs one branch only. Where the branches of an `if`, `try`, `with`, loop or `match`
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

Fail closed: a module that cannot be read or parsed, or whose surface its own code
can change at run time (`gates.static_guard`: `globals()`, `exec`, `sys.modules`,
`setattr` on a module-level definition, `f.__kwdefaults__ = ...`, a module
`__getattr__` ...), a computed `__all__`, or a public name bound only on some paths
gets an `error`: "the checker cannot read this module's surface statically:
<construct> at path:line".
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from gates.decorators import BINDING, callee, is_known_transparent, is_passthrough
from gates.errors import InputError
from gates.static_guard import dynamic_constructs

POSITIONAL_ONLY = "positional-only"
POSITIONAL = "positional"
KEYWORD_ONLY = "keyword-only"
VAR_POSITIONAL = "*args"
VAR_KEYWORD = "**kwargs"
STAR_IMPORT = "star-import"
_PUBLIC_DUNDERS = ("__init__", "__call__")
DEFAULT_PACKAGE_ROOTS = (".", "src")
UNREADABLE = "the checker cannot read this module's surface statically"

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
    """One bound name: a function, a class, a constant or an import."""

    name: str
    kind: str  # "function" | "class" | "constant" | "import" | "module-import" | "star-import"
    line: int
    params: tuple[Parameter, ...] | None = None  # functions and methods ("Class.__init__")
    value: str | None = None  # constants: the value's source text
    origin: tuple[str, int] | None = None  # (path, line) of the definition when it lives in another module
    decorators: tuple[str, ...] = ()  # qualified decorator text, outermost first (`gates.decorators`)
    source: str | None = None  # imports: "module:name" (`from module import name`) or "module" (`import module`)
    passthrough: bool = False  # a decorator that hands back a (*args, **kwargs) functools.wraps wrapper
    fingerprint: str | None = None  # functions: a digest of the whole definition
    bases: tuple[str, ...] = ()  # classes: qualified base classes, inherited members are read from them


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
    rebound: dict[str, int] = field(default_factory=dict)  # `global NAME` in a function -> line
    resolver: "_Resolver | None" = field(default=None, repr=False, compare=False)

    def star_names(self) -> list[str]:
        """What `from <this module> import *` binds."""
        if self.exports is not None:
            return list(dict.fromkeys(self.exports))
        return [name for name in self.names if not name.startswith("_")]

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
                if target.error:
                    return entry, {}, f"cannot follow the import of '{entry.name}' (line {entry.line}): " \
                                      f"{target.path} {target.error}"
                found = target.names.get(name)
                if found is None:
                    submodule = self.resolver.scope_of(f"{module}.{name}")
                    if submodule is not None:
                        return replace(entry, kind="module-import", params=None, source=f"{module}.{name}"), {}, None
                    return entry, {}, f"'{name}' is not bound by {target.path} (imported as '{entry.name}' at line " \
                                      f"{entry.line})"
            except InputError as exc:
                return entry, {}, f"cannot follow the import of '{entry.name}' (line {entry.line}): " \
                                  f"{exc.path} {exc.message}"
            where = target.conditional.get(name)
            if where is not None and not where[2]:
                return entry, {}, f"'{name}' is unbound or bound differently on some paths through {where[0]} " \
                                  f"at {target.path}:{where[1]}"
            origin = found.origin or (target.path, found.line)
            members = {key: replace(m, origin=m.origin or (target.path, m.line))
                       for key, m in target.members.items() if key.startswith(name + ".")}
            current = replace(found, origin=origin)
        if current is entry:
            return entry, {}, None
        prefix = len(current.name)
        renamed = {entry.name + key[prefix:]: replace(m, name=entry.name + key[prefix:]) for key, m in members.items()}
        return replace(current, name=entry.name, line=entry.line), renamed, None

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
                return replace(own, origin=(self.path, own.line)), {k: v for k, v in self.members.items()
                                                                    if k.startswith(prefix)}
        else:
            found, members, error = self.definition(Entry(name, "import", 1, source=f"{module}:{name}"))
        if error or found.origin is None:
            return None, {}
        return found, members

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
                merged.setdefault(renamed, replace(member, name=renamed))
        return merged

    def decorator_identity(self, decorator: str) -> str | None:
        """How a decorator is compared: None when it keeps the signature, else its text
        (with a digest of its definition when the repository defines it)."""
        plain = decorator.replace(":", ".")
        if plain in BINDING:
            return plain
        if is_known_transparent(plain):
            return None
        target = callee(decorator)
        found, _ = self.lookup(target)
        if found is None:
            return decorator  # outside the repository (or unreadable): opaque, compared by its text
        if found.passthrough and target == decorator:
            return None
        return f"{decorator} [{found.fingerprint or found.kind}]"


class _Resolver:
    """Reads and caches the scopes of the repository's modules for star imports and `definition`."""

    def __init__(self, read_module: ReadModule | None, cache: dict):
        self.read_module = read_module
        self.cache = cache

    def find(self, dotted: str) -> tuple[str, str] | None:
        return self.read_module(dotted) if self.read_module is not None else None

    def scope_of(self, dotted: str, visiting=frozenset()) -> ModuleScope | None:
        if dotted not in self.cache:
            found = self.find(dotted)
            self.cache[dotted] = None if found is None else \
                _read_scope(found[0], found[1], self, visiting | {dotted}, dotted)
        return self.cache[dotted]


def module_name(path: str, root: str = ".") -> str:
    """`kernels/decode_attention/api.py` -> `kernels.decode_attention.api` (`src/kernels/api.py` under root `src`)."""
    if root not in (".", "") and path.startswith(root.rstrip("/") + "/"):
        path = path[len(root.rstrip("/")) + 1:]
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


def _fingerprint(node: ast.AST) -> str:
    return hashlib.sha256(ast.dump(node).encode()).hexdigest()[:12]


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _dataclass_init(node: ast.ClassDef, options: ast.Call | None) -> tuple[Parameter, ...] | None:
    """The generated `__init__` of a `@dataclass` (None with `init=False`)."""
    if options is not None and isinstance(_keyword(options, "init"), ast.Constant) and not _keyword(options, "init").value:
        return None
    keyword_only = options is not None and _is_true(_keyword(options, "kw_only"))
    params = [Parameter("self", POSITIONAL)]
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        annotation = ast.unparse(stmt.annotation)
        if "ClassVar" in annotation:
            continue
        if annotation.split(".")[-1] == "KW_ONLY":
            keyword_only = True
            continue
        default, kind = None, KEYWORD_ONLY if keyword_only else POSITIONAL
        value = stmt.value
        if isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] == "field":
            if isinstance(_keyword(value, "init"), ast.Constant) and not _keyword(value, "init").value:
                continue
            if _keyword(value, "kw_only") is not None:
                kind = KEYWORD_ONLY if _is_true(_keyword(value, "kw_only")) else POSITIONAL
            if _keyword(value, "default") is not None:
                default = ast.unparse(_keyword(value, "default"))
            elif _keyword(value, "default_factory") is not None:
                default = ast.unparse(_keyword(value, "default_factory")) + "()"
        elif value is not None:
            default = ast.unparse(value)
        params.append(Parameter(stmt.target.id, kind, default))
    return tuple(params)


def _constant_truth(test: ast.expr) -> bool | None:
    """True / False for a test whose outcome is fixed (`False`, `0`, `TYPE_CHECKING`, `not ...`), else None."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or \
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING":
        return False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _constant_truth(test.operand)
        return None if inner is None else not inner
    return None


def _ends_in_raise(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Raise)


def _literal_names(value: ast.expr) -> list[str] | None:
    if isinstance(value, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
    ):
        return [e.value for e in value.elts]
    return None


def _literal(node: ast.expr | None):
    try:
        return None if node is None else ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(ast.unparse(node)) from None


def module_paths(dotted: str, roots=DEFAULT_PACKAGE_ROOTS) -> list[tuple[str, str]]:
    """Where a dotted module may live, in the order Python's path finder tries them: (root, repository path).

    Under each package root in order (`.` is the repository root; `src` gives
    `src/a/b/__init__.py`), the package `a/b/__init__.py` comes before the module `a/b.py`.
    """
    rel = dotted.replace(".", "/")
    found = []
    for root in roots:
        prefix = "" if root in (".", "") else root.strip("/") + "/"
        found += [(root, f"{prefix}{rel}/__init__.py"), (root, f"{prefix}{rel}.py")]
    return found


def module_reader(read_text: ReadText, roots=DEFAULT_PACKAGE_ROOTS) -> ReadModule:
    """A `read_module` over `read_text(path)`, which reads one repository file (None: no such file).

    Modules are looked for where `module_paths` says. `read_text` raises `InputError`
    for a file that is there but cannot be read.
    """

    def read_module(dotted: str) -> tuple[str, str] | None:
        for _, path in module_paths(dotted, roots):
            text = read_text(path)
            if text is not None:
                return text, path
        return None

    return read_module


def _absolute(stmt: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute dotted module an import from reads; ValueError when a relative one climbs out."""
    if not stmt.level:
        return stmt.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    if not package or stmt.level - 1 >= len(package):
        raise ValueError("relative import beyond the top-level package")
    parts = package[: len(package) - (stmt.level - 1)]
    return ".".join(parts + ([stmt.module] if stmt.module else []))


_ALL = "__all__"


def _mentions_all(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id == _ALL for n in ast.walk(node))


class _Binder:
    """Runs a module's top-level statements over its scope, as far as `ast` can tell what they bind."""

    def __init__(self, scope: ModuleScope, tree: ast.Module, resolver: _Resolver, visiting):
        self.scope = scope
        self.resolver = resolver
        self.visiting = visiting
        self.is_package = scope.path.endswith("__init__.py")
        self.tree = tree

    def line_of(self, node: ast.AST) -> int:
        return getattr(node, "lineno", 1)

    def where(self, header: str, node: ast.AST) -> tuple[str, int]:
        return f"`{header}`", self.line_of(node)

    # bindings -------------------------------------------------------------------------------------------
    def bind(self, name: str, entry: Entry, members: dict[str, Entry] | None = None) -> None:
        self.unbind(name)
        self.scope.names[name] = entry
        self.scope.members.update(members or {})

    def unbind(self, name: str) -> None:
        self.scope.names.pop(name, None)
        self.scope.conditional.pop(name, None)
        for key in [k for k in self.scope.members if k.startswith(name + ".")]:
            del self.scope.members[key]

    def bind_targets(self, target: ast.expr, line: int) -> None:
        """Names an assignment, `for` or `with` target binds (value unknown)."""
        if isinstance(target, ast.Name):
            if target.id == _ALL:
                self.scope.refuse(f"`__all__` bound by `{ast.unparse(target)}` as a loop or unpacking target", line)
            self.bind(target.id, Entry(target.id, "constant", line))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.bind_targets(element, line)
        elif isinstance(target, ast.Starred):
            self.bind_targets(target.value, line)

    def qualify(self, expr: ast.expr) -> str:
        """A decorator (or any name) as the module's own bindings resolve it: `functools.lru_cache`, `kernels.x:f`."""
        if isinstance(expr, ast.Call):
            arguments = [ast.unparse(a) for a in expr.args] + [ast.unparse(k) for k in expr.keywords]
            return f"{self.qualify(expr.func)}({', '.join(arguments)})"
        attributes, node = [], expr
        while isinstance(node, ast.Attribute):
            attributes.insert(0, node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return ast.unparse(expr)
        entry = self.scope.names.get(node.id)
        if entry is None:
            head = node.id  # a builtin (or unbound)
        elif entry.source:
            head = entry.source
        else:
            head = f"{self.scope.module}:{node.id}"
        return ".".join([head, *attributes])

    def decorators(self, node) -> tuple[str, ...]:
        return tuple(self.qualify(d) for d in node.decorator_list)

    def function_entry(self, node, name: str | None = None) -> Entry:
        return Entry(name or node.name, "function", node.lineno, _parameters(node.args),
                     decorators=self.decorators(node), passthrough=is_passthrough(node, self.qualify),
                     fingerprint=_fingerprint(node))

    def class_entries(self, node: ast.ClassDef) -> tuple[Entry, dict[str, Entry]]:
        members: dict[str, Entry] = {}
        init = None
        methods = {s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                key = f"{node.name}.{stmt.name}"
                if not stmt.name.startswith("_") or stmt.name in _PUBLIC_DUNDERS:
                    members[key] = self.function_entry(stmt, key)
                if stmt.name == "__init__":
                    init = stmt
            else:
                self.check_class_statement(node, stmt, methods)
        decorators = self.decorators(node)
        dataclass_options = [d for d in node.decorator_list
                             if self.qualify(d.func if isinstance(d, ast.Call) else d) in
                             ("dataclasses:dataclass", "dataclasses.dataclass")]
        if init is None and dataclass_options:
            options = dataclass_options[0] if isinstance(dataclass_options[0], ast.Call) else None
            params = _dataclass_init(node, options)
            if params is not None:
                members[f"{node.name}.__init__"] = Entry(f"{node.name}.__init__", "function", node.lineno, params)
        kept = tuple(d for d in decorators if callee(d).replace(":", ".") != "dataclasses.dataclass")
        kept += tuple(f"({k.arg}={self.qualify(k.value)})" for k in node.keywords)  # metaclass=...
        bases = tuple(self.qualify(base) for base in node.bases)
        return Entry(node.name, "class", node.lineno, decorators=kept, bases=bases), members

    def check_class_statement(self, node: ast.ClassDef, stmt: ast.stmt, methods: set[str]) -> None:
        """A class body may define methods and attributes; rebinding or hiding a method makes it unreadable."""
        stored = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
        nested = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(stmt))
        if stored & methods:
            name = sorted(stored & methods)[0]
            self.scope.refuse(f"method '{node.name}.{name}' rebound or deleted in the class body", stmt.lineno)
        elif nested:
            self.scope.refuse(f"a method of class '{node.name}' defined under a compound statement "
                              f"(`{ast.unparse(stmt).splitlines()[0]}`)", stmt.lineno)

    # statements -----------------------------------------------------------------------------------------
    def block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        line = self.line_of(stmt)
        if isinstance(stmt, ast.If):
            truth = _constant_truth(stmt.test)
            self.check_all_mention(stmt.test, line)
            if truth is True:
                self.block(stmt.body)
            elif truth is False:
                self.block(stmt.orelse)
            else:
                self.branches([stmt.body, stmt.orelse], self.where(f"if {ast.unparse(stmt.test)}:", stmt))
        elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            handlers = [h.body for h in stmt.handlers if not _ends_in_raise(h.body)]
            self.branches([stmt.body + stmt.orelse, *handlers], self.where("try:", stmt))
            self.block(stmt.finalbody)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.check_all_mention(item.context_expr, line)
                if item.optional_vars is not None:
                    self.bind_targets(item.optional_vars, line)
            header = f"with {', '.join(ast.unparse(i) for i in stmt.items)}:"
            self.branches([stmt.body, []], self.where(header, stmt))  # a context manager may swallow an exception
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            header = f"for {ast.unparse(stmt.target)} in {ast.unparse(stmt.iter)}:" if not isinstance(stmt, ast.While) \
                else f"while {ast.unparse(stmt.test)}:"
            self.check_all_mention(stmt.iter if not isinstance(stmt, ast.While) else stmt.test, line)
            if not isinstance(stmt, ast.While):
                self.bind_targets(stmt.target, line)
            self.branches([stmt.body + stmt.orelse, stmt.orelse], self.where(header, stmt))
        elif isinstance(stmt, getattr(ast, "Match", ())):
            self.check_all_mention(stmt.subject, line)
            self.branches([case.body for case in stmt.cases] + [[]], self.where(f"match {ast.unparse(stmt.subject)}:", stmt))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.bind(stmt.name, self.function_entry(stmt))
        elif isinstance(stmt, ast.ClassDef):
            entry, members = self.class_entries(stmt)
            self.bind(stmt.name, entry, members)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self.import_statement(stmt)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    if target.id == _ALL:
                        self.scope.exports = None
                    self.unbind(target.id)
                elif isinstance(target, ast.Subscript) and self.is_all(target.value):
                    self.change_all(lambda names, t=target: names.__delitem__(self.index(t.slice)), stmt)
                else:
                    self.check_all_mention(target, line)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            self.assignment(stmt)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
                isinstance(stmt.value.func, ast.Attribute) and self.is_all(stmt.value.func.value):
            self.all_method(stmt.value, stmt)
        else:
            self.check_all_mention(stmt, line)
            self.walrus(stmt)

    def walrus(self, node: ast.AST) -> None:
        for inner in ast.walk(node):
            if isinstance(inner, ast.NamedExpr) and isinstance(inner.target, ast.Name):
                self.bind_targets(inner.target, inner.lineno)

    def assignment(self, stmt) -> None:
        line = stmt.lineno
        value = stmt.value
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if value is None:
            return  # an annotation alone binds nothing
        if isinstance(stmt, ast.AugAssign):
            target = stmt.target
            if self.is_all(target):
                if not isinstance(stmt.op, ast.Add) or _literal_names(value) is None:
                    self.scope.refuse(f"`{ast.unparse(stmt)}` (a computed `__all__`)", line)
                else:
                    self.change_all(lambda names: names.extend(_literal_names(value)), stmt)
            else:
                self.check_all_mention(value, line)
                self.bind_targets(target, line) if isinstance(target, ast.Name) else self.check_all_mention(target, line)
            return
        for target in targets:
            if self.is_all(target):
                names = self.all_value(value)
                if names is None:
                    self.scope.refuse(f"`{ast.unparse(stmt)}` (a computed `__all__`)", line)
                else:
                    self.scope.exports = names
                    self.bind(_ALL, Entry(_ALL, "constant", line, value=ast.unparse(value)))
            elif isinstance(target, ast.Subscript) and self.is_all(target.value):
                replacement = _literal_names(value)
                if replacement is None:
                    self.scope.refuse(f"`{ast.unparse(stmt)}` (a computed `__all__`)", line)
                else:
                    self.change_all(lambda names, t=target: names.__setitem__(self.index(t.slice), replacement), stmt)
            elif isinstance(target, ast.Name) and isinstance(value, ast.Lambda):
                self.bind(target.id, Entry(target.id, "function", line, _parameters(value.args),
                                           fingerprint=_fingerprint(value)))
            elif isinstance(target, ast.Name):
                self.check_all_mention(value, line)
                aliased = self.scope.names.get(value.id) if isinstance(value, ast.Name) else None
                if aliased is not None and aliased.kind != "constant":
                    members = {target.id + key[len(value.id):]: replace(m, name=target.id + key[len(value.id):])
                               for key, m in self.scope.members.items() if key.startswith(value.id + ".")}
                    self.bind(target.id, replace(aliased, name=target.id, line=line), members)
                else:
                    self.bind(target.id, Entry(target.id, "constant", line, value=ast.unparse(value)))
            else:
                self.check_all_mention(target, line)
                self.bind_targets(target, line)
        self.walrus(value)

    def import_statement(self, stmt) -> None:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            return
        for alias in stmt.names:
            if isinstance(stmt, ast.Import):
                name = alias.asname or alias.name.split(".")[0]
                self.bind(name, Entry(name, "module-import", stmt.lineno, source=alias.name if alias.asname else name))
            elif alias.name == "*":
                _follow_star(stmt, self.scope, self.resolver, self.visiting)
            else:
                name = alias.asname or alias.name
                try:
                    source = f"{_absolute(stmt, self.scope.module, self.is_package)}:{alias.name}"
                except ValueError:
                    source = None
                self.bind(name, Entry(name, "import", stmt.lineno, source=source))

    # __all__ --------------------------------------------------------------------------------------------
    def is_all(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == _ALL

    def all_value(self, value: ast.expr) -> list[str] | None:
        """`[...]`, `(...)`, `__all__ + [...]`, `[...] + __all__` as a list of names; None when computed otherwise."""
        names = _literal_names(value)
        if names is not None:
            return names
        if self.is_all(value):
            return list(self.scope.exports) if self.scope.exports is not None else None
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            left, right = self.all_value(value.left), self.all_value(value.right)
            return left + right if left is not None and right is not None else None
        return None

    def index(self, node: ast.expr):
        if isinstance(node, ast.Slice):
            return slice(_literal(node.lower), _literal(node.upper), _literal(node.step))
        return _literal(node)

    def change_all(self, change, stmt: ast.stmt) -> None:
        """Apply `change(names)` to the current `__all__`, or refuse the module when that is not possible."""
        if self.scope.exports is None:
            self.scope.refuse(f"`{ast.unparse(stmt)}` before a literal `__all__` is bound", stmt.lineno)
            return
        names = list(self.scope.exports)
        try:
            change(names)
        except (ValueError, IndexError, TypeError) as exc:
            self.scope.refuse(f"`{ast.unparse(stmt)}` (cannot be applied to the literal `__all__`: {exc})", stmt.lineno)
            return
        if not all(isinstance(name, str) for name in names):
            self.scope.refuse(f"`{ast.unparse(stmt)}` (puts a non-string into `__all__`)", stmt.lineno)
            return
        self.scope.exports = names

    def all_method(self, call: ast.Call, stmt: ast.stmt) -> None:
        method = call.func.attr
        try:
            args = [_literal(a) for a in call.args]
        except ValueError:
            args = None
        modelled = {"append": 1, "extend": 1, "insert": 2, "remove": 1, "pop": (0, 1), "clear": 0, "sort": 0,
                    "reverse": 0}
        arity = modelled.get(method)
        if args is None or call.keywords or arity is None or len(args) not in (arity if isinstance(arity, tuple) else (arity,)):
            self.scope.refuse(f"`{ast.unparse(call)}` (a change of `__all__` the checker does not model)", stmt.lineno)
            return
        if method == "extend" and isinstance(args[0], str):
            self.scope.refuse(f"`{ast.unparse(call)}` (extends `__all__` by the letters of a string)", stmt.lineno)
            return
        self.change_all(lambda names: getattr(names, method)(*args), stmt)

    def check_all_mention(self, node: ast.AST, line: int) -> None:
        if _mentions_all(node):
            self.scope.refuse(f"`{ast.unparse(node).splitlines()[0]}` (uses `__all__` in a way the checker does not "
                              "model)", getattr(node, "lineno", line))

    # branches -------------------------------------------------------------------------------------------
    def snapshot(self):
        scope = self.scope
        return dict(scope.names), dict(scope.members), None if scope.exports is None else list(scope.exports), \
            dict(scope.conditional)

    def restore(self, state) -> None:
        names, members, exports, conditional = state
        self.scope.names, self.scope.members = dict(names), dict(members)
        self.scope.exports = None if exports is None else list(exports)
        self.scope.conditional = dict(conditional)

    def branches(self, paths: list[list[ast.stmt]], where: tuple[str, int]) -> None:
        """Run each path from the same state, then keep what every path agrees on; mark the rest conditional."""
        before = self.snapshot()
        results = []
        for body in paths:
            self.restore(before)
            self.block(body)
            results.append(self.snapshot())
        names, members, conditional = {}, {}, {}
        for result in results:
            conditional.update(result[3])
        for name in dict.fromkeys(n for result in results for n in result[0]):
            entries = [result[0].get(name) for result in results]
            present = [e for e in entries if e is not None]
            names[name] = present[-1]
            if all(e is not None and _same(e, present[0]) for e in entries):
                continue
            kinds = {e.kind for e in present}
            if "module-import" in kinds and kinds <= {"module-import", "constant"}:
                continue  # `try: import triton / except ImportError: triton = None`
            value_only = len(present) == len(entries) and all(_same(e, present[0], value=False) for e in present)
            conditional[name] = (*where, value_only)
        for key in dict.fromkeys(k for result in results for k in result[1]):
            entries = [result[1].get(key) for result in results]
            present = [e for e in entries if e is not None]
            members[key] = present[-1]
            owner = key.split(".", 1)[0]
            if not all(e is not None and _same(e, present[0]) for e in entries) and owner not in conditional:
                conditional[owner] = (*where, False)
        exports = [result[2] for result in results]
        self.scope.names, self.scope.members, self.scope.conditional = names, members, conditional
        self.scope.exports = exports[-1]
        if any(e != exports[0] for e in exports):
            self.scope.refuse(f"`__all__` that differs between the paths through {where[0]}", where[1])


def _same(a: Entry, b: Entry, value: bool = True) -> bool:
    """The same binding, wherever it was made."""
    strip = dict(line=0, origin=None) if value else dict(line=0, origin=None, value=None)
    return replace(a, **strip) == replace(b, **strip)


def _follow_star(stmt: ast.ImportFrom, scope: ModuleScope, resolver: _Resolver, visiting) -> None:
    """Bind in `scope` what `stmt` (`from X import *`) binds, or keep it as an unfollowed entry."""
    statement = ast.unparse(stmt)
    failure = f"cannot follow '{statement}' (line {stmt.lineno})"
    try:
        target = _absolute(stmt, scope.module, scope.path.endswith("__init__.py"))
    except ValueError as exc:
        scope.error = scope.error or f"{failure}: {exc}"
        return
    if target in visiting:
        return  # a cycle: the module being read has bound nothing yet at this point
    try:
        imported = resolver.scope_of(target, visiting)
    except InputError as exc:
        scope.error = scope.error or f"{failure}: {exc.path} {exc.message}"
        return
    if imported is None:
        name = f"*:{target}"
        scope.names[name] = Entry(name, STAR_IMPORT, stmt.lineno)
        return
    path = imported.path
    scope.star_paths += [p for p in [path, *imported.star_paths] if p not in scope.star_paths]
    scope.star_modules += [m for m in [target, *imported.star_modules] if m not in scope.star_modules]
    if imported.error:
        scope.error = scope.error or f"{failure}: {path} {imported.error}"
        return

    def brought_in(entry: Entry) -> Entry:
        origin = entry.origin or (path, entry.line)
        return replace(entry, line=stmt.lineno, origin=origin)

    for name in imported.star_names():
        entry = imported.names.get(name) or Entry(name, "import", 1, source=f"{target}:{name}")
        scope.names[name] = brought_in(entry)
        scope.conditional.pop(name, None)
        if entry.kind == "class":
            members = {key: m for key, m in imported.members.items() if key.startswith(name + ".")}
            scope.members.update({key: brought_in(member) for key, member in members.items()})


def _read_scope(source: str, path: str, resolver: _Resolver, visiting, module: str | None = None) -> ModuleScope:
    scope = ModuleScope(module or module_name(path), path, resolver=resolver)
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError) as exc:
        scope.error = f"does not parse: {exc}"
        return scope
    constructs, scope.rebound = dynamic_constructs(tree, scope.module)
    for construct, line in constructs[:1]:
        scope.refuse(construct, line)
    _Binder(scope, tree, resolver, visiting).block(tree.body)
    for name, line in scope.rebound.items():
        public = name in scope.exports if scope.exports is not None else not name.startswith("_")
        if name == _ALL or (public and name in scope.names):
            scope.refuse(f"`global {name}` in a function (it can rebind or delete the module-level name)", line)
    for name, (header, line, value_only) in scope.conditional.items():
        public = name in scope.exports if scope.exports is not None else not name.startswith("_")
        if public and not value_only:
            scope.refuse(f"public name '{name}' is unbound or bound differently on some paths through {header}", line)
    return scope


def module_scope(source: str, path: str, read_module: ReadModule | None = None, module: str | None = None) -> ModuleScope:
    """Every name one module's source binds at its top level, star imports followed through `read_module`.

    `module` is the dotted name (default: from `path`, which must then be relative to its package root).
    """
    module = module or module_name(path)
    return _read_scope(source, path, _Resolver(read_module, {}), frozenset({module}), module)
