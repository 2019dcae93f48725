"""Idioms of real kernel libraries that G5 reads as what they are, with a real break behind each still caught.

- `if is_peft_available(): from peft import X` binds a library's name on some paths only: it is no part of
  the module's API (unless `__all__` lists it), so the module stays readable;
- `setattr` on a function a function defines in its own body (a patch it installs elsewhere) changes that
  call's object, not the module's surface;
- keyword-only parameters have no position: reordering them breaks no caller, while moving a
  positional-or-keyword parameter does;
- `with warnings.catch_warnings():` lets every exception through, so what its body binds is bound
  (flash-linear-attention imports its optional kernels inside one); a context manager that may
  swallow one (`contextlib.suppress`, any of the library's own) still leaves its body's names unsure;
- a function that looks a module up in `sys.modules` and only reads its attributes through `getattr` or
  `hasattr` (flash-linear-attention's tensor cache reads a flag of `fla.utils` so) changes no module;
- `fla.utils` gives its device flags lower-case aliases with a function it calls once at module level
  (`setattr(sys.modules[__name__], key.lower(), getattr(...))` over a literal tuple): each alias is bound
  to what its name is, so the module is read, and an alias that goes away is a break;
- a device function that is the library's own where Triton has it and a kernel where it does not
  (`if HAS_GATHER: gather = tl.gather / else: @triton.jit def gather(...)`, flash-linear-attention's
  `fla.ops.utils.op`) is a kernel on every path, so the module is read; with a decorator that is not
  an internal one, or a fallback from the repository, it stays unreadable;
- a name every path sets by one assignment (`torch_compile = torch.compile(...)` on one path and
  `torch_compile = identity_decorator` on the other) is a constant of either value; a path that binds it
  any other way, or twice, leaves the module unreadable;
- a flag attribute set on a function the module binds only by `def` (`_torch_compile._skip_grpo = True`)
  changes no signature; a signature attribute, a class's member or a name bound otherwise too still
  refuses the module;
- `if version > X: from transformers... import CacheLayerMixin / else: CacheLayerMixin = object` is the
  library's name on every path (a builtin class stands in for it), no name of the module's own;
- a class (or function) defined on each path through a version check (`class Cache(FLACache)` /
  `class Cache(LegacyFLACache)`) is read with each definition, every one compared; paths that define it
  as different kinds, or give its members different signatures, keep the module unreadable;
- a class defined in a `try` body that only imports a dependency (`try: from transformers... import
  MllamaTextRMSNorm; class MllamaNorm(MllamaTextRMSNorm) / except ImportError: pass`, unsloth's
  `rms_layernorm`) is read on that path; where the body runs the repository's own code, which may raise
  ImportError by the repository's state, it stays unreadable.

And the import fallback: a module read by importing it is imported again only where a file, folder listing
or path its import looked at changed, and a break behind it is still reported. It is imported from a part of
the tree first (the checked packages, and what lies directly in the top folder); where it looked beyond that
part, it is imported again from the whole tree.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import gates.history.api_compat as api_compat
from gates.history.ratchet import check_history
from gates.python_api.api_surface import diff_surfaces, module_surface
from gates.python_api.module_scope import module_scope
from gates.python_api.scope_model import module_reader
from gitrepo_builder import ADA, MAX, POLICY, g5_after_edit as change, g5_of as g5, seeded_repo


def after_removal(tmp_path, path: str, text: str, old: str, new: str) -> list[tuple[str, str, str]]:
    """G5's findings once `old` becomes `new` in `path`, the one module (holding `text`) of a seeded package."""
    repo = seeded_repo(tmp_path / "repo", files={"kernels/ops/__init__.py": "", path: text})
    return change(repo, path, old, new, f"{path}: a parameter removed")


def removed(path: str, name: str, parameter: str) -> list[tuple[str, str, str]]:
    return [(path, "error", f"public API break: {name}: parameter '{parameter}' removed; the public API may only grow")]


FLAGS = "kernels/ops/flags.py"
MODEL = "kernels/ops/model.py"
PATCH = "kernels/ops/patch.py"

FLAGS_TEXT = "import importlib.util\n\nPEFT_AVAILABLE = importlib.util.find_spec('peft') is not None\n"
MODEL_TEXT = '''\
from kernels.ops.flags import PEFT_AVAILABLE

if PEFT_AVAILABLE:
    from peft.utils.other import ModulesToSaveWrapper


def lce_forward(self, input_ids=None, labels=None, *, skip_logits=None, return_dict=None):
    return input_ids
'''
PATCH_TEXT = '''\
import torch.nn as nn

_MARK = "_patched"


def apply_patch(model, *, rms_norm=True, swiglu=False):
    original = nn.LayerNorm.forward

    def patched_forward(self, x):
        return original(self, x)

    setattr(patched_forward, _MARK, True)
    setattr(patched_forward, "__wrapped__", original)
    patched_forward.__wrapped__ = original
    nn.LayerNorm.forward = patched_forward
    return model
'''


@pytest.fixture
def repo(tmp_path):
    return seeded_repo(tmp_path / "repo", files={"kernels/ops/__init__.py": "", FLAGS: FLAGS_TEXT,
                                                  MODEL: MODEL_TEXT, PATCH: PATCH_TEXT})


def test_a_library_name_imported_under_a_flag_is_no_part_of_the_surface(repo):
    assert change(repo, MODEL, "return input_ids", "return labels", "lce_forward: return the labels") == []


def test_a_removed_parameter_beside_a_library_name_imported_under_a_flag_is_reported(repo):
    assert change(repo, MODEL, "labels=None, *", "*", "lce_forward: no labels") == [
        (MODEL, "error", "public API break: kernels.ops.model.lce_forward: parameter 'labels' removed; the public "
                         "API may only grow")]


def test_a_library_name_imported_under_a_flag_stays_unreadable_when_all_lists_it():
    source = MODEL_TEXT + "\n__all__ = ['lce_forward', 'ModulesToSaveWrapper']\n"
    scope = module_scope(source, MODEL, read_module=lambda dotted: None, module="kernels.ops.model")
    assert "public name 'ModulesToSaveWrapper' is unbound or bound differently" in scope.error


def test_a_repository_name_imported_under_a_flag_stays_unreadable():
    source = MODEL_TEXT.replace("from peft.utils.other import", "from kernels.ops.wrappers import")
    reader = {"kernels.ops.wrappers": ("class ModulesToSaveWrapper:\n    pass\n", "kernels/ops/wrappers.py"),
              "kernels.ops.flags": (FLAGS_TEXT, FLAGS)}.get
    scope = module_scope(source, MODEL, read_module=reader, module="kernels.ops.model")
    assert "public name 'ModulesToSaveWrapper' is unbound or bound differently" in scope.error


