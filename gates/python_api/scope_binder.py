"""Runs a module's top-level statements over its scope, as far as `ast` can tell what they bind.

`bind_module(scope, tree, resolver, visiting)` fills a `ModuleScope`: definitions,
imports (with where they come from), assignments and aliases, `del`, the changes of
`__all__`, star imports followed through `resolver`. Constant tests (`if False:`,
`if TYPE_CHECKING:`) run one branch; so does a test of an optional dependency's flag
(`try: import transformers; _AVAILABLE = True / except ImportError: _AVAILABLE = False`, then
`if _AVAILABLE:`), read as installed: a module's API is what it has with its optional
dependencies, which is the larger one where they only add names. Other branches run from the same state and what
they disagree on is recorded in `scope.conditional` (a constant set differently keeps
every value: `4 or 1 (depending on `if ...:`)`). A default, and a constant's value, is
read with the constants it names filled in as they are bound when it runs
(`gates.python_api.default_values`). Anything the model does not cover
is refused through `scope.refuse` (see `gates.python_api.module_scope`).
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import re
from dataclasses import replace

from gates.model.errors import InputError
from gates.python_api.decorators import callee, is_passthrough, returns_argument
from gates.python_api.default_values import bounded, fill, has_imports, read_chain, read_default
from gates.python_api.dunder_all import ALL, AllChanges, literal_names
from gates.python_api.lazy_exports import (
    AttributeOf,
    changed_in_place,
    changed_name,
    is_lazy_replacement,
    is_read_only_use,
    ModuleValue,
    Unmodelled,
    getattr_exports,
    import_target,
    lazy_module_exports,
    literal_value,
)
from gates.python_api.static_guard import alias_registrar, registrars
from gates.python_api.syntax_walk import nodes
from gates.python_api.scope_model import KEYWORD_ONLY, POSITIONAL, STAR_IMPORT, Entry, Parameter, fingerprint, parameters

_PUBLIC_DUNDERS = ("__init__", "__call__")
_NOT_PROTOCOL = frozenset({"__repr__", "__str__", "__del__", "__post_init__", "__init_subclass__", "__set_name__",
                           "__sizeof__", "__format__", "__getattr__", "__getattribute__", "__dir__"})
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})
SUPPLIED_BY_HEURISTICS = "<computed by @triton.heuristics>"
# Errors an import of a dependency of another version raises beside ImportError (a name moved, a
# backend that fails to initialise): `except (ImportError, AttributeError):` is still a fallback.
_DEPENDENCY_ERRORS = frozenset({"AttributeError", "OSError", "RuntimeError"})
# Standard context managers whose `__exit__` never swallows an exception: `with` runs their whole body or raises.
_NON_SWALLOWING_CONTEXTS = frozenset({("warnings", "catch_warnings"), ("contextlib", "nullcontext")})


def is_surface_method(name: str) -> bool:
    """A method callers reach: a public one, the constructor (`__init__`, `__new__`), `__call__`, and the protocol
    methods Python calls for operators and built-ins (`__getitem__`, `__len__`, `__enter__` ...)."""
    if not name.startswith("_") or name in _PUBLIC_DUNDERS:
        return True
    return name.startswith("__") and name.endswith("__") and len(name) > 4 and name not in _NOT_PROTOCOL


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _dataclass_init(node: ast.ClassDef, options: ast.Call | None, read_default) -> tuple[Parameter, ...] | None:
    """The generated `__init__` of a `@dataclass` (None with `init=False`); `read_default` as for `parameters`."""
    init = _keyword(options, "init") if options is not None else None
    if isinstance(init, ast.Constant) and not init.value:
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
        default, kind, resolved = None, KEYWORD_ONLY if keyword_only else POSITIONAL, (None, ())
        value = stmt.value
        if isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] == "field":
            if isinstance(_keyword(value, "init"), ast.Constant) and not _keyword(value, "init").value:
                continue
            if _keyword(value, "kw_only") is not None:
                kind = KEYWORD_ONLY if _is_true(_keyword(value, "kw_only")) else POSITIONAL
            if _keyword(value, "default") is not None:
                default, resolved = ast.unparse(_keyword(value, "default")), read_default(_keyword(value, "default"))
            elif _keyword(value, "default_factory") is not None:
                default = ast.unparse(_keyword(value, "default_factory")) + "()"
        elif value is not None:
            default, resolved = ast.unparse(value), read_default(value)
        params.append(Parameter(stmt.target.id, kind, default, *resolved))
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
    if isinstance(test, ast.Compare) and ast.unparse(test) in ('__name__ == "__main__"', "__name__ == '__main__'"):
        return False  # never true for a module that is imported
    return None


# what a test over module constants may hold to be decided by the reading (`_Binder.module_constant_truth`)
_LITERAL_TEST_NODES = (ast.Name, ast.Load, ast.Constant, ast.UnaryOp, ast.Not, ast.BoolOp, ast.And, ast.Or,
                       ast.Compare, ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.Tuple)


def _instance_limits(node: ast.ClassDef) -> frozenset[str]:
    """What a class body takes from its instances (`Entry.limits`): defining `__eq__` without `__hash__` (Python
    then sets `__hash__ = None`) or `__hash__ = None` makes them unhashable; `__slots__` closes their attributes."""
    bound: dict[str, ast.stmt] = {}
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bound[stmt.name] = stmt
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                if isinstance(target, ast.Name):
                    bound[target.id] = stmt
    hashing = bound.get("__hash__")
    unhashable = "__eq__" in bound and hashing is None or isinstance(hashing, (ast.Assign, ast.AnnAssign)) \
        and isinstance(hashing.value, ast.Constant) and hashing.value.value is None
    return frozenset(limit for limit, on in (("unhashable", unhashable), ("slots", "__slots__" in bound)) if on)


def _mutations_digest(tree: ast.Module, name: str) -> str:
    """A digest of the statements of `tree` that change `name` in place, innermost first as they appear."""
    found: list[str] = []
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.stmt) and not isinstance(stmt, _COMPOUND) and \
                any(changed_name(node) == name for node in ast.walk(stmt)):
            found.append(ast.dump(stmt))
    return hashlib.sha256("\n".join(found).encode()).hexdigest()[:12]


_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While, ast.With,
             ast.AsyncWith, ast.Try, getattr(ast, "TryStar", ast.Try), getattr(ast, "Match", ast.If))


def _immutable(value) -> bool:
    if isinstance(value, tuple):
        return all(_immutable(item) for item in value)
    return value is None or isinstance(value, (bool, int, float, complex, str, bytes))


def _ends_in_raise(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Raise)


def absolute_import(stmt: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute dotted module an import from reads; ValueError when a relative one climbs out."""
    if not stmt.level:
        return stmt.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    if not package or stmt.level - 1 >= len(package):
        raise ValueError("relative import beyond the top-level package")
    parts = package[: len(package) - (stmt.level - 1)]
    return ".".join(parts + ([stmt.module] if stmt.module else []))


