"""A number in §7 cannot slip past its artifact (red-team report, H7).

The example record's numeric artifact `numeric-cpu` is given a second dtype, so that it
measured (as the red team's did):

- fp16: rel_l2 ≈ 2.13e-4 over 2 cases;
- fp32: rel_l2 ≈ 5.02e-7, max_abs ≈ 1.96e-5 over 48 cases.

Each misquote below is the only sentence added to §7; each has an honest counterpart, worded
the same way, that passes.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from gates.checks.runner import check_records

RECORD = "G1/positive/diagnosis-name-forms.md"
ARTIFACT = "evidence/numeric-cpu.json"
RESULTS_END = "## §8 Limitations"
FP16 = {"rel_l2": 0.0002125358857988969, "cases": 2}


@pytest.fixture()
def section7(examples_repo):
    """`section7(text)`: the G7 findings (self-check aside) with `text` added at the end of §7."""
    artifact_path = examples_repo / ARTIFACT
    artifact = json.loads(artifact_path.read_text(encoding="utf-8"))
    artifact["results"]["per_dtype"]["fp16"] = FP16
    artifact_path.write_text(json.dumps(artifact, indent=2), encoding="utf-8")
    record_path = examples_repo / RECORD
    original = record_path.read_text(encoding="utf-8")
    pinned = _repin(original, artifact_path.read_bytes())

    def check(text: str) -> list[str]:
        record_path.write_text(pinned.replace(RESULTS_END, f"{text}\n\n{RESULTS_END}", 1), encoding="utf-8")
        report = check_records([record_path], examples_repo, gates=["G7"])
        assert not report.input_errors, report.input_errors
        (record,) = report.records
        return [f.message for f in record.gates["G7"].findings if not f.message.startswith("self-check")]

    return check


def _repin(record_text: str, artifact_bytes: bytes) -> str:
    """The record with the numeric-cpu entry pinned to the artifact's new bytes."""
    line = next(line for line in record_text.splitlines() if line.strip().startswith("- {id: numeric-cpu,"))
    old = line.split("sha256: ", 1)[1].split(",", 1)[0]
    return record_text.replace(line, line.replace(old, hashlib.sha256(artifact_bytes).hexdigest()))


def test_the_record_passes_with_the_second_dtype(section7):
    assert section7("") == []


@pytest.mark.parametrize("misquote, honest, shown", [
    ("fp16 的 rel_l2 降低到0.00000001。", "fp16 的 rel_l2 降低到0.0002。", "0.00000001"),
    ("内核耗时12ms。", "内核耗时9.8µs（`bench-h200:rows[visible_tokens=2048].splitkv_s8_us`）。", "12 ms"),
    ("核函数加速2倍。", "核函数加速4.20倍（`bench-h200:rows[visible_tokens=2048].speedup`）。", "2倍"),
], ids=["decimal", "milliseconds", "times"])
def test_a_number_written_right_after_cjk_text_is_traced(section7, misquote, honest, shown):
    (message,) = section7(misquote)
    assert message.startswith(shown)
    assert section7(honest) == []


@pytest.mark.parametrize("misquote, honest", [
    ("The fp16 relative error against the oracle is 0.00000001.", "The fp16 rel_l2 against the oracle is 0.0002."),
    ("The fp16 result is within 1e-12 of the float64 oracle.", "The fp16 rel_l2 is 2.1e-4 against the float64 oracle."),
    ("The fp16 relative L2 error is 2.1e-9.", "The fp16 relative L2 error (rel_l2) is 2.1e-4."),
    ("fp16 rel_l2 = 0.0002 and max_ulp = 0.0000.", "fp16 rel_l2 = 0.0002 over 2 cases."),
], ids=["plain-decimal", "power-of-ten", "unnamed-metric", "metric-the-artifact-lacks"])
def test_a_number_without_a_unit_in_prose_is_traced(section7, misquote, honest):
    (message,) = section7(misquote)
    assert "is not tied to an artifact value" in message
    assert section7(honest) == []


