"""G5 cannot be talked past: each way of shrinking or changing a module's API at run time is reported.

Every case is a base/head pair of `kernels/api.py` sources: the head shrinks or changes
the public API with a construct that a plain reading of the definitions would miss,
and the diff must report it (or refuse the module as unreadable statically). Each
has a benign counterpart that must pass.
"""

from __future__ import annotations

import pytest

from gates.python_api.api_surface import diff_surfaces, module_surface
from gates.python_api.module_scope import module_reader, module_scope

PATH = "kernels/api.py"

BASE = '''\
"""Decode attention host wrappers."""
import functools

import torch


def attention_decode(q, k_cache, v_cache, *, scale=None):
    return None


def attention_decode_splitkv(q, k_cache, v_cache, *, num_splits=1):
    return None


class LayerWorkspace:
    def __init__(self, max_batch, *, dtype="bf16"):
        pass

    def partials(self, num_splits):
        return None
'''

EXPORTING = BASE.replace('import torch\n', 'import torch\n\n__all__ = ["attention_decode", "attention_decode_splitkv"]\n')

IMPL = '''\
def attention_decode_v2(q, k_cache, v_cache, block_table, *, scale=None):
    return None


def same_signature(q, k_cache, v_cache, *, scale=None):
    return None
'''


def diff(old: str, new: str, files: dict[str, str] | None = None) -> list[str]:
    read_module = module_reader({**(files or {}), PATH: None}.get)
    return [c.message for c in diff_surfaces(module_surface(old, PATH, read_module=read_module),
                                             module_surface(new, PATH, read_module=read_module))]


def unreadable(construct: str) -> str:
    return f"module kernels.api the checker cannot read this module's surface statically: {construct}"


def wrap_def(source: str, header: str, name: str = "attention_decode_splitkv") -> str:
    """Indent the definition of `name` under `header`."""
    start = source.index(f"def {name}(")
    end = source.index("\n\n\n", start)
    body = source[start:end].replace("\n", "\n    ")
    return source[:start] + f"{header}\n    {body}" + source[end:]


SPLITKV_REMOVED = "public name 'kernels.api.attention_decode_splitkv' removed"

