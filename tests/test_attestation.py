"""Evidence a change's author cannot forge: attestation by a trusted runner, binding to what it measured,
suites that judge, and a verify mode that re-runs them.

The repository is a copy of the golden examples (tests/examples) with a policy that
makes `examplepkg/` L3.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from gates.checks.runner import check_records
from gates.evidence.artifacts import file_sha256
from gates.evidence.attestation import TrustedKeys, canonical_bytes, private_key_text, public_key_text, sign, verification_problem
from gates.frontends.cli import main
from gates.history.git_repo import load_change_set
from gates.model.findings import Status

EXAMPLES = Path(__file__).parent / "examples"
RECORD = "G3/positive/numeric-within-tolerance.md"
KEY = Ed25519PrivateKey.generate()
OTHER_KEY = Ed25519PrivateKey.generate()
POLICY = """schema_version: 1
default_level: L1
rules:
  - paths: ["examplepkg/**"]
    level: L3
"""


def attestation_policy(required: str = "[numeric, bitwise, capture]", key=KEY) -> str:
    return POLICY + f"""attestation:
  keys:
    - {{id: cpu-runner, public_key: "{public_key_text(key.public_key())}"}}
  required:
    L3: {required}
"""


@pytest.fixture
def repo(tmp_path):
    target = tmp_path / "repo"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns("__pycache__"))
    (target / ".design-gates").mkdir(exist_ok=True)
    (target / ".design-gates" / "policy.yaml").write_text(POLICY, encoding="utf-8")
    return target


def set_policy(repo: Path, text: str) -> None:
    (repo / ".design-gates" / "policy.yaml").write_text(text, encoding="utf-8")


def rewrite_artifact(repo: Path, evidence_id: str, change, record: str = RECORD) -> None:
    """Change an artifact the way an author can, and re-pin it in the record (so only the rule under test fails)."""
    path = repo / "evidence" / f"{evidence_id}.json"
    old_pin = file_sha256(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    changed = change(data)
    data = changed if isinstance(changed, dict) else data
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    record_path = repo / record
    record_path.write_text(record_path.read_text(encoding="utf-8").replace(old_pin, file_sha256(path)), encoding="utf-8")


def gate(repo: Path, name: str, record: str = RECORD, **options):
    report = check_records([repo / record], repo, gates=[name], **options)
    assert not report.input_errors, report.input_errors
    return report.records[0].gates[name]


def messages(result) -> str:
    return "\n".join(f.message for f in result.findings)


def break_kernel(repo: Path) -> None:
    ops = repo / "examplepkg" / "ops.py"
    ops.write_text(ops.read_text(encoding="utf-8").replace("    acc = partials[0]\n", "    acc = f32(partials[0] + 1.0)\n"),
                   encoding="utf-8")


def rehash_sources(data: dict, repo: Path) -> None:
    data["sources"] = {rel: file_sha256(repo / rel) for rel in data["sources"]}


# --- binding: sources must name what the record covers ---------------------------------------------


def test_an_artifact_that_binds_no_sources_fails(repo):
    rewrite_artifact(repo, "numeric-cpu", lambda d: d.update(sources={}))
    result = gate(repo, "G3")
    assert result.status is Status.FAIL
    assert "evidence 'numeric-cpu' binds no sources" in messages(result)


def test_an_artifact_missing_a_covered_file_fails_naming_it(repo):
    rewrite_artifact(repo, "numeric-cpu", lambda d: d["sources"].pop("examplepkg/__init__.py"))
    result = gate(repo, "G3")
    assert result.status is Status.FAIL
    assert "evidence 'numeric-cpu' does not bind 1 file the record covers (examplepkg/__init__.py)" in messages(result)


def test_a_new_kernel_file_the_evidence_never_measured_fails(repo):
    (repo / "examplepkg" / "fused.py").write_text("def fused_sum(rows):\n    return 0.0\n", encoding="utf-8")
    for name in ("G3", "G4", "G6"):
        result = gate(repo, name)
        assert result.status is Status.FAIL, name
        assert "does not bind 1 file the record covers (examplepkg/fused.py)" in messages(result)


# --- attestation ------------------------------------------------------------------------------------


def test_canonical_form_is_sorted_compact_utf8_without_the_attestation():
    artifact = {"b": "é", "a": [1, 2], "attestation": {"key_id": "x"}}
    assert canonical_bytes(artifact) == '{"a":[1,2],"b":"é"}'.encode("utf-8")


def test_an_unattested_artifact_of_a_required_kind_fails_naming_the_key(repo):
    set_policy(repo, attestation_policy())
    result = gate(repo, "G3")
    assert result.status is Status.FAIL
    assert ("evidence 'numeric-cpu' (numeric) is not attested; it must be signed by a trusted runner key (cpu-runner); "
            "the policy at base requires attested numeric evidence for L3 records") in messages(result)


def test_a_signed_artifact_passes(repo):
    set_policy(repo, attestation_policy())
    rewrite_artifact(repo, "numeric-cpu", lambda d: sign(d, "cpu-runner", KEY))
    assert gate(repo, "G3").status is Status.PASS


def test_rehashed_sources_after_breaking_the_kernel_break_the_signature(repo):
    set_policy(repo, attestation_policy())
    rewrite_artifact(repo, "numeric-cpu", lambda d: sign(d, "cpu-runner", KEY))
    break_kernel(repo)
    rewrite_artifact(repo, "numeric-cpu", lambda d: rehash_sources(d, repo))
    result = gate(repo, "G3")
    assert result.status is Status.FAIL
    assert "has a signature that does not verify with key 'cpu-runner'" in messages(result)
    assert "is stale" not in messages(result)


def test_a_signature_by_a_key_the_policy_does_not_list_fails(repo):
    set_policy(repo, attestation_policy())
    rewrite_artifact(repo, "numeric-cpu", lambda d: sign(d, "laptop", OTHER_KEY))
    assert "is signed by key 'laptop', which the policy does not trust (trusted: cpu-runner)" in messages(gate(repo, "G3"))


def test_kinds_the_policy_does_not_require_need_no_signature(repo):
    set_policy(repo, attestation_policy(required="[capture]"))
    assert gate(repo, "G3").status is Status.PASS
    assert "is not attested" in messages(gate(repo, "G6"))


def test_a_requirement_at_a_lower_level_holds_at_higher_levels(repo):
    set_policy(repo, attestation_policy(required="[numeric]").replace("    L3:", "    L2:"))
    assert "is not attested" in messages(gate(repo, "G3"))


def test_pem_keys_are_accepted_and_a_wrong_length_key_is_named():
    pem = KEY.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    signed = sign({"id": "x"}, "k", KEY)
    assert verification_problem(signed, TrustedKeys({"k": pem.decode("ascii")}, {})) is None
    assert "is 32 bytes, this one is 3" in verification_problem(signed, TrustedKeys({"k": "AAAA"}, {}))


SMALL_ORDER_KEY = base64.b64encode(bytes(32)).decode("ascii")  # y = 0: a point of order 4, with no secret behind it
IDENTITY = bytes([1]) + bytes(31)                               # the encoding of the neutral point


def forged_under_small_order_key(artifact: dict, key_id: str = "k") -> dict:
    """A signature nobody made that verifies under the all-zero key: R = identity and S = 0 verify whenever
    the challenge k = SHA-512(R || A || M) is a multiple of A's order 4, so vary the artifact until it is."""
    order = 2**252 + 27742317777372353535851937790883648493
    for attempt in range(256):
        candidate = dict(artifact, created=f"2026-12-01T00:{attempt // 60:02d}:{attempt % 60:02d}Z")
        signed = dict(candidate, attestation={"key_id": key_id, "algorithm": "ed25519",
                                              "signature": base64.b64encode(IDENTITY + bytes(32)).decode("ascii")})
        challenge = hashlib.sha512(IDENTITY + bytes(32) + canonical_bytes(signed)).digest()
        if int.from_bytes(challenge, "little") % order % 4 == 0:
            return signed
    raise AssertionError("no candidate with a challenge divisible by 4 (chance 1 in 4 per try)")


