"""What a pytest session collected, selected and ran: the `results.collection` of an evidence artifact.

G3 and G4 judge the declared suite as a whole, so an artifact must show that pytest collected
the whole suite and ran every test it collected: a run that deselects cases (`-k`, `-m`,
`--deselect`, `addopts` in the pytest configuration, a tier option of a conftest) or that names
the node ids of the passing cases is not evidence for the suite. `CollectionRecorder` is a pytest
plugin object that counts, from the first collected item on:

    {"scheme": "pytest-collection/1",
     "args": ["validation/suites/test_numeric.py"],   # what pytest collected from, repository-relative
     "keyword": "", "markexpr": "", "deselect": [], "ignore": [],
     "collected": 240, "deselected": 0, "deselected_ids": [], "dropped": 0,
     "collection_errors": 0, "not_run": 0, "outcomes": {"passed": 240},
     "plugins": ["validation/suites/conftest.py"]}             # plugin files of the repository: judges

`dropped` counts collected items that left the run without a deselection report, `not_run` the
selected items that produced no report (`-x`, `--maxfail`, an interrupted session). The evidence
plugin registers the recorder itself; a suite with its own artifact writer calls
`track_collection(config)` from `pytest_configure` and puts `collection_of(config, root)` into
its artifact's `results`. `gates.checks.suite_completeness` judges the record.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path, PurePosixPath
from types import ModuleType

SCHEME = "pytest-collection/1"
PLUGIN_NAME = "design_gates_collection_record"
LISTED_DESELECTED = 20
SET_UP = "set up"  # an item whose setup passed and whose call has not reported yet


class CollectionRecorder:
    """Counts what one pytest session collected, deselected and ran (pytest hooks)."""

    def __init__(self):
        self.collected = 0
        self.deselected: list[str] = []
        self.collection_errors = 0
        self.selected: list[str] | None = None
        self.outcomes: dict[str, str] = {}

    def pytest_itemcollected(self, item):
        self.collected += 1

    def pytest_deselected(self, items):
        ids = [getattr(item, "nodeid", str(item)) for item in items]
        self.deselected += ids
        if self.selected is not None:  # deselected after collection finished (a plugin that schedules the run)
            left = set(ids)
            self.selected = [nodeid for nodeid in self.selected if nodeid not in left]

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors += 1

    def pytest_collection_finish(self, session):
        self.selected = [item.nodeid for item in session.items]

    def pytest_runtest_logreport(self, report):
        self.outcomes[report.nodeid] = folded_outcome(self.outcomes.get(report.nodeid), report)

    def record(self, config, root) -> dict:
        """The `results.collection` dict; paths repository-relative to `root`."""
        selected = self.selected or []
        outcome_counts: dict[str, int] = {}
        for nodeid in selected:
            outcome = self.outcomes.get(nodeid)
            if outcome not in (None, SET_UP):
                outcome_counts[outcome] = outcome_counts.get(outcome, 0) + 1
        option = config.option
        start = Path(config.invocation_params.dir)
        ignore = [*(getattr(option, "ignore", None) or []), *(getattr(option, "ignore_glob", None) or [])]
        return {
            "scheme": SCHEME,
            "args": [repository_arg(arg, start, Path(root)) for arg in config.args],
            "keyword": getattr(option, "keyword", "") or "",
            "markexpr": getattr(option, "markexpr", "") or "",
            "deselect": [repository_arg(arg, start, Path(root)) for arg in getattr(option, "deselect", None) or []],
            "ignore": [repository_arg(str(path), start, Path(root)) for path in ignore],
            "collected": self.collected,
            "deselected": len(self.deselected),
            "deselected_ids": self.deselected[:LISTED_DESELECTED],
            "dropped": max(0, self.collected - len(self.deselected) - len(selected)),
            "collection_errors": self.collection_errors,
            "not_run": sum(1 for nodeid in selected if self.outcomes.get(nodeid) in (None, SET_UP)),
            "outcomes": dict(sorted(outcome_counts.items())),
            "plugins": plugin_files(config, Path(root)),
        }


UNRESOLVED_PLUGIN = "<a plugin whose file is unknown: {}>"


def plugin_files(config, root: Path) -> list[str]:
    """The repository files of the plugins registered in the session (conftest files, `-p` modules,
    `pytest_plugins` of a conftest, `pytest11` entry points), repository-relative: they are part of the judge.

    A plugin may be an object rather than a module (an entry point naming `module:object`): its file is that of
    the module that defines its class. A plugin whose module names no file (a module that deleted its `__file__`
    and `__spec__`) is listed as `UNRESOLVED_PLUGIN`, which no approved record can cover: it judges the run."""
    found = []
    for name, plugin in config.pluginmanager.list_name_plugin():
        files = [_defining_file(plugin)] + ([] if isinstance(plugin, ModuleType) else _hook_files(plugin))
        for file in files:
            if file == "":
                continue
            if file is None:
                path = UNRESOLVED_PLUGIN.format(name)
            else:
                try:
                    relative = Path(file).resolve().relative_to(root.resolve())
                except (ValueError, OSError):
                    continue
                path = relative.as_posix()
                if _installed(Path(file)) or _ignored_environment(root, path):
                    continue  # an environment inside the checkout (.venv): installed, not the repository's
            if path not in found:
                found.append(path)
    return sorted(found)


def _hook_files(plugin) -> list[str]:
    """The files the hook functions of a plugin object were compiled from: an object's class may claim another
    module (`__module__ = "numpy"`, a `types.SimpleNamespace`), the code of the hooks it carries may not."""
    files = []
    for attribute in dir(plugin):
        if not attribute.startswith("pytest_"):
            continue
        try:
            hook = getattr(plugin, attribute)
        except Exception:  # noqa: BLE001 - a property that raises is no hook pytest could call either
            continue
        code = getattr(getattr(hook, "__func__", hook), "__code__", None)
        if code is not None and code.co_filename not in files:
            files.append(code.co_filename)
    return files


def _ignored_environment(root: Path, path: str) -> bool:
    """True for a file of a package environment that git ignores inside the checkout (a `.venv` other than the
    running one): a folder named site-packages that the repository commits is the repository's."""
    if not {"site-packages", "dist-packages"} & set(PurePosixPath(path).parts):
        return False
    from gates.history.git_repo import ignored_paths

    try:
        return path in ignored_paths(root, [path])
    except Exception:  # noqa: BLE001 - no git to ask: the file counts as the repository's
        return False


