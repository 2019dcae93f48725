"""What the next change will meet under a repository's set-up, read before the set-up merges (`gate-check doctor`).

Once a repository has a policy, the policy and the configuration are L4: a misspelt rule, a package
G5 cannot read or a key that does not parse can then only be mended by a change of the rules that
waits for its own reviewed record. `check_setup` reads the configuration and the policy of one
commit (HEAD by default) as the base of the next change, and reports what would refuse honest work
or pass silently there:

- the configuration: it parses, and each records folder holds a record; the checker pin names design-gates;
- the policy: it parses; each rule's glob matches a file (a rule above the default level that
  matches nothing protects nothing, an error);
- approvals: the trusted sources have what they need (reviewer logins, an allowed-signers file
  whose every line holds a public key, the `.mailmap`), and the ratchet's `history.enforce_from`
  is a commit of this history;
- attestation: every key parses, and evidence the policy requires signed has a key to be signed by;
- the API packages: each module is read as G5 reads one that a change adds
  (`gates.history.api_compat.read_every_module`), so a module neither reading works for shows now.

Findings of a gate (G5, G8) carry its name, as the checks of a change would report them; the others
carry `setup`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.serialization import load_ssh_public_key

from gates.evidence.attestation import TrustedKeys, UnreadableKeyError, load_public_key
from gates.history import api_compat
from gates.history.approvals import ApprovalBook
from gates.history.context import SeriesContext
from gates.history.git_repo import load_change_set
from gates.model.config import Settings, is_record_path
from gates.model.errors import InputError
from gates.model.findings import Finding
from gates.model.policy import CHECKER_PIN, LEVELS, Policy, glob_matches, parse_policy
from gates.model.safe_yaml import load_yaml

SETUP = "setup"
SSH_KEY_TYPES = ("ssh-", "ecdsa-", "sk-ssh-", "sk-ecdsa-")


@dataclass
class SetupReport:
    """The commit read, what was found there (one line each) and the findings."""

    commit: str
    facts: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    unreadable_modules: list[str] = field(default_factory=list)  # what api.unchecked_modules would have to list

    @property
    def errors(self) -> int:
        return sum(1 for finding in self.findings if finding.severity == "error")

    @property
    def warnings(self) -> int:
        return len(self.findings) - self.errors


def check_setup(repo_root: Path, ref: str = "HEAD", *, read_packages: bool = True) -> SetupReport:
    """Read the set-up at `ref` as the base of the next change; `read_packages`: read the API packages' modules too.

    Raises `GitContextError` where `ref` is no commit of the repository at `repo_root`."""
    change = load_change_set(repo_root, ref, ref)
    try:
        ctx = SeriesContext(change)
        report = SetupReport(change.head)
        settings = _configuration(ctx, report)
        policy = _policy(ctx, settings, report) if settings is not None else None
        if policy is not None:
            _checker_pin(ctx, report)
            _rules(ctx, policy, report)
            _approvals(ctx, policy, report)
            _attestation(ctx, policy, report)
            if read_packages:
                _packages(ctx, policy, report)
            else:
                report.facts.append("api: packages not read (--no-packages)")
        report.findings = ctx.findings
        return report
    finally:
        change.close()


def _configuration(ctx: SeriesContext, report: SetupReport) -> Settings | None:
    change = ctx.change
    try:
        settings = change.settings_at(change.head)
    except InputError as exc:
        ctx.report(SETUP, exc.path, exc.line, f"the configuration does not parse: {exc.message}", commit=change.head)
        return None
    report.facts.append(f"configuration: {settings.source or 'none (the defaults)'}")
    files = change.list_files(change.head, "")
    for folder in settings.records:
        count = sum(1 for path in files if is_record_path(path, (folder,)))
        report.facts.append(f"records folder {folder}: {count} record(s)")
        if not count:
            ctx.report(SETUP, settings.source or folder, settings.line_of("records") if settings.source else 1,
                       f"records folder {folder} holds no design record: the checks judge nothing there until one "
                       "is written (`gate-check new ID --title TITLE`)", severity="warning", commit=change.head)
    return settings


def _policy(ctx: SeriesContext, settings: Settings, report: SetupReport) -> Policy | None:
    change = ctx.change
    try:
        text = change.read_at(change.head, settings.policy)
        policy = parse_policy(text, settings.policy) if text is not None else None
    except InputError as exc:
        ctx.report(SETUP, exc.path, exc.line, f"the policy does not parse: {exc.message}", commit=change.head)
        return None
    if policy is None:
        ctx.report(SETUP, settings.source or settings.policy, 1,
                   f"no policy at {settings.policy}: `gate-check --base` and `--history` judge no path of a change "
                   "without one (levels, approvals, the API G5 compares)", commit=change.head)
        return None
    report.facts.append(f"policy: {settings.policy}, {len(policy.rules)} rule(s), default level "
                        f"{policy.default_level}")
    return policy


def _checker_pin(ctx: SeriesContext, report: SetupReport) -> None:
    """The design-gates CI installs from the base of each change: the pin names it."""
    try:
        text = ctx.change.read_at(ctx.change.head, CHECKER_PIN)
    except InputError as exc:
        ctx.report(SETUP, exc.path, exc.line, exc.message, commit=ctx.change.head)
        return
    if text is None:
        ctx.report(SETUP, CHECKER_PIN, 1, f"no {CHECKER_PIN}: the gate-check action installs the design-gates it "
                   "names from the base of each change; without it, CI needs the action's `version` input",
                   severity="warning", commit=ctx.change.head)
        return
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    named = [line for line in lines if line.lower().replace("_", "-").startswith("design-gates")
             or line.startswith((".", "/", "-e "))]  # a release, or the base checkout's own folder
    if named:
        report.facts.append(f"checker pin: {named[0]}")
    else:
        ctx.report(SETUP, CHECKER_PIN, 1, "the checker pin names no design-gates requirement "
                   "(`design-gates @ git+https://.../design-gates@v0.1.0`): CI would judge with no checker",
                   commit=ctx.change.head)


def _rules(ctx: SeriesContext, policy: Policy, report: SetupReport) -> None:
    """Each rule's globs match a file; the count of files each level holds."""
    change = ctx.change
    files = change.list_files(change.head, "")
    for rule in policy.rules:
        above_default = LEVELS.index(rule.level) > LEVELS.index(policy.default_level)
        for pattern in rule.paths:
            if any(glob_matches(pattern, path) for path in files):
                continue
            if above_default:
                ctx.report(SETUP, policy.path, rule.line, f"rule path {pattern!r} ({rule.level}) matches no file: a "
                           "misspelt glob protects nothing; correct it before the policy merges (after that, a "
                           "change of the rules waits for its reviewed record)", commit=change.head)
            else:
                ctx.report(SETUP, policy.path, rule.line, f"rule path {pattern!r} ({rule.level}) matches no file "
                           "yet", severity="warning", commit=change.head)
    by_level: dict[str, int] = {}
    for path in files:
        level = policy.level_of(path)[0]
        by_level[level] = by_level.get(level, 0) + 1
    report.facts.append("files by level: " + ", ".join(f"{level} {by_level[level]}" for level in LEVELS
                                                       if level in by_level))


