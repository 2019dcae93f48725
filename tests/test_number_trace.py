"""Quoted numbers are tied to one named artifact value, in the unit the record quotes.

The attacks here are edits an author made to this repository's own records that the
gates used to accept: a results number equal to some raw sample, a bare number that
happens to be a leaf somewhere, a stored percentage quoted times 100, and misquotes in
the `name <op> value` forms the diagnosis check did not read.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gates.checks.cited_values import CitedValues, TraceError
from gates.checks.number_trace import SectionTracer, measured_numbers, no_measured_numbers
from gates.checks.quoted_numbers import matches_value, numbers_with_units, parse_quoted
from gates.checks.runner import check_records

REPO = Path(__file__).resolve().parents[1]
SPLITKV = "docs/design/splitkv-decode-attention.md"
PAGED = "docs/design/paged-decode-attention.md"


@pytest.fixture
def own_repo(tmp_path):
    """A copy of this repository's records, evidence and the code the end-to-end evidence binds;
    `edit(record, old, new)` changes one record."""
    for folder in ("docs/design", "docs/evidence", "docs/results", ".design-gates", "kernels", "examples"):
        shutil.copytree(REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))

    def edit(record: str, old: str, new: str) -> Path:
        path = tmp_path / record
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{old!r} must occur once in {record}"
        path.write_text(text.replace(old, new), encoding="utf-8")
        return path

    edit.root = tmp_path
    return edit


def measured(artifact: str, *keys) -> float:
    """A value of one of this repository's artifacts (the records quote it as measured)."""
    value = json.loads((REPO / "docs" / "evidence" / f"{artifact}.json").read_text(encoding="utf-8"))["results"]
    for key in keys:
        value = value[key]
    return value


OURS_32K = f"{measured('bench-splitkv-h200', 'summary', 'llama8b-b1-32k', 'ours_us'):.2f}"
SINGLE_32K = f"{measured('bench-splitkv-h200', 'summary', 'llama8b-b1-32k', 'single_pass_us'):.2f}"
DRAM_BYTES = measured("ncu-single-pass-h200", "metrics", "dram__bytes_read.sum")


def findings(path: Path, root: Path, gate: str) -> list[str]:
    report = check_records([path], root, gates=[gate])
    assert not report.input_errors, report.input_errors
    (record,) = report.records
    return [finding.message for finding in record.gates[gate].findings if not finding.message.startswith("self-check")]


# ---- G7: results numbers ----------------------------------------------------------------------------------------

def test_the_own_split_kv_record_traces_every_results_number(own_repo):
    assert findings(own_repo.root / SPLITKV, own_repo.root, "G7") == []


def test_a_table_number_changed_to_a_raw_sample_of_the_artifact_fails(own_repo):
    # 35.02 is a timing sample somewhere in the benchmark artifact; it is not this row's split route.
    path = own_repo(SPLITKV, f"| 32 | {OURS_32K} | {SINGLE_32K} |", f"| 32 | 35.02 | {SINGLE_32K} |")
    (message,) = findings(path, own_repo.root, "G7")
    assert message.startswith("35.02 is not the value it names, bench-splitkv-h200:summary.llama8b-b1-32k.ours_us")


def test_a_prose_number_with_a_reference_must_be_the_referenced_value(own_repo):
    path = own_repo(SPLITKV, f"takes {OURS_32K} us (`bench-splitkv-h200:", "takes 35.02 us (`bench-splitkv-h200:")
    (message,) = findings(path, own_repo.root, "G7")
    assert "35.02 us is not the value it names" in message


def test_bare_numbers_that_exist_somewhere_in_the_ncu_artifact_are_not_traced(own_repo):
    # 37.5 (sm__maximum_warps_per_active_cycle_pct) and 128 (block size) are leaves of the ncu artifact.
    path = own_repo(SPLITKV, "(168 registers a thread; no spills).",
                    "(168 registers a thread; no spills), at 37.5 % of the read ceiling and 128x faster.")
    messages = findings(path, own_repo.root, "G7")
    assert [m.split(" is ")[0] for m in messages] == ["37.5%", "128x"]
    assert all("is not tied to an artifact value" in m for m in messages)


def test_a_measured_number_written_as_inline_code_is_still_traced(own_repo):
    path = own_repo(SPLITKV, "(168 registers a thread; no spills).", "(168 registers a thread; no spills) in `35.02 µs`.")
    (message,) = findings(path, own_repo.root, "G7")
    assert message.startswith("35.02 µs is not tied to an artifact value")


def test_a_declared_tolerance_value_does_not_excuse_an_untied_time(own_repo):
    path = own_repo(SPLITKV, "(168 registers a thread; no spills).",
                    "(168 registers a thread; no spills); the check takes 0.015625 ms.")
    (message,) = findings(path, own_repo.root, "G7")
    assert message.startswith("0.015625 ms is not tied to an artifact value")


