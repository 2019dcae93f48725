"""The public API of a Python module, read from source with `ast`, and how it changed.

The surface of a module is its public names (`__all__` when the module defines it as
a literal list or tuple; otherwise the top-level functions, classes and assignments
whose names do not start with `_`, plus the names a package `__init__.py` imports),
every public function's and method's parameters (name, kind, default as source
text), the constructor of a class (`__init__`, or the fields of a `@dataclass`),
and the values of the module-level constants a record names as its route switch.

`diff_surfaces(old, new)` lists what breaks a caller: a removed public name, a
removed, renamed or reordered parameter, a parameter that became keyword-only or
required, a changed default, a new parameter without a default. Additions are fine.
A changed switch constant is reported as a route change, for the caller to judge.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

POSITIONAL_ONLY = "positional-only"
POSITIONAL = "positional"
KEYWORD_ONLY = "keyword-only"
VAR_POSITIONAL = "*args"
VAR_KEYWORD = "**kwargs"
_PUBLIC_DUNDERS = ("__init__", "__call__")


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
    kind: str  # "function" | "class" | "constant" | "import" | "module-import"
    line: int
    params: tuple[Parameter, ...] | None = None  # functions and methods ("Class.__init__")
    value: str | None = None  # switch constants: the value's source text


@dataclass
class ModuleSurface:
    module: str
    path: str
    entries: dict[str, Entry] = field(default_factory=dict)  # "name" and "Class.method"
    exports: list[str] | None = None  # __all__ when literal
    error: str | None = None  # why the source could not be read


@dataclass(frozen=True)
class ApiChange:
    name: str
    line: int
    message: str
    kind: str = "break"  # "break" | "route"


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


def module_surface(source: str, path: str, switch_names=()) -> ModuleSurface:
    """Read the public surface of one module's source text.

    `switch_names` are module-level constants to include with their values (the
    default-route switch a record declares), public or not.
    """
    surface = ModuleSurface(module_name(path), path)
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError) as exc:
        surface.error = f"does not parse: {exc}"
        return surface
    is_package = path.endswith("__init__.py")
    defined: dict[str, Entry] = {}
    extra: dict[str, Entry] = {}
    for stmt in _top_level(tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined[stmt.name] = Entry(stmt.name, "function", stmt.lineno, _parameters(stmt.args))
        elif isinstance(stmt, ast.ClassDef):
            class_entries = _class_entries(stmt)
            defined[stmt.name] = class_entries[0]
            extra.update({e.name: e for e in class_entries[1:]})
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    if target.id == "__all__" and stmt.value is not None:
                        surface.exports = _literal_names(stmt.value)
                    value = ast.unparse(stmt.value) if stmt.value is not None else None
                    defined[target.id] = Entry(target.id, "constant", stmt.lineno, value=value)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
                continue
            kind = "import" if isinstance(stmt, ast.ImportFrom) else "module-import"
            for alias in stmt.names:
                if alias.name != "*":
                    name = alias.asname or alias.name.split(".")[0]
                    defined[name] = Entry(name, kind, stmt.lineno)
    if surface.exports is not None:
        public = list(dict.fromkeys(surface.exports))
    else:
        public = [
            name
            for name, entry in defined.items()
            if not name.startswith("_")
            and entry.kind != "module-import"
            and (entry.kind != "import" or is_package)
        ]
    for name in public:
        entry = defined.get(name, Entry(name, "import", 1))
        surface.entries[name] = Entry(entry.name, entry.kind, entry.line, entry.params)
        if entry.kind == "class":
            surface.entries.update({k: v for k, v in extra.items() if k.startswith(name + ".")})
    for name in switch_names:
        entry = defined.get(name)
        value = entry.value if entry is not None else None
        line = entry.line if entry is not None else 1
        surface.entries[f"switch:{name}"] = Entry(name, "constant", line, value=value)
    return surface


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
        elif param.default is not None and now.default is not None and param.default != now.default:
            changes.append(
                ApiChange(name, line, f"{name}: default of '{param.name}' changed from {param.default} to {now.default}")
            )
    old_names = {p.name for p in old}
    for param in new:
        if param.name not in old_names and param.required:
            changes.append(ApiChange(name, line, f"{name}: new parameter '{param.name}' has no default (callers break)"))
    return changes


def diff_surfaces(old: ModuleSurface, new: ModuleSurface | None) -> list[ApiChange]:
    """What a caller of `old` would find broken in `new` (None: the module is gone)."""
    if old.error:
        return []
    if new is None:
        return [
            ApiChange(name, 1, f"public name '{old.module}.{name}' removed with its module")
            for name, entry in old.entries.items()
            if not name.startswith("switch:") and "." not in name
        ]
    if new.error:
        return [ApiChange(new.module, 1, f"module {new.module} {new.error}")]
    changes = []
    for name, before in old.entries.items():
        after = new.entries.get(name)
        if name.startswith("switch:"):
            if after is not None and before.value != after.value:
                changes.append(
                    ApiChange(before.name, after.line, f"switch {old.module}.{before.name} changed from {before.value} to {after.value}", "route")
                )
            continue
        if after is None:
            changes.append(ApiChange(name, 1, f"public name '{old.module}.{name}' removed"))
            continue
        if before.params is not None and after.params is not None:
            changes.extend(_diff_params(f"{old.module}.{name}", after.line, before.params, after.params))
        elif before.params is not None and after.params is None and after.kind != "import":
            changes.append(ApiChange(name, after.line, f"'{old.module}.{name}' is no longer callable with the same parameters"))
    return changes
