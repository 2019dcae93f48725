"""The decode-loop example: a seeded decoder over a paged cache, the same tokens with split-KV off and on."""

from __future__ import annotations

import json

from examples.decode_loop.__main__ import main as decode_loop


def run_loop(monkeypatch, capsys, switch: str, *extra: str) -> dict:
    monkeypatch.setenv("DESIGN_GATES_SPLITKV", switch)
    assert decode_loop(["--model", "tiny", "--context", "600", "--steps", "3", *extra]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_split_kv_on_takes_the_split_route_and_decodes_the_same_tokens(monkeypatch, capsys):
    off = run_loop(monkeypatch, capsys, "0")
    on = run_loop(monkeypatch, capsys, "1")
    assert off["route"] == {"path": "single-pass", "num_splits": 1}
    assert on["route"]["path"] == "split" and on["route"]["num_splits"] > 1
    assert on["outputs_sha256"] == off["outputs_sha256"]
    assert on["fixtures"] == off["fixtures"] and set(off["fixtures"]) == {"prompt", "weights"}
    assert off["tokens_per_s"] > 0 and off["environment"]["backend"] in ("interpreter-cpu", "cpu")


def test_another_seed_is_another_fixture(monkeypatch, capsys):
    first = run_loop(monkeypatch, capsys, "0")
    other = run_loop(monkeypatch, capsys, "0", "--seed", "7")
    assert first["fixtures"]["weights"] != other["fixtures"]["weights"]
    assert first["fixtures"]["prompt"] != other["fixtures"]["prompt"]
