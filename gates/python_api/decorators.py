"""Which decorators keep the signature of what they decorate.

A decorator can hand callers a different function: a wrapper with its own
parameters, a `functools.partial`, a property. The surface reader sees through a
decorator only when it is known to keep the signature:

- `functools.lru_cache` / `functools.cache` (which add `cache_clear` and `cache_info`: dropping one is
  a change, adding one is not), `torch.no_grad` / `torch.inference_mode`
  / `torch.enable_grad`, TorchDynamo's opt-outs (`torch.compiler.disable`, `torch._dynamo.disable`,
  `torch._disable_dynamo`), `typing.final`, `functools.total_ordering` and
  `dataclasses.dataclass` on classes (modelled apart);
- `triton.heuristics({...})`, modelled: the parameters named by its literal dict are computed by
  the decorator, so they count as having a default (`scope_binder.SUPPLIED_BY_HEURISTICS`);
- a decorator defined in the repository that returns a `functools.wraps(fn)` wrapper
  taking exactly `(*args, **kwargs)` whose body hands them, untouched, to
  `return fn(*args, **kwargs)` (or `result = fn(*args, **kwargs)`) (`is_passthrough`).

`staticmethod`, `classmethod`, `property` and `functools.cached_property` keep the
parameters but change how a method is called, `abc.abstractmethod` makes its class
abstract, and a `typing.overload` stub left as the last definition cannot be called;
they stay in an entry's decorators, so adding or dropping one is a change. (Overload
stubs followed by the implementation are replaced by it, as at run time.) Every other
decorator is opaque: adding, dropping or redefining it is a change of the entry.

Decorators are named by qualified dotted text (`functools.lru_cache`,
`torch.no_grad()`, `kernels.tracing:traced` for a repository definition).
"""

from __future__ import annotations

import ast

TRANSPARENT = frozenset({
    "functools.lru_cache", "functools.cache", "torch.no_grad", "torch.inference_mode", "torch.enable_grad",
    "torch.autograd.no_grad", "typing.final", "typing_extensions.final", "typing.no_type_check",
    "functools.total_ordering", "dataclasses.dataclass", "triton.heuristics",
    # TorchDynamo's opt-outs hand back a `functools.wraps` wrapper of `(*args, **kwargs)` (`recursive=False` too)
    "torch.compiler.disable", "torch._dynamo.disable", "torch._disable_dynamo",
})
ADDITIVE = frozenset({"functools.lru_cache", "functools.cache"})  # keep the signature, add attributes callers use
BINDING = frozenset({"staticmethod", "classmethod", "property", "functools.cached_property", "abc.abstractmethod",
                     "typing.overload", "typing_extensions.overload"})


def callee(decorator: str) -> str:
    """`functools.lru_cache(maxsize=8)` -> `functools.lru_cache`."""
    return decorator.split("(", 1)[0]


def is_known_transparent(decorator: str) -> bool:
    return callee(decorator) in TRANSPARENT


