"""What a parameter's default stands for when it names constants: `num_splits=_SPLITS` with `_SPLITS = 1` is 1.

Python evaluates a default once, when the `def` runs. Every name or attribute chain in a
default (`_SPLITS`, `consts.SPLITS`, `Tuning.SPLITS`, `_SPLITS + 0`) that names a
constant is replaced by the constant's value, as source text: `_SPLITS + 0` with
`_SPLITS = 4` stands for `(4) + 0`. The module's own constants are read as they are
bound when the `def` runs (`gates.scope_binder`); a name that comes from an import is
kept as a reference and followed later through the repository's modules
(`ModuleScope.constant_value`), once every module can be read. A default whose names
are not constants (`None`, `torch.float32`, a function) has no value and is compared
by its text. The value of a constant whose value is not a literal is its text
(`_SPLITS = _tuned()` stands for `_tuned()`: what `_tuned` returns is not followed).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

_MARK = "\x00"
LOCAL = "="  # a reference already resolved: ("=", value)

ReadChain = Callable[[ast.expr], "str | tuple[str, ...] | None"]
"""`read_chain(node)` for a name or attribute chain: the value of the constant this module binds it
to, (where it comes from, attributes...) for an import, or None when it names no constant."""


def read_default(expr: ast.expr, read_chain: ReadChain) -> tuple[str | None, tuple[tuple[str, ...], ...]]:
    """The default's value as a template with one placeholder per constant it names, and the references
    (`(LOCAL, value)` or `(import source, attributes...)`, each after the chain's own text); (None, ()) when
    it names none."""
    references: list[tuple[str, ...]] = []

    class _Chains(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            return self.chain(node)

        def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
            return self.chain(node)

        def chain(self, node: ast.expr) -> ast.expr:
            found = read_chain(node)
            if found is None:
                return self.generic_visit(node)
            reference = (LOCAL, found) if isinstance(found, str) else found
            references.append((ast.unparse(node), *reference))
            return ast.Name(id=f"{_MARK}{len(references) - 1}{_MARK}")

    template = ast.unparse(_Chains().visit(_copy(expr)))
    return (template, tuple(references)) if references else (None, ())


def fill(template: str | None, references: tuple[tuple[str, ...], ...],
         resolve: Callable[[tuple[str, ...]], str | None] | None = None) -> str | None:
    """The default's value: each placeholder replaced by its constant's value (`resolve` follows an import;
    without it only `LOCAL` references are filled); None when no reference names a constant."""
    values = []
    for text, *reference in references:
        if reference[0] == LOCAL:
            values.append(reference[1])
        else:
            values.append(resolve(tuple(reference)) if resolve is not None else None)
    if template is None or all(value is None for value in values):
        return None
    whole = template == f"{_MARK}0{_MARK}"
    for index, (value, (text, *_)) in enumerate(zip(values, references)):
        shown = text if value is None else value if whole else f"({value})"
        template = template.replace(f"{_MARK}{index}{_MARK}", shown)
    return template


def has_imports(references: tuple[tuple[str, ...], ...]) -> bool:
    return any(reference[1] != LOCAL for reference in references)


def _copy(expr: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(expr), mode="eval").body