HOLES = [
    pytest.param(BASE, BASE + "\ndel attention_decode_splitkv\n", SPLITKV_REMOVED, id="del-name"),
    pytest.param(EXPORTING, EXPORTING + "\ndel attention_decode_splitkv\n",
                 "'kernels.api.attention_decode_splitkv' is listed in __all__ but no longer bound", id="del-exported-name"),
    pytest.param(BASE, BASE + '\nglobals().pop("attention_decode_splitkv")\n',
                 unreadable("`globals()` at kernels/api.py:22"), id="globals-pop"),
    pytest.param(BASE, BASE + '\ndel globals()["attention_decode_splitkv"]\n',
                 unreadable("`globals()` at kernels/api.py:22"), id="del-globals-item"),
    pytest.param(BASE, BASE + '\nvars().pop("attention_decode_splitkv")\n',
                 unreadable("`vars()` at module level at kernels/api.py:22"), id="vars-pop"),
    pytest.param(BASE, BASE.replace("import torch\n", "import sys\nimport torch\n")
                 + '\ndelattr(sys.modules[__name__], "attention_decode_splitkv")\n',
                 unreadable("`delattr(sys.modules[__name__], ...)` at kernels/api.py:23"), id="delattr-sys-modules"),
    pytest.param(BASE, BASE.replace("import torch\n", "import importlib\nimport torch\n")
                 + '\n_me = importlib.import_module(__name__)\n_me.attention_decode = None\n',
                 unreadable("`importlib.import_module(__name__)` at kernels/api.py:23"), id="import-module-self"),
    pytest.param(BASE, BASE + '\nexec("del attention_decode_splitkv")\n',
                 unreadable("`exec()` at kernels/api.py:22"), id="exec"),
    pytest.param(BASE, BASE + '\n_ = eval("globals")()\n', unreadable("`eval()` at kernels/api.py:22"), id="eval"),
    pytest.param(BASE, BASE + "\n\ndef __getattr__(name):\n    return _load(name)\n",
                 unreadable("a module-level `def __getattr__` hook the checker cannot evaluate (`_load(name)`) at "
                            "kernels/api.py:23"), id="module-getattr"),
    pytest.param(BASE, BASE + "\n\ndef _drop():\n    global attention_decode_splitkv\n    del attention_decode_splitkv\n\n\n"
                 "_drop()\n",
                 unreadable("`global attention_decode_splitkv` in a function (it can rebind or delete the module-level "
                            "name) at kernels/api.py:24"), id="global-del"),
    pytest.param(BASE, BASE + "\n\nclass _Patch:\n    global attention_decode_splitkv\n    attention_decode_splitkv = None\n",
                 unreadable("`global attention_decode_splitkv` in a function (it can rebind or delete the module-level "
                            "name) at kernels/api.py:24"), id="global-in-a-class-body"),
    pytest.param(BASE, BASE + '\nattention_decode.__kwdefaults__ = {"scale": 2.0}\n',
                 unreadable("`attention_decode.__kwdefaults__` at kernels/api.py:22"), id="kwdefaults"),
    pytest.param(BASE, BASE + "\nattention_decode.__defaults__ = ()\n",
                 unreadable("`attention_decode.__defaults__` at kernels/api.py:22"), id="defaults"),
    pytest.param(BASE, BASE + '\nsetattr(attention_decode, "__kwdefaults__", {})\n',
                 unreadable("`setattr(attention_decode, ...)` at kernels/api.py:22"), id="setattr-definition"),
    pytest.param(BASE, BASE + "\nLayerWorkspace.partials = lambda self, num_splits, stream: None\n",
                 unreadable("assignment to `LayerWorkspace.partials` at kernels/api.py:22"), id="rebind-method"),
    pytest.param(BASE, wrap_def(BASE, "if False:"), SPLITKV_REMOVED, id="if-false"),
    pytest.param(BASE, wrap_def(BASE, "if 0:"), SPLITKV_REMOVED, id="if-zero"),
    pytest.param(BASE, wrap_def(BASE.replace("import torch\n", "import typing\nimport torch\n"),
                                "if typing.TYPE_CHECKING:"), SPLITKV_REMOVED, id="if-type-checking"),
    pytest.param(BASE, wrap_def(BASE.replace("import torch\n", "import torch\n\n_NEVER = False\n"), "if _NEVER:"),
                 "public name 'kernels.api.attention_decode_splitkv' removed", id="if-runtime-false"),  # read as Python runs it
    pytest.param(BASE, BASE + "\nif torch.cuda.is_available():\n    del attention_decode_splitkv\n",
                 "'kernels.api.attention_decode_splitkv' is now defined on one path through the else of `if "
                 "torch.cuda.is_available():` only: where another path runs, callers lose it", id="conditional-del"),
    pytest.param(BASE, BASE + "\ntry:\n    1 / 0\n\n    def attention_decode(q, k_cache, v_cache, *, scale=None):\n"
                 "        return None\nexcept ZeroDivisionError:\n    del attention_decode\n",
                 unreadable("public name 'attention_decode' is unbound or bound differently on some paths through "
                            "`try:` at kernels/api.py:22"), id="try-del"),
    pytest.param(BASE, wrap_def(BASE.replace("import torch\n", "import contextlib\nimport torch\n"),
                                "with contextlib.suppress(ZeroDivisionError):\n    1 / 0"),
                 unreadable("public name 'attention_decode_splitkv' is unbound or bound differently on some paths "
                            "through `with contextlib.suppress(ZeroDivisionError):` at kernels/api.py:12"),
                 id="with-suppress"),
    pytest.param(BASE, wrap_def(BASE, "for _ in ():"),
                 unreadable("public name 'attention_decode_splitkv' is unbound or bound differently on some paths "
                            "through `for _ in ():` at kernels/api.py:11"), id="for-over-nothing"),
    pytest.param(EXPORTING, EXPORTING + '\n__all__.remove("attention_decode_splitkv")\n', SPLITKV_REMOVED,
                 id="all-remove"),
    pytest.param(EXPORTING, EXPORTING + "\n__all__.pop()\n", SPLITKV_REMOVED, id="all-pop"),
    pytest.param(EXPORTING, EXPORTING + '\n__all__[:] = ["attention_decode"]\n', SPLITKV_REMOVED, id="all-slice"),
    pytest.param(EXPORTING, EXPORTING + "\ndel __all__[1]\n", SPLITKV_REMOVED, id="all-del-item"),
    pytest.param(EXPORTING, EXPORTING + "\n__all__.clear()\n", SPLITKV_REMOVED, id="all-clear"),
    pytest.param(EXPORTING, EXPORTING + '\n__all__ = [n for n in __all__ if "splitkv" not in n]\n',
                 unreadable("`__all__ = [n for n in __all__ if 'splitkv' not in n]` (a computed `__all__`) at "
                            "kernels/api.py:24"), id="all-computed"),
    pytest.param(EXPORTING, EXPORTING + "\n__all__.sort(key=len)\n",
                 unreadable("`__all__.sort(key=len)` (a change of `__all__` the checker does not model) at "
                            "kernels/api.py:24"), id="all-unmodelled-method"),
    pytest.param(EXPORTING, EXPORTING + "\n_names = __all__\n_names.pop()\n",
                 unreadable("`__all__` (uses `__all__` in a way the checker does not model) at kernels/api.py:24"),
                 id="all-alias"),
    pytest.param(EXPORTING, EXPORTING + "\n\ndef export(fn):\n    __all__.append(fn.__name__)\n    return fn\n",
                 unreadable("`__all__` used inside a function or class body at kernels/api.py:26"), id="all-in-function"),
    pytest.param(BASE, BASE.replace("\n\ndef attention_decode_splitkv(",
                                    "\n\ndef with_stream(fn):\n    @functools.wraps(fn)\n    def wrapper(stream, *args, **kwargs):\n"
                                    "        return fn(*args, **kwargs)\n    return wrapper\n\n\n"
                                    "@with_stream\ndef attention_decode_splitkv("),
                 "'kernels.api.attention_decode_splitkv' is now decorated with @kernels.api.with_stream", id="decorator-adds-parameter"),
    pytest.param(BASE, BASE.replace("\n\ndef attention_decode_splitkv(",
                                    "\n\ndef _strict(fn):\n    def wrapper(query):\n        return fn(query, None, None)\n"
                                    "    return wrapper\n\n\n@_strict\ndef attention_decode_splitkv("),
                 "'kernels.api.attention_decode_splitkv' is now decorated with @kernels.api._strict",
                 id="private-decorator-whose-wrapper-renames-parameters"),
    pytest.param(BASE, BASE.replace("def attention_decode_splitkv(", "@torch.compile\ndef attention_decode_splitkv("),
                 "'kernels.api.attention_decode_splitkv' is now decorated with @torch.compile", id="opaque-decorator"),
    pytest.param(BASE, BASE.replace("    def partials(", "    @property\n    def partials("),
                 "'kernels.api.LayerWorkspace.partials' is now decorated with @property", id="becomes-property"),
    pytest.param(BASE, BASE.replace("def attention_decode(q, k_cache, v_cache, *, scale=None):\n    return None\n",
                                    "from kernels.impl import attention_decode_v2 as attention_decode\n"),
                 "kernels.api.attention_decode: new parameter 'block_table' has no default", id="import-under-public-name"),
    pytest.param(BASE, BASE.replace("def attention_decode(q, k_cache, v_cache, *, scale=None):\n    return None\n",
                                    "from torch.nn.functional import softmax as attention_decode\n"),
                 "'kernels.api.attention_decode' is now bound to torch.nn.functional.softmax, which the checker cannot "
                 "read from this repository", id="import-from-outside"),
    pytest.param(BASE, BASE + "\nattention_decode = functools.partial(attention_decode, scale=2.0)\n",
                 "'kernels.api.attention_decode' is now decorated with @functools.partial(<fn>, scale=2.0), which may "
                 "change its signature", id="rebind-partial"),
    pytest.param(BASE, BASE + "\nattention_decode = torch.compile(attention_decode)\n",
                 "'kernels.api.attention_decode' is now decorated with @torch.compile", id="rebind-compiled"),
    pytest.param(BASE + "\nattention_decode = torch.compile(attention_decode)\n",
                 (BASE + "\nattention_decode = torch.compile(attention_decode)\n").replace(", *, scale=None", ""),
                 "kernels.api.attention_decode: parameter 'scale' removed", id="wrapped-then-shrunk"),
    pytest.param(BASE, BASE + "\nattention_decode, attention_decode_splitkv = attention_decode_splitkv, attention_decode\n",
                 "'kernels.api.attention_decode' is no longer callable with the same parameters", id="tuple-swap"),
    pytest.param(BASE, BASE + "\n\ndef _v2(q, k_cache, v_cache, stream, *, scale=None):\n    return None\n\n\n"
                 "attention_decode = _v2\n", "kernels.api.attention_decode: new parameter 'stream' has no default",
                 id="alias-to-another-function"),
    pytest.param(BASE, BASE + "\nattention_decode = lambda q, k_cache, v_cache, stream: None\n",
                 "kernels.api.attention_decode: new parameter 'stream' has no default", id="lambda"),
    pytest.param(BASE, BASE + "\n_g = globals\n_g().pop('attention_decode')\n",
                 unreadable("`globals` passed around at kernels/api.py:22"), id="globals-aliased"),
    pytest.param(BASE, BASE + "\n__path__ = ['elsewhere']\n",
                 unreadable("`__path__` (it changes where the package's modules are found) at kernels/api.py:22"),
                 id="package-path"),
    pytest.param(BASE, BASE + "\nimport builtins\nbuiltins.len = len\n", unreadable("`import builtins` at kernels/api.py:22"),
                 id="builtins"),
    pytest.param(BASE, BASE + "\n\ndef _lazy(name):\n    raise AttributeError(name)\n\n\n__getattr__ = _lazy\n",
                 unreadable("a module-level `__getattr__` hook at kernels/api.py:27"), id="module-getattr-assigned"),
    pytest.param(BASE, BASE + "\nimport kernels.api\n\nkernels.api.attention_decode = None\n",
                 unreadable("assignment to `kernels.api.attention_decode` at kernels/api.py:24"),
                 id="rebind-through-the-package"),
    pytest.param(BASE, BASE.replace("        return None\n", "        return None\n\n    partials = None\n"),
                 unreadable("method or nested class 'LayerWorkspace.partials' rebound or deleted in the class body at "
                            "kernels/api.py:22"), id="method-rebound-in-class-body"),
    pytest.param(BASE, BASE.replace("    def partials(self, num_splits):\n        return None\n",
                                    "    if False:\n        def partials(self, num_splits):\n            return None\n"),
                 unreadable("a method of class 'LayerWorkspace' defined under a compound statement (`if False:`) at "
                            "kernels/api.py:19"), id="method-under-if"),
    pytest.param(BASE, BASE.replace("import torch\n", "import typing\nimport torch\n").replace(
        "def attention_decode(", "@typing.overload\ndef attention_decode("),
                 "'kernels.api.attention_decode' is now decorated with @typing.overload", id="overload-stub-last"),
    pytest.param(BASE.replace("        return None\n", "        return None\n\n    BLOCK = 64\n"), BASE,
                 "public name 'kernels.api.LayerWorkspace.BLOCK' removed", id="class-attribute-removed"),
    pytest.param(BASE, BASE.replace("\n\ndef attention_decode_splitkv(",
                                    "\n\ndef with_check(fn):\n    @functools.wraps(fn)\n    def wrapper(*args, **kwargs):\n"
                                    "        if 'stream' not in kwargs:\n            raise TypeError('stream')\n"
                                    "        return fn(*args, **kwargs)\n    return wrapper\n\n\n"
                                    "@with_check\ndef attention_decode_splitkv("),
                 "'kernels.api.attention_decode_splitkv' is now decorated with @kernels.api.with_check",
                 id="wrapper-that-inspects-its-arguments"),
    pytest.param(BASE, BASE.replace("import torch\n", "import sys\nimport torch\n")
                 + '\ngetattr(sys, "modules")[__name__].__dict__.pop("attention_decode")\n',
                 unreadable("`sys` passed around (`getattr(sys, ...)` can reach `sys.modules`) at kernels/api.py:23"),
                 id="getattr-sys"),
]