def _installed(file: Path) -> bool:
    """True when `file` lies in a folder this interpreter installs packages into (its environment's site-packages,
    the user's): a folder merely named site-packages that the repository commits is the repository's."""
    import site
    import sysconfig

    folders = {sysconfig.get_paths().get(key) for key in ("purelib", "platlib")}
    folders |= set(getattr(site, "getsitepackages", lambda: [])()) | {getattr(site, "getusersitepackages", lambda: None)()}
    try:
        resolved = file.resolve()
    except OSError:
        return False
    return any(folder and resolved.is_relative_to(Path(folder).resolve()) for folder in folders)


def _defining_file(plugin) -> str | None:
    """The file of the module a plugin is, or that defines it (its class's module for an instance); "" for a
    module of no file (built in, frozen); None when the module cannot be told."""
    if isinstance(plugin, ModuleType):
        module = plugin
    else:
        owner = plugin if isinstance(plugin, type) or callable(plugin) and hasattr(plugin, "__code__") else type(plugin)
        module = sys.modules.get(getattr(owner, "__module__", None) or "")
        if module is None:
            return None
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None)
    if isinstance(origin, str) and origin not in ("built-in", "frozen"):
        return origin
    file = getattr(module, "__file__", None)
    if isinstance(file, str):
        return file
    if module.__name__ in sys.builtin_module_names or origin in ("built-in", "frozen"):
        return ""
    return None


def folded_outcome(previous: str | None, report) -> str:
    """An item's outcome after one more of its reports: a failure or skip in any phase sticks, a
    pass counts from the call (until then the item is only "set up"), a teardown error spoils a pass."""
    if previous in ("failed", "error", "skipped", "xfailed", "xpassed"):
        return previous
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed"
    if report.failed:
        return "failed" if report.when == "call" else "error"
    if report.skipped:
        return "skipped"
    return "passed" if report.when == "call" else previous or SET_UP


def repository_arg(arg: str, start: Path, root: Path) -> str:
    """A command-line path or node id, repository-relative POSIX (kept as given outside the repository)."""
    path, sep, rest = str(arg).partition("::")
    absolute = Path(os.path.normpath(start / path))
    try:
        relative = absolute.relative_to(root.resolve())
    except ValueError:
        try:
            relative = absolute.resolve().relative_to(root.resolve())
        except (ValueError, OSError):
            return str(arg)
    text = relative.as_posix()
    return (text if text != "." else "") + sep + rest


def track_collection(config) -> CollectionRecorder:
    """The session's recorder, registered on first call (from `pytest_configure` or earlier)."""
    recorder = config.pluginmanager.get_plugin(PLUGIN_NAME)
    if recorder is None:
        recorder = CollectionRecorder()
        config.pluginmanager.register(recorder, PLUGIN_NAME)
    return recorder


def collection_of(config, root) -> dict:
    """The `results.collection` of the session; RuntimeError when nothing tracked it."""
    recorder = config.pluginmanager.get_plugin(PLUGIN_NAME)
    if recorder is None:
        raise RuntimeError("the session's collection was not tracked: call "
                           "gates.evidence.collection_record.track_collection(config) from pytest_configure")
    return recorder.record(config, root)