def test_a_small_order_key_is_refused_so_a_signature_nobody_made_does_not_verify():
    forged = forged_under_small_order_key({"id": "numeric-cpu", "kind": "numeric"})
    problem = verification_problem(forged, TrustedKeys({"k": SMALL_ORDER_KEY}, {}))
    assert problem is not None and "not a point of the Ed25519 prime-order subgroup" in problem


@pytest.mark.parametrize("raw", [bytes(32), IDENTITY, bytes([0xEC]) + bytes([0xFF]) * 30 + bytes([0x7F])],
                         ids=["all-zero", "identity", "non-canonical"])
def test_keys_that_are_not_points_of_prime_order_are_named(raw):
    signed = sign({"id": "x"}, "k", KEY)
    problem = verification_problem(signed, TrustedKeys({"k": base64.b64encode(raw).decode("ascii")}, {}))
    assert "cannot be checked: the policy's key 'k' is unreadable (it is not a point of the Ed25519 prime-order" in problem


def test_a_small_order_key_in_the_policy_fails_the_gate(repo):
    set_policy(repo, attestation_policy().replace(public_key_text(KEY.public_key()), SMALL_ORDER_KEY))
    rewrite_artifact(repo, "numeric-cpu", lambda d: forged_under_small_order_key(d, "cpu-runner"))
    assert "not a point of the Ed25519 prime-order subgroup" in messages(gate(repo, "G3"))


