"""G7 on the results pages a record links (`docs/results/*.md`).

A results page is written by a generator (`python -m validation.bench.report`) from
one evidence artifact. Its first line declares that artifact, and a comment before
each table maps the table's columns to keys of the artifact's `results`:

    <!-- results-page {"artifact": "bench-splitkv-h200", "path": "docs/evidence/bench-splitkv-h200.json",
         "sha256": "<the artifact's SHA-256>"} -->
    ...
    <!-- columns {"row": "shape", "columns": {"ours us": "summary.{row}.ours_us", "best peer": null, ...}} -->
    | shape | ... | ours us | best peer | ...

When a record links such a page (an inline, reference-style or HTML link), or a page it
links links another one under docs/results/, G7 checks that:

- the page's artifact is evidence the record declares, at the same path, and both the
  record's pin and the page's `sha256` verify against the file;
- every cell of a mapped column is the value its key names (placeholders: `{row}` is
  the row's first cell, the column `"row"` names, `{<header>}` the row's cell in that column). A column maps to
  a key path (one number, compared at the quoted precision as in §7), or to
  `{"key": path, "unit": "MB"}` (a number shown in a unit the value is converted to),
  `{"keys": [path, ...]}` (numbers separated by `/`), `{"divide": [path, path]}` (a
  ratio of two values), `{"key": path, "choices": {"true": "yes", "false": "NO"}}` (a
  word chosen by the value), `{"checks": path}` (`name: pass|FAIL` for each entry of a
  map of booleans), or `null` (text: a measured number there is an error unless it is
  inside `code`, where names and thresholds live);
- with `"rows_of": PATH` in the mapping, the table has exactly one row per key of that
  object of the artifact (a failing shape cannot be dropped from the table);
- a table without a mapping holds no measured number (a number with a unit, or a
  decimal);
- an end-to-end claim on the page is backed as one in the record would be
  (`gates.checks.e2e_evidence.claim_problems`, against the record's cited e2e artifacts).

A page of prose notes (earlier runs quoted from their logs, predictions, what was
tried) declares itself with `<!-- results-notes: why -->` on its first line: its numbers
are not traced (they name no committed artifact), its end-to-end claims are checked.
A linked page under `docs/results/` that declares neither is an error: nothing there
passes unchecked by default. Prose paragraphs of a results page are not traced.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote

from gates.checks.claim_detection import judge_text, vocabulary_of
from gates.checks.e2e_evidence import claim_findings, claim_paragraphs
from gates.checks.evidence_refs import declared_evidence
from gates.checks.cited_values import CitedValues, TraceError, walk_path
from gates.checks.number_trace import split_row
from gates.evidence.artifacts import read_regular_file, verify_sha256
from gates.model.errors import InputError
from gates.model.findings import Finding
from gates.model.markdown_body import link_targets
from gates.model.paths import resolve_inside, to_rel
from gates.model.record import prose_lines
from gates.checks.quoted_numbers import (
    NUMBER, NUMBER_START, UNIT_END, UNITS, Quoted, decimals, matches_value, numbers_with_units, parse_quoted,
    strip_code_spans,
)

GATE = "G7"
RESULTS_DIR = "docs/results/"
MAX_PAGE_BYTES = 2 * 1024 * 1024
MAX_PAGES = 200  # results pages followed from one record, links of links included
_PAGE = re.compile(r"^<!--\s*results-page\s+(\{.*\})\s*-->\s*$")
_NOTES = re.compile(r"^<!--\s*results-notes:\s*(.+?)\s*-->\s*$")
_COLUMNS = re.compile(r"^<!--\s*columns\s+(\{.*\})\s*-->\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_DELIMITER = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_ANY_NUMBER = re.compile(rf"{NUMBER_START}({NUMBER})[ \t]?({UNITS})?{UNIT_END}")
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
_MULTI_SELECTOR = re.compile(r"\[([^\]=]+=[^\],]*(?:,[^\]=]+=[^\],]*)+)\]")


@dataclass(frozen=True)
class Page:
    rel_path: str
    lines: list[str]


def linked_pages(record) -> dict[str, int]:
    """Repository paths of the Markdown pages under docs/results/ that the record links, in any link form
    (inline, reference-style, HTML), with the first link's line."""
    pages: dict[str, int] = {}
    for line_no, line in prose_lines(record.body, record.body_start_line):
        for _, target in link_targets(line):
            rel = record.link_target_rel(target)
            if rel and _is_results_page(rel):
                pages.setdefault(rel, line_no)
    return pages