def _approvals(ctx: SeriesContext, policy: Policy, report: SetupReport) -> None:
    """The trusted approval sources have what they need; the ratchet names a commit of this history."""
    book = ApprovalBook(ctx)
    sources = book.sources
    report.facts.append(f"approvals: {', '.join(sources) if sources else 'declared (YAML decisions)'}")
    if not sources:
        ctx.report(SETUP, policy.path, 1, "approvals.sources is not set, so a reviewer's `decision: approved` in a "
                   "record is the approval, which anyone who can push a commit can write: trust the forge's reviews "
                   "or signed approval commits (the trust model's verified approvals)", severity="warning",
                   commit=ctx.change.head)
    book.forge_reviewers  # noqa: B018 - each reports what its source lacks
    book.mailmap  # noqa: B018
    signers = book.allowed_signers
    if signers is not None:
        _check_allowed_signers(ctx, policy.section("approvals")["allowed_signers"], signers)
    rev = policy.section("history").get("enforce_from")
    if not rev:
        ctx.report(SETUP, policy.path, 1, "history.enforce_from is not set: `gate-check --history` judges no commit "
                   "of the main branch (the ratchet is off); set it in the set-up's pull request to the commit it "
                   "branches from", severity="warning", commit=ctx.change.head)
    elif book.enforce_from is not None:
        report.facts.append(f"history.enforce_from: {rev} (a commit of this history)")