def test_a_reference_to_a_key_that_does_not_exist_fails(own_repo):
    path = own_repo(SPLITKV, "summary.llama8b-b1-32k.ours_us`) where", "summary.llama8b-b1-32k.our_us`) where")
    (message,) = findings(path, own_repo.root, "G7")
    assert "there is no key 'our_us'" in message


# ---- G1: diagnosis numbers --------------------------------------------------------------------------------------

def test_a_stored_percentage_is_not_multiplied_by_100(own_repo):
    percent = measured("ncu-single-pass-h200", "metrics", "dram__throughput.avg.pct_of_peak_sustained_elapsed")
    times_100 = f"{round(percent, 2) * 100:g}"
    path = own_repo(SPLITKV, f"| `dram__throughput.avg.pct_of_peak_sustained_elapsed` | {percent:.2f} % |",
                    f"| `dram__throughput.avg.pct_of_peak_sustained_elapsed` | {times_100} % |")
    (message,) = findings(path, own_repo.root, "G1")
    assert f"quotes dram__throughput.avg.pct_of_peak_sustained_elapsed = {times_100}%" in message


@pytest.mark.parametrize("sentence", [
    "launch__grid_size ≈ 200",
    "launch__grid_size ~ 200",
    "launch__grid_size is 200",
    "launch__grid_size: 200",
    "`launch__grid_size` = 200",
    "**launch__grid_size** = 200",
    "**`launch__grid_size`** = 200",
], ids=["approx", "tilde", "is", "colon", "code", "bold", "bold-code"])
def test_every_name_operator_value_form_is_checked(own_repo, sentence):
    path = own_repo(PAGED, "two\nprograms for 132 SMs.", f"two\nprograms for 132 SMs ({sentence}).")
    (message,) = findings(path, own_repo.root, "G1")
    assert "quotes launch__grid_size = 200, but the cited evidence measured ncu-single-pass-h200:" in message


@pytest.mark.parametrize("quoted", [f"{DRAM_BYTES:,}".replace(",", separator) for separator in (" ", "\u2009", "\u202f", ",")],
                         ids=["space", "thin-space", "narrow-nbsp", "comma"])
def test_grouped_thousands_are_read_as_one_number(own_repo, quoted):
    path = own_repo(PAGED, "two\nprograms for 132 SMs.", f"two\nprograms for 132 SMs (dram__bytes_read.sum = {quoted}).")
    assert findings(path, own_repo.root, "G1") == []


def test_a_grouped_misquote_is_caught(own_repo):
    misquote = f"{DRAM_BYTES + 1:,}".replace(",", " ")
    path = own_repo(PAGED, "two\nprograms for 132 SMs.", f"two\nprograms for 132 SMs (dram__bytes_read.sum = {misquote}).")
    (message,) = findings(path, own_repo.root, "G1")
    assert misquote in message


def test_a_value_in_a_later_cell_is_checked(own_repo):
    path = own_repo(PAGED, "| `launch__grid_size` | 2 | programs: one per KV head, each carrying its 7 query heads |",
                    "| `launch__grid_size` | programs, one per KV head | 200 |")
    (message,) = findings(path, own_repo.root, "G1")
    assert "quotes launch__grid_size = 200" in message


# ---- the tracer on plain data -----------------------------------------------------------------------------------

BENCH = {"rows": [{"tokens": 2048, "split_us": 9.8}, {"tokens": 16384, "split_us": 44.1}],
         "fraction_of_read_ceiling": 0.0609, "speedup": 4.2}
NCU = {"metrics": {"gpu__time_duration.sum": 25024, "occupancy": 6.24, "grid": 2},
       "units": {"gpu__time_duration.sum": "ns", "occupancy": "%"}}


def trace(lines, artifacts=None, measured=measured_numbers(False), linked=lambda line: ()):
    values = CitedValues(artifacts or {"bench": BENCH, "ncu": NCU}, declared=["bench", "ncu", "other"])
    return SectionTracer(values, linked).trace(list(enumerate(lines, start=1)), measured)


def outcomes(result):
    return [(tie.quoted.shown(), tie.target.key if tie.target else tie.problem, tie.mismatch()) for tie in result.ties]


def test_a_reference_after_the_number_names_its_value():
    result = trace(["The split takes 9.8 µs (`bench:rows[tokens=2048].split_us`) and 44.1 µs `bench:rows[1].split_us`."])
    assert outcomes(result) == [("9.8 µs", "rows[tokens=2048].split_us", False), ("44.1 µs", "rows[1].split_us", False)]
    assert result.untied == []


RUNS = {"runs": {"models": {"worst": {"one_call_layer": 12.74}}, "layer": {"worst": {"one_call_layer": 9.43}}}}