def _is_results_page(rel: str) -> bool:
    return rel.startswith(RESULTS_DIR) and rel.endswith(".md")


def pages_linked_from(page: Page, repo_root) -> list[str]:
    """The results pages a results page links (a reader follows those too)."""
    found = []
    base = (Path(repo_root) / page.rel_path).parent
    for _, line in prose_lines("\n".join(page.lines), 1):
        for _, target in link_targets(line):
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("#", "/")):
                continue
            bare = unquote(target.split("#", 1)[0].split("?", 1)[0])
            resolved = resolve_inside(repo_root, bare, base=base) if bare else None
            rel = to_rel(repo_root, resolved) if resolved is not None else None
            if rel and _is_results_page(rel) and rel not in found:
                found.append(rel)
    return found


def check_linked_pages(record, ctx, candidates, named=None) -> list[Finding]:
    """G7 findings for every results page the record links.

    `candidates` are the record's cited e2e artifacts, `named` the values of its cited
    artifacts (for the references in a claim's paragraph).
    """
    findings: list[Finding] = []
    queue = [(rel_path, record.rel_path, link_line) for rel_path, link_line in sorted(linked_pages(record).items())]
    seen = {rel_path for rel_path, _, _ in queue}
    while queue:
        rel_path, linked_from, link_line = queue.pop(0)
        try:
            raw = _read(ctx.repo_root, rel_path)
        except InputError as exc:
            findings.append(Finding(GATE, linked_from, link_line, 1,
                                    f"links results page {rel_path}, which cannot be read: {exc.message}"))
            continue
        text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n")
        page = Page(rel_path, text.split("\n"))
        findings.extend(check_page(page, record, ctx, candidates, named))
        for linked in pages_linked_from(page, ctx.repo_root):
            if linked not in seen and len(seen) < MAX_PAGES:
                seen.add(linked)
                queue.append((linked, rel_path, 1))
    return findings


def _read(repo_root, rel_path: str) -> bytes:
    resolved = resolve_inside(repo_root, rel_path)
    if resolved is None:
        raise InputError(rel_path, 1, "the page lies outside the repository")
    return read_regular_file(resolved, rel_path, MAX_PAGE_BYTES)


def check_page(page: Page, record, ctx, candidates, named=None) -> list[Finding]:
    findings: list[Finding] = []

    def add(line: int, message: str, col: int = 1) -> None:
        findings.append(Finding(GATE, page.rel_path, line, col, message))

    first = next(((n, line) for n, line in enumerate(page.lines, 1) if line.strip()), (1, ""))
    declared = _PAGE.match(first[1].strip())
    text = "\n".join(page.lines)
    _check_claims(text, record, candidates, named, add, vocabulary_of(ctx.settings))
    if _NOTES.match(first[1].strip()):
        return findings
    if not declared:
        add(first[0], "a results page the record links declares no artifact: the generator writes "
            "`<!-- results-page {\"artifact\": ID, \"path\": PATH, \"sha256\": PIN} -->` on its first line (a page "
            "of notes says `<!-- results-notes: why -->` instead)")
        return findings
    try:
        header = json.loads(declared.group(1))
    except json.JSONDecodeError as exc:
        add(first[0], f"the results-page declaration is not JSON: {exc.msg}")
        return findings
    except RecursionError:
        add(first[0], "the results-page declaration is JSON nested too deeply to read")
        return findings
    values = _artifact_values(header if isinstance(header, dict) else {}, record, ctx, lambda m: add(first[0], m))
    if values is not None:
        _check_tables(page, values, header["artifact"], add)
    return findings


