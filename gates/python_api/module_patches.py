"""Statements that set or delete names of another module of the repository.

G5 reads each module's names from that module's own code. A module that runs
`_api.attention_decode = _decode`, `setattr(_api, "attention_decode", _decode)` or
`del _api.attention_decode` on a module of the repository it imported changes that module's names
where they are not defined: neither module's code shows what callers get once both are imported.
`patches_of` finds such statements anywhere in a module (at module level, in a function it calls,
in a class body), on names the module binds to a repository module by `import` or `from … import`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable

from gates.python_api.scope_binder import absolute_import


@dataclass(frozen=True)
class ModulePatch:
    line: int
    statement: str  # the assignment, deletion or call, as written (shortened)
    target: str  # the dotted module whose name it sets or deletes


def patches_of(source: str, module: str, is_package: bool, is_repository_module: Callable[[str], bool]
               ) -> list[ModulePatch]:
    """The statements of `source` (module `module`) that set or delete a name of a repository module bound to a
    name by an import; `is_repository_module(dotted)` says whether a dotted name is a module of the repository.
    Source that does not parse gives none (G5 reports it as unreadable elsewhere)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    modules = _imported_modules(tree, module, is_package, is_repository_module)
    if not modules:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            written = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr") \
                and node.args:
            written = node.args[0]
        else:
            continue
        root, dotted = written, []
        while isinstance(root, ast.Attribute):
            dotted.insert(0, root.attr)
            root = root.value
        if isinstance(root, ast.Name) and root.id in modules:
            target = ".".join([modules[root.id], *dotted])
            while target and not is_repository_module(target):
                target = target.rpartition(".")[0]  # `kernels.api.f.__doc__ = …` sets an attribute of kernels.api.f
            found.append(ModulePatch(node.lineno, ast.unparse(node)[:80], target or modules[root.id]))
    return sorted(found, key=lambda patch: patch.line)


def _imported_modules(tree: ast.Module, module: str, is_package: bool,
                      is_repository_module: Callable[[str], bool]) -> dict[str, str]:
    """Name -> the repository module an import binds it to, anywhere in the module (`import kernels.api as api`,
    `import kernels` (binds `kernels`), `from kernels import api`, `from . import api`)."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    if is_repository_module(alias.name):
                        bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    if is_repository_module(top):
                        bound[top] = top
        elif isinstance(node, ast.ImportFrom):
            try:
                source = absolute_import(node, module, is_package)
            except ValueError:
                continue
            for alias in node.names:
                dotted = f"{source}.{alias.name}" if source else alias.name
                if alias.name != "*" and is_repository_module(dotted):
                    bound[alias.asname or alias.name] = dotted
    return bound


def imports_module(source: str, module: str, is_package: bool, imported: str) -> bool:
    """Whether `source` (module `module`) imports the module `imported` anywhere (`import imported`,
    `import imported.x`, `from imported import y`, `from parent import last_part`, relative forms included)."""
    if imported.rpartition(".")[2] not in source:
        return False
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    parent, _, last = imported.rpartition(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(alias.name == imported or alias.name.startswith(imported + ".") for alias in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            try:
                source_module = absolute_import(node, module, is_package)
            except ValueError:
                continue
            if source_module == imported or source_module.startswith(imported + "."):
                return True
            if source_module == parent and any(alias.name == last for alias in node.names):
                return True
    return False
