"""Where a module reads a name with a default: `os.environ.get(SWITCH_ENV, "0")`.

A default-route switch is often the name of an environment variable; the route a
caller gets when the variable is unset is the default of the call that reads it,
which lives in a function body. `name_reads(tree)` finds the calls that read a
module-level name with a default, in every function, method and at module level:

    <mapping>.get(NAME, default)        os.getenv(NAME, default)       getenv(NAME, default)
    <mapping>.setdefault(NAME, default) <mapping>.pop(NAME, default)

(`default=` as a keyword too; `.get(NAME)` and `getenv(NAME)` read with the default
`None`). Only these calls are read: what a body does with the value afterwards
(`value == "1" or True`) is logic the surface reader does not follow.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

_READERS = {"get", "getenv", "setdefault", "pop"}
_IMPLICIT_NONE = {"get", "getenv"}  # `.pop(NAME)` / `.setdefault(NAME)` read no default: not modelled
MODULE_LEVEL = "<module>"


@dataclass(frozen=True)
class NameRead:
    name: str  # the module-level name passed as the key
    where: str  # the function that reads it (`Class.method`), or MODULE_LEVEL
    line: int
    default: ast.expr | None  # None: the implicit `None` of `.get(NAME)`


def _reader(call: ast.Call) -> str | None:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name if name in _READERS else None


class _Reads(ast.NodeVisitor):
    def __init__(self):
        self.where: list[str] = []
        self.found: list[NameRead] = []

    def visit_FunctionDef(self, node) -> None:
        self.where.append(node.name)
        self.generic_visit(node)
        self.where.pop()

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        read = _read(node)
        if read is not None:
            self.found.append(NameRead(node.args[0].id, ".".join(self.where) or MODULE_LEVEL, node.lineno, read[1]))
        self.generic_visit(node)


def _read(call: ast.Call) -> tuple[str, ast.expr | None] | None:
    """(the reader, the default) of a call that reads a name with a default; None for any other call."""
    reader = _reader(call)
    if reader is not None and call.args and isinstance(call.args[0], ast.Name):
        keyword = next((k.value for k in call.keywords if k.arg == "default"), None)
        default = call.args[1] if len(call.args) > 1 else keyword
        if default is not None or reader in _IMPLICIT_NONE:
            return reader, default
    return None


def reads_a_name(node: ast.AST) -> bool:
    """This one node is a call that `name_reads` lists."""
    return isinstance(node, ast.Call) and _read(node) is not None


def name_reads(tree: ast.Module) -> list[NameRead]:
    """Every call in `tree` that reads a name with a default, in source order."""
    reads = _Reads()
    reads.visit(tree)
    return reads.found