WITH_SHAPE = BASE.replace("import torch\n", "import typing\nimport torch\n") + \
    "\n\nclass Shape(typing.NamedTuple):\n    batch: int\n    heads: int = 8\n"
# Signature attributes reached without an assignment, `__all__` changed by an `assert`'s comparison, and `__path__`
# pointed elsewhere by an `extend_path` of the repository's own: each leaves the module unreadable.
HOLES += [
    pytest.param(BASE, BASE + "\nobject.__setattr__(attention_decode, '__defaults__', (1.0,))\n",
                 unreadable("`object.__setattr__(attention_decode, '__defaults__', ...)`"), id="object-setattr"),
    pytest.param(BASE, BASE + "\nsetter = object.__setattr__\n",
                 unreadable("`object.__setattr__` passed around"), id="object-setattr-passed-around"),
    pytest.param(BASE, BASE + "\ntype(attention_decode).__kwdefaults__.__set__(attention_decode, {'scale': 1.0})\n",
                 unreadable("`type(attention_decode).__kwdefaults__.__set__` (a descriptor's setter called directly)"), id="descriptor-set"),
    pytest.param(BASE, BASE + "\n__import__('builtins').setattr(attention_decode, '__defaults__', (1.0,))\n",
                 unreadable("`__import__('builtins')`"), id="dunder-import-builtins"),
    pytest.param(EXPORTING, EXPORTING + "\n\nclass _Equal:\n    def __eq__(self, names):\n        names.clear()\n"
                 "        return True\n\n\nassert __all__ == _Equal()\n",
                 unreadable("`assert __all__ == _Equal()`"), id="assert-that-edits-all"),
    pytest.param(BASE, BASE.replace("import torch\n", "import torch\nfrom kernels.paths import extend_path\n\n"
                                    "__path__ = extend_path(__path__, __name__)\n"),
                 unreadable("`__path__` (it changes where the package's modules are found)"),
                 id="extend-path-of-its-own"),
]

