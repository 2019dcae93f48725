"""G5 Compatibility: the public API only grows and the default route stays put.

The record declares `api`: the packages whose public surface it touches, the
names it adds, removes or changes, and whether the default route is unchanged.
Removed or changed public names fail (the API only grows), unless the policy sets
`api.breaks: reviewed` and the record names the reviewer question that accepts the break
(`api.break_question`), accepted. The default route may
change only at stage D, after the results, and only with a reviewer question
(`api.default_route_question`) whose decision is `accepted`. From stage B on,
each declared package must resolve to a module under exactly one of the package roots
(the policy's `api.package_roots`, default `.` then `src`), and each added name must
be exported by one of them: defined, imported or listed in `__all__` by its
`__init__.py` (or module file), star imports followed into the repository's modules
(`gates.python_api.module_scope`). A package whose surface cannot be read statically is
imported in a subprocess to confirm them (with a warning), unless the policy turns that off;
one that cannot be imported either confirms nothing. The diff-based form of this check (`--base`) reads the code itself.
"""

from __future__ import annotations

from gates.checks.context import GateContext, stage_at_least
from gates.model.errors import InputError
from gates.model.findings import Finding, GateResult, Status, adder_at_keys, result_from_findings
from gates.python_api.module_scope import (
    DEFAULT_PACKAGE_ROOTS,
    ModuleScope,
    module_paths,
    module_reader,
    module_scope,
    package_homes,
)
from gates.history.changeset import decode_text
from gates.python_api.imported_surface import ImportFailed, imported_entries
from gates.python_api.scope_model import decode_source
from gates.model.paths import resolve_inside
from gates.model.policy import INTERNAL_DECORATORS, POLICY_PATH
from gates.model.record import Record, question_decisions

GATE = "G5"


def check(record: Record, ctx: GateContext) -> GateResult:
    api = record.get("api")
    if api is None:
        return GateResult(GATE, Status.NOT_APPLICABLE)
    findings: list[Finding] = []
    stage = ctx.effective_stage(record)
    add = adder_at_keys(GATE, record, findings)

    _check_declared_breaks(api, record, ctx, add)
    if api.get("default_route_unchanged") is False:
        question = api.get("default_route_question")
        decisions = question_decisions(record.get("questions", default=[]))
        if not stage_at_least(stage, "D"):
            add(("api", "default_route_unchanged"), f"the default route may change only at stage D (with the "
                f"benchmark results); the record is at stage {stage}")
        elif question is None:
            add(("api", "default_route_unchanged"), "a default-route change names the reviewer question that "
                "accepts it in api.default_route_question")
        elif decisions.get(question) != "accepted":
            add(("api", "default_route_question"), f"question {question} must be accepted before the default "
                f"route changes (decision: {decisions.get(question) or 'not made'})")
    if stage_at_least(stage, "B"):
        packages = api.get("packages") or []
        roots = _package_roots(ctx)
        for index, package in enumerate(packages):
            homes = package_homes(package, lambda path: _exists(ctx, path), roots)
            if _package_scope(ctx, package) is None:
                looked = ", ".join(path for _, path in module_paths(package, roots))
                add(("api", "packages", index), f"declared package {package!r} resolves to no module: looked for "
                    f"{looked} (package roots {', '.join(roots)}; set api.package_roots in the policy)")
            elif len(homes) > 1:
                add(("api", "packages", index), f"declared package {package!r} is found under more than one package "
                    f"root ({', '.join(homes)}); which one Python imports depends on sys.path: keep one, or name "
                    "its root alone in the policy's api.package_roots")
        findings.extend(_policy_packages_found_nowhere(ctx, roots))
        exported = set().union(*(_exported_names(ctx, package) for package in packages))
        unread = [scope for scope in (_package_scope(ctx, package) for package in packages) if scope and scope.error]
        imported, failures = _imported_names(ctx, unread, roots)
        if imported is not None:
            for scope in unread:
                findings.append(Finding(GATE, record.rel_path, record.line_of("api", "packages"), 1,
                                        f"package {scope.module} cannot be read statically ({scope.error}), so the "
                                        "names it exports were read by importing it in a subprocess", "warning"))
            exported |= imported
            unread = []
        why = "".join(f"; {scope.module} could not be read in full ({scope.error}{failures.get(scope.module, '')})"
                      for scope in unread)
        for index, name in enumerate(api.get("adds") or []):
            if name not in exported:
                add(("api", "adds", index), f"{name!r} is declared as added but no declared package "
                    f"({', '.join(packages)}) exports it{why}")
            elif unread:
                add(("api", "adds", index), f"{name!r} cannot be confirmed as exported{why}")
    return result_from_findings(GATE, findings)


