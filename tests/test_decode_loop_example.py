"""The decode-loop example: a seeded decoder over a paged cache, the same tokens with split-KV off and on; the
layer over a contiguous cache and torch SDPA over it as the arms an end-to-end A/B compares it with."""

from __future__ import annotations

import json

from examples.decode_loop.__main__ import main as decode_loop
from gates.ab.harness import rel_l2


def run_loop(monkeypatch, capsys, switch: str, *extra: str, context: int = 600, steps: int = 3) -> dict:
    monkeypatch.setenv("DESIGN_GATES_SPLITKV", switch)
    assert decode_loop(["--model", "tiny", "--context", str(context), "--steps", str(steps), *extra]) == 0
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
    first = run_loop(monkeypatch, capsys, "0", context=40, steps=1)
    other = run_loop(monkeypatch, capsys, "0", "--seed", "7", context=40, steps=1)
    assert first["fixtures"]["weights"] != other["fixtures"]["weights"]
    assert first["fixtures"]["prompt"] != other["fixtures"]["prompt"]


def test_the_layer_over_a_contiguous_cache_and_sdpa_decode_what_the_paged_layer_does(monkeypatch, capsys):
    paged = run_loop(monkeypatch, capsys, "0", context=40, steps=2)
    contiguous = run_loop(monkeypatch, capsys, "0", "--attention", "contiguous", context=40, steps=2)
    sdpa = run_loop(monkeypatch, capsys, "0", "--attention", "sdpa", context=40, steps=2)
    assert (paged["attention"], contiguous["attention"], sdpa["attention"]) == ("paged", "contiguous", "sdpa")
    assert contiguous["outputs_sample"] == paged["outputs_sample"]  # one kernel, the same bits (anchor A2)
    assert sdpa["route"]["path"] == "sdpa" and sdpa["route"]["backend"] in ("FLASH_ATTENTION", "MATH")
    assert sdpa["outputs_sample"] != paged["outputs_sample"]  # another kernel: other bits, within bf16's reach
    assert 0 < rel_l2(sdpa["outputs_sample"], paged["outputs_sample"]) < 2e-2
    assert sdpa["fixtures"] == paged["fixtures"] and len(paged["outputs_sample"]) == 97  # tiny's whole vocabulary
