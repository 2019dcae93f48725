"""G5 finds the API packages where they live (`src/` layouts) and never passes a package it cannot find."""

from __future__ import annotations

import pytest

from gates.checks.context import GateContext
from gates.checks.g5_compatibility import check
from gates.model.findings import Status
from gates.model.policy import parse_policy
from gates.model.record import parse_record
from gitrepo_builder import ADA, KERNEL_API, MAX, PAGED_API_RECORD, POLICY, GitRepo, seeded_repo

RECORD = PAGED_API_RECORD

INIT = "from .api import attention_decode_paged\n"
API = "def attention_decode_paged(q, k_cache, v_cache, block_table):\n    return None\n"


def record_check(root, files: dict[str, str], policy: str | None = None):
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    ctx = GateContext(root, policy=parse_policy(policy) if policy else None)
    return check(parse_record(RECORD, "docs/design/paged.md", root), ctx)


def messages(result):
    return [f.message for f in result.findings]


@pytest.mark.parametrize("layout", ["kernels", "src/kernels"])
def test_a_package_at_the_root_or_under_src_is_found(tmp_path, layout):
    result = record_check(tmp_path, {f"{layout}/__init__.py": INIT, f"{layout}/api.py": API})
    assert result.status is Status.PASS, messages(result)


def test_the_policy_names_other_package_roots(tmp_path):
    policy = "schema_version: 1\nrules: []\napi:\n  packages: [kernels]\n  package_roots: [python]\n"
    result = record_check(tmp_path, {"python/kernels/__init__.py": INIT, "python/kernels/api.py": API}, policy)
    assert result.status is Status.PASS, messages(result)


def test_a_declared_package_that_resolves_to_nothing_is_an_error(tmp_path):
    result = record_check(tmp_path, {"lib/kernels/__init__.py": INIT, "lib/kernels/api.py": API})
    assert result.status is Status.FAIL
    assert messages(result)[0] == (
        "declared package 'kernels' resolves to no module: looked for kernels/__init__.py, kernels.py, "
        "src/kernels/__init__.py, src/kernels.py (package roots ., src; set api.package_roots in the policy)")


def test_a_package_whose_surface_cannot_be_read_is_imported_to_confirm_the_added_name(tmp_path):
    result = record_check(tmp_path, {"src/kernels/__init__.py": INIT + "exec('')\n", "src/kernels/api.py": API})
    assert result.status is Status.PASS
    assert [(f.severity, f.message) for f in result.findings] == [(
        "warning", "package kernels cannot be read statically (the checker cannot read this module's surface "
        "statically: `exec()` at src/kernels/__init__.py:2), so the names it exports were read by importing it in a "
        "subprocess")]


def test_a_package_neither_readable_nor_importable_confirms_no_added_name(tmp_path):
    result = record_check(tmp_path, {"src/kernels/__init__.py": "import vendor_runtime\n" + INIT + "exec('')\n",
                                     "src/kernels/api.py": API})
    assert result.status is Status.FAIL
    assert messages(result) == [
        "'attention_decode_paged' cannot be confirmed as exported; kernels could not be read in full (the checker "
        "cannot read this module's surface statically: `exec()` at src/kernels/__init__.py:3; importing it in a "
        "subprocess failed too (importing kernels failed: ModuleNotFoundError: No module named 'vendor_runtime'))"]


def test_without_the_import_fallback_an_unreadable_package_confirms_no_added_name(tmp_path):
    policy = "schema_version: 1\nrules: []\napi:\n  import_fallback: false\n"
    result = record_check(tmp_path, {"src/kernels/__init__.py": INIT + "exec('')\n", "src/kernels/api.py": API},
                          policy)
    assert result.status is Status.FAIL
    assert messages(result) == [
        "'attention_decode_paged' cannot be confirmed as exported; kernels could not be read in full (the checker "
        "cannot read this module's surface statically: `exec()` at src/kernels/__init__.py:2)"]


