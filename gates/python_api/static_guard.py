"""Constructs that can remove, rebind or hide a module's public names at run time.

`ast` reads what a module's statements bind; it cannot follow a module that edits its
own namespace while it runs. `dynamic_constructs(tree)` lists each such construct
with its line, anywhere in the module (a function that does it may be called at
import time), so that the surface reader refuses the module instead of trusting a
surface that may not be the real one:

- `globals`, `exec`, `eval`, `builtins` / `__builtins__` (named at all, called or not; but
  `import builtins` used only to call a pure builtin a kernel's name shadows, `builtins.min(a, b)`),
  `vars()` / `locals()` at module level, `vars(name)` of a module-level name;
- `sys.modules`, `sys.__dict__`, `sys` passed around (`getattr(sys, ...)`), `from sys import
  modules`; where imports look for modules (`sys.path`, `sys.meta_path`, `sys.path_hooks`,
  `site.addsitedir`) used but to test membership (`folder not in sys.path`): an import may then read a
  file of the repository under a name read as a library's; `import_module(...)` / `__import__(...)` of this module, of a module of its own top-level package, or of a computed name;
- `setattr(...)` / `delattr(...)` on a module-level definition or a module of the same
  package (or `setattr` itself passed around); on a function or class that a function defines
  in its own body (a nested `def` it patches in somewhere) it changes that call's object, not
  the module's, and is not refused;
- assignment to or deletion of an attribute of a function or class defined here, or of
  a module of the same top-level package (`api.attention_decode = ...`,
  `del LayerWorkspace.partials`, `kernels.api.f = g`); `__doc__` and `__module__` may be set, and so
  may an attribute whose name does not start with `__` on a name the module binds only by `def`
  (`_torch_compile._skip_grpo = True`, a flag on a function object, which no signature reads; the
  surface reader keeps a public one, `attention.paged = _paged`, as the function's member);
- the signature attributes of any function set or deleted (`__defaults__`, `__kwdefaults__`,
  `__code__`, `__signature__`, `__wrapped__`), `__kwdefaults__` even read (a dict changed in
  place), and the `__dict__` of a module-level definition; reading `fn.__code__` changes nothing;
- a module-level `__getattr__` or `__dir__` (module hooks) assigned or imported, and `__path__`;
  a module-level `def __getattr__(name)` is left to the surface reader, which evaluates it
  (`gates.python_api.lazy_exports`), and `def __dir__` changes only what `dir()` lists;
- `import_module(...)` / `__import__(...)` in the body of an ordinary function binds nothing of
  the module (it runs when the function is called), so it is not refused;
- `import_module(...)` at module level and in `def __getattr__` is left to the surface reader
  too, which computes the module it imports or refuses the module; so is
  `sys.modules[__name__] = _LazyModule(__name__, ...)`, a lazy package;
- `__all__` used inside a function or class body (an `@export` decorator that appends to it).

Two idioms of kernel libraries that pick an implementation per machine are read as what they are:

- a function that looks a module up and only reads its attributes (`utils = sys.modules.get('fla.utils')`,
  then only `getattr(utils, NAME, default)` or `hasattr(utils, NAME)`) changes no module's names;
- a function that gives some of the module's own names a second name, called once at module level
  (`def _register_aliases(): current = sys.modules[__name__]` / `for key in ('IS_AMD', ...):` /
  `if hasattr(current, key): setattr(current, key.lower(), getattr(current, key))`, then
  `_register_aliases()`: flash-linear-attention's `fla.utils`): the surface reader binds each alias
  (`alias_registrar`), so the function is not refused;
- `pkgutil.iter_modules(__path__)` (or `walk_packages`) lists the package's folders; it reads
  `__path__` and changes nothing, and `__path__ = extend_path(__path__, __name__)` only appends other
  installations' folders after the package's own, so only a `__path__` used otherwise is refused;
- a function that copies the names of an implementation module it imports by a computed name over
  its own (`impl = importlib.import_module(info.module_path)`, then `for name in names:
  globals()[name] = getattr(impl, name)`: liger-kernel's backend overlay): on a machine that selects
  an implementation the module's names become that module's; the surface read is the one the
  module's own statements bind, which is what it has on a machine that selects none, and each
  implementation module of the package is read as a module of its own. Any other use of `globals`
  is refused.

A `global NAME` statement in a function or class body is returned separately (the second item of
`dynamic_constructs`): whether it matters depends on whether NAME is public, which the surface reader
decides. At module level it changes nothing (names there are global already) and is not returned.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from gates.python_api.lazy_exports import changed_name, is_lazy_replacement
from gates.python_api.switch_reads import reads_a_name
from gates.python_api.syntax_walk import FastVisitor, nodes

SIGNATURE_ATTRIBUTES = frozenset(
    {"__defaults__", "__kwdefaults__", "__code__", "__signature__", "__wrapped__", "__text_signature__"})
# Read, these change nothing (`fn.__code__.co_varnames`); `__kwdefaults__` is a dict a reader can change in place.
_READ_ONLY_WHEN_LOADED = SIGNATURE_ATTRIBUTES - {"__kwdefaults__"}
MODULE_HOOKS = frozenset({"__getattr__", "__dir__"})
_IMPORTERS = frozenset({"import_module", "__import__"})


# A package's `__path__` changed otherwise than by `pkgutil.extend_path`: where each of its modules comes from is no
# longer the file the checker reads, and importing the package shows its own names, not that (no import fallback)
PATH_CHANGE = "`__path__` (it changes where the package's modules are found)"
_SETTABLE = frozenset({"__doc__", "__module__"})
# `triton.jit = lambda fn: fn` at module level: the last part of the decorators read as marking kernels
# (`api.internal_decorators`, default `triton.jit`, `triton.autotune`, `triton.heuristics`; CuTe's `cute.kernel`),
# replaced on any object while the module is imported. A function that does it (flash-linear-attention's
# `configure_fla_cache_autotune`, a caching autotuner the user switches on) is left alone
_KERNEL_DECORATORS = frozenset({"jit", "autotune", "heuristics", "kernel"})


def _names_a_kernel_decorator(call: ast.Call) -> bool:
    """`setattr(triton, "jit", ...)`: the attribute a `setattr`/`delattr` call names is a kernel decorator's."""
    name = call.args[1] if len(call.args) > 1 else None
    return isinstance(name, ast.Constant) and name.value in _KERNEL_DECORATORS


