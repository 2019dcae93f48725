"""G5 reads the package idioms real kernel libraries use, and catches a removed parameter behind each.

A library's package `__init__` hands names out through a module `__getattr__` over a name map
or an `_import_structure` lazy module; a dispatch module loads vendor code with
`importlib.import_module`; an optional vendor build falls back to a portable one under
`try`/`except ImportError`. Each repository below holds one idiom: an honest change passes,
and a parameter removed from the function behind the idiom is a break. Where a module stays
unreadable statically, its surface is read by importing base and head, with a note; only
when that fails too does the change fail.
"""

from __future__ import annotations

import pytest

from gates.python_api.api_surface import diff_surfaces, module_surface
from gates.python_api.module_scope import module_reader, opaque_when_unreadable
from gitrepo_builder import ADA, MAX, seeded_repo

POLICY = """\
schema_version: 1
default_level: L1
rules:
  - paths: ["src/kernels/**"]
    level: L4
api:
  packages: [kernels]
"""

OPS = "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n"
ROPE = "def apply_rope(q, k, cos, sin):\n    return q, k\n"

GETATTR_INIT = '''\
import importlib

_LAZY = {"rms_norm": ".ops.norm", "apply_rope": ".ops.rope"}
__all__ = ["rms_norm", "apply_rope"]


def __getattr__(name):
    if name in _LAZY:
        module = importlib.import_module(_LAZY[name], __name__)
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
'''

# A name that moved to another module, re-exported for old callers (flash-attention's `flash_fwd`).
REEXPORT_GETATTR_INIT = '''\
from .ops.norm import rms_norm


def __getattr__(name):
    if name == "apply_rope":
        from .ops.rope import apply_rope
        return apply_rope
    if name == "rope":
        import kernels.ops.rope as rope
        return rope
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
'''

IMPORT_STRUCTURE_INIT = '''\
from typing import TYPE_CHECKING

from .utils import _LazyModule

_import_structure = {"ops.norm": ["rms_norm"]}

try:
    import torch  # noqa: F401
except ImportError:
    pass
else:
    _import_structure["ops.rope"] = ["apply_rope"]

if TYPE_CHECKING:
    from .ops.norm import rms_norm
    from .ops.rope import apply_rope
else:
    import sys

    sys.modules[__name__] = _LazyModule(__name__, globals()["__file__"], _import_structure, module_spec=__spec__)
'''

DISPATCH = '''\
import importlib

_BACKENDS = ["cuda", "portable"]
for _backend in _BACKENDS:
    try:
        importlib.import_module(f".{_backend}", __package__)
    except ImportError:
        pass

_default = importlib.import_module("kernels.backends.portable")


def rms_norm(x, weight, *, eps=1e-6):
    return _default.rms_norm(x, weight, eps=eps)
'''

FALLBACK_INIT = '''\
try:
    from .cuda_norm import rms_norm
except ImportError:
    from .ops.norm import rms_norm

__all__ = ["rms_norm"]
'''

# A dependency that may be missing or too old: `torch.distributed.tensor` raises ImportError on one
# version and AttributeError on another, so libraries catch both.
VERSION_FALLBACK_INIT = FALLBACK_INIT.replace("except ImportError:", "except (ImportError, AttributeError):")

IDIOMS = {
    "module-getattr": {"src/kernels/__init__.py": GETATTR_INIT, "src/kernels/ops/__init__.py": "",
                       "src/kernels/ops/norm.py": OPS, "src/kernels/ops/rope.py": ROPE},
    "module-getattr-reexport": {"src/kernels/__init__.py": REEXPORT_GETATTR_INIT, "src/kernels/ops/__init__.py": "",
                                "src/kernels/ops/norm.py": OPS, "src/kernels/ops/rope.py": ROPE},
    "import-structure": {"src/kernels/__init__.py": IMPORT_STRUCTURE_INIT, "src/kernels/ops/__init__.py": "",
                         "src/kernels/ops/norm.py": OPS, "src/kernels/ops/rope.py": ROPE,
                         "src/kernels/utils.py": "class _LazyModule:\n    pass\n"},
    "import-module-dispatch": {"src/kernels/__init__.py": "from .backends.dispatch import rms_norm\n",
                               "src/kernels/backends/__init__.py": "",
                               "src/kernels/backends/dispatch.py": DISPATCH,
                               "src/kernels/backends/portable.py": OPS,
                               "src/kernels/backends/cuda.py": OPS},
    "import-error-fallback": {"src/kernels/__init__.py": FALLBACK_INIT, "src/kernels/ops/__init__.py": "",
                              "src/kernels/ops/norm.py": OPS, "src/kernels/cuda_norm.py": OPS},
    "import-or-attribute-error-fallback": {"src/kernels/__init__.py": VERSION_FALLBACK_INIT,
                                           "src/kernels/ops/__init__.py": "", "src/kernels/ops/norm.py": OPS,
                                           "src/kernels/cuda_norm.py": OPS},
}

