"""Changes that break a covered package's public API behind the idioms G5 reads: a caller's code
that worked at base fails (or behaves differently) at head.

Each test builds a repository whose base defines a public entry point a caller can use,
changes it at head, and asserts that G5 reports the change as an error. A test marked
`xfail(strict=True)` is a break G5 does not catch yet (its reason says why); the mark comes
off with the fix.
"""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from gates.python_api.module_scope import module_scope
from gitrepo_builder import ADA, g5_of, seeded_repo


def g5_after(tmp_path, base: dict[str, str], head: dict[str, str]) -> list[tuple[str, str, str]]:
    """G5's findings for a change from `base` (files added to a seeded `kernels` package) to `head`."""
    repo = seeded_repo(tmp_path / "repo", files={"kernels/ops/__init__.py": "", **base})
    repo.branch("change")
    for path, text in head.items():
        repo.write(path, text)
    repo.commit("Change the package", who=ADA)
    return g5_of(repo.check())


def after_edit(tmp_path, path: str, text: str, old: str, new: str, count: int = -1) -> list[tuple[str, str, str]]:
    """G5's findings for a module `path` holding `text` at base and `text` with `old` replaced by `new` at head."""
    return g5_after(tmp_path, {path: text}, {path: text.replace(old, new, count)})


def errors(found) -> list[str]:
    return [message for _, severity, message in found if severity == "error"]


def reported(found, *needles: str) -> bool:
    """Whether one G5 error names every needle (the broken name, say)."""
    return any(all(needle in message for needle in needles) for message in errors(found))


# -- a name every path through an `if` sets by one assignment ---------------------------------------------------

PER_PATH_ALIAS = '''\
import os


def _fast_norm(x, weight, *, eps=1e-6):
    return x


def _slow_norm(x, weight, *, eps=1e-6):
    return x


if os.getenv("KERNELS_FAST"):
    rms_norm = _fast_norm
else:
    rms_norm = _slow_norm
'''


def test_the_function_another_path_binds_losing_a_parameter_is_a_break(tmp_path):
    """Without KERNELS_FAST (the default), `rms_norm(x, w, eps=1e-5)` raises TypeError at head."""
    found = after_edit(tmp_path, "kernels/ops/norm.py", PER_PATH_ALIAS, "def _slow_norm(x, weight, *, eps=1e-6)",
                       "def _slow_norm(x, weight)")
    assert reported(found, "rms_norm", "eps"), found


# -- a decorator that is a name set on each path of an `if` -----------------------------------------------------

PER_PATH_DECORATOR = '''\
import os

import torch


def _identity(fn):
    return fn


def _swap(fn):
    def inner(b, a):
        return fn(a, b)
    return inner


if os.getenv("KERNELS_COMPILE") == "1":
    _compile = torch.compile(fullgraph=True)
else:
    _compile = _identity


@_compile
def fused(hidden, delta):
    return hidden
'''


def test_a_per_path_decorator_rebound_to_one_that_changes_the_signature_is_a_break(tmp_path):
    """`fused(h, d)` now gets its arguments swapped; a single `_compile = _swap` is reported, the per-path one not."""
    found = after_edit(tmp_path, "kernels/ops/compile.py", PER_PATH_DECORATOR,
                       "    _compile = _identity", "    _compile = _swap")
    assert reported(found, "fused"), found


def test_the_function_behind_a_per_path_decorator_redefined_is_a_break(tmp_path):
    found = after_edit(tmp_path, "kernels/ops/compile.py", PER_PATH_DECORATOR, "def _identity(fn):\n    return fn",
                       "def _identity(fn):\n    return _swap(fn)")
    assert reported(found, "fused"), found


# -- a class or function every path through an `if` defines ------------------------------------------------------

PER_PATH_DEF = '''\
_LEGACY = False

if _LEGACY:
    def scale(x, factor=1.0):
        return x
else:
    def scale(x, factor=2.0):
        return x
'''


