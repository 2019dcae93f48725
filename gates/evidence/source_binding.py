"""Which files an evidence artifact must be bound to, for its writer and for the gates.

An artifact's `sources` maps repository paths to SHA-256. The writer (the command
that measured) computes them, never from a fixed list:

- every existing regular file the governing record `covers`, and
- every Python module under the repository root that the measuring run imported
  (`sys.modules` after the run, and every file the import system found while the
  evidence plugin was loaded: `gates.evidence.import_origins`), the suite, its conftest
  files and helpers included, and
- every other file under the repository root the run opened for reading while the
  evidence plugin recorded (`gates.evidence.read_files`): a data file the kernel reads
  is measured as much as its source.

The gates check the first half (`uncovered_files`): an artifact with no sources, or
one that lacks a covered file, measured something else. Staleness (a bound file that
no longer hashes the same) is `gates.evidence.artifacts.stale_sources`.

`sources` is the SHA-256 of each file's bytes, and stays so: every artifact ever written is
read that way. A writer may add `source_tokens` (`{"scheme": "python-tokens/2", "sha256":
{path: digest}}`), a second binding of the Python files by their token stream without
comments and blank lines (`python_token_digest`): a comment-only edit changes no token,
so it leaves such evidence fresh, while any edit to code, a docstring or the file's
encoding still makes it stale.

Files below a folder whose name starts with "." (`.git`, `.venv`, ...), `site-packages`
and `__pycache__` are never sources, nor are the modules of design-gates itself (the
`gates` package computing the binding, and the pytest plugin every pytest run loads):
they judge the measurement, they do not take part in it.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import sys
from pathlib import Path, PurePosixPath

from gates.model.paths import resolve_inside
from gates.model.policy import glob_matches
from gates.python_api.token_digest import (
    TOKEN_SCHEME, comments_are_inert, python_token_digest,
)

SKIPPED_FOLDERS = ("site-packages", "dist-packages", "__pycache__", "node_modules")
_WILDCARD = re.compile(r"[*?\[]")
CHECKER_DIR = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the `gates` package


def _skipped(rel_path: str) -> bool:
    parts = rel_path.split("/")
    return any(part.startswith(".") or part in SKIPPED_FOLDERS for part in parts[:-1])


def _glob_root(pattern: str) -> str:
    """The longest folder prefix of `pattern` without a wildcard ('' for the repository root)."""
    head = _WILDCARD.split(pattern, 1)[0]
    return head.rsplit("/", 1)[0] if "/" in head else ""


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def covered_files(covers, repo_root) -> list[str]:
    """Existing regular files (repository-relative POSIX paths) that any glob of `covers` matches."""
    if isinstance(covers, str):
        covers = [covers]
    patterns = [p for p in (covers or []) if isinstance(p, str) and p]
    root = os.path.realpath(os.fspath(repo_root))
    found: set[str] = set()
    for start in sorted({_glob_root(p) for p in patterns}):
        top = os.path.join(root, start) if start else root
        if _is_regular(top):
            candidates = [start]
        else:
            candidates = []
            for folder, dirs, files in os.walk(top):
                rel_folder = os.path.relpath(folder, root).replace(os.sep, "/")
                rel_folder = "" if rel_folder == "." else rel_folder + "/"
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
                candidates.extend(rel_folder + name for name in files)
        for rel in candidates:
            if rel not in found and not _skipped(rel) and any(glob_matches(p, rel) for p in patterns) \
                    and _is_regular(os.path.join(root, rel)):
                found.add(rel)
    return sorted(found)


def _resolver():
    """`os.path.realpath` for many paths: each folder is resolved once (a process has thousands of modules
    in a few hundred folders), the file's own name only where it is a link."""
    folders: dict[str, str] = {}

    def real(path: str) -> str:
        if not os.path.isabs(path) or ".." in path.split(os.sep):  # a parent step after a link is not lexical
            return os.path.realpath(path)
        folder, name = os.path.split(os.path.normpath(path))
        resolved = folders.get(folder)
        if resolved is None:
            resolved = folders[folder] = os.path.realpath(folder)
        joined = os.path.join(resolved, name)
        return os.path.realpath(joined) if os.path.islink(joined) else joined

    return real


