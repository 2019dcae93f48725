"""G5 Compatibility: the public API only grows and the default route stays put.

The record declares `api`: the packages whose public surface it touches, the
names it adds, removes or changes, and whether the default route is unchanged.
Removed or changed public names fail (the API only grows). The default route may
change only at stage D, after the results, and only with a reviewer question
(`api.default_route_question`) whose decision is `accepted`. From stage B on,
each added name must be exported by one of the declared packages. The diff-based
form of this check (`--base`) reads the code itself.
"""

from __future__ import annotations

import ast

from gates.context import GateContext, stage_at_least
from gates.findings import Finding, GateResult, Status, adder_at_keys, result_from_findings
from gates.paths import resolve_inside
from gates.record import Record

GATE = "G5"


def check(record: Record, ctx: GateContext) -> GateResult:
    api = record.get("api")
    if api is None:
        return GateResult(GATE, Status.NOT_APPLICABLE)
    findings: list[Finding] = []
    stage = ctx.effective_stage(record)
    add = adder_at_keys(GATE, record, findings)

    for key, verb in (("removes", "removes"), ("changes", "changes")):
        for index, name in enumerate(api.get(key) or []):
            add(("api", key, index), f"the design {verb} public name {name!r}; the public API may only grow "
                "(add a new entry point instead)")
    if api.get("default_route_unchanged") is False:
        question = api.get("default_route_question")
        decisions = {q.get("id"): q.get("decision") for q in record.get("questions", default=[]) or []}
        if not stage_at_least(stage, "D"):
            add(("api", "default_route_unchanged"), f"the default route may change only at stage D (with the "
                f"benchmark results); the record is at stage {stage}")
        elif question is None:
            add(("api", "default_route_unchanged"), "a default-route change names the reviewer question that "
                "accepts it in api.default_route_question")
        elif decisions.get(question) != "accepted":
            add(("api", "default_route_question"), f"question {question} must be accepted before the default "
                f"route changes (decision: {decisions.get(question) or 'not made'})")
    if stage_at_least(stage, "B") and api.get("adds"):
        exported = set()
        for package in api.get("packages") or []:
            exported |= _exported_names(ctx, package)
        for index, name in enumerate(api["adds"]):
            if name not in exported:
                add(("api", "adds", index), f"{name!r} is declared as added but no declared package "
                    f"({', '.join(api.get('packages') or [])}) exports it")
    return result_from_findings(GATE, findings)


def _exported_names(ctx: GateContext, package: str) -> set[str]:
    """Names a package's `__init__.py` (or module file) defines, imports or lists in `__all__`."""
    cache = ctx.__dict__.setdefault("_exported", {})
    if package in cache:
        return cache[package]
    rel = package.replace(".", "/")
    names: set[str] = set()
    for candidate in (f"{rel}/__init__.py", f"{rel}.py"):
        resolved = resolve_inside(ctx.repo_root, candidate)
        if resolved is None or not resolved.is_file():
            continue
        try:
            tree = ast.parse(resolved.read_text(encoding="utf-8"), filename=candidate)
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        names.add(target.id)
                        if target.id == "__all__" and isinstance(node.value, (ast.List, ast.Tuple)):
                            names.update(e.value for e in node.value.elts
                                         if isinstance(e, ast.Constant) and isinstance(e.value, str))
        break
    cache[package] = names
    return names
