"""G5 follows star imports: `from .impl import *` in a package exports impl's names.

The record-level gate (`api.adds` must be exported by a declared package) and the
diff-based check (`--base`, a change to the star-imported module breaks the package
that re-exports it) both read the names through the star import.
"""

from __future__ import annotations

import pytest

from gates.checks.context import GateContext
from gates.checks.g5_compatibility import _exported_names, check
from gates.model.findings import Status
from gates.model.record import parse_record
from gitrepo_builder import ADA, BEN, PAGED_API_RECORD, seeded_repo

IMPL = '''\
__all__ = ["attention_decode_paged"]


def attention_decode_paged(q, k_cache, v_cache, block_table):
    return None


def helper(x):
    return x
'''

RECORD = PAGED_API_RECORD


def write_package(root, files: dict[str, str]):
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return GateContext(root)


def test_exported_names_follow_a_star_import_and_its_dunder_all(tmp_path):
    ctx = write_package(tmp_path, {"kernels/__init__.py": "from .impl import *\n", "kernels/impl.py": IMPL})
    assert _exported_names(ctx, "kernels") == {"attention_decode_paged"}


def test_exported_names_without_dunder_all_are_the_public_top_level_names(tmp_path):
    impl = IMPL.replace('__all__ = ["attention_decode_paged"]\n', "import math\n_BLOCK = 64\n")
    ctx = write_package(tmp_path, {"kernels/__init__.py": "from kernels.impl import *\n", "kernels/impl.py": impl})
    assert _exported_names(ctx, "kernels") == {"attention_decode_paged", "helper", "math"}


def test_exported_names_never_hold_the_star_itself(tmp_path):
    ctx = write_package(tmp_path, {"kernels/__init__.py": "from torch import *\nfrom .missing import *\n"})
    assert _exported_names(ctx, "kernels") == set()


def test_a_name_added_through_a_star_import_passes_g5(tmp_path):
    ctx = write_package(tmp_path, {"kernels/__init__.py": "from .impl import *\n", "kernels/impl.py": IMPL})
    record = parse_record(RECORD, "docs/design/paged.md", tmp_path)
    result = check(record, ctx)
    assert result.status is Status.PASS, [f.format_text() for f in result.findings]


def test_a_name_behind_an_unparsable_star_import_fails_g5_and_says_why(tmp_path):
    files = {"kernels/__init__.py": "from .impl import *\n", "kernels/impl.py": "def attention_decode_paged(:\n"}
    ctx = write_package(tmp_path, files)
    result = check(parse_record(RECORD, "docs/design/paged.md", tmp_path), ctx)
    assert result.status is Status.FAIL
    (finding,) = result.findings
    assert "'attention_decode_paged' is declared as added but no declared package (kernels) exports it" in finding.message
    assert "kernels could not be read in full (cannot follow 'from .impl import *' (line 1): " \
           "kernels/impl.py does not parse" in finding.message


API = "kernels/decode_attention/api.py"
PACKAGE_INIT = "kernels/decode_attention/__init__.py"


@pytest.fixture
def reexporting_repo(tmp_path):
    """The seeded repository, with kernels.decode_attention re-exporting its api module by star import."""
    repo = seeded_repo(tmp_path / "repo")
    repo.branch("reexport")
    repo.write(PACKAGE_INIT, "from .api import *\n")
    repo.commit("Re-export the decode-attention host wrappers", who=BEN)
    repo.merge("reexport")
    return repo


def through_the_package(findings):
    return [(f.path, f.line, f.commit, f.message) for f in findings
            if f.gate == "G5" and f"through the star import in {PACKAGE_INIT}" in f.message]


def edit_api(repo, branch, edit, message):
    """On a new branch, rewrite the star-imported api module with `edit` and commit it; the commit's sha."""
    repo.branch(branch)
    repo.write(API, edit(repo.read(API)))
    return repo.commit(message, who=ADA)


def test_a_change_to_the_star_imported_module_breaks_the_package_that_re_exports_it(reexporting_repo):
    repo = reexporting_repo
    bad = edit_api(repo, "drop-scale", lambda text: text.replace(", *, scale=None, out=None", ", *, out=None"),
                   "Drop the unused scale parameter")
    assert through_the_package(repo.check()) == [(
        API, 6, bad,
        "public API break: kernels.decode_attention.attention_decode: parameter 'scale' removed "
        f"(through the star import in {PACKAGE_INIT}); the public API may only grow",
    )]


def test_a_name_dropped_from_the_star_imported_module_is_removed_from_the_package(reexporting_repo):
    repo = reexporting_repo
    bad = edit_api(repo, "rename", lambda text: text.replace("attention_decode", "decode_attention"),
                   "Rename the host wrapper")
    assert through_the_package(repo.check()) == [(
        API, 1, bad,
        "public API break: public name 'kernels.decode_attention.attention_decode' removed "
        f"(through the star import in {PACKAGE_INIT}); the public API may only grow",
    )]


def test_growing_the_star_imported_module_is_not_a_break_of_the_package(reexporting_repo):
    repo = reexporting_repo

    def grow(text):
        grown = text.replace('__all__ = ["attention_decode"]', '__all__ = ["attention_decode", "attention_decode_paged"]')
        return grown + "\n\ndef attention_decode_paged(q, k_cache, v_cache, block_table):\n    return None\n"

    edit_api(repo, "grow", grow, "Paged decode attention")
    assert through_the_package(repo.check()) == []