def test_a_word_of_the_values_own_name_is_not_read_as_another_case():
    # "layer" names a run and is a part of the value's name: the sentence speaks of the layer's time
    honest = trace(["On the model rows the layer reached 12.74 µs (`bench:runs.models.worst.one_call_layer`)."],
                   artifacts={"bench": RUNS})
    assert [(tie.quoted.shown(), tie.problem, tie.mismatch()) for tie in honest.ties] == [("12.74 µs", None, False)]
    misquote = trace(["In the models run it reached 9.43 µs (`bench:runs.layer.worst.one_call_layer`)."],
                     artifacts={"bench": RUNS})
    (tie,) = misquote.ties
    assert tie.mislabelled and tie.problem == ("the sentence speaks of models, but "
                                               "`bench:runs.layer.worst.one_call_layer` is the value of layer")


def test_a_header_template_maps_a_column_by_the_row():
    result = trace(["| tokens | split `bench:rows[tokens={row}].split_us` |", "|---|---|", "| 2048 | 9.8 |",
                    "| 16384 | 9.8 |"])
    assert outcomes(result) == [("9.8", "rows[tokens=2048].split_us", False),
                                ("9.8", "rows[tokens=16384].split_us", True)]


def test_units_convert_and_percentages_follow_how_the_value_is_stored():
    result = trace(["gpu__time_duration.sum = 25.0 µs, gpu__time_duration.sum = 25.0 ms, occupancy = 6.24 %, "
                    "occupancy = 624 %, 6.1 % (`bench:fraction_of_read_ceiling`), 4.20x (`bench:speedup`), "
                    "6.24x (`ncu:metrics.occupancy`)"], measured=no_measured_numbers)
    assert [mismatch for _, _, mismatch in outcomes(result)] == [False, True, False, True, False, False, True]


def test_untied_numbers_are_reported_with_their_column():
    result = trace(["It is 4.20x faster (see `bench:speedup`)."])
    assert [(line, quoted.shown(), quoted.col) for line, quoted in result.untied] == [(1, "4.20x", 7)]


@pytest.mark.parametrize("reference, problem", [
    ("`other:speedup`", "'other' is not an artifact this check reads"),
    ("`bench:rows[7].split_us`", "index 7 is past the end"),
    ("`bench:rows[tokens=1].split_us`", "0 elements have tokens = 1"),
    ("`bench:rows`", "is not a number"),
    ("`bench:results.nothing`", "there is no key 'nothing'"),
])
def test_a_reference_that_names_no_value_is_a_problem_not_a_pass(reference, problem):
    (tie,) = trace([f"It is 4.2x {reference}."]).ties
    assert tie.target is None and problem in tie.problem


def test_a_metric_name_measured_by_two_artifacts_must_say_which():
    twins = {"a": {"metrics": {"grid": 2}}, "b": {"metrics": {"grid": 256}}}
    (tie,) = trace(["grid = 2"], twins, no_measured_numbers).ties
    assert "several cited artifacts (a, b)" in tie.problem
    (tie,) = trace(["grid = 2 in [a](a.json)"], twins, no_measured_numbers, linked=lambda line: {"a"}).ties
    assert tie.target.artifact_id == "a" and not tie.mismatch()


def test_matches_value_is_strict_about_units():
    assert matches_value(parse_quoted("89", "%"), 0.89, "%") is False
    assert matches_value(parse_quoted("0.89", "%"), 0.89, "%") is True
    assert matches_value(parse_quoted("6.1", "%"), 0.0609, "") is True
    assert matches_value(parse_quoted("442.70", "us"), 442.7, "us") is True
    assert matches_value(parse_quoted("0.443", "ms"), 442.7, "us") is True
    assert matches_value(parse_quoted("1", "KiB"), 1024, "B") is True
    assert matches_value(parse_quoted("25", "µs"), 25024, "%") is False


def test_numbers_with_units_read_grouped_thousands():
    found = numbers_with_units("read 1 064 704 B, 1\u2009048\u2009576 B and 134,217,728 B")
    assert [quoted.value for quoted in found] == [1064704, 1048576, 134217728]


def test_a_hostile_table_row_of_named_cells_is_traced_in_linear_time():
    import time  # CPU time of this process: other load on the machine does not count

    values = CitedValues({"a": {"metrics": {"m1": 1}}}, declared=["a"])
    row = "| " + "`m1` | words | " * 6000
    started = time.process_time()
    result = SectionTracer(values).trace([(1, "| name | reading |"), (2, "|---|---|"), (3, row)],
                                         measured_numbers(False))
    assert result.ties == [] and time.process_time() - started < 5


def test_a_measured_number_in_a_table_header_is_not_skipped():
    result = trace(["| shape | at 35.02 µs `bench:rows[tokens={row}].split_us` |", "|---|---|", "| 2048 | 9.8 |"])
    assert [quoted.shown() for _, quoted in result.untied] == ["35.02 µs"]
    assert outcomes(result) == [("9.8", "rows[tokens=2048].split_us", False)]