def test_flipping_the_constant_that_selects_a_path_is_a_break(tmp_path):
    """`scale(x)` used `factor=2.0` at base and `factor=1.0` at head; no definition changed."""
    found = after_edit(tmp_path, "kernels/ops/scale.py", PER_PATH_DEF, "_LEGACY = False", "_LEGACY = True")
    assert reported(found, "scale"), found


SAME_ON_EACH_PATH = '''\
import os

if os.getenv("KERNELS_LEGACY"):
    def scale(x, *, factor=1.0):
        return x
else:
    def scale(x, *, factor=1.0):
        return x * 1
'''


def test_the_path_most_machines_take_losing_a_parameter_is_a_break(tmp_path):
    """Without KERNELS_LEGACY, `scale(x, factor=2.0)` worked at base and raises TypeError at head."""
    found = after_edit(tmp_path, "kernels/ops/scale.py", SAME_ON_EACH_PATH,
                       "def scale(x, *, factor=1.0):\n        return x * 1",
                       "def scale(x):\n        return x * 1")
    assert reported(found, "scale", "factor"), found


CLASS_ON_EACH_PATH = '''\
import os

if os.getenv("KERNELS_LEGACY"):
    class Cache:
        def update(self, state, *, layer=0):
            return state
else:
    class Cache:
        def update(self, state, *, layer=0):
            return state
'''


def test_a_class_on_a_path_the_checking_machine_does_not_take_losing_a_parameter_is_a_break(tmp_path):
    """With KERNELS_LEGACY set, `Cache().update(s, layer=1)` worked at base and raises TypeError at head."""
    found = after_edit(tmp_path, "kernels/ops/cache_paths.py", CLASS_ON_EACH_PATH,
                       "def update(self, state, *, layer=0):",
                       "def update(self, state):", 1)
    assert reported(found, "Cache"), found


# -- a non-dunder attribute set on a function bound by `def` -----------------------------------------------------

FUNCTION_NAMESPACE = '''\
def _paged(q, k_cache, *, block_size=16):
    return q


def attention(q, k, v):
    return q


attention.paged = _paged
'''


def test_an_entry_point_hung_on_a_function_losing_a_parameter_is_a_break(tmp_path):
    found = after_edit(tmp_path, "kernels/ops/attention.py", FUNCTION_NAMESPACE, ", *, block_size=16", "")
    assert reported(found, "paged"), found


def test_an_entry_point_hung_on_a_function_removed_is_a_break(tmp_path):
    found = after_edit(tmp_path, "kernels/ops/attention.py", FUNCTION_NAMESPACE, "attention.paged = _paged\n", "")
    assert reported(found, "paged"), found


# -- `except ImportError: X = object` beside an outside import, and class bases ----------------------------------

STAND_IN = '''\
try:
    from transformers.cache_utils import CacheLayerMixin
except ImportError:
    CacheLayerMixin = object


class KernelCacheLayer(CacheLayerMixin):
    def update(self, *, state=None, offset=1):
        return state
'''


def test_a_stand_in_base_class_turned_into_none_is_a_break(tmp_path):
    found = after_edit(tmp_path, "kernels/ops/cache.py", STAND_IN, "CacheLayerMixin = object", "CacheLayerMixin = None")
    assert reported(found, "KernelCacheLayer") or reported(found, "CacheLayerMixin"), found


def test_a_stand_in_library_class_swapped_for_another_is_a_break(tmp_path):
    found = after_edit(tmp_path, "kernels/ops/cache.py", STAND_IN,
                       "from transformers.cache_utils import CacheLayerMixin",
                       "from transformers.cache_utils import DynamicCache as CacheLayerMixin")
    assert reported(found, "KernelCacheLayer") or reported(found, "CacheLayerMixin"), found


def test_a_public_class_based_on_another_builtin_is_a_break(tmp_path):
    path = "kernels/ops/table.py"
    found = g5_after(tmp_path, {path: "class Table(dict):\n    pass\n"}, {path: "class Table(list):\n    pass\n"})
    assert reported(found, "Table"), found