def _check_declared_breaks(api: dict, record: Record, ctx: GateContext, add) -> None:
    """The names the record `removes` or `changes`. Under a policy that keeps the public API growing (`api.breaks:
    never`, the default) each is an error. Under `api.breaks: reviewed` each must be a dotted name inside a declared
    package, and `api.break_question` must name a reviewer question whose decision is `accepted`."""
    declared = [(key, index, name) for key in ("removes", "changes") for index, name in enumerate(api.get(key) or [])]
    if not declared:
        return
    if ctx.policy is None or ctx.policy.api_breaks != "reviewed":
        for key, index, name in declared:
            add(("api", key, index), f"the design {key} public name {name!r}; the public API may only grow "
                "(add a new entry point instead)")
        return
    packages = [package for package in api.get("packages") or [] if isinstance(package, str)]
    for key, index, name in declared:
        if not any(name == package or name.startswith(package + ".") for package in packages):
            add(("api", key, index), f"{name!r} is in no declared package ({', '.join(packages) or 'none'}): name what "
                "breaks as a caller imports it, the package's dotted path to the function, class or module")
    question = api.get("break_question")
    decisions = question_decisions(record.get("questions", default=[]))
    if question is None:
        add(("api",), "a declared API break names the reviewer question that accepts it in api.break_question")
    elif decisions.get(question) != "accepted":
        add(("api", "break_question"), f"question {question} must be accepted before the break merges "
            f"(decision: {decisions.get(question) or 'not made'})")


def _imported_names(ctx: GateContext, unread: list[ModuleScope], roots: list[str]
                    ) -> tuple[set[str] | None, dict[str, str]]:
    """The names the packages that cannot be read statically export, read by importing each from the working tree
    (`gates.python_api.imported_surface`); (None, why importing failed by package) when one cannot be imported, or
    the policy turns importing off (`api.import_fallback: false`)."""
    if not unread or (ctx.policy is not None and not ctx.policy.api_import_fallback):
        return None, {}
    internal = ctx.policy.api_internal_decorators if ctx.policy is not None else INTERNAL_DECORATORS
    names: set[str] = set()
    for scope in unread:
        try:
            entries, exports = imported_entries(ctx.repo_root, scope.module, roots, internal)
        except ImportFailed as exc:
            return None, {scope.module: f"; importing it in a subprocess failed too ({exc})"}
        names |= {name for name in entries if "." not in name} | set(exports or [])
    return names, {}


def _policy_packages_found_nowhere(ctx: GateContext, roots: list[str]) -> list[Finding]:
    """The policy's `api.packages` that resolve to no module: a typo there would check nothing."""
    if ctx.policy is None:
        return []
    path = ctx.settings.policy if ctx.settings is not None else POLICY_PATH
    text = _read_text(ctx, path) or ""
    found = []
    for package in ctx.policy.api_packages:
        if _package_scope(ctx, package) is None:
            line = next((n for n, row in enumerate(text.splitlines(), 1) if "packages" in row and package in row), 1)
            looked = ", ".join(where for _, where in module_paths(package, roots))
            found.append(Finding(GATE, path, line, 1, f"api package {package!r} of the policy resolves to no module: "
                                 f"looked for {looked} (package roots {', '.join(roots)}; set api.package_roots)"))
    return found


def _read_text(ctx: GateContext, rel_path: str) -> str | None:
    """A file of the working tree; None when it is not there (or lies outside the repository)."""
    resolved = resolve_inside(ctx.repo_root, rel_path)
    if resolved is None or not resolved.is_file():
        return None
    try:
        data = resolved.read_bytes()
    except OSError as exc:
        raise InputError(rel_path, 1, f"cannot be read ({exc.strerror or exc})") from None
    return decode_source(data, rel_path) if rel_path.endswith(".py") else decode_text(data, rel_path)


def _exists(ctx: GateContext, rel_path: str) -> bool:
    resolved = resolve_inside(ctx.repo_root, rel_path)
    return resolved is not None and resolved.is_file()


def _package_roots(ctx: GateContext) -> list[str]:
    """Where declared packages are looked for: the policy's `api.package_roots`, else `.` then `src`."""
    return list(ctx.policy.api_package_roots) if ctx.policy is not None else list(DEFAULT_PACKAGE_ROOTS)


def _package_scope(ctx: GateContext, package: str) -> ModuleScope | None:
    """What the package's `__init__.py` (or module file) binds; None when the repository has no such module."""
    cache = ctx.__dict__.setdefault("_package_scopes", {})
    if package not in cache:
        read_module = module_reader(lambda rel_path: _read_text(ctx, rel_path), _package_roots(ctx))
        try:
            found = read_module(package)
        except InputError as exc:
            cache[package] = ModuleScope(package, exc.path, error=f"{exc.path} {exc.message}")
        else:
            cache[package] = module_scope(*found, read_module, module=package) if found else None
    return cache[package]


def _exported_names(ctx: GateContext, package: str) -> set[str]:
    """Names a package's `__init__.py` (or module file) defines, imports, star-imports or lists in `__all__`."""
    scope = _package_scope(ctx, package)
    if scope is None:
        return set()
    return {name for name in scope.names if not name.startswith("*:")} | set(scope.exports or [])