# A public class in a class body rebound, deleted or named after a class of the module: its members are not what the
# checker reads, so the module is unreadable.
NESTED = BASE + "\n\nclass _ParamsV1:\n    def __init__(self, tile, cluster=1):\n        pass\n\n\n" \
    "class Scheduler:\n    class Params:\n        def __init__(self, tile, cluster=1):\n            pass\n"
HOLES += [
    pytest.param(NESTED, NESTED + "\n    Params = _ParamsV1\n",
                 unreadable("method or nested class 'Scheduler.Params' rebound or deleted in the class body"),
                 id="nested-class-rebound"),
    pytest.param(NESTED, NESTED + "\n    del Params\n",
                 unreadable("method or nested class 'Scheduler.Params' rebound or deleted in the class body"),
                 id="nested-class-deleted"),
    pytest.param(NESTED, NESTED.replace("    class Params:\n        def __init__(self, tile, cluster=1):\n"
                                        "            pass\n", "    Params = _ParamsV1\n"),
                 unreadable("class attribute `Params = _ParamsV1` in class 'Scheduler' names a class or function of "
                            "the module"), id="nested-class-alias"),
]

# A kernel decorator replaced while the module is imported would hide the host functions under it as kernels.
HOLES += [
    pytest.param(BASE, BASE.replace("import torch\n", "import torch\nimport triton\n\ntriton.jit = lambda fn: fn\n"),
                 unreadable("`triton.jit` replaced"), id="kernel-decorator-replaced"),
    pytest.param(BASE, BASE.replace("import torch\n", "import torch\nimport triton\n\nsetattr(triton, 'autotune', "
                                    "lambda *a, **k: lambda fn: fn)\n"),
                 unreadable("`setattr(triton, ...)`"), id="kernel-decorator-setattr"),
]