def is_passthrough(node: ast.FunctionDef | ast.AsyncFunctionDef, qualify) -> bool:
    """`node` is `def deco(fn)` returning a `@functools.wraps(fn)` wrapper `(*args, **kwargs)` that hands them,
    untouched, to `return fn(*args, **kwargs)`.

    `qualify(expr)` names a decorator expression as this module's imports bind it.
    """
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or len(args.posonlyargs) + len(args.args) != 1:
        return False
    wrapped = (args.posonlyargs + args.args)[0].arg
    body = node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body
    if len(body) != 2 or not isinstance(body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    wrapper, returned = body
    if not (isinstance(returned, ast.Return) and isinstance(returned.value, ast.Name)
            and returned.value.id == wrapper.name):
        return False
    inner = wrapper.args
    if inner.posonlyargs or inner.args or inner.kwonlyargs or not inner.vararg or not inner.kwarg:
        return False
    decorated_by_wraps = len(wrapper.decorator_list) == 1 and _is_wraps_of(wrapper.decorator_list[0], wrapped, qualify)
    varargs, varkw = inner.vararg.arg, inner.kwarg.arg
    forwarding = [stmt for stmt in wrapper.body if isinstance(stmt, (ast.Return, ast.Assign))
                  and isinstance(stmt.value, ast.Call) and _forwards(stmt.value, wrapped, varargs, varkw)]
    uses = [n for n in ast.walk(wrapper) if isinstance(n, ast.Name) and n.id in (varargs, varkw)]
    return decorated_by_wraps and len(forwarding) == 1 and len(uses) == 2  # the arguments go to the call untouched


_NOT_SETTABLE = frozenset({"__defaults__", "__kwdefaults__", "__code__", "__signature__", "__wrapped__",
                           "__text_signature__", "__class__", "__dict__", "__call__"})


# The dunder attributes a documenting decorator may set; any other (`cls.__init__ = ...`, `__call__`, `__new__`) can
# change how what it decorates is called
_DOCUMENTING = frozenset({"__doc__", "__module__", "__qualname__", "__name__", "__annotations__"})
DIRECT, FACTORY = "direct", "factory"


def returns_argument(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """How `node` hands back what it decorates: `DIRECT` for `def d(fn)` that sets only non-signature attributes of
    `fn` (`fn.__doc__ = ...`) and local names, then `return fn`, used as `@d`; `FACTORY` for a function whose body
    defines such a decorator and returns it (`def add_docs(*text): def d(fn): ...; return d`), used as `@add_docs(...)`;
    None otherwise. Used the other way (`@add_docs` without a call), either hands back something else."""
    if isinstance(node, ast.AsyncFunctionDef) or node.decorator_list:
        return None
    body = node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body
    if len(body) == 2 and isinstance(body[0], ast.FunctionDef) and isinstance(body[1], ast.Return) and \
            isinstance(body[1].value, ast.Name) and body[1].value.id == body[0].name:
        return FACTORY if _returns_its_argument(body[0]) else None
    return DIRECT if _returns_its_argument(node) else None


def _returns_its_argument(node: ast.FunctionDef) -> bool:
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or len(args.posonlyargs) + len(args.args) != 1 or \
            node.decorator_list:
        return False
    wrapped = (args.posonlyargs + args.args)[0].arg
    body = node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body
    if not body or not (isinstance(body[-1], ast.Return) and isinstance(body[-1].value, ast.Name)
                        and body[-1].value.id == wrapped):
        return False
    return all(_only_documents(stmt, wrapped) for stmt in body[:-1])


def _only_documents(stmt: ast.stmt, wrapped: str) -> bool:
    """A statement that reads the decorated function's attributes and sets only its non-signature ones."""
    if isinstance(stmt, ast.If):
        return all(_only_documents(s, wrapped) for s in stmt.body + stmt.orelse) and _reads_only(stmt.test, wrapped)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
                    target.value.id == wrapped and target.attr not in _NOT_SETTABLE and \
                    not (target.attr.startswith("__") and target.attr not in _DOCUMENTING):
                continue
            if isinstance(target, ast.Name) and target.id != wrapped:
                continue
            return False
        return _reads_only(stmt.value, wrapped)
    return False


def _reads_only(expr: ast.expr, wrapped: str) -> bool:
    """`expr` names the decorated function only to read one of its attributes (`fn.__doc__`, `fn.__qualname__`)."""
    attribute_values = {id(n.value) for n in ast.walk(expr) if isinstance(n, ast.Attribute)
                        and n.attr not in _NOT_SETTABLE}
    return all(id(n) in attribute_values for n in ast.walk(expr) if isinstance(n, ast.Name) and n.id == wrapped)


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _is_wraps_of(decorator: ast.expr, wrapped: str, qualify) -> bool:
    return (isinstance(decorator, ast.Call) and qualify(decorator.func) == "functools.wraps"
            and len(decorator.args) == 1 and not decorator.keywords
            and isinstance(decorator.args[0], ast.Name) and decorator.args[0].id == wrapped)


def _forwards(call: ast.Call, wrapped: str, varargs: str, varkw: str) -> bool:
    return (isinstance(call.func, ast.Name) and call.func.id == wrapped
            and len(call.args) == 1 and isinstance(call.args[0], ast.Starred)
            and isinstance(call.args[0].value, ast.Name) and call.args[0].value.id == varargs
            and len(call.keywords) == 1 and call.keywords[0].arg is None
            and isinstance(call.keywords[0].value, ast.Name) and call.keywords[0].value.id == varkw)
