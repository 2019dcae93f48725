"""Processes that share a suite take its cases from one queue (validation/suites/case_queue.py).

`python -m validation.run_suite numeric --jobs N` starts N pytest processes that each claim
the next case nobody has taken: whatever the cases cost, the processes finish together, and
together they run every test exactly once, every test of a case in one process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

from validation.suites.case_queue import CaseQueue, case_groups

REPO = Path(__file__).resolve().parents[1]

SUITE = '''\
import os

import pytest


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("case", ["B1-D64", "B2-D128", "B3-D96", "B4-D256", "B5-D80"])
def test_case(case, dtype, request):
    with open(os.environ["RAN_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} {request.node.nodeid}\\n")


def test_without_a_case():
    with open(os.environ["RAN_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} no-case\\n")
'''

CONFTEST = '''\
import os

from validation.suites.case_queue import CaseQueue


def pytest_configure(config):
    config.pluginmanager.register(CaseQueue(os.environ["CLAIMS"], os.environ["ORDER"]), "case-queue")
'''


def item(case, name="test"):
    return SimpleNamespace(nodeid=f"{name}[{case}]", callspec=SimpleNamespace(params={"case": case, "dtype": "bf16"}))


def test_cases_are_grouped_whole_in_the_order_they_first_appear():
    items = [item("a"), item("b"), item("a", "other"), SimpleNamespace(nodeid="plain"), item("c")]
    assert [(case, [i.nodeid for i in members]) for case, members in case_groups(items)] == [
        ("a", ["test[a]", "other[a]"]), ("b", ["test[b]"]), ("(no case)", ["plain"]), ("c", ["test[c]"])]
    assert [case for case, _ in case_groups(items, "reverse")] == ["c", "(no case)", "b", "a"]


def test_a_case_is_claimed_by_one_process_only(tmp_path):
    first, second = CaseQueue(tmp_path / "claims", "forward"), CaseQueue(tmp_path / "claims", "reverse")
    assert first.claim("B1-D64") and not second.claim("B1-D64") and second.claim("B2-D128")


def run_two_processes(tmp_path: Path, order: str) -> tuple[list[str], list[dict]]:
    for name, text in {"tests/test_suite.py": SUITE, "tests/conftest.py": CONFTEST}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    ran_log = tmp_path / "ran.log"
    processes = []
    for index in range(2):
        env = {key: value for key, value in os.environ.items() if not key.startswith("DESIGN_GATES_")}
        env.update(PYTHONPATH=str(REPO), RAN_LOG=str(ran_log), CLAIMS=str(tmp_path / "claims"), ORDER=order,
                   DESIGN_GATES_EVIDENCE_OUT=str(tmp_path / f"evidence-{index}.json"), DESIGN_GATES_COVERS="[]")
        processes.append(subprocess.Popen(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:design_gates_evidence",
             "-p", "gates.evidence.evidence_plugin", "tests"],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    for process in processes:
        output = process.communicate(timeout=120)[0]
        assert process.returncode == 0, output
    records = [json.loads((tmp_path / f"evidence-{i}.json").read_text())["results"]["collection"] for i in range(2)]
    return ran_log.read_text().splitlines(), records


def test_two_processes_together_run_every_test_once_each_case_in_one_process(tmp_path):
    ran, records = run_two_processes(tmp_path, "reverse")
    runs = Counter(line.split(" ", 1)[1] for line in ran)
    assert len(runs) == 11 and set(runs.values()) == {1}
    process_of_case = {}
    for line in ran:
        pid, nodeid = line.split(" ", 1)
        case = nodeid.split("[", 1)[1].split("-bf16")[0].split("-fp16")[0] if "[" in nodeid else nodeid
        assert process_of_case.setdefault(case, pid) == pid, f"{case} ran in two processes"
    for record in records:  # each process says what it left to the other: deselected, never "not run"
        assert record["collected"] == 11 and record["not_run"] == 0 and record["dropped"] == 0
        assert record["deselected"] + sum(record["outcomes"].values()) == 11
    assert sum(sum(record["outcomes"].values()) for record in records) == 11
