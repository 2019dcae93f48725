"""Verdicts, tables and reports from benchmark artifacts (synthetic rows, no GPU)."""

import json

import pytest

from validation.bench import report, routing, routing_report, summary
from validation.bench.ncu_artifact import parse_raw_csv
from validation.bench.shapes import select
from validation.bench.table import format_table
from validation.bench.variants.splitkv_tuned import LaunchConfig


def row(shape, impl, us, kind="ours", role="matrix", splits=8, paged=False):
    return {"shape": shape, "impl": impl, "kind": kind, "role": role, "num_splits": splits, "paged": paged,
            "median_us": us, "fraction_of_read_ceiling": 1.0 / us, "correctness": {"passed": True}}


def results(rows, shapes, heuristic=8):
    meta = {s.name: {"heuristic_splits": heuristic, "kv_bytes": s.kv_bytes, "anchors": {"a": True},
                     "shape": {"B": s.batch, "Hq": s.num_q_heads, "Hkv": s.num_kv_heads, "D": s.head_dim,
                               "S": s.context, "R": s.rows}} for s in shapes}
    res = {"ours": "splitkv", "rows": rows, "shapes": meta, "ceilings": {"read": {"TBps": 4.58, "bytes": 4 << 30},
                                                                         "copy": {"TBps": 4.25}}}
    res["summary"] = summary.summarize(res, shapes)
    return res


def test_large_shape_passes_at_the_ceiling_and_ahead_of_the_best_peer():
    shapes = select(["llama8b-b1-32k"])
    rows = [row("llama8b-b1-32k", "splitkv", 33.0), row("llama8b-b1-32k", "splitkv_paged", 35.0, paged=True),
            row("llama8b-b1-32k", "single_pass", 400.0, kind="baseline", splits=1),
            row("llama8b-b1-32k", "sdpa_cudnn", 50.0, kind="peer", splits=None)]
    rows += [row("llama8b-b1-32k", "splitkv", us, role="sweep", splits=s) for s, us in ((4, 90.0), (8, 34.0), (16, 31.0))]
    e = results(rows, shapes)["summary"]["llama8b-b1-32k"]
    assert e["checks"] == {"read_ceiling_fraction>=0.85": True, "faster_than_best_peer": True,
                           "speedup_vs_single_pass>=5": True, "paged_within_1.1x": True,
                           "heuristic_within_10pct": True}
    assert e["passed"] and e["best_peer"] == "sdpa_cudnn" and e["sweep_best_splits"] == 16


@pytest.mark.parametrize("single_us, passed", [(123.8, True), (150.0, False)],
                         ids=["single-pass-fastest-passes", "single-pass-15pct-over-2-splits-fails"])
def test_a_heuristic_that_chooses_one_split_is_timed_as_the_layer_runs_it(single_us, passed):
    shapes = select(["llama8b-b64-2k"])
    s = "llama8b-b64-2k"
    rows = [row(s, "splitkv", single_us, splits=1), row(s, "single_pass", single_us, kind="baseline", splits=1)]
    rows += [row(s, "splitkv", us, role="sweep", splits=n) for n, us in ((1, 143.5), (2, 131.0), (4, 150.0))]
    e = results(rows, shapes, heuristic=1)["summary"][s]
    assert e["sweep_us"][1] == 143.5, "the sweep's own one-split row (the split kernel) is kept as measured"
    assert e["layer_choices_us"] == {1: single_us, 2: 131.0, 4: 150.0}
    assert e["heuristic_ratio_to_sweep_best"] == pytest.approx(single_us / min(single_us, 131.0))
    assert e["checks"]["heuristic_within_10pct"] is passed


def test_a_heuristic_more_than_10_percent_off_the_best_split_count_fails():
    shapes = select(["llama8b-b1-32k"])
    s = "llama8b-b1-32k"
    rows = [row(s, "splitkv", 40.0, splits=8), row(s, "single_pass", 400.0, kind="baseline", splits=1)]
    rows += [row(s, "splitkv", us, role="sweep", splits=n) for n, us in ((1, 410.0), (8, 40.0), (32, 36.0))]
    e = results(rows, shapes, heuristic=8)["summary"][s]
    assert e["sweep_best_splits"] == 32
    assert e["heuristic_ratio_to_sweep_best"] == pytest.approx(40.0 / 36.0)
    assert e["checks"]["heuristic_within_10pct"] is False


@pytest.mark.parametrize("ours_us, passed", [(8.0, False), (7.4, True)], ids=["0.85x-fails", "0.79x-passes"])
def test_medium_shape_needs_0_8_of_the_best_peer(ours_us, passed):
    shapes = select(["llama8b-b1-4k"])
    rows = [row("llama8b-b1-4k", "splitkv", ours_us), row("llama8b-b1-4k", "sdpa_default", 9.4, kind="peer")]
    assert results(rows, shapes)["summary"]["llama8b-b1-4k"]["checks"]["ratio_to_best_peer<=0.8"] is passed