DUMP_TEXT = '''\
import os

if os.environ.get("KERNELS_DUMP_PTX") is not None:
    from kernels.ops import ptx_dump

    ptx_dump.patch()


def rms_norm(x, weight, *, eps=1e-6):
    return x
'''
DUMP_READER = {"kernels.ops": ("", "kernels/ops/__init__.py"),
               "kernels.ops.ptx_dump": ("def patch():\n    pass\n", "kernels/ops/ptx_dump.py")}


def test_a_submodule_imported_under_a_flag_is_no_part_of_the_surface():
    # flash-attention's `if os.environ.get("CUTE_DSL_PTXAS_PATH"): from flash_attn.cute import cute_dsl_ptxas`
    scope = module_scope(DUMP_TEXT, "kernels/ops/norm.py", read_module=DUMP_READER.get, module="kernels.ops.norm")
    assert scope.error is None and "rms_norm" in scope.names


def test_a_removed_parameter_beside_a_submodule_imported_under_a_flag_is_reported(tmp_path):
    repo = seeded_repo(tmp_path / "repo", files={"kernels/ops/__init__.py": "", "kernels/ops/norm.py": DUMP_TEXT,
                                                  "kernels/ops/ptx_dump.py": "def patch():\n    pass\n"})
    assert change(repo, "kernels/ops/norm.py", ", *, eps=1e-6", "", "rms_norm: no eps") == \
        removed("kernels/ops/norm.py", "kernels.ops.norm.rms_norm", "eps")


@pytest.mark.parametrize("package", ["ptx_dump = None\n", "def ptx_dump():\n    pass\n"],
                         ids=["package-binds-the-name", "package-defines-the-name"])
def test_a_flagged_import_the_package_shadows_is_read_on_the_path_the_environment_picks(package):
    # the test reads an environment variable only: the name is the package's `ptx_dump` where it is set
    reader = {**DUMP_READER, "kernels.ops": (package, "kernels/ops/__init__.py")}.get
    scope = module_scope(DUMP_TEXT, "kernels/ops/norm.py", read_module=reader, module="kernels.ops.norm")
    assert scope.error is None and scope.bound_only_where("ptx_dump") is not None


def test_a_flagged_import_of_a_function_is_read_on_the_path_the_environment_picks():
    source = DUMP_TEXT.replace("from kernels.ops import ptx_dump", "from kernels.ops.ptx_dump import patch as ptx_dump")
    scope = module_scope(source, "kernels/ops/norm.py", read_module=DUMP_READER.get, module="kernels.ops.norm")
    assert scope.error is None and scope.bound_only_where("ptx_dump") is not None
    flagged = source.replace('os.environ.get("KERNELS_DUMP_PTX") is not None', "DUMP")
    flagged = flagged.replace("import os\n", "from kernels.ops.ptx_dump import DUMP\n")
    reader = {**DUMP_READER, "kernels.ops.ptx_dump": ("DUMP = False\n\n\ndef patch():\n    pass\n",
                                                       "kernels/ops/ptx_dump.py")}.get
    refused = module_scope(flagged, "kernels/ops/norm.py", read_module=reader, module="kernels.ops.norm")
    assert "public name 'ptx_dump' is unbound or bound differently" in refused.error  # a flag of the repository's


def test_setattr_on_a_nested_local_function_leaves_the_module_readable(repo):
    assert change(repo, PATCH, "return model", "return model  # patched", "apply_patch: note") == []
    assert change(repo, PATCH, "return original(self, x)", "return original(self, x) * 1",
                  "apply_patch: the patched forward scales by one") == []


def test_a_removed_parameter_beside_a_patched_local_function_is_reported(repo):
    assert change(repo, PATCH, "*, rms_norm=True, swiglu=False", "*, rms_norm=True", "apply_patch: no swiglu") == [
        (PATCH, "error", "public API break: kernels.ops.patch.apply_patch: parameter 'swiglu' removed; the public "
                         "API may only grow")]


@pytest.mark.parametrize("statement", [
    "setattr(apply_patch, '__signature__', None)",  # a module-level function
    "def wrap(apply_patch):\n    setattr(apply_patch, '__signature__', None)\n",  # a parameter may be one
    "def rebind():\n    def apply_patch():\n        pass\n    apply_patch = globals_free = 1\n"
    "    setattr(apply_patch, 'x', 1)\n",  # a nested def the function also assigns otherwise
])
def test_setattr_on_what_may_be_a_module_level_function_still_refuses_the_module(statement):
    scope = module_scope(PATCH_TEXT + "\n" + statement + "\n", PATCH, module="kernels.ops.patch")
    assert scope.error is not None and "setattr(apply_patch, ...)" in scope.error


def test_reordered_keyword_only_parameters_are_no_break(repo):
    assert change(repo, MODEL, "*, skip_logits=None, return_dict=None", "*, return_dict=None, skip_logits=None",
                  "lce_forward: keyword-only parameters in another order") == []


def test_a_moved_positional_or_keyword_parameter_is_a_break(repo):
    found = change(repo, MODEL, "input_ids=None, labels=None,", "labels=None, input_ids=None,",
                   "lce_forward: labels first")
    assert (MODEL, "error", "public API break: kernels.ops.model.lce_forward: parameter 'input_ids' moved from "
            "position 2 to 3; the public API may only grow") in found


def test_a_parameter_inserted_before_a_positional_one_is_a_break(repo):
    found = change(repo, MODEL, "labels=None, *", "pixel_values=None, labels=None, *", "lce_forward: pixel values")
    assert (MODEL, "error", "public API break: kernels.ops.model.lce_forward: parameter 'labels' moved from "
            "position 3 to 4; the public API may only grow") in found


DYNAMIC = "kernels/ops/__init__.py"
IMPL = "kernels/ops/_impl.py"
OTHER = "kernels/ops/other.py"


def spy_on_imports(monkeypatch, note) -> None:
    """Each import G5 reads a module by calls `note(folder, module)` first; no import is kept from another test."""
    real = api_compat.read_by_importing

    def spied(folder, module, *args, **kwargs):
        note(folder, module)
        return real(folder, module, *args, **kwargs)

    monkeypatch.setattr(api_compat, "read_by_importing", spied)
    monkeypatch.setattr(api_compat, "_IMPORTED", {})


def history_breaks(repo, start: str) -> list[str]:
    """G5's errors for the history judged from `start` (the policy's history.enforce_from, set in a last commit)."""
    repo.write(".design-gates/policy.yaml", POLICY + f"history:\n  enforce_from: {start}\n")
    repo.commit("Judge the history", who=MAX)
    return [f.message for f in check_history(repo.root).findings if f.gate == "G5" and f.severity == "error"]


