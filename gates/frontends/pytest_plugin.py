"""pytest plugin: each design record is a file of nine items, one per gate.

    pytest docs/design                 # records under <rootdir>/docs/design
    pytest --gates                     # every configured records folder, without naming it
    pytest --gates path/to/record.md   # any record file
    pytest docs/design -k G7 --junitxml=gates.xml

A failing gate fails its item with the findings (`path:line:col: G7 error: ...`);
a gate that errors fails too (fail closed); a gate that does not apply is
skipped with the reason. Options: `--gates-stage B`, `--gates-run-suites`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gates.model.errors import InputError
from gates.model.findings import Status
from gates.model.record import load_record

NOT_RECORDS = {"index.md", "readme.md"}


def pytest_addoption(parser):
    group = parser.getgroup("design-gates", "design records (gates G0-G8)")
    group.addoption("--gates", action="store_true", default=False,
                    help="collect design records: the configured records folders (docs/design by default), "
                    "or the record files and folders given")
    group.addoption("--gates-stage", choices=["A", "B", "C", "D"], default=None,
                    help="check stage rules as if each record had reached at least this stage")
    group.addoption("--gates-run-suites", action="store_true", default=False,
                    help="G3/G4: run the declared validation suites instead of reading their evidence")


def pytest_configure(config):
    config.addinivalue_line("markers", "design_gate(gate): an item that checks one gate of one design record")
    source = getattr(config, "args_source", None)
    if config.getoption("gates", False) and source is not None and source.name != "ARGS":
        folders = [str(folder) for folder in _record_folders(config) if folder.is_dir()]
        if folders:
            config.args[:] = folders


def _repo_root(config) -> Path:
    from gates.frontends.cli import find_repo_root

    return find_repo_root(Path(config.rootpath))


_FOLDERS = pytest.StashKey()


def _record_folders(config) -> list[Path]:
    """The configured records folders (`gates.model.config`), resolved under the repository root."""
    folders = config.stash.get(_FOLDERS, None)
    if folders is None:
        from gates.model.config import load_settings

        root = _repo_root(config)
        try:
            settings = load_settings(root)
        except InputError as exc:
            raise pytest.UsageError(f"{exc.path}:{exc.line}:{exc.col}: error: {exc.message}") from None
        folders = [(root / folder).resolve() for folder in settings.records]
        config.stash[_FOLDERS] = folders
    return folders


def pytest_collect_file(file_path: Path, parent):
    if file_path.suffix != ".md" or file_path.name.lower() in NOT_RECORDS or file_path.name.startswith("_"):
        return None
    config = parent.config
    parents = file_path.resolve().parents
    inside_records = any(folder in parents for folder in _record_folders(config))
    if inside_records or config.getoption("gates", False):
        return RecordFile.from_parent(parent, path=file_path)
    return None


class _Session:
    """One gate context per pytest session, built from the records collected so far."""

    KEY = pytest.StashKey()

    @classmethod
    def context(cls, config, record):
        from gates.checks.runner import make_context

        ctx = config.stash.get(cls.KEY, None)
        if ctx is None:
            ctx = make_context([record], _repo_root(config), run_suites=config.getoption("gates_run_suites"),
                               stage=config.getoption("gates_stage"))
            config.stash[cls.KEY] = ctx
        if record.id and record.id not in ctx.records_by_id:
            ctx.records_by_id[record.id] = record
        return ctx


class RecordFile(pytest.File):
    def collect(self):
        try:
            self.record = load_record(self.path, _repo_root(self.config))
        except InputError as exc:
            yield UnreadableRecord.from_parent(self, name="load", error=exc)
            return
        from gates.checks.registry import GATES  # here, not at plugin load: every pytest run loads the plugin

        self.result = None
        for gate in GATES:
            item = GateItem.from_parent(self, name=gate, gate=gate)
            item.add_marker(pytest.mark.design_gate(gate))
            yield item

    def check(self):
        if self.result is None:
            from gates.checks.runner import check_record

            self.result = check_record(self.record, _Session.context(self.config, self.record))
        return self.result


def _title(gate: str) -> str:
    from gates.checks.registry import TITLES

    return TITLES[gate]


class GateFailure(Exception):
    def __init__(self, status: Status, text: str):
        super().__init__(text)
        self.status = status
        self.text = text


class GateItem(pytest.Item):
    def __init__(self, *, gate: str, **kwargs):
        super().__init__(**kwargs)
        self.gate = gate

    def runtest(self):
        outcome = self.parent.check().gates[self.gate]
        if outcome.status is Status.NOT_APPLICABLE:
            pytest.skip(f"{self.gate} does not apply to this record")
        if outcome.status is not Status.PASS:
            text = "\n".join(f.format_text() for f in outcome.findings) or f"{self.gate} {outcome.status.value}"
            raise GateFailure(outcome.status, text)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, GateFailure):
            verdict = "errored" if excinfo.value.status is Status.ERROR else "failed"
            return f"{self.gate} {_title(self.gate)} {verdict}:\n{excinfo.value.text}"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, None, f"{self.gate} {_title(self.gate)}"


class UnreadableRecord(pytest.Item):
    def __init__(self, *, error: InputError, **kwargs):
        super().__init__(**kwargs)
        self.error = error

    def runtest(self):
        raise self.error

    def repr_failure(self, excinfo, style=None):
        return f"unreadable record: {self.error.path}:{self.error.line}:{self.error.col}: {self.error.message}"

    def reportinfo(self):
        return self.path, None, "record"