def test_paged_more_than_1_1x_slower_fails():
    shapes = select(["seed-qwen0.5b-2k"])
    rows = [row("seed-qwen0.5b-2k", "splitkv", 4.0), row("seed-qwen0.5b-2k", "splitkv_paged", 4.5, paged=True)]
    assert results(rows, shapes)["summary"]["seed-qwen0.5b-2k"]["checks"]["paged_within_1.1x"] is False


def test_the_plain_read_of_the_same_bytes_is_reported_beside_ours():
    shapes = select(["llama8b-b1-32k"])
    res = {"ours": "splitkv", "rows": [row("llama8b-b1-32k", "splitkv", 36.0)],
           "shapes": {"llama8b-b1-32k": {"heuristic_splits": 32, "read_pass": {"median_us": 32.0}}},
           "ceilings": {"read": {"TBps": 4.58}}}
    e = summary.summarize(res, shapes)["llama8b-b1-32k"]
    assert (e["read_pass_us"], e["ratio_to_read_pass"]) == (32.0, 36.0 / 32.0)
    assert "read_pass_us" not in summary.summarize({**res, "shapes": {"llama8b-b1-32k": {"heuristic_splits": 32}}},
                                                   shapes)["llama8b-b1-32k"]


def test_paged_name_of_variants():
    assert summary.paged_name("splitkv") == "splitkv_paged"
    assert summary.paged_name("tuned[n64-w4-s3-m64-twokernel]") == "tuned_paged[n64-w4-s3-m64-twokernel]"


def artifact(tmp_path, **overrides):
    shapes = select(["llama8b-b1-4k"])
    res = results([row("llama8b-b1-4k", "splitkv", 7.0), row("llama8b-b1-4k", "sdpa_default", 9.4, kind="peer")],
                  shapes)
    res.update({"complete": True, "correctness_passed": True, "correctness_failures": []})
    res.update(overrides)
    art = {"schema_version": 1, "id": "bench-test", "kind": "benchmark", "created": "2026-11-29T00:00:00Z",
           "command": "python -m validation.bench --out x.json", "environment": {"device": "test"},
           "commit": None, "sources": {}, "fixtures": {}, "results": res}
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(art))
    return path


