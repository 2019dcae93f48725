"""How kernel libraries pick an implementation per machine, read by G5 without importing them.

- `pkgutil.iter_modules(__path__)` lists the package's folders (to import each backend for its
  registration); it reads `__path__` and changes nothing, unlike `__path__.append(...)`;
- a package that imports each of its private subpackages for what it registers (`for _, modname, ispkg in
  pkgutil.iter_modules(__path__): if ispkg and modname.startswith("_"): importlib.import_module(...)`) binds
  no API name but the loop's; importing its public subpackages so would bind names the reader cannot list;
- liger-kernel's backend overlay copies the names of an implementation module chosen at run time over
  the package's own (`globals()[name] = getattr(impl, name)`): the surface read is the package's own
  definitions, what a machine that selects no implementation has, and a break in them is still caught;
- `try: import transformers; _AVAILABLE = True / except ImportError: _AVAILABLE = False` makes a flag of
  an optional dependency; `if _AVAILABLE:` (and `if not _AVAILABLE: raise ...` in a `__getattr__` hook) is
  read as installed, so the names the library has with transformers are its API, and a break among them
  is caught where importing without transformers would see none of them; so is
  `try: from transformers... import X as _X / except Exception: _X = None`, then `if _X is not None:`.
"""

from __future__ import annotations

import pytest

import gates.history.api_compat as api_compat
from gates.python_api.api_surface import module_surface
from gates.python_api.module_scope import module_scope
from gitrepo_builder import g5_after_edit as change, g5_of as g5, seeded_repo

OPS = "kernels/ops/__init__.py"
GEGLU = "kernels/ops/geglu.py"
REGISTRY = "kernels/ops/registry.py"
HF = "kernels/hf/__init__.py"
PATCHES = "kernels/hf/patches.py"

GEGLU_TEXT = "def geglu(a, b, *, approximate='tanh'):\n    return a\n"
REGISTRY_TEXT = "def select_impl(device):\n    return None\n"
OPS_TEXT = '''\
from kernels.ops.geglu import geglu


def _discover_impls():
    import importlib
    import pkgutil

    for _, modname, ispkg in pkgutil.iter_modules(__path__):
        if ispkg and not modname.startswith("_"):
            importlib.import_module(f"{__name__}.{modname}")


def _replace_with_impl_ops():
    import importlib

    from kernels.ops.registry import select_impl

    info = select_impl("cpu")
    if info is None:
        return
    impl_ops = importlib.import_module(info.module_path)
    names = getattr(impl_ops, "__all__", None) or [n for n in dir(impl_ops) if not n.startswith("_")]
    for name in names:
        globals()[name] = getattr(impl_ops, name)


_discover_impls()
_replace_with_impl_ops()
'''
BACKENDS = "kernels/ops/backends/__init__.py"
BACKENDS_TEXT = '''\
import importlib
import pkgutil

from kernels.ops.registry import select_impl

for _, modname, ispkg in pkgutil.iter_modules(__path__):
    if ispkg and modname.startswith("_"):
        importlib.import_module(f"{__name__}.{modname}")
'''
PATCHES_TEXT = "def apply_to_llama(model, *, rope=True, rms_norm=True):\n    return model\n"
HF_TEXT = '''\
import importlib

from kernels.ops.geglu import geglu

try:
    import transformers  # noqa: F401

    _TRANSFORMERS_AVAILABLE = True
except ImportError:
    _TRANSFORMERS_AVAILABLE = False


def __getattr__(name):
    if not _TRANSFORMERS_AVAILABLE:
        raise ImportError(f"{name} needs transformers")
    if name in {"apply_to_llama", "apply_to_qwen"}:
        return getattr(importlib.import_module("kernels.hf.patches"), name)
    raise AttributeError(name)


__all__ = ["geglu"]
if _TRANSFORMERS_AVAILABLE:
    __all__.extend(["apply_to_llama"])
'''