def _artifact_values(header: dict, record, ctx, add) -> CitedValues | None:
    """The values of the artifact the page declares, when the record pins that same file."""
    artifact_id, path, pin = header.get("artifact"), header.get("path"), header.get("sha256")
    if not all(isinstance(v, str) for v in (artifact_id, path, pin)):
        add("the results-page declaration needs \"artifact\", \"path\" and \"sha256\" (strings)")
        return None
    entry = next((e for e in declared_evidence(record) if e.id == artifact_id), None)
    if entry is None or entry.path != path:
        add(f"the page reports artifact {artifact_id!r} at {path}, which the record does not declare as evidence "
            "(id, path and sha256): declare it, or link a page generated from the record's own artifact")
        return None
    try:
        artifact = ctx.evidence.get(path)
    except InputError as exc:
        add(f"the page's artifact {path} cannot be read: {exc.message}")
        return None
    problems = []
    if not verify_sha256(artifact, pin):
        problems.append(f"the page was generated from SHA-256 {pin}")
    if not verify_sha256(artifact, entry.sha256):
        problems.append(f"the record pins {entry.sha256}")
    if artifact.id != artifact_id:
        problems.append(f"the artifact's own id is {artifact.id!r}")
    if problems:
        add(f"the page's artifact {path} has SHA-256 {artifact.file_sha256}; {'; '.join(problems)}: regenerate the "
            "page from the pinned artifact")
        return None
    return CitedValues({artifact_id: artifact.results})


def _check_claims(text: str, record, candidates, named, add, words) -> None:
    """The page's end-to-end claims, judged as the record's would be (`e2e_evidence.claim_findings`)."""
    for line, col, message in claim_findings(judge_text(text, 1, words), claim_paragraphs(text),
                                             record.get("claim_level"), candidates, named):
        add(line, message + f" (the page is linked from {record.rel_path})", col)


def _check_tables(page: Page, values: CitedValues, artifact_id: str, add) -> None:
    """Every row of a mapped table is checked cell by cell; an unmapped table holds no measured number.

    A mapping comment applies to the table that follows it (blank lines between are allowed).
    """
    pending, pending_line, header, table_mapping, fence = None, 0, None, None, None
    seen_rows: dict[int, tuple] = {}
    for line_no, raw in enumerate(page.lines, 1):
        fenced = _FENCE.match(raw)
        if fence or fenced:
            if fence and fenced and fenced.group(1)[0] == fence[0]:
                fence = None
            elif not fence:
                fence = fenced.group(1)
            header = None
            continue
        stripped = raw.strip()
        columns = _COLUMNS.match(stripped)
        if columns:
            pending, pending_line = _parse_mapping(columns.group(1), line_no, add), line_no
            continue
        if not stripped.startswith("|"):
            header = None
            if stripped:
                pending = None
            continue
        cells = split_row(raw)
        if header is None:
            header, table_mapping, pending = cells, pending, None
            if table_mapping is not None:
                _check_headers(table_mapping, header, pending_line, add)
            _check_unmapped(line_no, cells, add, "a table header")
            continue
        if _DELIMITER.match(raw):
            continue
        if table_mapping is not None:
            seen_rows.setdefault(id(table_mapping), (table_mapping, line_no, set()))[2].add(_clean(cells[0].text))
        if table_mapping is None:
            _check_unmapped(line_no, cells, add, "a table without a column mapping (`<!-- columns {...} -->`)")
        else:
            _check_row(line_no, header, cells, table_mapping, values, artifact_id, add)
    for mapping, last_line, rows in seen_rows.values():
        _check_all_rows(mapping, last_line, rows, values, artifact_id, add)


def _check_all_rows(mapping: dict, last_line: int, rows: set, values: CitedValues, artifact_id: str, add) -> None:
    """A mapping with `"rows_of": PATH` lists one row for each key of that object (none dropped, none added)."""
    path = mapping.get("rows_of")
    if path is None:
        return
    try:
        keys = walk_path(values.artifacts[artifact_id], path, f"{artifact_id}:{path}")[0]
    except TraceError as exc:
        add(last_line, f"the table's rows_of: {exc}")
        return
    expected = set(keys) if isinstance(keys, dict) else set()
    missing, extra = sorted(expected - rows), sorted(rows - expected)
    if missing:
        add(last_line, f"the table leaves out rows the artifact has under {path}: {', '.join(missing)}")
    if extra:
        add(last_line, f"the table has rows the artifact does not have under {path}: {', '.join(extra)}")