class _Binder(AllChanges):
    """Runs a module's top-level statements over its scope, as far as `ast` can tell what they bind."""

    def __init__(self, scope, resolver, visiting):
        self.scope = scope
        self.resolver = resolver
        self.visiting = visiting
        self.is_package = scope.path.endswith("__init__.py")
        self.literal_nodes: dict[str, ast.expr] = {}  # module-level names and the expression last bound to each
        self.loop_values: dict[str, str] = {}  # loop variables of a loop unrolled over a literal list
        self.hook: ast.FunctionDef | None = None  # a module-level `def __getattr__`
        self.replacement: ast.Assign | None = None  # `sys.modules[__name__] = _LazyModule(...)`
        self.mutated: set[str] = set()  # names some statement changes in place (`_MAP[k] = v`, `_MAP.update(...)`)
        self.tree: ast.Module | None = None  # the module read
        self.patched: set[str] | None = None  # `patched_names`, found when first asked
        self.mutation_digests: dict[str, str] = {}  # name -> digest of the statements changing it in place
        self.registrars: dict = {}  # module-level functions that alias module names (`static_guard.alias_registrar`)
        self.optional_imports: set[str] = set()  # `_X` of `try: from dep import X as _X / except ...: _X = None`
        self.dependency_flags: set[str] = set()  # `_AVAILABLE` of `try: import dep; _AVAILABLE = True / except ...`
        self.bound_on_paths: set[str] = set()  # what any path of the branches being joined binds (`branches`)
        self.bound_in: dict[int, tuple[frozenset[str], bool]] = {}  # id of a statement -> `_bound_names` of it

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
        self.dependency_flags.discard(name)
        self.optional_imports.discard(name)
        self.literal_nodes.pop(name, None)
        self.scope.names.pop(name, None)
        self.scope.conditional.pop(name, None)
        for key in [k for k in self.scope.members if k.startswith(name + ".")]:
            del self.scope.members[key]

    def bind_targets(self, target: ast.expr, line: int, how: str) -> None:
        """Names an assignment, `for` or `with` target binds; the value is the binding statement `how`."""
        if isinstance(target, ast.Name):
            if target.id == ALL:
                self.scope.refuse(f"`__all__` bound by `{ast.unparse(target)}` as a loop or unpacking target", line)
            self.bind(target.id, Entry(target.id, "constant", line, value=f"`{how}`"))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.bind_targets(element, line, how)
        elif isinstance(target, ast.Starred):
            self.bind_targets(target.value, line, how)

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

    def wrapped_definition(self, value: ast.expr) -> str | None:
        """NAME of `wrapper(..., NAME, ...)`, a call one of whose positional arguments is a function or class of the
        module (the first such): what a decorator does (`loss = torch._disable_dynamo(loss)`, `fast =
        torch.compile(loss, mode="max-autotune")`), or a lookup that falls back on it (`rms_norm =
        getattr(torch.nn.functional, "rms_norm", _rms_norm)`): callers may get that definition."""
        if not isinstance(value, ast.Call):
            return None
        for argument in value.args:
            if isinstance(argument, ast.Name):
                wrapped = self.scope.names.get(argument.id)
                if wrapped is not None and wrapped.kind in ("function", "class"):
                    return argument.id
        return None

    def bind_wrapped(self, name: str, value: ast.Call, line: int) -> None:
        """`name = wrapper(f, ...)`, read as `f` under one more, outermost decorator: its signature is still compared,
        and the wrapper (with its other arguments, `f` shown as `<fn>`) is a decorator like any other."""
        wrapped = self.wrapped_definition(value)
        definition = self.scope.names[wrapped]
        if len(value.args) == 1 and not value.keywords:
            decorator = self.qualify(value.func)
        else:
            # with the module's constants they name filled in (`partial(f, **_PRESET)` changes with `_PRESET`)
            at = next(index for index, a in enumerate(value.args) if isinstance(a, ast.Name) and a.id == wrapped)
            arguments = [self.constant_text(a) if index != at else "<fn>" for index, a in enumerate(value.args)] + \
                [f"{k.arg}={self.constant_text(k.value)}" if k.arg else f"**{self.constant_text(k.value)}"
                 for k in value.keywords]
            decorator = f"{self.qualify(value.func)}({', '.join(arguments)})"
        if definition.kind == "class" and callee(decorator).rsplit(".", 1)[-1] in _FIELD_MAKERS:
            # `LaunchConfig = dataclasses.dataclass(frozen=True)(_LaunchConfig)`: a constructor made from fields,
            # which the checker models only for the decorator written on the class
            self.scope.refuse(f"`{name} = {ast.unparse(value)}` (a class given a constructor by a call)", line)
        members = {name + key[len(wrapped):]: replace(m, name=name + key[len(wrapped):])
                   for key, m in self.scope.members.items() if key.startswith(wrapped + ".")}
        self.bind(name, replace(definition, name=name, line=line, decorators=(decorator, *definition.decorators)),
                  members)

    def decorators(self, node) -> tuple[str, ...]:
        return tuple(self.qualify(d) for d in node.decorator_list)

    def read_default(self, expr: ast.expr, local: dict[str, Entry] | None = None):
        """A default as Python evaluates it when the `def` runs (`gates.python_api.default_values`): (its value, ()) when every
        constant it names is this module's (`local`: a class body's own names, looked up first), else (a template,
        the references that `ModuleScope.constant_value` follows later)."""
        template, references = read_default(expr, lambda node: self.read_chain(node, local))
        if has_imports(references):
            return template, references
        return fill(template, references, ast.unparse(expr)), ()

    def constant_text(self, expr: ast.expr) -> str:
        """A constant's value as source text, the module's constants it names filled in as they are bound now
        (`_SPLITS = _BASE * 2` with `_BASE = 2` is `2 * 2`); imports are kept, `read_default` follows them."""
        def constants_only(node: ast.expr) -> str | None:
            found = self.read_chain(node, None)
            return found if isinstance(found, str) else None

        template, _ = read_default(expr, constants_only)
        return bounded(template if template is not None else ast.unparse(expr))

    def read_chain(self, expr: ast.expr, local: dict[str, Entry] | None) -> str | tuple[str, ...] | None:
        found = read_chain(self.scope, expr, local)
        if isinstance(found, str) and isinstance(expr, ast.Name) and expr.id in self.mutated and self.tree is not None:
            # `_CFG = {...}` that the module changes in place (`_CFG["eps"] = 1e-3`, `_CFG.update(...)`): a default
            # naming it is the object those statements leave, so they are part of its value
            if expr.id not in self.mutation_digests:
                self.mutation_digests[expr.id] = _mutations_digest(self.tree, expr.id)
            return f"{found}, changed in place [{self.mutation_digests[expr.id]}]"
        return found

    def function_entry(self, node, name: str | None = None, local: dict[str, Entry] | None = None) -> Entry:
        read_default = lambda expr: self.read_default(expr, local)  # noqa: E731
        params = parameters(node.args, read_default)
        supplied = self.heuristics_keys(node)
        if supplied:  # `@triton.heuristics({"HAS_BIAS": ...})`: the decorator passes these, callers never do
            params = tuple(replace(p, default=SUPPLIED_BY_HEURISTICS) if p.name in supplied and p.default is None else p
                           for p in params)
        return Entry(name or node.name, "function", node.lineno, params,
                     decorators=self.decorators(node), passthrough=is_passthrough(node, self.qualify),
                     fingerprint=fingerprint(node), returns_argument=returns_argument(node),
                     is_async=isinstance(node, ast.AsyncFunctionDef))

    def heuristics_keys(self, node) -> set[str]:
        """The parameter names a `@triton.heuristics({...})` decorator of `node` computes (keys of its literal dict)."""
        keys: set[str] = set()
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and deco.args and isinstance(deco.args[0], ast.Dict) \
                    and (self.qualify(deco.func) or "").endswith("triton.heuristics"):
                keys.update(k.value for k in deco.args[0].keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
        return keys

    def class_entries(self, node: ast.ClassDef) -> tuple[Entry, dict[str, Entry]]:
        members: dict[str, Entry] = {}
        local: dict[str, Entry] = {}  # the class body's own constants, which its methods' defaults see first
        init = None
        methods = {s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        nested = {s.name for s in node.body if isinstance(s, ast.ClassDef) and s.name not in methods}
        defined: dict[str, Entry] = {}  # every method so far, private ones too: a public alias can name them
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                key = f"{node.name}.{stmt.name}"
                defined[stmt.name] = self.function_entry(stmt, key, local)
                if is_surface_method(stmt.name):
                    members[key] = defined[stmt.name]
                if stmt.name == "__init__":
                    init = stmt
            elif isinstance(stmt, ast.ClassDef) and stmt.name not in methods:
                siblings = sorted(n.id for base in stmt.bases for n in ast.walk(base)
                                  if isinstance(n, ast.Name) and n.id in nested)
                if siblings and not stmt.name.startswith("_"):
                    self.scope.refuse(f"nested class '{node.name}.{stmt.name}' derives from '{node.name}."
                                      f"{siblings[0]}', a class of the same class body whose members the checker does "
                                      "not follow", stmt.lineno)
                members.update(self.nested_class(node, stmt))
            else:
                self.check_class_statement(node, stmt, methods | nested)
                aliases = self.method_aliases(node, stmt, defined)
                members.update(self.class_attributes(node, stmt))
                members.update(aliases)
                local.update(self.class_constants(stmt, local))
        decorators = self.decorators(node)
        dataclass_options = [d for d in node.decorator_list
                             if self.qualify(d.func if isinstance(d, ast.Call) else d) in
                             ("dataclasses:dataclass", "dataclasses.dataclass")]
        bases = tuple(self.qualify(base) for base in node.bases)
        named_tuple = any(b.replace(":", ".") in ("typing.NamedTuple", "typing_extensions.NamedTuple") for b in bases)
        if init is None and (dataclass_options or named_tuple):
            options = dataclass_options[0] if dataclass_options and isinstance(dataclass_options[0], ast.Call) else None
            params = _dataclass_init(node, options, lambda expr: self.read_default(expr, local))
            if params is not None:
                members[f"{node.name}.__init__"] = Entry(f"{node.name}.__init__", "function", node.lineno, params,
                                                         generated=True)
        kept = tuple(d for d in decorators if callee(d).replace(":", ".") != "dataclasses.dataclass")
        kept += tuple(f"({k.arg}={self.qualify(k.value)})" for k in node.keywords)  # metaclass=...
        # the fingerprint names the class's code where it decorates or wraps something (`rms_norm = _Op(_rms_norm)`)
        return Entry(node.name, "class", node.lineno, decorators=kept, bases=bases, limits=_instance_limits(node),
                     fingerprint=fingerprint(node)), members

    def nested_class(self, node: ast.ClassDef, inner: ast.ClassDef) -> dict[str, Entry]:
        """A class defined in a class body (`class Scheduler: @dataclass class Params: ...`): a member of the outer
        class, its own members under it (`Scheduler.Params.create`); a private one is none of the API."""
        if inner.name.startswith("_"):
            return {}
        entry, members = self.class_entries(inner)
        outer = f"{node.name}.{inner.name}"
        found = {outer: replace(entry, name=outer)}
        for key, member in members.items():
            found[f"{node.name}.{key}"] = replace(member, name=f"{node.name}.{key}")
        return found

    def method_aliases(self, node: ast.ClassDef, stmt: ast.stmt, defined: dict[str, Entry]) -> dict[str, Entry]:
        """`__call__ = _forward` in a class body: the alias is the method it names, private or not."""
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id in defined):
            return {}
        aliased = defined[stmt.value.id]
        return {f"{node.name}.{t.id}": replace(aliased, name=f"{node.name}.{t.id}", line=stmt.lineno)
                for t in stmt.targets if isinstance(t, ast.Name) and is_surface_method(t.id)}

    def class_attributes(self, node: ast.ClassDef, stmt: ast.stmt) -> dict[str, Entry]:
        """Public class attributes (`BLOCK = 64`, enum members): removing one is a break. Annotated fields
        (`heads: int = 8`) belong to the generated constructor of a dataclass and are compared there."""
        if not isinstance(stmt, ast.Assign):
            return {}
        targets = [t for t in stmt.targets if isinstance(t, ast.Name)]
        value = ast.unparse(stmt.value)
        return {f"{node.name}.{t.id}": Entry(f"{node.name}.{t.id}", "constant", stmt.lineno, value=value)
                for t in targets if not t.id.startswith("_")}

    def class_constants(self, stmt: ast.stmt, local: dict[str, Entry]) -> dict[str, Entry]:
        """What a class-body assignment binds in the class namespace (`BLOCK = 64`, `_SPLITS = 4`)."""
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            return {}
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value, references = self.read_default(stmt.value, local)
        value = value if value is not None and not references else ast.unparse(stmt.value)
        return {t.id: Entry(t.id, "constant", stmt.lineno, value=value) for t in targets if isinstance(t, ast.Name)}

    def check_class_statement(self, node: ast.ClassDef, stmt: ast.stmt, methods: set[str]) -> None:
        """A class body may define methods and attributes; rebinding or hiding a method makes it unreadable."""
        stored = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
        nested = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(stmt))
        if stored & methods:
            name = sorted(stored & methods)[0]
            self.scope.refuse(f"method or nested class '{node.name}.{name}' rebound or deleted in the class body",
                              stmt.lineno)
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and any(
                isinstance(t, ast.Name) and not t.id.startswith("_") for t in stmt.targets) and \
                getattr(self.scope.names.get(stmt.value.id), "kind", None) in ("class", "function"):
            # `Params = _ParamsV1` in a class body: a public name for a class or function of the module, whose
            # signature the class attribute (read by its text) would not follow
            self.scope.refuse(f"class attribute `{ast.unparse(stmt).splitlines()[0]}` in class '{node.name}' names a "
                              "class or function of the module", stmt.lineno)
        elif nested:
            self.scope.refuse(f"a method of class '{node.name}' defined under a compound statement "
                              f"(`{ast.unparse(stmt).splitlines()[0]}`)", stmt.lineno)

    # statements -----------------------------------------------------------------------------------------
    def block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        line = self.line_of(stmt)
        if self.dynamic_import(stmt) or isinstance(stmt, ast.For) and self.unrolled(stmt):
            return
        if isinstance(stmt, ast.If):
            truth = _constant_truth(stmt.test)
            if truth is None:
                truth = self.dependency_truth(stmt.test)
            if truth is None:
                truth = self.module_constant_truth(stmt.test)
            self.check_all_mention(stmt.test, line)
            self.walrus(stmt.test)  # `if (name := value):` binds on every path, before either runs
            if truth is True:
                self.block(stmt.body)
            elif truth is False:
                self.block(stmt.orelse)
            else:
                self.branches([stmt.body, stmt.orelse], self.where(f"if {ast.unparse(stmt.test)}:", stmt),
                              test=stmt.test)
        elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            # `except E as name:` deletes `name` when the handler ends, whatever it was bound to before
            handler_bodies = {id(h): h.body + ([ast.copy_location(ast.Delete([ast.Name(h.name, ast.Del())]), h)]
                                               if h.name else []) for h in stmt.handlers}
            handlers = [handler_bodies[id(h)] for h in stmt.handlers if not _ends_in_raise(h.body)]
            fallbacks = bool(stmt.handlers) and all(_catches_import_errors(h) for h in stmt.handlers)
            failing = self.always_failing(stmt.body) if fallbacks and \
                handlers == [handler_bodies[id(h)] for h in stmt.handlers] else None
            if failing is not None:
                # the body raises ImportError on every machine: Python runs it up to there, then the first handler
                self.block(stmt.body[:failing])
                self.block(handler_bodies[id(stmt.handlers[0])])
            else:
                fails_by = self.environment_imports(stmt.body) if fallbacks else None
                self.branches([stmt.body + stmt.orelse, *handlers], self.where("try:", stmt), fallbacks,
                              fails_by=fails_by, try_body=stmt.body if handlers and not fallbacks else None)
            flag = _dependency_flag(stmt, self.scope.module.split(".")[0]) if fallbacks else None
            if flag is not None:
                self.dependency_flags.add(flag)
            self.optional_imports.update(_optional_imports(stmt, self.scope.module.split(".")[0]))
            self.block(stmt.finalbody)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            header = f"with {', '.join(ast.unparse(i) for i in stmt.items)}:"
            for item in stmt.items:
                self.check_all_mention(item.context_expr, line)
                self.walrus(item.context_expr)
                if item.optional_vars is not None:
                    self.bind_targets(item.optional_vars, line, header)
            if all(self.never_swallows(item.context_expr) for item in stmt.items):
                self.block(stmt.body)
            else:
                self.branches([stmt.body, []], self.where(header, stmt))  # a context manager may swallow an exception
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            header = f"for {ast.unparse(stmt.target)} in {ast.unparse(stmt.iter)}:" if not isinstance(stmt, ast.While) \
                else f"while {ast.unparse(stmt.test)}:"
            self.check_all_mention(stmt.iter if not isinstance(stmt, ast.While) else stmt.test, line)
            self.walrus(stmt.iter if not isinstance(stmt, ast.While) else stmt.test)
            if not isinstance(stmt, ast.While):
                self.bind_targets(stmt.target, line, header)
            if not _imports_private_submodules(stmt):
                self.branches([stmt.body + stmt.orelse, stmt.orelse], self.where(header, stmt))
        elif isinstance(stmt, getattr(ast, "Match", ())):
            self.check_all_mention(stmt.subject, line)
            self.walrus(stmt.subject)
            captured = sorted({name for case in stmt.cases for name in _pattern_names(case.pattern)})
            if captured:
                self.scope.refuse(f"`match` capturing {', '.join(captured)} at module level (a pattern binds them on "
                                  "some paths)", line)
            where = self.where(f"match {ast.unparse(stmt.subject)}:", stmt)
            self.branches([case.body for case in stmt.cases] + [[]], where)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
                isinstance(stmt.value.func, ast.Name) and stmt.value.func.id in self.registrars:
            self.register_aliases(self.registrars[stmt.value.func.id])
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.bind(stmt.name, self.function_entry(stmt))
            if stmt.name == "__getattr__":
                self.hook = stmt
        elif isinstance(stmt, ast.ClassDef):
            entry, members = self.class_entries(stmt)
            self.bind(stmt.name, entry, members)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self.import_statement(stmt)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    if target.id == ALL:
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
        elif self.asserts_on_all(stmt):
            self.walrus(stmt)
        else:
            self.check_all_mention(stmt, line)
            self.walrus(stmt)

    # imports by name, lazy names --------------------------------------------------------------------------
    def importers(self) -> set[str]:
        """How this module can name `importlib.import_module`."""
        found = {"importlib.import_module"} if "importlib" not in self.scope.names else set()
        for name, entry in self.scope.names.items():
            if entry.kind == "module-import" and entry.source == "importlib":
                found.add(f"{name}.import_module")
            elif entry.kind == "import" and entry.source == "importlib:import_module":
                found.add(name)
        return found

    def literals(self) -> dict:
        """The module's names bound to literals no statement changes in place, with `__name__` and `__package__`."""
        package = self.scope.module if self.is_package else self.scope.module.rpartition(".")[0]
        env = {"__name__": self.scope.module, "__package__": package}
        for name, node in self.literal_nodes.items():
            if name in self.mutated:
                continue
            try:
                env[name] = literal_value(node)
            except Unmodelled:
                continue
        env.update(self.loop_values)
        env.update({flag: True for flag in self.dependency_flags if flag not in self.scope.rebound})
        return env

    def register_aliases(self, registrar: tuple[tuple[str, ...], str]) -> None:
        """`_register_aliases()` (`static_guard.alias_registrar`): each listed name bound now gets its alias."""
        keys, method = registrar
        for key in keys:
            entry = self.scope.names.get(key)
            if entry is None:
                continue  # `if hasattr(current_module, key):`
            alias = getattr(key, method)()
            conditional = self.scope.conditional.get(key)
            self.bind(alias, replace(entry, name=alias))
            if conditional is not None:
                self.scope.conditional[alias] = conditional

    def never_swallows(self, context: ast.expr) -> bool:
        """`with warnings.catch_warnings():` and the like: a standard context manager whose `__exit__` lets every
        exception through, so the body's bindings are the statement's (`warnings` imported as the standard module)."""
        if not (isinstance(context, ast.Call) and isinstance(context.func, ast.Attribute)
                and isinstance(context.func.value, ast.Name)):
            return False
        module = self.scope.names.get(context.func.value.id)
        return module is not None and module.kind == "module-import" and \
            (module.source, context.func.attr) in _NON_SWALLOWING_CONTEXTS

    def dependency_truth(self, test: ast.expr) -> bool | None:
        """`if FLAG:` / `if not FLAG:` over an optional dependency's flag: read as installed."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.dependency_truth(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.Name) and test.id in self.dependency_flags and test.id not in self.scope.rebound:
            return True
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(test.left, ast.Name) and test.left.id in self.optional_imports \
                and test.left.id not in self.scope.rebound \
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
            return isinstance(test.ops[0], ast.IsNot)  # `if _X is not None:` where the import of `_X` works
        return None

    def always_failing(self, body: list[ast.stmt]) -> int | None:
        """The index of the first statement of a `try` body that raises on every machine: a `raise`, or an import
        of a name that a module of the repository does not bind (nor holds as a submodule); None if none does."""
        for index, stmt in enumerate(body):
            if isinstance(stmt, ast.Raise):
                return index
            if isinstance(stmt, ast.ImportFrom) and self.resolver is not None and not any(a.name == "*" for a in stmt.names):
                try:
                    module = absolute_import(stmt, self.scope.module, self.is_package)
                    if self.resolver.find(module) is None or module in self.visiting:
                        continue
                    imported = self.resolver.scope_of(module, self.visiting | {self.scope.module})
                except (ValueError, InputError):
                    continue
                if imported is None or imported.error:
                    continue
                if any(a.name not in imported.names and self.resolver.find(f"{module}.{a.name}") is None
                       for a in stmt.names):
                    return index
        return None

    def module_constant_truth(self, test: ast.expr) -> bool | None:
        """`if _LEGACY:` (`not`, `and`, `or`, `==`, `!=`, `is`, `is not` too) over module constants the module set
        to a literal above, on every path, and nothing rebinds: Python takes the one path, and so does the reading
        (flipping the constant is then a change of the definitions callers get)."""
        names = {node.id for node in ast.walk(test) if isinstance(node, ast.Name)}
        if not names or any(not isinstance(node, _LITERAL_TEST_NODES) for node in ast.walk(test)):
            return None
        values = {}
        for name in names:
            entry = self.scope.names.get(name)
            if entry is None or entry.kind != "constant" or entry.value is None or name in self.scope.conditional \
                    or name in self.scope.rebound:
                return None
            try:
                values[name] = ast.literal_eval(entry.value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                return None
            if not _immutable(values[name]):
                return None  # a list or dict may be changed in place between its assignment and the test
        try:
            return bool(eval(compile(ast.Expression(test), "<test>", "eval"), {"__builtins__": {}}, values))
        except Exception:  # noqa: BLE001 - a test Python would fail on is not one the reading decides
            return None

    def importer_calls(self, node: ast.AST) -> list[ast.Call]:
        """Calls of anything named `import_module` (the static guard leaves those at module level to this reader)."""
        def named(func: ast.expr) -> str | None:
            return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None

        importers = self.importers()
        return [n for n in ast.walk(node) if isinstance(n, ast.Call)
                and (named(n.func) == "import_module" or ast.unparse(n.func) in importers)]

    def names_of_literal(self, value: ast.expr) -> list[str] | None:
        """`list(_LAZY)`, `sorted(_LAZY)`, `tuple(_LAZY)`, `[*_LAZY]`, `list(_LAZY.keys())` over a module-level literal
        that no statement changes: the names it holds, as Python computes them."""
        inner, ordered = None, False
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and \
                value.func.id in ("list", "sorted", "tuple") and len(value.args) == 1 and not value.keywords:
            inner, ordered = value.args[0], value.func.id == "sorted"
        elif isinstance(value, (ast.List, ast.Tuple)) and len(value.elts) == 1 and isinstance(value.elts[0], ast.Starred):
            inner = value.elts[0].value
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "keys" and \
                not inner.args and not inner.keywords:
            inner = inner.func.value
        if not isinstance(inner, ast.Name) or inner.id in ("list", "sorted", "tuple") or \
                inner.id not in self.literal_nodes or inner.id in self.mutated:
            return None
        found = self.literals().get(inner.id)
        names = list(found) if isinstance(found, (dict, list, tuple)) else None
        if names is None or not all(isinstance(name, str) for name in names):
            return None
        return sorted(names) if ordered else names

    def dynamic_import(self, stmt: ast.stmt) -> bool:
        """`import_module(...)` at module level, as Python runs it; True when `stmt` was such an import.

        `x = import_module("a.b")` binds `x` to the module; a bare `import_module(".cuda", __name__)` in a
        package binds the submodule `cuda` in the package's namespace, as the import system does. A call
        elsewhere in a statement, or one whose module cannot be computed, makes the module unreadable."""
        header = {ast.If: "test", ast.While: "test", ast.For: "iter", ast.AsyncFor: "iter"}.get(type(stmt))
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False
        scanned = [getattr(stmt, header)] if header else [] if isinstance(stmt, (ast.Try, ast.With, ast.AsyncWith)) \
            or isinstance(stmt, getattr(ast, "Match", ())) else [stmt]
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            scanned = [item.context_expr for item in stmt.items]
        calls = [call for node in scanned for call in self.importer_calls(node)]
        if not calls:
            return False
        line = self.line_of(stmt)
        call = calls[0]
        direct = len(calls) == 1 and (isinstance(stmt, ast.Expr) and stmt.value is call or isinstance(stmt, ast.Assign)
                                      and stmt.value is call and len(stmt.targets) == 1
                                      and isinstance(stmt.targets[0], ast.Name))
        if not direct:
            self.scope.refuse(f"`{ast.unparse(call)}` inside an expression (the checker reads `x = import_module(...)` "
                              "and `import_module(...)` statements)", line)
            return True
        try:
            target = import_target(call, self.literals(), self.importers())
        except Unmodelled as exc:
            self.scope.refuse(f"`{ast.unparse(call)}`, whose module the checker cannot compute ({exc})", line)
            return True
        if target is None:
            self.scope.refuse(f"`{ast.unparse(call)}` (not `importlib.import_module` as this module binds it)", line)
        elif target == self.scope.module:
            self.scope.refuse(f"`{ast.unparse(call)}`", line)  # the module itself: what it does with it is not read
        elif isinstance(stmt, ast.Assign):
            name = stmt.targets[0].id
            parent, _, leaf = target.rpartition(".")
            if parent and self.resolver is not None and self.resolver.find(target) is not None:
                # a module of the repository: the same binding as `from parent import leaf as name`
                self.bind(name, Entry(name, "import", line, source=f"{parent}:{leaf}"))
            else:
                self.bind(name, Entry(name, "module-import", line, source=target))
        elif self.is_package and target.startswith(self.scope.module + "."):
            name = target[len(self.scope.module) + 1:].split(".")[0]
            if name not in self.scope.names:
                self.bind(name, Entry(name, "module-import", line, source=f"{self.scope.module}.{name}"))
        return True

    def unrolled(self, stmt) -> bool:
        """A `for` over a literal list whose body imports by name runs once per item, as Python runs it."""
        if isinstance(stmt, ast.AsyncFor) or stmt.orelse or not isinstance(stmt.target, ast.Name) or \
                not any(self.importer_calls(s) for s in stmt.body):
            return False
        try:
            items = self.literals().get(stmt.iter.id) if isinstance(stmt.iter, ast.Name) else literal_value(stmt.iter)
        except Unmodelled:
            return False
        if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items) or len(items) > 64 or \
                any(isinstance(n, (ast.Break, ast.Continue)) for n in ast.walk(stmt)):
            return False
        name = stmt.target.id
        for item in items:
            self.bind(name, Entry(name, "constant", stmt.lineno, value=repr(item)))
            self.loop_values[name] = item
            self.block(stmt.body)
        self.loop_values.pop(name, None)
        return True

    def lazy_names(self, tree: ast.Module) -> None:
        """After the last statement: what a `sys.modules[__name__] = _LazyModule(...)` replacement or a
        `def __getattr__` hook hands out (`gates.python_api.lazy_exports`)."""
        if self.replacement is not None:
            try:
                found = lazy_module_exports(self.import_structure(tree), self.scope.module)
            except Unmodelled as exc:
                self.scope.refuse(f"a lazy module replacing the package in `sys.modules` that the checker cannot "
                                  f"read ({exc})", self.replacement.lineno)
                return
            kept = self.extra_objects()
            self.scope.names = {n: e for n, e in self.scope.names.items() if n in kept}
            self.scope.members = {k: e for k, e in self.scope.members.items() if k.split(".", 1)[0] in kept}
            self.scope.conditional = {n: c for n, c in self.scope.conditional.items() if n in kept}
            self.scope.exports = None
            self.bind_lazy(found, self.replacement.lineno)
        elif self.hook is not None and self.scope.names.get("__getattr__", Entry("", "", 0)).line == self.hook.lineno:
            try:
                found = getattr_exports(self.hook, self.literals(), self.importers())
            except Unmodelled as exc:
                self.scope.refuse(f"a module-level `def __getattr__` hook the checker cannot evaluate ({exc})",
                                  self.hook.lineno)
                return
            self.bind_lazy({n: v for n, v in found.items() if n not in self.scope.names}, self.hook.lineno)

    def bind_lazy(self, found: dict, line: int) -> None:
        for name, value in found.items():
            if isinstance(value, ModuleValue):
                self.scope.names[name] = Entry(name, "module-import", line, source=value.dotted, exported=True)
            elif isinstance(value, AttributeOf):
                self.scope.names[name] = Entry(name, "import", line, source=f"{value.dotted}:{value.attribute}",
                                               exported=True)

    def extra_objects(self) -> set[str]:
        call = self.replacement.value
        extra = next((k.value for k in call.keywords if k.arg == "extra_objects"), None)
        if extra is None:
            return set()
        if isinstance(extra, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                               and isinstance(v, ast.Name) and v.id == k.value
                                               for k, v in zip(extra.keys, extra.values)):
            return {k.value for k in extra.keys}
        raise Unmodelled(f"`extra_objects={ast.unparse(extra)}`")

    def import_structure(self, tree: ast.Module) -> dict:
        """The lazy module's map as the module's statements leave it: its literal value with every literal change
        applied (`M[k] = [...]`, `M[k].extend([...])`, `.append`, `M[k] += [...]`, `M.update({...})`)."""
        call = self.replacement.value
        node = call.args[2] if len(call.args) > 2 else next((k.value for k in call.keywords
                                                              if k.arg == "import_structure"), None)
        if isinstance(node, ast.Dict):
            return literal_value(node)
        if not isinstance(node, ast.Name) or node.id not in self.literal_nodes:
            raise Unmodelled("the map is not a name bound to a literal")
        name = node.id
        structure = literal_value(self.literal_nodes[name])
        if not isinstance(structure, dict):
            raise Unmodelled(f"`{name}` is not a dict")
        modelled: set[int] = set()
        for stmt in _module_level(tree.body):
            target = _changed_map(stmt, name)
            if target is None:
                continue
            name_node, key_node, how, argument = target
            modelled.add(id(name_node))
            key = literal_value(key_node) if key_node is not None else None
            value = literal_value(argument)
            if how == "update" and isinstance(value, dict):
                structure.update(value)
            elif how == "set":
                structure[key] = list(value)
            elif how in ("extend", "append") and isinstance(structure.get(key), list):
                structure[key] += list(value) if how != "append" else [value]
            else:
                raise Unmodelled(f"`{ast.unparse(stmt)[:80]}`")
        parents = {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        for use in ast.walk(tree):
            if isinstance(use, ast.Name) and use.id == name and id(use) not in modelled and \
                    isinstance(use.ctx, ast.Load) and not is_read_only_use(use, name, parents):
                raise Unmodelled(f"`{name}` changed at line {use.lineno} in a way the checker does not model")
        return structure

    def walrus(self, node: ast.AST) -> None:
        for inner in ast.walk(node):
            if isinstance(inner, ast.NamedExpr) and isinstance(inner.target, ast.Name):
                self.bind_targets(inner.target, inner.lineno, ast.unparse(inner))

    def assignment(self, stmt) -> None:
        line = stmt.lineno
        value = stmt.value
        if isinstance(stmt, ast.Assign) and is_lazy_replacement(stmt):
            self.replacement = stmt
            return
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if value is None:
            return  # an annotation alone binds nothing
        if isinstance(stmt, ast.AugAssign):
            target = stmt.target
            if self.is_all(target):
                if not isinstance(stmt.op, ast.Add) or literal_names(value) is None:
                    self.scope.refuse(f"`{ast.unparse(stmt)}` (a computed `__all__`)", line)
                else:
                    self.change_all(lambda names: names.extend(literal_names(value)), stmt)
            else:
                self.check_all_mention(value, line)
                self.check_all_mention(target, line)
                if isinstance(target, ast.Name):
                    self.bind(target.id, Entry(target.id, "constant", line, value=self.augmented(target.id, stmt)))
            return
        for target in targets:
            if self.is_all(target):
                names = self.all_value(value)
                if names is None:
                    self.scope.refuse(f"`{ast.unparse(stmt)}` (a computed `__all__`)", line)
                else:
                    self.scope.exports = names
                    self.bind(ALL, Entry(ALL, "constant", line, value=ast.unparse(value)))
            elif isinstance(target, ast.Subscript) and self.is_all(target.value):
                replacement = literal_names(value)
                if replacement is None:
                    self.scope.refuse(f"`{ast.unparse(stmt)}` (a computed `__all__`)", line)
                else:
                    self.change_all(lambda names, t=target: names.__setitem__(self.index(t.slice), replacement), stmt)
            elif isinstance(target, ast.Name) and isinstance(value, ast.Lambda):
                self.bind(target.id, Entry(target.id, "function", line, parameters(value.args, self.read_default),
                                           fingerprint=fingerprint(value)))
            elif isinstance(target, ast.Name):
                self.check_all_mention(value, line)
                aliased = self.scope.names.get(value.id) if isinstance(value, ast.Name) else None
                module = self.repository_module_of(value.value) if isinstance(value, ast.Attribute) else None
                if aliased is not None and aliased.kind != "constant":
                    members = {target.id + key[len(value.id):]: replace(m, name=target.id + key[len(value.id):])
                               for key, m in self.scope.members.items() if key.startswith(value.id + ".")}
                    self.bind(target.id, replace(aliased, name=target.id, line=line), members)
                elif module is not None:
                    # `rms_norm = _impl._norm` over an imported module of the repository: `from _impl import _norm`
                    self.bind(target.id, Entry(target.id, "import", line, source=f"{module}:{value.attr}"))
                elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "type" \
                        and len(value.args) == 3 and "type" not in self.scope.names:
                    # `Norm = type("Norm", (), {"__init__": _init})`: a class whose members a dict builds
                    self.scope.refuse(f"`{target.id} = {ast.unparse(value)}` (a class made by `type(...)`)", line)
                elif self.wrapped_definition(value) is not None:
                    self.bind_wrapped(target.id, value, line)
                else:
                    self.bind(target.id, Entry(target.id, "constant", line, value=self.constant_text(value)))
                    self.literal_nodes[target.id] = value
            elif self.function_attribute(target):
                # `attention.paged = _paged`: callers reach it as `attention.paged`, a member of the function
                self.check_all_mention(value, line)
                key = f"{target.value.id}.{target.attr}"
                aliased = self.scope.names.get(value.id) if isinstance(value, ast.Name) else None
                self.scope.members[key] = replace(aliased, name=key, line=line) \
                    if aliased is not None and aliased.kind != "constant" \
                    else Entry(key, "constant", line, value=self.constant_text(value))
            else:
                self.check_all_mention(target, line)
                self.bind_targets(target, line, ast.unparse(stmt))
        self.walrus(value)

    def repository_module_of(self, node: ast.expr) -> str | None:
        """The dotted module a name stands for (`import kernels.ops._impl as impl`, `from kernels.ops import _impl`)
        when it is a module of the repository bound unconditionally; None otherwise."""
        if not isinstance(node, ast.Name) or self.resolver is None or node.id in self.scope.conditional:
            return None
        entry = self.scope.names.get(node.id)
        if entry is None or not entry.source or entry.kind not in ("import", "module-import"):
            return None
        module = entry.source.replace(":", ".") if entry.kind == "import" else entry.source
        return module if self.resolver.find(module) is not None else None

    def function_attribute(self, target: ast.expr) -> bool:
        """`fn.attr` (not a dunder) on a function the module defines: an attribute of the function object."""
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)) or target.attr.startswith("__"):
            return False
        owner = self.scope.names.get(target.value.id)
        return owner is not None and owner.kind == "function" and owner.origin is None and owner.source is None

    def augmented(self, name: str, stmt: ast.AugAssign) -> str:
        """The value of `name` after `name += x`, as source text: `(1) + 3`."""
        before = self.scope.names.get(name)
        if before is not None and before.kind == "constant" and before.value is not None:
            try:
                left = ast.parse(before.value, mode="eval").body
            except SyntaxError:
                left = None
            if left is not None:
                return bounded(ast.unparse(ast.BinOp(left, stmt.op, stmt.value)))
            return bounded(f"{before.value}, then `{ast.unparse(stmt)}`")
        return f"`{ast.unparse(stmt)}`"

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
                    source = f"{absolute_import(stmt, self.scope.module, self.is_package)}:{alias.name}"
                except ValueError:
                    source = None
                self.bind(name, Entry(name, "import", stmt.lineno, source=source))

    # branches -------------------------------------------------------------------------------------------
    def reads_outside_only(self, test: ast.expr) -> bool:
        """Every name `test` reads is a builtin the module does not shadow or an import from outside the repository
        (`torch.__version__ >= "2.4"`, `sys.version_info >= (3, 10)`): what it evaluates to is the environment's,
        never the repository's. A module constant, a helper of the module or a flag imported from the repository can
        change what it picks without changing its text, so such a test is not read this way."""
        for node in ast.walk(test):
            if isinstance(node, ast.NamedExpr):
                return False
            if not isinstance(node, ast.Name):
                continue
            if node.id in self.patched_names():
                return False  # `torch.__version__ = "0"` above the test: the module sets what the test reads
            entry = self.scope.names.get(node.id)
            if entry is None:
                if node.id in self.bound_on_paths or not hasattr(builtins, node.id):
                    return False
                continue
            if entry.kind not in ("import", "module-import") or not entry.source:
                return False
            if not self.from_outside(entry.source.split(":", 1)[0]):
                return False
        return True

    def repository_import(self, entry: Entry) -> bool:
        """`entry` imports a name of a module of the repository (`from pkg.fixes import helper`)."""
        return entry.kind == "import" and ":" in (entry.source or "") and \
            not self.from_outside(entry.source.split(":", 1)[0])

    def environment_prefix(self, body: list[ast.stmt], name: str, imported: set[str] | None = None) -> bool:
        """Python reaches the statement of `body` that binds `name` unless the environment stops it: every statement
        before it imports from outside the repository or runs nothing but such imports and builtins
        (`runs_outside_only`), and it is that binding (an import, a `def`, a `class`) or an `if` whose body reaches it
        the same way (its test is judged where the `if` is read: `some_paths`)."""
        imported = set() if imported is None else imported
        for stmt in body:
            if _may_bind(stmt, name):
                if isinstance(stmt, ast.If):
                    return self.environment_prefix(stmt.body, name, imported)
                return isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
                                         ast.ClassDef))
            bound = self.outside_import(stmt)
            if bound is not None:
                imported.update(bound)
            elif not self.runs_outside_only(stmt, imported):
                return False
        return False

    def outside_import(self, stmt: ast.stmt) -> list[str] | None:
        """The names `stmt` binds when it is an import wholly from outside the repository (no star import); None for
        any other statement."""
        if isinstance(stmt, ast.Import) and all(self.from_outside(alias.name) for alias in stmt.names):
            return [(alias.asname or alias.name).split(".")[0] for alias in stmt.names]
        if isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module and self.from_outside(stmt.module) \
                and all(alias.name != "*" for alias in stmt.names):
            return [alias.asname or alias.name for alias in stmt.names]
        return None

    def environment_imports(self, body: list[ast.stmt]) -> tuple[str, ...] | None:
        """The modules a `try` body imports when only those imports can make it raise ImportError: every statement is
        an import from outside the repository, a `def` or `class`, an assignment to a name, or a docstring, and
        whatever they evaluate as they run (decorators, bases, defaults, annotations, values, a class body) calls and
        looks into nothing but those imports, other imports from outside and builtins. None otherwise: a call into
        the repository, or a repository object's attribute (a lazy module's `__getattr__`), may raise ImportError
        by the repository's own state, which can move a definition without changing the body's text."""
        modules: list[str] = []
        imported: set[str] = set()
        for stmt in body:
            bound = self.outside_import(stmt)
            if isinstance(stmt, (ast.Import, ast.ImportFrom)) and bound is None:
                return None  # an import of the repository's own
            if isinstance(stmt, ast.Import):
                modules.extend(alias.name for alias in stmt.names)
            elif isinstance(stmt, ast.ImportFrom):
                # each name it imports: a dependency without one of them fails the body as surely as without the module
                modules.append(f"{stmt.module} ({', '.join(alias.name for alias in stmt.names)})")
            elif not self.runs_outside_only(stmt, imported):
                return None
            imported.update(bound or ())
        return tuple(dict.fromkeys(modules)) or None

    def runs_outside_only(self, stmt: ast.stmt, imported: set[str]) -> bool:
        """What `stmt` (a definition, an assignment to a name, a docstring, `pass`) evaluates as it runs calls and looks
        into only `imported`, imports from outside the repository in scope and builtins (`environment_imports`)."""
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = stmt.args
            if not all(self.constant_decorator(d, imported) for d in stmt.decorator_list):
                return False
            evaluated = [*arguments.defaults, *(d for d in arguments.kw_defaults if d),
                         *(a.annotation for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                                  arguments.vararg, arguments.kwarg] if a is not None and a.annotation),
                         *([stmt.returns] if stmt.returns else [])]
            return all(self.looks_outside_only(expr, imported) for expr in evaluated)
        if isinstance(stmt, ast.ClassDef):
            if not all(self.constant_decorator(d, imported) for d in stmt.decorator_list):
                return False
            evaluated = [*stmt.bases, *(k.value for k in stmt.keywords)]
            return all(self.looks_outside_only(expr, imported) for expr in evaluated) and \
                all(self.runs_outside_only(inner, imported) for inner in stmt.body)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            return all(isinstance(t, ast.Name) for t in targets) and \
                (stmt.value is None or self.looks_outside_only(stmt.value, imported))
        if isinstance(stmt, ast.Expr):
            return isinstance(stmt.value, ast.Constant)
        return isinstance(stmt, ast.Pass)

    def constant_decorator(self, decorator: ast.expr, imported: set[str]) -> bool:
        """A decorator of a definition in such a `try` body: an outside name (`@torch.no_grad`), or a call of one with
        constant arguments (`@torch.compile(mode="max-autotune")`), which cannot name the repository's own code."""
        if isinstance(decorator, ast.Call):
            arguments = [*decorator.args, *(k.value for k in decorator.keywords)]
            return all(isinstance(a, ast.Constant) for a in arguments) and \
                self.looks_outside_only(decorator.func, imported)
        return self.looks_outside_only(decorator, imported)

    def looks_outside_only(self, expr: ast.expr, imported: set[str]) -> bool:
        """`expr` calls nothing (an outside function may run the repository's code: `importlib.import_module(
        "kernels._C")`, `cpp_extension.load(...)`, `open(...)`), and every attribute and item it evaluates is rooted
        at `imported`, an import from outside the repository in scope or a builtin the module does not shadow (a
        plain name read raises no ImportError)."""
        for node in ast.walk(expr):
            if isinstance(node, (ast.NamedExpr, ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom, ast.Call)):
                return False
            if isinstance(node, (ast.Attribute, ast.Subscript)):
                root = node.value
            else:
                continue
            while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
                root = root.func if isinstance(root, ast.Call) else root.value
            if not isinstance(root, ast.Name) or root.id in self.patched_names():
                return False
            if root.id in imported:
                continue
            entry = self.scope.names.get(root.id)
            if entry is None:
                if root.id in self.bound_on_paths or not hasattr(builtins, root.id):
                    return False
            elif entry.kind not in ("import", "module-import") or not entry.source or \
                    not self.from_outside(entry.source.split(":", 1)[0]):
                return False
        return True

    def from_outside(self, module: str) -> bool:
        """`module` is no module of the repository, and neither is its top-level package (one the checker could not
        tell apart from one of the repository's counts as the repository's)."""
        return self.resolver is not None and self.resolver.find(module) is None \
            and self.resolver.find(module.split(".", 1)[0]) is None

    def patched_names(self) -> set[str]:
        """Names whose attributes or items the module sets or deletes anywhere (`torch.__version__ = "0"`,
        `del sys.modules[...]`), or that it passes to `setattr` or `delattr` (`setattr(torch, "__version__", "0")`)."""
        if self.tree is None:
            return set()
        if self.patched is None:
            self.patched = set()
            for node in nodes(self.tree):
                if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    root = node.value
                    while isinstance(root, (ast.Attribute, ast.Subscript)):
                        root = root.value
                    if isinstance(root, ast.Name):
                        self.patched.add(root.id)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args and \
                        node.func.id in ("setattr", "delattr") and isinstance(node.args[0], ast.Name):
                    self.patched.add(node.args[0].id)
        return self.patched

    def alternatives_outside(self, entries: list) -> Entry | None:
        """One import entry for a name every path imports from outside the repository, else None.

        Which library module supplies such a name (a Triton version's `libdevice` or its
        `math`) is no part of this package's surface the checker can read either way; the
        entry's source lists the alternatives, so a change to them is still a change. A path
        that leaves the name unbound, binds it otherwise, or imports it from a module of the
        repository keeps the name conditional.
        """
        if any(e is not None and e.kind == "import" for e in entries):
            entries = [self.builtin_as_import(e) for e in entries]  # `else: CacheLayerMixin = object`
        if not entries or any(e is None or e.kind != "import" or not e.source or ":" not in e.source for e in entries):
            return None
        for entry in entries:
            module = entry.source.split(":", 1)[0]
            if self.resolver is None or self.resolver.find(module) is not None \
                    or self.resolver.find(module.rsplit(".", 1)[0] if "." in module else module) is not None:
                return None
        sources = sorted(dict.fromkeys(e.source for e in entries))
        return replace(entries[-1], source=" | ".join(sources))

    def builtin_as_import(self, entry: Entry | None) -> Entry | None:
        """`X = object` (or `None`, or another builtin class) where no name of the module shadows it: the stand-in a
        version check binds where a library lacks `X`, read as an import of it from `builtins`."""
        if entry is None or entry.kind != "constant" or entry.value not in _BUILTIN_STAND_INS \
                or entry.value in self.scope.names or entry.value in self.bound_on_paths:
            return entry
        return replace(entry, kind="import", source=f"builtins:{entry.value}", value=None)

    def kernel_or_library_attribute(self, entries: list) -> Entry | None:
        """The decorated function among `entries` when every path binds the name, some to one decorated function
        (the same decorators on each) and every other to an attribute of a module from outside the repository
        (`tl.gather`): whether that is a kernel is the surface's to decide, by its internal decorators."""
        if not entries or any(e is None for e in entries):
            return None
        decorated = [e for e in entries if e.kind == "function" and e.decorators]
        others = [e for e in entries if not (e.kind == "function" and e.decorators)]
        if not decorated or not others or len({e.decorators for e in decorated}) != 1:
            return None  # a decorated function on every path: each path's own definition (`branches`)
        for entry in others:
            if entry.kind != "constant" or not entry.value or not _DOTTED.fullmatch(entry.value) or "." not in entry.value:
                return None
            root = self.scope.names.get(entry.value.split(".", 1)[0])
            if root is None or root.kind not in ("module-import", "import") or not root.source:
                return None
            if not self.from_outside(root.source.split(":", 1)[0]):
                return None  # a module of the repository, or one the checker cannot tell apart from one
        return decorated[0]

    def snapshot(self):
        scope = self.scope
        return dict(scope.names), dict(scope.members), None if scope.exports is None else list(scope.exports), \
            dict(scope.conditional)

    def restore(self, state) -> None:
        names, members, exports, conditional = state
        self.scope.names, self.scope.members = dict(names), dict(members)
        self.scope.exports = None if exports is None else list(exports)
        self.scope.conditional = dict(conditional)

    def branches(self, paths: list[list[ast.stmt]], where: tuple[str, int], fallbacks: bool = False,
                 test: ast.expr | None = None, fails_by: tuple[str, ...] | None = None,
                 try_body: list[ast.stmt] | None = None) -> None:
        """Run each path from the same state, then keep what every path agrees on; mark the rest conditional.

        With `fallbacks` (a `try` whose handlers catch only `ImportError`), a name that the `try` body binds and
        every handler binds too, otherwise, is the `try` body's binding (what Python binds where the import
        works) with the handlers' bindings kept as its fallbacks (`ModuleScope.alternatives`), each compared too.
        `fails_by` (`environment_imports`): the modules from outside the repository whose import alone can make
        such a `try` body fail; a class or function it defines that no handler binds is then defined on that path only.
        """
        before = self.snapshot()
        results = []
        for body in paths:
            self.restore(before)
            self.block(body)
            results.append(self.snapshot())
        names, members, conditional = {}, {}, {}
        variants: set[str] = set()  # classes and functions read with each path's definition (`path_variants`)
        self.bound_on_paths = {name for result in results for name in result[0]}
        for result in results:
            conditional.update(result[3])
        for name in dict.fromkeys(n for result in results for n in result[0]):
            entries = [result[0].get(name) for result in results]
            present = [e for e in entries if e is not None]
            names[name] = present[-1]
            if fallbacks and len(present) == len(entries) and len(entries) > 1:
                self.scope.fallback_guarded.add(name)  # bound by the `try` body and, where it fails, by each handler
            elif len(present) < len(entries):
                self.scope.fallback_guarded.discard(name)
            if all(e is not None and _same(e, present[0]) for e in entries):
                continue
            kinds = {e.kind for e in present}
            if "module-import" in kinds and kinds <= {"module-import", "constant"}:
                # `try: import triton / except ImportError: triton = None`: the library's module where it is
                # installed, as a plain `import triton` binds it (no API of this module), whatever stands in for it
                names[name] = next(e for e in present if e.kind == "module-import")
                continue
            outside = self.alternatives_outside(entries)
            if outside is not None:
                names[name] = outside  # `if triton >= 3: from ...libdevice import rsqrt / else: from ...math import rsqrt`
                continue
            kernel = self.kernel_or_library_attribute(entries)
            if kernel is not None:
                names[name] = kernel  # `if HAS_GATHER: gather = tl.gather / else: @triton.jit def gather(...)`
                self.scope.kernel_fallbacks[name] = where
                continue
            if fallbacks and len(present) == len(entries) and entries[0].kind in ("import", "function", "class"):
                names[name] = entries[0]  # `try: from .cuda import op / except ImportError: from .portable import op`
                self.scope.alternatives[name] = entries[1:]  # one per handler, in order, each compared too
                continue
            if not fallbacks and len(present) == len(entries) and len(kinds) == 1 and kinds <= {"function", "class"}:
                # `if transformers > X: class Cache(FLACache) / else: class Cache(LegacyFLACache)`: the first path's
                # definition, each other path's kept beside it by its place, each compared too
                names[name] = entries[0]
                self.scope.alternatives[name] = entries[1:]
                self.scope.path_variants[name] = where[0]
                variants.add(name)
                continue
            assigned = [_assigned_text(body, name, self.bound_in) for body in paths] if kinds != {"constant"} else [None]
            if len(present) == len(entries) and None not in assigned:
                # `if compiling: torch_compile = torch.compile(fullgraph=True) / else: torch_compile = identity`:
                # a name every path sets by one assignment is a constant, its value the paths' expressions
                values = list(dict.fromkeys(assigned))
                # the paths' values that name a definition of the module: a decorator bound this way is compared
                # by them (`_compile = _identity` on one path becoming `_swap`, or `_identity` redefined)
                named = [str(e.fingerprint) for e in entries if e.kind in ("function", "class") and e.fingerprint]
                names[name] = Entry(name, "constant", present[-1].line,
                                    value=values[0] if len(values) == 1 else f"{' or '.join(values)} (depending on {where[0]})",
                                    fingerprint=" ".join(named) or None)
                conditional[name] = (*where, True)
                continue
            value_only = len(present) == len(entries) and all(_same(e, present[0], value=False) for e in present)
            conditional[name] = (*where, value_only)
            defining = [result for result in results if name in result[0]]
            # a definition on one path; or a helper of the repository imported on one path, read so only where
            # the environment alone decides the path (a test of the repository's own names stays refused)
            defines = len(present) == 1 and len(entries) > 1 and (
                present[0].kind in ("function", "class")
                or self.repository_import(present[0]) and (test is None or self.reads_outside_only(test)))
            if not fallbacks and test is not None and defines and name not in defining[0][3]:
                # `if torch.__version__ >= "2.4": ... / else: def noop_custom_op(...)`: one path defines it, the others
                # leave it unbound; read as that definition, defined on that path only (`api_surface`), where the
                # test reads only the environment (libraries, builtins), which no change to the repository moves.
                # The path is named, so moving the definition to the other path is a change of its limit
                path = "" if entries[0] is not None else "the else of "
                self.scope.some_paths[name] = (where[0], f"{path}{where[0]}", self.reads_outside_only(test))
            elif fails_by and entries[0] is not None and len(present) == 1 and len(entries) > 1 and \
                    present[0].kind in ("function", "class") and name not in defining[0][3]:
                # `try: from transformers... import MllamaTextRMSNorm; class MllamaNorm(MllamaTextRMSNorm) / except
                # ImportError: pass`: defined where the dependency imports, which the environment decides; named by
                # what it imports, so moving the definition under another dependency is a change of its limit
                self.scope.some_paths[name] = (where[0], f"{where[0]} importing {', '.join(fails_by)}", True)
            elif try_body is not None and defines and entries[0] is not None and \
                    self.environment_prefix(try_body, name) and \
                    (name not in defining[0][3] or (self.scope.some_paths.get(name) or (None, None, False))[2]):
                # `try: import fbgemm_gpu / if Version(fbgemm_gpu.__version__) >= ...: from pkg.fixes import helper
                # / except: pass` (unsloth's `fp8`): only the environment decides whether the body gets to it
                inner = self.scope.some_paths.get(name) if name in defining[0][3] else None
                label = f"{inner[1]} within {where[0]}" if inner else where[0]
                self.scope.some_paths[name] = (where[0], label, True)
            else:
                self.scope.some_paths.pop(name, None)
            if self.alternatives_outside(present) is not None and len(present) < len(entries):
                self.scope.outside_only.add(name)  # `if is_peft_available(): from peft import X`
            else:
                self.scope.outside_only.discard(name)
            sources = {(e.kind, e.source) for e in present}
            if len(present) < len(entries) and len(sources) == 1 and present[0].kind == "import" and \
                    ":" in (present[0].source or ""):
                self.scope.import_only.add(name)  # `if DUMP_PTX: from pkg import ptx_patch`: a submodule, perhaps
            else:
                self.scope.import_only.discard(name)
            values = list(dict.fromkeys(e.value for e in present))
            if value_only and len(values) > 1 and None not in values:
                names[name] = replace(present[-1], value=f"{' or '.join(values)} (depending on {where[0]})")
        differing = {key.split(".", 1)[0] for result in results for key in result[1]
                     if any(other[1].get(key) != result[1].get(key) for other in results)}
        for owner in differing - variants if not fallbacks else ():
            classes = [result[0].get(owner) for result in results]
            if all(c is not None and c.kind == "class" for c in classes):
                # one class on every path whose members differ: each path's class, with its members, compared too
                names[owner] = classes[0]
                self.scope.alternatives[owner] = classes[1:]
                self.scope.path_variants[owner] = where[0]
                variants.add(owner)
        for key in dict.fromkeys(k for result in results for k in result[1]):
            entries = [result[1].get(key) for result in results]
            present = [e for e in entries if e is not None]
            owner = key.split(".", 1)[0]
            if owner in variants:  # the first path's class; each other path's members are kept with its class
                if entries[0] is not None:
                    members[key] = entries[0]
                continue
            members[key] = present[-1]
            if not all(e is not None and _same(e, present[0]) for e in entries) and owner not in conditional:
                conditional[owner] = (*where, False)
        for name in variants:
            self.scope.alternative_members[name] = [{k: v for k, v in result[1].items() if k.split(".", 1)[0] == name}
                                                    for result in results[1:]]
        exports = [result[2] for result in results]
        self.scope.names, self.scope.members, self.scope.conditional = names, members, conditional
        self.scope.exports = exports[-1]
        if any(e != exports[0] for e in exports):
            self.scope.refuse(f"`__all__` that differs between the paths through {where[0]}", where[1])