# What a nested class inherits is its API too: from a class of the module, compared; from a class of the same class
# body, which the checker does not follow, unreadable.
MIXED = BASE + "\n\nclass _Mixin:\n    def create(self, tile, swizzle=1):\n        pass\n\n\n" \
    "class Scheduler:\n    class Params(_Mixin):\n        pass\n"
HOLES += [
    pytest.param(MIXED, MIXED.replace("tile, swizzle=1", "tile"),
                 "kernels.api.Scheduler.Params.create: parameter 'swizzle' removed", id="nested-class-inherited"),
    pytest.param(MIXED, MIXED.replace("    class Params(_Mixin):\n", "    class _Base(_Mixin):\n        pass\n\n"
                                      "    class Params(_Base):\n"),
                 unreadable("nested class 'Scheduler.Params' derives from 'Scheduler._Base', a class of the same "
                            "class body whose members the checker does not follow"), id="nested-class-sibling-base"),
]

HOLES.append(pytest.param(WITH_SHAPE, WITH_SHAPE.replace("heads: int = 8", "heads: int"),
                          "kernels.api.Shape.__init__: parameter 'heads' was optional and is now required",
                          id="named-tuple-field"))

BASE_CLASS = BASE.replace("class LayerWorkspace:\n    def __init__(self, max_batch, *, dtype=\"bf16\"):\n        pass\n",
                          "class _Workspace:\n    def __init__(self, max_batch, *, dtype=\"bf16\"):\n        pass\n\n\n"
                          "class LayerWorkspace(_Workspace):\n    pass\n")

WITH_FIELDS = BASE + "\n\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass _Fields:\n    batch: int\n" \
                     "    heads: int = 8\n\n\n@dataclass\nclass Shape(_Fields):\n    head_dim: int = 64\n"

HOLES += [
    pytest.param(WITH_FIELDS, WITH_FIELDS.replace("heads: int = 8", "heads: int = 16"),
                 "kernels.api.Shape.__init__: default of 'heads' changed from 8 to 16", id="inherited-dataclass-field"),
    pytest.param(BASE_CLASS, BASE_CLASS.replace('*, dtype="bf16"', '*, dtype="fp16"'),
                 "kernels.api.LayerWorkspace.__init__: default of 'dtype' changed from 'bf16' to 'fp16'",
                 id="inherited-constructor"),
]


@pytest.mark.parametrize("base, head, message", HOLES)
def test_a_trick_that_shrinks_or_changes_the_api_is_reported(base, head, message):
    changes = diff(base, head, {"kernels/impl.py": IMPL})
    assert any(message in c for c in changes), changes


