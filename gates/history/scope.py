"""G0: a pull request touches only the paths of the stage it claims.

What a stage may touch is set where the change's author cannot write: the scopes of
the record's process (`profiles.<process>.scopes`) in the configuration on the base
commit (`gates.model.config`), whose defaults for the stacked process are

- A: the record itself and the evidence it declares under an evidence folder
- B: `kernels/**`, `validation/**`, `tests/**` and the evidence folders
- C: integration and routing (`kernels/decode_layer.py`, `kernels/split_heuristic.py`,
  `kernels/decode_attention/workspace.py`, `kernels/__init__.py`, routing files),
  `tests/**` and the evidence folders
- D: `docs/results/**`, `validation/bench/**` and the evidence folders

and for single-pr's one stage the union of B, C and D. The base policy's `scopes`
section, which predates the configuration, still overrides the stacked process's
scope of each stage it names. A record whose process the base configuration does
not allow, or that claims a stage its process lacks, may touch only itself.

A record's `series.scopes.<stage>` only narrows: a path must match the policy's
scope and the record's list, as the record is on base and as it is at head. A record
that lists `**` opens nothing the policy does not already allow. A record may always
be edited in its own stage's pull request.

A path is judged where its file lives: a symbolic link (or a path below a linked folder)
is in scope only when the file it leads to at head is in scope too.
"""

from __future__ import annotations

from dataclasses import dataclass

from gates.history.context import SeriesContext, claims, field_of
from gates.model.config import Profile, Settings
from gates.model.policy import any_glob_matches


@dataclass(frozen=True)
class StageScope:
    """What a change at `stage` of one record may touch."""

    record: str
    stage: str
    allowed: tuple[str, ...]  # the policy's scope (for A, plus the declared evidence)
    narrowed_by: tuple[tuple[str, ...], ...]  # the record's series.scopes.<stage>, at base and at head

    def admits(self, path: str) -> bool:
        if path == self.record:
            return True
        return any_glob_matches(list(self.allowed), path) and all(
            any_glob_matches(list(globs), path) for globs in self.narrowed_by
        )

    def describe(self) -> str:
        allowed = f"{', '.join(self.allowed)} and the record itself" if self.allowed else "only the record itself"
        narrowed = "".join(f", narrowed to {', '.join(globs) or 'nothing'} by the record"
                           for globs in dict.fromkeys(self.narrowed_by))
        return f"stage {self.stage} of {self.record} may touch {allowed}{narrowed}"


def configured_scope(profile: Profile | None, scopes_section: dict, stage: str) -> list[str]:
    """The globs the base rules let a change at `stage` of a record following `profile` touch.

    The policy's legacy `scopes` section overrides the stacked process's stages it names.
    """
    if profile is None or stage not in profile.stages:
        return []
    globs = scopes_section.get(stage) if isinstance(scopes_section, dict) and profile.name == "stacked" else None
    if isinstance(globs, list):
        return [g for g in globs if isinstance(g, str)]
    return list(profile.scope(stage))


def _declared_evidence(front_matter: dict | None, settings: Settings) -> list[str]:
    evidence = field_of(front_matter, "evidence", default=[])
    return [
        item["path"]
        for item in (evidence if isinstance(evidence, list) else [])
        if isinstance(item, dict) and isinstance(item.get("path"), str) and settings.is_evidence_path(item["path"])
    ]


def _override(front_matter: dict | None, stage: str) -> tuple[str, ...] | None:
    globs = field_of(front_matter, "series", "scopes", stage)
    if globs is None:
        return None
    return tuple(g for g in globs if isinstance(g, str)) if isinstance(globs, list) else ()


def stage_scope(ctx: SeriesContext, rc, stage: str) -> StageScope:
    """The scope of a change at `stage` of the record `rc`: the base rules', narrowed by the record."""
    profile = ctx.profile_of(rc.head_front_matter)
    allowed = configured_scope(profile, ctx.policy.section("scopes"), stage)
    if stage == "A" and profile is not None and stage in profile.stages:
        allowed += _declared_evidence(rc.head_front_matter, ctx.settings)
    overrides = [_override(rc.base_front_matter, stage), _override(rc.head_front_matter, stage)]
    return StageScope(rc.rel_path, stage, tuple(dict.fromkeys(allowed)),
                      tuple(o for o in overrides if o is not None))


def check(ctx: SeriesContext) -> None:
    claimed = claims(ctx.change)
    if not claimed:
        return
    scopes = [stage_scope(ctx, rc, stage) for rc, stage in claimed]
    own_records = {rc.rel_path for rc in ctx.change.records} | {
        rc.base.rel_path for rc in ctx.change.records if rc.base is not None
    }
    for path in ctx.change.changed_paths():
        if path in own_records:
            continue
        where = ctx.change.resolved_at_head(path)
        if any(scope.admits(path) and (where == path or scope.admits(where)) for scope in scopes):
            continue
        through = f" (a symbolic link to {where})" if where != path else ""
        ctx.report("G0", path, 1, f"{path}{through} is outside the scope of the stage this change claims "
                   f"({_describe(scopes)})")


def _describe(scopes: list[StageScope]) -> str:
    """What each claimed stage may touch, with records of the same stage and scope grouped."""
    groups: dict[tuple, list[str]] = {}
    for scope in scopes:
        groups.setdefault((scope.stage, scope.allowed, scope.narrowed_by), []).append(scope.record)
    parts = []
    for (stage, allowed, narrowed_by), records in groups.items():
        parts.append(StageScope(", ".join(records), stage, allowed, narrowed_by).describe())
    return "; ".join(parts)
