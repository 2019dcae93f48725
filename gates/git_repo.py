"""The repository adapter: what changed between a base ref and a head ref.

This is the only module that imports GitPython. It runs a few `git` plumbing
commands with NUL-separated output and returns plain dataclasses, so the
history checks in `gates.series` never see a GitPython object.

`load_change_set(repo_root, base, head)` raises `GitContextError` (exit 2) when
the history it needs is not there, with a message that says what to fetch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import git

from gates.errors import GitContextError, InputError
from gates.record import parse_record

RECORD_DIR = "docs/design"
TRAILER_KEYS = ("Co-authored-by", "Reviewed-by", "Approved-by")
_TRAILER_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)\s*:\s*(.*)$")
_PERSON = re.compile(r"^\s*(.*?)\s*<([^<>]*)>\s*$")
_FETCH_HINT = (
    "fetch the full history (actions/checkout with `fetch-depth: 0`, "
    "or `git fetch --unshallow origin`)"
)


@dataclass(frozen=True)
class Person:
    """A name and an email, compared case-insensitively by `gates.series.identity`."""

    name: str
    email: str

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>" if self.email else self.name


@dataclass(frozen=True)
class Trailer:
    key: str  # normalised spelling from TRAILER_KEYS
    person: Person


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author: Person
    committer: Person
    message: str
    trailers: tuple[Trailer, ...]
    paths: tuple[str, ...]  # paths the commit touched (empty for merge commits)

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1

    def trailer_people(self, key: str) -> list[Person]:
        return [t.person for t in self.trailers if t.key == key]


@dataclass(frozen=True)
class ChangedPath:
    status: str  # "A", "M", "D", "R", "C", "T"
    path: str  # path at head (the old path for "D")
    old_path: str | None = None  # set for renames and copies


@dataclass
class RecordSnapshot:
    """One design record as it stands at one ref."""

    rel_path: str
    record: object | None  # gates.record.Record, or None when it did not parse
    error: InputError | None = None

    @property
    def front_matter(self) -> dict | None:
        return getattr(self.record, "front_matter", None) if self.record is not None else None

    def line_of(self, *keys) -> int:
        if self.record is None:
            return self.error.line if self.error else 1
        return self.record.line_of(*keys)


@dataclass
class RecordChange:
    """A record under docs/design/ that base..head changed, before and after."""

    rel_path: str
    status: str
    base: RecordSnapshot | None  # None when the record is new
    head: RecordSnapshot | None  # None when the record was deleted

    @property
    def base_front_matter(self) -> dict | None:
        return self.base.front_matter if self.base else None

    @property
    def head_front_matter(self) -> dict | None:
        return self.head.front_matter if self.head else None


@dataclass
class ChangeSet:
    """Everything the history checks need to know about base..head, as plain data."""

    repo_root: Path
    base_ref: str
    head_ref: str
    base: str
    head: str
    merge_base: str
    changed: list[ChangedPath]
    commits: list[Commit]
    records: list[RecordChange]
    _reader: "_GitReader" = field(repr=False, compare=False, default=None)
    _base_records: dict | None = field(repr=False, compare=False, default=None)

    def read_at(self, ref: str, path: str) -> str | None:
        """The text of `path` at `ref` (a sha or ref name); None when it does not exist there.

        Raises `InputError` naming the line when the file is not valid UTF-8.
        """
        data = self._reader.read_bytes(ref, path)
        if data is None:
            return None
        return decode_text(data, path)

    def read_bytes_at(self, ref: str, path: str) -> bytes | None:
        return self._reader.read_bytes(ref, path)

    def list_files(self, ref: str, under: str) -> list[str]:
        """Repository paths of the files below the folder `under` at `ref`."""
        return self._reader.list_files(ref, under)

    def is_ancestor(self, sha: str, ref: str) -> bool:
        """True when commit `sha` is `ref` or one of its ancestors."""
        return self._reader.is_ancestor(sha, ref)

    def commit_exists(self, sha: str) -> bool:
        return self._reader.resolve_commit(sha) is not None

    def resolve_commit(self, rev: str) -> str | None:
        return self._reader.resolve_commit(rev)

    def last_commit_touching(self, path: str) -> str:
        """The newest commit in base..head that touched `path`; the head commit otherwise."""
        for commit in self.commits:
            if path in commit.paths:
                return commit.sha
        return self.head

    def changed_paths(self) -> list[str]:
        """Every path the diff touches, old paths of renames included."""
        paths: list[str] = []
        for change in self.changed:
            if change.old_path and change.old_path not in paths:
                paths.append(change.old_path)
            if change.path not in paths:
                paths.append(change.path)
        return paths

    def records_at_base(self) -> dict[str, RecordSnapshot]:
        """Every record under docs/design/ at the base commit, by id (file stem)."""
        if self._base_records is None:
            self._base_records = {}
            for path in self.list_files(self.base, RECORD_DIR):
                if is_record_path(path):
                    snapshot = self._reader.snapshot(self.base, path)
                    if snapshot is not None:
                        self._base_records[PurePosixPath(path).stem] = snapshot
        return self._base_records

    def close(self) -> None:
        """Stop the git helper processes; the change set's data stays usable, reads do not."""
        if self._reader is not None:
            self._reader.repo.close()

    def authors(self) -> list[tuple[Person, str]]:
        """(person, commit sha) for every author and Co-authored-by trailer in base..head."""
        people = []
        for commit in self.commits:
            people.append((commit.author, commit.sha))
            people.extend((p, commit.sha) for p in commit.trailer_people("Co-authored-by"))
        return people