BENIGN = [
    pytest.param(BASE, BASE + "\ndel functools\n", id="del-an-import"),
    pytest.param(BASE, BASE + "\n\ndef _helper():\n    global _CACHE\n    _CACHE = {}\n", id="global-of-a-private-name"),
    pytest.param(BASE, BASE + "\nglobal attention_decode_splitkv\n", id="global-at-module-level"),  # unsloth's utils
    pytest.param(BASE, BASE + "\n\ndef _stream(i):\n    global attention_decode_splitkv\n    return attention_decode_splitkv\n",
                 id="global-only-read-in-a-function"),  # unsloth's dequantize reads XPU_STREAMS so
    pytest.param(EXPORTING, EXPORTING + '\n__all__ += ["LayerWorkspace"]\n', id="all-grows"),
    pytest.param(EXPORTING, EXPORTING.replace(
        '__all__ = ["attention_decode", "attention_decode_splitkv"]',
        '__all__ = ["attention_decode"]\n__all__.extend(["attention_decode_splitkv"])'), id="all-extended"),
    pytest.param(BASE, BASE + "\nif False:\n    def attention_decode_debug(q):\n        return None\n", id="if-false-private-growth"),
    pytest.param(BASE, BASE.replace("import torch\n", "import typing\nimport torch\n\nif typing.TYPE_CHECKING:\n"
                                    "    from torch import Tensor\n"), id="type-checking-import"),
    pytest.param(BASE, BASE.replace("import torch\n", "try:\n    import triton\nexcept ImportError:\n    triton = None\n"
                                    "import torch\n"), id="optional-import"),
    pytest.param(BASE, BASE.replace("\n\ndef attention_decode_splitkv(",
                                    "\n\ndef traced(fn):\n    @functools.wraps(fn)\n    def wrapper(*args, **kwargs):\n"
                                    "        return fn(*args, **kwargs)\n    return wrapper\n\n\n"
                                    "@traced\ndef attention_decode_splitkv("), id="pass-through-decorator"),
    pytest.param(BASE, BASE.replace("def attention_decode_splitkv(", "@functools.lru_cache(maxsize=None)\n"
                                    "def attention_decode_splitkv("), id="lru-cache"),
    pytest.param(BASE, BASE.replace("def attention_decode_splitkv(", "@torch.no_grad()\ndef attention_decode_splitkv("),
                 id="no-grad"),
    pytest.param(BASE, BASE.replace("def attention_decode(q, k_cache, v_cache, *, scale=None):\n    return None\n",
                                    "from kernels.impl import same_signature as attention_decode\n"), id="import-same-signature"),
    pytest.param(BASE, BASE + "\nLayerWorkspace_ = LayerWorkspace\n", id="alias-grows"),
    pytest.param(BASE, BASE + '\nattention_decode.__doc__ = "Decode attention."\n', id="set-a-docstring"),
    pytest.param(BASE, BASE + '\nimport importlib\n\ntriton = importlib.import_module("triton")\n', id="import-module-elsewhere"),
    pytest.param(BASE, BASE.replace("        return None\n", "        return None\n\n    BLOCK = 64\n"),
                 id="class-attribute"),
    pytest.param(BASE, BASE.replace("import torch\n", "import typing\nimport torch\n").replace(
        "def attention_decode(", "@typing.overload\ndef attention_decode(q: int, k_cache, v_cache):\n    ...\n\n\n"
        "def attention_decode("), id="overloads-then-the-implementation"),
    pytest.param(BASE, BASE + '\nif __name__ == "__main__":\n    result = attention_decode(None, None, None)\n',
                 id="main-block"),
    pytest.param(BASE, BASE + "\nif torch.cuda.is_available():\n    def attention_decode_splitkv(q, k_cache, v_cache, *, "
                 "num_splits=1):\n        return 1\nelse:\n    def attention_decode_splitkv(q, k_cache, v_cache, *, "
                 "num_splits=1):\n        return 2\n", id="same-signature-on-every-branch"),
    pytest.param(BASE_CLASS, BASE_CLASS.replace("(_Workspace):\n    pass\n", "(_Workspace):\n    def grow(self):\n"
                                                "        pass\n"),
                 id="inherited-constructor-kept"),
]


@pytest.mark.parametrize("base, head", BENIGN)
def test_a_benign_counterpart_passes(base, head):
    assert diff(base, head, {"kernels/impl.py": IMPL}) == []


def test_dunder_all_changes_are_applied_in_order():
    source = EXPORTING + '\n__all__ += ["LayerWorkspace"]\n__all__.append("x")\n__all__.insert(0, "y")\n__all__.remove("x")\n'
    assert module_scope(source, PATH).exports == ["y", "attention_decode", "attention_decode_splitkv", "LayerWorkspace"]


def test_a_decorator_whose_definition_changes_is_a_change():
    opaque = BASE.replace("\n\ndef attention_decode_splitkv(",
                          "\n\ndef tagged(fn):\n    _TAGGED.append(fn)\n    return fn\n\n\n@tagged\ndef attention_decode_splitkv(")
    redefined = opaque.replace("    _TAGGED.append(fn)\n    return fn\n", "    return lambda q: fn(q, None, None)\n")
    assert diff(opaque, opaque) == []
    changes = diff(opaque, redefined)
    assert any("has decorators whose definitions changed (@kernels.api.tagged)" in c for c in changes), changes


def test_a_dataclass_made_keyword_only_is_a_change():
    source = BASE + "\n\nfrom dataclasses import dataclass, field\n\n\n@dataclass\nclass Shape:\n    batch: int\n" \
                    "    heads: int = field(default=8)\n"
    keyword_only = source.replace("@dataclass\n", "@dataclass(kw_only=True)\n")
    assert diff(source, keyword_only) == ["kernels.api.Shape.__init__: parameter 'batch' became keyword-only",
                                          "kernels.api.Shape.__init__: parameter 'heads' became keyword-only"]


def test_a_module_unreadable_on_the_base_is_reported_not_passed():
    head = BASE
    base = BASE + "\nexec('')\n"
    changes = diff_surfaces(module_surface(base, PATH), module_surface(head, PATH))
    assert [c.kind for c in changes] == ["unreadable-base"]
    assert "its surface on the base could not be read" in changes[0].message