def imported_repo_files(repo_root, modules=None) -> list[str]:
    """Repository-relative paths of the Python source files of the loaded modules under `repo_root`
    (with `modules` None: `sys.modules` and every origin the import recorder saw)."""
    from gates.evidence.import_origins import recorded_origins

    root = os.path.realpath(os.fspath(repo_root))
    prefix = root.rstrip(os.sep) + os.sep
    found = set()
    filenames = [getattr(module, "__file__", None) for module in list((sys.modules if modules is None else modules).values())]
    if modules is None:
        filenames.extend(sorted(recorded_origins()))
    realpath = _resolver()
    for filename in filenames:
        if not isinstance(filename, str) or not filename.endswith(".py"):
            continue
        real = realpath(filename)
        if real.startswith(CHECKER_DIR + os.sep):
            continue
        if real.startswith(prefix) and _is_regular(real):
            rel = os.path.relpath(real, root).replace(os.sep, "/")
            if not _skipped(rel):
                found.add(rel)
    return sorted(found)


def read_repo_files(repo_root) -> list[str]:
    """Repository-relative paths of the regular files the run opened for reading (`gates.evidence.read_files`),
    design-gates' own files, compiled bytecode, skipped folders and files git ignores (a build's `*.egg-info`,
    a local cache: files a checkout of the change does not have) left out."""
    from gates.evidence.read_files import recorded_reads
    from gates.history.git_repo import ignored_paths

    root = os.path.realpath(os.fspath(repo_root))
    prefix = root.rstrip(os.sep) + os.sep
    found = set()
    realpath = _resolver()
    for path in sorted(recorded_reads()):
        real = realpath(path)
        if not real.startswith(prefix) or real.startswith(CHECKER_DIR + os.sep) or real.endswith(".pyc"):
            continue
        rel = os.path.relpath(real, root).replace(os.sep, "/")
        if not _skipped(rel) and _is_regular(real):
            found.add(rel)
    return sorted(found - ignored_paths(root, found))


def repo_files_of(paths, repo_root) -> list[str]:
    """Repository-relative paths of the absolute `paths` that lie in the repository (others dropped)."""
    root = os.path.realpath(os.fspath(repo_root))
    prefix = root.rstrip(os.sep) + os.sep
    found = set()
    realpath = _resolver()
    for path in paths:
        real = realpath(os.fspath(path))
        if real.startswith(prefix):
            rel = os.path.relpath(real, root).replace(os.sep, "/")
            if not _skipped(rel):
                found.add(rel)
    return sorted(found)


def bound_sources(repo_root, covers=(), modules=None) -> dict[str, str]:
    """The `sources` an artifact's writer records: covered files, imported repository modules and (with `modules`
    None) the repository files the run read."""
    root = Path(os.path.realpath(os.fspath(repo_root)))
    hashes = {}
    read = set(read_repo_files(root)) if modules is None else set()
    for rel in sorted(set(covered_files(covers, root)) | set(imported_repo_files(root, modules)) | read):
        hashes[rel] = hashlib.sha256((root / rel).read_bytes()).hexdigest()
    return hashes


def comment_blind_digest(data: bytes) -> str | None:
    """The token digest by which a bound Python file stays fresh through an edit of its comments (scheme
    python-tokens/2); None, so that the file is bound by its bytes alone, where it holds a comment some tool reads
    as an instruction (a shebang, a `# type:` signature, a Cython directive, a PEP 723 block:
    `gates.python_api.token_digest.comments_are_inert`), a line of only whitespace and a backslash (which
    Python 3.9 and earlier read otherwise), or does not tokenize."""
    return python_token_digest(data) if comments_are_inert(data) else None


def source_tokens(repo_root, sources: dict) -> dict:
    """The artifact's `source_tokens`: the token digest of each Python file among `sources` (`comment_blind_digest`)."""
    root = Path(os.path.realpath(os.fspath(repo_root)))
    digests = {}
    for rel in sorted(sources):
        if rel.endswith(".py") and _is_regular(os.path.join(root, rel)):
            digest = comment_blind_digest((root / rel).read_bytes())
            if digest is not None:
                digests[rel] = digest
    return {"scheme": TOKEN_SCHEME, "sha256": digests}


IMPORT_SCHEME = "python-import/1"
OUTSIDE = "<outside>"


