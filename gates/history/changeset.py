"""What a change is, as plain data: paths, commits, people, trailers, records before and after.

`gates.history.git_repo.load_change_set` fills these from git; the history checks in
`gates.history` read them. Nothing here imports GitPython: reads that need the
repository (`read_at`, `is_ancestor`, ...) go through the reader the adapter
hands in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Sequence

from gates.model.config import DEFAULT_RECORDS
from gates.model.config import is_record_path as _is_record_path
from gates.model.config import settings_from_reader
from gates.model.errors import InputError
from gates.model.paths import path_names, resolved_path

TRAILER_KEYS = ("Co-authored-by", "Signed-off-by", "Reviewed-by", "Approved-by")
APPROVAL_TRAILER = "Design-Approved"  # `Design-Approved: <record-id>` on a signed approval commit
_TRAILER_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)\s*:\s*(.*)$")
_PERSON = re.compile(r"^\s*(.*?)\s*<([^<>]*)>\s*$")


@dataclass(frozen=True)
class Person:
    """A name, an email and, where known, a forge login; compared in normal form by `gates.history.identity`."""

    name: str
    email: str
    login: str = ""

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
    approves: tuple[str, ...] = ()  # record ids of its `Design-Approved:` trailers

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1

    def trailer_people(self, key: str) -> list[Person]:
        return [t.person for t in self.trailers if t.key == key]


@dataclass(frozen=True)
class SignatureCheck:
    """The outcome of verifying one commit's signature: the signer's principal, or why not."""

    principal: str | None
    detail: str


@dataclass(frozen=True)
class ChangedPath:
    status: str  # "A", "M", "D", "R", "C", "T"
    path: str  # path at head (the old path for "D")
    old_path: str | None = None  # set for renames and copies


@dataclass
class RecordSnapshot:
    """One design record as it stands at one ref."""

    rel_path: str
    record: object | None  # gates.model.record.Record, or None when it did not parse
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
    """A record (below a records folder of the configuration) that base..head changed, before and after."""

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
    forge_reviews: list | None = None  # the forge's review export (`--reviews`), see gates.history.forge_reviews
    forge_reviews_missing: str = "no --reviews file was given"  # why there is no export, for messages
    record_dirs: tuple[str, ...] = DEFAULT_RECORDS  # the records folders of the configuration at base and at head
    _reader: object = field(repr=False, compare=False, default=None)  # gates.history.git_repo._GitReader
    _base_records: dict | None = field(repr=False, compare=False, default=None)
    _owns_reader: bool = field(repr=False, compare=False, default=True)  # False: shared by a history run
    _path_names: dict = field(repr=False, compare=False, default_factory=dict)
    _resolved: dict = field(repr=False, compare=False, default_factory=dict)  # (ref, path) -> `resolved_at`
    _kept: dict = field(repr=False, compare=False, default_factory=dict)  # `kept`

    def kept(self, key: str, compute):
        """`compute()`, found once for this change: what several gates ask of the same change."""
        if key not in self._kept:
            self._kept[key] = compute()
        return self._kept[key]

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

    @property
    def identifies_blobs(self) -> bool:
        """Whether `blob_id` can name files' contents (a git reader can; a stand-in reader may not)."""
        return hasattr(self._reader, "blob_id")

    def blob_id(self, ref: str, path: str) -> str | None:
        """The git object id of the file `path` at `ref` (None: no file there): equal ids, equal contents."""
        return self._reader.blob_id(ref, path)

    def tree_id(self, ref: str, folder: str) -> str | None:
        """The git object id of the folder `folder` at `ref` (None: no such folder): equal ids, equal files below."""
        read = getattr(self._reader, "tree_id", None)
        return read(ref, folder) if read is not None else None

    def entry_at(self, ref: str, path: str) -> tuple[str, str] | None:
        """(mode, object id) of what `path` is at `ref` (a folder's tree id; "" is the root); None: nothing there."""
        read = getattr(self._reader, "entry_at", None)
        if read is None:
            raise NotImplementedError("this reader cannot name objects")
        return read(ref, path)

    def listing(self, ref: str, folder: str) -> tuple[tuple[str, str], ...] | None:
        """((mode, name), ...) of the entries of the folder `folder` at `ref` ("" is the root); None: no folder."""
        found = self.entry_at(ref, folder)
        if found is None or found[0] != "40000":
            return None
        return tuple((mode, name) for mode, name, _ in self._reader.tree_entries(found[1]))

    def settings_at(self, ref: str):
        """The configuration as committed at `ref` (`gates.model.config.Settings`), read once per version."""
        read_once = getattr(self._reader, "settings", None)
        if read_once is not None:
            return read_once(ref)
        return settings_from_reader(lambda path: self.read_at(ref, path))

    def git_data_state(self) -> tuple:
        """The state of the files git reads the history from (`gates.history.git_repo`): the same before and
        after anything that must not have written them."""
        return self._reader.git_data_state()

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

    def resolve_object_id(self, prefix: str) -> str | None:
        """The commit an object id prefix names, never a branch or tag of that name; None where the reader cannot
        say."""
        read = getattr(self._reader, "resolve_object_id", None)
        return read(prefix) if read is not None else None

    def paths_differing(self, a: str, b: str) -> list[str]:
        """Paths whose content differs between commits `a` and `b`."""
        return self._reader.paths_differing(a, b)

    def merge_base_of(self, a: str, b: str) -> str | None:
        return self._reader.merge_base(a, b)

    def newest_commit_touching(self, after: str, path: str) -> str | None:
        """The newest commit after `after` up to head that changed `path`, merges included."""
        return self._reader.newest_commit_touching(after, self.head, path)

    def checked_out(self, ref: str, whole: Sequence[str] | None = None, tops: Sequence[str] = ()):
        """A context manager yielding a folder that holds the files of commit `ref` (removed afterwards); with
        `whole`, a part of them only (`gates.history.git_repo.checked_out_tree`)."""
        if whole is None:
            return self._reader.checked_out(ref)
        return self._reader.checked_out(ref, whole, tops)

    def approval_commits(self) -> list[Commit]:
        """Every commit reachable from head with a `Design-Approved:` trailer, newest first."""
        return self._reader.approval_commits(self.head)

    def verify_signature(self, sha: str, allowed_signers: bytes) -> "SignatureCheck":
        """`git verify-commit` of `sha` against the given allowed-signers file content."""
        return self._reader.verify_commit(sha, allowed_signers)

    def last_commit_touching(self, path: str) -> str:
        """The newest commit in base..head that touched `path`; the head commit otherwise."""
        for commit in self.commits:
            if path in commit.paths:
                return commit.sha
        return self.head

    def path_names(self, path: str) -> tuple[str, ...]:
        """`path` and every other path that names the same file through a symbolic link of the
        tree where the change starts or of its head (`gates.model.paths.path_names`); `path` first."""
        if path not in self._path_names:
            names = path_names(path, self._reader.symlinks(self.merge_base))
            self._path_names[path] = tuple(dict.fromkeys(names + path_names(path, self._reader.symlinks(self.head))))
        return self._path_names[path]

    def symlinks_at(self, ref: str) -> dict[str, str]:
        """Every symbolic link of the tree of `ref`: its path -> the target it names (empty where the reader has none)."""
        links = getattr(self._reader, "symlinks", None)
        return links(ref) if links is not None else {}

    def resolved_at(self, ref: str, path: str) -> str:
        """Where the file at `path` lives at `ref`, its symbolic links followed (`path` itself when none)."""
        links = self.symlinks_at(ref)
        if not links:
            return path
        key = (ref, path)
        if key not in self._resolved:
            self._resolved[key] = resolved_path(path, links)
        return self._resolved[key]

    def resolved_at_head(self, path: str) -> str:
        """Where the file at `path` lives at head, its symbolic links followed (`path` itself when none)."""
        return resolved_path(path, self._reader.symlinks(self.head))

    def changed_paths(self) -> list[str]:
        """Every path the diff touches, old paths of renames included."""
        paths: list[str] = []
        for change in self.changed:
            if change.old_path and change.old_path not in paths:
                paths.append(change.old_path)
            if change.path not in paths:
                paths.append(change.path)
        return paths

    def record_at(self, ref: str, path: str) -> RecordSnapshot | None:
        """The record at `path` in `ref` (None where there is no file), parsed once per blob."""
        return self._reader.snapshot(ref, path)

    def records_at_base(self) -> dict[str, RecordSnapshot]:
        """Every record at the base commit (below `record_dirs`), by id (file stem)."""
        if self._base_records is None:
            self._base_records = {}
            paths = [path for folder in self.record_dirs for path in self.list_files(self.base, folder)]
            for path in dict.fromkeys(paths):
                if is_record_path(path, self.record_dirs):
                    snapshot = self._reader.snapshot(self.base, path)
                    if snapshot is not None:
                        self._base_records[PurePosixPath(path).stem] = snapshot
        return self._base_records

    def close(self) -> None:
        """Stop the git helper processes; the change set's data stays usable, reads do not."""
        if self._reader is not None and self._owns_reader:
            self._reader.repo.close()

    def authors(self) -> list[tuple[Person, str]]:
        """(person, commit sha) for every author and Co-authored-by trailer in base..head."""
        people = []
        for commit in self.commits:
            people.append((commit.author, commit.sha))
            people.extend((p, commit.sha) for p in commit.trailer_people("Co-authored-by"))
        return people


def is_record_path(path: str, record_dirs=DEFAULT_RECORDS) -> bool:
    """A design record is a Markdown file below a records folder (index, README and `_*` pages are not)."""
    return _is_record_path(path, record_dirs)


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


def approved_records(trailers: str, message: str) -> tuple[str, ...]:
    """The records a commit approves: its `Design-Approved:` trailers, or, for a message made of nothing
    but `Design-Approved: <record-id>` lines (the one-line form, whose subject git does not read as a
    trailer), those lines."""
    found = parse_approved_records(trailers)
    if found:
        return found
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    named = parse_approved_records("\n".join(lines))
    return named if lines and len(named) == len(lines) else ()


def parse_approved_records(block: str) -> tuple[str, ...]:
    """The record ids of the `Design-Approved:` trailers in `git log %(trailers:only,unfold)` output."""
    found = []
    for line in block.splitlines():
        match = _TRAILER_LINE.match(line.strip())
        if match and match.group(1).lower() == APPROVAL_TRAILER.lower() and match.group(2).strip():
            found.append(match.group(2).strip())
    return tuple(found)