def _assigned_text(body: list[ast.stmt], name: str, known: dict[int, tuple[frozenset[str], bool]] | None = None
                   ) -> str | None:
    """The expression `name = <expression>` sets `name` to in `body`, when that one top-level assignment is the only
    statement of `body` that binds `name` in any way (a nested block, `def`, import or star import that may bind it
    counts); None otherwise. `known` keeps each statement's `_bound_names` (by `id`, for one binding of a module,
    whose tree outlives it): a large `try` body is walked once, not once per name its paths disagree on."""
    known = {} if known is None else known

    def binds(stmt: ast.stmt) -> bool:
        if id(stmt) not in known:
            known[id(stmt)] = _bound_names(stmt)
        names, anything = known[id(stmt)]
        return anything or name in names

    binding = [stmt for stmt in body if binds(stmt)]
    if len(binding) != 1:
        return None
    stmt = binding[0]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and stmt.targets[0].id == name and not _may_bind(stmt.value, name):
        return ast.unparse(stmt.value)
    return None


def _may_bind(node: ast.AST, name: str) -> bool:
    names, anything = _bound_names(node)
    return anything or name in names


def _bound_names(node: ast.AST) -> tuple[frozenset[str], bool]:
    """The names `node` may bind anywhere within it (assigned, defined, imported, declared `global`), and whether it
    may bind any name at all (a star import, `setattr`, `globals().update`, `exec`, `eval`)."""
    names: set[str] = set()
    anything = False
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name):
            if not isinstance(inner.ctx, ast.Load):
                names.add(inner.id)
        elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(inner.name)
        elif isinstance(inner, (ast.Import, ast.ImportFrom)):
            for alias in inner.names:
                if alias.name == "*":
                    anything = True
                else:
                    names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(inner, (ast.Global, ast.Nonlocal)):
            names.update(inner.names)
        elif isinstance(inner, ast.Call) and ast.unparse(inner.func) in ("setattr", "globals().update", "exec", "eval"):
            anything = True
    return frozenset(names), anything