# -- a public alias of a private callable -------------------------------------------------------------------------

PRIVATE_IMPL = "def _norm(x, weight, *, eps=1e-6):\n    return x\n"


@pytest.mark.parametrize("alias", [
    "from kernels.ops._impl import _norm\n\nrms_norm = _norm\n",
    "from kernels.ops._impl import _norm as rms_norm\n",
    "from kernels.ops import _impl\n\nrms_norm = _impl._norm\n",
    # the device-function idiom over a module of the repository (`tl` is the repository's `_impl`)
    "import triton\n\nfrom kernels.ops import _impl as tl\n\nHAS = True\n\nif HAS:\n"
    "    rms_norm = tl._norm\nelse:\n    @triton.jit\n    def rms_norm(x, weight, eps):\n        return x\n",
])
def test_a_public_alias_of_an_imported_private_callable_is_api(tmp_path, alias):
    """`kernels.ops.api.rms_norm(x, w, eps=1e-5)` worked at base; `_norm` loses `eps` at head."""
    found = g5_after(tmp_path, {"kernels/ops/_impl.py": PRIVATE_IMPL, "kernels/ops/api.py": alias},
                     {"kernels/ops/_impl.py": PRIVATE_IMPL.replace(", *, eps=1e-6", "")})
    assert reported(found, "rms_norm", "eps"), found


# -- `try: from .vendor import f` / `except ImportError: from .portable import f` -------------------------------

VENDOR = "def rms_norm(x, weight, eps=1e-6, *, out=None):\n    return x\n"
PORTABLE = "def rms_norm(x, weight, eps=1e-6):\n    return x\n"
FALLBACK = '''\
try:
    from kernels.ops._cuda_norm import rms_norm
except ImportError:
    from kernels.ops._portable import rms_norm
'''
VENDOR_PACKAGE = {"kernels/ops/_cuda_norm.py": VENDOR, "kernels/ops/_portable.py": PORTABLE,
                  "kernels/ops/__init__.py": FALLBACK}


@pytest.mark.parametrize("raising", [
    "    from kernels.ops._cuda_norm import _FEATURE\n",  # a name the vendor module does not have
    "    raise ImportError('vendor build disabled')\n",
])
def test_a_try_body_that_always_falls_back_is_a_break(tmp_path, raising):
    """Where the vendor build is installed, `rms_norm(x, w, out=buf)` worked at base; at head it raises TypeError."""
    path = "kernels/ops/__init__.py"
    found = g5_after(tmp_path, VENDOR_PACKAGE,
                     {path: FALLBACK.replace("import rms_norm\nexcept", "import rms_norm\n" + raising + "except")})
    assert reported(found, "rms_norm"), found


@pytest.mark.parametrize("portable", [PORTABLE, VENDOR], ids=["fallback-differs", "fallback-same-signature"])
def test_dropping_the_import_error_fallback_is_a_break(tmp_path, portable):
    """Without the vendor build, `import kernels.ops` worked at base; at head it raises ImportError."""
    path = "kernels/ops/__init__.py"
    found = g5_after(tmp_path, {**VENDOR_PACKAGE, "kernels/ops/_portable.py": portable},
                     {path: "from kernels.ops._cuda_norm import rms_norm\n"})
    assert reported(found, "rms_norm", "no longer falls back"), found


def test_a_fallback_that_now_matches_the_vendor_build_is_no_break(tmp_path):
    """The portable version gains the vendor build's parameter: every machine's callers keep working."""
    found = g5_after(tmp_path, VENDOR_PACKAGE, {"kernels/ops/_portable.py": VENDOR})
    assert errors(found) == [], found


# -- `_import_structure` lazy maps --------------------------------------------------------------------------------

