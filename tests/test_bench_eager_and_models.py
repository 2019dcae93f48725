"""The benchmark's eager timings, host-overhead section and model matrix (no GPU: synthetic
artifacts, and the shape lists)."""

import json

import pytest

from validation.bench import report, summary
from validation.bench.__main__ import parse_args
from validation.bench.shapes import select


def artifact(tmp_path, host=True):
    (shape,) = select(["llama8b-b1-4k"])
    rows = [{"shape": shape.name, "impl": "splitkv", "kind": "ours", "role": "matrix", "num_splits": 8,
             "paged": False, "median_us": 7.0, "eager_median_us": 21.0, "fraction_of_read_ceiling": 0.5,
             "correctness": {"passed": True}},
            {"shape": shape.name, "impl": "sdpa_default", "kind": "peer", "role": "matrix", "num_splits": None,
             "paged": False, "median_us": 9.4, "eager_median_us": 30.0, "fraction_of_read_ceiling": 0.4,
             "correctness": {"passed": True}}]
    meta = {shape.name: {"heuristic_splits": 8, "kv_bytes": shape.kv_bytes, "anchors": {"a": True},
                         "shape": {"B": 1, "Hq": 32, "Hkv": 8, "D": 128, "S": 4096, "R": 1}}}
    res = {"ours": "splitkv", "rows": rows, "shapes": meta,
           "ceilings": {"read": {"TBps": 4.58, "bytes": 4 << 30}, "copy": {"TBps": 4.25}},
           "complete": True, "correctness_passed": True, "correctness_failures": []}
    if host:
        res["host_overhead"] = {"shape": {"batch": 1}, "device": "cuda", "stubbed_kernels": False, "plans": 4,
                                "direct_launch_plans": 4,
                                "entries": {"attention_decode": {"median_us": 9.5, "min_us": 9.0},
                                            "sdpa": {"median_us": 27.0, "min_us": 25.0}}}
    res["summary"] = summary.summarize(res, (select(["llama8b-b1-4k"])[0],))
    art = {"schema_version": 1, "id": "bench-test", "kind": "benchmark", "created": "2026-11-29T00:00:00Z",
           "command": "python -m validation.bench --out x.json", "environment": {"device": "test"},
           "commit": None, "sources": {}, "fixtures": {}, "results": res}
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(art))
    return path


def test_the_report_shows_graph_and_eager_times_and_the_host_path(tmp_path):
    out = tmp_path / "r.md"
    assert report.main([str(artifact(tmp_path)), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| llama8b-b1-4k | splitkv | 8 | 7.00 | 21.00 | 3.00 |" in text
    assert "| llama8b-b1-4k | sdpa_default | - | 9.40 | 30.00 | 3.19 |" in text
    assert "| attention_decode | 9.50 | 9.00 |" in text and "| sdpa | 27.00 | 25.00 |" in text


def test_an_artifact_without_host_times_says_so(tmp_path):
    out = tmp_path / "r.md"
    assert report.main([str(artifact(tmp_path, host=False)), "--out", str(out)]) == 0
    assert "(Not measured in this artifact.)" in out.read_text()


def test_the_model_matrix_is_selectable():
    assert parse_args(["--matrix", "models", "--out", "x.json"]).matrix == "models"
    shapes = select(None, "models")
    assert len(shapes) > 100 and len({s.name for s in shapes}) == len(shapes)
    (shape,) = select(["Qwen2.5-14B-tp4-b16-8k"], "models")
    assert (shape.batch, shape.num_q_heads, shape.num_kv_heads, shape.head_dim, shape.context) == (16, 10, 2, 128, 8192)
    with pytest.raises(ValueError, match="unknown matrix"):
        select(None, "nope")
