"""The repository's design-gates configuration: the one module that reads it.

The settings come from the first of:

1. `.design-gates/config.yaml`,
2. the `[tool.design-gates]` table of `pyproject.toml`,
3. the defaults below,

validated by `gates/model/schema/config.schema.json`. Every other module receives the
parsed `Settings` (a frozen dataclass) as data. A mistake names the file, the line,
the key path, what is allowed there and, for an unknown key, the likely intended one.

Keys (all optional; gates/site/pages/configuration.md is the reference):

    records: [docs/design]              # folders of design records
    policy: .design-gates/policy.yaml   # the policy file
    evidence: [docs/evidence]           # folders of evidence artifacts
    profile: stacked                    # the process of a record that names none
    profiles:                           # the processes records may follow (only those listed)
      stacked:
        scopes: {B: [...]}              # per stage: globs a pull request may touch
        gates: {A: [G0, G1, ...]}       # per stage: the gates that apply
    g7:
      extra_terms: [...]                # end-to-end claim phrases added to G7's vocabulary
      kernel_terms: [...]               # the team's kernel and op names: what they name is kernel-level
    lint_pr:
      sections: generated               # section checks of `lint-pr`: generated (bodies `pr-body` wrote) | always | never
      results_headings: [Performance]   # headings of the team's template read as Validation is (default: none)
    refresh:                            # how evidence is produced (gate-check refresh)
      prepare: [{command: ..., runner: gpu}]
      producers:
        <artifact id>: {command: "... --out {out}", path: ..., runner: gpu, exclusive: true, after: [...]}
    require_records: false              # true: a gate-check run that judges nothing exits 2

The rules (policy path, profiles, scopes, gates, evidence folders, G7 terms) of a
change are read at its base commit (`settings_at`), like the policy itself, so a
pull request cannot loosen what it is judged by.
"""

from __future__ import annotations

import difflib
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Callable

from gates.model.errors import InputError
from gates.model.safe_yaml import load_yaml
from gates.model.schemas import validate

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_FILE = ".design-gates/config.yaml"
PYPROJECT = "pyproject.toml"
TOOL_TABLE = ("tool", "design-gates")
GATE_NAMES = ("G0", "G1", "G2", "G3", "G4", "G5", "G6", "G7", "G8")
STAGES = ("A", "B", "C", "D")

DEFAULT_RECORDS = ("docs/design",)
DEFAULT_POLICY = ".design-gates/policy.yaml"
DEFAULT_EVIDENCE = ("docs/evidence",)
DEFAULT_PROFILE = "stacked"
DEFAULT_RUNNER = "local"

# The stages of each process, and the scopes of its stages before the evidence
# folders are added (B, C and D of stacked; the one stage of single-pr).
PROCESS_STAGES = {"stacked": ("A", "B", "C", "D"), "single-pr": ("D",)}
_STACKED_SCOPES = {
    "A": (),
    "B": ("kernels/**", "validation/**", "tests/**"),
    "C": (
        "kernels/decode_layer.py",
        "kernels/split_heuristic.py",
        "kernels/decode_attention/workspace.py",
        "kernels/__init__.py",
        "kernels/**/routing*",
        "tests/**",
    ),
    "D": ("docs/results/**", "validation/bench/**"),
}
BUILTIN_SCOPES = {
    "stacked": _STACKED_SCOPES,
    "single-pr": {"D": ("kernels/**", "validation/**", "tests/**", "docs/results/**")},
}
EVIDENCE_STAGES = {"stacked": ("B", "C", "D"), "single-pr": ("D",)}


@dataclass(frozen=True)
class Profile:
    """One review process: its stages in order, and per stage its scope and its gates."""

    name: str
    stages: tuple[str, ...]
    scopes: dict[str, tuple[str, ...]]
    gates: dict[str, tuple[str, ...]]

    def scope(self, stage: str) -> tuple[str, ...]:
        """The globs a pull request at `stage` may touch (nothing for a stage the process lacks)."""
        return self.scopes.get(stage, ())

    def gates_at(self, stage: str) -> tuple[str, ...]:
        """The gates that apply at `stage` (every gate for a stage the process lacks)."""
        return self.gates.get(stage, GATE_NAMES)