# Decorators that give a class a constructor from its fields (`dataclasses.dataclass`, attrs' `define` and `s`)
_FIELD_MAKERS = frozenset({"dataclass", "define", "frozen", "mutable", "s", "attrs"})
_BUILTIN_STAND_INS = frozenset({"None"} | {name for name, value in vars(builtins).items()
                                           if isinstance(value, type) and not name.startswith("_")})
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _imports_private_submodules(stmt: ast.stmt) -> bool:
    """A package importing its private subpackages for what they register (liger-kernel's backends):

        for _, modname, ispkg in pkgutil.iter_modules(__path__):
            if ispkg and modname.startswith("_"):
                importlib.import_module(f"{__name__}.{modname}")

    It binds its loop names, and each `_name` submodule, none of them an API name beyond the loop's."""
    if not (isinstance(stmt, ast.For) and not stmt.orelse and len(stmt.body) == 1
            and isinstance(stmt.target, ast.Tuple) and len(stmt.target.elts) == 3
            and all(isinstance(element, ast.Name) for element in stmt.target.elts)
            and ast.unparse(stmt.iter) in ("pkgutil.iter_modules(__path__)", "iter_modules(__path__)")):
        return False
    name = stmt.target.elts[1].id
    test = stmt.body[0]
    if not (isinstance(test, ast.If) and not test.orelse and len(test.body) == 1 and isinstance(test.body[0], ast.Expr)):
        return False
    conjuncts = test.test.values if isinstance(test.test, ast.BoolOp) and isinstance(test.test.op, ast.And) \
        else [test.test]
    private = f"{name}.startswith('_')" in {ast.unparse(c) for c in conjuncts}
    call = test.body[0].value
    return private and ast.unparse(call) in (f"importlib.import_module(f'{{__name__}}.{{{name}}}')",
                                             f"import_module(f'{{__name__}}.{{{name}}}')")


