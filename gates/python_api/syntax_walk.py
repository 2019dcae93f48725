"""Walking a module's syntax tree faster than `ast.walk` and `ast.NodeVisitor` do.

A history run reads thousands of module texts, each walked by several whole-module passes; `ast.walk`'s
generator and `ast.iter_fields` cost more than the passes' own work. `nodes(tree)` lists every node once (kept on
the tree, which the checker only reads, so each later pass over the same tree reuses the list), and `FastVisitor`
dispatches and descends like `ast.NodeVisitor` without its per-node string building and generators.
"""

from __future__ import annotations

import ast

_NODES = "_design_gates_nodes"


def nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of `tree`, `tree` first: the nodes `ast.walk(tree)` yields, in another order (depth first)."""
    found = getattr(tree, _NODES, None)
    if found is None:
        found, stack = [], [tree]
        while stack:
            node = stack.pop()
            found.append(node)
            for name in node._fields:
                value = getattr(node, name, None)
                if value.__class__ is list:
                    stack.extend(item for item in reversed(value) if isinstance(item, ast.AST))
                elif isinstance(value, ast.AST):
                    stack.append(value)
        setattr(tree, _NODES, found)
    return found


class FastVisitor(ast.NodeVisitor):
    """`ast.NodeVisitor` with its method lookup kept per node class and its descent over `_fields` directly."""

    def visit(self, node: ast.AST):
        methods = self.__dict__.get("_methods")
        if methods is None:
            methods = self.__dict__["_methods"] = {}
        method = methods.get(node.__class__)
        if method is None:
            method = methods[node.__class__] = getattr(self, "visit_" + node.__class__.__name__, self.generic_visit)
        return method(node)

    def generic_visit(self, node: ast.AST) -> None:
        for name in node._fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)