# (the file whose function loses a parameter, what the package's own surface shows)
BREAKS = {
    "module-getattr": ("src/kernels/ops/rope.py", "kernels.apply_rope: parameter 'sin' removed"),
    "module-getattr-reexport": ("src/kernels/ops/rope.py", "kernels.apply_rope: parameter 'sin' removed"),
    "import-structure": ("src/kernels/ops/rope.py", "kernels.apply_rope: parameter 'sin' removed"),
    "import-module-dispatch": ("src/kernels/backends/dispatch.py", "kernels.rms_norm: parameter 'eps' removed"),
    "import-error-fallback": ("src/kernels/ops/norm.py", "kernels.rms_norm (ImportError fallback 1): parameter 'eps' "
                              "removed"),
    "import-or-attribute-error-fallback": ("src/kernels/ops/norm.py", "kernels.rms_norm (ImportError fallback 1): "
                                           "parameter 'eps' removed"),
}


def shrink(text: str) -> str:
    return text.replace(", *, eps=1e-6", "").replace(", sin)", ")")


def package_surface(files: dict[str, str]):
    return module_surface(files["src/kernels/__init__.py"], "src/kernels/__init__.py",
                          read_module=module_reader(files.get, ["src"]), module="kernels")


@pytest.mark.parametrize("idiom", sorted(IDIOMS))
def test_the_package_surface_is_read_through_the_idiom(idiom):
    surface = package_surface(IDIOMS[idiom])
    assert surface.error is None
    assert [p.name for p in surface.entries["rms_norm"].params] == ["x", "weight", "eps"]


@pytest.mark.parametrize("idiom", sorted(IDIOMS))
def test_a_parameter_removed_behind_the_idiom_shows_in_the_package_surface(idiom):
    path, message = BREAKS[idiom]
    files = IDIOMS[idiom]
    changes = diff_surfaces(package_surface(files), package_surface({**files, path: shrink(files[path])}))
    assert message in [c.message for c in changes]


def library(tmp_path, idiom: str):
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=POLICY)
    for path, text in IDIOMS[idiom].items():
        repo.write(path, text)
    repo.commit(f"The library's {idiom} package", who=MAX)
    return repo


def g5(findings, severity="error"):
    return [(f.path, f.message) for f in findings if f.gate == "G5" and f.severity == severity]


@pytest.mark.parametrize("idiom", sorted(IDIOMS))
def test_an_honest_change_behind_the_idiom_passes(tmp_path, idiom):
    repo = library(tmp_path, idiom)
    repo.branch("grow")
    path, _ = BREAKS[idiom]
    repo.write(path, repo.read(path).replace("(x, weight, *, eps=1e-6)", "(x, weight, *, eps=1e-6, out=None)")
               .replace("(q, k, cos, sin)", "(q, k, cos, sin, *, interleaved=False)"))
    repo.commit("A new keyword with a default", who=ADA)
    findings = repo.check()
    assert g5(findings) == [] and g5(findings, "warning") == []


@pytest.mark.parametrize("idiom", sorted(IDIOMS))
def test_a_parameter_removed_behind_the_idiom_fails_the_change(tmp_path, idiom):
    repo = library(tmp_path, idiom)
    repo.branch("shrink")
    path, _ = BREAKS[idiom]
    repo.write(path, shrink(repo.read(path)))
    repo.commit("Drop a parameter", who=ADA)
    assert any("parameter" in message and "removed" in message for _, message in g5(repo.check()))


def test_a_lazy_name_whose_target_is_gone_is_a_break(tmp_path):
    files = IDIOMS["module-getattr"]
    renamed = {**files, "src/kernels/ops/rope.py": ROPE.replace("apply_rope", "apply_rotary")}
    assert package_surface(renamed).error == "'apply_rope' is not bound by src/kernels/ops/rope.py (imported as " \
                                             "'apply_rope' at line 7)"


