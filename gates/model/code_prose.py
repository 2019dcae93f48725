"""What a reader reads in a code block: pasted results, not commands or configuration.

A pull request often shows its benchmark as the tool printed it, in a code block. Those
lines say what prose would say, so the claims engine reads them (`gates.model.markdown_prose`
turns each piece into a block of prose). Per code block:

- **Commands** (`$ …`, `python …`, `vllm bench serve --request-rate 8 …`: a line with a
  command word first or a `--flag`) are not read, but a comment at their end is
  (`… # main: 4100 tok/s, this PR: 5700 tok/s`).
- **Configuration** (`ttft_p99_ms: 500`, `max_num_seqs = 256`: one lower-case key and its value)
  is a piece of kind "config line", which the claims engine reads only under prose that names
  an arm ("Before:", "With this PR:"), or when the block names two arms (main and this PR, before and after, baseline
  and patched …: then `main:` above `  mean_ttft_ms: 412.3` is a result) or the line compares
  (`->`, `(was 412)`, `# main: 61`). A log line of several pairs (`step: 20  loss: 6.91  tps:
  7,412  mfu: 38.1%`) is read.
- **Columns**: lines that split into the same number of cells (by `|`, commas, a tab or two
  spaces or more) are read as a table, the first line as its header when it holds no number
  (`metric  main  this PR` above `Mean TTFT (ms)  412.3  288.1`); comma-separated rows without
  a header are read each on its own, cells set apart.
- A block that starts by naming the base arm and names no change (`baseline bs = 1` above pasted output)
  is of kind "base output": what it prints is the base's, not a result of the change, unless
  the prose before it names the change.
- Every other line is read as it stands, with `_` read as a space (`mean_ttft_ms` reads
  "mean ttft ms").

Each piece is a list of (text, source offset) parts, so a finding points at the line and
column the author wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"\s*(?:`{3,}|~{3,})")
_COMMAND = re.compile(r"\s*(?:\$|>>>|%|python\d?(?:\s|$)|pip\d?\s|torchrun\s|deepspeed\s|accelerate\s|bash\s|sh\s|export\s"
                      r"|cd\s|git\s|docker\s|srun\s|CUDA_VISIBLE_DEVICES=|[A-Z_]{3,}=\S)")
_FLAG = re.compile(r"(?:^|\s)--[A-Za-z][\w\-]*")
_COMMENT = re.compile(r"(?:^|\s)(?:#|//)\s*(?=\S)")
_CONFIG_KEY = re.compile(r"\s*(?:-\s+)?[\"']?[a-z][a-z0-9_.\-]*[\"']?\s*[:=]")
# A configuration-like line that compares: "mean_ttft_ms: 412.3 -> 288.1", "ttft_p50_ms=288 (was 412)", "… = 42  # main: 61"
_COMPARES = re.compile(r"->|→|=>|\bvs\.?(?=\s)|\bversus\b|\(\s*was\b|\bwas\s+[\d.]|#\s*(?:main|baseline|before|master)\b", re.I)
_SEPARATOR_ROW = re.compile(r"[\s|:\-+=─━┼├┤┌┐└┘┬┴╋╭╮╰╯═╪╞╡]+$")
_CELL_SPLIT = re.compile(r"\s*[|│┃]\s*|\t+|\s{2,}")
# A block that starts by naming the base arm ("baseline bs = 1", "main:") and names no change prints the base's output
_BASE_LABEL = re.compile(r"\s*(?:#+\s*)?(?:main|master|baseline|before)\b", re.I)
_CSV_SPLIT = re.compile(r"\s*,\s*")
_RULED = re.compile(r"[|│┃].*[|│┃]")
# A value with a unit a result is given in: "speed=289.26 token/s"
_RESULT_UNIT = re.compile(r"\d\s*(?:tok(?:en)?s?\s*/\s*s|t/s|req(?:uest)?s?\s*/\s*s|samples?\s*/\s*s|it/s)\b", re.I)
# A log line holds several key: value pairs ("step: 20  loss: 6.91  tps: 7,412  mfu: 38.1%"); a configuration line one
_LOG_PAIR = re.compile(r"[A-Za-z][\w.\-]*\s*[:=]\s*[+\-~≈]?\d")
# The arms of an A/B, as a block names them (keys, labels, column heads, comments)
_BASE_ARM = re.compile(r"(?<![A-Za-z])(?:main|master|baseline|before|old|w/o|without)(?![A-Za-z])|改动前|合入前|主干", re.I)
_CHANGE_ARM = re.compile(r"(?<![A-Za-z])(?:this[\s_\-]*pr|pr|patched|after|new|branch|with[\s_\-]+(?:this|the)[\s_\-]+\w+|w/)"
                         r"(?![A-Za-z])|本\s*PR|改动后|合入后", re.I)


@dataclass(frozen=True)
class CodePiece:
    """A piece of a code block to read as prose: `kind` ("code output", "base output" or "table row"), its parts
    (text, source offset of the text's first character), and for a table row its header's text."""

    kind: str
    parts: tuple[tuple[str, int], ...]
    header: str = ""


def code_pieces(lines: list[tuple[int, str]]) -> list[CodePiece]:
    """The pieces a reader reads in a code block, given as (source offset, text) of each line."""
    body = [(offset, line) for offset, line in lines if not _FENCE.match(line)]
    text = "\n".join(line for _, line in body)
    two_arms = bool(_BASE_ARM.search(text) and _CHANGE_ARM.search(text))
    first = next((line for _, line in body if line.strip()), "")
    kind = "base output" if _BASE_LABEL.match(first) and not _CHANGE_ARM.search(text) else "code output"
    table = _columns(body, kind)
    if table:
        return table
    pieces: list[CodePiece] = []
    ruled = _ruled_tables(body, kind)  # runs of `|` lines inside other output: tables of their own
    index = 0
    while index < len(body):
        if index in ruled:
            end, table = ruled[index]
            pieces.extend(table)
            index = end
            continue
        piece = _line_piece(*body[index], kind, two_arms)
        if piece:
            pieces.append(piece)
        index += 1
    return pieces


def _line_piece(offset: int, line: str, kind: str, two_arms: bool) -> CodePiece | None:
    """What a reader reads in one line: the comment after a command, a configuration line, the line itself, or
    nothing."""
    if not line.strip():
        return None
    comment = _COMMENT.search(line)
    if _COMMAND.match(line) or _FLAG.search(line[:comment.start()] if comment else line):
        return CodePiece(kind, (_spaced(line[comment.end():], offset + comment.end()),)) if comment else None
    if not two_arms and _CONFIG_KEY.match(line) and not _COMPARES.search(line) and len(_LOG_PAIR.findall(line)) < 2 \
            and not _RESULT_UNIT.search(line):
        return CodePiece("config line", (_spaced(line, offset),))
    return CodePiece(kind, (_spaced(line, offset),))


def _ruled_tables(body: list[tuple[int, str]], kind: str) -> dict[int, tuple[int, list[CodePiece]]]:
    """The runs of three or more consecutive lines drawn with `|` (or box-drawing bars) that read as a table
    with a header: (index after the run, its pieces), keyed by the index of the run's first line."""
    found: dict[int, tuple[int, list[CodePiece]]] = {}
    index = 0
    while index < len(body):
        end = index
        while end < len(body) and _RULED.search(body[end][1]):
            end += 1
        if end - index >= 3:
            table = _columns(body[index:end], kind)
            if table and table[0].kind == "table row":
                found[index] = (end, table)
        index = max(end, index + 1)
    return found


def _spaced(text: str, offset: int) -> tuple[str, int]:
    """An identifier's underscores read as spaces: `mean_ttft_ms` reads "mean ttft ms"."""
    return text.replace("_", " "), offset


def _columns(body: list[tuple[int, str]], kind: str) -> list[CodePiece] | None:
    """The block as a table, when its lines split into the same number (two or more) of cells and every
    row below the first holds a number; None otherwise. Rows without a header are pieces of `kind`."""
    rows = []
    lines = [(offset, line) for offset, line in body if line.strip() and not _SEPARATOR_ROW.match(line)]
    comma_counts = {line.count(",") for _, line in lines}
    split = _CSV_SPLIT if len(comma_counts) == 1 and min(comma_counts) >= 1 and "|" not in "".join(l for _, l in lines) \
        else _CELL_SPLIT  # comma-separated values
    for offset, line in lines:
        stripped = line.strip().strip("|│┃").strip()
        start = offset + line.index(stripped[:1]) if stripped else offset
        cells, at = [], 0
        for match in list(split.finditer(stripped)) + [None]:
            end = match.start() if match else len(stripped)
            if stripped[at:end].strip():
                cells.append((stripped[at:end].strip(), start + at))
            at = match.end() if match else at
        rows.append(cells)
    if len(rows) < 2 or len({len(cells) for cells in rows}) != 1 or len(rows[0]) < 2:
        return None
    if not all(any(ch.isdigit() for cell, _ in cells[1:] for ch in cell) for cells in rows[1:]):
        return None
    if any(ch.isdigit() for cell, _ in rows[0][1:] for ch in cell):  # no header row
        # comma-separated rows are read with their cells set apart; aligned output line by line, as printed
        return [CodePiece(kind, _joined(cells)) for cells in rows] if split is _CSV_SPLIT else None
    header = " | ".join(_spaced(cell, at)[0] for cell, at in rows[0])
    pieces = [CodePiece("table row", _joined(rows[0]))]
    pieces += [CodePiece("table row", _joined(cells), header) for cells in rows[1:]]
    return pieces


def _joined(cells: list[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    parts: list[tuple[str, int]] = []
    for index, (cell, at) in enumerate(cells):
        if index:
            parts.append((" | ", -1))
        parts.append(_spaced(cell, at))
    return tuple(parts)