def test_an_import_is_repeated_only_where_what_it_looked_at_changed_and_a_break_behind_it_is_caught(
        tmp_path, monkeypatch):
    imports = []
    spy_on_imports(monkeypatch, lambda folder, module: imports.append(module))
    repo = seeded_repo(tmp_path / "repo", files={
        IMPL: "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n",
        OTHER: "def other(x):\n    return x\n",
        DYNAMIC: "from kernels.ops._impl import rms_norm\n\nexec('')\n"})
    start = repo.sha("HEAD")
    repo.write(IMPL, "def rms_norm(x, weight, *, eps=1e-6):\n    return x * 1\n")
    repo.commit("rms_norm: a body change", who=ADA)
    repo.write(OTHER, "def other(x):\n    return x * 1\n")
    repo.commit("other: a body change", who=ADA)
    repo.write(IMPL, "def rms_norm(x, weight):\n    return x * 1\n")
    repo.commit("rms_norm: no eps", who=ADA)
    repo.write(".design-gates/policy.yaml", POLICY + f"history:\n  enforce_from: {start}\n")
    repo.commit("Judge the history", who=MAX)

    result = check_history(repo.root)
    found = [(f.path, f.severity, f.message) for f in result.findings if f.gate == "G5"]
    breaks = [item for item in found if item[1] == "error"]
    assert breaks == [(IMPL, "error", "public API break: kernels.ops.rms_norm: parameter 'eps' removed (through the "
                                      "import in kernels/ops/__init__.py); the public API may only grow")]
    # the body change: base and head; the break: head only (its base is the first change's head, unchanged since)
    assert imports == ["kernels.ops"] * 3


def test_the_base_is_imported_before_the_head_and_never_beside_it(tmp_path, monkeypatch):
    # the head's import runs the change's code: it must not run while the base is read, nor before it
    events = []
    real = api_compat.read_by_importing

    def logged(folder, module, *args, **kwargs):
        events.append(("start", Path(folder).name.split("-")[1]))
        try:
            return real(folder, module, *args, **kwargs)
        finally:
            events.append(("end", Path(folder).name.split("-")[1]))

    monkeypatch.setattr(api_compat, "read_by_importing", logged)
    monkeypatch.setattr(api_compat, "_IMPORTED", {})
    repo = seeded_repo(tmp_path / "repo", files={
        IMPL: "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n",
        DYNAMIC: "from kernels.ops._impl import rms_norm\n\nexec('')\n"})
    start = repo.sha("HEAD")
    repo.write(IMPL, "def rms_norm(x, weight):\n    return x\n")
    repo.commit("rms_norm: no eps", who=ADA)
    head = repo.sha("HEAD")
    repo.write(".design-gates/policy.yaml", POLICY + f"history:\n  enforce_from: {start}\n")
    repo.commit("Judge the history", who=MAX)

    result = check_history(repo.root)
    breaks = [(f.path, f.message) for f in result.findings if f.gate == "G5" and f.severity == "error"]
    assert breaks == [(IMPL, "public API break: kernels.ops.rms_norm: parameter 'eps' removed (through the import in "
                             "kernels/ops/__init__.py); the public API may only grow")]
    assert events == [("start", start[:12]), ("end", start[:12]), ("start", head[:12]), ("end", head[:12])]


def test_an_import_reads_the_package_from_a_part_of_the_tree(tmp_path, monkeypatch):
    seen = []
    spy_on_imports(monkeypatch, lambda folder, module: seen.append(
        sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file())))
    repo = seeded_repo(tmp_path / "repo", files={
        IMPL: "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n",
        DYNAMIC: "from kernels.ops._impl import rms_norm\n\nexec('')\n",
        "docs/big/table.csv": "a,b\n" * 1000})
    start = repo.sha("HEAD")
    repo.write(IMPL, "def rms_norm(x, weight):\n    return x\n")
    repo.commit("rms_norm: no eps", who=ADA)

    assert history_breaks(repo, start) == ["public API break: kernels.ops.rms_norm: parameter 'eps' removed (through "
                                           "the import in kernels/ops/__init__.py); the public API may only grow"]
    assert len(seen) == 2  # base and head, each once, from the part
    assert all(not any(path.startswith(("docs/", "tests/")) for path in files) and DYNAMIC in files
               for files in seen)


VENDORING = """\
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "vendor"))
from vendored import rms_norm  # noqa: E402

exec('')
"""


def test_an_import_that_looked_beyond_the_part_is_read_again_from_the_whole_tree(tmp_path, monkeypatch):
    imports = []
    spy_on_imports(monkeypatch, lambda folder, module: imports.append((folder / "vendor" / "vendored.py").exists()))
    repo = seeded_repo(tmp_path / "repo", files={
        "vendor/vendored.py": "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n",
        DYNAMIC: VENDORING})
    start = repo.sha("HEAD")
    repo.write("vendor/vendored.py", "def rms_norm(x, weight):\n    return x\n")
    repo.write(DYNAMIC, VENDORING + "\nVERSION = 2\n")
    repo.commit("rms_norm: no eps (vendored)", who=ADA)

    assert history_breaks(repo, start) == ["public API break: kernels.ops.rms_norm: parameter 'eps' removed; the "
                                           "public API may only grow"]
    assert sorted(imports) == [False, False, True, True]  # the part (no vendor/ files), then the whole tree


FLAGGED = """\
import os
import subprocess

CONFIG = os.path.join(os.path.dirname(__file__), "..", "..", "config")


def _there():
    {test}


exec('')
if _there():
    def rms_norm(x, weight, *, eps=1e-6):
        return x
else:
    def rms_norm(x, weight):
        return x
"""

PROBES = {
    "access": "return os.access(os.path.join(CONFIG, 'fast.flag'), os.F_OK)",
    "dir-fd": "try:\n        return bool(os.stat('fast.flag', dir_fd=os.open(CONFIG, os.O_RDONLY)))\n"
              "    except OSError:\n        return False",
    "another-process": "return subprocess.run(['test', '-e', os.path.join(CONFIG, 'fast.flag')]).returncode == 0",
    "mkdir": "try:\n        os.mkdir(os.path.join(CONFIG, 'fast.flag'))\n    except FileExistsError:\n        return True\n"
             "    except OSError:\n        return False\n    os.rmdir(os.path.join(CONFIG, 'fast.flag'))\n    return False",
}


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_an_import_that_tested_a_path_beyond_the_part_is_read_again_from_the_whole_tree(tmp_path, monkeypatch, probe):
    """The part has no `config/fast.flag`: read there, both sides take the `else` path and the break is not seen. A
    path tested by name is noted; one reached through a file descriptor or another process makes the part unsure."""
    spy_on_imports(monkeypatch, lambda folder, module: None)
    module = FLAGGED.replace("{test}", PROBES[probe])
    repo = seeded_repo(tmp_path / "repo", files={"config/fast.flag": "", DYNAMIC: module})
    start = repo.sha("HEAD")
    repo.write(DYNAMIC, module.replace(", *, eps=1e-6", ""))
    repo.commit("rms_norm: no eps on the fast path", who=ADA)

    assert history_breaks(repo, start) == ["public API break: kernels.ops.rms_norm: parameter 'eps' removed; the "
                                           "public API may only grow"]