def test_a_module_only_importing_can_read_passes_with_a_note_and_its_break_is_caught(tmp_path):
    computed = OPS + "\n_NAMES = [n for n in ('rms_norm',)]\nexec('')\n"
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=POLICY, files={
        "src/kernels/__init__.py": "", "src/kernels/ops.py": computed})
    repo.branch("shrink")
    repo.write("src/kernels/ops.py", computed.replace(", *, eps=1e-6", ""))
    repo.commit("Drop a parameter", who=ADA)
    findings = repo.check()
    ((_, note),) = g5(findings, "warning")
    assert note.startswith("module kernels.ops cannot be read statically (the checker cannot read this module's "
                           "surface statically: `exec()` at src/kernels/ops.py:5), so its surface on base and head "
                           "was read by importing each in a subprocess")
    assert g5(findings) == [("src/kernels/ops.py", "public API break: kernels.ops.rms_norm: parameter 'eps' removed; "
                             "the public API may only grow")]


def test_a_module_neither_readable_nor_importable_fails_closed(tmp_path):
    unimportable = OPS + "\nimport vendor_runtime\nexec('')\n"
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=POLICY, files={
        "src/kernels/__init__.py": "", "src/kernels/ops.py": unimportable})
    repo.branch("shrink")
    repo.write("src/kernels/ops.py", unimportable.replace(", *, eps=1e-6", ""))
    repo.commit("Drop a parameter", who=ADA)
    ((path, message),) = g5(repo.check())
    assert "importing it in a subprocess failed too (importing kernels.ops failed: ModuleNotFoundError: No module " \
           "named 'vendor_runtime'; install the package's dependencies where gate-check runs to read it this way)" \
        in message


def test_removing_a_module_that_does_not_parse_takes_nothing_from_a_caller(tmp_path):
    # SageAttention once committed merge-conflict markers, then deleted the file: nobody could have imported it
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=POLICY, files={
        "src/kernels/__init__.py": "", "src/kernels/ops.py": OPS, "src/kernels/bad.py": "<<<<<<< HEAD\nx = 1\n"})
    repo.branch("drop")
    repo.delete("src/kernels/bad.py")
    repo.commit("Drop the broken module", who=ADA)
    assert g5(repo.check()) == []


def test_an_unreadable_module_that_names_an_edited_one_in_a_string_is_compared_as_its_importer(tmp_path):
    # `importlib.import_module("kernels._fast")` in a `try` whose handler leaves `rms_norm` unbound: deleting the
    # private module takes `rms_norm` away, which only importing the unchanged module shows
    api = ("import importlib\n\ntry:\n    _fast = importlib.import_module('kernels._fast')\n\n"
           "    def rms_norm(x, weight, eps=1e-6):\n        return x\nexcept ImportError:\n    pass\n")
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=POLICY, files={
        "src/kernels/__init__.py": "", "src/kernels/api.py": api, "src/kernels/_fast.py": "SPEED = 2\n"})
    repo.branch("drop")
    repo.delete("src/kernels/_fast.py")
    repo.commit("Drop the fast path", who=ADA)
    assert ("src/kernels/_fast.py", "public API break: public name 'kernels.api.rms_norm' removed (through the import "
            "in src/kernels/api.py); the public API may only grow") in g5(repo.check())


def test_removing_a_module_python_imports_but_the_checker_cannot_parse_is_a_break(tmp_path):
    # a generated 600-branch `elif` chain, deeper than the checker reads: Python still imports it, so callers may use it
    deep = "def rms_norm(x, eps=1e-6):\n    return x\n\n\nx = 1\nif x == 0:\n    y = 0\n" + \
        "".join(f"elif x == {i}:\n    y = {i}\n" for i in range(1, 600))
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=POLICY, files={
        "src/kernels/__init__.py": "", "src/kernels/ops.py": OPS, "src/kernels/deep.py": deep})
    repo.branch("drop")
    repo.delete("src/kernels/deep.py")
    repo.commit("Drop the generated module", who=ADA)
    messages = [message for _, message in g5(repo.check())]
    assert any("kernels.deep" in message for message in messages), messages


def test_removing_a_module_that_cannot_be_read_is_a_break_that_says_so(tmp_path):
    unreadable = OPS + "\nimport vendor_runtime\nexec('')\n"
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=POLICY, files={
        "src/kernels/__init__.py": "", "src/kernels/ops.py": unreadable})
    repo.branch("drop")
    repo.delete("src/kernels/ops.py")
    repo.commit("Drop the module", who=ADA)
    [(path, message)] = g5(repo.check())
    assert path == "src/kernels/ops.py" and message.startswith(
        "public API break: module kernels.ops is removed, and its surface on the base could not be read")


