"""Time the static gates (G0-G8 without --run-suites) over generated records.

    python scripts/bench_static_gates.py                 # N = 250, 500, 1000, 2000
    python scripts/bench_static_gates.py --sizes 1000 --repeat 3
    python scripts/bench_static_gates.py --jobs 1                 # in one process

Each generated record is the stage-D golden example (all nine gates apply) with
its own id, its own profile and numeric artifacts (so each record loads and
checks two artifacts of its own), stacked on a shared base record. The timing
covers what `gate-check` does: loading, schema validation, all gates, report.
Prints seconds per N and per record; the cost should grow linearly.

    python scripts/bench_static_gates.py --vary-prose     # each record's prose its own

With `--vary-prose` each record also has sentences of its own in §3, §8 and §9, so that no
record's body, section or paragraph repeats another's: what a cache keyed by prose would
save on identical records is not measured as speed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gates.checks.runner import check_records  # noqa: E402

EXAMPLES = ROOT / "tests" / "examples"
TEMPLATE = EXAMPLES / "G0" / "positive" / "form-complete-en.md"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _own_words(index: int) -> str:
    """Words no other generated record uses: the index in letters (no digits, so no number to trace)."""
    return "".join(chr(ord("a") + (index // 26 ** place) % 26) for place in range(4))


def _varied(text: str, index: int) -> str:
    words = _own_words(index)
    for heading, sentence in (("## §3 Design\n", f"Variant {words} keeps this design and states it in words of its own."),
                              ("## §8 Limitations\n", f"Variant {words} has the limits listed here and no others."),
                              ("## §9 Follow-ups\n", f"Nothing follows for variant {words} beyond the items below.")):
        text = text.replace(heading, f"{heading}\n{sentence}\n", 1)
    return text


def make_repo(folder: Path, count: int, vary_prose: bool = False) -> Path:
    repo = folder / f"repo-{count}"
    shutil.copytree(EXAMPLES, repo, ignore=shutil.ignore_patterns("G*", "__pycache__", "make_examples.py"))
    design = repo / "docs" / "design"
    template = TEMPLATE.read_text(encoding="utf-8")
    profile = json.loads((EXAMPLES / "evidence" / "ncu-single-pass.json").read_text(encoding="utf-8"))
    numeric = json.loads((EXAMPLES / "evidence" / "numeric-cpu.json").read_text(encoding="utf-8"))
    for index in range(count):
        record_id = f"generated-{index:05d}"
        pins = {}
        for base, data in (("ncu-single-pass", profile), ("numeric-cpu", numeric)):
            artifact_id = f"{base}-{index:05d}"
            raw = (json.dumps(dict(data, id=artifact_id), indent=2, sort_keys=True) + "\n").encode("utf-8")
            (repo / "evidence" / f"{artifact_id}.json").write_bytes(raw)
            pins[base] = (artifact_id, sha(raw))
        text = template.replace("id: form-complete-en", f"id: {record_id}", 1)
        for base, (artifact_id, pin) in pins.items():
            text = re.sub(rf"\{{id: {base}, path: evidence/{base}\.json, sha256: [0-9a-f]{{64}}",
                          f"{{id: {artifact_id}, path: evidence/{artifact_id}.json, sha256: {pin}", text)
            text = text.replace(f"../../evidence/{base}.json", f"../../evidence/{artifact_id}.json")
        if vary_prose:
            text = _varied(text, index)
        (design / f"{record_id}.md").write_text(text, encoding="utf-8")
    return repo


def time_run(repo: Path, repeat: int, jobs: int | None = None) -> tuple[float, int]:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        report = check_records(None, repo, jobs=jobs)
        best = min(best, time.perf_counter() - start)
    failing = [record.path for record in report.records if not record.ok]
    if report.input_errors or failing:
        raise SystemExit(f"generated records do not pass: {report.input_errors[:1]} {failing[:3]}")
    return best, len(report.records)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000])
    parser.add_argument("--repeat", type=int, default=1, help="runs per size; the best is reported")
    parser.add_argument("--vary-prose", action="store_true", help="give each record sentences of its own")
    parser.add_argument("--jobs", type=int, help="processes to check on (default: one per CPU, as gate-check)")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-static-gates-") as folder:
        for count in args.sizes:
            repo = make_repo(Path(folder), count, args.vary_prose)
            seconds, checked = time_run(repo, args.repeat, args.jobs)
            rows.append((count, checked, seconds))
            print(f"N={count:5d}  records checked={checked:5d}  {seconds:7.3f} s  {1000 * seconds / checked:6.3f} ms/record",
                  flush=True)
            shutil.rmtree(repo)
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        ratio = (last[2] / last[1]) / (first[2] / first[1])
        print(f"per-record cost at N={last[0]} is {ratio:.2f}x the cost at N={first[0]} (1.00 = linear)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