CATCHING = """\
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    try:
        from mamba_ssm.ops import selective_scan_fn
    except ImportError:
        selective_scan_fn = None
    is_fast_path_available = selective_scan_fn is not None


def mamba_forward(x, *, use_fast_path=True):
    return x
"""


def test_names_bound_inside_catch_warnings_are_read():
    scope = module_scope(CATCHING, "kernels/ops/mamba.py", module="kernels.ops.mamba")
    assert scope.error is None
    assert scope.names["is_fast_path_available"].kind == "constant"


@pytest.mark.parametrize("context", ["contextlib.suppress(ImportError)", "warnings.catch_warnings() if x else y",
                                     "quiet()"])
def test_names_bound_inside_a_context_that_may_swallow_an_exception_stay_unsure(context):
    source = "import contextlib\n" + CATCHING.replace("warnings.catch_warnings()", context)
    scope = module_scope(source, "kernels/ops/mamba.py", module="kernels.ops.mamba")
    assert scope.error is not None and "public name 'is_fast_path_available' is unbound" in scope.error


def test_a_removed_parameter_beside_catch_warnings_is_reported(tmp_path):
    assert after_removal(tmp_path, "kernels/ops/mamba.py", CATCHING, "x, *, use_fast_path=True", "x") == removed(
        "kernels/ops/mamba.py", "kernels.ops.mamba.mamba_forward", "use_fast_path")


LOOKUP = """\
import functools
import sys

DISABLE_CACHE = False


def tensor_cache(fn):
    def cache_disabled():
        utils_module = sys.modules.get("kernels.utils")
        return getattr(utils_module, "DISABLE_CACHE", DISABLE_CACHE)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper
"""


def test_a_module_looked_up_in_sys_modules_only_to_read_an_attribute_leaves_the_module_readable():
    scope = module_scope(LOOKUP, "kernels/cache.py", module="kernels.cache")
    assert scope.error is None


@pytest.mark.parametrize("use", [
    'setattr(utils_module, "DISABLE_CACHE", True)',  # a write through the module looked up
    'utils_module.DISABLE_CACHE = True',
    'return utils_module',  # handed out: anything may be done with it
    'utils_module = sys.modules[__name__]\n        return getattr(utils_module, "x", None)',  # bound twice
])
def test_a_module_looked_up_in_sys_modules_and_used_otherwise_refuses_the_module(use):
    source = LOOKUP.replace('return getattr(utils_module, "DISABLE_CACHE", DISABLE_CACHE)', use)
    scope = module_scope(source, "kernels/cache.py", module="kernels.cache")
    assert scope.error is not None and "`sys.modules`" in scope.error


ALIASES = """\
import sys

from kernels.device import IS_AMD, IS_NVIDIA


def device_count(*, visible=True):
    return 1


def _register_aliases():
    current_module = sys.modules[__name__]
    for key in (
        'IS_AMD',
        'IS_NVIDIA',
        'IS_NPU',
    ):
        if hasattr(current_module, key):
            setattr(current_module, key.lower(), getattr(current_module, key))


_register_aliases()

del _register_aliases
"""
DEVICE = "IS_AMD = False\nIS_NVIDIA = True\n"


def test_names_aliased_by_a_registrar_called_at_module_level_are_read():
    reader = {"kernels.device": (DEVICE, "kernels/device.py")}.get
    scope = module_scope(ALIASES, "kernels/utils/__init__.py", read_module=reader, module="kernels.utils")
    assert scope.error is None
    assert scope.names["is_amd"].source == scope.names["IS_AMD"].source == "kernels.device:IS_AMD"
    assert "is_npu" not in scope.names and "_register_aliases" not in scope.names


def test_an_alias_dropped_from_the_registrar_is_a_break(tmp_path):  # a package: what it imports is its API
    repo = seeded_repo(tmp_path / "repo", files={"kernels/device.py": DEVICE, "kernels/utils/__init__.py": ALIASES})
    assert change(repo, "kernels/utils/__init__.py", "        'IS_AMD',\n", "", "utils: no amd alias") == [
        ("kernels/utils/__init__.py", "error", "public API break: public name 'kernels.utils.is_amd' removed; the "
                                                 "public API may only grow")]


@pytest.mark.parametrize("old, new", [
    ("_register_aliases()\n", "_register_aliases()\n_register_aliases()\n"),  # called twice
    ("_register_aliases()\n", "if IS_AMD:\n    _register_aliases()\n"),  # called on some paths only
    ("del _register_aliases\n", "REGISTER = _register_aliases\n"),  # handed out: called later, anywhere
    ("key.lower(), getattr", "'device_count', getattr"),  # rebinds another name
])
def test_a_registrar_used_otherwise_still_refuses_the_module(old, new):
    scope = module_scope(ALIASES.replace(old, new), "kernels/utils/__init__.py", module="kernels.utils")
    assert scope.error is not None and "`sys.modules`" in scope.error


OPS = "kernels/ops/op.py"
OPS_TEXT = """\
import triton
import triton.language as tl

from kernels.ops.flags import PEFT_AVAILABLE as HAS_GATHER

if HAS_GATHER:
    gather = tl.gather
else:
    @triton.jit
    def gather(src, index, axis):
        return src


def row_gather(x, index, *, axis=0):
    return x
"""


def test_a_kernel_or_the_library_s_own_device_function_on_every_path_is_no_part_of_the_surface(tmp_path):
    repo = seeded_repo(tmp_path / "repo", files={"kernels/ops/__init__.py": "", FLAGS: FLAGS_TEXT, OPS: OPS_TEXT})
    assert change(repo, OPS, "return src", "return index", "gather fallback: return the index") == []
    assert change(repo, OPS, "x, index, *, axis=0", "x, index", "row_gather: rows only") == [
        (OPS, "error", "public API break: kernels.ops.op.row_gather: parameter 'axis' removed; the public API may "
                       "only grow")]


def test_a_kernel_defined_on_one_path_only_is_no_part_of_the_surface():
    from gates.python_api.api_surface import module_surface

    source = OPS_TEXT.replace("gather = tl.gather", "pass")  # no `gather` where the library has one: a kernel still
    reader = {"kernels.ops.flags": (FLAGS_TEXT, FLAGS)}.get
    surface = module_surface(source, OPS, read_module=reader, module="kernels.ops.op")
    assert surface.error is None and "gather" not in surface.entries and "row_gather" in surface.entries