def test_package_roots_are_checked_by_the_schema():
    with pytest.raises(Exception, match="does not match"):
        parse_policy("schema_version: 1\nrules: []\napi:\n  package_roots: [../outside]\n")


SRC_POLICY = POLICY.replace('"kernels/decode_attention/**"', '"src/kernels/decode_attention/**"')


@pytest.fixture
def src_repo(tmp_path):
    """The seeded repository with its kernel package under src/."""
    return seeded_repo(tmp_path / "repo", package_root="src/", policy=SRC_POLICY, files={
        "src/kernels/decode_attention/_impl.py": "def _decode_v1(q, k_cache, v_cache):\n    return None\n"})


def g5(findings):
    return [(f.path, f.line, f.severity, f.message) for f in findings if f.gate == "G5"]


def test_a_break_under_src_is_reported(src_repo):
    src_repo.branch("drop-scale")
    path = "src/kernels/decode_attention/api.py"
    src_repo.write(path, src_repo.read(path).replace(", *, scale=None, out=None", ", *, out=None"))
    src_repo.commit("Drop scale", who=ADA)
    assert (path, 6, "error", "public API break: kernels.decode_attention.api.attention_decode: parameter 'scale' "
            "removed; the public API may only grow") in g5(src_repo.check())


def test_a_policy_package_found_nowhere_is_an_error(src_repo):
    src_repo.branch("policy")
    src_repo.write(".design-gates/policy.yaml", SRC_POLICY.replace("  packages: [kernels]\n",
                                                                   "  packages: [kernels]\n  package_roots: [lib]\n"))
    src_repo.commit("Look for packages under lib/", who=ADA)
    src_repo.checkout("main")
    src_repo.git("merge", "-q", "--ff-only", "policy")
    src_repo.branch("touch")
    src_repo.write("README.md", "# kernels, touched\n")
    src_repo.commit("Touch the readme", who=ADA)
    assert (".design-gates/policy.yaml", 12, "error",
            "api package 'kernels' resolves to no module on base or head: looked for lib/kernels/__init__.py, "
            "lib/kernels.py (package roots lib; set api.package_roots); a misspelt name checks nothing: correct it "
            "in the policy, a change of the rules that waits for its reviewed record (or one single-pr change that "
            "carries the record and its approval)") in g5(src_repo.check())


def test_a_private_function_imported_under_a_public_name_is_diffed_through_the_import(src_repo):
    src_repo.branch("bind")
    init = "src/kernels/__init__.py"
    src_repo.write(init, src_repo.read(init) + "from .decode_attention._impl import _decode_v1 as attention_decode_v1\n")
    src_repo.commit("Expose the first decode path", who=ADA)
    src_repo.merge("bind")
    src_repo.branch("change-impl")
    impl = "src/kernels/decode_attention/_impl.py"
    src_repo.write(impl, "def _decode_v1(q, k_cache, v_cache, stream):\n    return None\n")
    src_repo.commit("The first decode path takes a stream", who=ADA)
    assert g5(src_repo.check()) == [(impl, 1, "error", "public API break: kernels."
                                     "attention_decode_v1: new parameter 'stream' has no default (callers break) (through the import "
                                     f"in {init}); the public API may only grow")]


def test_names_of_a_private_module_are_not_public_api_unless_a_public_module_exports_them(src_repo):
    src_repo.branch("private")
    helpers = "src/kernels/decode_attention/_helpers.py"
    src_repo.write(helpers, "def pick_tile(n, d):\n    return 64\n")
    src_repo.commit("A private helper module", who=ADA)
    src_repo.merge("private")
    src_repo.branch("rework")
    src_repo.write(helpers, "def pick_tile(n):\n    return 64\n")
    src_repo.commit("The helper no longer needs d", who=ADA)
    assert g5(src_repo.check()) == []