def is_record_path(path: str) -> bool:
    """A design record is a Markdown file below docs/design/ (index, README and `_*` pages are not)."""
    p = PurePosixPath(path)
    return (
        path.startswith(RECORD_DIR + "/")
        and p.suffix == ".md"
        and p.name.lower() not in ("index.md", "readme.md")
        and not p.name.startswith("_")
    )


def decode_text(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(path, line, f"not valid UTF-8 (byte offset {exc.start})") from None


def parse_person(text: str) -> Person:
    match = _PERSON.match(text)
    if match:
        return Person(match.group(1), match.group(2))
    return Person(text.strip(), "")


def parse_trailers(block: str) -> tuple[Trailer, ...]:
    """Parse `git log %(trailers:only,unfold)` output, keeping the keys we act on."""
    wanted = {k.lower(): k for k in TRAILER_KEYS}
    trailers = []
    for line in block.splitlines():
        match = _TRAILER_LINE.match(line.strip())
        if match and match.group(1).lower() in wanted:
            trailers.append(Trailer(wanted[match.group(1).lower()], parse_person(match.group(2))))
    return tuple(trailers)


def _text(raw: bytes) -> str:
    """Decode git output that may hold non-UTF-8 paths or names without failing."""
    return raw.decode("utf-8", errors="backslashreplace")


class _GitReader:
    """Reads objects through one GitPython repository handle (a persistent cat-file)."""

    def __init__(self, repo: git.Repo):
        self.repo = repo
        self._ancestry: dict[tuple[str, str], bool] = {}
        self._resolved: dict[str, str | None] = {}

    def run(self, *args: str) -> bytes:
        command = [git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git", *args]
        return self.repo.git.execute(command, stdout_as_string=False, strip_newline_in_stdout=False)

    def try_run(self, *args: str) -> bytes | None:
        try:
            return self.run(*args)
        except git.GitCommandError:
            return None

    def resolve_commit(self, rev: str) -> str | None:
        if rev not in self._resolved:
            out = self.try_run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
            self._resolved[rev] = _text(out).strip() if out else None
        return self._resolved[rev]

    def is_ancestor(self, sha: str, ref: str) -> bool:
        key = (sha, ref)
        if key not in self._ancestry:
            resolved = self.resolve_commit(sha)
            target = self.resolve_commit(ref)
            ok = False
            if resolved and target:
                try:
                    self.repo.git.merge_base("--is-ancestor", resolved, target)
                    ok = True
                except git.GitCommandError:
                    ok = False
            self._ancestry[key] = ok
        return self._ancestry[key]

    def read_bytes(self, ref: str, path: str) -> bytes | None:
        spec = f"{ref}:{path}"
        if "\n" in spec:
            return self.try_run("show", spec)
        try:
            _, kind, _, data = self.repo.git.get_object_data(spec)
        except ValueError:
            return None
        return data if kind in (b"blob", "blob") else None

    def list_files(self, ref: str, under: str) -> list[str]:
        out = self.try_run("ls-tree", "-r", "-z", "--name-only", ref, "--", under.rstrip("/") + "/")
        if not out:
            return []
        return [_text(p) for p in out.split(b"\0") if p]

    def snapshot(self, ref: str, path: str) -> RecordSnapshot | None:
        data = self.read_bytes(ref, path)
        if data is None:
            return None
        try:
            text = decode_text(data, path)
            return RecordSnapshot(path, parse_record(text, path, Path(self.repo.working_tree_dir)))
        except InputError as exc:
            return RecordSnapshot(path, None, exc)


def _open_repo(repo_root: Path) -> git.Repo:
    try:
        repo = git.Repo(repo_root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitContextError(
            f"{repo_root} is not a git repository; --base needs a clone with history "
            f"({_FETCH_HINT})"
        ) from None
    if repo.bare:
        raise GitContextError(f"{repo_root} is a bare repository; run gate-check in a working tree")
    return repo


def _resolve_or_fail(reader: _GitReader, rev: str, role: str) -> str:
    sha = reader.resolve_commit(rev)
    if sha is None:
        remote, _, branch = rev.partition("/")
        fetch = f"git fetch origin {branch}" if remote == "origin" and branch else f"git fetch origin {rev}"
        raise GitContextError(
            f"{role} ref '{rev}' is not a commit in this clone; fetch it first (`{fetch}`) and {_FETCH_HINT}"
        )
    return sha


def _parse_name_status(raw: bytes) -> list[ChangedPath]:
    fields = raw.split(b"\0")
    changed, i = [], 0
    while i < len(fields) and fields[i]:
        status = _text(fields[i])
        kind = status[0]
        if kind in "RC":
            changed.append(ChangedPath(kind, _text(fields[i + 2]), _text(fields[i + 1])))
            i += 3
        else:
            changed.append(ChangedPath(kind, _text(fields[i + 1])))
            i += 2
    return changed


_LOG_FIELDS = ["%H", "%P", "%an", "%ae", "%cn", "%ce", "%B", "%(trailers:only,unfold)"]


def _parse_log(raw: bytes, raw_paths: bytes) -> list[Commit]:
    paths_by_sha: dict[str, list[str]] = {}
    current = None
    for chunk in raw_paths.split(b"\0"):
        text = _text(chunk).strip("\n")
        if text.startswith("\x1ecommit "):
            current = paths_by_sha.setdefault(text[len("\x1ecommit "):].split("\n")[0], [])
            rest = text.split("\n", 1)
            if len(rest) == 2 and rest[1] and current is not None:
                current.append(rest[1])
        elif text and current is not None:
            current.append(text)
    fields = raw.split(b"\0")
    n = len(_LOG_FIELDS)
    commits = []
    for i in range(0, len(fields) - n + 1, n):
        sha, parents, an, ae, cn, ce, body, trailers = (_text(f) for f in fields[i : i + n])
        sha = sha.strip()
        commits.append(
            Commit(
                sha=sha,
                parents=tuple(parents.split()),
                author=Person(an, ae),
                committer=Person(cn, ce),
                message=body.strip("\n"),
                trailers=parse_trailers(trailers),
                paths=tuple(paths_by_sha.get(sha, ())),
            )
        )
    return commits


def load_change_set(repo_root, base: str, head: str | None = None) -> ChangeSet:
    """Read what base..head changes: paths (renames followed), commits, trailers, records.

    Args:
        repo_root: the working tree's top folder.
        base: the target branch or commit the change would merge into (e.g. `origin/main`).
        head: the change's tip; defaults to the working tree's HEAD (detached or not).

    Raises:
        GitContextError: no repository, a shallow clone, or a ref that is not in this clone.
    """
    repo_root = Path(repo_root)
    repo = _open_repo(repo_root)
    reader = _GitReader(repo)
    shallow = reader.try_run("rev-parse", "--is-shallow-repository")
    if shallow is not None and _text(shallow).strip() == "true":
        raise GitContextError(
            "this clone is shallow, so the base history, stage-closing commits and merge "
            f"base cannot be checked; {_FETCH_HINT}"
        )
    base_sha = _resolve_or_fail(reader, base, "base")
    head_ref = head or "HEAD"
    head_sha = _resolve_or_fail(reader, head_ref, "head")
    merge_base_out = reader.try_run("merge-base", base_sha, head_sha)
    if not merge_base_out:
        raise GitContextError(
            f"'{base}' and '{head_ref}' share no history; check the base ref and {_FETCH_HINT}"
        )
    merge_base = _text(merge_base_out).strip()

    changed = _parse_name_status(
        reader.run("diff", "--name-status", "-z", "-M", "--no-ext-diff", "--no-textconv", merge_base, head_sha)
    )
    log_range = f"{base_sha}..{head_sha}"
    log_raw = reader.run("log", "-z", "--no-color", f"--format={'%x00'.join(_LOG_FIELDS)}", log_range)
    paths_raw = reader.run("log", "-z", "--no-color", "--name-only", "--format=%x1ecommit %H", log_range)
    commits = _parse_log(log_raw, paths_raw)

    records = []
    for entry in changed:
        old = entry.old_path or entry.path
        if not (is_record_path(entry.path) or is_record_path(old)):
            continue
        base_snap = reader.snapshot(merge_base, old) if entry.status != "A" and is_record_path(old) else None
        head_snap = reader.snapshot(head_sha, entry.path) if entry.status != "D" and is_record_path(entry.path) else None
        rel = entry.path if head_snap is not None or entry.status != "D" else old
        records.append(RecordChange(rel, entry.status, base_snap, head_snap))

    return ChangeSet(
        repo_root=repo_root,
        base_ref=base,
        head_ref=head_ref,
        base=base_sha,
        head=head_sha,
        merge_base=merge_base,
        changed=changed,
        commits=commits,
        records=records,
        _reader=reader,
    )
