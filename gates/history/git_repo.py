"""The repository adapter: what changed between a base ref and a head ref.

This is the only module that imports GitPython. It runs a few `git` plumbing
commands with NUL-separated output and returns plain dataclasses, so the
history checks in `gates.history` never see a GitPython object.

`load_change_set(repo_root, base, head)` raises `GitContextError` (exit 2) when
the history it needs is not there, with a message that says what to fetch.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

import git

from gates.history import reused_checkouts
from gates.history.partial_checkout import below
from gates.history.run_state import file_state
from gates.model.errors import GitContextError, InputError
from gates.model.paths import not_utf8_name
from gates.model.record import parse_record
from gates.history.changeset import (  # noqa: F401 - the adapter's public data types
    ChangedPath,
    ChangeSet,
    Commit,
    Person,
    RecordChange,
    RecordSnapshot,
    SignatureCheck,
    Trailer,
    decode_text,
    is_record_path,
    approved_records,
    parse_approved_records,
    parse_person,
    parse_trailers,
)

_GOOD_SSH_SIGNATURE = re.compile(r'Good "git" signature for (.+?) with \S+ key')

_KEPT_TREES = 8  # root trees whose looked-up paths a reader keeps (a history run alternates between two)
_FETCH_HINT = (
    "fetch the full history (actions/checkout with `fetch-depth: 0`, "
    "or `git fetch --unshallow origin`)"
)


def _text(raw: bytes) -> str:
    """Decode git output that may hold non-UTF-8 paths or names without failing."""
    return raw.decode("utf-8", errors="backslashreplace")


class _GitReader:
    """Reads objects through one GitPython repository handle (a persistent cat-file)."""

    def __init__(self, repo: git.Repo):
        self.repo = repo
        self._ancestry: dict[tuple[str, str], bool] = {}
        self._resolved: dict[str, str | None] = {}
        self._trees: dict[str, list[tuple[str, str, str]]] = {}  # tree sha -> [(mode, name, sha)], as stored
        self._tree_names: dict[str, dict[str, tuple[str, str]]] = {}  # tree sha -> {name: (mode, sha)}
        self._commit_trees: dict[str, str | None] = {}  # commit sha -> its root tree sha
        self._listed: dict[str, list[str]] = {}  # tree sha -> every file below it, relative
        self._snapshots: dict[tuple[str, str], RecordSnapshot] = {}  # (blob sha, path) -> the parsed record
        self._settings: dict[tuple, object] = {}  # blob shas of the configuration files -> Settings
        self._symlinks: dict[str, dict[str, str]] = {}  # root tree id -> every link's path -> its content
        self._links: dict[str, dict[str, str]] = {}  # tree id -> every link below it -> the link's object id
        self._entries: dict[str, dict[str, tuple[str, str] | None]] = {}  # root tree id -> path -> entry_at

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

    def resolve_object_id(self, prefix: str) -> str | None:
        """The commit whose object id starts with `prefix` (4 to 40 hex digits), read as an object id only: a branch
        or tag of that name, which can move, is never it. None when no commit, or more than one, has the prefix."""
        if not re.fullmatch(r"[0-9a-f]{4,40}", prefix or ""):
            return None
        out = self.try_run("rev-parse", f"--disambiguate={prefix}")
        found = {self.resolve_commit(oid) for oid in _text(out).split()} - {None} if out else set()
        return found.pop() if len(found) == 1 else None

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
            blob = self.blob_id(ref, path)
            if blob is not None:
                raise GitContextError(_missing_object(blob, f"{path} at {ref[:12]}")) from None
            return None
        return data if kind in (b"blob", "blob") else None

    def git_data_state(self) -> tuple:
        """What git reads this repository's history from, and what it runs, as file states: every file of the
        objects, refs, info and hooks folders and `packed-refs`, `config`, `shallow` and `HEAD` of the git
        directory (path, size, inode, modification and change times; a write changes the change time, which no
        process can set back). The checkouts the checks write (`design-gates/`) are no part of it."""
        found = []
        for git_dir in dict.fromkeys([Path(self.repo.common_dir), Path(self.repo.git_dir)]):
            found.extend(file_state(str(git_dir / name)) for name in ("packed-refs", "config", "shallow", "HEAD",
                                                                           "commondir"))
            for folder in ("objects", "refs", "info", "hooks"):
                for root, _, files in os.walk(git_dir / folder):
                    found.extend(file_state(os.path.join(root, name)) for name in files)
        return tuple(found)

    def object_data(self, sha: str, what: str) -> bytes:
        """The content of object `sha`; `GitContextError` (exit 2) when the clone lacks it."""
        try:
            return self.repo.git.get_object_data(sha)[3]
        except ValueError:
            raise GitContextError(_missing_object(sha, what)) from None

    def tree_entries(self, tree: str) -> list[tuple[str, str, str]]:
        """(mode, name, sha) of one tree object, read once through the persistent `cat-file`."""
        if tree not in self._trees:
            data = self.object_data(tree, "a tree")
            entries, i = [], 0
            while i < len(data):
                space = data.index(b" ", i)
                nul = data.index(b"\0", space)
                entries.append((data[i:space].decode("ascii"), _text(data[space + 1:nul]), data[nul + 1:nul + 21].hex()))
                i = nul + 21
            self._trees[tree] = entries
        return self._trees[tree]

    def tree_names(self, tree: str) -> dict[str, tuple[str, str]]:
        """name -> (mode, sha) of one tree object; the first entry of a name where a malformed tree repeats it."""
        found = self._tree_names.get(tree)
        if found is None:
            found = {}
            for mode, name, sha in self.tree_entries(tree):
                found.setdefault(name, (mode, sha))
            self._tree_names[tree] = found
        return found

    def root_tree(self, ref: str) -> str | None:
        sha = self.resolve_commit(ref)
        if sha is None:
            return None
        if sha not in self._commit_trees:
            data = self.object_data(sha, "a commit")
            first = data.split(b"\n", 1)[0].split()
            self._commit_trees[sha] = first[1].decode("ascii") if first and first[0] == b"tree" else None
        return self._commit_trees[sha]

    def entry_at(self, ref: str, path: str) -> tuple[str, str] | None:
        """(mode, sha) of `path` in commit `ref`'s tree; None when there is nothing there. Kept by the root tree's
        id, for the last few trees asked about (a history run asks about the same paths of one tree many times)."""
        tree = self.root_tree(ref)
        if tree is None:
            return None
        found = self._entries.get(tree)
        if found is None:
            if len(self._entries) >= _KEPT_TREES:
                del self._entries[next(iter(self._entries))]
            found = self._entries[tree] = {}
        if path not in found:
            found[path] = self._walk(tree, path)
        return found[path]

    def _walk(self, tree: str, path: str) -> tuple[str, str] | None:
        parts = [p for p in path.strip("/").split("/") if p]
        if not parts:
            return "40000", tree
        for index, part in enumerate(parts):
            found = self.tree_names(tree).get(part)
            if found is None:
                return None
            if index == len(parts) - 1:
                return found
            if found[0] != "40000":
                return None
            tree = found[1]
        return None

    def blob_id(self, ref: str, path: str) -> str | None:
        found = self.entry_at(ref, path)
        return found[1] if found is not None and found[0] != "40000" else None

    def tree_id(self, ref: str, folder: str) -> str | None:
        found = self.entry_at(ref, folder)
        return found[1] if found is not None and found[0] == "40000" else None
    def symlinks(self, ref: str) -> dict[str, str]:
        """Every symbolic link in the tree of `ref`: its path -> its content (the target it names). Read from the
        tree objects, each folder's once by its id, so a history run reads only the folders a commit changed."""
        tree = self.root_tree(ref)
        if tree is None:
            return {}
        if tree not in self._symlinks:
            self._symlinks[tree] = {path: _text(self.object_data(sha, f"the link {path} at {ref[:12]}"))
                                    for path, sha in self._links_below(tree).items()}
        return self._symlinks[tree]

    def _links_below(self, tree: str) -> dict[str, str]:
        """Every symbolic link below a tree object: its path relative to the tree -> the link's object id."""
        if tree not in self._links:
            links = {}
            for mode, name, sha in self.tree_entries(tree):
                if mode == "40000":
                    links.update({f"{name}/{path}": link for path, link in self._links_below(sha).items()})
                elif mode == "120000":
                    links[name] = sha
            self._links[tree] = links
        return self._links[tree]

    def list_files(self, ref: str, under: str) -> list[str]:
        """Every file below the folder `under` at `ref`, in `git ls-tree -r` order (trees read once by sha)."""
        found = self.entry_at(ref, under)
        if found is None or found[0] != "40000":
            return []
        prefix = under.strip("/") + "/" if under.strip("/") not in ("", ".") else ""
        return [prefix + path for path in self._files_below(found[1])]

    def _files_below(self, tree: str) -> list[str]:
        if tree not in self._listed:
            files = []
            for mode, name, sha in self.tree_entries(tree):
                if mode == "40000":
                    files += [f"{name}/{path}" for path in self._files_below(sha)]
                else:
                    files.append(name)
            self._listed[tree] = files
        return self._listed[tree]

    def changed_between(self, a: str, b: str) -> list[ChangedPath]:
        """What `git diff --name-status -M a b` reports, from the two trees (read once by sha); `git diff` itself
        pairs renames where one side adds files and the other removes some."""
        changed: list[ChangedPath] = []
        self._diff_trees(self.root_tree(a), self.root_tree(b), "", changed)
        kinds = {c.status for c in changed}
        if "A" in kinds and "D" in kinds:
            return _parse_name_status(self.run("diff", "--name-status", "-z", "-M", "--no-ext-diff", "--no-textconv",
                                               a, b))
        return changed

    def _diff_trees(self, old: str | None, new: str | None, prefix: str, changed: list[ChangedPath]) -> None:
        if old == new:
            return
        before = {name: (mode, sha) for mode, name, sha in self.tree_entries(old)} if old else {}
        after = {name: (mode, sha) for mode, name, sha in self.tree_entries(new)} if new else {}
        for name in sorted(set(before) | set(after), key=lambda n: n + "/" if (after.get(n) or before.get(n))[0]
                           == "40000" else n):
            was, now = before.get(name), after.get(name)
            was_tree, now_tree = was is not None and was[0] == "40000", now is not None and now[0] == "40000"
            if was_tree or now_tree:
                self._diff_trees(was[1] if was_tree else None, now[1] if now_tree else None, f"{prefix}{name}/",
                                 changed)
                if was is not None and not was_tree:
                    changed.append(ChangedPath("D", prefix + name))
                if now is not None and not now_tree:
                    changed.append(ChangedPath("A", prefix + name))
            elif was is None:
                changed.append(ChangedPath("A", prefix + name))
            elif now is None:
                changed.append(ChangedPath("D", prefix + name))
            elif was != now:
                same_kind = _object_kind(was[0]) == _object_kind(now[0])
                changed.append(ChangedPath("M" if same_kind else "T", prefix + name))

    def paths_differing(self, a: str, b: str) -> list[str]:
        """Paths whose content differs between the trees of commits `a` and `b` (no rename pairing)."""
        out = self.run("diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", a, b)
        return [_text(p) for p in out.split(b"\0") if p]

    def merge_base(self, a: str, b: str) -> str | None:
        out = self.try_run("merge-base", a, b)
        return _text(out).strip() or None if out else None

    def newest_commit_touching(self, after: str, head: str, path: str) -> str | None:
        """The newest commit of after..head whose own changes touch `path` (a merge's too)."""
        out = self.try_run("rev-list", "-1", "--full-history", f"{after}..{head}", "--", path)
        return _text(out).strip() or None if out else None

    def approval_commits(self, head: str) -> list[Commit]:
        grep = ("-E", "--grep=^Design-Approved:", "-i", head)
        log_raw = self.run("log", "-z", "--no-color", f"--format={'%x00'.join(_LOG_FIELDS)}", *grep)
        paths_raw = self.run("log", "-z", "--no-color", "--name-only", "--format=%x1ecommit %H", *grep)
        return [c for c in _parse_log(log_raw, paths_raw) if c.approves]

    def verify_commit(self, sha: str, allowed_signers: bytes) -> SignatureCheck:
        """`git verify-commit` with `allowed_signers` as the only trusted ssh keys.

        The allowed-signers content is written to a temporary file inside the
        repository's git directory (never outside the repository) and removed after.
        """
        git_dir = Path(_text(self.run("rev-parse", "--absolute-git-dir")).strip())
        handle, name = tempfile.mkstemp(prefix="design-gates-allowed-signers-", dir=git_dir)
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(allowed_signers)
            command = [git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git", *_PINNED_PROGRAMS,
                       "-c", f"gpg.ssh.allowedSignersFile={name}", "verify-commit", "-v", sha]
            status, _, stderr = self.repo.git.execute(command, with_extended_output=True, with_exceptions=False,
                                                      stdout_as_string=True)
        except git.GitCommandNotFound as exc:
            return SignatureCheck(None, f"git could not run: {exc}")
        finally:
            os.unlink(name)
        match = _GOOD_SSH_SIGNATURE.search(stderr or "")
        if status == 0 and match:
            return SignatureCheck(match.group(1).strip(), "good ssh signature")
        reason = " ".join((stderr or "").split())[-300:] or f"git verify-commit exited {status}"
        return SignatureCheck(None, reason)

    def checked_out(self, ref: str, whole: Sequence[str] | None = None, tops: Sequence[str] = ()):
        return checked_out_tree(self.repo.working_tree_dir, ref, whole, tops)

    def snapshot(self, ref: str, path: str) -> RecordSnapshot | None:
        """The record at `path` in `ref`, parsed once per blob (a history run meets the same record many times)."""
        blob = self.blob_id(ref, path) if "\n" not in path else None
        if blob is not None and (blob, path) in self._snapshots:
            return self._snapshots[(blob, path)]
        data = self.read_bytes(ref, path)
        if data is None:
            return None
        try:
            text = decode_text(data, path)
            snapshot = RecordSnapshot(path, parse_record(text, path, Path(self.repo.working_tree_dir)))
        except InputError as exc:
            snapshot = RecordSnapshot(path, None, exc)
        if blob is not None:
            self._snapshots[(blob, path)] = snapshot
        return snapshot

    def settings(self, ref: str):
        """The configuration committed at `ref` (`gates.model.config`), read once per version of its files."""
        from gates.model.config import CONFIG_FILE, PYPROJECT, settings_from_reader

        key = (self.blob_id(ref, CONFIG_FILE), self.blob_id(ref, PYPROJECT))
        if key not in self._settings:
            self._settings[key] = settings_from_reader(lambda path: self.read_bytes(ref, path))
        return self._settings[key]