def test_a_new_module_the_checker_cannot_read_or_import_is_an_error(src_repo):
    src_repo.branch("lazy")
    path = "src/kernels/decode_attention/lazy.py"
    src_repo.write(path, "import vendor_runtime\n\n\ndef __getattr__(name):\n    return _load(name)\n")
    src_repo.commit("Lazy attributes", who=ADA)
    assert g5(src_repo.check()) == [(path, 1, "error", "module kernels.decode_attention.lazy the checker cannot read "
                                     "this module's surface statically: a module-level `def __getattr__` hook the checker "
                                     f"cannot evaluate (`_load(name)`) at {path}:4; importing it in a subprocess failed "
                                     "too (importing kernels.decode_attention.lazy failed: ModuleNotFoundError: No module "
                                     "named 'vendor_runtime'; install the package's dependencies where gate-check runs to "
                                     "read it this way); a module of a checked package must be readable, or listed in "
                                     "the base policy's api.unchecked_modules")]


def test_a_new_module_read_only_by_importing_it_passes_with_a_note(src_repo):
    src_repo.branch("lazy")
    path = "src/kernels/decode_attention/lazy.py"
    src_repo.write(path, "def __getattr__(name):\n    return _load(name)\n")
    src_repo.commit("Lazy attributes", who=ADA)
    ((found_path, _, severity, message),) = g5(src_repo.check())
    assert (found_path, severity) == (path, "warning")
    assert "so its surface on base and head was read by importing each in a subprocess" in message


def test_a_module_unreadable_on_the_base_is_a_warning_not_a_silent_pass(src_repo):
    path = "src/kernels/decode_attention/api.py"
    src_repo.write(path, src_repo.read(path) + "\nexec('')\n")
    src_repo.commit("Code from before the checker", who=MAX)
    src_repo.branch("readable")
    src_repo.write(path, KERNEL_API)
    src_repo.commit("Make the module readable", who=ADA)
    found = g5(src_repo.check())
    assert {(found_path, severity) for found_path, _, severity, _ in found} == {
        (path, "warning"), ("src/kernels/__init__.py", "warning")}  # the package imports from it: read the same way
    assert (path, 1, "warning", "module kernels.decode_attention.api cannot be read statically (the checker cannot "
            f"read this module's surface statically: `exec()` at {path}:9), so its surface on base and head was read by "
            "importing each in a subprocess; a reviewer may want to check what the import ran") in found


def test_without_the_import_fallback_a_module_unreadable_on_the_base_is_a_warning(tmp_path):
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=POLICY + "  import_fallback: false\n")
    path = "src/kernels/decode_attention/api.py"
    repo.write(path, repo.read(path) + "\nexec('')\n")
    repo.commit("Code from before the checker", who=MAX)
    repo.branch("readable")
    repo.write(path, KERNEL_API)
    repo.commit("Make the module readable", who=ADA)
    ((found_path, line, severity, message),) = g5(repo.check())
    assert (found_path, severity) == (path, "warning")
    assert message.startswith("module kernels.decode_attention.api: its surface on the base could not be read "
                              "(the checker cannot read this module's surface statically: `exec()` at "
                              f"{path}:9), so its changes could not be checked")


def test_a_package_found_under_two_roots_is_ambiguous(tmp_path):
    files = {"src/kernels/__init__.py": INIT, "src/kernels/api.py": API, "kernels/__init__.py": INIT,
             "kernels/api.py": API}
    result = record_check(tmp_path, files)
    assert result.status is Status.FAIL
    assert messages(result) == [
        "declared package 'kernels' is found under more than one package root (kernels/__init__.py, "
        "src/kernels/__init__.py); which one Python imports depends on sys.path: keep one, or name its root alone "
        "in the policy's api.package_roots"]


def test_a_decoy_copy_of_the_package_at_the_root_is_reported(src_repo):
    src_repo.branch("decoy")
    src_repo.write("kernels/__init__.py", "def attention_decode(q, k_cache, v_cache, visible_tokens, *, scale=None, "
                   "out=None):\n    return None\n")
    src_repo.commit("A kernels module at the root", who=ADA)
    assert ("kernels/__init__.py", 1, "error", "api package 'kernels' is found under more than one package root on "
            "head (kernels/__init__.py, src/kernels/__init__.py); which one Python imports depends on sys.path: keep "
            "one, or name its root alone in api.package_roots") in g5(src_repo.check())


