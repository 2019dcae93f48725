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
    parser.add_argument("--dir", default=None,
                        help="folder for the record (default: the first configured records folder, docs/design)")


def _has_control(text: str) -> bool:
    return any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text)


def _yaml_text(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def render(record_id: str, title: str, author_name: str, author_email: str, lang: str = "en") -> str:
    """The template text with the given values filled in."""
    text = (TEMPLATES / f"record.{lang}.md").read_text(encoding="utf-8")
    values = {
        "id": record_id,
        "title": _yaml_text(title),
        "author_name": _yaml_text(author_name),
        "author_email": _yaml_text(author_email),
    }
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text.replace(f"# {_yaml_text(title)}\n", f"# {title}\n", 1)


def run(args, repo_root: Path) -> int:
    if not ID_PATTERN.fullmatch(args.id):
        raise UsageError(f"record id {args.id!r} must match {ID_PATTERN.pattern}")
    if _has_control(args.title) or any(ch in args.title for ch in "\x85\u2028\u2029") or not args.title.strip():
        raise UsageError("--title must be one non-empty line")
    author = AUTHOR_PATTERN.match(args.author)
    if not author or _has_control(args.author.strip()):
        raise UsageError(f'--author {args.author!r} must look like "Name <name@example.com>"')
    if args.dir is None:
        from gates.model.config import load_settings

        args.dir = load_settings(repo_root).records[0]
    folder = Path(args.dir)
    if folder.is_absolute() or ".." in folder.parts or path_problem(folder.as_posix()) or _has_control(args.dir):
        raise UsageError("--dir must be a folder inside the repository, relative to its root")
    if resolve_inside(repo_root, folder.as_posix()) is None:
        raise UsageError(f"--dir {args.dir} leads outside the repository (after following symlinks); "
                         "gate-check new writes only inside it")
    target = repo_root / folder / f"{args.id}.md"
    text = render(args.id, args.title.strip(), author.group("name"), author.group("email"), args.lang)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(target, "x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        raise UsageError(f"{folder / target.name} already exists; gate-check new never overwrites a record") from None
    print(f"created {(folder / target.name).as_posix()}: fill every [[fill: ...]] placeholder, then run gate-check on it")
    return 0