_PINNED: list[str] = []  # the git executable, by its full path, once a repository was opened
_PINNED_PROGRAMS: list[str] = []  # git options naming the programs git runs, by their full paths


def _pin_git() -> None:
    """Run every later git command by the full path `git` has now: G5's import readings run a change's code, which
    could put another `git` in a folder of PATH for the commands the checks run after it."""
    if _PINNED:
        return
    found = shutil.which(git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git")
    if found:
        git.refresh(os.path.realpath(found))
    _PINNED.append(git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git")
    keygen = shutil.which("ssh-keygen")  # what checks an ssh signature (`gpg.ssh.program`)
    _PINNED_PROGRAMS.extend(["-c", f"gpg.ssh.program={os.path.realpath(keygen)}"] if keygen else [])


def _open_repo(repo_root: Path) -> git.Repo:
    _pin_git()
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
        if any(c in rev for c in "~^:@{}") or rev.startswith("-"):
            fetch = "git fetch origin"
        elif remote == "origin" and branch:
            fetch = f"git fetch origin {branch}"
        else:
            fetch = f"git fetch origin {rev}"
        raise GitContextError(
            f"{role} ref '{rev}' is not a commit in this clone; fetch it first (`{fetch}`) and {_FETCH_HINT}"
        )
    return sha


def _non_utf8_names(raw: bytes) -> set[str]:
    """The paths (as `_text` shows them) of a `-z` listing whose bytes are not UTF-8."""
    found = set()
    for field in raw.split(b"\0"):
        try:
            field.decode("utf-8")
        except UnicodeDecodeError:
            found.add(_text(field))
    return found


def _snapshot(reader: _GitReader, ref: str, path: str, not_utf8: set[str]) -> RecordSnapshot:
    """The record at `ref`; a file name that is not UTF-8 is its own error (it cannot be read back by name)."""
    if path in not_utf8:
        return RecordSnapshot(path, None, InputError(path, 1, not_utf8_name(path)))
    return reader.snapshot(ref, path)


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
                approves=approved_records(trailers, body),
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

    changed = reader.changed_between(merge_base, head_sha)
    return _change_set(repo_root, reader, base, head_ref, (base_sha, head_sha, merge_base), changed,
                       _commits(reader, f"{base_sha}..{head_sha}"))


def _commits(reader: _GitReader, log_range: str) -> list[Commit]:
    log_raw = reader.run("log", "-z", "--no-color", f"--format={'%x00'.join(_LOG_FIELDS)}", log_range)
    paths_raw = reader.run("log", "-z", "--no-color", "--name-only", "--format=%x1ecommit %H", log_range)
    return _parse_log(log_raw, paths_raw)


def _change_set(repo_root: Path, reader: _GitReader, base_ref: str, head_ref: str, shas: tuple[str, str, str],
                changed: list[ChangedPath], commits: list[Commit], owns_reader: bool = True) -> ChangeSet:
    base_sha, head_sha, merge_base = shas
    record_dirs = _record_dirs(reader, base_sha, head_sha)
    not_utf8 = set()
    if any("\\" in entry.path or "\\" in (entry.old_path or "") for entry in changed):  # `_text` escaped a byte
        not_utf8 = _non_utf8_names(reader.run("diff", "--name-only", "-z", "--no-ext-diff", merge_base, head_sha))
    records = []
    for entry in changed:
        old = entry.old_path or entry.path
        if not (is_record_path(entry.path, record_dirs) or is_record_path(old, record_dirs)):
            continue
        base_snap = (_snapshot(reader, merge_base, old, not_utf8)
                     if entry.status != "A" and is_record_path(old, record_dirs) else None)
        head_snap = (_snapshot(reader, head_sha, entry.path, not_utf8)
                     if entry.status != "D" and is_record_path(entry.path, record_dirs) else None)
        rel = entry.path if head_snap is not None or entry.status != "D" else old
        records.append(RecordChange(rel, entry.status, base_snap, head_snap))

    return ChangeSet(
        repo_root=repo_root,
        base_ref=base_ref,
        head_ref=head_ref,
        base=base_sha,
        head=head_sha,
        merge_base=merge_base,
        changed=changed,
        commits=commits,
        records=records,
        record_dirs=record_dirs,
        _reader=reader,
        _owns_reader=owns_reader,
    )


def _record_dirs(reader, base_sha: str, head_sha: str) -> tuple[str, ...]:
    """The records folders configured at base and at head (`gates.model.config`), base's first."""
    folders: list[str] = []
    for sha in (base_sha, head_sha):
        folders += reader.settings(sha).records
    return tuple(dict.fromkeys(folders))


def _missing_object(sha: str | None, what: str) -> str:
    named = f"git object {sha[:12]}" if sha else "a git object"
    return (f"{named} ({what}) is missing from this clone; {_FETCH_HINT}, or repair the repository "
            "(`git fsck` names what is damaged)")


def _object_kind(mode: str) -> str:
    return {"120000": "link", "160000": "commit"}.get(mode, "blob")


def read_bytes_at(repo_root, rev: str, path: str) -> bytes | None:
    """The bytes of `path` at commit `rev`; None when there is no repository, no such commit or no such file."""
    try:
        repo = git.Repo(Path(repo_root))
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    try:
        reader = _GitReader(repo)
        sha = reader.resolve_commit(rev)
        return reader.read_bytes(sha, path) if sha else None
    finally:
        repo.close()
class FirstParentHistory:
    """A repository's first-parent history, for the history ratchet (`gates.history.ratchet`).

    Raises `GitContextError` for a folder that is not a repository and for a shallow clone.
    """

    def __init__(self, repo_root):
        self._repo = _open_repo(Path(repo_root))
        self._reader = _GitReader(self._repo)
        shallow = self._reader.try_run("rev-parse", "--is-shallow-repository")
        if shallow is not None and _text(shallow).strip() == "true":
            self.close()
            raise GitContextError(f"this clone is shallow, so the history cannot be checked; {_FETCH_HINT}")

    def resolve(self, rev: str) -> str | None:
        return self._reader.resolve_commit(rev)

    def resolve_object_id(self, prefix: str) -> str | None:
        """The commit an object id prefix names, never a branch or tag (`_GitReader.resolve_object_id`)."""
        return self._reader.resolve_object_id(prefix)

    def is_ancestor(self, sha: str, ref: str) -> bool:
        return self._reader.is_ancestor(sha, ref)

    def read_at(self, ref: str, path: str) -> str | None:
        data = self._reader.read_bytes(ref, path)
        return None if data is None else decode_text(data, path)

    def commits(self, head: str, *, after: str | None = None, path: str | None = None) -> list[str]:
        """Shas of the first-parent chain of `head`, oldest first: only those after `after`
        (exclusive) when given, only those that change `path` against their first parent when given."""
        args = ["rev-list", "--first-parent", "--reverse", head]
        if after:
            args.append(f"^{after}")
        if path:
            args += ["--", path]
        return _text(self._reader.run(*args)).split()

    def paths_changed_by(self, sha: str) -> list[str]:
        """The paths commit `sha` changes against its first parent."""
        parent = self._reader.resolve_commit(f"{sha}^1")
        return [] if parent is None else [changed.path for changed in self._reader.changed_between(parent, sha)]

    def change_sets(self, repo_root, shas: list[str]):
        """Each commit of `shas` (first-parent commits, oldest first) as its own change against its first parent,
        as `load_change_set(repo_root, f"{sha}^1", sha)` reads it, through one git reader: the commits' data from
        one `git log`, the changed paths from the trees (each read once by its id), records parsed once per blob."""
        if not shas:
            return
        reader = self._reader
        log_raw = reader.run("log", "-z", "--no-color", "--no-walk=unsorted", f"--format={'%x00'.join(_LOG_FIELDS)}",
                             *shas)
        by_sha = {c.sha: c for c in _parse_log(log_raw, b"")}
        for sha in shas:
            commit = by_sha[sha]
            if not commit.parents:
                raise GitContextError(f"commit {sha[:12]} has no parent to judge it against; {_FETCH_HINT}")
            parent = commit.parents[0]
            reader._resolved.update({sha: sha, parent: parent, f"{sha}^1": parent})
            changed = reader.changed_between(parent, sha)
            if commit.is_merge:
                commits = _commits(reader, f"{parent}..{sha}")
            else:
                commits = [replace(commit, paths=tuple(c.path for c in changed))]
            yield _change_set(Path(repo_root), reader, f"{sha}^1", sha, (parent, sha, parent), changed, commits,
                              owns_reader=False)

    def close(self) -> None:
        self._repo.close()


def worktree_is_clean_at(repo_root, rev: str) -> bool:
    """True when the working tree is `rev`'s tree: HEAD is that commit and nothing is modified or untracked."""
    repo = _open_repo(Path(repo_root))
    try:
        reader = _GitReader(repo)
        if reader.resolve_commit("HEAD") != _resolve_or_fail(reader, rev, "head"):
            return False
        return not reader.run("status", "--porcelain", "-z", "--untracked-files=all")
    finally:
        repo.close()


_SYMLINK_MODE = 0o120000
_EXECUTABLE_MODE = 0o100755


def _write_blob(blob, folder: Path) -> None:
    """One file of a tree under `folder`, as stored: no attributes, filters or line-ending
    conversion apply. A link is recreated only when it stays inside the tree."""
    target = folder / blob.path
    if not target.resolve().is_relative_to(folder.resolve()) or ".." in Path(blob.path).parts:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    data = blob.data_stream.read()
    if blob.mode == _SYMLINK_MODE:
        link = os.fsdecode(data)
        if not os.path.isabs(link) and (target.parent / link).resolve().is_relative_to(folder.resolve()):
            os.symlink(link, target)
        return
    target.write_bytes(data)
    if blob.mode == _EXECUTABLE_MODE:
        target.chmod(0o755)


@contextmanager
def checked_out_tree(repo_root, rev: str, whole: Sequence[str] | None = None, tops: Sequence[str] = ()):
    """The files of commit `rev`, in a fresh folder inside the repository's git directory
    (`<git-dir>/design-gates/`), removed afterwards. Yields the folder's path.

    Every blob of the commit's tree is written as stored. `git archive` is not used: it
    honours the tree's own `.gitattributes`, where `export-ignore` would let a change hide
    files (its records) from the checks and `export-subst` rewrite them.

    A part of the tree only, where `whole` is given: every file below the folders `whole` names,
    and of each folder `tops` names (and of the top folder) the files in it, its other folders
    made empty. What reads such a part must check it found there what the whole tree holds
    (`gates.history.partial_checkout.holds`).

    Inside a `gates.history.reused_checkouts.reused_checkouts()` block, the folder is instead one kept from an
    earlier checkout of the same part, brought to this commit's tree and checked to hold exactly it."""
    checkouts = reused_checkouts.in_effect()
    if checkouts is None:
        with _fresh_checkout(repo_root, rev, whole, tops) as folder:
            yield folder
        return
    repo, reader, git_dir = _kept_repo(checkouts, repo_root)
    sha = _resolve_or_fail(reader, rev, "head")
    listed = ("items", sha, None if whole is None else tuple(whole), tuple(tops))  # a commit's tree never changes
    if listed not in checkouts.repos:
        checkouts.repos[listed] = _checkout_items(repo, sha, whole, tops)
    items = checkouts.repos[listed]
    if not reused_checkouts.reusable(items):
        with _fresh_checkout(repo_root, rev, whole, tops) as folder:
            yield folder
        return
    key = (None if whole is None else tuple(whole), tuple(tops))
    with checkouts.checkout(git_dir / "design-gates", sha, key, items,
                            lambda shas: _blob_contents(repo, shas, sha)) as folder:
        yield folder


@contextmanager
def _fresh_checkout(repo_root, rev: str, whole: Sequence[str] | None, tops: Sequence[str]):
    """`checked_out_tree` written afresh into a new folder, removed afterwards."""
    repo = _open_repo(Path(repo_root))
    reader = _GitReader(repo)
    sha = _resolve_or_fail(reader, rev, "head")
    git_dir = Path(_text(reader.run("rev-parse", "--absolute-git-dir")).strip())
    folder = git_dir / "design-gates" / f"tree-{sha[:12]}-{os.getpid()}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    try:
        try:
            tree = repo.commit(sha).tree
            for item in (tree.traverse() if whole is None else _partial_items(tree, whole, tops)):
                if item.type == "blob":
                    try:
                        _write_blob(item, folder)
                    except ValueError:  # this file's object is not in the clone
                        raise GitContextError(_missing_object(item.hexsha, f"{item.path} at {sha[:12]}")) from None
                elif item.type == "tree":
                    (folder / item.path).mkdir(parents=True, exist_ok=True)
        except ValueError as exc:  # GitPython's word for an object the clone does not have
            raise _missing_file(exc, sha) from None
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        try:
            folder.parent.rmdir()
        except OSError:
            pass
        repo.close()


def _missing_file(exc: ValueError, sha: str) -> GitContextError:
    """GitPython's error for an object the clone does not have, as the error a checkout of `sha` reports."""
    named = re.search(r"\b[0-9a-f]{40}\b", str(exc))
    return GitContextError(_missing_object(named.group(0) if named else None, f"a file of {sha[:12]}"))


def _kept_repo(checkouts, repo_root) -> tuple[git.Repo, _GitReader, Path]:
    """(repository handle, reader, git directory) of `repo_root`, opened once for the checkouts of a run."""
    key = ("repository", str(Path(repo_root).resolve()))
    if key not in checkouts.repos:
        repo = _open_repo(Path(repo_root))
        reader = _GitReader(repo)
        git_dir = Path(_text(reader.run("rev-parse", "--absolute-git-dir")).strip())
        checkouts.repos[key] = (repo, reader, git_dir)
        checkouts.closers.append(repo.close)
    return checkouts.repos[key]


def _checkout_items(repo: git.Repo, sha: str, whole: Sequence[str] | None, tops: Sequence[str]
                    ) -> list[reused_checkouts.Item]:
    """(type, path, mode, object id) of each blob and tree a checkout of commit `sha` writes, in the order
    `_fresh_checkout` writes them."""
    try:
        tree = repo.commit(sha).tree
        return [(item.type, item.path, item.mode, item.hexsha)
                for item in (tree.traverse() if whole is None else _partial_items(tree, whole, tops))
                if item.type in ("blob", "tree")]
    except ValueError as exc:
        raise _missing_file(exc, sha) from None


def _blob_contents(repo: git.Repo, shas: Sequence[str], commit: str) -> dict[str, bytes]:
    """The contents of the objects `shas`, read with one `git cat-file --batch`; `GitContextError` (exit 2) for
    one the clone does not have (a file of `commit`)."""
    command = [git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git", "cat-file", "--batch"]
    done = subprocess.run(command, input="".join(f"{sha}\n" for sha in shas).encode("ascii"),
                          cwd=repo.working_tree_dir, capture_output=True, check=False)
    if done.returncode != 0:
        raise GitContextError(f"git cat-file could not read the files of {commit[:12]}: "
                              f"{_text(done.stderr).strip() or f'exit {done.returncode}'}")
    out, at, found = done.stdout, 0, {}
    for sha in shas:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        if len(header) != 3:
            raise GitContextError(_missing_object(sha, f"a file of {commit[:12]}"))
        size = int(header[2])
        found[sha] = out[end + 1:end + 1 + size]
        at = end + 1 + size + 1
    return found


def _partial_items(tree, whole: Sequence[str], tops: Sequence[str]):
    """The items of a partial checkout (`checked_out_tree`): each blob below the `whole` folders; the blobs and
    (as empty folders) the folders directly in the top folder and in each of `tops`."""
    for path in dict.fromkeys(["", *tops]):
        folder = _subtree(tree, path)
        for item in folder if folder is not None else ():
            if item.type == "blob" or item.type == "tree" and not below(item.path, whole):
                yield item
    for path in dict.fromkeys(whole):
        folder = _subtree(tree, path)
        if folder is not None:
            yield from folder.traverse()


def _subtree(tree, path: str):
    """The folder `path` of `tree` ("" is the tree); None where there is no folder."""
    if not path:
        return tree
    try:
        found = tree / path
    except KeyError:
        return None
    return found if found.type == "tree" else None


def checkout_of(folder) -> tuple[Path, str | None] | None:
    """(top level, HEAD commit) of the git checkout that holds `folder` (`git rev-parse
    --show-toplevel`); the commit is None before the first commit; None outside a checkout."""
    try:
        repo = git.Repo(Path(folder), search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    try:
        if repo.working_tree_dir is None:
            return None
        return Path(repo.working_tree_dir), _GitReader(repo).resolve_commit("HEAD")
    finally:
        repo.close()


def ignored_paths(folder, rel_paths) -> set[str]:
    """The paths among `rel_paths` (relative to the checkout's top level) that git ignores (`.gitignore`,
    `info/exclude`; a tracked file is never ignored); empty outside a checkout."""
    paths = sorted(set(rel_paths))
    if not paths:
        return set()
    try:
        repo = git.Repo(Path(folder), search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return set()
    ignored: set[str] = set()
    try:
        for start in range(0, len(paths), 200):
            try:
                output = repo.git.check_ignore(*paths[start:start + 200])
            except git.GitCommandError as exc:
                if exc.status != 1:  # 1: none of them is ignored
                    raise GitContextError(f"git check-ignore failed in {folder}: {exc.stderr or exc}") from None
                continue
            ignored.update(line for line in output.splitlines() if line)
    finally:
        repo.close()
    return ignored