NORM = "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n\n\ndef layer_norm(x, weight):\n    return x\n"
LAZY_PACKAGE = '''\
import sys

from transformers.utils import _LazyModule

_import_structure = {"norm": ["rms_norm", "layer_norm"]}

sys.modules[__name__] = _LazyModule(__name__, globals()["__file__"], _import_structure, module_spec=__spec__)
'''


@pytest.mark.parametrize("statement", [
    '_import_structure["norm"].remove("layer_norm")\n',
    '_import_structure["norm"].pop()\n',
])
def test_a_name_taken_out_of_the_lazy_map_is_a_break(tmp_path, statement):
    """`from kernels.ops import layer_norm` fails at head."""
    path = "kernels/ops/__init__.py"
    found = g5_after(tmp_path, {"kernels/ops/norm.py": NORM, path: LAZY_PACKAGE},
                     {path: LAZY_PACKAGE.replace("\nsys.modules", statement + "\nsys.modules")})
    assert reported(found, "layer_norm") or reported(found, "kernels.ops", "cannot read"), found


# -- `importlib.import_module` of a literal -----------------------------------------------------------------------

NORM_V1 = "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n"
NORM_V2 = "def rms_norm(x, weight):\n    return x\n"
MODULE_ALIAS = 'import importlib\n\nnorm = importlib.import_module("kernels.ops.norm_v1")\n'


def test_a_module_alias_from_import_module_pointed_at_another_module_is_a_break(tmp_path):
    """`kernels.ops.norm.rms_norm(x, w, eps=1e-5)` breaks."""
    path = "kernels/ops/__init__.py"
    found = g5_after(tmp_path, {"kernels/ops/norm_v1.py": NORM_V1, "kernels/ops/norm_v2.py": NORM_V2,
                                path: MODULE_ALIAS}, {path: MODULE_ALIAS.replace("norm_v1", "norm_v2")})
    assert reported(found, "norm"), found


# -- class members that change how instances behave ---------------------------------------------------------------

BACKEND = "class Backend:\n    def run(self, x, *, scale=1.0):\n        return x\n"


@pytest.mark.parametrize("added", [
    "\n    def __eq__(self, other):\n        return True\n",  # Python sets __hash__ to None beside it
    "\n    __hash__ = None\n",
    "\n    __slots__ = ()\n",  # `backend.tag = 'x'` raises AttributeError
])
def test_a_member_that_takes_away_what_instances_could_do_is_a_break(tmp_path, added):
    """`{Backend(): 1}` (or `Backend().tag = 'x'`) worked at base and raises TypeError (AttributeError) at head."""
    path = "kernels/ops/backend.py"
    found = g5_after(tmp_path, {path: BACKEND}, {path: BACKEND + added})
    assert reported(found, "Backend"), found


def test_equality_that_keeps_instances_hashable_is_no_break(tmp_path):
    path = "kernels/ops/backend.py"
    added = "\n    def __eq__(self, other):\n        return True\n\n    def __hash__(self):\n        return 0\n"
    assert errors(g5_after(tmp_path, {path: BACKEND}, {path: BACKEND + added})) == []


# -- a default that is a mutable module constant ------------------------------------------------------------------

MUTABLE_DEFAULT = '_CFG = {"eps": 1e-6}\n\n\ndef rms_norm(x, weight, cfg=_CFG):\n    return x\n'


@pytest.mark.parametrize("old, new", [
    ('_CFG = {"eps": 1e-6}\n', '_CFG = {"eps": 1e-6}\n_CFG["eps"] = 1e-3\n'),  # before the def
    ("    return x\n", '    return x\n\n\n_CFG.update(eps=1e-3)\n'),  # after it: the same object
])
def test_a_default_changed_in_place_is_a_break(tmp_path, old, new):
    found = after_edit(tmp_path, "kernels/ops/cfg.py", MUTABLE_DEFAULT, old, new)
    assert reported(found, "rms_norm", "cfg"), found


# -- seen-through decorators --------------------------------------------------------------------------------------

CACHED = ("import functools\n\n\n@functools.lru_cache(maxsize=None)\n"
          "def block_table(n, *, page=16):\n    return (n, page)\n")


