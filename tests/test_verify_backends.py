"""`gate-check verify` compares fingerprints per backend only, and accepts what its advice names.

On a CPU it used to compare this run's fingerprints with the H200 artifact's wherever the
keys matched (the CPU and H200 matrices share all 16 keys), printing 14 false G4 errors;
then it advised `--run-suites`, which it refused with exit 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gates.frontends import verify_cli
from gates.frontends.cli import main
from gates.model.record import load_record

EXAMPLES = Path(__file__).parent / "examples"
RECORD = EXAMPLES / "G4" / "positive" / "accepted-fingerprint-change.md"
SPLITS1 = "0bec4ba6b88234bc905a2344ff7bf04a103912f88897c935538aa16eafff0e71"  # fingerprints.json, backend cpu
SPLITS4 = "342509638fb96bd606e2949e14466cfacf86d53928eb82b5b782f122bb19cb44"


def artifact(backend: str, fingerprints: dict) -> dict:
    return {"kind": "bitwise", "environment": {"backend": backend},
            "results": {"passed": True, "backend": backend, "fingerprints": fingerprints,
                        "anchors": {"A1-splits1-vs-single-pass": {"passed": True, "cases": 16}}}}


def verify(committed: dict, fresh: dict, capsys) -> tuple[int, str]:
    out = verify_cli._Printer(EXAMPLES)
    verify_cli.compare_bitwise(load_record(RECORD, EXAMPLES), committed, fresh, "evidence 'bitwise'", out)
    return out.exit_code, capsys.readouterr().out


def test_a_cpu_run_is_not_compared_with_gpu_evidence_that_shares_its_keys(capsys):
    gpu = artifact("cuda-sm90-triton3.6", {"splits1": "a" * 64, "splits4": "b" * 64})
    code, output = verify(gpu, artifact("cpu", {"splits1": SPLITS1, "splits4": "c" * 64}), capsys)
    assert "fingerprints not compared with evidence 'bitwise': it comes from backend 'cuda-sm90-triton3.6', " \
           "this run from 'cpu'" in output
    assert "committed aaaa" not in output
    # the CPU run is still held to the fingerprint file's CPU entry (splits4's accepted change is for 3425…)
    assert "G4 error: fingerprint cpu/splits4 changed (e430bc28c7df… → cccccccccccc…); the accepted change under " \
           "question Q3 is for 342509638fb9…" in output
    assert "fingerprint splits1" not in output and "cpu/splits1" not in output and code == 1


def test_the_fingerprint_file_counts_the_records_accepted_changes(capsys):
    gpu = artifact("cuda-sm90-triton3.6", {"splits1": "a" * 64})
    code, output = verify(gpu, artifact("cpu", {"splits1": SPLITS1, "splits4": SPLITS4}), capsys)
    assert code == 0, output
    assert "G4 ok: 2 fingerprint(s) of this run hold in fingerprints.json [cpu]" in output


def test_the_same_backend_is_compared_key_by_key(capsys):
    committed = artifact("cpu", {"splits1": SPLITS1, "splits4": SPLITS4})
    code, output = verify(committed, artifact("cpu", {"splits1": SPLITS1, "splits4": "d" * 64}), capsys)
    assert code == 1
    assert "G4 ok: fingerprint splits1: committed 0bec4ba6b88234bc (evidence 'bitwise')" in output
    assert "G4 error: fingerprint splits4: committed 342509638fb96bd6 (evidence 'bitwise'), this run dddd" in output


def test_a_backend_the_fingerprint_file_lacks_is_a_note_not_an_error(capsys):
    code, output = verify(artifact("cuda", {}), artifact("rocm", {"splits1": "e" * 64}), capsys)
    assert code == 0
    assert "G4 note: fingerprints.json has no entry for this run's backend 'rocm'" in output


@pytest.mark.parametrize("flag", ["--run-suites"])
def test_verify_accepts_the_flag_its_advice_names(tmp_path, capsys, flag):
    (tmp_path / ".git").mkdir()
    (tmp_path / "docs" / "design").mkdir(parents=True)
    assert main(["verify", flag, "--repo-root", str(tmp_path)]) == 0
    assert "unrecognized arguments" not in capsys.readouterr().err


def test_every_flag_verify_can_advise_is_one_it_accepts():
    import argparse
    import re

    from gates.checks import suite_evidence

    advised = set(re.findall(r"with (--[a-z-]+)", Path(suite_evidence.__file__).read_text(encoding="utf-8")))
    parser = argparse.ArgumentParser()
    verify_cli.add_arguments(parser)
    accepted = {option for action in parser._actions for option in action.option_strings}
    assert advised and advised <= accepted
