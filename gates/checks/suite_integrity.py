"""Whether the results a suite gate (G3, G4) reads can judge the change: the right suite ran, and
the change did not write its own judge.

**The declared suite is what ran.** The record's `suite` decides where the rule below looks,
so the artifact the gate reads must show that this suite ran, from the best record of the run
it has:

1. the measuring tests it lists (`results.tests`, pytest node ids; an id relative to a rootdir
   below the repository is matched to the bound file it names): each lies in the declared
   suite, and the declared suite holds one of them;
2. else the test paths its `command` names (Python files and folders of the repository): one
   of them is the declared suite or a folder holding it;
3. else (a runner module that names no path, `python -m validation.run_suite numeric`) the
   test modules it binds by pytest's default naming (`test_*.py`, `*_test.py`): the declared
   suite is one of them, or holds one.

Anything else is a finding naming the declared suite and what the artifact shows ran.

A record that follows the single-pr process is not on the base while its change is open, so for it an edit to a judging file
is also accepted when a verified approval given in this change counts for the record (a forge review of
the pull request or a signed approval commit in it, independent and not stale): the reviewer saw the
tests with the kernel (`reviewed_in_change`).

**With `--base`, a change that edits a file judging it is a finding**, unless an approved
record at the base commit covers the file. A file judges the change when

- it is the suite (or lies in a suite folder), or configures pytest by where it is:
  `conftest.py`, `pytest.toml`, `.pytest.toml`, `pytest.ini`, `.pytest.ini`, `tox.ini`, or the
  pytest section of a `pyproject.toml` or `setup.cfg`, in the folder of the declared suite or
  of a test file the artifact shows ran, or in any folder above (up to the repository root);
- or it ran inside the measurement as part of the judge: the artifact binds it in `sources`, the
  record does not cover it, and it is a test file that ran, a file under the folders of the suite
  and of those test files (a fixture, a helper, the tests' package `__init__.py`), a conftest, or a
  plugin the run loaded (`results.collection.plugins`, else `-p NAME` in the command or the pytest
  configuration). With `--run-suites`, gate-check's own import list says the same
  (`suite_evidence.imported_edit_problems`).

A library module the run merely imported (outside the test folders, not a plugin) is a dependency,
not a judge: an edit to it makes the evidence stale (re-run the suite), and nothing more.

A changed file is matched under every name a symbolic link gives it (`ChangeSet.path_names`):
the file a binding or a suite names may be edited where its bytes live. An edit of a Python file's
comments and blank lines only (`gates.history.comment_edits`) changes no judge.
"""

from __future__ import annotations

import configparser
import json
import posixpath
import re
import shlex
from dataclasses import dataclass
from pathlib import PurePosixPath

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from gates.checks.context import GateContext
from gates.checks.evidence_refs import record_covered_files
from gates.history.comment_edits import comment_only_paths
from gates.history.context import SeriesContext
from gates.model.policy import any_glob_matches
from gates.model.record import Record

# Files that configure a pytest run from the folder of the suite or a folder above: where they
# add options (`addopts = -p plugin`), plugins or fixtures, they decide what the run does.
# `__init__.py` too: in a test folder (or one above it) it runs before the test modules pytest imports through it.
PYTEST_CONFIG_FILES = ("conftest.py", "pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "tox.ini",
                       "__init__.py")
# Files that configure pytest only in one of their sections: an edit counts when that section changed.
PYTEST_SECTIONS = {"pyproject.toml": "[tool.pytest", "setup.cfg": "[tool:pytest]"}
# The modules pytest collects from a folder by default (`python_files`).
DEFAULT_TEST_MODULE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test)\.py$")


# How an artifact shows which test files ran, from the most to the least exact.
LISTED_TESTS, COMMAND_PATHS, BOUND_TEST_MODULES = "listed tests", "command paths", "bound test modules"


@dataclass(frozen=True)
class RanTests:
    """The test files an artifact shows ran, how it shows them (`shown_by`, in words) and from what (`source`)."""

    files: tuple[str, ...]
    shown_by: str
    source: str


# --- what ran -----------------------------------------------------------------------------------


def suite_path(suite: str) -> str:
    """The repository path of a declared suite, without a `::test` part ("" for the root)."""
    path = posixpath.normpath(suite.split("::", 1)[0].strip())
    return "" if path == "." else path