@dataclass(frozen=True)
class Producer:
    """The command that produces one evidence artifact (`refresh.producers.<id>`).

    `command` writes the artifact to `{out}`; `runner` labels the machine it needs;
    an `exclusive` producer runs alone (it times something); `after` runs once the
    artifact is in place (`{path}`), for example to regenerate a results page."""

    id: str
    command: str
    path: str
    runner: str = DEFAULT_RUNNER
    exclusive: bool = True
    after: tuple[str, ...] = ()
    timeout: float | None = None


@dataclass(frozen=True)
class PrepareStep:
    """A command run once before the producers of `runner` (`refresh.prepare`)."""

    command: str
    runner: str = DEFAULT_RUNNER


@dataclass(frozen=True)
class RefreshSettings:
    prepare: tuple[PrepareStep, ...] = ()
    producers: dict[str, Producer] = field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    """The parsed configuration. `source` is the file it came from (None: the defaults)."""

    records: tuple[str, ...] = DEFAULT_RECORDS
    policy: str = DEFAULT_POLICY
    evidence: tuple[str, ...] = DEFAULT_EVIDENCE
    profile: str = DEFAULT_PROFILE
    profiles: dict[str, Profile] = field(default_factory=lambda: {DEFAULT_PROFILE: build_profile(DEFAULT_PROFILE)})
    g7_extra_terms: tuple[str, ...] = ()
    refresh: RefreshSettings = field(default_factory=RefreshSettings)
    require_records: bool = False
    g7_kernel_terms: tuple[str, ...] = ()
    lint_pr_sections: str = "generated"
    lint_pr_results_headings: tuple[str, ...] = ()  # words of the headings read as Validation is
    source: str | None = None
    lines: dict = field(default_factory=dict, compare=False, repr=False)

    def line_of(self, *keys) -> int:
        """The line of a key path in the configuration file (1 when unknown)."""
        while keys:
            if keys in self.lines:
                return self.lines[keys]
            keys = keys[:-1]
        return 1

    def profile_for(self, process: str | None) -> Profile | None:
        """The profile a record follows (its `process`, else the default); None when not allowed."""
        return self.profiles.get(process if process is not None else self.profile)

    def configures(self, key: str) -> bool:
        """True when the configuration file sets the top-level `key` (not merely its default)."""
        return any(path[:1] == (key,) for path in self.lines)

    def is_record_path(self, path: str) -> bool:
        """A design record: a Markdown file below a records folder (index, README and `_*` pages are not)."""
        return is_record_path(path, self.records)

    def is_evidence_path(self, path: str) -> bool:
        return any(path.startswith(folder + "/") for folder in self.evidence)

    @property
    def rules_files(self) -> tuple[str, ...]:
        """The files that set the rules: the policy and the configuration file (if any)."""
        return (self.policy,) + ((self.source,) if self.source else ())

    def records_text(self) -> str:
        """The records folders for messages: `docs/design` or `docs/design, rfcs`."""
        return ", ".join(self.records)


def is_record_path(path: str, folders) -> bool:
    """A Markdown file below one of `folders` that is not an index, README or `_*` page."""
    p = PurePosixPath(path)
    return (
        any(path.startswith(folder + "/") for folder in folders)
        and p.suffix == ".md"
        and p.name.lower() not in ("index.md", "readme.md")
        and not p.name.startswith("_")
    )


def build_profile(name: str, configured: dict | None = None, evidence=DEFAULT_EVIDENCE) -> Profile:
    """A built-in process with the configured stage scopes and gates laid over its defaults.

    A stage whose scope is not configured gets the default scope plus the evidence
    folders (at B, C and D of stacked, at single-pr's one stage).
    """
    configured = configured or {}
    stages = PROCESS_STAGES[name]
    own_scopes = configured.get("scopes", {})
    own_gates = configured.get("gates", {})
    scopes, gates = {}, {}
    for stage in stages:
        if stage in own_scopes:
            scopes[stage] = tuple(dict.fromkeys(own_scopes[stage]))
        else:
            extra = tuple(f"{folder}/**" for folder in evidence) if stage in EVIDENCE_STAGES[name] else ()
            scopes[stage] = tuple(dict.fromkeys(BUILTIN_SCOPES[name][stage] + extra))
        gates[stage] = tuple(g for g in GATE_NAMES if g in own_gates.get(stage, GATE_NAMES))
    return Profile(name, stages, scopes, gates)


def _folder(path: str) -> str:
    return str(PurePosixPath(path))