def test_a_package_that_points_its_path_elsewhere_is_not_read_by_importing(tmp_path):
    # `kernels.ops` comes from `_v2/ops.py` once `__path__` is changed: an import of the package shows its own names,
    # not where its modules come from, so the change fails instead of passing on the unchanged `ops.py`
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=POLICY, files={
        "src/kernels/__init__.py": "", "src/kernels/ops.py": OPS})
    repo.branch("redirect")
    repo.write("src/kernels/_paths.py", "import os\n\n\ndef extend_path(path, name):\n"
               "    return [os.path.join(p, '_v2') for p in path]\n")
    repo.write("src/kernels/__init__.py", "from kernels._paths import extend_path\n\n"
               "__path__ = extend_path(__path__, __name__)\n")
    repo.write("src/kernels/_v2/ops.py", OPS.replace(", *, eps=1e-6", ""))
    repo.commit("Serve the modules from _v2", who=ADA)
    findings = repo.check()
    assert g5(findings, "warning") == []
    ((path, message),) = g5(findings)
    assert path == "src/kernels/__init__.py" and "`__path__` (it changes where the package's modules are found)" \
        in message


def test_a_module_read_by_importing_compares_the_members_of_its_nested_classes(tmp_path):
    nested = "class Scheduler:\n    class Params:\n        def create(self, tile, swizzle=1):\n            pass\n" \
             "\n\nexec('')\n"
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=POLICY, files={
        "src/kernels/__init__.py": "", "src/kernels/ops.py": nested})
    repo.branch("shrink")
    repo.write("src/kernels/ops.py", nested.replace("tile, swizzle=1", "tile"))
    repo.commit("Drop a parameter of a nested class's method", who=ADA)
    assert ("src/kernels/ops.py", "public API break: kernels.ops.Scheduler.Params.create: parameter 'swizzle' "
            "removed; the public API may only grow") in g5(repo.check())


SWALLOWING_INIT = """\
import importlib

_EXPORTS = {"rms_norm": "ops", "apply_rope": "ops"}
try:
    import vendor_runtime
    for _name, _module in _EXPORTS.items():
        globals()[_name] = getattr(importlib.import_module("." + _module, __name__), _name)
except ImportError:
    pass
"""


def test_an_import_that_swallowed_a_missing_dependency_cannot_stand_for_the_api(tmp_path):
    """Without its dependency the package imports, but binds none of the names its source exports:
    both sides would read empty and every break behind them would pass."""
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=POLICY, files={
        "src/kernels/__init__.py": SWALLOWING_INIT, "src/kernels/ops.py": OPS})
    repo.branch("shrink")
    repo.write("src/kernels/__init__.py", SWALLOWING_INIT.replace('"apply_rope": "ops"', '"apply_rotary": "ops"'))
    repo.commit("Rename an export", who=ADA)
    ((path, message),) = g5(repo.check())
    assert path == "src/kernels/__init__.py"
    assert "importing it bound 0 of the 2 public names its source names (apply_rope, rms_norm): an import that " \
           "swallowed a missing dependency cannot stand for its API" in message


def test_all_computed_from_the_lazy_map_is_read():
    files = {**IDIOMS["module-getattr"], "src/kernels/__init__.py": GETATTR_INIT.replace(
        '__all__ = ["rms_norm", "apply_rope"]', "__all__ = sorted(_LAZY)")}
    surface = package_surface(files)
    assert surface.error is None and surface.exports == ["apply_rope", "rms_norm"]


def test_all_computed_from_a_map_the_module_changes_stays_unreadable():
    files = {**IDIOMS["module-getattr"], "src/kernels/__init__.py": GETATTR_INIT.replace(
        '__all__ = ["rms_norm", "apply_rope"]', '__all__ = list(_LAZY)\n_LAZY["extra"] = ".ops.extra"')}
    assert "a computed `__all__`" in package_surface(files).error


def test_a_module_nested_past_what_the_checker_follows_is_unreadable_not_a_crash():
    long_sum = " + ".join(["name"] * 3000)  # each `+` one level deeper than the last
    hook = f"_LAZY = {{'rms_norm': '.ops.norm'}}\n\n\ndef __getattr__(name):\n    if {long_sum} in _LAZY:\n" \
           "        return name\n    raise AttributeError(name)\n"
    files = {**IDIOMS["module-getattr"], "src/kernels/__init__.py": hook}
    error = package_surface(files).error
    assert error is not None and ("cannot evaluate" in error or "does not parse" in error)


