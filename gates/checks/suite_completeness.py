"""Whether the evidence a suite gate (G3, G4) reads shows the whole declared suite collected and run.

A run that leaves cases out is not evidence for the suite: deselected with `-k`, `-m` or
`--deselect` (on the command line, or through `addopts` in the pytest configuration, which the
command does not show), narrowed to the node ids of the passing cases, an `--ignore`d file of the
suite, or a session stopped before every test ran (`-x`, `--maxfail`).

An artifact from a current writer says what pytest did (`results.collection`, written by
`gates.evidence.collection_record`): one of the paths pytest collected from holds the whole
suite, no ignore option reaches into it, and every collected test was kept and ran. An artifact
without that record (an older writer, another tool) is read for what it does show: its command,
and `addopts` in the pytest configuration files along the suite's folders; a selection there is
a finding. Skipped tests are no finding here: a skipped measuring test already makes the
evidence plugin's `passed` false, and a CPU run may skip a GPU-only case.
"""

from __future__ import annotations

import configparser
import fnmatch
import posixpath
import shlex
import tomllib
from functools import lru_cache
from pathlib import PurePosixPath

from gates.checks.context import GateContext
from gates.checks.suite_integrity import judging_folders, lies_in, suite_path

SCHEME = "pytest-collection/1"
COUNTS = ("collected", "deselected", "dropped", "collection_errors", "not_run")
# pytest options that leave tests of the collected paths out, by how they are spelled. (`-x` and `--maxfail`
# stop a run only after a failure, and a run that failed is no passing evidence anyway.)
SELECTING_LONG = {"--deselect", "--ignore", "--ignore-glob", "--lf", "--last-failed", "--sw", "--stepwise",
                  "--co", "--collect-only", "--collectonly"}
SELECTING_SHORT = {"k", "m"}
SHORT_WITH_VALUE = set("kmpcoWrn")  # -k EXPR, -p NAME, -rfE, ...: the rest of the token is a value
LONG_WITH_VALUE = {"--deselect", "--ignore", "--ignore-glob", "--maxfail", "--override-ini", "--pythonwarnings",
                   "--rootdir", "--confcutdir", "--basetemp", "--junitxml", "--junit-xml", "--durations", "--tb",
                   "--import-mode", "--capture", "--log-level", "--log-file", "-c", "--config-file",
                   "--design-gates-evidence", "--design-gates-evidence-kind"}
PYTEST_PROGRAMS = ("pytest", "py.test")
# pytest configuration files and the section holding their options (None: the whole file is pytest's).
PYTEST_INI_SECTIONS = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest",
                       "setup.cfg": "tool:pytest"}
PYTEST_TOML_TABLES = {"pytest.toml": ("pytest",), ".pytest.toml": ("pytest",),
                      "pyproject.toml": ("tool", "pytest", "ini_options")}


def completeness_problems(suite: str, data: dict, where: str, ctx: GateContext) -> list[str]:
    """Why the artifact `data` does not show the whole declared `suite` collected and run."""
    results = data.get("results") if isinstance(data.get("results"), dict) else {}
    collection = results.get("collection")
    if collection is None:
        return unrecorded_selection_problems(suite, data.get("command"), where, ctx)
    return recorded_collection_problems(suite, collection, where, ctx)


# --- an artifact that records what pytest collected -----------------------------------------------


def recorded_collection_problems(suite: str, collection, where: str, ctx: GateContext) -> list[str]:
    malformed = _malformed(collection)
    if malformed:
        return [f"{where} has a results.collection that cannot be read ({malformed}); write it with "
                f"gates.evidence.collection_record ({SCHEME})"]
    declared = suite_path(suite)
    problems = []
    if not any(holds_suite(arg, suite) for arg in collection["args"]):
        problems.append(_partial(where, suite, f"pytest collected from {_listing(collection['args'])}, which does "
                                 "not hold the whole suite (node ids select some of its tests)"))
    ignored = [entry for entry in collection["ignore"] if ignore_reaches(entry, declared, ctx)]
    if ignored:
        problems.append(_partial(where, suite, f"the run ignored {_listing(ignored)} (--ignore/--ignore-glob)"))
    if collection["collected"] == 0:
        problems.append(_partial(where, suite, "pytest collected no test"))
    if collection["deselected"]:
        problems.append(_partial(where, suite, f"pytest deselected {collection['deselected']} of "
                                 f"{collection['collected']} collected tests{_selection_options(collection)}"
                                 f"{_examples(collection['deselected_ids'])}"))
    if collection["dropped"]:
        problems.append(_partial(where, suite, f"{collection['dropped']} collected tests left the run without "
                                 "being deselected (a plugin or conftest removed them)"))
    if collection["collection_errors"]:
        problems.append(_partial(where, suite, f"{collection['collection_errors']} files or classes of the run "
                                 "failed to collect"))
    if collection["not_run"]:
        problems.append(_partial(where, suite, f"{collection['not_run']} selected tests never ran (the session "
                                 "stopped early: -x, --maxfail or an interruption)"))
    return problems