def settings_from_data(data: dict | None, source: str | None = None, lines: dict | None = None) -> Settings:
    """Validate a configuration document (the YAML file or the TOML table) and build `Settings`."""
    data = {} if data is None else data
    lines = lines or {}
    where = source or "configuration"
    errors = validate("config", data)
    if errors:
        raise InputError(where, _line(lines, errors[0].path), _explain(errors[0], where, data))
    evidence = tuple(_folder(f) for f in data.get("evidence", DEFAULT_EVIDENCE))
    configured = data.get("profiles") or {DEFAULT_PROFILE: {}}
    profiles = {name: build_profile(name, configured[name], evidence) for name in configured}
    profile = data.get("profile", DEFAULT_PROFILE)
    if profile not in profiles:
        key = ("profile",) if "profile" in data else ("profiles",)
        raise InputError(where, _line(lines, key),
                         f"profile: {profile!r} is not among the allowed profiles ({', '.join(profiles)}); "
                         f"list it under profiles or choose one of them")
    for name, settings in configured.items():
        for stage, gates in settings.get("gates", {}).items():
            if "G0" not in gates:
                raise InputError(where, _line(lines, ("profiles", name, "gates", stage)),
                                 f"profiles.{name}.gates.{stage}: G0 (form) applies at every stage; add it")
        for stage in list(settings.get("scopes", {})) + list(settings.get("gates", {})):
            if stage not in PROCESS_STAGES[name]:
                kind = "scopes" if stage in settings.get("scopes", {}) else "gates"
                raise InputError(where, _line(lines, ("profiles", name, kind, stage)),
                                 f"profiles.{name}.{kind}.{stage}: the {name} process has no stage {stage} "
                                 f"(its stages: {', '.join(PROCESS_STAGES[name])})")
    return Settings(
        records=tuple(_folder(f) for f in data.get("records", DEFAULT_RECORDS)),
        policy=str(PurePosixPath(data.get("policy", DEFAULT_POLICY))),
        evidence=evidence,
        profile=profile,
        profiles=profiles,
        g7_extra_terms=tuple(data.get("g7", {}).get("extra_terms", ())),
        refresh=_refresh_settings(data.get("refresh", {}), evidence),
        require_records=data.get("require_records", False),
        g7_kernel_terms=tuple(data.get("g7", {}).get("kernel_terms", ())),
        lint_pr_sections=data.get("lint_pr", {}).get("sections", "generated"),
        lint_pr_results_headings=tuple(data.get("lint_pr", {}).get("results_headings", ())),
        source=source,
        lines=dict(lines),
    )


def _refresh_settings(data: dict, evidence: tuple[str, ...]) -> RefreshSettings:
    """The validated `refresh` table: each producer's path defaults to `<first evidence folder>/<id>.json`."""
    producers = {
        artifact_id: Producer(
            id=artifact_id,
            command=spec["command"],
            path=str(PurePosixPath(spec.get("path", f"{evidence[0]}/{artifact_id}.json"))),
            runner=spec.get("runner", DEFAULT_RUNNER),
            exclusive=spec.get("exclusive", True),
            after=tuple(spec.get("after", ())),
            timeout=spec.get("timeout"),
        )
        for artifact_id, spec in data.get("producers", {}).items()
    }
    prepare = tuple(PrepareStep(step["command"], step.get("runner", DEFAULT_RUNNER)) for step in data.get("prepare", ()))
    return RefreshSettings(prepare, producers)


def _line(lines: dict, key_path: tuple) -> int:
    key_path = tuple(key_path)
    while key_path:
        if key_path in lines:
            return lines[key_path]
        key_path = key_path[:-1]
    return lines.get((), 1)


def _explain(error, where: str, data: dict) -> str:
    """The schema's message with what is allowed there and, for a typo, the likely intended value."""
    message = f"{where} does not match the configuration schema: {error.message}"
    if " does not match '^" in error.message:
        where_key = ".".join(str(part) for part in error.path)
        message = (f"{where} does not match the configuration schema: {where_key}: {_value_at(data, error.path)!r} "
                   "is not a repository path (relative to the root, POSIX separators, no '..' and no glob "
                   "characters)")
    if error.choices and "unknown key" not in error.message:  # an unknown key's message names the keys already
        wrong = str(_value_at(data, error.path))
        message += f"; allowed: {', '.join(error.choices)}"
        close = difflib.get_close_matches(wrong, error.choices, n=1, cutoff=0.6)
        if close:
            message += f" (did you mean {close[0]!r}?)"
    return message


