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
import tempfile
import shutil
from contextlib import contextmanager
from pathlib import Path

import git

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
    parse_approved_records,
    parse_person,
    parse_trailers,
)

_GOOD_SSH_SIGNATURE = re.compile(r'Good "git" signature for (.+?) with \S+ key')

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
        self._symlinks: dict[str, dict[str, str]] = {}

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

    def symlinks(self, ref: str) -> dict[str, str]:
        """Every symbolic link in the tree of `ref`: its path -> its content (the target it names)."""
        if ref not in self._symlinks:
            out = self.try_run("ls-tree", "-r", "-z", "--full-tree", ref) or b""
            links = {}
            for entry in out.split(b"\0"):
                meta, _, name = entry.partition(b"\t")
                fields = meta.split()
                if len(fields) == 3 and fields[0] == b"120000":
                    data = self.read_bytes(ref, _text(name))
                    links[_text(name)] = _text(data) if data is not None else ""
            self._symlinks[ref] = links
        return self._symlinks[ref]

    def list_files(self, ref: str, under: str) -> list[str]:
        out = self.try_run("ls-tree", "-r", "-z", "--name-only", ref, "--", under.rstrip("/") + "/")
        if not out:
            return []
        return [_text(p) for p in out.split(b"\0") if p]

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
            command = [git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git", "-c", f"gpg.ssh.allowedSignersFile={name}",
                       "verify-commit", "-v", sha]
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
                approves=parse_approved_records(trailers),
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

    name_status = reader.run("diff", "--name-status", "-z", "-M", "--no-ext-diff", "--no-textconv", merge_base, head_sha)
    changed = _parse_name_status(name_status)
    not_utf8 = _non_utf8_names(name_status)
    log_range = f"{base_sha}..{head_sha}"
    log_raw = reader.run("log", "-z", "--no-color", f"--format={'%x00'.join(_LOG_FIELDS)}", log_range)
    paths_raw = reader.run("log", "-z", "--no-color", "--name-only", "--format=%x1ecommit %H", log_range)
    commits = _parse_log(log_raw, paths_raw)

    record_dirs = _record_dirs(reader, base_sha, head_sha)
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
        base_ref=base,
        head_ref=head_ref,
        base=base_sha,
        head=head_sha,
        merge_base=merge_base,
        changed=changed,
        commits=commits,
        records=records,
        record_dirs=record_dirs,
        _reader=reader,
    )


def _record_dirs(reader, base_sha: str, head_sha: str) -> tuple[str, ...]:
    """The records folders configured at base and at head (`gates.model.config`), base's first."""
    from gates.model.config import settings_from_reader

    folders: list[str] = []
    for sha in (base_sha, head_sha):
        folders += settings_from_reader(lambda path, sha=sha: reader.read_bytes(sha, path)).records
    return tuple(dict.fromkeys(folders))


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
def checked_out_tree(repo_root, rev: str):
    """The files of commit `rev`, in a fresh folder inside the repository's git directory
    (`<git-dir>/design-gates/`), removed afterwards. Yields the folder's path.

    Every blob of the commit's tree is written as stored. `git archive` is not used: it
    honours the tree's own `.gitattributes`, where `export-ignore` would let a change hide
    files (its records) from the checks and `export-subst` rewrite them."""
    repo = _open_repo(Path(repo_root))
    reader = _GitReader(repo)
    sha = _resolve_or_fail(reader, rev, "head")
    git_dir = Path(_text(reader.run("rev-parse", "--absolute-git-dir")).strip())
    folder = git_dir / "design-gates" / f"tree-{sha[:12]}-{os.getpid()}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    try:
        for item in repo.commit(sha).tree.traverse():
            if item.type == "blob":
                _write_blob(item, folder)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        try:
            folder.parent.rmdir()
        except OSError:
            pass
        repo.close()


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