# `object.__setattr__(obj, "name", value)`: read as `setattr` (a frozen dataclass's `__post_init__` sets a field of
# its own instance this way); passed around, it is `setattr` passed around
_SLOT_SETTERS = frozenset({"__setattr__", "__delattr__"})
# `type(f).__defaults__.__set__(f, ...)`: a descriptor's setter reaches what an assignment would
_DESCRIPTOR_SETTERS = frozenset({"__set__", "__delete__"})
# `__import__("builtins").setattr(...)`, `import_module("sys").modules`: the modules the guard watches by their names
_GUARDED_MODULES = frozenset({"builtins", "sys"})
# Where imports look for modules: a module that changes them may import a file of the repository under a name read
# as a library's; only a test of membership (`if folder not in sys.path`) leaves them as they are.
_IMPORT_PATHS = frozenset({"path", "meta_path", "path_hooks", "path_importer_cache"})
_NAMED = frozenset({"globals", "exec", "eval", "__builtins__", "setattr", "delattr"})
# Fetched by name, these reach what writing them out would: setters, and objects changed in place (reading
# `__wrapped__` or `__defaults__` by `getattr(fn, "__wrapped__", fn)` changes nothing)
_LOOKED_UP_SETTERS = _SLOT_SETTERS | _DESCRIPTOR_SETTERS | {"__kwdefaults__", "__dict__"}


@dataclass(frozen=True)
class ModuleWalk:
    """What one walk over a parsed module finds, for the guard, the binder and the switch reads alike."""

    defined: frozenset[str]  # bound by def or class, or to a module of the same top-level package, anywhere
    sys_names: frozenset[str]  # the names `sys` is imported as
    mutated: frozenset[str]  # changed in place somewhere (`lazy_exports.changed_in_place`)
    reads_names: bool  # some call reads a name with a default (`switch_reads.name_reads` finds one)
    def_only: frozenset[str] = frozenset()  # bound by `def` and in no other way, anywhere
    builtins_names: frozenset[str] = frozenset()  # the names `builtins` is imported as


_WALKED_KINDS = {ast.FunctionDef: 1, ast.AsyncFunctionDef: 1, ast.ClassDef: 2, ast.Name: 3, ast.Import: 4,
                 ast.ImportFrom: 5, ast.Global: 6, ast.Nonlocal: 6, ast.Subscript: 7, ast.Attribute: 7, ast.Call: 8}
_WALKED = tuple(_WALKED_KINDS)


