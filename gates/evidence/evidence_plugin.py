"""pytest plugin `design_gates_evidence`: a team's ordinary test suite writes G3/G4 evidence.

Installed with design-gates (entry point `pytest11`). It does nothing until an output
path is given, by `DESIGN_GATES_EVIDENCE_OUT=PATH` (gate-check --run-suites sets it) or
`--design-gates-evidence=PATH`. Then, at the end of the session, it writes a numeric
or bitwise evidence artifact there (`gates.evidence.evidence_writer`) from:

    @pytest.mark.design_gates(kind="numeric")
    def test_matmul_matches_fp64(record_metric):
        out, ref = my_matmul(a, b), (a.double() @ b.double())
        record_metric("rel_l2", rel_l2(out, ref), dtype=torch.bfloat16)
        record_metric("min_cosine", cosine(out, ref), dtype=torch.bfloat16)
        torch.testing.assert_close(out.double(), ref, rtol=2e-2, atol=2e-2)

    @pytest.mark.design_gates(kind="bitwise", anchor="A1-split1-equals-single-pass")
    def test_split1_is_bit_identical():
        assert torch.equal(split(x, num_splits=1), single_pass(x))

Fixtures: `record_metric(name, value, *, dtype=None, case=None, worst=None)` keeps the
worst value per metric and dtype (the largest rel_l2 / max_*, the smallest min_*; the metric's
name decides, and a `worst=` against it is refused);
`record_anchor(name, equal, *, cases=1)` a byte-equality anchor; `record_fingerprint(key,
tensor_or_bytes)` the SHA-256 of an output's bytes. A test that is marked or uses one
of them is a measuring test: if one fails, is skipped or xfails, the artifact says
`passed: false` and why. No measuring test or nothing measured: an error artifact. The artifact
also records what pytest collected, deselected and ran (`results.collection`,
`gates.evidence.collection_record`): G3 and G4 accept only a run of the whole declared suite.

Options: `--design-gates-evidence-kind=numeric|bitwise` (or `DESIGN_GATES_EVIDENCE_KIND`)
writes only that kind; without it a session that measured both kinds writes
`<stem>-numeric<suffix>` and `<stem>-bitwise<suffix>`. A session in which another writer
(a suite's own conftest) wrote the output file and nothing used this plugin is left alone.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from gates.evidence.collection_record import collection_of, track_collection
from gates.evidence.evidence_collector import BITWISE, KINDS, NUMERIC, EvidenceCollector
from gates.evidence.import_origins import record_import_origins
from gates.evidence.read_files import record_file_reads

# From the moment pytest loads this plugin (before any conftest or test module), every file
# the import system finds is recorded for the artifact's `sources`, even if it later deletes
# its own `__file__`.
record_import_origins()

EVIDENCE_OUT_ENV = "DESIGN_GATES_EVIDENCE_OUT"
KIND_ENV = "DESIGN_GATES_EVIDENCE_KIND"
MARKER = "design_gates"
FIXTURE_KINDS = {"record_metric": NUMERIC, "record_anchor": BITWISE, "record_fingerprint": BITWISE}
COLLECTOR = pytest.StashKey[EvidenceCollector]()
OUT_BEFORE = pytest.StashKey[object]()
MARKER_PROBLEM = pytest.StashKey[str]()
WRITTEN = pytest.StashKey[list]()


def pytest_addoption(parser):
    group = parser.getgroup("design-gates-evidence", "evidence artifacts from this suite (design-gates G3/G4)")
    group.addoption("--design-gates-evidence", metavar="PATH", default=None,
                    help=f"write a numeric/bitwise evidence artifact to PATH at the end (or set ${EVIDENCE_OUT_ENV})")
    group.addoption("--design-gates-evidence-kind", choices=KINDS, default=None,
                    help=f"write only this kind of artifact (or set ${KIND_ENV})")


def pytest_configure(config):
    record_import_origins()  # again: ahead of the assertion-rewriting finder pytest installs meanwhile
    config.addinivalue_line("markers", f"{MARKER}(kind, anchor=None): a test whose outcome is evidence of kind "
                            "'numeric' or 'bitwise' (anchor: the bitwise anchor it checks)")
    config.stash[COLLECTOR] = EvidenceCollector()
    track_collection(config)
    out = output_path(config)
    config.stash[OUT_BEFORE] = _file_state(out) if out is not None else None


def pytest_sessionstart(session):
    if output_path(session.config) is not None:
        record_file_reads(active=True)  # collection and the tests: the files the run reads are measured too


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session):
    yield
    if output_path(session.config) is not None:
        record_file_reads(active=False)  # before any writer reads the records or its own configuration


def output_path(config) -> Path | None:
    """The artifact path: the option, else the environment, relative to where pytest was started."""
    named = config.getoption("design_gates_evidence", None) or os.environ.get(EVIDENCE_OUT_ENV)
    return Path(config.invocation_params.dir, named) if named else None


def _file_state(path: Path):
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


def marker_spec(item) -> tuple[str, str | None] | None:
    """(kind, anchor) of the item's design_gates marker, None without one; ValueError when it is malformed."""
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return None
    unknown = sorted(set(marker.kwargs) - {"kind", "anchor"})
    if unknown or len(marker.args) > 1:
        raise ValueError(f"@pytest.mark.{MARKER} takes kind= and anchor= only, got "
                         f"{', '.join(unknown) or f'{len(marker.args)} positional arguments'}")
    kind = marker.kwargs.get("kind", marker.args[0] if marker.args else None)
    anchor = marker.kwargs.get("anchor")
    if kind not in KINDS:
        raise ValueError(f"@pytest.mark.{MARKER}: kind must be 'numeric' or 'bitwise', got {kind!r}")
    if anchor is not None and (kind != BITWISE or not isinstance(anchor, str) or not anchor):
        raise ValueError(f"@pytest.mark.{MARKER}: anchor= names a bitwise anchor (a non-empty string, "
                         f"with kind='bitwise'), got kind={kind!r}, anchor={anchor!r}")
    return kind, anchor


