"""What a parameter's default stands for when it names constants: `num_splits=_SPLITS` with `_SPLITS = 1` is 1.

Python evaluates a default once, when the `def` runs. Every name or attribute chain in a
default (`_SPLITS`, `consts.SPLITS`, `Tuning.SPLITS`, `_SPLITS + 0`) that names a
constant is replaced by the constant's value, as source text: `_SPLITS + 0` with
`_SPLITS = 4` stands for `4 + 0`. The module's own constants are read as they are
bound when the `def` runs (`gates.python_api.scope_binder`); a name that comes from an import is
kept as a reference and followed later through the repository's modules
(`ModuleScope.constant_value`), once every module can be read. A default whose names
are not constants (`None`, `torch.float32`, a function) has no value and is compared
by its text. The value of a constant whose value is not a literal is its text
(`_SPLITS = _tuned()` stands for `_tuned()`: what `_tuned` returns is not followed).
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable

_MARK = "\x00"
_LONGEST = 400
LOCAL = "="  # a reference already resolved: ("=", value)

ReadChain = Callable[[ast.expr], "str | tuple[str, ...] | None"]
"""`read_chain(node)` for a name or attribute chain: the value of the constant this module binds it
to, (where it comes from, attributes...) for an import, or None when it names no constant."""


def read_default(expr: ast.expr, read_chain: ReadChain) -> tuple[str | None, tuple[tuple[str, ...], ...]]:
    """The default's value as a template with one placeholder per import it names, and those references
    (each `(the chain's text, import source, attributes...)`); (None, ()) when it names no constant.

    A constant's value is read the same way, so `_SPLITS = tuning.NUM_SPLITS` follows the import too.
    """
    if not any(isinstance(node, (ast.Name, ast.Attribute)) for node in ast.walk(expr)):
        return None, ()  # a literal (`None`, `1e-6`, `"tanh"`): it names no constant
    references: list[tuple[str, ...]] = []
    substituted = False

    class _Chains(ast.NodeTransformer):
        depth = 0

        def visit_Name(self, node: ast.Name) -> ast.expr:
            return self.chain(node)

        def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
            return self.chain(node)

        def chain(self, node: ast.expr) -> ast.expr:
            nonlocal substituted
            found = read_chain(node)
            if found is None:
                return self.generic_visit(node)
            if isinstance(found, tuple):
                references.append((ast.unparse(node), *found))
                return ast.Name(id=f"{_MARK}{len(references) - 1}{_MARK}")
            substituted = True
            try:
                value = ast.parse(found, mode="eval").body
            except SyntaxError:  # a value described in words (`for _S in ...:`)
                return ast.Name(id=found if node is root else f"({found})")
            if self.depth >= 8:
                return value
            self.depth += 1
            value = self.visit(value)  # the imports a constant's value names
            self.depth -= 1
            return value

    root = _copy(expr)
    template = ast.unparse(_Chains().visit(root))
    return (template, tuple(references)) if substituted or references else (None, ())


def fill(template: str | None, references: tuple[tuple[str, ...], ...], default: str,
         resolve: Callable[[tuple[str, ...]], str | None] | None = None) -> str | None:
    """The value of `default` (its source text): each import placeholder of `template` replaced by the value of
    the constant it names (`resolve` follows the import; one that names no constant keeps its text); None when
    that leaves the default's own text (it names no constant)."""
    if template is None:
        return None
    values = [resolve(tuple(reference)) if resolve is not None else None for _, *reference in references]
    whole = template == f"{_MARK}0{_MARK}"
    for index, (value, (text, *_)) in enumerate(zip(values, references)):
        shown = text if value is None else value if whole else f"({value})"
        template = template.replace(f"{_MARK}{index}{_MARK}", shown)
    return None if template == default else bounded(template)


def bounded(text: str) -> str:
    """A value as long as the project's widest line, else its length and digest (constants built from
    constants, `_B = _A + _A`, would double at every step)."""
    if len(text) <= _LONGEST:
        return text
    return f"<{len(text)} characters, sha256 {hashlib.sha256(text.encode()).hexdigest()[:16]}>"


def read_chain(scope, expr: ast.expr, local: dict | None = None) -> str | tuple[str, ...] | None:
    """A name or attribute chain as `scope` (a `gates.python_api.module_scope.ModuleScope`) binds it now: the value of a
    constant (`local`: a class body's own names, looked up first; a public class attribute), where an import
    comes from, or None. A constant that a function rebinds with `global` makes the scope unreadable."""
    attributes, node = [], expr
    while isinstance(node, ast.Attribute):
        attributes.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    entry = (local or {}).get(node.id) or scope.names.get(node.id)
    if entry is None:
        return None  # a builtin, or unbound
    if entry.kind == "constant" and not attributes:
        if node.id in scope.rebound and not (local and node.id in local):
            scope.refuse(f"`global {node.id}` in a function (it can change the value of a default that names it)",
                         scope.rebound[node.id])
        return entry.value
    if entry.kind == "class" and len(attributes) == 1:
        member = scope.members.get(f"{node.id}.{attributes[0]}")
        return member.value if member is not None and member.kind == "constant" else None
    if entry.source and (entry.kind == "import" or entry.kind == "module-import" and attributes):
        return (entry.source, *attributes)
    return None


def has_imports(references: tuple[tuple[str, ...], ...]) -> bool:
    return any(reference[1] != LOCAL for reference in references)


def _copy(expr: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(expr), mode="eval").body