@pytest.mark.parametrize("edit", [
    ("@triton.jit", "@functools.cache"),                    # not a kernel decorator: a public function on one path
    ("gather = tl.gather", "from kernels.ops.flags import find_spec as gather"),  # the repository's own name
])
def test_a_device_function_fallback_that_may_be_public_stays_unreadable(edit):
    from gates.python_api.api_surface import module_surface

    source = "import functools\n" + OPS_TEXT.replace(*edit)
    reader = {"kernels.ops.flags": (FLAGS_TEXT, FLAGS)}.get
    surface = module_surface(source, OPS, read_module=reader, module="kernels.ops.op")
    assert surface.error is not None and "'gather'" in surface.error


COMPILE = "kernels/ops/compile.py"
COMPILE_TEXT = """\
import os

import torch


def identity_decorator(fn):
    return fn


use_compile = os.getenv("KERNELS_USE_COMPILE", "1") == "1"
if use_compile:
    torch_compile = torch.compile(fullgraph=True)
else:
    if os.getenv("KERNELS_WARN"):
        print("torch.compile is off")
    torch_compile = identity_decorator


def fused_addcmul(hidden, delta, *, scale=1.0):
    return hidden
"""


def test_a_name_every_path_sets_by_one_assignment_is_a_constant_of_either_value():
    """flash-linear-attention's `torch_compile`: `torch.compile(...)` on one path, a function on the other."""
    scope = module_scope(COMPILE_TEXT, COMPILE, read_module=lambda dotted: None, module="kernels.ops.compile")
    assert scope.error is None
    entry = scope.names["torch_compile"]
    assert (entry.kind, entry.value) == ("constant", "torch.compile(fullgraph=True) or identity_decorator "
                                                     "(depending on `if use_compile:`)")
    assert entry.fingerprint == scope.names["identity_decorator"].fingerprint  # the definition a path names


def test_a_removed_parameter_beside_a_name_set_on_two_paths_is_reported(tmp_path):
    assert after_removal(tmp_path, COMPILE, COMPILE_TEXT, "hidden, delta, *, scale=1.0", "hidden, delta") == removed(
        COMPILE, "kernels.ops.compile.fused_addcmul", "scale")


@pytest.mark.parametrize("edit", [
    ("    torch_compile = identity_decorator", "    def torch_compile(fn):\n        return fn"),
    ("    torch_compile = identity_decorator", "    from torch import compile as torch_compile"),
    ('        print("torch.compile is off")', "        torch_compile = None"),
    ("    torch_compile = identity_decorator", "    pass"),
])
def test_a_name_a_path_binds_otherwise_or_twice_stays_unreadable(edit):
    scope = module_scope(COMPILE_TEXT.replace(*edit), COMPILE, read_module=lambda dotted: None,
                         module="kernels.ops.compile")
    assert scope.error is not None and "public name 'torch_compile'" in scope.error


PATCHER = "kernels/ops/npu.py"
PATCHER_TEXT = """\
import torch

from kernels.ops.flags import PEFT_AVAILABLE as IS_NPU

if IS_NPU and not getattr(torch.compile, "_skip_grpo", False):
    _orig_torch_compile = torch.compile

    def _torch_compile(fn=None, /, **kwargs):
        return fn

    _torch_compile._skip_grpo = True
    torch.compile = _torch_compile


class AscendBackend:
    def chunk(self, q, k, *, scale=None):
        return q
"""


def test_a_flag_set_on_a_function_object_leaves_the_module_readable(tmp_path):
    """flash-linear-attention's NPU backend marks the `torch.compile` wrapper it installs with a flag attribute."""
    repo = seeded_repo(tmp_path / "repo", files={"kernels/ops/__init__.py": "", FLAGS: FLAGS_TEXT,
                                                  PATCHER: PATCHER_TEXT})
    assert change(repo, PATCHER, "k, *, scale=None", "k", "AscendBackend.chunk: no scale") == [
        (PATCHER, "error", "public API break: kernels.ops.npu.AscendBackend.chunk: parameter 'scale' removed; the "
                           "public API may only grow")]


@pytest.mark.parametrize("statement", [
    "_torch_compile.__wrapped__ = _orig_torch_compile",          # a signature attribute
    "AscendBackend.chunk = _torch_compile",                      # a class: its members are API
    "_torch_compile._skip_grpo = True\n    _torch_compile = None",  # bound otherwise too
])
def test_an_attribute_set_on_what_may_change_a_surface_still_refuses_the_module(statement):
    source = PATCHER_TEXT.replace("_torch_compile._skip_grpo = True", statement)
    scope = module_scope(source, PATCHER, read_module={"kernels.ops.flags": (FLAGS_TEXT, FLAGS)}.get,
                         module="kernels.ops.npu")
    assert scope.error is not None and "the checker cannot read" in scope.error


CACHE = "kernels/ops/cache.py"
CACHE_TEXT = """\
import transformers
from packaging import version

if version.parse(transformers.__version__) > version.parse("4.53.3"):
    from transformers.cache_utils import CacheLayerMixin
else:
    CacheLayerMixin = object


class KernelCacheLayer(CacheLayerMixin):
    def update(self, *, state=None, offset=1):
        return state
"""


def test_a_library_class_or_a_builtin_stand_in_by_version_is_the_library_s_name(tmp_path):
    """flash-linear-attention's `fla.models.utils`: transformers' `CacheLayerMixin` where it has one, else `object`."""
    scope = module_scope(CACHE_TEXT, CACHE, read_module=lambda dotted: None, module="kernels.ops.cache")
    assert scope.error is None
    assert scope.names["CacheLayerMixin"].source == "builtins:object | transformers.cache_utils:CacheLayerMixin"
    assert after_removal(tmp_path, CACHE, CACHE_TEXT, "state=None, offset=1", "state=None") == removed(
        CACHE, "kernels.ops.cache.KernelCacheLayer.update", "offset")


@pytest.mark.parametrize("stand_in", [
    "CacheLayerMixin = make_mixin()",                       # computed: not a builtin
    "object = type('object', (), {})\n    CacheLayerMixin = object",  # a name of the module's own
])
def test_a_stand_in_that_is_not_a_builtin_keeps_the_module_unreadable(stand_in):
    source = CACHE_TEXT.replace("CacheLayerMixin = object", stand_in)
    scope = module_scope(source, CACHE, read_module=lambda dotted: None, module="kernels.ops.cache")
    assert scope.error is not None and ("public name 'CacheLayerMixin'" in scope.error
                                        or "a class made by `type(...)`" in scope.error)