def _optional_imports(stmt: ast.Try, package: str) -> set[str]:
    """The names of `try: from dep import X as _X / except ImportError (or Exception): _X = None`, every import of the
    body from outside `package` and every handler binding exactly those names to None: imports of an optional
    dependency (or of one of its versions), tested later with `if _X is not None:`."""
    body = stmt.body + stmt.orelse
    if stmt.finalbody or not stmt.handlers or not all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in body):
        return set()
    names = set()
    for s in body:
        if isinstance(s, ast.ImportFrom) and (s.level or (s.module or "").split(".")[0] == package) or \
                isinstance(s, ast.Import) and any(a.name.split(".")[0] == package for a in s.names):
            return set()
        names.update(alias.asname or alias.name.split(".")[0] for alias in s.names if alias.name != "*")
    for handler in stmt.handlers:
        caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if not all(isinstance(c, ast.Name) and c.id in _IMPORT_ERRORS | {"Exception"} for c in caught):
            return set()
        bound = set()
        for s in handler.body:
            if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                    and isinstance(s.value, ast.Constant) and s.value.value is None):
                return set()
            bound.add(s.targets[0].id)
        if bound != names:
            return set()
    return names


def _dependency_flag(stmt: ast.Try, package: str) -> str | None:
    """FLAG of `try: import dep (from dep import x ...); FLAG = True / except ImportError: FLAG = False`, where every
    import of the `try` body is of a module outside `package`: whether an optional dependency is installed."""
    body = stmt.body + stmt.orelse
    imports = [s for s in body if isinstance(s, (ast.Import, ast.ImportFrom))]
    flags = [s for s in body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    if not imports or len(flags) != 1 or stmt.finalbody or any(
            isinstance(s, ast.ImportFrom) and (s.level or (s.module or "").split(".")[0] == package)
            or isinstance(s, ast.Import) and any(a.name.split(".")[0] == package for a in s.names) for s in imports):
        return None
    flag = _assigned_constant(flags[0], True)
    if flag is None or not all(len(h.body) == 1 and _assigned_constant(h.body[0], False) == flag
                               for h in stmt.handlers):
        return None
    return flag


def _assigned_constant(stmt: ast.stmt, value: bool) -> str | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and isinstance(stmt.value, ast.Constant) and stmt.value.value is value:
        return stmt.targets[0].id
    return None


def _catches_import_errors(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return False
    names = [ast.unparse(n).split(".")[-1]
             for n in (handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type])]
    return any(n in _IMPORT_ERRORS for n in names) and all(n in _IMPORT_ERRORS | _DEPENDENCY_ERRORS for n in names)


def _module_level(body: list[ast.stmt]):
    """Every statement that runs at module level (inside `if`, `try`, `with` and loops too), in order."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field_name in ("body", "orelse", "finalbody"):
            yield from _module_level(getattr(stmt, field_name, None) or [])
        for handler in getattr(stmt, "handlers", None) or []:
            yield from _module_level(handler.body)


def _changed_map(stmt: ast.stmt, name: str):
    """(the key node, how, the argument) for a literal change of the map `name`; None for other statements."""
    def keyed(node):
        return node.slice if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and \
            node.value.id == name else None

    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and keyed(stmt.targets[0]) is not None:
        return stmt.targets[0].value, keyed(stmt.targets[0]), "set", stmt.value
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and keyed(stmt.target) is not None:
        return stmt.target.value, keyed(stmt.target), "extend", stmt.value
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
            and len(stmt.value.args) == 1 and not stmt.value.keywords:
        owner, method = stmt.value.func.value, stmt.value.func.attr
        if keyed(owner) is not None and method in ("extend", "append"):
            return owner.value, keyed(owner), method, stmt.value.args[0]
        if isinstance(owner, ast.Name) and owner.id == name and method == "update":
            return owner, None, "update", stmt.value.args[0]
    return None


def _same(a: Entry, b: Entry, value: bool = True) -> bool:
    """The same binding as callers see it, wherever it was made (two bodies of one signature are the same)."""
    if a is b:
        return True  # a name no path rebinds: one entry, kept by each path's snapshot
    strip = dict(line=0, origin=None, fingerprint=None)
    strip.update({} if value else dict(value=None))
    return replace(a, **strip) == replace(b, **strip)


def _pattern_names(pattern) -> set[str]:
    """The names a `case` pattern binds (captures, `*rest`, `**rest`, `as name`)."""
    names = set()
    for node in ast.walk(pattern):
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names


def _follow_star(stmt: ast.ImportFrom, scope, resolver, visiting) -> None:
    """Bind in `scope` what `stmt` (`from X import *`) binds, or keep it as an unfollowed entry."""
    statement = ast.unparse(stmt)
    failure = f"cannot follow '{statement}' (line {stmt.lineno})"
    try:
        target = absolute_import(stmt, scope.module, scope.path.endswith("__init__.py"))
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
        own = sorted(n for n, e in scope.names.items() if e.kind in ("function", "class") and not n.startswith("_"))
        if own:
            scope.refuse(f"`{statement}` after the module defines {', '.join(own[:3])}{' ...' if len(own) > 3 else ''}"
                         " (a library's names, unknown to the checker, may rebind them)", stmt.lineno)
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




_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit", "os.abort"})


def _always_raises(stmt: ast.stmt) -> str | None:
    """What makes a top-level statement raise whenever the module is imported: `raise`, `assert` of a false
    constant, a call of `sys.exit` and the like; None otherwise."""
    if isinstance(stmt, ast.Raise):
        return "`raise`"
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Constant) and not stmt.test.value:
        return f"`{ast.unparse(stmt)[:60]}`"
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and ast.unparse(stmt.value.func) in _EXITS:
        return f"`{ast.unparse(stmt.value)[:60]}`"
    return None


def bind_module(scope, tree: ast.Module, resolver, visiting) -> None:
    """Run `tree`'s top-level statements over `scope` (a `gates.python_api.module_scope.ModuleScope`)."""
    binder = _Binder(scope, resolver, visiting)
    binder.tree = tree
    mutated = getattr(tree, "_design_gates_mutated", None)  # a tree kept for many commits (`module_scope._parsed`)
    if mutated is None:
        mutated = changed_in_place(tree)
        tree._design_gates_mutated = mutated
    binder.mutated = set(mutated)
    found = getattr(tree, "_design_gates_registrars", None)
    if found is None:
        sys_names = {alias.asname or "sys" for stmt in tree.body if isinstance(stmt, ast.Import)
                     for alias in stmt.names if alias.name == "sys"}
        found = {stmt.name: alias_registrar(stmt, sys_names) for stmt in tree.body
                 if isinstance(stmt, ast.FunctionDef) and stmt.name in registrars(tree, sys_names)}
        tree._design_gates_registrars = found
    binder.registrars = found
    for stmt in tree.body:
        failing = _always_raises(stmt)
        if failing:
            scope.refuse(f"{failing} at module level (importing the module fails)", stmt.lineno)
            break
    binder.block(tree.body)
    binder.lazy_names(tree)
