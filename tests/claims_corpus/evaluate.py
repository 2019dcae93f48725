"""Measure the claims engine on the labelled corpus: recall and false alarms per kind of sentence.

    python tests/claims_corpus/evaluate.py dev            # the development part
    python tests/claims_corpus/evaluate.py heldout        # the held-out part (measure only; do not tune on it)
    python tests/claims_corpus/evaluate.py heldout2       # the second held-out part, written after the first was read
    python tests/claims_corpus/evaluate.py heldout3       # the third, written blind from paraphrased pull-request threads
    python tests/claims_corpus/evaluate.py heldout4       # the fourth, written blind from kernel-library pull requests
    python tests/claims_corpus/evaluate.py heldout5       # the fifth, written blind from serving, training and kernel PRs
    python tests/claims_corpus/evaluate.py heldout6       # the sixth, written blind from pull requests and reviews
    python tests/claims_corpus/evaluate.py heldout7       # the seventh: multi-sentence pull-request texts, written blind
    python tests/claims_corpus/evaluate.py heldout8       # the eighth, written blind after the fourth red-team round
    python tests/claims_corpus/evaluate.py heldout9       # the ninth, written blind from paraphrased pull requests
    python tests/claims_corpus/evaluate.py dev --errors   # also list every wrong verdict with its explanation

`labelled/<part>.tsv` holds one case a line: kind (claim, kernel or mention), language, text
("\\n" is a line break). Each case is read as a one-line pull-request description would be,
by the engine behind G7, `gate-check lint-pr` and results pages
(`gates.checks.claim_detection.judge_text`). A claim is found when any clause is judged a claim.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from gates.checks.claim_detection import judge_text

HERE = Path(__file__).parent / "labelled"
KINDS = ("claim", "kernel", "mention")


def cases(part: str) -> list[tuple[str, str, str]]:
    """(kind, language, text) of every case of a part."""
    found = []
    for number, line in enumerate((HERE / f"{part}.tsv").read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        kind, language, text = line.split("\t", 2)
        if kind not in KINDS:
            raise SystemExit(f"{part}.tsv:{number}: kind {kind!r} is none of {', '.join(KINDS)}")
        found.append((kind, language, text.replace("\\n", "\n")))
    return found


def parts() -> list[str]:
    """The parts present: every `labelled/<part>.tsv`."""
    return sorted(path.stem for path in HERE.glob("*.tsv"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("part", choices=parts(), help="a labelled/<part>.tsv file")
    parser.add_argument("--errors", action="store_true", help="list every wrong verdict with its explanation")
    args = parser.parse_args(argv)
    total, flagged, wrong = Counter(), Counter(), []
    for kind, language, text in cases(args.part):
        verdicts = judge_text(text)
        is_claim = any(verdict.claim for verdict in verdicts)
        for key in (kind, (kind, language)):
            total[key] += 1
            flagged[key] += is_claim
        if is_claim != (kind == "claim"):
            wrong.append((kind, text, verdicts))
    print(f"{args.part}: {sum(total[k] for k in KINDS)} sentences")
    print(f"{'kind':<10}{'n':>5}{'flagged':>9}{'recall':>9}{'false alarms':>14}")
    for kind in KINDS:
        n, hits = total[kind], flagged[kind]
        correct = hits if kind == "claim" else n - hits
        alarms = "-" if kind == "claim" else f"{hits / n:.3f}" if n else "-"
        print(f"{kind:<10}{n:>5}{hits:>9}{(correct / n if n else 0):>9.3f}{alarms:>14}")
        for language in sorted({key[1] for key in total if isinstance(key, tuple) and key[0] == kind}):
            n_l, hits_l = total[(kind, language)], flagged[(kind, language)]
            correct_l = hits_l if kind == "claim" else n_l - hits_l
            print(f"  {language:<8}{n_l:>5}{hits_l:>9}{correct_l / n_l:>9.3f}")
    true_claims = flagged["claim"]
    all_flagged = sum(flagged[k] for k in KINDS)
    print(f"claim precision: {true_claims / all_flagged:.3f} ({true_claims} of {all_flagged} flagged)"
          if all_flagged else "claim precision: -")
    if args.errors:
        for kind, text, verdicts in wrong:
            print(f"\n[{kind}] {text!r}")
            for verdict in verdicts:
                print(f"    {verdict.explain()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