VERSIONED = "kernels/ops/versioned.py"
VERSIONED_TEXT = """\
import transformers
from packaging import version

NEW_CACHE = version.parse(transformers.__version__) > version.parse("4.53.3")


class KernelCache:
    def update(self, state, *, layer=0):
        return state


class LegacyKernelCache:
    def update(self, state, layer=0):
        return state


if NEW_CACHE:
    class Cache(KernelCache):
        def __init__(self, seen_tokens: int = 0, **kwargs):
            self.seen_tokens = seen_tokens
else:
    class Cache(LegacyKernelCache):
        def __init__(self, seen_tokens: int = 0, **kwargs):
            self.seen_tokens = seen_tokens
"""


def test_a_class_defined_on_each_version_path_is_read_with_each_definition():
    """flash-linear-attention's `fla.models.utils.Cache`: one base class per transformers version."""
    from gates.python_api.api_surface import module_surface

    surface = module_surface(VERSIONED_TEXT, VERSIONED, read_module=lambda dotted: None, module="kernels.ops.versioned")
    assert surface.error is None
    assert surface.entries["Cache"].bases != surface.entries["Cache (another path through `if NEW_CACHE:`, 1)"].bases


def test_a_break_on_the_version_paths_is_reported_on_each_path(tmp_path):
    assert after_removal(tmp_path, VERSIONED, VERSIONED_TEXT, "seen_tokens: int = 0, **kwargs", "**kwargs") == [
        *removed(VERSIONED, "kernels.ops.versioned.Cache.__init__", "seen_tokens"),
        *removed(VERSIONED, "kernels.ops.versioned.Cache (another path through `if NEW_CACHE:`, 1).__init__",
                 "seen_tokens")]


def last_path(edit: tuple[str, str]) -> str:
    """VERSIONED_TEXT with `edit` made on its last path."""
    source = VERSIONED_TEXT[::-1].replace(edit[0][::-1], edit[1][::-1], 1)[::-1]
    assert source != VERSIONED_TEXT
    return source


def test_version_paths_that_disagree_on_a_kind_stay_unreadable():
    source = last_path(("    class Cache(LegacyKernelCache):\n",
                        "    def Cache(seen_tokens=0):\n        pass\n\n    class _Unused(LegacyKernelCache):\n"))
    scope = module_scope(source, VERSIONED, read_module=lambda dotted: None, module="kernels.ops.versioned")
    assert scope.error is not None and "public name 'Cache'" in scope.error


def test_version_paths_whose_classes_differ_in_a_member_are_read_with_each_path_s_members():
    from gates.python_api.api_surface import module_surface

    source = last_path(("        def __init__(self, seen_tokens: int = 0, **kwargs):\n",
                        "        def __init__(self, **kwargs):\n"))
    surface = module_surface(source, VERSIONED, read_module=lambda dotted: None, module="kernels.ops.versioned")
    assert surface.error is None
    first, other = surface.entries["Cache.__init__"], surface.entries["Cache (another path through `if NEW_CACHE:`, 1).__init__"]
    assert [p.name for p in first.params] == ["self", "seen_tokens", "kwargs"]
    assert [p.name for p in other.params] == ["self", "kwargs"]


SCHEDULER_TEXT = '''\
from dataclasses import dataclass


class TileScheduler:
    @dataclass
    class Params:
        num_block: int
        num_head: int

        @staticmethod
        def create(args, *, loc=None, ip=None):
            return args

    class _Cache:
        def get(self, key, default):
            return default

    def __init__(self, params, *, loc=None):
        self.params = params
'''


def scheduler_changes(old: str, new: str) -> list[str]:
    before = module_surface(SCHEDULER_TEXT, "kernels/sched.py", module="kernels.sched")
    after = module_surface(SCHEDULER_TEXT.replace(old, new), "kernels/sched.py", module="kernels.sched")
    assert before.error is None and after.error is None
    return [change.message for change in diff_surfaces(before, after)]


def test_a_class_defined_in_a_class_body_is_read_with_its_members():
    # flash-attention's CuTe schedulers: `class SingleTileScheduler: @dataclass class Params(ParamsBase): ...`
    assert scheduler_changes("def create(args, *, loc=None, ip=None)", "def create(args, *, ip=None)") == [
        "kernels.sched.TileScheduler.Params.create: parameter 'loc' removed"]
    assert scheduler_changes("        num_head: int\n", "") == [
        "kernels.sched.TileScheduler.Params.__init__: parameter 'num_head' removed"]


def test_a_nested_class_that_grows_or_a_private_one_that_changes_is_no_break():
    assert scheduler_changes("ip=None):\n            return", "ip=None, stream=None):\n            return") == []
    assert scheduler_changes("def get(self, key, default)", "def get(self, key)") == []


def test_a_removed_nested_class_is_a_break():
    removed_class = SCHEDULER_TEXT.split("    @dataclass\n")[0] + "    def __init__(self, params, *, loc=None):\n" \
        "        self.params = params\n"
    before = module_surface(SCHEDULER_TEXT, "kernels/sched.py", module="kernels.sched")
    after = module_surface(removed_class, "kernels/sched.py", module="kernels.sched")
    assert any("TileScheduler.Params" in change.message and "removed" in change.message
               for change in diff_surfaces(before, after))


CUSTOM_OP_TEXT = '''\
import torch

if torch.__version__ >= "2.4.0":
    _custom_op = torch.library.custom_op
else:
    def noop_custom_op_wrapper(name, fn=None, /, *, mutates_args, device_types=None):
        return fn

    _custom_op = noop_custom_op_wrapper


def flash_attn_func(q, k, v, dropout_p=0.0, *, causal=False):
    return q
'''


def custom_op_changes(before: str, after: str) -> list[str]:
    old = module_surface(before, "kernels/iface.py", module="kernels.iface")
    new = module_surface(after, "kernels/iface.py", module="kernels.iface")
    assert old.error is None and new.error is None
    return [change.message for change in diff_surfaces(old, new)]


def test_a_function_only_an_old_dependency_needs_is_read_on_its_path():
    # flash-attention's `noop_custom_op_wrapper`, defined only where torch is older than 2.4
    assert custom_op_changes(CUSTOM_OP_TEXT, CUSTOM_OP_TEXT.replace("dropout_p=0.0, ", "")) == [
        "kernels.iface.flash_attn_func: parameter 'dropout_p' removed"]
    assert custom_op_changes(CUSTOM_OP_TEXT, CUSTOM_OP_TEXT.replace(", device_types=None", "")) == [
        "kernels.iface.noop_custom_op_wrapper: parameter 'device_types' removed"]


def test_a_public_function_moved_under_a_version_test_is_a_break():
    plain = "import torch\n\n\ndef flash_attn_func(q, k, v, *, causal=False):\n    return q\n"
    hidden = 'import torch\n\nif torch.__version__ >= "0":\n    def flash_attn_func(q, k, v, *, causal=False):\n' \
             '        return q\n'
    assert custom_op_changes(plain, hidden) == [
        "'kernels.iface.flash_attn_func' is now defined on one path through `if torch.__version__ >= '0':` only: "
        "where another path runs, callers lose it"]
    assert custom_op_changes(hidden, plain) == []  # defined everywhere now: it only grew