def lies_in(path: str, suite: str) -> bool:
    """True when `path` is the suite file or folder `suite`, or lies below it."""
    return suite == "" or path == suite or path.startswith(suite.rstrip("/") + "/")


def ran_test_files(data: dict, ctx: GateContext, command_paths: list[str] | None = None) -> RanTests:
    """The test files the artifact `data` shows ran. `command_paths`, when given, are the paths
    of a command gate-check itself ran (its artifact's `command` is not read then)."""
    sources = data.get("sources") if isinstance(data.get("sources"), dict) else {}
    listed = listed_test_files(data, ctx, sources)
    if listed:
        return RanTests(listed, "the measuring tests it lists", LISTED_TESTS)
    if command_paths is None:
        command = data.get("command")
        command_paths = command_test_paths(command, ctx, sources)
        shown_by = f"its command ({command})"
    else:
        shown_by = "the command gate-check ran"
    if command_paths:
        return RanTests(tuple(command_paths), shown_by, COMMAND_PATHS)
    modules = tuple(path for path in sorted(sources) if DEFAULT_TEST_MODULE.search(path))
    return RanTests(modules, "the test modules it binds (its command names no test path)", BOUND_TEST_MODULES)


def listed_test_files(data: dict, ctx: GateContext, sources: dict) -> tuple[str, ...]:
    """The repository files of the measuring tests in `results.tests` (node ids), in order."""
    tests = (data.get("results") or {}).get("tests") if isinstance(data.get("results"), dict) else None
    nodeids = list(tests) if isinstance(tests, (dict, list)) else []
    files = [repository_file_of_node(str(nodeid), ctx, sources) for nodeid in nodeids]
    return tuple(dict.fromkeys(files))


def repository_file_of_node(nodeid: str, ctx: GateContext, sources: dict) -> str:
    """The repository path of a node id's file. Node ids are relative to pytest's rootdir: an id
    that names no repository file is matched to the one bound file it ends with (else kept as it is)."""
    part = posixpath.normpath(nodeid.split("::", 1)[0])
    if part in sources or (ctx.repo_root / part).is_file():
        return part
    matches = [path for path in sources if path.endswith("/" + part) or part.endswith("/" + path)]
    return matches[0] if len(matches) == 1 else part


def command_test_paths(command, ctx: GateContext, sources: dict) -> list[str]:
    """The repository Python files and folders a command line names (`path::test` counts as its path)."""
    if not isinstance(command, str):
        return []
    try:
        tokens = shlex.split(command)
    except ValueError:
        tokens = command.split()
    paths = []
    for token in tokens:
        path = _repository_path(token.split("::", 1)[0], ctx)
        if path is None or path in paths:
            continue
        if (path.endswith(".py") and (path in sources or (ctx.repo_root / path).is_file())) \
                or path == "" or (ctx.repo_root / path).is_dir():
            paths.append(path)
    return paths


def _repository_path(token: str, ctx: GateContext) -> str | None:
    """`token` as a normalised repository-relative path; None for an option or a path outside the repository."""
    if not token or token.startswith("-"):
        return None
    root = ctx.repo_root.as_posix().rstrip("/") + "/"
    if token.startswith("/"):
        if not token.startswith(root):
            return None
        token = token[len(root):]
    path = posixpath.normpath(token)
    return None if path.startswith("..") else ("" if path == "." else path)


def suite_mismatch_problems(suite: str, ran: RanTests, where: str) -> list[str]:
    """Why `ran` does not show that the declared `suite` ran (messages name both)."""
    declared = suite_path(suite)
    if ran.source == LISTED_TESTS:
        return _listed_mismatch(suite, declared, ran, where)
    if ran.source == BOUND_TEST_MODULES:
        shows = any(lies_in(path, declared) for path in ran.files)
        return [] if shows else [_not_shown(where, suite, f"{ran.shown_by} are {_listing(ran.files)}")]
    shows = any(lies_in(declared, path) for path in ran.files)
    return [] if shows else [_not_shown(where, suite, f"{ran.shown_by} ran {_listing(ran.files)}")]


def _listed_mismatch(suite: str, declared: str, ran: RanTests, where: str) -> list[str]:
    """Measuring tests none of which, or not all of which, lie in the declared suite."""
    outside = [path for path in ran.files if not lies_in(path, declared)]
    if len(outside) == len(ran.files):
        return [_not_shown(where, suite, f"{ran.shown_by} ran {_listing(ran.files)}")]
    if outside:
        return [f"{where} lists measuring tests outside the declared suite {suite}: {', '.join(outside)}; its "
                "results are not the suite's alone: run the declared suite only, or declare the suite that ran"]
    return []