def _check_allowed_signers(ctx: SeriesContext, path: str, data: bytes) -> None:
    """Each line of the allowed-signers file names principals and a public key `ssh-keygen` can read."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        ctx.report(SETUP, path, 1, f"not valid UTF-8 (byte offset {exc.start})", commit=ctx.change.head)
        return
    keys = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        words = line.split()
        at = next((index for index, word in enumerate(words) if word.startswith(SSH_KEY_TYPES)), None)
        problem = None
        if at is None or at == 0 or at + 1 >= len(words):
            problem = "no principal followed by a key type and a key (`email namespaces=\"git\" ssh-ed25519 AAAA...`)"
        else:
            try:
                load_ssh_public_key(f"{words[at]} {words[at + 1]}".encode("ascii", "replace"))
            except (ValueError, TypeError) as exc:
                problem = f"the {words[at]} key does not parse ({exc})"
        if problem:
            ctx.report(SETUP, path, number, f"allowed-signers line: {problem}; no approval signed with it verifies",
                       commit=ctx.change.head)
        else:
            keys += 1
    if not keys:
        ctx.report(SETUP, path, 1, "the allowed-signers file lists no key: no signed approval can verify",
                   commit=ctx.change.head)


def _attestation(ctx: SeriesContext, policy: Policy, report: SetupReport) -> None:
    """Every runner key parses; evidence the policy requires signed has a key to be signed by."""
    section = policy.section("attestation")
    trusted = TrustedKeys.from_section(section)
    lines = _policy_lines(ctx, policy)
    for index, (key_id, text) in enumerate(trusted.keys.items()):
        try:
            load_public_key(text)
        except UnreadableKeyError as exc:
            ctx.report(SETUP, policy.path, lines.get(("attestation", "keys", index), 1),
                       f"attestation key {key_id!r} does not parse ({exc}): no artifact signed with it verifies",
                       commit=ctx.change.head)
    required = {level: kinds for level, kinds in trusted.required.items() if kinds}
    if required and not trusted.keys:
        ctx.report(SETUP, policy.path, lines.get(("attestation", "required"), 1),
                   "attestation.required asks for signed evidence, but attestation.keys lists no key: no artifact "
                   "can be attested (`gate-check key new` makes one)", commit=ctx.change.head)
    report.facts.append(f"attestation: {len(trusted.keys)} key(s), signed evidence required at "
                        f"{', '.join(sorted(required)) or 'no level'}")
    hot = [rule.level for rule in policy.rules if rule.level in ("L3", "L4")]
    highest = max(hot, key=LEVELS.index, default=None)
    contracts = policy.required_contracts(highest) if highest else []
    report.facts.append(f"contracts a {highest or 'hot'} record must declare: {', '.join(contracts) or 'none'}")
    if highest and not contracts:
        ctx.report(SETUP, policy.path, 1, f"the policy requires no contract of a record covering {highest} paths: one "
                   "that declares no numeric contract, bitwise anchors or capture leaves G3, G4 and G6 not applicable "
                   "(`contracts: {L4: [numeric, bitwise]}`)", severity="warning", commit=ctx.change.head)


def _policy_lines(ctx: SeriesContext, policy: Policy) -> dict:
    try:
        return load_yaml(ctx.change.read_at(ctx.change.head, policy.path) or "", policy.path).lines
    except InputError:
        return {}


def _packages(ctx: SeriesContext, policy: Policy, report: SetupReport) -> None:
    if not policy.api_packages:
        ctx.report(SETUP, policy.path, 1, "api.packages is empty: G5 compares no public API", severity="warning",
                   commit=ctx.change.head)
        return
    reading = api_compat.read_every_module(ctx)
    where = ", ".join(f"{package} (under {root})" for package, root in sorted(reading.packages.items()))
    counts = reading.modules
    report.facts.append(
        f"api: {where or 'no package found'}; modules read statically {counts['static']}, by importing "
        f"{counts['imported']}, unreadable {counts['unreadable']}, unchecked {counts['unchecked']}, private "
        f"{counts['private']} (read through the modules that import from them)")
    if reading.unchecked_readable:
        ctx.report(SETUP, policy.path, 1, f"api.unchecked_modules leaves {reading.unchecked_readable} of its "
                   f"{counts['unchecked']} modules unchecked that G5 can read statically: a pattern (`*` spans dots) may "
                   "be wider than the modules that need it", severity="warning", commit=ctx.change.head)
    report.unreadable_modules = list(reading.unreadable)