REGISTERING_INIT = '''\
from .ops.norm import rms_norm

_registry = {}
exec("_registry['rms_norm'] = rms_norm")  # registers operators at import time: unreadable statically
'''


def registering_library(tmp_path, policy_tail: str):
    policy = POLICY + "  import_fallback: false\n" + policy_tail
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=policy)
    for path, text in {"src/kernels/__init__.py": REGISTERING_INIT, "src/kernels/ops/__init__.py": "",
                       "src/kernels/ops/norm.py": OPS}.items():
        repo.write(path, text)
    repo.commit("A package that registers its operators at import time", who=MAX)
    return repo


def test_a_module_the_base_policy_leaves_unchecked_is_skipped_with_a_warning(tmp_path):
    # FlagGems' `flag_gems/__init__.py` passes `globals()` to its registration, and importing it needs a GPU
    repo = registering_library(tmp_path, "  unchecked_modules: [kernels]\n")
    repo.branch("register-more")
    repo.write("src/kernels/__init__.py", REGISTERING_INIT + "exec(\"_registry['norm'] = rms_norm\")\n")
    repo.commit("Register one more", who=ADA)
    findings = repo.check()
    assert g5(findings) == []
    assert g5(findings, "warning") == [("src/kernels/__init__.py", "module kernels is listed in api.unchecked_modules "
                                        "of the base policy: its own surface is not compared")]


def test_a_module_beside_an_unchecked_one_is_still_checked(tmp_path):
    repo = registering_library(tmp_path, "  unchecked_modules: [kernels]\n")
    repo.branch("shrink")
    repo.write("src/kernels/ops/norm.py", shrink(OPS))
    repo.commit("Drop a parameter", who=ADA)
    assert ("src/kernels/ops/norm.py", "public API break: kernels.ops.norm.rms_norm: parameter 'eps' removed; the "
            "public API may only grow") in g5(repo.check())


def test_a_change_to_what_an_unchecked_module_imports_is_named_in_a_warning(tmp_path):
    # what `kernels` re-exports from `kernels.ops.norm` is not compared through `kernels`: the change says so
    repo = registering_library(tmp_path, "  unchecked_modules: [kernels]\n")
    repo.branch("touch")
    repo.write("src/kernels/ops/norm.py", OPS.replace("return x", "return x * 1"))
    repo.commit("Touch the norm", who=ADA)
    findings = repo.check()
    assert g5(findings) == []
    assert g5(findings, "warning") == [("src/kernels/__init__.py", "module kernels is listed in api.unchecked_modules "
                                        "of the base policy: what it imports from src/kernels/ops/norm.py, which this "
                                        "change edits, is not compared through it")]


def test_without_the_listing_the_unreadable_package_fails_the_change(tmp_path):
    repo = registering_library(tmp_path, "")
    repo.branch("register-more")
    repo.write("src/kernels/__init__.py", REGISTERING_INIT + "exec(\"_registry['norm'] = rms_norm\")\n")
    repo.commit("Register one more", who=ADA)
    assert any("`exec()`" in message for _, message in g5(repo.check()))


def test_an_unchanged_unreadable_importer_says_what_it_imports_and_the_ways_out(tmp_path):
    # unsloth's models import its kernels by `from ..kernels import *` and `exec()` patched code: a change to a kernel
    # reaches them, and neither reading works where gate-check runs
    repo = registering_library(tmp_path, "")
    repo.branch("touch")
    repo.write("src/kernels/ops/norm.py", OPS.replace("return x", "return x * 1"))
    repo.commit("Touch the norm", who=ADA)
    [(path, message)] = g5(repo.check())
    assert path == "src/kernels/ops/norm.py" and "`exec()`" in message
    assert "the module is unchanged, but it imports from src/kernels/ops/norm.py, which this change edits" in message
    assert "list it in the base policy's api.unchecked_modules" in message


def test_unchecked_modules_takes_patterns(tmp_path):
    repo = registering_library(tmp_path, "  unchecked_modules: [\"kern*\"]\n")
    repo.branch("register-more")
    repo.write("src/kernels/__init__.py", REGISTERING_INIT + "exec(\"_registry['norm'] = rms_norm\")\n")
    repo.write("src/kernels/ops/norm.py", shrink(OPS))
    repo.commit("Register one more, drop a parameter", who=ADA)
    findings = repo.check()
    assert g5(findings) == []  # `kern*` matches every module of the package, kernels.ops.norm too
    assert ("src/kernels/__init__.py", "module kernels is listed in api.unchecked_modules of the base policy: its own "
            "surface is not compared") in g5(findings, "warning")