@pytest.fixture
def repo(tmp_path, monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("G5 imported a module it can read statically")

    monkeypatch.setattr(api_compat, "read_by_importing", refused)
    return seeded_repo(tmp_path / "repo", files={OPS: OPS_TEXT, GEGLU: GEGLU_TEXT, REGISTRY: REGISTRY_TEXT,
                                                  HF: HF_TEXT, PATCHES: PATCHES_TEXT, BACKENDS: BACKENDS_TEXT})


def reader(*modules):
    texts = {"kernels.ops.geglu": (GEGLU_TEXT, GEGLU), "kernels.ops.registry": (REGISTRY_TEXT, REGISTRY),
             "kernels.hf.patches": (PATCHES_TEXT, PATCHES)}
    return lambda dotted: texts.get(dotted)


def test_a_backend_overlay_package_is_read_statically():
    scope = module_scope(OPS_TEXT, OPS, read_module=reader(), module="kernels.ops")
    assert scope.error is None
    assert [name for name in scope.star_names() if not name.startswith("_")] == ["geglu"]


def test_a_change_behind_a_backend_overlay_is_judged_without_importing(repo):
    assert change(repo, GEGLU, "return a", "return a * b", "geglu: multiply") == []


def test_a_removed_parameter_behind_a_backend_overlay_is_reported(repo):
    assert change(repo, GEGLU, "a, b, *, approximate='tanh'", "a, b", "geglu: exact only") == [
        (GEGLU, "error", "public API break: kernels.ops.geglu.geglu: parameter 'approximate' removed; the public API "
                         "may only grow")]  # once: the package's re-export is the same definition


@pytest.mark.parametrize("statement, construct", [
    ("__path__.append('elsewhere')", "`__path__`"),
    ("from pkgutil import extend_path\n__path__ = extend_path(__path__, 'other_name')", "`__path__`"),
    ("from pkgutil import extend_path\n__path__ = extend_path(__path__, __name__)\n__path__.insert(0, 'x')",
     "`__path__`"),
    ("def extend():\n    import pkgutil\n    return pkgutil.extend_path(__path__, __name__)", "`__path__`"),
    ("def put(value):\n    globals()['geglu'] = value", "`globals()`"),
    ("def copy(impl_ops, names):\n    for name in names:\n        globals()[name] = getattr(impl_ops, name)",
     "`globals()`"),  # `impl_ops` may be anything, this module itself among them
    ("def copy(names):\n    import importlib\n    impl_ops = importlib.import_module('x')\n    impl_ops = None\n"
     "    for name in names:\n        globals()[name] = getattr(impl_ops, name)", "`globals()`"),
    ("def copy(names):\n    import importlib\n    impl_ops = importlib.import_module('x')\n"
     "    for name in names:\n        globals()[name] = getattr(impl_ops, 'geglu')", "`globals()`"),
])
def test_other_uses_of_path_and_globals_still_refuse_the_module(statement, construct):
    scope = module_scope(OPS_TEXT + "\n" + statement + "\n", OPS, read_module=reader(), module="kernels.ops")
    assert scope.error is not None and construct in scope.error


def test_a_package_that_shares_its_name_with_other_installations_is_read_statically(repo):
    # flash-attention: `__path__ = extend_path(__path__, __name__)`, so that FA2 and FA4 install side by side
    shared = "from pkgutil import extend_path\n\n__path__ = extend_path(__path__, __name__)\n\n" + OPS_TEXT
    scope = module_scope(shared, OPS, read_module=reader(), module="kernels.ops")
    assert scope.error is None
    assert change(repo, OPS, OPS_TEXT, shared, "Share the package name with the other build") == []


def test_a_package_importing_its_private_subpackages_for_registration_is_read_statically():
    scope = module_scope(BACKENDS_TEXT, BACKENDS, read_module=reader(), module="kernels.ops.backends")
    assert scope.error is None
    assert scope.names["select_impl"].source == "kernels.ops.registry:select_impl"


def test_a_removed_parameter_behind_a_registering_package_is_reported(repo):
    found = change(repo, REGISTRY, "select_impl(device)", "select_impl()", "registry: no device")
    assert (REGISTRY, "error", "public API break: kernels.ops.registry.select_impl: parameter 'device' removed; the "
            "public API may only grow") in found


@pytest.mark.parametrize("old, new", [
    ('if ispkg and modname.startswith("_"):', "if ispkg:"),  # public subpackages too: names the reader cannot list
    ('f"{__name__}.{modname}"', 'f"{__name__}.{ispkg}"'),
])
def test_a_package_importing_other_subpackages_by_a_computed_name_stays_unreadable(old, new):
    scope = module_scope(BACKENDS_TEXT.replace(old, new), BACKENDS, read_module=reader(),
                         module="kernels.ops.backends")
    assert scope.error is not None and "whose module the checker cannot compute" in scope.error


def test_a_module_with_an_optional_dependency_flag_is_read_as_installed():
    scope = module_scope(HF_TEXT, HF, read_module=reader(), module="kernels.hf")
    assert scope.error is None
    assert scope.exports == ["geglu", "apply_to_llama"]
    assert scope.names["apply_to_llama"].source == "kernels.hf.patches:apply_to_llama"


def test_a_name_dropped_from_the_installed_all_is_reported(repo):
    repo.write(HF, repo.read(HF).replace('"apply_to_llama", "apply_to_qwen"', '"apply_to_qwen"'))
    found = change(repo, HF, '__all__.extend(["apply_to_llama"])', "__all__.extend([])", "hf: no llama")
    assert found == [
        (HF, "error", "public API break: public name 'kernels.hf.apply_to_llama' removed; the public API may only "
                      "grow")]


def test_a_removed_parameter_of_a_name_handed_out_with_the_dependency_is_reported(repo):
    found = change(repo, PATCHES, "*, rope=True, rms_norm=True", "*, rope=True", "patches: rms norm always")
    assert found == [(PATCHES, "error", "public API break: kernels.hf.patches.apply_to_llama: parameter 'rms_norm' "
                      "removed; the public API may only grow")]  # once: kernels.hf hands out the same definition


@pytest.mark.parametrize("text", [
    HF_TEXT.replace("    _TRANSFORMERS_AVAILABLE = True\n", "    _TRANSFORMERS_AVAILABLE = True\n    x = 1\n"),
    HF_TEXT.replace("import transformers  # noqa: F401", "from kernels.ops import geglu as _g"),
    HF_TEXT.replace("__all__ = [", "_TRANSFORMERS_AVAILABLE = len('x') > 2\n__all__ = ["),
], ids=["more-than-a-flag-in-try", "flag-of-an-own-module", "flag-rebound"])
def test_a_flag_that_is_not_only_a_dependency_s_still_refuses_a_differing_all(text):
    scope = module_scope(text, HF, read_module=reader(), module="kernels.hf")
    assert scope.error is not None and "`__all__` that differs between the paths" in scope.error


OUTPUTS = "kernels/hf/outputs.py"
OUTPUTS_TEXT = '''\
from dataclasses import dataclass

try:
    from transformers.models.gemma3.modeling_gemma3 import Gemma3CausalLMOutputWithPast as _Gemma3Output
except Exception:
    _Gemma3Output = None

if _Gemma3Output is not None:

    @dataclass
    class LigerGemma3Output(_Gemma3Output):
        token_accuracy: float = None
'''


def test_a_class_defined_where_an_optional_import_works_is_read_as_installed():
    scope = module_scope(OUTPUTS_TEXT, OUTPUTS, module="kernels.hf.outputs")
    assert scope.error is None
    assert scope.names["LigerGemma3Output"].kind == "class"


@pytest.mark.parametrize("old, new", [
    ("    _Gemma3Output = None\n", "    _Gemma3Output = object\n"),  # a stand-in, not None: both paths bind a class
    ("except Exception:", "except:"),
    ("from transformers.models.gemma3.modeling_gemma3 import", "from kernels.hf.models import"),
])
def test_a_guard_that_is_not_an_optional_import_s_leaves_the_class_defined_on_that_path_only(old, new):
    surface = module_surface(OUTPUTS_TEXT.replace(old, new), OUTPUTS, module="kernels.hf.outputs")
    assert surface.error is None
    assert surface.entries["LigerGemma3Output"].limits == {"bound-only-where:`if _Gemma3Output is not None:`"}