def test_changing_the_package_roots_is_named_as_a_loosening_of_the_policy():
    base = parse_policy(SRC_POLICY)
    moved = parse_policy(SRC_POLICY.replace("  packages: [kernels]\n", "  packages: [kernels]\n  package_roots: [lib]\n"))
    assert base.loosenings(moved) == ["api package_roots ['.', 'src'] -> ['lib']"]


def test_a_policy_package_found_nowhere_fails_without_base_too(tmp_path):
    policy = "schema_version: 1\nrules: []\napi:\n  packages: [kernels, kernals]\n"
    files = {"kernels/__init__.py": INIT, "kernels/api.py": API, ".design-gates/policy.yaml": policy}
    result = record_check(tmp_path, files, policy)
    assert result.status is Status.FAIL
    finding = result.findings[0]
    assert (finding.path, finding.line) == (".design-gates/policy.yaml", 4)
    assert finding.message == ("api package 'kernals' of the policy resolves to no module: looked for "
                               "kernals/__init__.py, kernals.py, src/kernals/__init__.py, src/kernals.py "
                               "(package roots ., src; set api.package_roots)")


def test_a_comment_only_edit_to_an_unreadable_module_is_not_judged_again(src_repo):
    """The surface a comment cannot change is not read again: an unreadable module stays as it was."""
    src_repo.branch("lazy")
    path = "src/kernels/decode_attention/lazy.py"
    src_repo.write(path, "import vendor_runtime\n\n\ndef __getattr__(name):\n    return _load(name)\n")
    src_repo.commit("Lazy attributes", who=ADA)
    src_repo.merge("lazy")
    src_repo.branch("comment")
    src_repo.write(path, "# Attributes come from the vendor runtime.\n" + src_repo.read(path))
    src_repo.commit("Say where the attributes come from", who=ADA)
    assert g5(src_repo.check()) == []


MISSPELT = "schema_version: 1\ndefault_level: L1\nrules: []\napi:\n  packages: [kernelz]\n"


def test_a_change_that_adds_a_misspelt_package_to_the_policy_is_refused_before_it_checks_nothing(tmp_path):
    repo = GitRepo(tmp_path / "repo")
    repo.write("kernels/__init__.py", "def attention(q, k, v):\n    return q\n")
    repo.commit("kernels", who=MAX)
    repo.branch("set-up")
    repo.write(".design-gates/policy.yaml", MISSPELT)
    repo.commit("Adopt design-gates", who=MAX)
    found = [(f.gate, f.path, f.line) for f in repo.check() if f.gate == "G5"]
    assert found == [("G5", ".design-gates/policy.yaml", 5)]
    assert "'kernelz', which this change adds to the policy, resolves to no module at head" in \
        [f.message for f in repo.check() if f.gate == "G5"][0]


def test_correcting_a_misspelt_package_that_checked_nothing_is_no_loosening(tmp_path):
    repo = GitRepo(tmp_path / "repo")
    repo.write("kernels/__init__.py", "def attention(q, k, v):\n    return q\n")
    repo.write(".design-gates/policy.yaml", MISSPELT)
    repo.commit("kernels, adopted with a misspelt package", who=MAX)
    repo.branch("fix")
    repo.write(".design-gates/policy.yaml", MISSPELT.replace("kernelz", "kernels"))
    repo.commit("Policy: the package is kernels", who=MAX)
    findings = repo.check()
    assert [f for f in findings if f.gate == "G5"] == []  # the name the change takes out is no finding
    g8 = [f.message for f in findings if f.gate == "G8"]
    assert g8 and all("loosens" not in message for message in g8)  # a rules change still waits for its record