def test_dropping_lru_cache_is_a_break(tmp_path):
    found = after_edit(tmp_path, "kernels/ops/tables.py", CACHED, "@functools.lru_cache(maxsize=None)\n", "")
    assert reported(found, "block_table"), found


def test_adding_lru_cache_is_no_break(tmp_path):
    """Callers of `block_table(n, page=8)` keep working, and gain `block_table.cache_clear()`."""
    path = "kernels/ops/tables.py"
    found = g5_after(tmp_path, {path: CACHED.replace("@functools.lru_cache(maxsize=None)\n", "")}, {path: CACHED})
    assert errors(found) == [], found


# -- a folder of the repository put where imports look for modules --------------------------------------------------

def _vendoring(change_path: str) -> str:
    return f'''\
import os
import sys

_VENDOR = os.path.join(os.path.dirname(__file__), "..", "..", "vendor")
{change_path}
from vendored import rms_norm  # noqa: E402
'''


@pytest.mark.parametrize("change_path", [
    "sys.path.insert(0, _VENDOR)",
    "sys.path[:0] = [_VENDOR]",
    "search = sys.path\nsearch.append(_VENDOR)",
    "from sys import path\npath.append(_VENDOR)",
    "import site\nsite.addsitedir(_VENDOR)",
], ids=["insert", "slice", "alias", "from-sys", "site"])
def test_a_repository_folder_put_on_the_import_path_is_no_library(tmp_path, change_path):
    """`from vendored import rms_norm` reads like a library's name, but the module put the repository's `vendor/` where
    imports look first: a parameter the vendored function loses breaks `kernels.ops.rms_norm`'s callers. The module
    cannot be read statically, so it is read by importing it."""
    module = "kernels/ops/__init__.py"
    found = g5_after(tmp_path, {"vendor/vendored.py": "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n",
                                module: _vendoring(change_path)},
                     {"vendor/vendored.py": "def rms_norm(x, weight):\n    return x\n", module: _vendoring(change_path)
                      + "\nVERSION = 2\n"})
    assert errors(found) == ["public API break: kernels.ops.rms_norm: parameter 'eps' removed; the public API may "
                             "only grow"]  # read by importing base and head, from the whole tree
    assert any(severity == "warning" and "look for modules" in message for _, severity, message in found), found


def test_a_membership_test_of_the_import_path_leaves_the_module_readable(tmp_path):
    path = "kernels/ops/norm.py"
    text = "import sys\n\nFROZEN = 'x' in sys.path\n\n\ndef rms_norm(x, weight, *, eps=1e-6):\n    return x\n"
    assert errors(after_edit(tmp_path, path, text, ", *, eps=1e-6", "")) == [
        "public API break: kernels.ops.norm.rms_norm: parameter 'eps' removed; the public API may only grow"]


# -- files Python imports that G5 cannot read ------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["kernels/ops/norm.cpython-311-x86_64-linux-gnu.so", "kernels/ops/norm.abi3.so"],
                         ids=["so", "abi3"])
def test_a_native_extension_changed_inside_a_checked_package_is_refused(tmp_path, path):
    """Python imports `norm.*.so` before `norm.py` (committed bytecode is G0's finding)."""
    found = g5_after(tmp_path, {"kernels/ops/norm.py": "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n",
                                path: "\x7fELF base"}, {path: "\x7fELF head"})
    assert [(p, message.split(":")[0]) for p, severity, message in found if severity == "error"] == [
        (path, "a native extension module inside a checked package changed (kernels.ops.norm)")]


# -- module-level statements that unbind a name or fail the import ---------------------------------------------------

NORM = "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n\n\ndef _bare(x, weight):\n    return x\n"


