"""However a quoted number is worded, it is tied to the value it names and checked.

Each misquote below is a sentence an author could write instead of the honest one; each
has a benign counterpart (the true value, worded the same way) that must pass. The record
is the shipped example `G1/positive/diagnosis-name-forms.md`, whose evidence measured:

- profile `ncu-single-pass`: grid_blocks = 14, registers = 39, sm__warps_active = 8.33 %,
  smem_bytes = 928 B, dram__throughput = 0.44 %;
- numeric `numeric-cpu`: per_dtype.fp32 rel_l2 ≈ 5.02e-7, max_abs ≈ 1.96e-5, cases = 48;
- benchmark `bench-h200`: rows for 2048 and 16384 visible tokens (split route 9.8 and 44.1 µs,
  speedup 4.2 and 7.04).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gates.checks.runner import check_records

EXAMPLES = Path(__file__).parent / "examples"
RECORD = "G1/positive/diagnosis-name-forms.md"
DIAGNOSIS_LINE = ("Latency bound from too little parallelism: long_scoreboard_stall = 45.8%. The grid: grid_blocks ≈ 14, "
                  "**registers** = 39, `smem_bytes` is 928, dram__throughput: 0.44 %.")
RESULTS_END = "## §8 Limitations"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """A copy of the example repository; `write(gate, text)` puts `text` in §1 (G1) or §7 (G7) and checks it."""
    root = tmp_path_factory.mktemp("examples")
    shutil.copytree(EXAMPLES, root, dirs_exist_ok=True)
    original = (root / RECORD).read_text(encoding="utf-8")
    assert original.count(DIAGNOSIS_LINE) == 1 and original.count(RESULTS_END) == 1

    def write(gate: str, text: str) -> list[str]:
        if gate == "G1":
            changed = original.replace(DIAGNOSIS_LINE, text)
        else:
            changed = original.replace(RESULTS_END, f"{text}\n\n{RESULTS_END}")
        (root / RECORD).write_text(changed, encoding="utf-8")
        report = check_records([root / RECORD], root, gates=[gate])
        assert not report.input_errors, report.input_errors
        (record,) = report.records
        return [f.message for f in record.gates[gate].findings if not f.message.startswith("self-check")]

    return write


def test_the_example_record_passes_as_shipped(example):
    assert example("G1", DIAGNOSIS_LINE) == []
    assert example("G7", "") == []


# ---- G1: a metric name and a number, however joined --------------------------------------------------------------

@pytest.mark.parametrize("misquote, honest", [
    ("grid_blocks of 200 programs", "grid_blocks of 14 programs"),
    ("grid_blocks was 200", "grid_blocks was 14"),
    ("grid_blocks → 200", "grid_blocks → 14"),
    ("grid_blocks (200)", "grid_blocks (14)"),
    ("grid_blocks = ~200", "grid_blocks = ~14"),
    ("grid_blocks equals 200", "grid_blocks equals 14"),
    ("grid blocks = 200", "grid blocks = 14"),
    ("grid-blocks = 200", "grid-blocks = 14"),
    ("200 grid_blocks", "14 grid_blocks"),
    ("grid_blocks is about 200", "grid_blocks is about 14"),
    ("grid_blocks reads 200", "grid_blocks reads 14"),
    ("Grid blocks = 200", "Grid blocks = 14"),
], ids=["of", "was", "arrow", "brackets", "equals-tilde", "equals-word", "spaces", "hyphens", "number-first",
        "is-about", "reads", "capitalised"])
def test_g1_ties_every_joining_of_name_and_number(example, misquote, honest):
    (message,) = example("G1", f"The grid: {misquote}.")
    assert "quotes grid_blocks = 200, but the cited evidence measured ncu-single-pass:metrics.grid_blocks = 14" in message
    assert example("G1", f"The grid: {honest}.") == []


@pytest.mark.parametrize("false_bound, true_bound", [
    ("sm__warps_active ≥ 83 %", "sm__warps_active ≥ 8 %"),
    ("sm__warps_active > 83 %", "sm__warps_active > 8.3 %"),
    ("sm__warps_active < 8 %", "sm__warps_active < 9 %"),
    ("sm__warps_active ≤ 8.2 %", "sm__warps_active ≤ 8.33 %"),
    ("sm warps active is at least 10 %", "sm warps active is at least 8 %"),
    ("grid_blocks is below 10", "grid_blocks is below 20"),
], ids=["ge", "gt", "lt", "le", "at-least", "below"])
def test_g1_a_bound_must_be_true_of_the_measured_value(example, false_bound, true_bound):
    (message,) = example("G1", f"Occupancy: {false_bound}.")
    assert "which does not hold: the cited evidence measured ncu-single-pass:metrics." in message
    assert example("G1", f"Occupancy: {true_bound}.") == []


def test_g1_a_bound_far_above_the_value_is_still_true(example):
    # 8.33 % is below 83 %: a loose bound is not a misquote (a tight one must be written as a value).
    assert example("G1", "Occupancy: sm__warps_active < 83 %.") == []


def test_g1_per_mille_is_a_tenth_of_a_percent(example):
    (message,) = example("G1", "Occupancy: sm__warps_active ≈ 8.33 ‰.")
    assert "quotes sm__warps_active = 8.33‰" in message
    assert example("G1", "Occupancy: sm__warps_active ≈ 83.3 ‰.") == []


# ---- G7: units in words, ratios in words, scientific notation ----------------------------------------------------

@pytest.mark.parametrize("sentence", [
    "The split route takes 1.2 microseconds per row.",
    "The split route takes 1.2 usec per row.",
    "The split route is 12 times faster than the single pass.",
    "The split route is 4.2-fold faster than the single pass.",
    "It takes 5.0·10⁻⁹ s per row.",
    "It takes 5.0×10^-9 s per row.",
    "It takes 5e-9 s per row.",
    "It takes 5.0*10**-9 s per row.",
    "The split route is 12-times faster than the single pass.",
    "The split route gives 3 times the bandwidth of the single pass.",
    "### The split route takes 1.2 µs per row",
], ids=["microseconds", "usec", "times", "fold", "dot-superscript", "cross-caret", "e-notation", "double-star",
        "hyphen-times", "times-the", "heading"])
def test_g7_a_number_with_a_unit_in_any_spelling_must_be_tied(example, sentence):
    (message,) = example("G7", sentence)
    assert "is not tied to an artifact value" in message


@pytest.mark.parametrize("sentence", [
    "At 2048 visible tokens the split route takes 9.8 microseconds (`bench-h200:rows[visible_tokens=2048].splitkv_s8_us`).",
    "At 2048 visible tokens the split route takes 0.0098 msec (`bench-h200:rows[visible_tokens=2048].splitkv_s8_us`).",
    "At 2048 visible tokens the split route takes 9.8·10⁻⁶ s (`bench-h200:rows[visible_tokens=2048].splitkv_s8_us`).",
    "At 2048 visible tokens the split route is 4.2 times faster (`bench-h200:rows[visible_tokens=2048].speedup`).",
    "At 2048 visible tokens the split route is 4.2-fold faster (`bench-h200:rows[visible_tokens=2048].speedup`).",
    "### At 2048 visible tokens the split route takes 9.8 µs (`bench-h200:rows[visible_tokens=2048].splitkv_s8_us`)",
    "The suite ran each case 3 times.",
], ids=["microseconds", "msec", "scientific", "times", "fold", "heading", "times-not-a-ratio"])
def test_g7_the_same_spellings_pass_when_tied_to_the_true_value(example, sentence):
    assert example("G7", sentence) == []


def test_g7_a_wrong_value_in_scientific_notation_is_caught(example):
    (message,) = example("G7", "It takes 9.9·10⁻⁶ s (`bench-h200:rows[visible_tokens=2048].splitkv_s8_us`).")
    assert message.startswith("9.9·10⁻⁶ s is not the value it names")


# ---- G7: key names of the results tie the numbers after them -----------------------------------------------------

@pytest.mark.parametrize("misquote, honest", [
    ("fp32 rel_l2 = 1.0e-9 against the oracle.", "fp32 rel_l2 = 5.0e-7 against the oracle."),
    ("fp32 rel_l2 is 1.0e-9 against the oracle.", "fp32 rel_l2 is 5.02e-7 against the oracle."),
    ("fp32 max_abs reaches 1.0e-9 only.", "fp32 max_abs reaches 2e-5 only."),
    ("rel_l2 and max_abs are 5.02e-7 and 1.0e-9.", "rel_l2 and max_abs are 5.02e-7 and 1.96e-5."),
    ("At 2048 visible tokens the speedup is 7.04x.", "At 2048 visible tokens the speedup is 4.2x."),
    ("fp32 rel_l2 stays below 1.0e-9.", "fp32 rel_l2 stays below 1.0e-6."),
    ("fp32 max abs reaches 1.0e-9.", "fp32 max abs reaches 2e-5."),
    ("Over 48 cases, `rel_l2` is 1.0e-9.", "Over 48 cases, `rel_l2` is 5.02e-7."),
    ("A 1.0e-9 rel_l2 against the oracle.", "A 5.0e-7 rel_l2 against the oracle."),
    ("Speedup at 2048 visible tokens: 7.04x.", "Speedup at 2048 visible tokens: 4.2x."),
], ids=["equals", "is", "reaches", "respectively", "row-named", "bound", "spaces", "code-after-a-count",
        "number-first", "capitalised"])
def test_g7_a_key_name_ties_the_next_number_of_its_clause(example, misquote, honest):
    (message,) = example("G7", misquote)
    assert "numeric-cpu:per_dtype.fp32." in message or "bench-h200:rows[0].speedup" in message
    assert example("G7", honest) == []


def test_g7_a_key_with_several_values_and_nothing_to_choose_asks_for_a_reference(example):
    (message,) = example("G7", "The speedup is 4.2x.")
    assert "speedup has several values in the cited evidence" in message
    assert "write `bench-h200:rows[" in message
    assert example("G7", "The speedup is 4.2x (`bench-h200:rows[visible_tokens=2048].speedup`).") == []


def test_g7_a_count_quoted_with_a_time_unit_is_caught(example):
    (message,) = example("G7", "48 ms (`numeric-cpu:per_dtype.fp32.cases`)")
    assert message.startswith("48 ms is not the value it names, numeric-cpu:per_dtype.fp32.cases = 48")
    assert example("G7", "48 cases (`numeric-cpu:per_dtype.fp32.cases`)") == []


# ---- G7: the tolerance exemption covers limits only --------------------------------------------------------------

TABLE = "| metric | {header} |\n|---|---|\n| rel_l2 | 1.0e-6 |"


def test_g7_a_tolerance_in_a_measured_column_is_a_misquote(example):
    (message,) = example("G7", TABLE.format(header="measured"))
    assert message.startswith("1.0e-6 is not the value it names, numeric-cpu:per_dtype.fp32.rel_l2")


def test_g7_a_tolerance_in_a_column_headed_limit_is_exempt(example):
    assert example("G7", "| check | tolerance |\n|---|---|\n| fp32 error bound | 1.0e-6 |") == []
    assert example("G7", "Every case stays within the declared max 1.0e-6.") == []


def test_g7_a_tolerance_value_not_presented_as_a_limit_is_untied(example):
    (message,) = example("G7", "| check | reading |\n|---|---|\n| fp32 error | 1.0e-6 |")
    assert message.startswith("1.0e-6 is not tied to an artifact value")


# ---- wrapping and punctuation do not separate a name from its number ---------------------------------------------

def test_g1_a_name_and_its_number_on_two_lines_of_one_paragraph(example):
    (message,) = example("G1", "The grid: grid_blocks =\n200 programs.")
    assert "quotes grid_blocks = 200" in message
    assert example("G1", "The grid: grid_blocks =\n14 programs.") == []


def test_g7_a_key_name_and_its_number_on_two_lines_of_one_paragraph(example):
    (message,) = example("G7", "Against the oracle, fp32 rel_l2 is\n1.0e-9.")
    assert message.startswith("1.0e-9 is not the value it names, numeric-cpu:per_dtype.fp32.rel_l2")
    assert example("G7", "Against the oracle, fp32 rel_l2 is\n5.0e-7.") == []


def test_g7_a_comma_right_before_the_number_does_not_end_the_clause(example):
    (message,) = example("G7", "fp32 rel_l2, 1.0e-9, is far below the bar.")
    assert message.startswith("1.0e-9 is not the value it names")
    assert example("G7", "fp32 rel_l2, 5.0e-7, is far below the bar.") == []


def test_g7_a_number_in_a_later_clause_is_not_the_key_s(example):
    assert example("G7", "fp32 rel_l2 passes the oracle check, over 48 runs.") == []


def test_g7_a_hostile_line_of_names_and_numbers_is_read_in_linear_time(example):
    import time  # CPU time of this process: other load on the machine does not count

    started = time.process_time()
    example("G7", "fp32 rel_l2 = 5.0e-7 and speedup 4.2 " * 4000)
    assert time.process_time() - started < 10


def test_a_key_with_thousands_of_values_is_looked_up_in_linear_time():
    import time  # CPU time of this process: other load on the machine does not count

    from gates.checks.cited_values import CitedValues
    from gates.checks.number_trace import SectionTracer, measured_numbers

    rows = [{"tokens": index, "speedup": index * 1.5} for index in range(3000)]
    values = CitedValues({"bench": {"rows": rows}}, declared=["bench"], key_names=True)
    line = " ".join(f"speedup {index} {index}.5;" for index in range(10000))
    started = time.process_time()
    result = SectionTracer(values).trace([(1, line)], measured_numbers(False))
    assert len(result.ties) == 10000 and time.process_time() - started < 10


def test_g7_a_number_set_to_another_name_is_not_the_count_of_the_next(example):
    # `S=2048 cases`: 2048 belongs to S (not a key name here), not to `cases`.
    assert example("G7", "The shape is S=2048 cases of one row.") == []


@pytest.mark.parametrize("misquote, honest", [
    ("| dtype | rel_l2 |\n|---|---|\n| fp32 | 1.0e-9 |", "| dtype | rel_l2 |\n|---|---|\n| fp32 | 5.02e-7 |"),
    ("| dtype | `cases` |\n|---|---|\n| fp32 | 50 |", "| dtype | `cases` |\n|---|---|\n| fp32 | 48 |"),
], ids=["decimal", "count"])
def test_g7_a_column_headed_with_a_key_name_holds_that_key_s_values(example, misquote, honest):
    (message,) = example("G7", misquote)
    assert "is not the value it names, numeric-cpu:per_dtype.fp32." in message
    assert example("G7", honest) == []