def walk_module(tree: ast.Module, package: str) -> ModuleWalk:
    """`ModuleWalk` of `tree`, in one `ast.walk`; `package` is the module's top-level package.

    Each node is looked up by its class among the few kinds the walk reads (most nodes are none of them); a node of a
    subclass of one of them is read as that kind too, as `isinstance` would."""
    defined: set[str] = set()
    sys_names: set[str] = set()
    builtins_names: set[str] = set()
    mutated: set[str] = set()
    by_def: set[str] = set()
    otherwise: set[str] = set()
    reads_names = False
    kinds = _WALKED_KINDS
    for node in nodes(tree):
        kind = kinds.get(node.__class__)
        if kind is None:
            if not isinstance(node, _WALKED):
                continue
            kind = next(k for cls, k in kinds.items() if isinstance(node, cls))
        if kind == 3:  # Name
            if not isinstance(node.ctx, ast.Load):
                otherwise.add(node.id)
        elif kind == 7:  # Subscript, Attribute
            name = changed_name(node)
            if name is not None:
                mutated.add(name)
        elif kind == 8:  # Call
            reads_names = reads_names or reads_a_name(node)
        elif kind == 1:  # FunctionDef, AsyncFunctionDef
            by_def.add(node.name)
            defined.add(node.name)
        elif kind == 2:  # ClassDef
            otherwise.add(node.name)
            defined.add(node.name)
        elif kind == 4:  # Import
            otherwise.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            for alias in node.names:
                if alias.name.split(".")[0] == package:
                    defined.add(alias.asname or alias.name.split(".")[0])
                if alias.name == "sys":
                    sys_names.add(alias.asname or "sys")
                elif alias.name == "builtins":
                    builtins_names.add(alias.asname or "builtins")
        elif kind == 5:  # ImportFrom
            otherwise.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            if node.level or (node.module or "").split(".")[0] == package:
                defined.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
        else:  # Global, Nonlocal
            otherwise.update(node.names)
    return ModuleWalk(frozenset(defined), frozenset(sys_names), frozenset(mutated), reads_names,
                      frozenset(by_def - otherwise), frozenset(builtins_names))


def _rebound_names(function: ast.AST) -> set[str] | None:
    """The names a function (its nested functions and classes too) may bind or delete: assignment and loop targets,
    `del`, `import ... as`, `def`/`class` names, `except ... as`, walrus targets; None where it may bind any name
    (a star import, `exec`, `globals()`)."""
    names: set[str] = set()
    for node in nodes(function):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not function:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                return None
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("exec", "eval", "globals"):
            return None
    return names


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node