def _value_at(data, key_path: tuple):
    for key in key_path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return ""
    return data


def parse_config_yaml(text: str, path: str = CONFIG_FILE) -> Settings:
    """Settings from the text of `.design-gates/config.yaml`."""
    document = load_yaml(text, path)
    if document.data is None:
        return settings_from_data({}, path, document.lines)
    if not isinstance(document.data, dict):
        raise InputError(path, 1, f"{path} must be a mapping of configuration keys, "
                         f"not {type(document.data).__name__}")
    return settings_from_data(document.data, path, document.lines)


def parse_pyproject(text: str, path: str = PYPROJECT) -> Settings | None:
    """Settings from the `[tool.design-gates]` table of pyproject text; None when it has no such table."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None) or _toml_error_line(str(exc))
        raise InputError(path, line, f"invalid TOML: {exc}") from None
    table = data.get(TOOL_TABLE[0], {}).get(TOOL_TABLE[1]) if isinstance(data.get(TOOL_TABLE[0]), dict) else None
    if table is None:
        return None
    if not isinstance(table, dict):
        raise InputError(path, 1, "tool.design-gates must be a table")
    return settings_from_data(table, path, _toml_lines(text, table))


def _toml_error_line(message: str) -> int:
    match = re.search(r"line (\d+)", message)
    return int(match.group(1)) if match else 1


_TOML_HEADER = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*(?:#.*)?$")
_TOML_KEY = re.compile(r"^\s*(\"[^\"]*\"|'[^']*'|[A-Za-z0-9_-]+)\s*=")


def _toml_lines(text: str, table: dict) -> dict:
    """The line of each key path of the design-gates table: its `key =` line or its `[header]`."""
    lines: dict = {}
    prefix: tuple | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        header = _TOML_HEADER.match(raw)
        if header:
            parts = tuple(p.strip().strip("\"'") for p in header.group(1).split("."))
            prefix = parts[2:] if parts[:2] == TOOL_TABLE else None
            if prefix is not None:
                lines.setdefault(prefix, number)
            continue
        key = _TOML_KEY.match(raw)
        if key and prefix is not None:
            lines.setdefault(prefix + (key.group(1).strip("\"'"),), number)
    return lines


def settings_from_reader(read: Callable[[str], bytes | str | None]) -> Settings:
    """Settings from whatever `read(path)` returns (text or bytes; None: no such file).

    `.design-gates/config.yaml` wins over `[tool.design-gates]` in pyproject.toml;
    with neither, the defaults.
    """
    text = _decoded(read(CONFIG_FILE), CONFIG_FILE)
    if text is not None:
        return parse_config_yaml(text, CONFIG_FILE)
    text = _decoded(read(PYPROJECT), PYPROJECT)
    if text is not None:
        settings = parse_pyproject(text, PYPROJECT)
        if settings is not None:
            return settings
    return Settings()


def _decoded(data, path: str) -> str | None:
    if data is None or isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, data[: exc.start].count(b"\n") + 1, f"not valid UTF-8 (byte offset {exc.start})") from None


def load_settings(repo_root) -> Settings:
    """The settings of the working tree (or any folder holding a checkout) at `repo_root`."""
    root = Path(repo_root)

    def read(path: str) -> bytes | None:
        file = root / path
        return file.read_bytes() if file.is_file() else None

    return settings_from_reader(read)


def settings_at(change, ref: str) -> Settings:
    """The settings as committed at `ref` of a change (`gates.history.changeset.ChangeSet`)."""
    return settings_from_reader(lambda path: change.read_at(ref, path))


def judging_settings(head: Settings, base: Settings) -> Settings:
    """The settings that judge a change: every rule from base; the records folders of both.

    A change that moves its records still has them found (head's folders), but the
    scopes, gates, profiles, policy path and evidence folders are the base's.
    """
    return replace(base, records=tuple(dict.fromkeys(base.records + head.records)))


def tool_table(text: str | None) -> object:
    """The parsed `[tool.design-gates]` table of pyproject text, to compare two versions of the file
    (None when there is no table; a marker string when the TOML does not parse)."""
    if text is None:
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return "(invalid TOML)"
    tool = data.get(TOOL_TABLE[0])
    return tool.get(TOOL_TABLE[1]) if isinstance(tool, dict) else None
