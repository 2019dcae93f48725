"""`python -m gates.ab`: fresh-process A/B runs that refuse to give untrustworthy evidence."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from gates.ab import AbError, AbPlan, ArmsError, run_ab
from gates.ab.__main__ import main as ab_main
from gates.ab.arms import Arm, Variable, check_fair, parse_arms, parse_variable
from gates.ab.harness import interleaved_order
from gates.ab.samples import MetricSpec
from gates.evidence.artifacts import parse_artifact

SHA_A, SHA_B = "a" * 64, "b" * 64


def fake_command(tmp_path, body: str) -> list[str]:
    """A command that prints one JSON line; `body` computes `line` from the environment."""
    script = tmp_path / "measure.py"
    script.write_text(textwrap.dedent("""
        import json, os
        switch = os.environ.get("SWITCH", "?")
        line = {"tokens_per_s": 100.0 if switch == "1" else 80.0,
                "fixtures": {"weights": "%s"}, "environment": {"backend": "cuda", "device": "GPU"},
                "outputs_sha256": "%s"}
    """ % (SHA_A, SHA_B)) + textwrap.dedent(body) + "\nprint('log line')\nprint(json.dumps(line))\n")
    return [sys.executable, str(script)]


def plan_for(tmp_path, command, **overrides) -> AbPlan:
    fields = dict(artifact_id="e2e-fake", command=command, variable=Variable("env", "SWITCH"),
                  arms=[Arm("off", "0"), Arm("on", "1")], metric=MetricSpec("tokens_per_s"), repo_root=tmp_path,
                  samples=3, warmup=1, unit="tok/s")
    fields.update(overrides)
    return AbPlan(**fields)


def test_a_fair_run_gives_an_e2e_artifact_the_schema_accepts(tmp_path):
    messages = []
    artifact = run_ab(plan_for(tmp_path, fake_command(tmp_path, "")), progress=messages.append)
    parse_artifact(json.dumps(artifact).encode(), "e2e.json")
    arms = artifact["results"]["arms"]
    assert arms["off"]["samples"] == [80.0, 80.0, 80.0] and arms["on"]["median"] == 100.0
    assert artifact["results"]["order"] == ["off#1", "on#1", "off#2", "on#2", "off#3", "on#3"]
    assert artifact["results"]["comparison"] == {"on/off": 1.25}
    assert artifact["results"]["outputs_equal"] is True
    assert artifact["fixtures"] == {"weights": SHA_A}
    pids = arms["off"]["pids"] + arms["on"]["pids"]
    assert len(set(pids)) == 6, "every sample is its own process"
    assert any("warm-up" in m and "discarded" in m for m in messages)
    assert messages[-1].startswith("[8/8]")


def test_fewer_than_three_samples_are_refused(tmp_path):
    with pytest.raises(AbError, match="2 sample"):
        run_ab(plan_for(tmp_path, fake_command(tmp_path, ""), samples=2))


def test_no_warm_up_is_refused(tmp_path):
    with pytest.raises(AbError, match="warm-up"):
        run_ab(plan_for(tmp_path, fake_command(tmp_path, ""), warmup=0))


def test_a_run_without_fixture_identities_is_refused(tmp_path):
    command = fake_command(tmp_path, "line.pop('fixtures')")
    with pytest.raises(AbError, match="no fixture identity"):
        run_ab(plan_for(tmp_path, command))


def test_arms_that_measured_different_inputs_are_refused(tmp_path):
    command = fake_command(tmp_path, "line['fixtures']['weights'] = '%s' if switch == '1' else '%s'" % (SHA_B, SHA_A))
    with pytest.raises(AbError, match="fixture identities .* differ"):
        run_ab(plan_for(tmp_path, command))


def test_arms_on_different_machines_are_refused(tmp_path):
    command = fake_command(tmp_path, "line['environment']['device'] = 'GPU ' + switch")
    with pytest.raises(AbError, match="environments .* differ"):
        run_ab(plan_for(tmp_path, command))


def test_a_failing_sample_stops_the_run_with_its_output(tmp_path):
    command = fake_command(tmp_path, "import sys\nif switch == '1': sys.exit('kernel crashed')")
    with pytest.raises(AbError, match="(?s)arm 'on' sample 0: exit status 1.*kernel crashed"):
        run_ab(plan_for(tmp_path, command))


def test_differing_outputs_are_recorded_not_hidden(tmp_path):
    command = fake_command(tmp_path, "line['outputs_sha256'] = '%s' if switch == '1' else '%s'" % (SHA_A, SHA_B))
    artifact = run_ab(plan_for(tmp_path, command))
    assert artifact["results"]["outputs_equal"] is False


def test_outputs_of_different_kernels_are_compared_within_the_tolerance(tmp_path):
    command = fake_command(tmp_path, "line['outputs_sample'] = [1.0, 2.0, 3.0] if switch == '0' else [1.0, 2.0, 3.01]")
    artifact = run_ab(plan_for(tmp_path, command, outputs_tolerance=1e-2))
    compared = artifact["results"]["outputs_compared"]
    assert compared["against"] == "off#1" and compared["within"] is True and compared["positions"] == 3
    assert compared["per_arm"]["off"] == 0.0 and compared["per_arm"]["on"] == pytest.approx(0.01 / 14 ** 0.5)


@pytest.mark.parametrize("body, message", [
    ("line['outputs_sample'] = [1.0, 2.0, 3.0] if switch == '0' else [1.0, 2.0, 4.0]",
     r"outside --outputs-tolerance 0.01 \(relative L2 from off#1\): on 0.267"),
    ("line['outputs_sample'] = [1.0, 2.0, 3.0] if switch == '0' else [1.0, 2.0]", "not the same positions"),
    ("line['outputs_sample'] = [1.0, 2.0, 3.0] if switch == '0' else [1.0, 2.0, float('nan')]",
     "no outputs_sample .* in the JSON line of on#1, on#2, on#3"),
    ("pass", "no outputs_sample"),
], ids=["outside", "other-length", "not-finite", "none"])
def test_outputs_outside_the_tolerance_or_not_comparable_write_nothing(tmp_path, body, message):
    with pytest.raises(AbError, match=message):
        run_ab(plan_for(tmp_path, fake_command(tmp_path, body), outputs_tolerance=1e-2))


def test_a_metric_read_by_pattern(tmp_path):
    command = fake_command(tmp_path, "print(f'throughput: {line[\"tokens_per_s\"] + 1} tok/s')")
    artifact = run_ab(plan_for(tmp_path, command, metric=MetricSpec("tokens_per_s", r"throughput: ([\d.]+)")))
    assert artifact["results"]["arms"]["on"]["median"] == 101.0


def test_arms_must_vary_one_declared_variable():
    with pytest.raises(ArmsError, match="exactly one variable"):
        parse_variable("SWITCH", "--split")
    with pytest.raises(ArmsError, match="at least two arms"):
        parse_arms(["off=0"])
    with pytest.raises(ArmsError, match="same value twice"):
        parse_arms(["off=0", "also-off=0"])
    with pytest.raises(ArmsError, match="already passes --split"):
        check_fair([Arm("a", "0"), Arm("b", "1")], Variable("arg", "--split"), ["run", "--split", "1"], {})


def test_arms_by_argument_append_the_option_per_arm():
    arms = parse_arms(["off=0", "on=1"])
    assert arms[1].command(["python", "bench.py"], Variable("arg", "--split")) == ["python", "bench.py", "--split", "1"]
    assert interleaved_order(arms, 2) == [(arms[0], 1), (arms[1], 1), (arms[0], 2), (arms[1], 2)]


def test_the_cli_writes_inside_the_repository_and_never_overwrites(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kernel.py").write_text("x = 1\n")
    command = fake_command(tmp_path, "")
    argv = ["--id", "e2e-fake", "--out", "evidence/e2e.json", "--env-var", "SWITCH", "--arm", "off=0", "--arm", "on=1",
            "--metric", "tokens_per_s", "--source", "*.py", "--repo-root", str(tmp_path), "--", *command]
    assert ab_main(argv) == 0
    written = json.loads((tmp_path / "evidence/e2e.json").read_text())
    assert set(written["sources"]) == {"kernel.py", "measure.py"}
    assert ab_main(argv) == 1
    assert "pass --replace" in capsys.readouterr().err
    outside = list(argv)
    outside[outside.index("evidence/e2e.json")] = str(tmp_path.parent / "e2e.json")
    assert ab_main(outside) == 1
    assert not (tmp_path.parent / "e2e.json").exists()


def test_a_source_glob_that_matches_nothing_is_an_error(tmp_path):
    with pytest.raises(AbError, match="matches no file"):
        run_ab(plan_for(tmp_path, fake_command(tmp_path, ""), sources=["kernels/**"]))


def test_on_a_runner_with_a_key_the_artifact_is_signed(tmp_path, monkeypatch):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from gates.evidence.attestation import TrustedKeys, private_key_text, public_key_text, verification_problem

    key = Ed25519PrivateKey.generate()
    monkeypatch.setenv("DESIGN_GATES_SIGNING_KEY", private_key_text(key))
    monkeypatch.setenv("DESIGN_GATES_SIGNING_KEY_ID", "runner")
    monkeypatch.chdir(tmp_path)
    argv = ["--id", "e2e-fake", "--out", "e2e.json", "--env-var", "SWITCH", "--arm", "off=0", "--arm", "on=1",
            "--metric", "tokens_per_s", "--repo-root", str(tmp_path), "--", *fake_command(tmp_path, "")]
    assert ab_main(argv) == 0
    written = json.loads((tmp_path / "e2e.json").read_text())
    assert written["attestation"]["key_id"] == "runner"
    trusted = TrustedKeys.from_section({"keys": [{"id": "runner", "public_key": public_key_text(key.public_key())}]})
    assert verification_problem(written, trusted) is None