class _Finder(FastVisitor):
    def __init__(self, defined: set[str], sys_names: set[str], package: str):
        self.defined = defined
        self.sys_names = sys_names
        self.package = package
        self.def_only: frozenset[str] = frozenset()  # bound only by `def` (`ModuleWalk.def_only`)
        self.called: set[int] = set()  # ids of Name nodes that are the callee of a call with arguments
        self.called_attributes: set[int] = set()  # ids of Attribute nodes that are the callee of a call
        self.pkgutil_names: frozenset[str] = frozenset()  # `pkgutil_bindings`
        self.attribute_values: set[int] = set()  # ids of Name nodes read as `name.attribute`
        self.found: list[tuple[str, int]] = []
        self.globals: dict[str, int] = {}
        self.depth = 0  # 0: module level; >0: inside a function or class body
        self.in_hook = False  # inside a module-level `def __getattr__`
        self.in_function = 0  # inside a function body (a lambda's too): what runs there runs when called
        self.functions: list[ast.AST] = []  # the enclosing functions, innermost last
        self.local_names: dict[int, set[str]] = {}  # id of a function -> `_local_names`, found when first asked
        self.read_paths: set[int] = set()  # ids of `__path__` Names passed to `iter_modules` / `walk_packages`
        self.overlays: set[int] = set()  # ids of `globals()` calls that copy an implementation module's names
        self.registrars: set[str] = set()  # module-level functions `alias_registrar` reads, called once at top level
        self.lookups: set[int] = set()  # ids of `sys.modules` nodes a function only reads a module's attributes through
        self.builtin_calls_only = False  # `import builtins` used only to call a builtin a kernel's name shadows
        self.membership_tested: set[int] = set()  # ids of the right sides of `in` / `not in` tests

    def note(self, what: str, node: ast.AST) -> None:
        self.found.append((what, node.lineno))

    def _is_local(self, node: ast.expr | None) -> bool:
        """`node` is rooted at a function or class an enclosing function defines itself (`_local_names`): an object
        of that call, which no module-level name is, whatever the module also defines under that name."""
        if isinstance(node, ast.Attribute):
            node = node.value  # `inner.__wrapped__ = ...`; `inner.x.__defaults__` may reach anything
        if not isinstance(node, ast.Name):
            return False
        for function in self.functions:
            if id(function) not in self.local_names:
                self.local_names[id(function)] = _local_names(function)
            if node.id in self.local_names[id(function)]:
                return True
        return False

    def _nested(self, node) -> None:
        self.depth += 1
        self.in_function += 1
        self.functions.append(node)
        self.generic_visit(node)
        self.functions.pop()
        self.in_function -= 1
        self.depth -= 1

    def visit_FunctionDef(self, node) -> None:
        if self.depth == 0 and node.name in self.registrars:
            return  # read by the surface reader, which binds its aliases where the module calls it
        hook = self.depth == 0 and node.name in MODULE_HOOKS
        if hook and isinstance(node, ast.AsyncFunctionDef):
            self.note(f"a module-level `async def {node.name}` hook", node)
        for deco in node.decorator_list:
            self.visit(deco)
        self.depth += 1
        self.in_function += 1
        self.functions.append(node)
        previous, self.in_hook = self.in_hook, hook
        for child in [node.args, *node.body]:
            self.visit(child)
        self.in_hook = previous
        self.functions.pop()
        self.in_function -= 1
        self.depth -= 1

    def visit_Assign(self, node) -> None:
        if self.depth == 0 and is_lazy_replacement(node):
            return  # read by the surface reader (`gates.python_api.lazy_exports`)
        if self.depth == 0 and _extends_path(node, self.pkgutil_names):
            return  # `__path__ = extend_path(__path__, __name__)`: other installations' folders come after its own
        if self.functions and _is_overlay(node, self.functions[-1]):
            self.overlays.add(id(node.targets[0].value))
        if self.functions:
            lookup = _read_only_lookup(node, self.functions[-1], self.sys_names)
            if lookup is not None:
                self.lookups.add(id(lookup))
        self.generic_visit(node)

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
        if self.depth == 0:
            return  # `global NAME` at module level (unsloth's `kernels/utils.py`) changes nothing: names there are global
        rebinding = _rebound_names(self.functions[-1]) if self.functions else None
        for name in node.names:
            if rebinding is not None and name not in rebinding:
                continue  # `global XPU_STREAMS` in a function that only reads it (unsloth's dequantize) binds nothing
            self.globals.setdefault(name, node.lineno)

    def visit_Name(self, node) -> None:
        if node.id in self.sys_names and id(node) not in self.attribute_values:
            self.note(f"`{node.id}` passed around (`getattr({node.id}, ...)` can reach `sys.modules`)", node)
        elif node.id == "__all__" and self.depth > 0:
            self.note("`__all__` used inside a function or class body", node)
        elif node.id in _NAMED and id(node) not in self.called:
            self.note(f"`{node.id}` passed around", node)
        elif node.id in ("vars", "locals") and self.in_function == 0 and id(node) not in self.called:
            self.note(f"`{node.id}` at module level" if self.depth == 0 else f"`{node.id}` in a class body", node)
        elif node.id == "__path__" and id(node) not in self.read_paths:
            self.note(PATH_CHANGE, node)
        elif node.id in MODULE_HOOKS and self.depth == 0 and isinstance(node.ctx, ast.Store):
            self.note(f"a module-level `{node.id}` hook", node)

    def visit_Compare(self, node) -> None:
        self.membership_tested.update(id(right) for op, right in zip(node.ops, node.comparators)
                                      if isinstance(op, (ast.In, ast.NotIn)))
        self.generic_visit(node)

    def visit_Import(self, node) -> None:
        if any(alias.name == "builtins" for alias in node.names) and not self.builtin_calls_only:
            self.note("`import builtins`", node)

    def visit_ImportFrom(self, node) -> None:
        if node.module == "sys" and any(alias.name == "modules" for alias in node.names):
            self.note("`from sys import modules`", node)
        elif node.module == "sys" and any(alias.name in _IMPORT_PATHS for alias in node.names):
            self.note(f"`from sys import {', '.join(a.name for a in node.names if a.name in _IMPORT_PATHS)}` (where "
                      "imports look for modules)", node)
        elif node.module == "builtins":
            self.note("`from builtins import ...`", node)
        elif self.depth == 0 and any((alias.asname or alias.name) in MODULE_HOOKS for alias in node.names):
            self.note("a module-level `__getattr__` or `__dir__` hook, imported", node)

    def visit_Attribute(self, node) -> None:
        if isinstance(node.value, ast.Name):
            self.attribute_values.add(id(node.value))
        if node.attr in _KERNEL_DECORATORS and not isinstance(node.ctx, ast.Load) and self.depth == 0:
            self.note(f"`{ast.unparse(node)}` replaced (a function under a kernel decorator is read as a kernel, none "
                      "of the API)", node)
        elif node.attr in _SLOT_SETTERS and id(node) not in self.called_attributes:
            self.note(f"`{ast.unparse(node)}` passed around", node)
        elif node.attr in _DESCRIPTOR_SETTERS:
            self.note(f"`{ast.unparse(node)}` (a descriptor's setter called directly)", node)
        on_sys = isinstance(node.value, ast.Name) and node.value.id in self.sys_names
        if node.attr in ("modules", "__dict__") and on_sys and id(node) not in self.lookups:
            self.note(f"`sys.{node.attr}`", node)
        elif node.attr in _IMPORT_PATHS and on_sys and id(node) not in self.membership_tested:
            self.note(f"`sys.{node.attr}` (where imports look for modules: an import may then read a file of the "
                      "repository as a library)", node)
        elif node.attr == "addsitedir":
            self.note(f"`{ast.unparse(node)}` (it changes where imports look for modules)", node)
        elif node.attr in SIGNATURE_ATTRIBUTES and not (isinstance(node.ctx, ast.Load)
                                                         and node.attr in _READ_ONLY_WHEN_LOADED) \
                and not self._is_local(node):
            self.note(f"`{ast.unparse(node)}`", node)
        elif isinstance(_root(node), ast.Name) and _root(node).id in self.defined and not self._is_local(node):
            if isinstance(node.ctx, ast.Store) and node.attr not in _SETTABLE and not self._function_flag(node):
                self.note(f"assignment to `{ast.unparse(node)}`", node)
            elif isinstance(node.ctx, ast.Del):
                self.note(f"`del {ast.unparse(node)}`", node)
            elif node.attr == "__dict__":
                self.note(f"`{ast.unparse(node)}`", node)
        self.generic_visit(node)

    def _function_flag(self, node: ast.Attribute) -> bool:
        """`fn.flag = value` on a name bound only by `def`: an attribute of the function object, no signature's."""
        return isinstance(node.value, ast.Name) and node.value.id in self.def_only and not node.attr.startswith("__")

    def visit_Call(self, node) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        first = node.args[0] if node.args else None
        if isinstance(func, ast.Name) and (node.args or name not in ("vars", "locals")) and \
                name not in ("exec", "eval", "globals"):
            self.called.add(id(func))
        if name in _PACKAGE_LISTERS and isinstance(first, ast.Name) and first.id == "__path__" \
                and len(node.args) == 1 and not node.keywords:
            self.read_paths.add(id(first))
        if isinstance(func, ast.Name) and name == "getattr" and len(node.args) >= 2 \
                and isinstance(node.args[1], ast.Constant) and node.args[1].value in _LOOKED_UP_SETTERS:
            # `getattr(object, "__setattr__")`: a setter fetched by name reaches what writing it out would
            self.note(f"`{ast.unparse(node)}`", node)
        if isinstance(func, ast.Name) and name in ("exec", "eval", "globals"):
            if id(node) not in self.overlays:
                self.note(f"`{name}()`", node)
            self.called.add(id(func))
        elif isinstance(func, ast.Name) and name in ("vars", "locals") and not node.args and self.depth == 0:
            self.note(f"`{name}()` at module level", node)
        elif isinstance(func, ast.Name) and name == "vars" and self._is_module_level_object(first) \
                and not self._is_local(first):
            self.note(f"`{ast.unparse(node)}`", node)
        elif isinstance(func, ast.Name) and name in ("setattr", "delattr") and (
                self._is_module_level_object(first) or self.depth == 0 and _names_a_kernel_decorator(node)) \
                and not self._is_local(first):
            self.note(f"`{name}({ast.unparse(first)}, ...)`", node)
        elif isinstance(func, ast.Attribute) and name in _SLOT_SETTERS:
            self.called_attributes.add(id(func))
            attribute = node.args[1] if len(node.args) > 1 else None
            literal = isinstance(attribute, ast.Constant) and isinstance(attribute.value, str)
            if (self._is_module_level_object(first) and not self._is_local(first)) or not literal \
                    or attribute.value in SIGNATURE_ATTRIBUTES or attribute.value == "__dict__":
                self.note(f"`{ast.unparse(func)}({', '.join(ast.unparse(a) for a in node.args[:2])}, ...)`", node)
        elif name in _IMPORTERS and isinstance(first, ast.Constant) and first.value in _GUARDED_MODULES:
            self.note(f"`{ast.unparse(node)}`", node)
        elif name == "import_module" and (self.depth == 0 or self.in_hook):
            pass  # the surface reader computes what it imports, or refuses the module
        elif name in _IMPORTERS and self.in_function and not self.in_hook:
            pass  # a function that imports when called binds nothing of this module (`globals()`, `setattr` on the
            # module or `sys.modules` around it are caught by themselves)
        elif name in _IMPORTERS and not self._imports_elsewhere(first):
            self.note(f"`{ast.unparse(node)}`", node)
        self.generic_visit(node)

    def _imports_elsewhere(self, node: ast.expr | None) -> bool:
        """A dynamic import of a named module outside this module's top-level package."""
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            return False
        return not node.value.startswith(".") and node.value.split(".")[0] != self.package

    def _is_module_level_object(self, node: ast.expr | None) -> bool:
        if node is None:
            return False
        root = _root(node)
        if isinstance(root, ast.Name) and root.id in self.defined:
            return True
        text = ast.unparse(node)
        return "modules" in text or any(name in text for name in _IMPORTERS)