def _malformed(collection) -> str | None:
    if not isinstance(collection, dict):
        return f"expected an object, got {type(collection).__name__}"
    if collection.get("scheme") != SCHEME:
        return f"scheme {collection.get('scheme')!r}, expected {SCHEME!r}"
    for key in COUNTS:
        value = collection.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"{key} must be a count, got {value!r}"
    for key in ("args", "ignore", "deselected_ids"):
        value = collection.get(key)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            return f"{key} must be a list of strings, got {value!r}"
    return None


def holds_suite(arg: str, suite: str) -> bool:
    """True when pytest collecting from `arg` collects the whole declared `suite`: `arg` is the suite's
    path or a folder above it, without a node part (or it is the declared suite, node part included)."""
    path, sep, node = arg.partition("::")
    declared_path, declared_sep, declared_node = suite.strip().partition("::")
    path = posixpath.normpath(path) if path else "."
    path = "" if path == "." else path
    if sep:
        return bool(declared_sep) and path == suite_path(suite) and node == declared_node.strip()
    return not path.startswith(("/", "..")) and lies_in(suite_path(suite), path)


def ignore_reaches(entry: str, declared: str, ctx: GateContext) -> bool:
    """True when an --ignore path or --ignore-glob pattern leaves out the suite or a file of it."""
    if any(char in entry for char in "*?["):
        files = [declared] + _files_under(declared, ctx)
        return any(fnmatch.fnmatch(path, entry) or fnmatch.fnmatch((ctx.repo_root / path).as_posix(), entry)
                   for path in files)
    path = posixpath.normpath(entry)
    path = "" if path == "." else path
    return not path.startswith(("/", "..")) and (lies_in(path, declared) or lies_in(declared, path))


def _files_under(declared: str, ctx: GateContext) -> list[str]:
    folder = ctx.repo_root / declared
    if not folder.is_dir():
        return []
    return [path.relative_to(ctx.repo_root).as_posix() for path in sorted(folder.rglob("*.py"))]


def _selection_options(collection: dict) -> str:
    options = [f"{flag} {value!r}" for flag, value in (("-k", collection.get("keyword")),
                                                         ("-m", collection.get("markexpr"))) if value]
    options += [f"--deselect {value}" for value in collection.get("deselect") or [] if isinstance(value, str)]
    return f" ({', '.join(options)})" if options else " (by a plugin or conftest, e.g. a tier option)"


def _examples(nodeids: list[str]) -> str:
    return f", e.g. {', '.join(nodeids[:3])}" if nodeids else ""


# --- an artifact that does not record it -----------------------------------------------------------


def unrecorded_selection_problems(suite: str, command, where: str, ctx: GateContext) -> list[str]:
    """For an artifact without `results.collection`: selections its command or the pytest configuration show."""
    problems = []
    args = pytest_arguments(command)
    selecting = selecting_options(args)
    if selecting:
        problems.append(_partial(where, suite, f"its command selects tests ({', '.join(selecting)})"))
    narrowing = [arg for arg in positional_arguments(args)
                 if "::" in arg and not holds_suite(_repository_relative(arg, ctx), suite)]
    if narrowing:
        problems.append(_partial(where, suite, f"its command names node ids ({', '.join(narrowing)})"))
    for path, addopts in configured_addopts(suite, ctx):
        selecting = selecting_options(_split(addopts))
        if selecting:
            problems.append(_partial(where, suite, f"addopts in {path} selects tests ({', '.join(selecting)}), "
                                     "and the artifact does not record what pytest collected"))
    return problems


def pytest_arguments(command) -> list[str]:
    """The arguments a command line gives pytest: everything after `pytest` / `-m pytest`; for another
    program (a runner module), what follows its `--` separator."""
    tokens = _split(command) if isinstance(command, str) else []
    for index, token in enumerate(tokens):
        name = PurePosixPath(token).name
        if name in PYTEST_PROGRAMS or (token == "pytest" and index > 0 and tokens[index - 1] == "-m"):
            return tokens[index + 1:]
    return tokens[tokens.index("--") + 1:] if "--" in tokens else []


