"""Names a module hands out through its import machinery, evaluated the way Python would.

Real packages load parts of their API lazily or by name. Three idioms are read here,
each by evaluating what Python evaluates, over literal values only:

- a module-level `def __getattr__(name)` hook over a literal map (`_LAZY = {"attention_decode":
  ".api"}`): the hook is run once for every string the literals it reads hold (and once for a
  name none holds, which must raise), with `name` bound to it. What a run returns decides what
  the name is: `import_module(...)` is a submodule, `getattr(import_module(...), attr)` is
  `from module import attr` (and so is a `from module import attr` statement in the hook, as in
  `if name == "Old": from .new import Old; return Old`), a `raise` is no name. `getattr_exports`
  returns them.
- a package that replaces itself in `sys.modules` by a lazy module built from an
  `_import_structure` map (`{"modeling_x": ["XModel"]}`: transformers' `_LazyModule` and its
  copies), whose attributes are the map's submodules and the names it lists for each; literal
  changes of the map anywhere at module level (`_import_structure["x"] = [...]`, `.extend`,
  `.append`, `.update`) are applied, also those under an optional-dependency `try`/`if`
  (the names count as present, as where the dependency is installed). `lazy_module_exports`.
- `importlib.import_module(...)` of a string the evaluator can compute (a literal, an f-string or
  `+` over loop variables that iterate a literal list): `import_target`.

Anything else these constructs do (a value that is not a literal, a statement the evaluator
does not model) makes them `Unmodelled`, and the caller refuses the module as unreadable
statically.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass

IMPORTERS = frozenset({"import_module", "importlib.import_module", "__import__"})
_READ_ONLY_METHODS = frozenset({"get", "keys", "items", "values", "copy", "__contains__"})
_MISSING = "\x00not-a-listed-name"
_MAX_STEPS = 2000


class Unmodelled(Exception):
    """A construct the evaluator does not model; the message names it."""


@dataclass(frozen=True)
class ModuleValue:
    dotted: str


@dataclass(frozen=True)
class AttributeOf:
    dotted: str
    attribute: str


class _Raised(Exception):
    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


class _Returned(Exception):
    def __init__(self, value):
        super().__init__("return")
        self.value = value


def literal_value(node: ast.expr | None):
    """The value of a literal expression (dicts, lists, tuples, sets, strings, numbers); Unmodelled otherwise."""
    if node is None:
        raise Unmodelled("a missing value")
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise Unmodelled(f"`{ast.unparse(node)[:80]}` is not a literal") from None


def _resolve(target: str, package) -> str:
    if target.startswith("."):
        if not isinstance(package, str) or not package:
            raise Unmodelled(f"relative import '{target}' without a package")
        try:
            return importlib.util.resolve_name(target, package)
        except (ImportError, ValueError) as exc:
            raise Unmodelled(f"import of '{target}': {exc}") from None
    return target


class Evaluator:
    """Evaluates expressions over literal values: `env` maps names to their values (module literals,
    loop variables, `__name__`); `importers` are the names the module binds to `import_module`."""

    def __init__(self, env: dict, importers: set[str]):
        self.env = dict(env)
        self.importers = importers
        self.steps = 0

    def value(self, node: ast.expr):
        self.steps += 1
        if self.steps > _MAX_STEPS:
            raise Unmodelled("an evaluation that does not end")
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.env:
                raise Unmodelled(f"`{node.id}` is not a literal the checker can read")
            return self.env[node.id]
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            return literal_value(node)
        if isinstance(node, ast.JoinedStr):
            parts = []
            for part in node.values:
                if isinstance(part, ast.FormattedValue):
                    if part.format_spec is not None or part.conversion not in (-1, 115):
                        raise Unmodelled(f"`{ast.unparse(node)}`")
                    parts.append(self.text(part.value))
                else:
                    parts.append(self.text(part))
            return "".join(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left), self.value(node.right)
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            raise Unmodelled(f"`{ast.unparse(node)}`")
        if isinstance(node, ast.Subscript):
            container, key = self.value(node.value), self.value(node.slice)
            try:
                return container[key]
            except (KeyError, IndexError):
                raise _Raised("KeyError") from None
            except TypeError:
                raise Unmodelled(f"`{ast.unparse(node)}`") from None
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = self.value(node.left), self.value(node.comparators[0])
            op = node.ops[0]
            if isinstance(op, (ast.In, ast.NotIn)):
                if not isinstance(right, (dict, list, tuple, set, frozenset, str)):
                    raise Unmodelled(f"`{ast.unparse(node)}`")
                found = left in right
                return found if isinstance(op, ast.In) else not found
            if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
                same = left == right if isinstance(op, (ast.Eq, ast.NotEq)) else left is right
                return same if isinstance(op, (ast.Eq, ast.Is)) else not same
        if isinstance(node, ast.BoolOp):
            result = None
            for operand in node.values:
                result = self.value(operand)
                if isinstance(node.op, ast.And) and not result or isinstance(node.op, ast.Or) and result:
                    return result
            return result
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self.value(node.operand)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise Unmodelled(f"`{ast.unparse(node)[:80]}`")

    def text(self, node: ast.expr) -> str:
        found = self.value(node)
        if not isinstance(found, str):
            raise Unmodelled(f"`{ast.unparse(node)}` is not a string")
        return found

    def call(self, node: ast.Call):
        func = node.func
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise Unmodelled(f"`{ast.unparse(node)}`")
        if self.is_importer(func):
            target = self.text(node.args[0]) if node.args else None
            package = self.value(node.args[1]) if len(node.args) > 1 else \
                next((self.value(k.value) for k in node.keywords if k.arg == "package"), None)
            if target is None:
                raise Unmodelled(f"`{ast.unparse(node)}`")
            return ModuleValue(_resolve(target, package))
        if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) == 2 and not node.keywords:
            module, attribute = self.value(node.args[0]), self.text(node.args[1])
            if isinstance(module, ModuleValue):
                return AttributeOf(module.dotted, attribute)
        if isinstance(func, ast.Attribute) and func.attr in ("get", "startswith", "endswith") and not node.keywords:
            owner = self.value(func.value)
            arguments = [self.value(a) for a in node.args]
            if func.attr == "get" and isinstance(owner, dict) and 1 <= len(arguments) <= 2:
                return owner.get(*arguments)
            if func.attr != "get" and isinstance(owner, str) and len(arguments) == 1 and \
                    isinstance(arguments[0], (str, tuple)):
                return getattr(owner, func.attr)(arguments[0])
        raise Unmodelled(f"`{ast.unparse(node)[:80]}`")

    def is_importer(self, func: ast.expr) -> bool:
        return ast.unparse(func) in self.importers


def import_target(call: ast.Call, env: dict, importers: set[str]) -> str | None:
    """The absolute module an `import_module(...)` call imports, or None when `call` is no such call;
    Unmodelled when its argument cannot be computed."""
    evaluator = Evaluator(env, importers)
    if not evaluator.is_importer(call.func):
        return None
    try:
        found = evaluator.call(call)
    except (RecursionError, _Raised):
        raise Unmodelled(f"`{ast.unparse(call)[:80]}`") from None
    return found.dotted if isinstance(found, ModuleValue) else None


def _strings(value, found: list[str]) -> None:
    if isinstance(value, str):
        found.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _strings(key, found)
            _strings(item, found)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _strings(item, found)


class _HookRunner:
    """Runs the body of a `def __getattr__(name)` for one name."""

    def __init__(self, func: ast.FunctionDef, env: dict, importers: set[str]):
        self.func = func
        self.env = env
        self.importers = set(importers)

    def run(self, name: str):
        param = (self.func.args.posonlyargs + self.func.args.args)[0].arg
        evaluator = Evaluator({**self.env, param: name}, self.importers)
        try:
            self.block(self.func.body, evaluator)
        except _Returned as returned:
            return returned.value
        except _Raised:
            return None
        raise Unmodelled("`__getattr__` ends without returning or raising")

    def block(self, body: list[ast.stmt], evaluator: Evaluator) -> None:
        for stmt in body:
            self.statement(stmt, evaluator)

    def statement(self, stmt: ast.stmt, evaluator: Evaluator) -> None:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            return  # a docstring
        if isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.Return):
            raise _Returned(evaluator.value(stmt.value) if stmt.value is not None else None)
        if isinstance(stmt, ast.Raise):
            raise _Raised("raise")
        if isinstance(stmt, ast.If):
            self.block(stmt.body if evaluator.value(stmt.test) else stmt.orelse, evaluator)
            return
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            value = evaluator.value(stmt.value)
            for target in targets:
                self.assign(target, value, evaluator)
            return
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) and self.imports_importer(stmt):
            return
        if isinstance(stmt, ast.ImportFrom):
            self.import_from(stmt, evaluator)
            return
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:  # `import a.b` binds `a`; `import a.b as c` binds `c` to `a.b`
                bound = alias.asname or alias.name.split(".")[0]
                evaluator.env[bound] = ModuleValue(alias.name if alias.asname else bound)
            return
        if isinstance(stmt, ast.Try) and not stmt.finalbody:
            try:
                self.block(stmt.body, evaluator)
            except _Raised as raised:
                handler = next((h for h in stmt.handlers if self.catches(h, raised.kind)), None)
                if handler is None:
                    raise
                if handler.name:
                    raise Unmodelled("an exception handler that names its exception") from None
                self.block(handler.body, evaluator)
                return
            self.block(stmt.orelse, evaluator)
            return
        raise Unmodelled(f"`{ast.unparse(stmt).splitlines()[0][:80]}` in `__getattr__`")

    def assign(self, target: ast.expr, value, evaluator: Evaluator) -> None:
        if isinstance(target, ast.Name):
            evaluator.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (tuple, list)) and \
                len(target.elts) == len(value) and all(isinstance(e, ast.Name) for e in target.elts):
            for element, item in zip(target.elts, value):
                evaluator.env[element.id] = item
        else:
            raise Unmodelled(f"assignment to `{ast.unparse(target)}` in `__getattr__`")

    @staticmethod
    def import_from(stmt: ast.ImportFrom, evaluator: Evaluator) -> None:
        """`from module import name [as other]` in the hook (deprecation re-exports: `if name == "Old": from .new
        import Old; return Old`): each bound name is that module's attribute, as `getattr(import_module(...))` is."""
        dotted = stmt.module or ""
        if stmt.level:
            package = evaluator.env.get("__package__")
            parts = package.split(".") if isinstance(package, str) and package else []
            if stmt.level - 1 >= len(parts) or not parts:
                raise Unmodelled(f"`{ast.unparse(stmt)}` reaches above the package in `__getattr__`")
            base = ".".join(parts[:len(parts) - (stmt.level - 1)])
            dotted = f"{base}.{dotted}" if dotted else base
        for alias in stmt.names:
            if alias.name == "*":
                raise Unmodelled(f"`{ast.unparse(stmt)}` in `__getattr__`")
            evaluator.env[alias.asname or alias.name] = AttributeOf(dotted, alias.name)

    def imports_importer(self, stmt) -> bool:
        if isinstance(stmt, ast.Import) and all(a.name == "importlib" for a in stmt.names):
            self.importers.update(f"{a.asname or 'importlib'}.import_module" for a in stmt.names)
            return True
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "importlib" and \
                all(a.name == "import_module" for a in stmt.names):
            self.importers.update(a.asname or a.name for a in stmt.names)
            return True
        return False

    @staticmethod
    def catches(handler: ast.ExceptHandler, kind: str) -> bool:
        if handler.type is None:
            return True
        names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        shown = {ast.unparse(n).split(".")[-1] for n in names}
        return kind == "KeyError" and bool(shown & {"KeyError", "LookupError", "Exception"})