# --- suites that judge ------------------------------------------------------------------------------

CANNED_SUITE = '''\
def test_numbers(evidence):
    evidence["kind"] = "numeric"
    evidence["results"]["per_dtype"] = {"fp32": {"rel_l2": 1e-9, "max_abs": 1e-9, "min_cosine": 1.0, "cases": 1}}
'''


def test_a_canned_suite_that_never_imports_the_kernel_fails_with_run_suites(repo):
    break_kernel(repo)
    (repo / "suites" / "suite_numeric.py").write_text(CANNED_SUITE, encoding="utf-8")
    result = gate(repo, "G3", run_suites=True, suite_timeout_s=120)
    assert result.status is Status.FAIL
    assert ("the run of suites/suite_numeric.py never imported examplepkg/ops.py, a file the record covers: "
            "the suite does not exercise it") in messages(result)


def test_a_failing_suite_shows_the_tail_of_pytest_output(repo):
    (repo / "suites" / "suite_numeric.py").write_text(
        "def test_explains(evidence):\n    evidence['kind'] = 'numeric'\n    assert 1 == 2, 'the partial sums disagree'\n",
        encoding="utf-8")
    result = gate(repo, "G3", run_suites=True, suite_timeout_s=120)
    assert "suite suites/suite_numeric.py failed (pytest exit 1); " in messages(result)
    assert "pytest output ends:\n" in messages(result)
    assert "AssertionError: the partial sums disagree\n" in messages(result)


def git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="Ada", GIT_AUTHOR_EMAIL="ada@example.com", GIT_COMMITTER_NAME="Ada",
               GIT_COMMITTER_EMAIL="ada@example.com")
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()