def test_reading_a_functions_code_is_not_a_surface_trick_but_setting_it_is():
    """`fn.__code__.co_argcount` in a helper (probing a kernel's arity) changes no signature."""
    import ast

    from gates.python_api.static_guard import dynamic_constructs

    def found(source: str) -> list[str]:
        return [what for what, _ in dynamic_constructs(ast.parse(source), "kernels.api")[0]]

    reads = "def arity(fn):\n    return fn.__code__.co_argcount, fn.__wrapped__, fn.__defaults__\n"
    assert found(reads) == []
    assert found("def f(a):\n    pass\n\ndef g(a, b):\n    pass\n\nf.__code__ = g.__code__\n") == ["`f.__code__`"]
    assert found("def f(*, a=1):\n    pass\n\nf.__kwdefaults__['a'] = 2\n") == ["`f.__kwdefaults__`"]


def test_a_function_that_imports_a_module_when_called_leaves_the_module_readable():
    """`importlib.import_module(package)` in a version-probing helper (Liger's `compare_version`)."""
    import ast

    from gates.python_api.static_guard import dynamic_constructs

    def found(source: str) -> list[str]:
        return [what for what, _ in dynamic_constructs(ast.parse(source), "kernels.api")[0]]

    helper = ("import importlib\n\ndef version_of(package):\n"
              "    return getattr(importlib.import_module(package), '__version__', None)\n")
    assert found(helper) == []
    assert found("import importlib\n\nmod = importlib.import_module(NAME)\n") == []  # left to the surface reader
    assert found("def patch():\n    setattr(__import__('kernels.api'), 'f', None)\n") != []
    assert found("def load(name):\n    globals()[name] = __import__(name)\n") != []


# A definition on one path of an `if` the checker cannot decide is read with the path that defines it, and only where
# the test reads the environment alone (libraries, builtins): a test that reads the repository's own names can move
# the definition without changing its text, so it is refused (and read by importing, where that works).
ONE_PATH = '''\
import sys

if sys.version_info >= (3, 0):
    def fast_norm(x, w, eps=1e-6):
        return x
'''


def test_a_definition_moved_to_the_other_path_of_its_if_is_a_break():
    moved = ONE_PATH.replace("    def fast_norm", "    pass\nelse:\n    def fast_norm")
    assert diff(ONE_PATH, moved) == ["'kernels.api.fast_norm' is now defined on one path through the else of "
                                     "`if sys.version_info >= (3, 0):` only: where another path runs, callers lose it"]


@pytest.mark.parametrize("test, before", [
    ("sys.version_info >= (3, 0)", "sys.version_info = (2, 7)\n"),
    ("os.sep == '/'", "import os\n\nsetattr(os, 'sep', '\\\\')\n"),
    ("sys.version_info >= _MIN", "_MIN = (3, 0)\n"),
    ("_supported()", "def _supported():\n    return True\n"),
    ("ENABLE_FAST", "from kernels.config import ENABLE_FAST\n"),
], ids=["library-patched", "library-patched-by-setattr", "module-constant", "module-helper", "repository-flag"])
def test_a_definition_under_a_test_that_reads_the_repository_is_refused(test, before):
    source = ONE_PATH.replace("if sys.version_info >= (3, 0):", before + f"if {test}:")
    surface = module_surface(source, PATH, read_module=module_reader({"kernels/config.py": "ENABLE_FAST = True\n",
                                                                      PATH: None}.get))
    assert surface.error and "public name 'fast_norm' is defined on one path through" in surface.error, surface.error
    assert "the test reads a name of the repository" in surface.error


# Found by probing the readings with real breaks: each head breaks a caller of the base, and G5 says so.
REGISTRY = '''\
class _Registry:
    def register(self, fn):
        return fn


_registry = _Registry()


@_registry.register
def rms_norm(x, weight, eps=1e-6):
    return x
'''
WRAPPER_CLASS = '''\
class _Op:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


def _rms_norm(x, weight, eps=1e-6):
    return x


rms_norm = _Op(_rms_norm)
'''
FALLBACK = '''\
try:
    from flash_attn.ops.triton.layer_norm import rms_norm_fn as rms_norm
except ImportError:
    def rms_norm(x, weight, eps=1e-6):
        return x
'''
PRESET = '''\
import functools

_PRESET = {}


def _rms_norm(x, weight, eps):
    return x


rms_norm = functools.partial(_rms_norm, **_PRESET)
'''

DOCS_FACTORY = '''\
def add_docs(*lines):
    def decorate(fn):
        fn.__doc__ = "\\n".join(lines)
        return fn
    return decorate


@add_docs("Root-mean-square normalization.")
def rms_norm(x, weight, eps=1e-6):
    return x
'''
DOCUMENTED_CLASS = '''\
def _documented(cls):
    cls.__doc__ = "Launches a Triton kernel."
    return cls


def _init(self, hidden):
    self.hidden = hidden


@_documented
class RMSNorm:
    def __init__(self, hidden, eps=1e-6):
        self.hidden = hidden
'''
HELD_DECORATOR = '''\
import functools

import torch

_decorate = torch.no_grad()


@_decorate
def rms_norm(x, weight, eps=1e-6):
    return x
'''