def getattr_exports(func: ast.FunctionDef, env: dict, importers: set[str]) -> dict[str, ModuleValue | AttributeOf]:
    """What a module-level `def __getattr__(name)` hands out, by name (see the module docstring).

    `env` holds the module's literal values the hook may read (and `__name__`, `__package__`).
    Raises Unmodelled when the hook does anything the evaluator does not model, or returns a
    name that a name outside its literals would also get.
    """
    args = func.args
    if len(args.posonlyargs + args.args) != 1 or args.vararg or args.kwarg or args.kwonlyargs or \
            func.decorator_list or isinstance(func, ast.AsyncFunctionDef):
        raise Unmodelled("a `__getattr__` that is not `def __getattr__(name)`")
    read = {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and n.id in env}
    candidates: list[str] = []
    for name in sorted(read):
        _strings(env[name], candidates)
    for node in ast.walk(func):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            candidates.append(node.value)
    try:
        return _run_hook(func, env, importers, candidates)
    except RecursionError:
        raise Unmodelled("a `__getattr__` nested too deeply") from None


def _run_hook(func, env: dict, importers: set[str], candidates: list[str]) -> dict[str, ModuleValue | AttributeOf]:
    runner = _HookRunner(func, env, importers)
    if runner.run(_MISSING) is not None:
        raise Unmodelled("a `__getattr__` that returns something for any name")
    found: dict[str, ModuleValue | AttributeOf] = {}
    for name in dict.fromkeys(candidates):
        if not name.isidentifier():
            continue
        result = runner.run(name)
        if result is None:
            continue
        if not isinstance(result, (ModuleValue, AttributeOf)):
            raise Unmodelled(f"`__getattr__({name!r})` returns a value that is not an imported name")
        found[name] = result
    return found