_PACKAGE_LISTERS = frozenset({"iter_modules", "walk_packages"})


def _extends_path(node: ast.Assign, pkgutil_names: frozenset[str]) -> bool:
    """`__path__ = extend_path(__path__, __name__)` (or `pkgutil.extend_path`), the name bound only by `from pkgutil
    import extend_path` (or `import pkgutil`, `pkgutil_bindings`): a package that shares its name with other
    installations (flash-attention 2 and 4 installed side by side). Python appends their folders after the
    package's own, so every module of the repository is still the one imported, and what they add is not the
    repository's. An `extend_path` of the repository's own could return any folders."""
    value = node.value
    wanted = {"extend_path": "extend_path", "pkgutil.extend_path": "pkgutil"}
    return (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "__path__"
            and isinstance(value, ast.Call) and wanted.get(ast.unparse(value.func)) in pkgutil_names
            and len(value.args) == 2 and not value.keywords
            and [ast.unparse(arg) for arg in value.args] == ["__path__", "__name__"])


def _assigns_path(tree: ast.Module) -> bool:
    return any(isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__path__" for t in stmt.targets)
               for stmt in tree.body)


def pkgutil_bindings(tree: ast.Module) -> frozenset[str]:
    """Of `extend_path` and `pkgutil`, the names the module binds only by `from pkgutil import extend_path` and
    `import pkgutil` (at least once, and in no other way anywhere)."""
    good: set[str] = set()
    bad: set[str] = set()
    names = {"extend_path", "pkgutil"}
    for node in nodes(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                bound = alias.asname or alias.name
                if bound in names:
                    ok = node.module == "pkgutil" and not node.level and alias.name == "extend_path" == bound
                    (good if ok else bad).add(bound)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                if bound in names:
                    (good if alias.name == "pkgutil" == bound else bad).add(bound)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and node.id in names:
            bad.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in names:
            bad.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bad.update(names.intersection(node.names))
        elif isinstance(node, ast.arg) and node.arg in names:
            bad.add(node.arg)
    return frozenset(good - bad)


def _is_overlay(node: ast.Assign, function: ast.AST) -> bool:
    """`globals()[name] = getattr(impl, name)` in a function, the same `name` both times, where `impl` is bound in that
    function only by `import_module(...)` / `importlib.import_module(...)`: the names of an implementation module
    copied over the module's own."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Subscript):
        return False
    target, value = node.targets[0], node.value
    if not (isinstance(target.value, ast.Call) and isinstance(target.value.func, ast.Name)
            and target.value.func.id == "globals" and not target.value.args and not target.value.keywords):
        return False
    if not (isinstance(target.slice, ast.Name) and isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id == "getattr" and len(value.args) == 2 and not value.keywords
            and all(isinstance(arg, ast.Name) for arg in value.args) and value.args[1].id == target.slice.id):
        return False
    module = value.args[0].id
    bindings = [stmt for stmt in ast.walk(function) if isinstance(stmt, ast.Name) and stmt.id == module
                and isinstance(stmt.ctx, (ast.Store, ast.Del))]
    imports = [stmt for stmt in ast.walk(function) if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
               and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == module
               and isinstance(stmt.value, ast.Call) and _callee_name(stmt.value.func) == "import_module"]
    return len(bindings) == 1 and len(imports) == 1


def _read_only_lookup(node: ast.Assign, function: ast.AST, sys_names: set[str]) -> ast.Attribute | None:
    """The `sys.modules` of `module = sys.modules.get(NAME)` (or `sys.modules[NAME]`) in a function that binds `module`
    there only and uses it only as the object of `getattr(module, ...)` and `hasattr(module, ...)`: a lookup that reads
    attributes and changes nothing; None for any other statement."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return None
    value = node.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get" \
            and 1 <= len(value.args) <= 2 and not value.keywords:
        table = value.func.value
    elif isinstance(value, ast.Subscript) and isinstance(value.ctx, ast.Load):
        table = value.value
    else:
        return None
    if not (isinstance(table, ast.Attribute) and table.attr == "modules" and isinstance(table.value, ast.Name)
            and table.value.id in sys_names):
        return None
    name = node.targets[0].id
    reads = {id(call.args[0]) for call in ast.walk(function) if isinstance(call, ast.Call)
             and isinstance(call.func, ast.Name) and call.func.id in ("getattr", "hasattr")
             and 2 <= len(call.args) <= 3 and not call.keywords and isinstance(call.args[0], ast.Name)}
    uses = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name]
    stores = [n for n in uses if not isinstance(n.ctx, ast.Load)]
    declared = any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(function))
    if declared or stores != [node.targets[0]] or any(id(n) not in reads for n in uses if n not in stores):
        return None
    return table