def judged_change(repo, edit, **options):
    """G3's result for a change made by `edit(repo)` on top of a base commit of `repo`."""
    git(repo, "init", "-q", "-b", "main")
    (repo / "pyproject.toml").write_text('[project]\nname = "example"\n', encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD")
    edit(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the change")
    change = load_change_set(repo, base, "HEAD")
    try:
        report = check_records([repo / RECORD], repo, gates=["G3"], change=change, **options)
    finally:
        change.close()
    return report.records[0].gates["G3"]


def append(path: str, text: str):
    def edit(repo):
        with open(repo / path, "a", encoding="utf-8") as handle:
            handle.write(text)
    return edit


@pytest.mark.parametrize("edited", ["suites/suite_numeric.py", "suites/conftest.py", "pytest.ini",
                                    "suites/pytest.ini", ".pytest.ini", "tox.ini"])
def test_a_change_that_edits_its_judging_suite_is_reported(repo, edited):
    # a comment in a Python file changes no token; one in a configuration file is an edit of it
    result = judged_change(repo, append(edited, "\nLOOSER = True\n" if edited.endswith(".py") else "\n# looser\n"))
    assert result.status is Status.FAIL
    assert (f"{edited} is edited by this change and judges it (suite suites/suite_numeric.py); the results of a "
            "suite the change rewrites cannot be trusted without review") in messages(result)


def test_pytest_options_added_in_pyproject_judge_the_change_but_other_sections_do_not(repo):
    plugin = judged_change(repo, append("pyproject.toml", '\n[tool.pytest.ini_options]\naddopts = "-p speedups"\n'))
    assert "pyproject.toml is edited by this change and judges it" in messages(plugin)
    version = judged_change(repo, append("pyproject.toml", 'version = "2"\n'))
    assert "pyproject.toml is edited" not in messages(version)


def test_a_helper_module_the_suite_imports_judges_the_change_under_run_suites(repo):
    result = judged_change(repo, append("suites/cases.py", "\nLOOSER = True\n"), run_suites=True, suite_timeout_s=120)
    assert ("suites/cases.py is edited by this change and was imported by the run of suites/suite_numeric.py, "
            "which judges it") in messages(result)


def test_a_helper_module_edited_in_its_comments_only_judges_nothing_under_run_suites(repo):
    result = judged_change(repo, append("suites/cases.py", "\n# looser\n"), run_suites=True, suite_timeout_s=120)
    assert "suites/cases.py is edited" not in messages(result)  # the run executed the same code


# --- the command line: keys, signing, verifying, verify mode -----------------------------------------


def test_key_new_writes_the_private_half_outside_the_repository_and_prints_the_public_half(repo, tmp_path, capsys):
    out = tmp_path / "runner.key"
    assert main(["key", "new", "--id", "cpu-runner", "--out", str(out), "--repo-root", str(repo)]) == 0
    printed = capsys.readouterr().out
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    assert "- {id: cpu-runner, public_key: \"" in printed
    assert main(["key", "new", "--id", "x", "--out", str(repo / "leak.key"), "--repo-root", str(repo)]) == 2
    assert not (repo / "leak.key").exists()
    assert main(["key", "new", "--id", "x", "--out", str(out), "--repo-root", str(repo)]) == 2


def test_attest_sign_then_verify_against_the_policy(repo, capsys, monkeypatch):
    set_policy(repo, attestation_policy())
    artifact = repo / "evidence" / "numeric-cpu.json"
    monkeypatch.setenv("DESIGN_GATES_SIGNING_KEY", private_key_text(KEY))
    monkeypatch.setenv("DESIGN_GATES_SIGNING_KEY_ID", "cpu-runner")
    assert main(["attest", "sign", str(artifact), "--repo-root", str(repo)]) == 0
    assert main(["attest", "verify", str(artifact), "--repo-root", str(repo)]) == 0
    assert "evidence/numeric-cpu.json: attested by key 'cpu-runner': signature valid" in capsys.readouterr().out
    data = json.loads(artifact.read_text(encoding="utf-8"))
    data["results"]["per_dtype"]["fp32"]["rel_l2"] = 1e-12
    artifact.write_text(json.dumps(data), encoding="utf-8")
    assert main(["attest", "verify", str(artifact), "--repo-root", str(repo)]) == 1
    assert "signature that does not verify" in capsys.readouterr().out


def test_attest_sign_refuses_without_a_key_in_the_environment(repo, monkeypatch, capsys):
    for name in ("DESIGN_GATES_SIGNING_KEY", "DESIGN_GATES_SIGNING_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)
    assert main(["attest", "sign", str(repo / "evidence" / "numeric-cpu.json"), "--repo-root", str(repo)]) == 2
    assert "no signing key" in capsys.readouterr().err


def test_verify_reruns_the_suite_and_fails_when_this_run_is_outside_the_tolerance(repo, capsys):
    ops = repo / "examplepkg" / "ops.py"
    ops.write_text(ops.read_text(encoding="utf-8").replace("    acc = partials[0]\n", "    acc = f32(partials[0] * 1.001)\n"),
                   encoding="utf-8")
    code = main(["verify", str(repo / RECORD), "--repo-root", str(repo), "--suite-timeout", "120"])
    output = capsys.readouterr().out
    assert code == 1, output
    assert "G3 error: fp32 rel_l2: committed 5.02297e-07 (evidence 'numeric-cpu'), this run " in output
    assert "declared max 1e-06" in output


def test_verify_passes_when_the_committed_results_reproduce(repo, capsys):
    code = main(["verify", str(repo / RECORD), "--repo-root", str(repo), "--suite-timeout", "120"])
    output = capsys.readouterr().out
    assert code == 0, output
    assert "G3 ok: fp32 rel_l2: committed 5.02297e-07 (evidence 'numeric-cpu'), this run 5.02297e-07" in output


def test_key_new_refuses_any_git_checkout_but_not_a_plain_folder(tmp_path, capsys, monkeypatch):
    import subprocess

    other = tmp_path / "other-checkout"
    other.mkdir()
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    assert main(["key", "new", "--id", "x", "--out", str(other / "sub" / "leak.key")]) == 2
    assert "lies inside the repository" in capsys.readouterr().err
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)
    assert main(["key", "new", "--id", "x", "--out", str(plain / "runner.key")]) == 0
    assert (plain / "runner.key").exists()