@pytest.mark.parametrize("base, head, message", [
    pytest.param(REGISTRY, REGISTRY.replace("        return fn\n", "        return lambda x, weight: fn(x, weight)\n"),
                 "'kernels.api.rms_norm' has decorators whose definitions changed (@kernels.api._registry.register)",
                 id="method-of-a-held-object-as-decorator"),
    pytest.param(WRAPPER_CLASS, WRAPPER_CLASS.replace("(self, *args, **kwargs)", "(self, x, weight)"),
                 "'kernels.api.rms_norm' has decorators whose definitions changed (@kernels.api._Op)",
                 id="class-of-the-module-as-wrapper"),
    pytest.param(FALLBACK, FALLBACK.replace(", eps=1e-6", ""),
                 "kernels.api.rms_norm (ImportError fallback 1): parameter 'eps' removed", id="fallback-of-a-module"),
    pytest.param(FALLBACK, "from flash_attn.ops.triton.layer_norm import rms_norm_fn as rms_norm\n",
                 "'kernels.api.rms_norm' no longer falls back where its import fails", id="fallback-dropped"),
    pytest.param(PRESET, PRESET.replace("_PRESET = {}", "_PRESET = {'eps': 1e-6}"),
                 "@functools.partial(<fn>, **{'eps': 1e-06})", id="partial-of-a-constant"),
    pytest.param(DOCS_FACTORY, DOCS_FACTORY.replace('@add_docs("Root-mean-square normalization.")', "@add_docs"),
                 "'kernels.api.rms_norm' is now decorated with @kernels.api.add_docs", id="factory-used-without-a-call"),
    pytest.param(DOCUMENTED_CLASS, DOCUMENTED_CLASS.replace("    return cls\n", "    cls.__init__ = _init\n    return cls\n"),
                 "'kernels.api.RMSNorm' is now decorated with @kernels.api._documented", id="documenting-sets-init"),
    pytest.param(HELD_DECORATOR, HELD_DECORATOR.replace("torch.no_grad()", "functools.singledispatch"),
                 "'kernels.api.rms_norm' has decorators whose definitions changed (@kernels.api._decorate)",
                 id="decorator-held-in-a-constant"),
    pytest.param("class KernelLaunchError(RuntimeError):\n    pass\n",
                 "def KernelLaunchError(message):\n    return RuntimeError(message)\n",
                 "'kernels.api.KernelLaunchError' is no longer a class", id="class-made-a-function"),
])
def test_a_break_behind_a_wrapper_a_fallback_or_a_kind_is_reported(base, head, message):
    found = diff(base, head)
    assert any(message in m for m in found), found


@pytest.mark.parametrize("source, reason", [
    ("import torch\nimport triton\n\n\n@triton.jit\ndef _device(x):\n    pass\n\n\ndef _host(x, weight, eps=1e-6):\n"
     "    return x\n\n\nif torch.version.hip is not None:\n    rms_norm = _device\nelse:\n    rms_norm = _host\n",
     "is a kernel on one path and a function callers call on another"),
    ("import dataclasses\n\n\nclass _LaunchConfig:\n    block_m: int = 64\n\n\n"
     "LaunchConfig = dataclasses.dataclass(frozen=True)(_LaunchConfig)\n", "a class given a constructor by a call"),
], ids=["kernel-on-one-path", "dataclass-by-a-call"])
def test_a_binding_whose_callers_cannot_be_told_is_refused(source, reason):
    assert reason in (module_surface(source, PATH).error or "")


LOOKUP_FALLBACK = '''\
import torch


def _rms_norm(x, weight, eps=1e-6):
    return x


rms_norm = getattr(torch.nn.functional, "fused_rms_norm", _rms_norm)
'''


def test_a_lookup_that_falls_back_on_a_function_of_the_module_compares_that_function():
    # `getattr(lib, "fast_op", _own_op)`: where the library lacks the name, callers get the module's own function
    assert "kernels.api.rms_norm: parameter 'eps' removed" in diff(LOOKUP_FALLBACK, LOOKUP_FALLBACK.replace(
        ", eps=1e-6", ""))


@pytest.mark.parametrize("statement", [
    "_set = getattr(object, '__setattr__')\n_set(rms_norm, '__defaults__', None)\n",
    "_kwdefaults = getattr(rms_norm, '__kwdefaults__')\n",
    "Norm = type('Norm', (), {'__init__': rms_norm})\n",
], ids=["looked-up-setter", "looked-up-kwdefaults", "class-made-by-type"])
def test_a_setter_or_class_reached_by_a_call_refuses_the_module(statement):
    source = "def rms_norm(x, weight, eps=1e-6):\n    return x\n\n\n" + statement
    assert module_surface(source, PATH).error is not None