def _callee_name(func: ast.expr) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _local_names(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """The functions and classes a function defines in its own scope (a nested `def` or `class`): objects made anew
    by each call, never one of the module's. A name the function also binds otherwise (a parameter, an assignment,
    an import, `global` or `nonlocal`) is left out, since it may then name a module-level object."""
    args = function.args
    other = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    other.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    defined: set[str] = set()
    pending = list(function.body) if isinstance(function.body, list) else [function.body]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
            pending.extend(node.decorator_list)
            continue  # its body is its own scope
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            other.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            other.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            other.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            other.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            other.add(node.name)
        pending.extend(ast.iter_child_nodes(node))
    return defined - other


def dynamic_constructs(tree: ast.Module, module: str, walked: ModuleWalk | None = None
                       ) -> tuple[list[tuple[str, int]], dict[str, int]]:
    """(the constructs the surface of `module` cannot be read past, each with its line; `global NAME` -> first line).
    `walked`: `walk_module(tree, <module's top-level package>)` where the caller has it already."""
    package = module.split(".")[0]
    walked = walked or walk_module(tree, package)
    finder = _Finder(set(walked.defined), set(walked.sys_names), package)
    finder.def_only = walked.def_only
    finder.registrars = registrars(tree, finder.sys_names)
    finder.builtin_calls_only = bool(walked.builtins_names) and builtin_calls_only(tree, walked.builtins_names)
    finder.pkgutil_names = pkgutil_bindings(tree) if _assigns_path(tree) else frozenset()
    finder.visit(tree)
    return sorted(finder.found, key=lambda item: item[1]), finder.globals


# Builtins that compute a value from their arguments and touch no namespace: what a module calls as `builtins.min(...)`
# because a kernel of its own is named `min`.
_PURE_BUILTINS = frozenset({
    "abs", "all", "any", "bin", "bool", "callable", "chr", "dict", "divmod", "enumerate", "filter", "float", "format",
    "frozenset", "hash", "hex", "id", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min",
    "next", "oct", "ord", "pow", "print", "range", "repr", "reversed", "round", "set", "slice", "sorted", "str", "sum",
    "tuple", "type", "zip"})


def builtin_calls_only(tree: ast.Module, aliases: frozenset[str]) -> bool:
    """Every use of `aliases` (the names `import builtins` binds, `ModuleWalk.builtins_names`) calls a pure builtin
    (`builtins.min(a, b)`, FlagGems' reductions named `min` and `max`): no builtin is replaced, read as an object or
    passed on."""
    calls: set[int] = set()
    uses: list[ast.Name] = []
    for node in nodes(tree):
        if isinstance(node, ast.Name) and node.id in aliases:
            uses.append(node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _PURE_BUILTINS \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in aliases:
            calls.add(id(node.func.value))
        elif _looks_up_a_builtin(node, aliases):
            calls.add(id(node.args[0]))
    return all(id(node) in calls for node in uses)


# Builtins through which code can change a namespace or run text: a lookup of one is a way to call it unseen
_NAMESPACE_BUILTINS = frozenset({"exec", "eval", "compile", "globals", "locals", "vars", "setattr", "delattr",
                                 "__import__", "__dict__", "__builtins__", "__loader__", "__spec__", "type", "object"})


def _looks_up_a_builtin(node: ast.AST, aliases: frozenset[str]) -> bool:
    """`getattr(builtins, "get_ipython", None)` or `hasattr(builtins, "get_ipython")`: a read of one named builtin
    (unsloth's notebook detection), none through which a namespace changes."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
        and len(node.args) in (2, 3) and not node.keywords and isinstance(node.args[0], ast.Name) \
        and node.args[0].id in aliases and isinstance(node.args[1], ast.Constant) \
        and isinstance(node.args[1].value, str) and node.args[1].value not in _NAMESPACE_BUILTINS


def alias_registrar(function: ast.stmt, sys_names: set[str]) -> tuple[tuple[str, ...], str] | None:
    """(the names, the string method that makes each one's alias) of a function that only aliases module names:

        def _register_aliases():
            current_module = sys.modules[__name__]
            for key in ('IS_AMD', 'IS_NVIDIA'):
                if hasattr(current_module, key):
                    setattr(current_module, key.lower(), getattr(current_module, key))

    None for any other function. Called at module level, it binds `is_amd` to what `IS_AMD` is, for each name of
    the literal that is bound then."""
    if not isinstance(function, ast.FunctionDef) or function.decorator_list or _has_arguments(function.args) \
            or len(function.body) != 2:
        return None
    lookup, loop = function.body
    if not (isinstance(lookup, ast.Assign) and len(lookup.targets) == 1 and isinstance(lookup.targets[0], ast.Name)
            and ast.unparse(lookup.value) in {f"{name}.modules[__name__]" for name in sys_names}):
        return None
    module = lookup.targets[0].id
    if not (isinstance(loop, ast.For) and not loop.orelse and isinstance(loop.target, ast.Name)
            and isinstance(loop.iter, (ast.Tuple, ast.List)) and len(loop.body) == 1
            and all(isinstance(item, ast.Constant) and isinstance(item.value, str) for item in loop.iter.elts)):
        return None
    key = loop.target.id
    test = loop.body[0]
    expected = f"if hasattr({module}, {key}):\n    setattr({module}, {key}.{{}}(), getattr({module}, {key}))"
    method = next((m for m in ("lower", "upper") if isinstance(test, ast.If) and ast.unparse(test) == expected.format(m)),
                  None)
    if method is None:
        return None
    return tuple(item.value for item in loop.iter.elts), method


def _has_arguments(args: ast.arguments) -> bool:
    return bool(args.posonlyargs or args.args or args.vararg or args.kwonlyargs or args.kwarg)


def registrars(tree: ast.Module, sys_names: set[str]) -> set[str]:
    """The module-level alias registrars (`alias_registrar`) the module calls once, as a statement of its own at top
    level (`_register_aliases()`), and names nowhere else but in a `del` after that call."""
    found = set()
    for stmt in tree.body:
        if alias_registrar(stmt, sys_names) is None:
            continue
        name = stmt.name
        uses = [n for n in nodes(tree) if isinstance(n, ast.Name) and n.id == name]
        calls = [s for s in tree.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                 and isinstance(s.value.func, ast.Name) and s.value.func.id == name
                 and not s.value.args and not s.value.keywords]
        deletions = [n for s in tree.body if isinstance(s, ast.Delete) for n in s.targets
                     if isinstance(n, ast.Name) and n.id == name]
        defined = sum(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and s.name == name
                      for s in ast.walk(tree))
        if len(calls) == 1 and defined == 1 and len(uses) == 1 + len(deletions) and \
                all(tree.body.index(calls[0]) < next(i for i, s in enumerate(tree.body) if n in getattr(s, "targets", ()))
                    for n in deletions):
            found.add(name)
    return found
