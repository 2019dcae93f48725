"""A small physically-structured cost model for the split count, scored as `candidates.py` scores rules.

    python lab/routing/cost_model.py > lab/routing/analysis-cost-model.md

CPU only (about a minute). The layer picks the count s in {1 (the single pass), 2, 4, ..., 128} with the
least predicted time, from host integers only (B, Hkv, G, D, S, 132 SMs, the launch config, resident
programs per SM from `occupancy-sm90.json`):

    time(s) = c0 + a * W(s)                                   launch + per-wave latency
                 + f * n(s) / T(s)                            per-program overhead (fractional waves)
                 + u * tiles(s) * W(s)                        per-tile latency of each wave's programs
                 + b * m(s) * sum_w max(1, k_w / k0)           streaming: each wave's bytes per program,
                                                              slowed once more than k0 programs share HBM
                 + r0 * rounds(s) + r1 * tile(s)               in-place merge: rounds of the merging program
                 + e0 * [combine]                             the combine launch
                 + e1 * partials(s)                           partial results written and read back (s > 1)

    n(s) = B x Hkv x ceil(G / BLOCK_M) x s programs on T(s) = 132 x resident(s) slots;
    W(s) = ceil(n / T) waves, k_w the programs of wave w (T, ..., T, the tail n - (W-1) T);
    tiles(s) = ceil(S / (s x BLOCK_N)); m(s) = ceil(S / s) x D x 4 bytes of K and V per program (bf16), MB;
    rounds(s) = ceil(s / MERGE_SLOTS), tile(s) = rounds x MERGE_ROWS x MERGE_SLOTS x BLOCK_D / 1e4
    (fused_merge_tile); partials(s) = B x Hq x s x D x 8 bytes / 1e6 (fp32 out, written and read);
    s = 1 is the single pass (no merge term, no partials).

k0 (programs in flight that saturate HBM) is chosen from a grid; c0..e1 (9 constants) >= 0 are fitted on the fit rows
only (a3eaa15 + 65caa56), two ways: least squares on log time over every (row, count) point
(Gauss-Newton on non-negative least squares), and a direct search that maximizes the rows within 1.03x
(random multiplicative steps from the least-squares constants; ties: smaller worst, smaller sum). Both are
scored with each model left out, and on the held-out, later, next and repeat rows, which no constant sees.
Last, an in-sample upper bound: the same search on all 253 rows at once, and, per row, whether any
parameter point the searches visited picks a count within 1.03x on that row (a row no point reaches is
out of the family's reach as far as the search can tell; neither number is a proof).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from analyze import WITHIN  # noqa: E402
from candidates import (FIT_RUNS, HELD_OUT_RUN, LATER_RUNS, PROPOSED, best_name, in_flight_rule,  # noqa: E402
                        rows_of, time_of)
from candidates2 import NEXT_RUNS, RULE, merge_rule  # noqa: E402

from kernels.decode_attention.launch_config import block_d_for, fused_merge_tile  # noqa: E402
from kernels.split_heuristic import SPLIT_CHOICES  # noqa: E402

REPEAT_RUNS = ("routing-models-repeat-e33b126.json",)
K0_GRID = (16, 32, 64, 96, 128, 192, 264, 396, 10**9)
NAMES = ("c0", "a", "f", "u", "b", "r0", "r1", "e0", "e1")


# ---------------------------------------------------------------- the model

def waves(programs: int, slots: int) -> list[int]:
    """Programs of each wave: full waves of `slots`, then the tail."""
    full, tail = divmod(programs, slots)
    return [slots] * full + ([tail] if tail else [])


def point_features(r: dict, s: int, k0: float) -> list[float]:
    """The model's terms for row r at count s (s = 1: the single pass), in the order of NAMES."""
    q = r["per_split"][s]
    ks = waves(q["programs"], q["slots"])
    tiles = -(-r["S"] // (s * r["block_n"]))
    mbytes = -(-r["S"] // s) * r["D"] * 4 / 1e6
    stream = mbytes * sum(max(1.0, k / k0) for k in ks)
    rounds = tile = combine = partials = 0.0
    if s > 1:
        partials = r["B"] * r["Hq"] * s * r["D"] * 8 / 1e6
        merge = fused_merge_tile(r["G"], r["block_m"], s, r["D"])
        if merge is None:
            combine = 1.0
        else:
            rounds = float(-(-s // merge[1]))
            tile = rounds * merge[0] * merge[1] * block_d_for(r["D"]) / 1e4
    return [1.0, float(len(ks)), q["programs"] / q["slots"], float(tiles * len(ks)), stream, rounds, tile, combine,
            partials]


def design(rows: list[dict], k0: float) -> np.ndarray:
    """Features, shape (rows, counts, terms)."""
    return np.array([[point_features(r, s, k0) for s in SPLIT_CHOICES] for r in rows])


def measured(rows: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Times (rows, counts) of each route, and each over its row's best own time."""
    t = np.array([[time_of(r, s) for s in SPLIT_CHOICES] for r in rows])
    return t, t / np.array([r["best_own"] for r in rows])[:, None]


def choose(x: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Index of the count with the least predicted time, per row (ties: the smaller count)."""
    return np.argmin(x @ theta, axis=1)


def chosen_ratios(x: np.ndarray, ratio: np.ndarray, theta: np.ndarray) -> np.ndarray:
    return ratio[np.arange(len(ratio)), choose(x, theta)]


def key(x: np.ndarray) -> tuple:
    """Most rows within 1.03x, then the smallest worst, then the smallest sum (as candidates.py)."""
    return int((x <= WITHIN).sum()), -float(x.max()), -float(x.sum())


# ---------------------------------------------------------------- least squares on log time

def nnls(a: np.ndarray, y: np.ndarray, iters: int = 200) -> np.ndarray:
    """Lawson-Hanson non-negative least squares, min |a theta - y|, theta >= 0."""
    n = a.shape[1]
    theta, passive = np.zeros(n), np.zeros(n, bool)
    for _ in range(iters):
        grad = a.T @ (y - a @ theta)
        if passive.all() or grad[~passive].max(initial=-1) <= 1e-12:
            break
        passive[np.argmax(np.where(passive, -np.inf, grad))] = True
        while True:
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(a[:, passive], y, rcond=None)[0]
            if (z[passive] > 0).all():
                theta = z
                break
            bad = passive & (z <= 0)
            alpha = np.min(theta[bad] / (theta[bad] - z[bad]))
            theta = theta + alpha * (z - theta)
            passive &= theta > 1e-12
    return theta


def fit_log(x: np.ndarray, t: np.ndarray, steps: int = 30) -> tuple[np.ndarray, float]:
    """theta >= 0 minimizing sum (log x.theta - log t)^2 over every point (Gauss-Newton from the
    relative-error fit); returns theta and the rms log residual."""
    a, y = x.reshape(-1, x.shape[-1]), t.reshape(-1)
    theta = nnls(a / y[:, None], np.ones_like(y))
    for _ in range(steps):
        p = np.maximum(a @ theta, 1e-9)
        step = nnls(a / p[:, None], np.log(y) - np.log(p) + 1.0)  # log p' ~ log p + a (theta' - theta) / p
        theta = 0.5 * theta + 0.5 * step
    p = np.maximum(a @ theta, 1e-9)
    return theta, float(np.sqrt(np.mean((np.log(p) - np.log(y)) ** 2)))


def best_log_fit(xs: dict, t: np.ndarray) -> tuple[float, np.ndarray, float]:
    """(k0, theta, rms) with the smallest rms log residual over K0_GRID."""
    fits = [(k0, *fit_log(xs[k0], t)) for k0 in K0_GRID]
    return min(fits, key=lambda f: f[2])


# ---------------------------------------------------------------- direct search on rows within 1.03x

def search(xs: dict, ratio: np.ndarray, starts: list[tuple[float, np.ndarray]], steps: int = 600,
           seed: int = 0, visited: list | None = None) -> tuple[float, np.ndarray, tuple]:
    """Random multiplicative steps on theta (one term, or all at once; a term may drop to 0 or come
    back), per k0 from its start; keeps a step that does not lower `key`. `visited` collects the
    chosen ratios of every point tried (for the per-row reach)."""
    rng = np.random.default_rng(seed)
    best = None
    for k0, theta0 in starts:
        x = xs[k0]
        theta = np.maximum(theta0, 1e-6 * max(theta0.max(), 1e-9))
        cur = key(chosen_ratios(x, ratio, theta))
        for i in range(steps):
            trial = theta.copy()
            if rng.random() < 0.5:
                j = rng.integers(len(trial))
                trial[j] = trial[j] * np.exp(rng.normal(0, 1.5)) if rng.random() < 0.9 else 0.0
                if trial[j] == 0 and theta[j] == 0:
                    trial[j] = theta.max() * np.exp(rng.normal(-3, 2))
            else:
                trial = trial * np.exp(rng.normal(0, 0.3, len(trial)))
            got = chosen_ratios(x, ratio, trial)
            if visited is not None:
                visited.append(got <= WITHIN)
            k = key(got)
            if k >= cur:
                theta, cur = trial, k
        if best is None or cur > best[2]:
            best = (k0, theta, cur)
    return best


def fit_search(xs: dict, t: np.ndarray, ratio: np.ndarray, steps: int = 600, seed: int = 0,
               visited: list | None = None) -> tuple[float, np.ndarray]:
    """Count-maximizing constants, started from the log-LS fit at every k0."""
    starts = [(k0, fit_log(xs[k0], t)[0]) for k0 in K0_GRID]
    k0, theta, _ = search(xs, ratio, starts, steps, seed, visited)
    return k0, theta


# ---------------------------------------------------------------- scoring

class RowSet:
    """Rows of some runs with their features at every k0, times and ratios."""

    def __init__(self, label: str, rows: list[dict]):
        self.label, self.rows = label, rows
        self.xs = {k0: design(rows, k0) for k0 in K0_GRID}
        self.t, self.ratio = measured(rows)
        self.models = np.array([r["model"] for r in rows])

    def sub(self, mask: np.ndarray) -> "RowSet":
        out = RowSet.__new__(RowSet)
        out.label, out.rows = self.label, [r for r, m in zip(self.rows, mask) if m]
        out.xs = {k: v[mask] for k, v in self.xs.items()}
        out.t, out.ratio, out.models = self.t[mask], self.ratio[mask], self.models[mask]
        return out

    def scored(self, k0: float, theta: np.ndarray) -> list[tuple[float, dict, int]]:
        idx = choose(self.xs[k0], theta)
        return [(float(self.ratio[i, j]), r, SPLIT_CHOICES[j]) for i, (r, j) in enumerate(zip(self.rows, idx))]


def leave_one_model_out(fit: RowSet, method: str, steps: int) -> list[tuple[float, dict, int]]:
    """Each model's rows scored with constants fitted on every other model's rows."""
    out = []
    for i, model in enumerate(sorted(set(fit.models))):
        rest, own = fit.sub(fit.models != model), fit.sub(fit.models == model)
        if method == "log":
            k0, theta, _ = best_log_fit(rest.xs, rest.t)
        else:
            k0, theta = fit_search(rest.xs, rest.t, rest.ratio, steps, seed=i)
        out += own.scored(k0, theta)
    return out


def line(label: str, scored) -> str:
    n = sum(x <= WITHIN for x, _, _ in scored)
    bad = sorted(scored, key=lambda t: -t[0])[:3]
    worst = ", ".join(f"{r['name']} {x:.3f}x ({s} vs best {best_name(r)})" for x, r, s in bad if x > WITHIN)
    return f"| {label} | {n} of {len(scored)} | {max(x for x, _, _ in scored):.3f}x | {worst or '-'} |"


def rule_scored(rows: list[dict], rule) -> list[tuple[float, dict, int]]:
    return [(time_of(r, s) / r["best_own"], r, s) for r in rows for s in (rule(r),)]


def constants(k0: float, theta: np.ndarray) -> str:
    return f"k0 = {k0:g}; " + ", ".join(f"{n} = {v:.4g}" for n, v in zip(NAMES, theta))


def miss_table(sets: list[RowSet], k0: float, theta: np.ndarray, title: str) -> list[str]:
    out = [f"## Rows above 1.03x: {title}", "",
           "| row | set | P | D | G | S | chosen | best | chosen / best own | waves: chosen, best |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    items = []
    for rs in sets:
        w = rs.xs[k0][:, :, NAMES.index("a")]
        for i, (x, r, s) in enumerate(rs.scored(k0, theta)):
            if x > WITHIN:
                j_best = int(np.argmin(rs.t[i]))
                items.append((x, f"| {r['name']} | {rs.label} | {r['P']} | {r['D']} | {r['G']} | {r['S']} | {s} | "
                                 f"{best_name(r)} | {x:.3f} | "
                                 f"{w[i, SPLIT_CHOICES.index(s)]:.0f}, {w[i, j_best]:.0f} |"))
    return out + [text for _, text in sorted(items, key=lambda t: -t[0])] + [""]


def main() -> None:
    fit = RowSet("fit", rows_of(*FIT_RUNS))
    others = [RowSet("held-out", rows_of(HELD_OUT_RUN)), RowSet("later", rows_of(*LATER_RUNS)),
              RowSet("next", rows_of(*NEXT_RUNS)), RowSet("repeat", rows_of(*REPEAT_RUNS))]
    every = fit.rows + [r for rs in others[:3] for r in rs.rows]  # 253 rows (repeat: the next rows again)
    print("`python lab/routing/cost_model.py > lab/routing/analysis-cost-model.md`\n")
    print("# A physically-structured cost model for the split count\n")
    print(__doc__.split("\n\n", 2)[2].split("\nk0 (programs")[0].strip() + "\n")
    print(f"Rows: fit {len(fit.rows)}, " + ", ".join(f"{rs.label} {len(rs.rows)}" for rs in others)
          + f" (the repeat rows are the next rows measured again; 'all' = fit + held-out + later + next = "
          f"{len(every)}). A row counts when the chosen route is within {WITHIN:.2f}x of its fastest own route.\n")

    k0_ls, th_ls, rms = best_log_fit(fit.xs, fit.t)
    k0_se, th_se = fit_search(fit.xs, fit.t, fit.ratio, steps=1500)
    print("## Constants fitted on the fit rows\n")
    print(f"- log least squares (k0 by the smallest rms log residual, {rms:.3f}): {constants(k0_ls, th_ls)}")
    print(f"- direct search on rows within 1.03x: {constants(k0_se, th_se)}")
    print("- units: time in us; m and partials in MB; tile in 1e4 elements\n")
    print("rms log residual of the least-squares fit per k0: " + ", ".join(
        f"{k0:g}: {fit_log(fit.xs[k0], fit.t)[1]:.3f}" for k0 in K0_GRID) + "\n")

    print("## Scores\n")
    print("| candidate | rows within 1.03x | worst | rows above 1.03x (worst three) |")
    print("|---|---|---|---|")
    for label, k0, th in (("cost model, log least squares", k0_ls, th_ls),
                          ("cost model, direct search", k0_se, th_se)):
        print(line(f"{label}, fit (in-sample)", fit.scored(k0, th)))
        method = "log" if "least" in label else "search"
        print(line(f"{label}, fit, each model left out", leave_one_model_out(fit, method, steps=400)))
        for rs in others:
            print(line(f"{label}, {rs.label}", rs.scored(k0, th)))
    for label, rule in ((f"in-flight rule {PROPOSED}", lambda r: in_flight_rule(r, *PROPOSED)),
                        (f"merge-aware rule {RULE}", lambda r: merge_rule(r, *RULE))):
        for rs in [fit] + others:
            print(line(f"{label}, {rs.label}", rule_scored(rs.rows, rule)))
    print()

    print("## In-sample upper bound of the family (all 253 rows)\n")
    allset = RowSet("all", every)
    visited: list = []
    k0_ub, th_ub = fit_search(allset.xs, allset.t, allset.ratio, steps=4000, seed=7, visited=visited)
    scored_ub = allset.scored(k0_ub, th_ub)
    print("| candidate | rows within 1.03x | worst | rows above 1.03x (worst three) |")
    print("|---|---|---|---|")
    print(line("cost model, direct search on all 253 rows (in-sample)", scored_ub))
    reach = np.any(np.array(visited), axis=0)
    print(f"\nConstants: {constants(k0_ub, th_ub)}.\n")
    print(f"Per row, over the {len(visited)} parameter points the search tried: {int(reach.sum())} of "
          f"{len(every)} rows are within 1.03x under at least one point. Rows no point reached:\n")
    for r, ok in zip(every, reach):
        if not ok:
            print(f"- {r['name']} (P {r['P']}, D {r['D']}, G {r['G']}, S {r['S']}; best {best_name(r)}; "
                  f"single {r['single'] / r['best_own']:.3f}x, "
                  + ", ".join(f"{s}: {r['sweep'][s] / r['best_own']:.3f}" for s in SPLIT_CHOICES[1:]) + ")")
    print()
    for text in miss_table([fit] + others, k0_se, th_se, "direct-search constants (fitted on the fit rows)"):
        print(text)
    for text in miss_table([allset], k0_ub, th_ub, "constants searched on all 253 rows (in-sample bound)"):
        print(text)


if __name__ == "__main__":
    main()
