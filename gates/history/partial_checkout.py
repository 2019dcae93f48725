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


def holds(path: str, kind: str, whole: Sequence[str], tops: Sequence[str], in_tree: Callable[[str], bool],
          is_folder: Callable[[str], bool], names_in: Callable[[str], Sequence[str]] = lambda path: ()) -> bool:
    """Whether the partial checkout shows a reader that opened (`kind` "opened"), stat'ed ("probed") or listed
    ("listed") `path` what the whole tree shows: anything below a whole folder, a top folder's listing, a file
    directly in a top folder, and a path the tree does not hold either (`in_tree(path)` False). A folder made empty
    (`is_folder(path)`), or anything below it, is not what the tree holds: a stat of it counts its folders.
    A top folder's own stat is what the tree's is (its folders are all there); its scan (`os.scandir`, "scanned",
    whose entries stat each thing in it, `names_in(path)`) is only where no folder in it was made empty."""
    if below(path, whole):
        return True
    top_folders = {"", *tops}
    if kind == "scanned":  # each entry's stat: a folder made empty among them counts no folders
        return not in_tree(path) if path not in top_folders else not any(
            is_folder(f"{path}/{name}" if path else name) and not below(f"{path}/{name}" if path else name, whole)
            for name in names_in(path))
    if kind == "listed":
        return path in top_folders or not in_tree(path)
    parent = path.rsplit("/", 1)[0] if "/" in path else ""
    if path in top_folders:
        return True
    if parent in top_folders:
        return not is_folder(path)  # a file is as in the tree; a folder made empty counts no folders in it
    return not in_tree(path)