def _listing(files) -> str:
    return ", ".join(files) or "no test file"


def _not_shown(where: str, suite: str, actual: str) -> str:
    return (f"{where} does not show that the declared suite {suite} ran: {actual}; the gate judges the declared "
            "suite, so declare the suite that ran, or measure the declared one")


# --- what judges the change ---------------------------------------------------------------------


def judging_folders(suite: str, ran_files=()) -> list[PurePosixPath]:
    """The folders whose pytest configuration applies to the suite or to a test file that ran, and every folder above."""
    folders: list[PurePosixPath] = []
    for path in [suite_path(suite), *ran_files]:
        pure = PurePosixPath(path or ".")
        start = pure.parent if pure.suffix == ".py" else pure
        for folder in [start, *start.parents]:
            if folder not in folders:
                folders.append(folder)
    return folders


def suite_files(suite: str, ran_files=()) -> list[str]:
    """The suite path (without a `::test` part) and the configuration files along its folders
    (and those of the test files that ran): conftest.py, pytest.toml, .pytest.toml, pytest.ini,
    .pytest.ini and tox.ini in each folder and every folder above."""
    files = [suite_path(suite)]
    for folder in judging_folders(suite, ran_files):
        files += [_in_folder(folder, name) for name in PYTEST_CONFIG_FILES]
    return list(dict.fromkeys(files))


def _in_folder(folder: PurePosixPath, name: str) -> str:
    return name if str(folder) == "." else str(folder / name)


def _edits_pytest_section(change, path: str, folders) -> bool:
    """True when `path` is a pyproject.toml/setup.cfg in one of `folders` whose pytest section the change edits."""
    pure = PurePosixPath(path)
    if pure.name not in PYTEST_SECTIONS or pure.parent not in folders:
        return False
    base, head = change.read_at(change.base, path), change.read_at(change.head, path)
    return _pytest_settings(base, pure.name) != _pytest_settings(head, pure.name)


def _pytest_settings(text: str | None, name: str):
    """What pytest reads of a `pyproject.toml` (its `tool.pytest` table, however the TOML spells it: a spaced
    header, dotted keys, an inline table) or a `setup.cfg` (its `tool:pytest` section), parsed as pytest parses it;
    the text itself where it does not parse (so that any edit of an unreadable file counts). No file reads as a file
    without that table."""
    if text is None:
        text = ""
    if name == "pyproject.toml":
        try:
            return json.dumps(tomllib.loads(text).get("tool", {}).get("pytest"), sort_keys=True, default=str)
        except (tomllib.TOMLDecodeError, AttributeError, TypeError):
            return text
    return _ini_section(text, "tool:pytest")


def edits_plugin_registration(change, path: str) -> bool:
    """True when `path` registers pytest plugins (a `pytest11` entry point) and the change edits what it registers:
    an `entry_points.txt` of a `.dist-info`/`.egg-info` folder, the entry points of a `pyproject.toml`, `setup.cfg`
    or `setup.py`. Such a plugin loads into every suite's run, so it judges every suite, wherever it lies."""
    pure = PurePosixPath(path)
    if pure.name.lower() != "entry_points.txt" and pure.name not in ("pyproject.toml", "setup.cfg", "setup.py"):
        return False  # read no other file: a change may hold files that are not text (a plot, a wheel)
    base, head = change.read_at(change.base, path), change.read_at(change.head, path)
    if pure.name.lower() == "entry_points.txt":  # any folder: importlib.metadata matches .dist-info in any case
        return _ini_section(base, "pytest11") != _ini_section(head, "pytest11")
    if pure.name == "pyproject.toml":
        return _toml_plugin_tables(base) != _toml_plugin_tables(head)
    if pure.name == "setup.cfg":
        return _ini_section(base, "options.entry_points") != _ini_section(head, "options.entry_points")
    if pure.name == "setup.py":
        return base != head and any("pytest11" in (text or "") for text in (base, head))
    return False