@pytest.mark.parametrize("appended", [
    "\nraise ImportError('this build has no norm')\n",
    "\nassert False, 'unsupported'\n",
    "\nimport sys\nsys.exit('unsupported')\n",
    "\ntry:\n    import _missing_vendor_norm\nexcept ImportError as rms_norm:\n    pass\n",
    "\nif (rms_norm := _bare):\n    pass\n",
    "\nmatch 1:\n    case rms_norm:\n        pass\n",
], ids=["raise", "assert-false", "sys-exit", "except-as", "walrus-in-if", "match-capture"])
def test_a_module_level_statement_that_unbinds_or_rebinds_a_name_or_fails_the_import_is_a_break(tmp_path, appended):
    """`kernels.ops.norm.rms_norm(x, w, eps=1e-5)` works at base; at head the import fails, the name is gone (an
    `except ... as` name is deleted when its handler ends) or it is another function."""
    path = "kernels/ops/norm.py"
    found = g5_after(tmp_path, {path: NORM}, {path: NORM + appended})
    assert errors(found), found


@pytest.mark.parametrize("body", ["    locals().pop('forward')\n", "    vars()['forward'] = _other\n"],
                         ids=["locals-pop", "vars-rebind"])
def test_a_class_body_that_edits_its_own_namespace_is_read_by_importing(tmp_path, body):
    """Not read statically (`locals` / `vars` in a class body); the import shows the method gone or replaced."""
    path = "kernels/ops/norm.py"
    base = "def _other(self):\n    return 0\n\n\nclass Norm:\n    def forward(self, x, *, eps=1e-6):\n        return x\n"
    found = g5_after(tmp_path, {path: base}, {path: base + body})
    assert any("in a class body" in message for _, severity, message in found if severity == "warning"), found
    assert any("Norm.forward" in message for message in errors(found)), found


def test_a_star_import_from_a_library_after_the_modules_own_functions_is_not_read_statically():
    """`from math import *` after `def log(...)` rebinds `log` to math's: the checker does not know a library's names."""
    scope = module_scope("def log(x, *, base=2.0):\n    return x\n\n\nfrom math import *\n", "kernels/ops/norm.py",
                         module="kernels.ops.norm")
    assert scope.error is not None and "`from math import *` after the module defines log" in scope.error
    assert module_scope("from math import *\n\n\ndef log(x, *, base=2.0):\n    return x\n", "kernels/ops/norm.py",
                        module="kernels.ops.norm").error is None  # defined after it: the module's own


# -- modules that are symbolic links ---------------------------------------------------------------------------------

@pytest.mark.parametrize("link, target", [
    ("kernels/ops/norm.py", "_norm_impl.py"),  # a public module naming a private one
    ("kernels/ops/norm.py", "../../vendor/norm.py"),  # a module naming a file outside the package
], ids=["private-file", "outside-the-package"])
def test_a_module_that_is_a_symbolic_link_changes_with_the_file_it_names(tmp_path, link, target):
    """Only the file the link names changes; Python imports `kernels.ops.norm` from it, so callers break."""
    named = str((PurePosixPath(link).parent / target)).replace("kernels/ops/../../", "")
    repo = seeded_repo(tmp_path / "repo", files={"kernels/ops/__init__.py": "",
                                                 named: "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n"})
    (repo.root / link).symlink_to(target)
    repo.commit("norm: a link to its implementation", who=ADA)
    repo.branch("change")
    repo.write(named, "def rms_norm(x, weight):\n    return x\n")
    repo.commit("norm: no eps", who=ADA)
    assert reported(g5_of(repo.check()), "kernels.ops.norm.rms_norm", "'eps' removed")


# -- breaks found by a black-box tester who knew only the docs: a module that rebinds another's names, git archive ---

PATCH = '''\
import kernels.decode_attention.api as _api


def _decode(q):
    return q


_api.attention_decode = _decode
'''
INIT = "from kernels.decode_attention.api import attention_decode\n"


