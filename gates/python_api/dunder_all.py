"""How a module's top-level statements change `__all__`, applied the way Python would.

`__all__ = [...]`, `__all__ += [...]`, `__all__ = __all__ + [...]`, `list(_LAZY)` (and
`sorted`, `tuple`, `[*_LAZY]`, `list(_LAZY.keys())`) of a module-level literal, `.append`,
`.extend`, `.insert`, `.remove`, `.pop`, `.clear`, `.sort()`, `.reverse()`, slice
assignment and `del __all__[i]` with literal arguments are modelled; anything else that
touches `__all__` (a computed value, an alias, a use in an expression) makes the
module's surface unreadable. `AllChanges` is mixed into the statement runner of
`gates.python_api.scope_binder`, which provides `scope` (with `exports` and `refuse`).
"""

from __future__ import annotations

import ast

ALL = "__all__"


def literal_names(value: ast.expr) -> list[str] | None:
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


_READING_BUILTINS = frozenset({"len", "sorted", "set", "list", "tuple", "frozenset"})


def _mentions_all(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id == ALL for n in ast.walk(node))


_INERT_NODES = (ast.Assert, ast.Compare, ast.cmpop, ast.BoolOp, ast.boolop, ast.UnaryOp, ast.Not, ast.Constant,
                ast.Tuple, ast.List, ast.Set, ast.expr_context)


class AllChanges:
    """The `__all__` part of the statement runner."""

    def is_all(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == ALL

    def all_value(self, value: ast.expr) -> list[str] | None:
        """`[...]`, `(...)`, `__all__ + [...]`, `[...] + __all__` as a list of names; None when computed otherwise."""
        names = literal_names(value)
        if names is not None:
            return names
        if self.is_all(value):
            return list(self.scope.exports) if self.scope.exports is not None else None
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            left, right = self.all_value(value.left), self.all_value(value.right)
            return left + right if left is not None and right is not None else None
        return self.names_of_literal(value)

    def names_of_literal(self, value: ast.expr) -> list[str] | None:
        """The names a module literal lists (`list(_LAZY)`); None here, the statement runner knows its literals."""
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
        arities = arity if isinstance(arity, tuple) else (arity,)
        if args is None or call.keywords or arity is None or len(args) not in arities:
            self.scope.refuse(f"`{ast.unparse(call)}` (a change of `__all__` the checker does not model)", stmt.lineno)
            return
        if method == "extend" and isinstance(args[0], str):
            self.scope.refuse(f"`{ast.unparse(call)}` (extends `__all__` by the letters of a string)", stmt.lineno)
            return
        self.change_all(lambda names: getattr(names, method)(*args), stmt)

    def asserts_on_all(self, stmt: ast.stmt) -> bool:
        """`assert __all__ == sorted(__all__)` (FlagGems keeps its lists sorted): an `assert` that only reads
        `__all__`, compared or passed alone to `len`, `sorted`, `set`, `list`, `tuple` or `frozenset` (names the
        module does not bind), and changes nothing."""
        if not isinstance(stmt, ast.Assert):
            return False
        parents = {id(child): parent for parent in ast.walk(stmt) for child in ast.iter_child_nodes(parent)}
        for node in ast.walk(stmt):
            if isinstance(node, _INERT_NODES):
                continue  # the assert, a comparison, `and`/`or`/`not`, a literal, a literal's tuple, list or set
            if isinstance(node, ast.Call):
                if node.keywords or not isinstance(node.func, ast.Name) or node.func.id not in _READING_BUILTINS \
                        or node.func.id in self.scope.names:
                    return False  # a call of anything else can run the module's code (an `__eq__` that edits it)
                continue
            if not isinstance(node, ast.Name):
                return False  # an attribute, a subscript, a lambda ...: only `__all__` and literals are compared
            parent = parents.get(id(node))
            if node.id == ALL and isinstance(parent, ast.Compare):
                continue
            if node.id == ALL and isinstance(parent, ast.Call) and parent.args == [node]:
                continue
            if isinstance(parent, ast.Call) and parent.func is node:
                continue  # the reading builtin itself
            return False
        return True

    def check_all_mention(self, node: ast.AST, line: int) -> None:
        if _mentions_all(node):
            self.scope.refuse(f"`{ast.unparse(node).splitlines()[0]}` (uses `__all__` in a way the checker does not "
                              "model)", getattr(node, "lineno", line))

