"""Whether a partial checkout shows a reader what the whole tree shows.

A partial checkout (`gates.history.git_repo.checked_out_tree` with `whole` and `tops`) writes every file below the
`whole` folders and, of the top folder and each of `tops`, the files in it and its other folders as empty ones. An
import of a package from such a checkout reads what an import from the whole tree reads as long as every path it
looked at is one the part holds as the tree does; `holds` says which those are.
"""

from __future__ import annotations

from typing import Callable, Sequence


def below(path: str, folders: Sequence[str]) -> bool:
    """`path` is one of `folders` or lies below one."""
    return any(path == folder or path.startswith(folder + "/") for folder in folders)


def holds(path: str, kind: str, whole: Sequence[str], tops: Sequence[str], in_tree: Callable[[str], bool]) -> bool:
    """Whether the partial checkout shows a reader that opened (`kind` "opened"), stat'ed ("probed") or listed
    ("listed") `path` what the whole tree shows: anything below a whole folder, a top folder's listing, an entry
    directly in a top folder, and a path the tree does not hold either (`in_tree(path)` False). A folder made empty,
    or anything below it, is not what the tree holds."""
    if below(path, whole):
        return True
    top_folders = {"", *tops}
    if kind == "listed":
        return path in top_folders or not in_tree(path)
    parent = path.rsplit("/", 1)[0] if "/" in path else ""
    return path in top_folders or parent in top_folders or not in_tree(path)
