"""`gate-check doctor`: what the next change would meet under a set-up, found before the set-up merges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from gates.evidence.attestation import public_key_text
from gates.frontends.cli import main as gate_check
from gates.model.policy import POLICY_PATH
from gitrepo_builder import MAX, POLICY, RITA, seeded_repo

SIGNERS = ".design-gates/allowed_signers"
PIN = ".design-gates/requirements.txt"
RECORD = "docs/design/seed.md"


def ssh_public_key() -> str:
    key = Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH).decode()


def runner_key() -> str:
    return public_key_text(Ed25519PrivateKey.generate().public_key())


def sound_policy(repo) -> str:
    """Signed approvals, a runner key, the ratchet at the seed commit: a set-up with nothing to report."""
    return POLICY + (f"approvals:\n  sources: [signed-commit]\n  allowed_signers: {SIGNERS}\n"
                     f"attestation:\n  keys:\n    - {{id: gpu-runner, public_key: \"{runner_key()}\"}}\n"
                     "  required:\n    L4: [numeric]\n"
                     "contracts:\n  L4: [numeric, bitwise]\n"
                     f"history:\n  enforce_from: {repo.sha('HEAD')}\n")


@pytest.fixture
def repo(tmp_path):
    """main with the seed: a kernel package, a test, a record; the set-up is what each test commits next."""
    repo = seeded_repo(tmp_path / "repo", files={RECORD: "# seed\n", "kernels/decode_layer.py": "SPLITKV_DEFAULT = 0\n"})
    repo.write(SIGNERS, f"{RITA.email} namespaces=\"git\" {ssh_public_key()}\n")
    repo.write(PIN, "design-gates @ git+https://example.invalid/design-gates@v0.1.0\n")
    repo.write(POLICY_PATH, sound_policy(repo))
    repo.commit("Set up design-gates", who=MAX)
    return repo


def doctor(repo, capsys, *args) -> tuple[int, str]:
    code = gate_check(["doctor", "--repo-root", str(repo.root), *args])
    return code, capsys.readouterr().out


def test_a_sound_set_up_passes_and_says_what_it_read(repo, capsys):
    code, out = doctor(repo, capsys)
    assert code == 0, out
    assert "policy: .design-gates/policy.yaml, 3 rule(s), default level L1" in out
    assert "approvals: signed-commit" in out
    assert "attestation: 1 key(s), signed evidence required at L4" in out
    assert "api: kernels (under .); modules read statically 4" in out
    assert "checker pin: design-gates @ git+https://example.invalid/design-gates@v0.1.0" in out
    assert "contracts a L4 record must declare: numeric, bitwise" in out
    assert out.rstrip().endswith("0 error(s), 0 warning(s) in the set-up at " + repo.sha("HEAD")[:12])


def test_a_missing_checker_pin_is_a_warning_and_one_without_design_gates_an_error(repo, capsys):
    repo.delete(PIN)
    repo.commit("CI names the version instead", who=MAX)
    code, out = doctor(repo, capsys, "--no-packages")
    assert code == 0 and f"{PIN}:1:1: setup warning: no {PIN}: the gate-check action installs" in out
    repo.write(PIN, "torch>=2.4\n")
    repo.commit("Pin what the import reading needs", who=MAX)
    code, out = doctor(repo, capsys, "--no-packages")
    assert code == 1 and f"{PIN}:1:1: setup error: the checker pin names no design-gates requirement" in out


def test_a_misspelt_hot_rule_protects_nothing_and_is_an_error(repo, capsys):
    repo.write(POLICY_PATH, sound_policy(repo).replace('"kernels/decode_attention/**"', '"kernel/decode_attention/**"')
               .replace('"docs/**", "tests/**"', '"docs/**", "tests/**", ".github/**"'))
    repo.commit("Set up, with a typo", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 1
    assert (".design-gates/policy.yaml:4:1: setup error: rule path 'kernel/decode_attention/**' (L4) matches no file: "
            "a misspelt glob protects nothing") in out
    assert ".design-gates/policy.yaml:9:1: setup warning: rule path '.github/**' (L0) matches no file yet" in out


def test_a_module_g5_can_read_neither_way_is_an_error_until_the_policy_leaves_it_unchecked(repo, capsys):
    lazy = "kernels/decode_attention/lazy.py"
    repo.write(lazy, "import vendor_runtime\n\n\ndef __getattr__(name):\n    return vendor_runtime.load(name)\n")
    repo.commit("A module only its import can read", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 1
    assert f"{lazy}:1:1: G5 error: module kernels.decode_attention.lazy the checker cannot read" in out
    assert "No module named 'vendor_runtime'" in out and "or listed in the base policy's api.unchecked_modules" in out

    repo.write(POLICY_PATH, sound_policy(repo).replace(
        "  switches:", "  unchecked_modules: [kernels.decode_attention.lazy]\n  switches:"))
    repo.commit("Leave the lazy module unchecked", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 0, out
    assert "modules read statically 4, by importing 0, unreadable 0, unchecked 1" in out


def test_a_module_that_rebinds_another_module_s_name_is_an_error_unless_that_module_is_unchecked(repo, capsys):
    repo.write("kernels/compat.py", "from kernels.decode_attention import api\n\n\ndef install():\n"
               "    api.attention_decode = None\n")
    repo.commit("A compatibility shim", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 1
    assert "kernels/compat.py:5:1: G5 error: `api.attention_decode` sets or deletes a name of module" in out

    repo.write(POLICY_PATH, sound_policy(repo).replace(
        "  switches:", "  unchecked_modules: [kernels.decode_attention.api]\n  switches:"))
    repo.commit("Leave the API module unchecked", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 0, out
    assert ("kernels/compat.py:5:1: G5 warning: `api.attention_decode` sets or deletes a name of module "
            "kernels.decode_attention.api from module kernels.compat; kernels.decode_attention.api is listed in "
            "api.unchecked_modules") in out


def test_it_lists_the_unreadable_modules_and_a_pattern_wider_than_they_are(repo, capsys):
    for name in ("lazy", "lazier"):
        repo.write(f"kernels/decode_attention/{name}.py", "import vendor_runtime\n\n\ndef __getattr__(name):\n"
                   "    return vendor_runtime.load(name)\n")
    repo.commit("Two modules only their import can read", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 1
    assert "api:\n  unchecked_modules:\n    - kernels.decode_attention.lazier\n    - kernels.decode_attention.lazy\n" \
        in out
    code, out = doctor(repo, capsys, "--format", "json")
    assert json.loads(out)["unreadable_modules"] == ["kernels.decode_attention.lazier", "kernels.decode_attention.lazy"]

    repo.write(POLICY_PATH, sound_policy(repo).replace("  switches:", "  unchecked_modules: [kernels.*]\n  switches:"))
    repo.commit("Leave every module unchecked", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 0, out
    assert ("setup warning: api.unchecked_modules leaves 3 of its 5 modules unchecked that G5 can read statically: a "
            "pattern (`*` spans dots) may be wider") in out


def test_an_allowed_signers_line_without_a_readable_key_is_an_error(repo, capsys):
    repo.write(SIGNERS, repo.read(SIGNERS) + f"{RITA.email} ssh-ed25519 AAAAnot-a-key\nrita-only-a-name\n")
    repo.commit("Add Rita's second key", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 1
    assert f"{SIGNERS}:2:1: setup error: allowed-signers line: the ssh-ed25519 key does not parse" in out
    assert f"{SIGNERS}:3:1: setup error: allowed-signers line: no principal followed by a key type and a key" in out


def test_a_trusted_source_without_what_it_needs_is_reported(repo, capsys):
    repo.delete(SIGNERS)
    repo.commit("Drop the signers file", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 1
    assert f"G8 error: approvals.sources trusts signed-commit, but the allowed-signers file {SIGNERS} does not exist" \
        in out


def test_runner_keys_that_do_not_parse_and_required_evidence_without_a_key(repo, capsys):
    policy = sound_policy(repo)
    repo.write(POLICY_PATH, policy.replace("public_key: \"", "public_key: \"AAAA"))
    repo.commit("A pasted key with extra characters", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 1 and "setup error: attestation key 'gpu-runner' does not parse" in out

    keys = policy[policy.index("  keys:"):policy.index("  required:")]
    repo.write(POLICY_PATH, policy.replace(keys, ""))
    repo.commit("Require signed evidence, list no key", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 1
    assert "setup error: attestation.required asks for signed evidence, but attestation.keys lists no key" in out


def test_a_ratchet_commit_outside_the_history_is_reported_and_none_is_a_warning(repo, capsys):
    policy = sound_policy(repo)
    repo.write(POLICY_PATH, policy.replace(repo.sha("HEAD"), "deadbeef" * 5))
    repo.commit("Ratchet at a commit of another clone", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 1 and f"G8 error: history.enforce_from {'deadbeef' * 5} is not a commit in the history of head" \
        in out

    repo.write(POLICY_PATH, policy[:policy.index("history:")])
    repo.commit("No ratchet yet", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 0 and "setup warning: history.enforce_from is not set" in out


def test_no_policy_and_a_policy_that_does_not_parse_are_errors(repo, capsys):
    repo.delete(POLICY_PATH)
    repo.commit("Drop the policy", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 1 and "setup error: no policy at .design-gates/policy.yaml" in out

    repo.write(POLICY_PATH, "schema_version: 1\nrules:\n  - paths: [kernels/**\n")
    repo.commit("A policy with an unclosed list", who=MAX)
    code, out = doctor(repo, capsys)
    assert code == 1 and ".design-gates/policy.yaml:4:1: setup error: the policy does not parse: invalid YAML" in out


def test_it_reads_the_commit_and_says_when_the_working_tree_differs(repo, capsys):
    repo.write(POLICY_PATH, "not: [a policy\n")  # uncommitted: doctor reads HEAD
    code, out = doctor(repo, capsys)
    assert code == 0, out
    assert out.startswith("note: the working tree differs from HEAD")


def test_json_output_lists_facts_and_findings(repo, capsys):
    repo.delete(RECORD)
    repo.commit("No record yet", who=MAX)
    code, out = doctor(repo, capsys, "--format", "json", "--no-packages")
    report = json.loads(out)
    assert code == 0 and report["errors"] == 0 and report["warnings"] == 2  # no record, and docs/** matches nothing
    assert report["commit"] == repo.sha("HEAD") and "api: packages not read (--no-packages)" in report["facts"]
    first = report["findings"][0]
    assert (first["gate"], first["path"], first["severity"]) == ("setup", "docs/design", "warning")
    assert "holds no design record" in first["message"]


def test_this_repository_s_own_set_up_passes(capsys):
    code = gate_check(["doctor", "--repo-root", str(Path(__file__).resolve().parents[1])])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "checker pin: .[docs]" in out and "approvals: signed-commit" in out
