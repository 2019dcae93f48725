"""The probes' shared loop keeps every measured row on disk, even when interrupted."""

import json

from validation.bench.recorded_run import run_and_record


def _table(rows):
    return f"{len(rows)} rows"


def test_every_row_is_on_disk_after_each_write_and_the_table_is_printed(tmp_path, capsys):
    out = tmp_path / "probe.json"
    seen_on_disk = []

    def measure(rows, write):
        for i in range(3):
            rows.append({"i": i})
            write()
            seen_on_disk.append(len(json.loads(out.read_text())["rows"]))

    assert run_and_record(out, "probe", measure, _table) == 0
    assert seen_on_disk == [1, 2, 3]
    assert json.loads(out.read_text()) == {"kind": "probe", "rows": [{"i": 0}, {"i": 1}, {"i": 2}]}
    assert capsys.readouterr().out.strip() == "3 rows"


def test_an_interrupted_run_keeps_what_it_measured(tmp_path, capsys):
    out = tmp_path / "probe.json"

    def measure(rows, write):
        rows.append({"i": 0})
        raise KeyboardInterrupt

    assert run_and_record(out, "probe", measure, _table) == 0
    assert json.loads(out.read_text())["rows"] == [{"i": 0}]
    captured = capsys.readouterr()
    assert "interrupted" in captured.err and captured.out.strip() == "1 rows"


def test_the_file_says_which_command_and_commit_produced_the_rows(tmp_path, capsys):
    from validation.bench.recorded_run import probe_command

    out = tmp_path / "probe.json"

    def prepare(args):
        def measure(rows, write):
            rows.append({"n": args.n})
            write()
        return measure

    argv = ["--out", str(out), "--n", "3"]
    code = probe_command(argv, prog="python -m validation.bench.someprobe", description="d", kind="probe",
                         add_options=lambda p: p.add_argument("--n", type=int), prepare=prepare, table=_table)
    written = json.loads(out.read_text())
    assert code == 0 and written["rows"] == [{"n": 3}]
    assert written["command"] == f"python -m validation.bench.someprobe --out {out} --n 3"
    assert "commit" in written and "environment" in written