def test_a_function_defined_on_one_path_is_read_the_same_where_a_package_imports_it_by_name():
    # `from .iface import noop_custom_op_wrapper` reads it as the star import does: on its path, its limit with it
    def package(iface):
        files = {"kernels/__init__.py": "from .iface import noop_custom_op_wrapper\n", "kernels/iface.py": iface}
        return module_surface(files["kernels/__init__.py"], "kernels/__init__.py",
                              read_module=module_reader(files.get, ["."]), module="kernels")
    before = package(CUSTOM_OP_TEXT)
    assert before.error is None
    after = package(CUSTOM_OP_TEXT.replace(", device_types=None", ""))
    assert [c.message for c in diff_surfaces(before, after)] == [
        "kernels.noop_custom_op_wrapper: parameter 'device_types' removed"]
    moved = package(CUSTOM_OP_TEXT.replace('"2.4.0"', '"2.5.0"'))
    assert [c.message for c in diff_surfaces(before, moved)] == [
        "'kernels.noop_custom_op_wrapper' is now defined on one path through the else of `if torch.__version__ >= "
        "'2.5.0':` only: where another path runs, callers lose it"]


def test_a_name_two_paths_define_differently_or_a_nested_one_stays_unreadable():
    twice = CUSTOM_OP_TEXT.replace("    _custom_op = torch.library.custom_op\n",
                                   "    noop_custom_op_wrapper = torch.library.custom_op\n")
    assert "noop_custom_op_wrapper" in module_surface(twice, "kernels/iface.py", module="kernels.iface").error
    nested = CUSTOM_OP_TEXT.replace("    def noop_custom_op_wrapper", "    if torch.cuda.is_available():\n        pass\n"
                                    "    else:\n        def noop_custom_op_wrapper")
    nested = nested.replace("        return fn\n\n    _custom_op", "            return fn\n\n    _custom_op")
    assert "noop_custom_op_wrapper" in module_surface(nested, "kernels/iface.py", module="kernels.iface").error



VENDOR_CLASS_TEXT = '''\
import torch

try:
    from transformers.models.mllama.modeling_mllama import MllamaTextRMSNorm

    class MllamaNorm(MllamaTextRMSNorm):
        def forward(self, x, eps=1e-6):
            return x
except ImportError:
    pass


def rms_norm(x, weight):
    return x
'''


def test_a_class_defined_where_a_dependency_imports_is_read_on_that_path():
    # unsloth's `Unsloth_MllamaTextRMSNorm`, a subclass defined only where transformers has Mllama
    assert custom_op_changes(VENDOR_CLASS_TEXT, VENDOR_CLASS_TEXT.replace("weight)", "weight, eps=1e-6)")) == []
    assert custom_op_changes(VENDOR_CLASS_TEXT, VENDOR_CLASS_TEXT.replace("x, weight)", "x)")) == [
        "kernels.iface.rms_norm: parameter 'weight' removed"]
    assert custom_op_changes(VENDOR_CLASS_TEXT, VENDOR_CLASS_TEXT.replace(", eps=1e-6):", "):")) == [
        "kernels.iface.MllamaNorm.forward: parameter 'eps' removed"]


def test_a_class_moved_under_a_dependency_import_is_a_break():
    hidden = VENDOR_CLASS_TEXT.replace("class MllamaNorm(MllamaTextRMSNorm)", "class Norm(MllamaTextRMSNorm)")
    plain = "from transformers.models.mllama.modeling_mllama import MllamaTextRMSNorm\n\n\n" \
        "class Norm(MllamaTextRMSNorm):\n    def forward(self, x, eps=1e-6):\n        return x\n"
    assert custom_op_changes(plain, hidden) == [
        "'kernels.iface.Norm' is now defined on one path through `try:` importing "
        "transformers.models.mllama.modeling_mllama (MllamaTextRMSNorm) only: where another path runs, callers lose it"]


def test_a_name_added_to_the_dependency_import_of_its_try_body_is_a_break():
    # a dependency without the new name fails the body: the definition is gone there
    more = VENDOR_CLASS_TEXT.replace("import MllamaTextRMSNorm\n", "import MllamaTextRMSNorm, MllamaTextRMSNormV2\n")
    assert custom_op_changes(VENDOR_CLASS_TEXT, more) == [
        "'kernels.iface.MllamaNorm' is now defined on one path through `try:` importing "
        "transformers.models.mllama.modeling_mllama (MllamaTextRMSNorm, MllamaTextRMSNormV2) only: where another path "
        "runs, callers lose it"]


@pytest.mark.parametrize("body", [
    "    from .vendor import MllamaTextRMSNorm\n",                        # an import of the repository's own
    "    from transformers import MllamaTextRMSNorm\n    check_backend()\n",  # a call the repository answers
    "    from transformers import MllamaTextRMSNorm\n    FLAGS.value\n",   # a repository object's attribute
    "    import importlib\n    from transformers import MllamaTextRMSNorm\n"
    "    _C = importlib.import_module('kernels._C')\n",                 # an outside call that imports the repository
])
def test_a_class_defined_where_the_repository_may_raise_import_error_stays_unreadable(body):
    text = "from .flags import FLAGS, check_backend\n\ntry:\n" + body + \
        "    class MllamaNorm(MllamaTextRMSNorm):\n        pass\nexcept ImportError:\n    pass\n"
    assert "MllamaNorm" in (module_surface(text, "kernels/iface.py", module="kernels.iface").error or "")


FP8_TEXT = '''\
import os

import torch

from .compile import torch_compile


@torch_compile
def torch_linear(X, weight, weight_scale):
    return X


@torch_compile
def fbgemm_linear(X, weight, weight_scale, bias=None):
    return X


block_linear = torch_linear
try:
    import fbgemm_gpu

    if fbgemm_gpu.__version__ >= "1.4.0":
        block_linear = fbgemm_linear
except:
    pass
'''


def test_a_name_bound_to_one_of_two_decorated_functions_by_the_environment_is_read_with_both():
    # unsloth's `fp8_block_quant_linear`: the FBGEMM path where fbgemm_gpu is new enough, else the torch path
    assert custom_op_changes(FP8_TEXT, FP8_TEXT.replace("weight_scale, bias=None)", "weight_scale, bias)")) == [
        "kernels.iface.fbgemm_linear: parameter 'bias' was optional and is now required",
        "kernels.iface.block_linear: parameter 'bias' was optional and is now required"]



DISABLE_DYNAMO_TEXT = '''\
import torch


def fast_cross_entropy_loss(logits, labels, logit_softcapping=0, n_items=None):
    return logits


if torch.__version__ < "2.4.0" and not hasattr(fast_cross_entropy_loss, "__wrapped__"):
    fast_cross_entropy_loss = torch._disable_dynamo(fast_cross_entropy_loss)
'''