@pytest.mark.parametrize("patch", [
    PATCH,
    PATCH.replace("_api.attention_decode = _decode", "setattr(_api, 'attention_decode', _decode)"),
    PATCH.replace("_api.attention_decode = _decode", "def _install():\n    _api.attention_decode = _decode\n\n\n"
                  "_install()"),
    PATCH.replace("import kernels.decode_attention.api as _api", "from .decode_attention import api as _api"),
    PATCH.replace("_api.attention_decode = _decode", "del _api.attention_decode"),
], ids=["assignment", "setattr", "in-a-function", "relative-import", "del"])
def test_a_module_of_the_package_that_rebinds_a_public_function_of_another_module_is_an_error(tmp_path, patch):
    found = g5_after(tmp_path, {}, {"kernels/_compat.py": patch,
                                    "kernels/__init__.py": INIT + "from kernels import _compat  # noqa: F401\n"})
    assert reported(found, "sets or deletes a name of module kernels.decode_attention.api from module kernels._compat"), \
        found


def test_a_module_that_sets_attributes_of_libraries_and_of_its_own_functions_is_no_patch(tmp_path):
    own = ("import torch\n\n\ndef attention_decode_paged(q):\n    return q\n\n\n"
           "attention_decode_paged.supports_graphs = True\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    found = g5_after(tmp_path, {}, {"kernels/_compat.py": own,
                                    "kernels/__init__.py": INIT + "from kernels import _compat  # noqa: F401\n"})
    assert not any("sets or deletes a name of module" in message for _, _, message in found), found


def test_a_module_outside_the_package_that_the_package_imports_and_that_rebinds_a_public_function_is_an_error(tmp_path):
    found = g5_after(tmp_path, {}, {"kernels_compat.py": PATCH,
                                    "kernels/__init__.py": INIT + "import kernels_compat  # noqa: F401\n"})
    assert reported(found, "sets or deletes a name of module kernels.decode_attention.api from module kernels_compat, "
                           "which kernels/__init__.py imports"), found


def test_a_test_that_monkeypatches_the_package_is_not_read_as_a_patch(tmp_path):
    """Nothing in the package imports the test: what it sets lasts for its own process."""
    test = "import kernels.decode_attention.api as api\n\n\ndef test_fake():\n    api.attention_decode = len\n"
    found = g5_after(tmp_path, {}, {"tests/test_fake.py": test})
    assert not any("sets or deletes a name of module" in message for _, _, message in found), found


def archive_findings(tmp_path, attributes: str, added: str) -> list[str]:
    api = "kernels/decode_attention/api.py"
    repo = seeded_repo(tmp_path / "repo")
    repo.branch("change")
    repo.write(".gitattributes", attributes)
    repo.write(api, repo.read(api) + added)
    repo.commit("Archive builds", who=ADA)
    return [f.message for f in repo.check() if f.gate == "G5" and f.path == api]


def test_an_export_subst_placeholder_that_adds_code_to_the_archive_is_an_error(tmp_path):
    """`git archive` writes `$Format:%n$` as a newline where export-subst applies: the archive's module holds a
    definition the committed blob holds only in a comment."""
    found = archive_findings(tmp_path, "kernels/decode_attention/api.py export-subst\n",
                             "# build: $Format:%n$def attention_decode(q): return q\n")
    assert len(found) == 1 and "`$Format:%n$` is more than one commit value" in found[0], found


def test_an_author_name_placeholder_is_an_error(tmp_path):
    """An author chooses their name: `"$Format:%an$"` can close its string and run what follows in an archive."""
    found = archive_findings(tmp_path, "", 'BUILT_BY = "$Format:%an$"\n')
    assert len(found) == 1 and "`$Format:%an$`" in found[0], found


def test_a_version_placeholder_for_git_archive_is_no_finding(tmp_path):
    """What versioning tools write: one placeholder of the commit's refs, hash or date, inside a string."""
    found = archive_findings(tmp_path, "kernels/decode_attention/api.py export-subst\n",
                             'git_refnames = "$Format:%d$"\ngit_full = "$Format:%H$"\ngit_date = "$Format:%ci$"\n')
    assert found == []
