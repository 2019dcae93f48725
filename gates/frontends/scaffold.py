"""`gate-check new`: start a design record from the template (never overwrites)."""

from __future__ import annotations

import re
from pathlib import Path

from gates.model.errors import UsageError
from gates.model.paths import path_problem, resolve_inside

TEMPLATES = Path(__file__).parent / "templates"
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")
AUTHOR_PATTERN = re.compile(r"^\s*(?P<name>[^<>]+?)\s*<(?P<email>[^<>@\s]+@[^<>@\s]+)>\s*$")


def add_arguments(parser) -> None:
    parser.add_argument("id", help="record id: lower-case letters, digits, '.', '_' and '-' (the file name)")
    parser.add_argument("--title", required=True, help="one-line title")
    parser.add_argument("--lang", choices=["en", "zh"], default="en", help="template language (default en)")
    parser.add_argument("--author", required=True, metavar='"NAME <EMAIL>"', help="the record's first author")
    parser.add_argument("--process", default=None,
                        help="the record's process (default: the configuration's profile, e.g. stacked or single-pr)")
    parser.add_argument("--dir", default=None,
                        help="folder for the record (default: the first configured records folder, docs/design)")


def _has_control(text: str) -> bool:
    return any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text)


def _yaml_text(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def render(record_id: str, title: str, author_name: str, author_email: str, lang: str = "en", *,
           process: str = "stacked", packages: list[str] | None = None, risk: str | None = None,
           default_process: str = "stacked", covers_example: str | None = None) -> str:
    """The template text with the given values filled in.

    A `process:` line names `process` unless it is `stacked` and so is the repository's `default_process`
    (a record without one follows the default). A process other than `stacked` starts at its first
    stage and makes the capture due at the process's first stage from C on (single-pr: D);
    `packages` (the policy's `api.packages`) replace the template's `[kernels]`; `risk` (the
    policy's highest level) replaces the template's L3; `covers_example` (a path of that level's rule)
    is the example the `covers` placeholder gives.
    """
    text = (TEMPLATES / f"record.{lang}.md").read_text(encoding="utf-8")
    if process != "stacked" or default_process != "stacked":
        text = text.replace("\nrisk: ", f"\nprocess: {process}\nrisk: ", 1)
    if process != "stacked":
        from gates.model.config import PROCESS_STAGES

        stages = PROCESS_STAGES[process]
        text = text.replace("\nstage: A\n", f"\nstage: {stages[0]}\n", 1)
        due = next((stage for stage in stages if stage >= "C"), stages[-1])
        text = text.replace("capture: {required: true, due: C,", f"capture: {{required: true, due: {due},", 1)
    if risk is not None:
        text = text.replace("\nrisk: L3\n", f"\nrisk: {risk}\n", 1)
    if packages:
        text = text.replace("  packages: [kernels]\n", f"  packages: [{', '.join(packages)}]\n", 1)
    if covers_example:
        text = text.replace("kernels/decode_attention/**]]", f"{_yaml_text(covers_example)}]]", 1)
    values = {
        "id": record_id,
        "title": _yaml_text(title),
        "author_name": _yaml_text(author_name),
        "author_email": _yaml_text(author_email),
    }
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text.replace(f"# {_yaml_text(title)}\n", f"# {title}\n", 1)


def _highest_rule(policy):
    """The first of the policy's rules at its highest level (what a kernel record covers), None without rules."""
    from gates.model.policy import LEVELS

    rules = list(policy.rules) if policy is not None else []
    return max(rules, key=lambda rule: LEVELS.index(rule.level)) if rules else None


def run(args, repo_root: Path) -> int:
    if not ID_PATTERN.fullmatch(args.id):
        raise UsageError(f"record id {args.id!r} must match {ID_PATTERN.pattern}")
    if _has_control(args.title) or any(ch in args.title for ch in "\x85\u2028\u2029") or not args.title.strip():
        raise UsageError("--title must be one non-empty line")
    author = AUTHOR_PATTERN.match(args.author)
    if not author or _has_control(args.author.strip()):
        raise UsageError(f'--author {args.author!r} must look like "Name <name@example.com>"')
    from gates.model.config import load_settings
    from gates.model.policy import load_policy

    settings = load_settings(repo_root)
    if args.dir is None:
        args.dir = settings.records[0]
    process = args.process or settings.profile
    if process not in settings.profiles:
        raise UsageError(f"--process {process!r} is not a process this repository allows; expected one of "
                         f"{sorted(settings.profiles)}")
    policy = load_policy(repo_root, settings.policy)
    folder = Path(args.dir)
    if folder.is_absolute() or ".." in folder.parts or path_problem(folder.as_posix()) or _has_control(args.dir):
        raise UsageError("--dir must be a folder inside the repository, relative to its root")
    if resolve_inside(repo_root, folder.as_posix()) is None:
        raise UsageError(f"--dir {args.dir} leads outside the repository (after following symlinks); "
                         "gate-check new writes only inside it")
    target = repo_root / folder / f"{args.id}.md"
    hottest = _highest_rule(policy)
    text = render(args.id, args.title.strip(), author.group("name"), author.group("email"), args.lang,
                  process=process, packages=list(policy.api_packages) if policy is not None else None,
                  risk=hottest.level if hottest else None, default_process=settings.profile,
                  covers_example=hottest.paths[0] if hottest and hottest.paths else None)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(target, "x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        raise UsageError(f"{folder / target.name} already exists; gate-check new never overwrites a record") from None
    print(f"created {(folder / target.name).as_posix()}: fill every [[fill: ...]] placeholder, then run gate-check on it")
    return 0
