"""Constructs that can remove, rebind or hide a module's public names at run time.

`ast` reads what a module's statements bind; it cannot follow a module that edits its
own namespace while it runs. `dynamic_constructs(tree)` lists each such construct
with its line, anywhere in the module (a function that does it may be called at
import time), so that the surface reader refuses the module instead of trusting a
surface that may not be the real one:

- `globals()`, `vars()` / `locals()` at module level, `vars(name)` of a module-level name;
- `exec(...)`, `eval(...)`;
- `sys.modules` (and `from sys import modules`), `import_module(__name__)`, `__import__(__name__)`;
- `setattr(...)` / `delattr(...)` on a module-level definition or an imported module;
- assignment to or deletion of an attribute of a module-level function, class or
  imported module (`api.attention_decode = ...`, `del LayerWorkspace.partials`);
- the signature attributes of any function (`__defaults__`, `__kwdefaults__`,
  `__code__`, `__signature__`, `__wrapped__`), and the `__dict__` of a module-level definition;
- a module-level `def __getattr__` or `def __dir__` (module hooks);
- `__all__` used inside a function or class body (an `@export` decorator that appends to it).

A `global NAME` statement in a function is returned separately (`rebinds_through_global`):
whether it matters depends on whether NAME is public, which the surface reader decides.
"""

from __future__ import annotations

import ast

SIGNATURE_ATTRIBUTES = frozenset(
    {"__defaults__", "__kwdefaults__", "__code__", "__signature__", "__wrapped__", "__text_signature__"})
MODULE_HOOKS = frozenset({"__getattr__", "__dir__"})
_IMPORTERS = frozenset({"import_module", "__import__"})


def _definitions(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Names bound by def, class or import anywhere in the module; the names `sys` is imported as."""
    defined: set[str] = set()
    sys_names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    defined.add(alias.asname or alias.name.split(".")[0])
                if isinstance(node, ast.Import) and alias.name == "sys":
                    sys_names.add(alias.asname or "sys")
    return defined, sys_names


class _Finder(ast.NodeVisitor):
    def __init__(self, defined: set[str], sys_names: set[str]):
        self.defined = defined
        self.sys_names = sys_names
        self.found: list[tuple[str, int]] = []
        self.globals: dict[str, int] = {}
        self.depth = 0  # 0: module level; >0: inside a function or class body

    def note(self, what: str, node: ast.AST) -> None:
        self.found.append((what, node.lineno))

    def _nested(self, node) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    def visit_FunctionDef(self, node) -> None:
        if self.depth == 0 and node.name in MODULE_HOOKS:
            self.note(f"a module-level `def {node.name}` hook", node)
        for deco in node.decorator_list:
            self.visit(deco)
        self.depth += 1
        for child in [node.args, *node.body]:
            self.visit(child)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node) -> None:
        self._nested(node)

    def visit_ClassDef(self, node) -> None:
        for deco in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(deco)
        self.depth += 1
        for child in node.body:
            self.visit(child)
        self.depth -= 1

    def visit_Global(self, node) -> None:
        for name in node.names:
            self.globals.setdefault(name, node.lineno)

    def visit_Name(self, node) -> None:
        if node.id == "__all__" and self.depth > 0:
            self.note("`__all__` used inside a function or class body", node)

    def visit_ImportFrom(self, node) -> None:
        if node.module == "sys" and any(alias.name == "modules" for alias in node.names):
            self.note("`from sys import modules`", node)

    def visit_Attribute(self, node) -> None:
        text = ast.unparse(node)
        if node.attr == "modules" and isinstance(node.value, ast.Name) and node.value.id in self.sys_names:
            self.note("`sys.modules`", node)
        elif node.attr in SIGNATURE_ATTRIBUTES:
            self.note(f"`{text}`", node)
        elif isinstance(node.value, ast.Name) and node.value.id in self.defined:
            if isinstance(node.ctx, ast.Store):
                self.note(f"assignment to `{text}`", node)
            elif isinstance(node.ctx, ast.Del):
                self.note(f"`del {text}`", node)
            elif node.attr == "__dict__":
                self.note(f"`{text}`", node)
        self.generic_visit(node)

    def visit_Call(self, node) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        first = node.args[0] if node.args else None
        if isinstance(func, ast.Name) and name in ("exec", "eval", "globals"):
            self.note(f"`{name}()`", node)
        elif isinstance(func, ast.Name) and name in ("vars", "locals") and not node.args and self.depth == 0:
            self.note(f"`{name}()` at module level", node)
        elif isinstance(func, ast.Name) and name == "vars" and self._is_module_level_object(first):
            self.note(f"`{ast.unparse(node)}`", node)
        elif isinstance(func, ast.Name) and name in ("setattr", "delattr") and self._is_module_level_object(first):
            self.note(f"`{name}({ast.unparse(first)}, ...)`", node)
        elif name in _IMPORTERS and any(isinstance(a, ast.Name) and a.id == "__name__" for a in node.args):
            self.note(f"`{ast.unparse(node)}`", node)
        self.generic_visit(node)

    def _is_module_level_object(self, node: ast.expr | None) -> bool:
        if node is None:
            return False
        if isinstance(node, ast.Name):
            return node.id in self.defined
        text = ast.unparse(node)
        return "modules" in text or any(name in text for name in _IMPORTERS)


def dynamic_constructs(tree: ast.Module) -> tuple[list[tuple[str, int]], dict[str, int]]:
    """(the constructs the surface cannot be read past, each with its line; `global NAME` -> first line)."""
    finder = _Finder(*_definitions(tree))
    finder.visit(tree)
    return sorted(finder.found, key=lambda item: item[1]), finder.globals