def _parse_mapping(text: str, line_no: int, add):
    try:
        mapping = json.loads(text)
    except json.JSONDecodeError as exc:
        add(line_no, f"the column mapping is not JSON: {exc.msg}")
        return None
    except RecursionError:
        add(line_no, "the column mapping is JSON nested too deeply to read")
        return None
    if not isinstance(mapping, dict) or not isinstance(mapping.get("columns"), dict):
        add(line_no, "the column mapping needs \"columns\": {header: key path or null}")
        return None
    return mapping


def _clean(text: str) -> str:
    return text.strip().strip("*").strip("`").strip()


def _check_headers(mapping: dict, header, line_no: int, add) -> None:
    names = [_clean(cell.text) for cell in header]
    if mapping.get("row") is not None and names and mapping["row"] != names[0]:
        add(line_no, f"the column mapping keys rows by {mapping['row']!r}, but the table's first column is {names[0]!r}")
    for name in mapping["columns"]:
        if name not in names:
            add(line_no, f"the column mapping names {name!r}, which is no column of the table below it")
    for name in names[1:]:
        if name not in mapping["columns"]:
            add(line_no, f"the column mapping does not say what column {name!r} holds (a key path, or null for text)")


def _measured(text: str) -> list[Quoted]:
    found = numbers_with_units(text)
    taken = {number.col for number in found}
    return found + [number for number in decimals(text) if number.col not in taken]


def _check_unmapped(line_no: int, cells, add, where: str) -> None:
    for cell in cells:
        for number in _measured(strip_code_spans(cell.text)):
            add(line_no, f"{number.shown()} in {where} names no value of the page's artifact: map the column to its "
                "key path", cell.col + number.col - 1)


def _check_row(line_no: int, header, cells, mapping: dict, values: CitedValues, artifact_id: str, add) -> None:
    by_name = {_clean(h.text): index for index, h in enumerate(header)}
    row = {name: _clean(cells[index].text) for name, index in by_name.items() if index < len(cells)}
    row["row"] = _clean(cells[0].text) if cells else ""
    for name, spec in mapping["columns"].items():
        index = by_name.get(name)
        if index is None or index >= len(cells) or index == 0:
            continue
        cell = cells[index]
        try:
            problem = _check_cell(cell.text, spec, row, values, artifact_id)
        except TraceError as exc:
            problem = str(exc)
        if problem:
            add(line_no, f"column {name!r}: {problem}", cell.col)
    for index, cell in enumerate(cells[1:], 1):
        name = _clean(header[index].text) if index < len(header) else None
        if name not in mapping["columns"]:
            _check_unmapped(line_no, [cell], add, f"column {name or index!r}, which the mapping does not name")


def _key(template: str, row: dict, artifact_id: str, values: CitedValues) -> str:
    def fill(match: re.Match) -> str:
        if match.group(1) not in row:
            raise TraceError(f"{template}: no column {match.group(1)!r} to fill {{{match.group(1)}}}")
        return row[match.group(1)]
    path = _PLACEHOLDER.sub(fill, template)
    return f"{artifact_id}:{_select_by_fields(path, values.artifacts[artifact_id], template)}"


def _select_by_fields(path: str, results: dict, template: str) -> str:
    """`rows[shape=a,impl=b].x` -> `rows[7].x`: a list element picked by several fields."""
    match = _MULTI_SELECTOR.search(path)
    if not match:
        return path
    listed = results.get(path[:match.start()]) if isinstance(results, dict) else None
    if not isinstance(listed, list):
        raise TraceError(f"{template}: {path[:match.start()]} is not a list")
    wanted = dict((k.strip(), v.strip()) for k, v in (part.split("=", 1) for part in match.group(1).split(",")))
    chosen = _index(listed, tuple(sorted(wanted))).get(tuple(wanted[k] for k in sorted(wanted)), [])
    if len(chosen) != 1:
        raise TraceError(f"{path}: {len(chosen)} elements match; a selector must pick one")
    return f"{path[:match.start()]}[{chosen[0]}]{path[match.end():]}"


