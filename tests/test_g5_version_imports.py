"""Triton modules pick library functions by version; G5 still reads them, and never passes one it cannot read.

Kernel libraries commonly bind a `libdevice` function differently per Triton version:

    if triton_version >= 3:
        from triton.language.extra.libdevice import rsqrt
    else:
        from triton.language.math import rsqrt

Every path binds `rsqrt`, each from a module outside the repository: which library module
supplies it is not part of the package's surface, so the module stays readable and a
parameter removed from its kernel wrappers is reported. A module that still cannot be read
fails the change, unless the change itself makes it readable.
"""

from __future__ import annotations

import pytest

from gates.python_api.module_scope import module_scope
from gitrepo_builder import ADA, MAX, POLICY, seeded_repo

VERSIONED = '''\
import triton

if triton.__version__ >= "3.0":
    try:
        from triton.language.extra.libdevice import rsqrt
    except ModuleNotFoundError:
        from triton.language.extra.cuda.libdevice import rsqrt
else:
    from triton.language.math import rsqrt


def rms_norm(x, weight, *, eps=1e-6, in_place=False):
    return x
'''

SRC_POLICY = POLICY.replace('"kernels/decode_attention/**"', '"src/kernels/decode_attention/**"')
PATH = "src/kernels/decode_attention/norm.py"


def test_a_name_every_path_imports_from_a_library_is_read_as_one_import():
    scope = module_scope(VERSIONED, "kernels/norm.py", read_module=lambda dotted: None)
    assert scope.error is None
    assert scope.names["rsqrt"].kind == "import"
    assert scope.names["rsqrt"].source == (
        "triton.language.extra.cuda.libdevice:rsqrt | triton.language.extra.libdevice:rsqrt | triton.language.math:rsqrt")


def test_a_library_name_that_a_path_leaves_unbound_is_no_part_of_the_surface():
    source = VERSIONED.replace("else:\n    from triton.language.math import rsqrt\n", "")
    scope = module_scope(source, "kernels/norm.py", read_module=lambda dotted: None)
    assert scope.error is None and scope.imported_when("rsqrt")
    assert "rsqrt" not in scope.star_names()


def test_a_library_name_that_a_path_leaves_unbound_keeps_the_module_unreadable_when_all_lists_it():
    source = VERSIONED.replace("else:\n    from triton.language.math import rsqrt\n", "")
    source += "\n__all__ = ['rms_norm', 'rsqrt']\n"
    scope = module_scope(source, "kernels/norm.py", read_module=lambda dotted: None)
    assert "public name 'rsqrt' is unbound or bound differently" in scope.error


def test_alternatives_from_the_repository_itself_stay_conditional():
    source = VERSIONED.replace("from triton.language.math import rsqrt", "from kernels.slow import rsqrt")
    reader = {"kernels.slow": ("def rsqrt(x):\n    return x\n", "kernels/slow.py")}.get
    scope = module_scope(source, "kernels/norm.py", read_module=reader)
    assert "public name 'rsqrt' is unbound or bound differently" in scope.error


@pytest.fixture
def repo(tmp_path):
    return seeded_repo(tmp_path / "repo", package_root="src/", policy=SRC_POLICY, files={PATH: VERSIONED})


def g5(findings):
    return [(f.path, f.line, f.severity, f.message) for f in findings if f.gate == "G5"]


def test_a_removed_parameter_of_a_versioned_triton_module_is_reported(repo):
    repo.branch("drop-in-place")
    repo.write(PATH, repo.read(PATH).replace(", in_place=False", ""))
    repo.commit("rms_norm: always out of place", who=ADA)
    assert (PATH, 12, "error", "public API break: kernels.decode_attention.norm.rms_norm: parameter 'in_place' "
            "removed; the public API may only grow") in g5(repo.check())


def test_a_module_unreadable_on_base_and_head_is_read_by_importing_it(repo):
    repo.write(PATH, VERSIONED + "\nexec('')\n")
    repo.commit("Code from before the checker", who=MAX)
    repo.branch("drop-in-place")
    repo.write(PATH, repo.read(PATH).replace(", in_place=False", ""))
    repo.commit("rms_norm: always out of place", who=ADA)
    found = g5(repo.check())
    assert [severity for _, _, severity, _ in found] == ["warning", "error"]
    assert "read by importing each in a subprocess" in found[0][3]
    assert found[1][3] == ("public API break: kernels.decode_attention.norm.rms_norm: parameter 'in_place' removed; "
                           "the public API may only grow")


def test_without_the_import_fallback_a_module_unreadable_on_base_and_head_fails_the_change(tmp_path):
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=SRC_POLICY + "  import_fallback: false\n",
                       files={PATH: VERSIONED})
    repo.write(PATH, VERSIONED + "\nexec('')\n")
    repo.commit("Code from before the checker", who=MAX)
    repo.branch("drop-in-place")
    repo.write(PATH, repo.read(PATH).replace(", in_place=False", ""))
    repo.commit("rms_norm: always out of place", who=ADA)
    ((path, _, severity, message),) = g5(repo.check())
    assert (path, severity) == (PATH, "error")
    assert message.endswith("and it is not readable at head either: a change to a module of a checked package must "
                            "be checkable, so make the module readable statically in this change")