def test_report_is_written_from_a_passing_artifact(tmp_path):
    out = tmp_path / "r" / "report.md"
    assert report.main([str(artifact(tmp_path)), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| llama8b-b1-4k | 16.8 | 7.00 | sdpa_default | 9.40 | 0.745 |" in text
    assert "bench-test" in text


@pytest.mark.parametrize(
    "overrides, message",
    [
        pytest.param({"correctness_passed": False, "correctness_failures": ["x:splitkv:s8"]},
                     "correctness failed, nothing is reported", id="correctness-failed"),
        pytest.param({"complete": False}, "the run did not finish", id="incomplete"),
    ],
)
def test_report_refuses_an_artifact_that_cannot_back_it(tmp_path, capsys, overrides, message):
    assert report.main([str(artifact(tmp_path, **overrides)), "--out", str(tmp_path / "r.md")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r.md").exists()


def test_plain_table_names_the_ceilings(tmp_path):
    art = json.loads(artifact(tmp_path).read_text())
    text = format_table(art)
    assert text.startswith("read ceiling 4.580 TB/s, copy ceiling 4.250 TB/s")
    assert "llama8b-b1-4k" in text


@pytest.mark.parametrize("label", ["n64-w4-s3-m64-fused", "n32-w8-s2-m32-twokernel-ef", "n64-w4-s3-m64-twokernel-pf"])
def test_launch_config_labels_round_trip(label):
    assert LaunchConfig.from_label(label).label() == label


@pytest.mark.parametrize("label", ["w4-s3", "n64-x4", "n64-w4-s3-m64-fast"])
def test_bad_launch_config_labels_are_refused(label):
    with pytest.raises(ValueError, match="launch config label"):
        LaunchConfig.from_label(label)


def test_ncu_raw_csv_is_parsed_into_numbers():
    text = "\n".join([
        "==PROF== Connected",
        '"ID","Kernel Name","launch__grid_size","dram__throughput.avg.pct_of_peak_sustained_elapsed"',
        '"","","","%"',
        '"0","decode_attention_partial_kernel","256","77.51"',
    ])
    (k,) = parse_raw_csv(text)
    assert k["kernel"] == "decode_attention_partial_kernel"
    assert k["metrics"] == {"launch__grid_size": 256, "dram__throughput.avg.pct_of_peak_sustained_elapsed": 77.51}
    assert k["units"] == {"dram__throughput.avg.pct_of_peak_sustained_elapsed": "%"}


def test_ncu_report_without_kernels_is_an_error():
    with pytest.raises(ValueError, match="no profiled kernel"):
        parse_raw_csv('"ID","Kernel Name"\n')



def swept_rows(s, *, layer_us, heuristic, single_us, sweep, peer_us=None):
    """A model-matrix row as the benchmark writes it with --sweep: the layer's route, the single pass, the sweep."""
    rows = [row(s, "splitkv", layer_us, splits=heuristic), row(s, "single_pass", single_us, kind="baseline", splits=1)]
    rows += [row(s, "splitkv", us, role="sweep", splits=n) for n, us in sweep.items()]
    if peer_us is not None:
        rows.append(row(s, "sdpa_cudnn", peer_us, kind="peer", splits=None))
    return rows


def route_of(s, heuristic, **kwargs):
    return routing.routing(results(swept_rows(s, heuristic=heuristic, **kwargs), select([s]), heuristic)["summary"][s])


def test_the_layer_is_flagged_where_another_own_route_is_more_than_3_percent_faster():
    r = route_of("llama8b-b1-32k", 32, layer_us=40.0, single_us=400.0, sweep={1: 410.0, 16: 38.6, 32: 40.0},
                 peer_us=39.5)
    assert (r["layer_route"], r["best_own_route"]) == ("splitkv-32", "splitkv-16")
    assert r["ratio_to_best_own"] == pytest.approx(40.0 / 38.6)
    assert r["flags"] == ["slower_than_own_best"], "3.6 % over its own best; 1.3 % over the peer is within 2 %"


def test_split_1_counts_as_an_own_route_for_the_single_pass_work():
    """split(1) gives the single pass's bits, so a faster split(1) launch is the best own route."""
    r = route_of("llama8b-b64-2k", 1, layer_us=130.0, single_us=130.0, sweep={1: 120.0, 2: 131.0}, peer_us=125.0)
    assert (r["layer_route"], r["best_own_route"], r["best_own_us"]) == ("single_pass", "splitkv-1", 120.0)
    assert r["flags"] == ["slower_than_own_best", "slower_than_best_peer"]


def test_a_layer_on_its_best_route_and_level_with_the_peer_is_not_flagged():
    r = route_of("llama8b-b1-32k", 32, layer_us=37.0, single_us=400.0, sweep={16: 37.9, 32: 37.0}, peer_us=37.5)
    assert r["flags"] == []
    assert routing.routing({"ours_us": 37.0, "heuristic_splits": 32}) is None, "a shape that was not swept"


def write_swept_run(tmp_path, name, layer_us, best_us):
    res = results(swept_rows(name, layer_us=layer_us, heuristic=32, single_us=900.0, sweep={16: best_us, 32: layer_us}),
                  select([name]), heuristic=32)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"commit": "abc", "results": res}))
    return str(path)


def test_routing_report_reads_several_runs_and_fails_on_a_flagged_row(tmp_path, capsys):
    paths = [write_swept_run(tmp_path, "llama8b-b1-32k", 37.0, 38.0),
             write_swept_run(tmp_path, "llama8b-b1-128k", 140.0, 126.0)]
    assert routing_report.main(paths + ["--flagged", "--json", str(tmp_path / "routing.json")]) == 1
    out = capsys.readouterr().out
    assert "| llama8b-b1-128k | `splitkv-32` | 140.00 | `splitkv-16` | 126.00 | 1.111 |" in out
    assert "llama8b-b1-32k |" not in out, "--flagged leaves out the row on its best route"
    assert "2 rows: the layer within 1.03x of its best own route on 1, worst 1.111x (llama8b-b1-128k" in out
    written = json.loads((tmp_path / "routing.json").read_text())
    assert written["counts"] == {"rows": 2, "within_own_bar": 1, "worst_own": "llama8b-b1-128k",
                                 "worst_ratio_to_best_own": pytest.approx(140 / 126), "rows_with_peer": 0,
                                 "within_peer_bar": 0}
    assert [r["shape"] for r in written["rows"]] == ["llama8b-b1-32k", "llama8b-b1-128k"]


def test_routing_report_passes_when_every_row_is_on_its_best_route(tmp_path, capsys):
    assert routing_report.main([write_swept_run(tmp_path, "llama8b-b1-32k", 37.0, 38.0)]) == 0
    assert "1 rows: the layer within 1.03x of its best own route on 1, worst 1.000x" in capsys.readouterr().out


def test_routing_report_names_an_artifact_without_a_sweep(tmp_path, capsys):
    path = artifact(tmp_path)
    assert routing_report.main([str(path)]) == 2
    assert f"{path}: no shape has a split sweep (run the benchmark with --sweep)" in capsys.readouterr().err