_INDEXES: dict = {}


def _index(listed: list, fields: tuple) -> dict:
    """Positions of the list's elements by their values of `fields` (built once per list and fields)."""
    key = (id(listed), fields)
    cached = _INDEXES.get(key)
    if cached is None or cached[0] is not listed:
        index: dict[tuple, list[int]] = {}
        for position, item in enumerate(listed):
            if isinstance(item, dict):
                index.setdefault(tuple(str(item.get(field)) for field in fields), []).append(position)
        if len(_INDEXES) > 64:
            _INDEXES.clear()
        _INDEXES[key] = cached = (listed, index)
    return cached[1]


def _value(template: str, row, artifact_id, values):
    return values.resolve(_key(template, row, artifact_id, values))


def _raw_value(template: str, row, artifact_id, values):
    """A value of any type (a word, a map of booleans) the template names."""
    reference = _key(template, row, artifact_id, values)
    return walk_path(values.artifacts[artifact_id], reference.split(":", 1)[1], reference)[0]


def _numbers(text: str) -> list[Quoted]:
    stripped = strip_code_spans(text)
    found = []
    for match in _ANY_NUMBER.finditer(stripped):
        quoted = parse_quoted(match.group(1), match.group(2) or "", match.start(1) + 1)
        if quoted:
            found.append(quoted)
    return found


def _check_cell(text: str, spec, row: dict, values: CitedValues, artifact_id: str) -> str | None:
    """Why a cell is not the value its column maps to (None when it is)."""
    if spec is None:
        stray = _measured(strip_code_spans(text))
        return (f"{stray[0].shown()} is a measured number in a text column: map the column to its key path"
                if stray else None)
    if isinstance(spec, str):
        spec = {"key": spec}
    if not isinstance(spec, dict):
        return "the mapping is neither a key path, an object nor null"
    if "choices" in spec:
        value = _raw_value(spec["key"], row, artifact_id, values)
        wanted = spec["choices"].get(json.dumps(value) if value is None or isinstance(value, bool) else str(value))
        if wanted is None or _clean(text) != wanted:
            return f"{_clean(text)!r} is not what {spec['key']} = {value!r} reads as ({wanted!r})"
        return None
    if "checks" in spec:
        checks = _raw_value(spec["checks"], row, artifact_id, values)
        if not isinstance(checks, dict):
            return f"{spec['checks']} is not a map of checks"
        wanted = ", ".join(f"{k}: {'pass' if v else 'FAIL'}" for k, v in checks.items()) or "-"
        return None if text.strip() == wanted else f"{text.strip()!r} is not the artifact's checks ({wanted})"
    text_numbers = [part for part in re.split(r"\s*/\s*", text.strip())] if "keys" in spec else [text]
    templates = spec.get("keys") or [spec.get("key") or spec.get("divide")]
    if len(text_numbers) != len(templates):
        return f"{text.strip()!r} does not hold the {len(templates)} values {' / '.join(templates)}"
    for part, template in zip(text_numbers, templates):
        numbers = _numbers(part)
        if not numbers:
            if _clean(part) in ("-", ""):
                continue
            return f"{part.strip()!r} holds no number"
        if len(numbers) > 1:
            return f"{part.strip()!r} holds {len(numbers)} numbers; a mapped cell holds one per key"
        quoted = numbers[0]
        if spec.get("unit") and not quoted.unit:
            quoted = replace(quoted, unit=spec["unit"])
        if "divide" in spec:
            top, bottom = (_value(t, row, artifact_id, values) for t in spec["divide"])
            if not bottom.value:
                return f"{' / '.join(spec['divide'])} divides by zero"
            value, unit, shown = top.value / bottom.value, "", f"{top.shown()} / {bottom.shown()}"
        else:
            named = _value(template, row, artifact_id, values)
            value, unit, shown = named.value, named.unit, named.shown()
        if not matches_value(quoted, value, unit):
            return f"{quoted.shown()} is not the value it names, {shown}"
    return None