def lazy_module_exports(structure: dict, package: str) -> dict[str, ModuleValue | AttributeOf]:
    """The attributes of a lazy module built from an `_import_structure` map: each submodule, and each name it lists."""
    found: dict[str, ModuleValue | AttributeOf] = {}
    for submodule, names in structure.items():
        if not isinstance(submodule, str) or not isinstance(names, (list, tuple, set)) or \
                not all(isinstance(n, str) for n in names):
            raise Unmodelled("an `_import_structure` entry that is not a submodule with a list of names")
        dotted = f"{package}.{submodule}"
        found[submodule.split(".")[0]] = ModuleValue(f"{package}.{submodule.split('.')[0]}")
        for name in names:
            found[name] = AttributeOf(dotted, name)
    return found


def is_lazy_replacement(stmt: ast.stmt) -> bool:
    """`sys.modules[__name__] = _LazyModule(__name__, ...)`: a package handing its names out through a lazy module."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call)):
        return False
    target = stmt.targets[0]
    return (isinstance(target, ast.Subscript) and ast.unparse(target.value) == "sys.modules"
            and ast.unparse(target.slice) == "__name__"
            and ast.unparse(stmt.value.func).split(".")[-1].endswith("LazyModule")
            and bool(stmt.value.args) and ast.unparse(stmt.value.args[0]) == "__name__")


def changed_in_place(tree: ast.AST) -> frozenset[str]:
    """The names some node of `tree` changes in place (`_MAP[k] = v`, `del _MAP[k]`, `_MAP.update(...)`): every name
    that `is_read_only_use` would call changed, found in one walk without a map of parents."""
    return frozenset(name for name in map(changed_name, ast.walk(tree)) if name is not None)


def changed_name(node: ast.AST) -> str | None:
    """The name this one node changes in place (`_MAP[k] = v`, `del _MAP[k]`, `_MAP.update`), else None."""
    if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.value, ast.Name) \
            and isinstance(node.value.ctx, ast.Load):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) or \
                isinstance(node, ast.Attribute) and node.attr not in _READ_ONLY_METHODS:
            return node.value.id
    return None


def is_read_only_use(node: ast.AST, name: str, parents: dict) -> bool:
    """`name` (a Name node) is read, not changed: no subscript store or delete, no mutating method call, on it or
    on an item read from it (`_MAP["norm"].remove("rms_norm")` changes the map's list)."""
    parent = parents.get(id(node))
    while isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Load):
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, (ast.Store, ast.Del)):
        return False
    if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr not in _READ_ONLY_METHODS:
        return False
    return True