def selecting_options(args: list[str]) -> list[str]:
    """The options among pytest `args` that leave collected tests out (as written)."""
    found = []
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--"):
            if arg.split("=", 1)[0] in SELECTING_LONG:
                found.append(arg)
        elif arg.startswith("-") and len(arg) > 1:
            for flag in arg[1:]:
                if flag in SELECTING_SHORT:
                    found.append(arg)
                    break
                if flag in SHORT_WITH_VALUE:
                    break
    return found


def positional_arguments(args: list[str]) -> list[str]:
    """The paths and node ids among pytest `args`: not options, nor the values of options that take one."""
    positional, value_next = [], False
    for arg in args:
        if value_next:
            value_next = False
        elif arg.startswith("--") and len(arg) > 2:
            value_next = "=" not in arg and arg in LONG_WITH_VALUE
        elif arg.startswith("-") and len(arg) > 1:
            value_next = arg[-1] in SHORT_WITH_VALUE and all(flag not in SHORT_WITH_VALUE for flag in arg[1:-1])
        else:
            positional.append(arg)
    return positional


def named_plugins(command, ctx: GateContext, suite: str = "") -> list[str]:
    """The module names `-p NAME` loads in a command line and in the addopts of the pytest configuration
    along the suite's folders (`no:NAME`, which disables a plugin, loads nothing)."""
    args = pytest_arguments(command)
    for _, addopts in configured_addopts(suite, ctx):
        args += _split(addopts)
    names = []
    for index, arg in enumerate(args):
        value = args[index + 1] if arg == "-p" and index + 1 < len(args) else arg[2:] if arg.startswith("-p") else None
        if value and not value.startswith("no:") and value not in names:
            names.append(value)
    return names


def plugin_files(data: dict, ctx: GateContext, sources: dict, suite: str = "") -> list[str]:
    """The repository files of the pytest plugins the artifact says the run loaded: `results.collection.plugins`
    where it records them, else the modules `-p NAME` names in its command and in the pytest configuration."""
    results = data.get("results") if isinstance(data.get("results"), dict) else {}
    collection = results.get("collection") if isinstance(results.get("collection"), dict) else {}
    recorded = collection.get("plugins")
    if isinstance(recorded, list):
        return [path for path in recorded if isinstance(path, str)]
    found = []
    for module in named_plugins(data.get("command"), ctx, suite):
        parts = module.split(".")
        for candidate in ("/".join(parts) + ".py", "/".join(parts) + "/__init__.py"):
            found += [path for path in sources if path == candidate or path.endswith("/" + candidate)]
    return found


def configured_addopts(suite: str, ctx: GateContext) -> list[tuple[str, str]]:
    """(file, addopts) of the pytest configuration files in the suite's folder and every folder above,
    read once per run (`GateContext.run_memo`)."""
    key = ("configured_addopts", suite)
    if key not in ctx.run_memo:
        ctx.run_memo[key] = tuple(_configured_addopts(suite, ctx))
    return list(ctx.run_memo[key])


def _configured_addopts(suite: str, ctx: GateContext) -> list[tuple[str, str]]:
    found = []
    for folder in judging_folders(suite):
        for name in (*PYTEST_INI_SECTIONS, *PYTEST_TOML_TABLES):
            rel = name if str(folder) == "." else f"{folder}/{name}"
            path = ctx.repo_root / rel
            if not path.is_file():
                continue
            addopts = _addopts(path, name)
            if addopts:
                found.append((rel, addopts))
    return found


def _addopts(path, name: str) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return addopts_in(text, name)


@lru_cache(maxsize=64)
def addopts_in(text: str, name: str) -> str:
    """The `addopts` of pytest configuration `text` read as the file `name`; parsed once per text, since every
    record's suites read the same few files."""
    if name in PYTEST_TOML_TABLES:
        try:
            table = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return ""
        for key in PYTEST_TOML_TABLES[name]:
            table = table.get(key) if isinstance(table, dict) else None
        value = table.get("addopts") if isinstance(table, dict) else None
        return " ".join(map(shlex.quote, value)) if isinstance(value, list) else str(value or "")
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return ""
    return parser.get(PYTEST_INI_SECTIONS[name], "addopts", fallback="")


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _repository_relative(arg: str, ctx: GateContext) -> str:
    root = ctx.repo_root.as_posix().rstrip("/") + "/"
    return arg[len(root):] if arg.startswith(root) else arg


def _listing(items) -> str:
    return ", ".join(items) or "nothing"


def _partial(where: str, suite: str, what: str) -> str:
    return (f"{where} does not show the whole declared suite {suite} ran: {what}; the gate judges the whole "
            "suite, so measure it without a selection")