def test_a_package_importing_from_an_unchecked_module_is_still_read(tmp_path):
    # unsloth's `kernels/__init__.py` imports `get_lora_parameters` from `kernels/utils.py`, which G5 cannot read
    policy = POLICY + "  import_fallback: false\n  unchecked_modules: [kernels.utils]\n"
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=policy)
    for path, text in {"src/kernels/__init__.py": "from .utils import get_lora_parameters\nfrom .ops.norm import rms_norm\n",
                       "src/kernels/utils.py": "def get_lora_parameters(proj):\n    return proj\n\n\nexec('')\n",
                       "src/kernels/ops/__init__.py": "", "src/kernels/ops/norm.py": OPS}.items():
        repo.write(path, text)
    repo.commit("A package that imports from a module G5 cannot read", who=MAX)
    repo.branch("touch")
    repo.write("src/kernels/ops/norm.py", OPS.replace("return x", "return x * 1"))
    repo.commit("Touch the norm", who=ADA)
    assert g5(repo.check()) == []
    repo.write("src/kernels/ops/norm.py", shrink(OPS))
    repo.commit("Drop a parameter", who=ADA)
    assert ("src/kernels/ops/norm.py", "public API break: kernels.ops.norm.rms_norm: parameter 'eps' removed; the "
            "public API may only grow") in g5(repo.check())


@pytest.mark.parametrize("package", [
    "from kernels.utils import deco\n\n\n@deco\ndef rms_norm(x):\n    return x\n",
    "from kernels.utils import Base\n\n\nclass Norm(Base):\n    pass\n",
], ids=["decorator-from-it", "base-class-from-it"])
def test_what_a_checked_definition_takes_from_an_unreadable_unchecked_module_changes_with_it(package):
    # the decorator or base class is not followed, so any change to the listed module changes the definition
    def surface(utils):
        files = {"kernels/__init__.py": package, "kernels/utils.py": utils + "exec('')\n"}
        reader = opaque_when_unreadable(module_reader(files.get, ["."]), lambda dotted: dotted == "kernels.utils")
        return module_surface(package, "kernels/__init__.py", read_module=reader, module="kernels")
    before = surface("def deco(fn):\n    return fn\n\n\nclass Base:\n    def __init__(self, eps):\n        pass\n")
    after = surface("def deco(fn):\n    return lambda x, dim: fn(x)\n\n\nclass Base:\n    def __init__(self, eps, dim):\n"
                    "        pass\n")
    assert before.error is None and after.error is None and diff_surfaces(before, after)


def test_a_test_of_a_name_from_an_unchecked_module_is_still_the_repository_s():
    # listed unchecked, `kernels.utils` is still the repository's: a flag it sets can move a definition unseen
    files = {"kernels/__init__.py": "", "kernels/utils.py": "HAS_XPU = False\nexec('')\n",
             "kernels/api.py": "from kernels.utils import HAS_XPU\n\nif HAS_XPU:\n    def rms_norm(x):\n        return x\n"}
    reader = opaque_when_unreadable(module_reader(files.get, ["."]), lambda dotted: dotted == "kernels.utils")
    surface = module_surface(files["kernels/api.py"], "kernels/api.py", read_module=reader, module="kernels.api")
    assert "the test reads a name of the repository" in (surface.error or ""), surface.error


@pytest.mark.parametrize("listed, message", [
    ("kernels.gone", "api.unchecked_modules lists kernels.gone, which is no module of the checked packages (kernels) "
                     "at head"),
    ('"kernels.models.*"', "api.unchecked_modules lists kernels.models.*, which matches no module of the checked "
                           "packages (kernels) at head"),
], ids=["name", "pattern"])
def test_an_unchecked_name_or_pattern_that_matches_no_module_is_an_error(tmp_path, listed, message):
    repo = registering_library(tmp_path, f"  unchecked_modules: [kernels, {listed}]\n")
    repo.branch("touch")
    repo.write("src/kernels/ops/norm.py", OPS.replace("return x", "return x * 1"))
    repo.commit("Touch the norm", who=ADA)
    assert [(p, m) for p, m in g5(repo.check()) if "unchecked_modules" in m] == [(".design-gates/policy.yaml", message)]
