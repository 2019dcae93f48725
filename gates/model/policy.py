"""The repository policy: which paths are hot (risk levels L0-L4) and which packages' API is checked.

The policy lives in `.design-gates/policy.yaml` (the configuration's `policy` key,
`gates.model.config`) and is read at the *base* ref of a change, so a pull request cannot
loosen the rules it is judged by. The policy file itself always counts as L4:
changing it needs an approved record that covers it.

Path globs (used here, in stage scopes and in a record's `covers`) are repository
paths with POSIX separators: `*` matches within one path segment, `?` one
character, `**` any number of whole segments (zero included), and a pattern
ending in `/` matches everything below that folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from gates.model.config import DEFAULT_POLICY
from gates.model.errors import InputError
from gates.model.safe_yaml import load_yaml
from gates.model.schemas import validate

POLICY_PATH = DEFAULT_POLICY  # the default; a repository's own path is `Settings.policy`
LEVELS = ("L0", "L1", "L2", "L3", "L4")
CHECKER_PIN = ".design-gates/requirements.txt"  # the design-gates CI installs, read at base by the gate-check action
HOT_LEVELS = ("L3", "L4")


@lru_cache(maxsize=4096)
def _glob_regex(pattern: str) -> re.Pattern:
    if pattern.endswith("/"):
        pattern += "**"
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def glob_matches(pattern: str, path: str) -> bool:
    """True when repository path `path` matches the glob `pattern` (see the module doc)."""
    return _glob_regex(pattern).match(path) is not None


def any_glob_matches(patterns, path: str) -> bool:
    """True when any glob of `patterns` (a list; a lone string counts as one glob) matches."""
    if isinstance(patterns, str):
        patterns = [patterns]
    if not isinstance(patterns, (list, tuple)):
        return False
    return any(isinstance(p, str) and glob_matches(p, path) for p in patterns)


def has_control_characters(path: str) -> bool:
    """True when `path` holds a control character (a newline, a tab, DEL, C1 controls ...)."""
    return any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in path)


@dataclass(frozen=True)
class PolicyRule:
    paths: tuple[str, ...]
    level: str
    reason: str = ""
    line: int = 1


INTERNAL_DECORATORS = ("triton.jit", "triton.autotune", "triton.heuristics")
"""`api.internal_decorators` by default: what they decorate is no public API (Triton kernels, launched by wrappers)."""

DOCUMENTATION_DECORATORS = tuple(f"transformers.utils{where}.{name}" for where in ("", ".doc") for name in (
    "add_start_docstrings", "add_start_docstrings_to_model_forward", "add_end_docstrings",
    "replace_return_docstrings", "add_code_sample_docstrings"))
"""`api.transparent_decorators` by default: decorators from outside a repository that set `__doc__` and return
the function they decorate."""


@dataclass
class Policy:
    rules: list[PolicyRule] = field(default_factory=list)
    default_level: str = "L0"
    api_packages: list[str] = field(default_factory=list)
    switches: list[str] = field(default_factory=list)  # "package.module:NAME"
    api_package_roots: list[str] = field(default_factory=lambda: [".", "src"])  # where api packages are looked for
    api_internal_decorators: list[str] = field(default_factory=lambda: list(INTERNAL_DECORATORS))
    api_transparent_decorators: list[str] = field(default_factory=lambda: list(DOCUMENTATION_DECORATORS))
    api_import_fallback: bool = True  # read an unreadable module by importing it in a subprocess
    api_unchecked_modules: list[str] = field(default_factory=list)  # modules whose own surface G5 does not compare
    api_breaks: str = "never"  # "reviewed": a break an approved record declares, with its question accepted, merges
    path: str = POLICY_PATH
    sections: dict = field(default_factory=dict)  # the validated document: attestation, approvals, ceilings, ...

    def section(self, name: str) -> dict:
        """A top-level section of the policy document (`attestation`, `ceilings`, ...), {} when absent."""
        value = self.sections.get(name)
        return value if isinstance(value, dict) else {}

    def level_of(self, path: str) -> tuple[str, PolicyRule | None]:
        """The highest level among the rules matching `path` (the default level when none
        does), and the rule that set it."""
        if path == self.path:
            return "L4", PolicyRule((self.path,), "L4", "the policy file governs every level")
        trusted = self.trusted_files().get(path)
        if trusted is not None:
            return "L4", PolicyRule((path,), "L4", trusted)
        if has_control_characters(path):
            return "L4", PolicyRule((path,), "L4", "a path with control characters gets the highest level, "
                                    "since globs cannot be trusted to match it")
        best_rule = None
        for rule in self.rules:
            if any_glob_matches(rule.paths, path) and (
                best_rule is None or LEVELS.index(rule.level) > LEVELS.index(best_rule.level)
            ):
                best_rule = rule
        return (best_rule.level, best_rule) if best_rule else (self.default_level, None)

    def trusted_files(self) -> dict[str, str]:
        """The files besides the policy that decide how a change is judged, by path, with why: the reviewers'
        allowed-signers file and the alias map (`approvals.allowed_signers`, `approvals.mailmap`), and the checker
        pin (`CHECKER_PIN`). Each is L4 like the policy itself, whatever the rules say: a key or an alias added
        there decides whose approval counts next, and the pin decides which checker judges next. None where there
        is no policy (a repository's first set-up adds them freely, with its first policy)."""
        if not self.sections:
            return {}
        approvals = self.section("approvals")
        found = {CHECKER_PIN: "it names the design-gates that CI installs from the base of each change: which "
                              "checker judges is part of the rules"}
        found.update({value: f"the policy's approvals.{key} names it: whose approvals count is part of the rules"
                      for key in ("allowed_signers", "mailmap")
                      for value in [approvals.get(key)] if isinstance(value, str) and value})
        return found

    def required_contracts(self, level: str | None) -> list[str]:
        """The contracts a record of `level` must declare (`contracts` in the policy: numeric, bitwise, capture),
        those listed for it or for any lower level, in that order."""
        contracts = self.section("contracts")
        listed = {kind for name in (LEVELS[: LEVELS.index(level) + 1] if level in LEVELS else ())
                  for kind in contracts.get(name) or []}
        return [kind for kind in ("numeric", "bitwise", "capture") if kind in listed]

    def is_hot(self, path: str) -> bool:
        return self.level_of(path)[0] in HOT_LEVELS

    def loosenings(self, newer: "Policy") -> list[str]:
        """How `newer` lowers a level that this policy sets (empty when it does not)."""
        found = []
        if LEVELS.index(newer.default_level) < LEVELS.index(self.default_level):
            found.append(f"default_level {self.default_level} -> {newer.default_level}")
        for rule in self.rules:
            for glob in rule.paths:
                level = max(
                    (r.level for r in newer.rules if glob in r.paths),
                    key=LEVELS.index,
                    default=newer.default_level,
                )
                if LEVELS.index(level) < LEVELS.index(rule.level):
                    found.append(f"{glob} {rule.level} -> {level}")
        for package in self.api_packages:
            if package not in newer.api_packages:
                found.append(f"api package {package} no longer checked")
        if newer.api_package_roots != self.api_package_roots:
            found.append(f"api package_roots {self.api_package_roots} -> {newer.api_package_roots}")
        for switch in self.switches:
            if switch not in newer.switches:
                found.append(f"switch {switch} no longer checked")
        if newer.api_import_fallback and not self.api_import_fallback:
            found.append("api import_fallback turned on")
        added = sorted(set(newer.api_unchecked_modules) - set(self.api_unchecked_modules))
        if added:
            found.append(f"api unchecked_modules added {', '.join(added)}")
        if newer.api_breaks == "reviewed" and self.api_breaks != "reviewed":
            found.append("api breaks: never -> reviewed")
        for key in ("internal_decorators", "transparent_decorators"):
            added = sorted(set(getattr(newer, f"api_{key}")) - set(getattr(self, f"api_{key}")))
            if added:
                found.append(f"api {key} added {', '.join(added)}")
        for level in LEVELS:
            dropped = [kind for kind in self.required_contracts(level) if kind not in newer.required_contracts(level)]
            if dropped:
                found.append(f"contracts at {level} no longer require {', '.join(dropped)}")
        return found


def _validate(data, lines: dict, path: str) -> None:
    errors = validate("policy", data)
    if errors:
        error = errors[0]
        key_path, line = error.path, 1
        while key_path:
            if key_path in lines:
                line = lines[key_path]
                break
            key_path = key_path[:-1]
        raise InputError(path, line, f"policy does not match its schema: {error.message}")


def parse_policy(text: str, path: str = POLICY_PATH) -> Policy:
    """Parse and validate policy text; `InputError` names the file and line on any problem."""
    document = load_yaml(text, path)
    if document.data is None:
        raise InputError(path, 1, "policy file is empty")
    _validate(document.data, document.lines, path)
    data = document.data
    rules = [
        PolicyRule(tuple(rule["paths"]), rule["level"], rule.get("reason", ""), document.lines.get(("rules", i), 1))
        for i, rule in enumerate(data["rules"])
    ]
    return Policy(
        rules=rules,
        default_level=data.get("default_level", "L0"),
        api_packages=list(data.get("api", {}).get("packages", [])),
        switches=list(data.get("api", {}).get("switches", [])),
        api_package_roots=list(data.get("api", {}).get("package_roots", [".", "src"])),
        api_internal_decorators=list(data.get("api", {}).get("internal_decorators", INTERNAL_DECORATORS)),
        api_transparent_decorators=list(data.get("api", {}).get("transparent_decorators", DOCUMENTATION_DECORATORS)),
        api_import_fallback=data.get("api", {}).get("import_fallback", True),
        api_unchecked_modules=list(data.get("api", {}).get("unchecked_modules", [])),
        api_breaks=data.get("api", {}).get("breaks", "never"),
        path=path,
        sections=data,
    )


def load_policy(repo_root: Path, path: str | None = None) -> Policy | None:
    """The working tree's policy at `path` (default: the configured one); None when there is none."""
    if path is None:
        from gates.model.config import load_settings

        path = load_settings(repo_root).policy
    file = Path(repo_root) / path
    if not file.is_file():
        return None
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, 1, f"not valid UTF-8 (byte offset {exc.start})") from None
    return parse_policy(text, path)