def source_imports(repo_root, sources: dict) -> dict:
    """The artifact's `source_imports`: the import path of the run (`sys.path` at its end, each entry as a
    repository-relative folder, or `<outside>` for one outside the checkout), the module name each bound Python
    file was imported as, the top-level modules imported from outside the checkout, and what each repository
    folder on the path held. With them, freshness can ask again which file a name imports now (`import_shadows`,
    `outside_shadows`): a new module earlier on the path replaces a measured one without changing its file."""
    root = os.path.realpath(os.fspath(repo_root))
    path: list[str] = []
    for entry in sys.path:
        real = os.path.realpath(entry or os.getcwd())
        rel = os.path.relpath(real, root).replace(os.sep, "/") if real == root or real.startswith(root + os.sep) \
            else OUTSIDE
        if not path or path[-1] != rel or rel != OUTSIDE:
            path.append(rel)
    wanted = {os.path.join(root, rel) for rel in sources if rel.endswith(".py")}
    modules: dict[str, str] = {}
    outside: set[str] = set()
    realpath = _resolver()
    for name, module in sorted(sys.modules.items()):
        filename = getattr(module, "__file__", None)
        if name == "__main__" or not isinstance(filename, str):
            continue
        real = realpath(filename)
        if real in wanted:
            modules.setdefault(os.path.relpath(real, root).replace(os.sep, "/"), name)
        elif "." not in name and not real.startswith(root + os.sep):
            outside.add(name)
    held = {folder: sorted(_top_level_names(Path(root), folder)) for folder in dict.fromkeys(path) if folder != OUTSIDE}
    return {"scheme": IMPORT_SCHEME, "path": path, "modules": dict(sorted(modules.items())), "outside": sorted(outside),
            "held": held}


def _imports_block(artifact_data) -> dict | None:
    """An artifact's `source_imports` under a scheme this checker knows, with its path a list (None otherwise)."""
    block = artifact_data.get("source_imports") if isinstance(artifact_data, dict) else None
    if not isinstance(block, dict) or block.get("scheme") != IMPORT_SCHEME or not isinstance(block.get("path"), list):
        return None
    return block


def outside_shadows(artifact_data: dict, repo_root) -> dict[str, str]:
    """{file: the module it now shadows}: a module, extension or package that a repository folder before the first
    `<outside>` entry of the run's import path holds now but did not hold when the run was measured, named as a
    top-level module the run imported from outside the checkout (`tests/numpy.py` runs in place of numpy)."""
    block = _imports_block(artifact_data)
    if block is None or not isinstance(block.get("outside"), list) or not isinstance(block.get("held"), dict):
        return {}
    root = Path(os.fspath(repo_root))
    imported = {name for name in block["outside"] if isinstance(name, str)}
    shadows = {}
    for folder in block["path"]:
        if not isinstance(folder, str) or folder == OUTSIDE:
            break
        before = block["held"].get(folder)
        if not isinstance(before, list):
            continue
        for name in sorted((_top_level_names(root, folder) - set(before)) & imported):
            found = _regular_at(root, folder, [name])
            if found is not None:
                shadows.setdefault(found, name)
    return shadows


def import_shadows(artifact_data: dict, repo_root) -> dict[str, str]:
    """{bound file: the file now found first for its module}, where a repository folder earlier on the run's import
    path (`source_imports`) now holds a package or module that Python would import in its place: one of the
    top-level name, or, below a namespace package (a folder without `__init__`, which Python merges from every
    folder of the path in order), one of the name below it. Entries after an `<outside>` one are not judged (what
    lies outside the checkout cannot be seen here)."""
    block = _imports_block(artifact_data)
    if block is None or not isinstance(block.get("modules"), dict):
        return {}
    path, modules = block["path"], block["modules"]
    root = Path(os.fspath(repo_root))
    shadows = {}
    for source, name in modules.items():
        entry = _import_entry(source, name) if isinstance(source, str) and isinstance(name, str) else None
        if entry is None or entry not in path or name.rsplit(".", 1)[-1] == "conftest":
            continue  # not imported from a folder of the path (a package's own __path__), or a conftest pytest
            # loads by its path: nothing to ask again
        for folder in path:
            if not isinstance(folder, str) or folder == OUTSIDE or folder == entry:
                break
            found = _found_before(root, folder, entry, name.split("."))
            if found is not None and found not in modules:
                shadows[source] = found
                break
    return shadows


def shadowing_files(repo_root: Path, rel_path: str) -> list[str]:
    """The files Python would import in place of module file `rel_path` (`x/m.py`): a package of the same name
    (`x/m/__init__.*`, which the import system prefers to a module) or an extension module beside it
    (`x/m.*.so`, `x/m.pyd`, tried before the source). A new one changes what the measured code is without
    changing a bound file."""
    pure = PurePosixPath(rel_path)
    if pure.suffix != ".py" or pure.name == "__init__.py":
        return []
    folder = resolve_inside(repo_root, str(pure.parent)) if str(pure.parent) != "." else Path(repo_root)
    if folder is None or not folder.is_dir():
        return []
    found = [_init_file(folder / pure.stem)] + _module_files(folder, pure.stem, EXTENSION_SUFFIXES)
    return [(pure.parent / file.relative_to(folder)).as_posix() for file in found if file is not None]