def test_a_function_wrapped_on_one_path_by_a_library_call_is_read_on_both():
    # unsloth's `fast_cross_entropy_loss`, wrapped by `torch._disable_dynamo` where torch is older than 2.4
    assert custom_op_changes(DISABLE_DYNAMO_TEXT, DISABLE_DYNAMO_TEXT.replace(", n_items=None", "")) == [
        "kernels.iface.fast_cross_entropy_loss: parameter 'n_items' removed",
        "kernels.iface.fast_cross_entropy_loss (another path through `if torch.__version__ < '2.4.0' and (not "
        "hasattr(fast_cross_entropy_loss, '__wrapped__')):`, 1): parameter 'n_items' removed"]


FBGEMM_TEXT = '''\
from packaging.version import Version


def linear(x, weight):
    return x


try:
    import fbgemm_gpu

    if Version(fbgemm_gpu.__version__) >= Version("1.4.0"):
        from kernels.fixes import suppress_printf
        with suppress_printf():
            _probed = True
except:
    pass
'''


@pytest.mark.parametrize("before_binding, readable", [
    ("", True),                                      # only fbgemm's import and version decide
    ("    check_backend()\n", False),                 # the repository's own code runs first
], ids=["environment", "repository-code-first"])
def test_a_helper_imported_where_a_new_enough_dependency_is_found_is_read_on_that_path(before_binding, readable):
    # unsloth's `fp8` imports `suppress_cuda_printf` only where fbgemm >= 1.4, inside `try: ... except: pass`
    text = FBGEMM_TEXT.replace("    import fbgemm_gpu\n", "    import fbgemm_gpu\n" + before_binding)
    text = text.replace("from packaging", "from kernels.fixes import check_backend\nfrom packaging") if before_binding \
        else text
    files = {"kernels/__init__.py": "from .iface import *\n", "kernels/iface.py": text,
             "kernels/fixes.py": "def suppress_printf():\n    pass\n\n\ndef check_backend():\n    pass\n"}
    reader = module_reader(files.get, ["."])
    package = module_surface(files["kernels/__init__.py"], "kernels/__init__.py", read_module=reader, module="kernels")
    assert (package.error is None) == readable, package.error
    if readable:
        assert "suppress_printf" in package.entries and "linear" in package.entries

REDUCTIONS_TEXT = '''\
import builtins

import triton


def max(inp, dim=None, keepdim=False):
    block = builtins.min(triton.next_power_of_2(inp.shape[-1]), 1024)
    return inp, block
'''


def test_import_builtins_used_only_to_call_a_shadowed_builtin_leaves_the_module_readable():
    # FlagGems names its reductions `min` and `max`, and calls Python's through `builtins.min(...)`
    surface = module_surface(REDUCTIONS_TEXT, "kernels/ops/max.py", module="kernels.ops.max")
    assert surface.error is None and [p.name for p in surface.entries["max"].params] == ["inp", "dim", "keepdim"]
    changed = module_surface(REDUCTIONS_TEXT.replace(", keepdim=False", ""), "kernels/ops/max.py",
                             module="kernels.ops.max")
    assert [c.message for c in diff_surfaces(surface, changed)] == [
        "kernels.ops.max.max: parameter 'keepdim' removed"]


def test_a_lookup_of_one_named_builtin_leaves_the_module_readable():
    # unsloth's notebook detection: `getattr(builtins, "get_ipython", None)`
    lookup = REDUCTIONS_TEXT + '\n\ndef in_notebook():\n    return getattr(builtins, "get_ipython", None) is not None\n'
    assert module_surface(lookup, "kernels/ops/max.py", module="kernels.ops.max").error is None
    unseen = lookup.replace('"get_ipython", None) is not None', '"exec")("x = 1")')
    assert module_surface(unseen, "kernels/ops/max.py", module="kernels.ops.max").error is not None


@pytest.mark.parametrize("use", [
    "builtins.max = max",                         # replaces a builtin
    "setter = builtins.setattr",                  # reads one as an object
    "builtins.exec('x = 1')",                     # calls one that changes a namespace
    "names = builtins.__dict__",                  # reads the namespace itself
])
def test_import_builtins_used_otherwise_still_refuses_the_module(use):
    surface = module_surface(REDUCTIONS_TEXT + use + "\n", "kernels/ops/max.py", module="kernels.ops.max")
    assert surface.error is not None


SORTED_ALL_TEXT = 'from .max import max\nfrom .min import min\n\n__all__ = ["max", "min"]\n'


@pytest.mark.parametrize("check", ["assert __all__ == sorted(__all__)", "assert len(set(__all__)) == len(__all__)"])
def test_an_assert_that_only_reads_all_leaves_the_package_readable(check):
    # FlagGems' `modules/__init__.py` and `patches/__init__.py` keep their lists sorted
    scope = module_scope(SORTED_ALL_TEXT + check + "\n", "kernels/ops/__init__.py", module="kernels.ops")
    assert scope.error is None and scope.exports == ["max", "min"]


@pytest.mark.parametrize("check", ["assert __all__.append('extra') is None", "assert keep(__all__)",
                                   "assert sorted(__all__, key=len)"])
def test_an_assert_that_may_change_all_still_refuses_the_package(check):
    scope = module_scope(SORTED_ALL_TEXT + check + "\n", "kernels/ops/__init__.py", module="kernels.ops")
    assert scope.error is not None and "__all__" in scope.error


OPTIONAL_EXTENSION = """\
import json

try:
    import causal_conv1d_cuda
except ImportError:
    causal_conv1d_cuda = None


def causal_conv1d(x, weight, *, activation=None):
    return x
"""


def test_an_optional_extension_imported_with_a_none_fallback_is_no_api_of_a_plain_module(tmp_path):
    """mamba's `try: import causal_conv1d_cuda / except ImportError: causal_conv1d_cuda = None`: the library's module
    where it is installed, as `import json` binds json; dropping it breaks no caller of the module's own API."""
    path = "kernels/ops/conv.py"
    text = OPTIONAL_EXTENSION
    dropped = text.replace("try:\n    import causal_conv1d_cuda\nexcept ImportError:\n    causal_conv1d_cuda = None\n", "")
    repo = seeded_repo(tmp_path / "dropped", files={"kernels/ops/__init__.py": "", path: text})
    assert change(repo, path, text, dropped, "conv: no optional extension") == []
    repo = seeded_repo(tmp_path / "broken", files={"kernels/ops/__init__.py": "", path: text})
    assert change(repo, path, ", *, activation=None", "", "conv: no activation") == [
        (path, "error", "public API break: kernels.ops.conv.causal_conv1d: parameter 'activation' removed; the public "
                        "API may only grow")]
