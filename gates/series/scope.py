"""G0: a pull request touches only the paths of the stage it claims.

Default scopes (a record overrides any of them in `series.scopes`):

- A: the record itself and the evidence it declares under `docs/evidence/`
- B: `kernels/**`, `validation/**`, `tests/**`
- C: integration and routing (`kernels/decode_layer.py`, `kernels/split_heuristic.py`,
  `kernels/decode_attention/workspace.py`, `kernels/__init__.py`, routing files), and `tests/**`
- D: `docs/results/**`, `docs/evidence/**`, `validation/bench/**`

A record may always be edited in its own stage's pull request.
"""

from __future__ import annotations

from gates.policy import any_glob_matches
from gates.series.context import SeriesContext, claims, field_of

DEFAULT_SCOPES = {
    "A": [],
    "B": ["kernels/**", "validation/**", "tests/**"],
    "C": [
        "kernels/decode_layer.py",
        "kernels/split_heuristic.py",
        "kernels/decode_attention/workspace.py",
        "kernels/__init__.py",
        "kernels/**/routing*",
        "tests/**",
    ],
    "D": ["docs/results/**", "docs/evidence/**", "validation/bench/**"],
}


def stage_scope(front_matter: dict, rel_path: str, stage: str) -> list[str]:
    """The globs a pull request at `stage` of this record may touch."""
    override = field_of(front_matter, "series", "scopes", stage)
    if isinstance(override, list):
        globs = [g for g in override if isinstance(g, str)]
    else:
        globs = list(DEFAULT_SCOPES[stage])
        if stage == "A":
            evidence = field_of(front_matter, "evidence", default=[])
            globs += [
                item["path"]
                for item in evidence if isinstance(evidence, list)
                if isinstance(item, dict) and isinstance(item.get("path"), str)
                and item["path"].startswith("docs/evidence/")
            ]
    return [rel_path] + globs


def check(ctx: SeriesContext) -> None:
    claimed = claims(ctx.change)
    if not claimed:
        return
    scopes = [(rc, stage, stage_scope(rc.head_front_matter, rc.rel_path, stage)) for rc, stage in claimed]
    own_records = {rc.rel_path for rc in ctx.change.records} | {
        rc.base.rel_path for rc in ctx.change.records if rc.base is not None
    }
    for path in ctx.change.changed_paths():
        if path in own_records or any(any_glob_matches(globs, path) for _, _, globs in scopes):
            continue
        ctx.report("G0", path, 1, f"{path} is outside the scope of the stage this change claims ({_describe(scopes)})")


def _describe(scopes) -> str:
    """What each claimed stage may touch, with records of the same stage and scope grouped."""
    groups: dict[tuple, list[str]] = {}
    for rc, stage, globs in scopes:
        groups.setdefault((stage, tuple(globs[1:])), []).append(rc.rel_path)
    parts = []
    for (stage, globs), records in groups.items():
        allowed = f"{', '.join(globs)} and the record itself" if globs else "only the record itself"
        parts.append(f"stage {stage} of {', '.join(records)} may touch {allowed}")
    return "; ".join(parts)