@pytest.mark.parametrize("zero", ["0.", "0.000", "0e0", "0.0"])
def test_a_measured_error_cannot_be_rounded_to_zero(section7, zero):
    (message,) = section7(f"fp16 rel_l2 = {zero}")
    assert "is not the value it names, numeric-cpu:per_dtype.fp16.rel_l2 = 0.000212" in message
    assert section7("fp16 rel_l2 = 0.0002") == []


def test_the_quoted_precision_keeps_a_significant_digit(section7):
    (message,) = section7("fp32 rel_l2 = 0.000001")  # 5.02e-7 at a precision of 1e-6
    assert "is not the value it names" in message
    assert section7("fp32 rel_l2 = 0.0000005") == []


def test_a_reference_to_another_dtype_is_an_error_naming_both(section7):
    (message,) = section7("fp16 rel_l2 = 5.02e-7 (`numeric-cpu:per_dtype.fp32.rel_l2`).")
    assert "5.02e-7 and its reference disagree" in message
    assert "fp16" in message and "`numeric-cpu:per_dtype.fp32.rel_l2` is the value of fp32" in message
    assert section7("float16 rel_l2 = 5.02e-7 (`numeric-cpu:per_dtype.fp32.rel_l2`).") != []
    assert section7("fp32 rel_l2 = 5.02e-7 (`numeric-cpu:per_dtype.fp32.rel_l2`).") == []


def test_a_reference_to_another_metric_is_an_error_naming_both(section7):
    (message,) = section7("fp16 rel_l2 = 2 (`numeric-cpu:per_dtype.fp16.cases`).")
    assert "2 and its reference disagree" in message
    assert "the sentence says rel_l2, but `numeric-cpu:per_dtype.fp16.cases` is cases" in message
    assert section7("fp16 cases = 2 (`numeric-cpu:per_dtype.fp16.cases`).") == []
    assert section7("fp16 rel_l2 = 0.0002 (`numeric-cpu:per_dtype.fp16.rel_l2`).") == []


@pytest.mark.parametrize("misquote, honest, shown", [
    ("The split route takes 9.**9** µs.", "The split route takes 9.**8** µs (`bench-h200:rows[visible_tokens=2048].splitkv_s8_us`).",
     "9.9 µs"),
    ("The split route takes 9,9 µs.", "The split route takes 9,8 µs (`bench-h200:rows[visible_tokens=2048].splitkv_s8_us`).",
     "9.9 µs"),
    ("The split route is a five-fold speedup.",
     "The split route is a four-fold speedup (`bench-h200:rows[visible_tokens=2048].speedup`).", "5-fold"),
    ("核函数加速四倍。", "核函数加速4.20倍（`bench-h200:rows[visible_tokens=2048].speedup`）。", "4倍"),
], ids=["emphasis-inside", "decimal-comma", "word-fold", "zh-numeral-times"])
def test_a_number_in_any_written_form_is_traced(section7, misquote, honest, shown):
    (message,) = section7(misquote)
    assert message.startswith(shown) and ("is not tied to an artifact value" in message
                                          or "is not the value it names" in message)
    assert section7(honest) == []


@pytest.fixture()
def design(examples_repo):
    """`design(text)`: the G7 findings (self-check aside) with `text` added at the start of §3."""
    record_path = examples_repo / RECORD
    original = record_path.read_text(encoding="utf-8")
    heading = next(line for line in original.splitlines() if line.startswith("## §3"))

    def check(text: str) -> list[str]:
        record_path.write_text(original.replace(heading, f"{heading}\n\n{text}\n", 1), encoding="utf-8")
        report = check_records([record_path], examples_repo, gates=["G7"])
        assert not report.input_errors, report.input_errors
        (record,) = report.records
        return [f.message for f in record.gates["G7"].findings if not f.message.startswith("self-check")]

    return check


def test_a_number_that_names_a_value_is_that_value_outside_the_results_too(design):
    (message,) = design("The split route is 2.3x faster (`bench-h200:rows[visible_tokens=2048].speedup`).")
    assert message.startswith("2.3x is not the value it names") and "(§3)" in message
    assert design("The split route is 4.2x faster (`bench-h200:rows[visible_tokens=2048].speedup`).") == []
    assert design("The split route is 2.3x faster in our sketch of the idea.") == []