def _import_entry(source: str, name: str) -> str | None:
    """The import path folder `source` was imported from as `name` (`tools/metrics.py`, `tools.metrics` -> `.`)."""
    parts = source.split("/")
    names = name.split(".")
    below = names + ["__init__.py"] if parts[-1] == "__init__.py" else names[:-1] + [names[-1] + ".py"]
    if len(parts) < len(below) or parts[len(parts) - len(below):] != below:
        return None
    return "/".join(parts[:len(parts) - len(below)]) or "."


def _found_before(root: Path, folder: str, entry: str, parts: list[str]) -> str | None:
    """What `folder`, earlier on the path than the measured `entry`, gives for module `parts` in its place: a regular
    package or module at some level, reached through levels that are namespace folders both there and in `entry`."""
    for depth in range(1, len(parts) + 1):
        found = _regular_at(root, folder, parts[:depth])
        if found is not None:
            return found
        if not (_namespace_at(root, entry, parts[:depth]) and _namespace_at(root, folder, parts[:depth])):
            return None
    return None


EXTENSION_SUFFIXES = (".so", ".pyd")  # any platform's: `m.cpython-312-x86_64-linux-gnu.so`, `m.pyd`
MODULE_SUFFIXES = (".py", ".pyc") + EXTENSION_SUFFIXES


def _init_file(directory: Path) -> Path | None:
    """The `__init__` file that makes `directory` a regular package (None: no package, or a namespace portion)."""
    if not directory.is_dir():
        return None
    return next((entry for entry in sorted(directory.iterdir())
                 if entry.name.split(".")[0] == "__init__" and entry.is_file()), None)


def _module_files(folder: Path, name: str, suffixes) -> list[Path]:
    """The files of `folder` that are module `name` with one of `suffixes` (`name.py`, `name.pyc`, and an
    extension's `name.<tag>.so`)."""
    if not folder.is_dir():
        return []
    return [entry for entry in sorted(folder.iterdir())
            if entry.is_file() and entry.suffix in suffixes and entry.name.startswith(name + ".")
            and (entry.suffix in EXTENSION_SUFFIXES or entry.name == name + entry.suffix)]


def _folder_of(root: Path, folder: str, parts: list[str]) -> Path:
    return (root / folder if folder != "." else root).joinpath(*parts)


def _namespace_at(root: Path, folder: str, parts: list[str]) -> bool:
    """Whether `folder/<parts>` is a folder without an `__init__` (a portion of a namespace package)."""
    where = _folder_of(root, folder, parts)
    return where.is_dir() and _init_file(where) is None


def _regular_at(root: Path, folder: str, parts: list[str]) -> str | None:
    """The file that makes `parts` importable from `folder` of the checkout as a regular package (its `__init__`),
    a module or an extension, as the import system tries them; None where there is none."""
    package = _folder_of(root, folder, parts)
    found = _init_file(package) or next(iter(_module_files(package.parent, parts[-1], MODULE_SUFFIXES)), None)
    return None if found is None else found.relative_to(root).as_posix()


def _top_level_names(root: Path, folder: str) -> set[str]:
    """The names a folder of the checkout offers as top-level modules: its modules, extensions and packages."""
    where = root / folder if folder != "." else root
    if not where.is_dir():
        return set()
    names = set()
    for entry in where.iterdir():
        if entry.is_file() and entry.suffix in MODULE_SUFFIXES and entry.name.split(".")[0].isidentifier():
            names.add(entry.name.split(".")[0])
        elif entry.is_dir() and entry.name.isidentifier() and _init_file(entry) is not None:
            names.add(entry.name)
    return names


def recorded_token_digests(artifact_data: dict) -> dict[str, str]:
    """The token digests an artifact records under a scheme this checker knows ({} otherwise)."""
    block = artifact_data.get("source_tokens") if isinstance(artifact_data, dict) else None
    if not isinstance(block, dict) or block.get("scheme") != TOKEN_SCHEME or not isinstance(block.get("sha256"), dict):
        return {}
    return {path: digest for path, digest in block["sha256"].items() if isinstance(digest, str)}


def uncovered_files(sources: dict, covers, repo_root) -> list[str]:
    """Existing files the record covers that the artifact's `sources` does not bind."""
    return [rel for rel in covered_files(covers, repo_root) if rel not in sources]