def _ini_section(text: str | None, name: str):
    """The `[name]` section of an INI text (`setup.cfg`, `entry_points.txt`; section names in any case), parsed as
    configparser reads it; None where there is none, the text itself where it does not parse."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # entry point names keep their case
    try:
        parser.read_string(text or "")
    except configparser.Error:
        return text
    sections = [dict(parser[section]) for section in parser.sections() if section.strip().lower() == name]
    return json.dumps(sections or None, sort_keys=True)


def _toml_plugin_tables(text: str | None):
    """The `pytest11` entry points a pyproject.toml declares (PEP 621 `project.entry-points`, Poetry's
    `tool.poetry.plugins`), parsed however the TOML spells them; the text itself where it does not parse. No file
    reads as a file that declares none."""
    try:
        data = tomllib.loads(text or "")
    except tomllib.TOMLDecodeError:
        return text
    project, poetry = data.get("project"), data.get("tool", {}).get("poetry")
    found = [project.get("entry-points", {}).get("pytest11") if isinstance(project, dict) else None,
             poetry.get("plugins", {}).get("pytest11") if isinstance(poetry, dict) else None]
    return json.dumps(found, sort_keys=True, default=str)


def edited_suite_files(ctx: GateContext, suite, ran_files=(), record: Record | None = None) -> list[str]:
    """With `--base`: the judging suite, or a file configuring pytest along it (or along a test file that
    ran), that the change edits and no approved record at base covers (nor, for a single-pr record, a
    verified approval given in this change: `reviewed_in_change`)."""
    change = ctx.change
    if change is None or not isinstance(suite, str):
        return []
    judging = suite_files(suite, ran_files)
    root = judging[0]
    folders = judging_folders(suite, ran_files)
    comments_only = comment_only_paths(change)
    edited = [path for path in change.changed_paths()
              if path not in comments_only
              and (any(name in judging or (not root.endswith(".py") and lies_in(name, root))
                       for name in change.path_names(path))
                   or _edits_pytest_section(change, path, folders) or edits_plugin_registration(change, path))]
    if edited and record is not None and reviewed_in_change(record, ctx):
        return []
    return [path for path in edited if not approved_at_base(change, path)]


def suite_edit_problems(ctx: GateContext, suite, ran_files=()) -> list[str]:
    """The findings for `edited_suite_files`."""
    return [suite_edit_message(path, suite) for path in edited_suite_files(ctx, suite, ran_files)]


def suite_edit_message(path: str, suite: str) -> str:
    """The finding for `path`, a file configuring or being the suite, edited by the change."""
    return (f"{path} is edited by this change and judges it (suite {suite}); the results of a suite the "
            "change rewrites cannot be trusted without review: cover it with an approved record at base, "
            "land the suite change first, or, for a single-pr record, have an independent reviewer approve this "
            "change in it (a forge review or a signed approval commit the policy counts)")


def test_folders(suite: str, ran_files=()) -> list[str]:
    """The folders holding the suite and the test files that ran (the repository root is none of them: a test
    file at the top level makes only itself and the configuration files judges)."""
    folders = []
    for path in [suite_path(suite), *ran_files]:
        pure = PurePosixPath(path or ".")
        folder = str(pure.parent if pure.suffix == ".py" else pure)
        if folder not in (".", "") and folder not in folders:
            folders.append(folder)
    return folders


def judges_the_run(path: str, suite: str, ran_files=(), plugin_files=()) -> bool:
    """True when `path`, a file the measurement ran, judges it rather than being a dependency of the code
    under test: a test file that ran, a file under the test folders (a fixture, a helper, a package
    `__init__.py` of the tests), or a plugin the run loaded (`-p`, `pytest_plugins`, a conftest). A library
    module the run merely imported is a dependency: when it changes, the evidence is stale, nothing more."""
    if path in ran_files or path in plugin_files or PurePosixPath(path).name == "conftest.py":
        return True
    return any(lies_in(path, folder) for folder in test_folders(suite, ran_files))


def bound_edit_problems(record: Record, ctx: GateContext, suite, sources: dict, where: str,
                        reported=(), ran_files=(), plugins=()) -> list[str]:
    """With `--base`: files the artifact binds that the change edits, the record does not cover, and that judge
    the measurement (`judges_the_run`: test files, files under the test folders, plugins), unless an approved
    record at base covers them. `reported` are paths already reported as editing the suite. A library module
    the run merely imported is left to the freshness check (the evidence is stale when it changes)."""
    change = ctx.change
    if change is None or not isinstance(sources, dict):
        return []
    covered = set(record_covered_files(record, ctx))
    edited = sorted(path for path in set(change.changed_paths()) - set(reported) - comment_only_paths(change)
                    if (names := set(change.path_names(path))) & set(sources) and not names & covered)
    if edited and reviewed_in_change(record, ctx):
        return []
    return [f"{path} is edited by this change and judges it: {where} binds it, so it ran inside the measurement "
            f"of suite {suite}, and the record does not cover it; code that runs inside the judge cannot be "
            "trusted without review: cover it with an approved record at base, or land it first"
            for path in edited if judges_the_run(path, suite, ran_files, plugins) and not approved_at_base(change, path)]


def new_plugin_problems(record: Record, ctx: GateContext, suite, plugins, base_plugins, where: str,
                        ran_files=(), reported=()) -> list[str]:
    """With `--base`: pytest plugins from the repository (a conftest, a `-p` module, a `pytest11` entry point) that
    the measurement loaded and the same artifact at base did not list, that no approved record at base covers. A
    plugin judges every test it runs (it can replace an assertion or a result), so one that a change made part of
    the measurement needs review even where the change did not edit it: an earlier change could add the file and
    register it while nothing measured with it, and so while nothing judged it. A `conftest.py` along the suite or
    a test that ran is left to the rule for pytest configuration (`edited_suite_files`), which judges it by where it
    lies, added or edited, and so does not wait for a measurement to load it; one elsewhere (loaded by name, as
    `-p tools.conftest` or `pytest_plugins`) is a plugin like any other. A plugin whose file the run could not tell
    (`collection_record.UNRESOLVED_PLUGIN`) is never covered."""
    change = ctx.change
    if change is None or not isinstance(suite, str):
        return []
    configuration = set(suite_files(suite, ran_files))
    new = [path for path in plugins if path not in base_plugins and path not in reported and path not in configuration]
    if not new or reviewed_in_change(record, ctx):
        return []
    return [f"{path} is a pytest plugin from this repository that {where} loaded and the artifact at base did not: "
            f"it judges the measurement of suite {suite} (a plugin can replace what a test asserts or records), "
            "so it needs review: cover it with an approved record at base"
            for path in new if path.startswith("<") or not approved_at_base(change, path)]


def reviewed_in_change(record: Record, ctx: GateContext) -> bool:
    """True when `record` follows the single-pr process and a verified approval given in this change counts
    for it (a forge review of the pull request, or a signed approval commit in it, by an independent
    reviewer, with nothing changed after it) and the change brings the record: the reviewer saw the tests the
    change edits, so they may judge it. A single-pr record is not on the base while its change is open, so no
    approval at base can cover its tests. Once it has merged, it is: a later change that edits the tests judging
    it needs what any other change needs (an approved record at base covering them), or a record of its own."""
    change = ctx.change
    if change is None:
        return False
    cache = ctx.__dict__.setdefault("_reviewed_in_change", {})
    if record.rel_path not in cache:
        cache[record.rel_path] = _verified_in_change(record, change)
    return cache[record.rel_path]


def _verified_in_change(record: Record, change) -> bool:
    series = SeriesContext(change)
    record_change = next((rc for rc in change.records if rc.rel_path == record.rel_path), None)
    if record_change is None or record_change.head_front_matter is None:
        return False
    if record_change.base_front_matter is not None or record_id_at_base(change, record_change.head_front_matter):
        return False  # the record merged before this change: its approval was for that change's tests
    head = record_change.head_front_matter
    profile = series.profile_of(head)
    if profile is None or profile.name != "single-pr" or not series.approvals.verified_mode:
        return False
    record_id = head.get("id") if isinstance(head.get("id"), str) else record.rel_path
    verdicts = series.approvals.judge(record_id, record.rel_path, head, record_change.base_front_matter, head,
                                      of_this_change=True)
    return any(v.counts and v.approval.source in ("forge", "signed-commit") for v in verdicts)


def record_id_at_base(change, front_matter: dict) -> bool:
    """True when a record with this front matter's `id` is on the base (under this path or another)."""
    record_id = front_matter.get("id")
    return isinstance(record_id, str) and any(
        snapshot.front_matter and snapshot.front_matter.get("id") == record_id
        for snapshot in change.records_at_base().values())


def approved_at_base(change, path: str) -> bool:
    """True when an approved record at the base commit covers `path`."""
    approved_covers = [snapshot.front_matter.get("covers") for snapshot in change.records_at_base().values()
                       if snapshot.front_matter and snapshot.front_matter.get("record_status") == "approved"]
    return any(any_glob_matches(covers, name) for covers in approved_covers for name in change.path_names(path))