def pytest_collection_finish(session):
    collector = session.config.stash[COLLECTOR]
    for item in session.items:
        try:
            spec = marker_spec(item)
        except ValueError as exc:
            item.stash[MARKER_PROBLEM] = str(exc)
            collector.errors.append((None, f"{item.nodeid}: {exc}"))
            continue
        if spec is not None:
            collector.measuring(item.nodeid, *spec)
        for name in getattr(item, "fixturenames", ()):
            if name in FIXTURE_KINDS:
                collector.measuring(item.nodeid, FIXTURE_KINDS[name])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    problem = item.stash.get(MARKER_PROBLEM, None)
    if problem:
        pytest.fail(problem, pytrace=False)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    else:
        outcome = report.outcome
    item.config.stash[COLLECTOR].outcome(item.nodeid, report.when, outcome)


@pytest.fixture
def record_metric(request):
    """`record_metric(name, value, *, dtype=None, case=None, worst=None)`: a numeric metric of this test.

    The artifact keeps the worst value per metric and dtype and counts the cases (this
    test, or each `case` it names). `dtype` is a string ("bf16") or a torch dtype; none
    means "all". Which end is worse comes from the name (min_... or max_..., rel_l2, mse, ...);
    only a metric whose name says neither takes it from `worst="max"|"min"`.
    """
    collector = request.config.stash[COLLECTOR]
    nodeid = request.node.nodeid
    collector.measuring(nodeid, NUMERIC)

    def record(name, value, *, dtype=None, case=None, worst=None):
        collector.record_metric(name, value, dtype=dtype, case=nodeid if case is None else f"{nodeid}[{case}]",
                                worst=worst)

    return record


@pytest.fixture
def record_anchor(request):
    """`record_anchor(name, equal, *, cases=1)`: the outcome of a byte-equality anchor over `cases` comparisons."""
    collector = request.config.stash[COLLECTOR]
    collector.measuring(request.node.nodeid, BITWISE)
    return collector.record_anchor


@pytest.fixture
def record_fingerprint(request):
    """`record_fingerprint(key, data)`: the SHA-256 of `data`'s bytes (bytes, or a tensor's raw bytes)."""
    collector = request.config.stash[COLLECTOR]
    collector.measuring(request.node.nodeid, BITWISE)

    def record(key, data):
        collector.record_fingerprint(key, hashlib.sha256(raw_bytes(data)).hexdigest())

    return record


def raw_bytes(data) -> bytes:
    """The bytes of `data`: bytes as they are, a tensor (any dtype, any device) by its contiguous memory."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    if hasattr(data, "detach") and hasattr(data, "view"):
        import torch

        flat = data.detach().to("cpu").contiguous().reshape(-1)
        return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
    raise TypeError(f"a fingerprint is taken of bytes or a tensor, got {type(data).__name__}")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    config = session.config
    out = output_path(config)
    if out is None or hasattr(config, "workerinput"):
        return
    collector = config.stash[COLLECTOR]
    written_by_other = _file_state(out) != config.stash[OUT_BEFORE]
    if written_by_other and not collector.has_measured():
        return
    errors = [f"another writer in this session also wrote {out}; one artifact, one writer"] if written_by_other else []
    if config.pluginmanager.hasplugin("dsession"):
        errors.append("pytest-xdist ran the tests in worker processes, where this session cannot see them; "
                      "run the evidence session without -n")
    named = config.getoption("design_gates_evidence_kind", None) or os.environ.get(KIND_ENV)
    if named and named not in KINDS:
        errors.append(f"${KIND_ENV} must be 'numeric' or 'bitwise', got {named!r}")
        named = None
    kinds = [named] if named else (collector.kinds_measured() or [NUMERIC])
    from gates.evidence.evidence_writer import (artifact_id_for, binding, build_artifact, covers_to_bind, environment,
                                       host_checkout, write_artifact)

    root, commit = host_checkout(config.rootpath)
    covers, covers_errors = covers_to_bind(root)
    sources, glob_errors = binding(root, covers)
    env = environment()
    written = config.stash.setdefault(WRITTEN, [])
    for kind in kinds:
        path = out if len(kinds) == 1 else out.with_name(f"{out.stem}-{kind}{out.suffix}")
        results = collector.results(kind, exitstatus, env["backend"], errors + covers_errors + glob_errors)
        results["collection"] = collection_of(config, root)
        artifact = build_artifact(kind=kind, artifact_id=artifact_id_for(path), results=results, commit=commit,
                                  sources=sources, env=env, root=root)
        write_artifact(path, artifact)
        verdict = "passed" if results["passed"] else f"NOT passed: {results['errors'][0]}"
        written.append(f"design-gates evidence: {kind} artifact {path} ({verdict})")


def pytest_terminal_summary(terminalreporter):
    for line in terminalreporter.config.stash.get(WRITTEN, []):
        terminalreporter.write_line(line)
