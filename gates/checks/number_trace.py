"""Which artifact value a quoted number claims to be, and whether it is that value.

A measured number in a record is tied to one named value of one cited artifact.
A number that names no value is not checked against "whatever the artifacts
happen to contain": that would let 35.02 pass for 36.55 because some raw sample
was 35.02. The ways a number names its value:

1. An explicit reference in inline code, `` `ARTIFACT-ID:KEY.PATH` `` (the path
   is under the artifact's `results`; `results.` may be written or not):
   - right after the number, optionally in brackets or after a comparative:
     ``36.55 µs (`bench-splitkv-h200:summary.llama8b-b1-32k.ours_us`)``,
     ``4.2x faster (`bench-h200:rows[0].speedup`)``;
   - or before it with an operator: ``…:metrics.launch__grid_size` = 256``.
   The words right before the number must not contradict the reference: a dtype or
   case that tells the key's values apart (`fp16 … (`…:per_dtype.fp32.rel_l2`)`), or
   a value's name with an operator (`rel_l2 = 2 (`…:per_dtype.fp16.cases`)`), make
   the tie `mislabelled` (`CitedValues.label_problem`).
   A path steps through objects by key (keys may hold dots:
   `metrics.dram__bytes_read.sum`) and through lists by index, `rows[3]`, or by
   the one element whose field has a value, `rows[visible_tokens=2048]`.
2. A metric name, a key of a cited artifact's `results.metrics` (also written
   with spaces or hyphens for `_`: `grid blocks`), with an operator: `name = v`,
   `≈ v`, `~ v`, `is v`, `was v`, `of v`, `equals v`, `→ v`, `(v)`, `: v`, hedged
   (`= ~v`, `is about v`), or right after the number (`14 grid_blocks`); bare, in
   `code` or in **bold**. `≥ ≤ < >` (and `at least`, `below` …) state a bound,
   which must hold rather than equal. A name that several cited artifacts
   measure is resolved by the artifact the text links; if that does not single
   it out, write the reference form.
3. With `key_names` (the results section), any key of the results holding a
   number ties the next number of its clause, whatever the words between
   (`fp32 rel_l2 is 1.0e-9`); names take the following numbers in order; a
   name right after a free number (`48 cases`) takes that one (any of its values
   may match). The
   dtype or case words of the clause (else the line) pick among the key's
   values; the number must equal one of those picked; values that differ with
   nothing to pick are a problem asking for the reference form.
4. In a table:
   - a header cell holding a reference template maps its column: with
     ``| shape | split route `bench-splitkv-h200:summary.{row}.ours_us` |`` the
     first number of each row's cell in that column is
     `summary.<row>.ours_us`, where <row> is the row's first cell (without
     backticks or bold);
   - a cell naming a metric (as in 2., or a key as in 3.) is a name whose value is
     in the column headed `value` (值, 数值, measured), else the first later cell
     holding a number; `a / b` names pair with `x / y` values.

A paragraph is read as one text (a name ending one line ties the number starting
the next); table rows line by line. `SectionTracer.trace` returns every tie it finds
(`Tie`) and every measured number it finds untied, and the numbers presented as a
limit (`≤ 1.0e-6`, `max 1.0e-6`, a column headed tolerance/limit/bound);
`Tie.problem` says why a tie cannot be checked (unknown artifact, no such key,
ambiguous name), `Tie.mismatch()` whether the value differs (or the bound fails).
Units and percentages are decided in `gates.checks.quoted_numbers.in_quoted_unit`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass, field, replace
from functools import lru_cache

from gates.model.markdown_body import iter_links
from gates.checks.quoted_numbers import (
    COMPARATIVES, NUMBER, NUMBER_START, UNIT_END, UNITS, WORD_CHAR, Quoted, decimals, first_number, holds,
    numbers_with_units, parse_quoted, stored_unit, strip_code_spans,
)

ROW = "{row}"
VALUE_HEADERS = ("value", "values", "measured", "值", "数值", "测量值")
_REFERENCE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*):(\S+)$")
_CODE = r"`([^`\n]+)`"
_CODE_SPAN = re.compile(_CODE)
# Every number the tracer reads (`NUMBER`) holds a decimal digit: a text without one holds none
_DIGIT = re.compile(r"\d")
_BOLD = r"\*\*`?([^*`\n]+?)`?\*\*"
_RELATION_WORDS = {
    "≤": "≤", "<=": "≤", "at most": "≤", "no more than": "≤", "not more than": "≤", "up to": "≤",
    "<": "<", "below": "<", "under": "<", "less than": "<", "fewer than": "<", "lower than": "<",
    "≥": "≥", ">=": "≥", "at least": "≥", "no less than": "≥", "not less than": "≥",
    ">": ">", "above": ">", "over": ">", "more than": ">", "greater than": ">", "higher than": ">",
}
_RELATION = "|".join(re.escape(word) for word in sorted(_RELATION_WORDS, key=len, reverse=True))
_HEDGE = r"(?:~|≈|≃|approx\.|(?:about|around|roughly|approximately|only|just|exactly|nearly)\b)"
_EQUALS = (r"(?:=|≈|~|≃|:|＝|：|→|->|=>|⇒|\(|（|\b(?:is|was|are|were|of|equals|equal to|equalled|reaches|reached|"
           r"hits|hit|reads|read|shows|showed|measures|measured|totals|stays at|stood at|sits at|comes to|came to)\b)")
# `name = v`, `name was ~v`, `name (v)`, `name → v`, `name ≥ v`, `name is at most v`
_OPERATOR = (rf"(?:(?P<rel>{_RELATION})|{_EQUALS}(?:[ \t]*(?P<rel2>{_RELATION}))?)(?:[ \t]*{_HEDGE})?")
_QUANTITY = rf"({NUMBER})(?:[ \t]?({UNITS}){UNIT_END})?"
_LIMIT_WORDS = (r"max|maximum|tolerance|tolerances|limit|limits|bound|ceiling|upper bound|min|minimum|floor|"
                r"lower bound|容差|上限|下限|阈值")
# what ends the text right before a number presented as a bound: `≤ 1e-6`, `below 1e-6`, `max 1e-6`
_BOUND_BEFORE = re.compile(rf"(?:(?P<rel>{_RELATION})|(?P<limit>{_LIMIT_WORDS})(?:[ \t]+(?:of|is|=|:))?)"
                           rf"[ \t:=]*(?:{_HEDGE}[ \t]*)?$", re.IGNORECASE)
_BOUND_NUMBER = re.compile(rf"(?:(?P<rel>{_RELATION})|(?<![A-Za-z])(?P<limit>{_LIMIT_WORDS})(?:[ \t]+(?:of|is|=|:))?)"
                           rf"[ \t:=]*(?:{_HEDGE}[ \t]*)?{NUMBER_START}(?P<num>{NUMBER})", re.IGNORECASE)
_BOUND_REACH = 40  # how far before a number the words presenting it as a bound are looked for
_LOWER_LIMIT = re.compile(r"min|minimum|floor|lower bound|下限", re.IGNORECASE)
_LIMIT_HEADER = re.compile(rf"(?<![A-Za-z])(?:{_LIMIT_WORDS})(?![A-Za-z])", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[;!?；。，！？]|,(?!\d{3})|\.(?=\s|$)")
_NUMBER_NEXT = re.compile(rf"[ \t]*(?:{_HEDGE}[ \t]*)?[-+−]?\d")
_NOT_A_NAME = {"max", "min", "limit", "bound", "tolerance", "value", "values"}
# `9.8 µs (`ref`)`, `4.2x faster (`ref`)`: a comparative may stand between a ratio and its reference
_BEFORE_REFERENCE = re.compile(rf"{NUMBER_START}{_QUANTITY}(?:[ \t]+(?:{COMPARATIVES})\b)?[ \t]*[(\[（]?[ \t]*$")
_REFERENCE_REACH = 80  # how far before a reference its number is looked for
# A name is not read inside a longer word or path; CJK text may touch it ("fp16的rel_l2为0.0002")
_NAME_START = rf"(?<!{WORD_CHAR})(?<![.`])"
_NAME_END = rf"(?!{WORD_CHAR}|`|\.\w)"
_WORD_BREAK = re.compile(rf"(?:(?!{WORD_CHAR})[^.+-])+")
# How a sentence may spell a dtype that an artifact's keys write short
_DTYPE_SPELLINGS = {"float16": "fp16", "half": "fp16", "f16": "fp16", "float32": "fp32", "f32": "fp32",
                    "bfloat16": "bf16", "float64": "fp64", "double": "fp64", "f64": "fp64", "float8": "fp8"}
_SELECTOR = re.compile(r"\[(\d+)\]|\[([^=\]]+)=([^\]]*)\]")
# The parts of a key's name: `one_call_layer` is one, call and layer
_NAME_PARTS = re.compile(r"[_\-]+")
_DELIMITER_CELL = re.compile(r":?-{2,}:?")


class TraceError(ValueError):
    """A reference that names no value."""


@dataclass(frozen=True)
class NamedValue:
    artifact_id: str
    key: str
    value: object
    unit: str
    context: frozenset = frozenset()

    def shown(self) -> str:
        return f"{self.artifact_id}:{self.key} = {self.value}" + (f" {self.unit}" if self.unit else "")


@dataclass(frozen=True)
class Tie:
    """A quoted number and the value it names (or why that value cannot be found)."""

    line: int
    quoted: Quoted
    name: str
    target: NamedValue | None = None
    problem: str | None = None
    relation: str = "="
    alternatives: tuple = ()
    mislabelled: bool = False  # `problem` says how the words before the number contradict its reference

    def mismatch(self) -> bool:
        """Whether the quoted number is not the value (or, for a bound, the bound does not hold).

        With `alternatives` (a name with several values the clause did not single out further), an
        equality must match one of them and a bound must hold for all of them.
        """
        if self.target is None:
            return False
        candidates = self.alternatives or (self.target,)
        if self.relation == "=":
            return not any(holds(self.quoted, value.value, value.unit) for value in candidates)
        return not all(holds(self.quoted, value.value, value.unit, self.relation) for value in candidates)

    def said(self) -> str:
        """What the record says, as `name = 12` or `name ≥ 83%`."""
        return f"{self.name} {self.relation} {self.quoted.shown()}"

    def expected(self) -> str:
        """The value (or values) the number was compared with."""
        if len(self.alternatives) > 1:
            return "; ".join(value.shown() for value in self.alternatives)
        return self.target.shown() if self.target else ""


@dataclass
class Trace:
    ties: list[Tie] = field(default_factory=list)
    untied: list[tuple[int, Quoted]] = field(default_factory=list)
    # (line, column) of the numbers presented as a limit: `≤ 1.0e-6`, `max 1.0e-6`, a `tolerance` column
    limits: set[tuple[int, int]] = field(default_factory=set)

    def is_limit(self, line: int, quoted: Quoted) -> bool:
        return (line, quoted.col) in self.limits


class CitedValues:
    """The values of the artifacts a check may use, by reference or by metric name.

    `artifacts` maps artifact id to its `results`; `declared` is every evidence id
    the record declares (a reference to one of those that is not usable is an error,
    not prose).
    """

    def __init__(self, artifacts: dict[str, dict], declared=(), key_names: bool = False):
        self.artifacts = artifacts
        self.declared = set(declared) | set(artifacts)
        self._metrics: dict[str, list[NamedValue]] = {}
        self._leaves: dict[str, list[NamedValue]] = {}
        self._indexes: dict[str, dict[str, list[int]]] = {}
        self._choices: dict[tuple, tuple[NamedValue, ...]] = {}
        self._named_words: dict[tuple[str, str], frozenset] = {}
        self._differs: dict[str, bool] = {}
        self._by_last_key: dict[str, list[NamedValue]] | None = None
        self._name_before: re.Pattern | None = None
        if key_names:
            for artifact_id, results in artifacts.items():
                for value in _leaf_values(artifact_id, results):
                    self._leaves.setdefault(value.key.rsplit(".", 1)[-1], []).append(value)
            self._by_last_key = self._leaves  # the same values by the same keys: read once
        for artifact_id, results in artifacts.items():
            metrics = results.get("metrics") if isinstance(results, dict) else None
            units = results.get("units") if isinstance(results, dict) else None
            units = units if isinstance(units, dict) else {}
            for name, value in (metrics or {}).items() if isinstance(metrics, dict) else ():
                unit = stored_unit(str(name), _declared_unit(units, name))
                self._metrics.setdefault(str(name), []).append(NamedValue(artifact_id, f"metrics.{name}", value, unit))

        self._spelled = {_collapsed(name): name for name in sorted(self._leaves, reverse=True)}
        self._spelled.update({_collapsed(name): name for name in sorted(self._metrics, reverse=True)})

    @property
    def metric_names(self) -> set[str]:
        return set(self._metrics)

    @property
    def key_names(self) -> set[str]:
        """Names of numeric values anywhere in the artifacts' results (empty unless asked for)."""
        return set(self._leaves)

    def canonical(self, text: str) -> str:
        """The metric name `text` spells, with spaces or hyphens for `_` (`grid blocks` is grid_blocks)."""
        if text in self._metrics or text in self._leaves:
            return text
        return self._spelled.get(_collapsed(text), text)

    def is_reference(self, text: str) -> bool:
        match = _REFERENCE.match(text)
        return bool(match) and match.group(1) in self.declared

    def resolve(self, reference: str) -> NamedValue:
        """The value `ARTIFACT-ID:PATH` names; TraceError says why there is none."""
        match = _REFERENCE.match(reference)
        if not match:
            raise TraceError(f"{reference!r} is not a reference: write `ARTIFACT-ID:KEY.PATH`")
        artifact_id, path = match.groups()
        if artifact_id not in self.artifacts:
            usable = ", ".join(sorted(self.artifacts)) or "none"
            raise TraceError(f"{artifact_id!r} is not an artifact this check reads (usable here: {usable})")
        results = self.artifacts[artifact_id]
        if path.startswith("results."):
            path = path[len("results."):]
        value, last_key = _walk(results, path, reference)
        if isinstance(value, (dict, list, bool, str)) or value is None:
            raise TraceError(f"{reference} is not a number (it is {type(value).__name__})")
        units = results.get("units") if path.startswith("metrics.") else None
        return NamedValue(artifact_id, path, value, stored_unit(last_key, _declared_unit(units, last_key)))

    def metric(self, name: str, linked_ids=()) -> NamedValue:
        """The one value a bare metric name names; TraceError when none or several."""
        found = self._metrics.get(name, [])
        if len(found) > 1 and linked_ids:
            narrowed = [value for value in found if value.artifact_id in linked_ids]
            found = narrowed or found
        if not found:
            raise TraceError(f"{name} is not a metric of any cited artifact")
        if len(found) > 1:
            sources = ", ".join(value.artifact_id for value in found)
            raise TraceError(f"{name} is a metric of several cited artifacts ({sources}): write "
                             f"`{found[0].artifact_id}:metrics.{name}` to say which")
        return found[0]

    def name(self, text: str, linked_ids=()) -> NamedValue | None:
        """The value `text` names (a reference or a metric name), None if it names none."""
        if self.is_reference(text):
            return self.resolve(text)
        text = self.canonical(text)
        if text in self._metrics:
            return self.metric(text, linked_ids)
        return None

    def label_problem(self, reference: str, phrase: str) -> str | None:
        """How the words right before a number (`phrase`) contradict the reference after it, if they do.

        The phrase may name a dtype or case (`fp16`, a row's name): one of those that tell the
        values of the reference's key apart (`fp16`, `fp32` for `per_dtype.*.rel_l2`), and the
        reference must be on that one's path. It may end with a value's name and an operator
        (`rel_l2 =`, `max_abs`): the reference must be a value of that name. "fp16 rel_l2 = 5.11e-8
        (`…:per_dtype.fp32.rel_l2`)" and "rel_l2 = 2 (`…:per_dtype.fp16.cases`)" are mislabelled.
        """
        match = _REFERENCE.match(reference)
        if not match or match.group(1) not in self.artifacts:
            return None
        artifact_id, path = match.groups()
        context: set[str] = set()
        try:
            last_key = _walk(self.artifacts[artifact_id], path.removeprefix("results."), reference, context)[1]
        except TraceError:
            return None
        return (self._context_contradiction(reference, last_key, context, phrase)
                or self._name_contradiction(reference, last_key, phrase))

    def _context_contradiction(self, reference: str, last_key: str, context: set[str], phrase: str) -> str | None:
        """The phrase names a dtype or case of `last_key`'s values, and the reference is not on its path.

        A word that is also a part of the value's own name is the value's name, not a case: "the
        layer reached 12.7 µs (`…:runs.models.worst.one_call_layer`)" speaks of the layer's time,
        even where another case is a run named `layer`.
        """
        name = last_key.rsplit(".", 1)[-1]
        telling = self._telling_words(name)
        said = {_DTYPE_SPELLINGS.get(word.lower(), word) for word in _words(phrase)} & telling
        said -= set(_NAME_PARTS.split(name))
        if not said or said & context:
            return None
        ours = sorted(telling & context)
        return (f"the sentence speaks of {', '.join(sorted(said))}, but `{reference}` is the value of "
                f"{', '.join(ours) if ours else 'another case'}")

    def _name_contradiction(self, reference: str, last_key: str, phrase: str) -> str | None:
        """The phrase ends with a value's name (and an operator) that the reference is not a value of."""
        if self._name_before is None:
            names = sorted(set(self._values_by_last_key()) | self.metric_names, key=len, reverse=True)
            alternatives = "|".join(map(_spelled, names)) or r"(?!x)x"
            self._name_before = re.compile(rf"{_NAME_START}((?i:{alternatives})){_NAME_END}[ \t]*(?:{_OPERATOR})?"
                                           rf"[ \t]*$")
        match = self._name_before.search(phrase)
        if not match:
            return None
        said = self.canonical(match.group(1))
        if _collapsed(said) in _collapsed(reference.split(":", 1)[1]):
            return None
        return f"the sentence says {said}, but `{reference}` is {last_key}"

    def _values_by_last_key(self) -> dict[str, list[NamedValue]]:
        """Every number of the artifacts' results, by the last key of its path (computed once)."""
        if self._by_last_key is None:
            self._by_last_key = {}
            for artifact_id, results in self.artifacts.items():
                for value in _leaf_values(artifact_id, results):
                    self._by_last_key.setdefault(value.key.rsplit(".", 1)[-1], []).append(value)
        return self._by_last_key

    def _telling_words(self, name: str) -> set[str]:
        """The keys and row fields that tell the values of `name` apart (on some of their paths, not all)."""
        found = self._values_by_last_key().get(name, [])
        counts: dict[str, int] = {}
        for value in found:
            for word in value.context:
                counts[word] = counts.get(word, 0) + 1
        return {word for word, count in counts.items() if count < len(found)}

    def _context_index(self, name: str) -> dict[str, list[int]]:
        """For the values of a key name: which of them each context word (dtype, case, row field) names.

        A word on every value's path chooses nothing and is left out.
        """
        if name not in self._indexes:
            found = self._leaves[name]
            index: dict[str, list[int]] = {}
            for position, value in enumerate(found):
                for word in value.context:
                    index.setdefault(word, []).append(position)
            self._indexes[name] = {word: at for word, at in index.items() if len(at) < len(found)}
        return self._indexes[name]

    def _named(self, name: str, text: str) -> frozenset:
        """The words of `text` that name the context of some value of `name`."""
        if (name, text) not in self._named_words:
            index = self._context_index(name)
            self._named_words[(name, text)] = frozenset(word for word in _words(text) if word in index)
        return self._named_words[(name, text)]

    def _differ(self, name: str) -> bool:
        """Whether the values of `name` are not all the same."""
        if name not in self._differs:
            self._differs[name] = len({repr(value.value) for value in self._leaves[name]}) > 1
        return self._differs[name]

    def _chosen(self, name: str, named: frozenset) -> tuple[NamedValue, ...]:
        """The values of `name` whose context the `named` words name most (none if they name none)."""
        if (name, named) not in self._choices:
            scores: dict[int, int] = {}
            for word in named:
                for position in self._indexes[name][word]:
                    scores[position] = scores.get(position, 0) + 1
            best = max(scores.values(), default=0)
            found = self._leaves[name]
            self._choices[(name, named)] = tuple(found[at] for at in sorted(scores) if scores[at] == best)
        return self._choices[(name, named)]

    def key(self, name: str, clause: str, around: str = "", any_value: bool = False) -> tuple[NamedValue, ...]:
        """The values a key name may mean in `clause`: all of them, or those whose dtype or case
        (a key or row field on their path) the clause names (else `around`, the line, names).

        TraceError when they differ and nothing chooses among them.
        """
        found = self._leaves.get(name, [])
        if not found:
            raise TraceError(f"{name} is not a value of any cited artifact")
        for text in (clause, around):
            chosen = self._chosen(name, self._named(name, text))
            if chosen:
                return chosen
        if self._differ(name) and not any_value:
            shown = "; ".join(value.shown() for value in found[:4]) + ("; ..." if len(found) > 4 else "")
            raise TraceError(f"{name} has several values in the cited evidence ({shown}) and the sentence names no "
                             f"dtype or case that picks one: write `{found[0].artifact_id}:{found[0].key}` after "
                             "the number to say which")
        return tuple(found)


_SEPARATOR_RUN = re.compile(r"[ \t_-]+")
_LETTER = re.compile(r"[A-Za-z]")
_UNIT_NAME = re.compile(UNITS)


def _collapsed(name: str) -> str:
    return _SEPARATOR_RUN.sub("_", name.strip()).lower()


def _is_key_name(key) -> bool:
    return (isinstance(key, str) and len(key) >= 3 and _LETTER.search(key) is not None
            and key.lower() not in _NOT_A_NAME and not _UNIT_NAME.fullmatch(key) and "`" not in key)


def _leaf_values(artifact_id: str, results) -> list[NamedValue]:
    """Every number under a dict key of `results`, with the keys and row fields on its path as context."""
    found: list[NamedValue] = []
    units = results.get("units") if isinstance(results, dict) else None
    stack = deque([(results, "", frozenset())])
    while stack:
        node, path, context = stack.popleft()
        if isinstance(node, dict):
            for key, value in node.items():
                key_path = f"{path}.{key}" if path else str(key)
                if isinstance(value, (dict, list)):
                    stack.append((value, key_path, context | {str(key)}))
                elif isinstance(value, (int, float)) and not isinstance(value, bool) and _is_key_name(key):
                    declared = _declared_unit(units, key) if path == "metrics" else None
                    found.append(NamedValue(artifact_id, key_path, value, stored_unit(str(key), declared), context))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                stack.append((item, f"{path}[{index}]", context | _row_fields(item)))
    return found


def _row_fields(item) -> frozenset:
    """The words a list element is known by: its string and whole-number fields (`visible_tokens: 2048`)."""
    if not isinstance(item, dict):
        return frozenset()
    return frozenset(str(value) for value in item.values()
                     if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)))


@lru_cache(maxsize=256)
def _words(text: str) -> frozenset:
    """The words of a sentence as dtype or case names are written: `fp32`, `llama8b-b1-32k`, `2048`."""
    return frozenset(word.strip(".") for word in _WORD_BREAK.split(text) if word.strip("."))




def _declared_unit(units, key: str) -> str | None:
    """The unit an artifact's `results.units` declares for a metric key, if it declares one."""
    unit = units.get(key) if isinstance(units, dict) else None
    return unit if isinstance(unit, str) else None


def _walk(data, path: str, reference: str, context: set | None = None):
    """Follow `path` from `data`; keys may contain dots, so the longest key that fits wins.

    `context`, when given, collects the keys and row fields on the way (as `_leaf_values` records them).
    """
    node, rest, last_key = data, path, ""
    while rest:
        if isinstance(node, list):
            match = _SELECTOR.match(rest)
            if not match:
                raise TraceError(f"{reference}: {last_key or 'results'} is a list; index it as [n] or [field=value]")
            node = _select(node, match, reference)
            if context is not None:
                context.update(_row_fields(node))
            rest = rest[match.end():].removeprefix(".")
            continue
        if not isinstance(node, dict):
            raise TraceError(f"{reference}: {last_key} holds a value, not the key {rest!r}")
        keys = [key for key in node if rest == key or rest.startswith(key + ".") or rest.startswith(key + "[")]
        if not keys:
            raise TraceError(f"{reference}: there is no key {rest.split('.')[0]!r} under {last_key or 'results'}")
        last_key = max(keys, key=len)
        if context is not None:
            context.add(str(last_key))
        node = node[last_key]
        rest = rest[len(last_key):].removeprefix(".")
    return node, last_key


def _select(items: list, match: re.Match, reference: str):
    if match.group(1) is not None:
        index = int(match.group(1))
        if index >= len(items):
            raise TraceError(f"{reference}: index {index} is past the end of a list of {len(items)}")
        return items[index]
    name, wanted = match.group(2).strip(), match.group(3).strip()
    chosen = [item for item in items if isinstance(item, dict) and name in item and _same(item[name], wanted)]
    if len(chosen) != 1:
        raise TraceError(f"{reference}: {len(chosen)} elements have {name} = {wanted}; a selector must pick one")
    return chosen[0]


def _same(value, text: str) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value) == text
    quoted = parse_quoted(text)
    return quoted is not None and float(value) == quoted.value


def _first_number(text: str, col: int = 1) -> Quoted | None:
    """The first number of a cell outside its code spans (names like `m1` hold no value)."""
    return first_number(strip_code_spans(text), col)


def _clean_name(text: str) -> str:
    return text.strip().strip("*").strip("`").strip()


def _spelled(name: str) -> str:
    """A pattern for a name that may also be written with spaces or hyphens for `_` (matched ignoring case)."""
    return re.sub(r"_+", "[ _-]+", re.escape(name))


def _name_alternatives(names) -> str:
    bare = "|".join(_spelled(name) for name in sorted(names, key=len, reverse=True)) or r"(?!x)x"
    return "|".join([_CODE, _BOLD, rf"{_NAME_START}((?i:{bare})){_NAME_END}"])


_NAMED_QUANTITY = rf"(?P<num>{NUMBER})(?:[ \t]?(?P<unit>{UNITS}){UNIT_END})?"
_ANY_NUMBER = re.compile(rf"{NUMBER_START}{_NAMED_QUANTITY}")


def _relation_before(text: str) -> str:
    """The relation a number is presented in by the words right before it: `≤ v`, `below v`, `max v`."""
    match = _BOUND_BEFORE.search(text[-_BOUND_REACH:])
    if not match:
        return "="
    if match.group("rel"):
        return _RELATION_WORDS[match.group("rel").lower()]
    return "≥" if _LOWER_LIMIT.fullmatch(match.group("limit")) else "≤"


_PHRASE_BREAK = re.compile(rf"[;!?。；！？|]|\.(?=\s|$)|{NUMBER_START}{NUMBER}")
_PHRASE_REACH = 120


def _phrase_before(text: str, end: int) -> str:
    """The words that present the number at `end`: back to the previous number, sentence end or table cell."""
    start = max(0, end - _PHRASE_REACH)
    breaks = [match.end() for match in _PHRASE_BREAK.finditer(text, start, end)]
    return text[breaks[-1] if breaks else start:end]


def readable(line: str, values: CitedValues) -> str:
    """The line as numbers are read from it, same length: references and link targets blanked.

    Other inline code keeps its text (only the backticks go), so a number cannot hide from
    the check by being written as `35.02 µs`, nor a name by being written as `rel_l2`.
    """
    def blank(match: re.Match) -> str:
        if values.is_reference(match.group(1).replace(ROW, "x")):
            return " " * len(match.group(0))
        return f" {match.group(1)} "
    if "`" not in line and "](" not in line:  # no code span and no link target: nothing to blank
        return line
    return strip_code_spans(_CODE_SPAN.sub(blank, line))


class LineTracer:
    """Finds the ties of prose lines and table rows against `values`.

    Metric names (keys of `results.metrics`, also spelled with spaces or hyphens for `_`) tie
    the number after an operator (`=`, `≈`, `~`, `:`, `is`, `was`, `of`, `equals`, `→`, `(`,
    and the bounds `≥ ≤ < >`) or the number right before them (`14 grid_blocks`). With
    `values.key_names`, a key name of the results ties the next number of its clause.
    """

    def __init__(self, values: CitedValues):
        self.values = values
        names = _name_alternatives(values.metric_names)
        self._before = re.compile(rf"(?:{names})[ \t]*{_OPERATOR}[ \t]*{_NAMED_QUANTITY}")
        self._number_first = re.compile(rf"{NUMBER_START}{_NAMED_QUANTITY}[ \t]+(?:{names})")
        self._names = re.compile(_name_alternatives(values.metric_names | values.key_names))
        keys = sorted(values.key_names, key=len, reverse=True)
        self._keys = (re.compile(rf"{_NAME_START}((?i:{'|'.join(map(_spelled, keys))})){_NAME_END}")
                      if keys else None)

    def tie(self, line_no: int, quoted: Quoted, name: str, linked, relation: str = "=", clause: str = "",
            around: str = "", any_value: bool = False) -> Tie | None:
        """`quoted` tied to what `name` names; None when `name` is no name (plain code, a word).

        `any_value`: a key name with several values that nothing picks among is compared with all of them.
        """
        try:
            target = self.values.name(name, linked)
            if target is None and name in self.values.key_names:
                found = self.values.key(name, clause, around, any_value)
                return Tie(line_no, quoted, name, found[0], relation=relation,
                           alternatives=found if len(found) > 1 else ())
        except TraceError as exc:
            return Tie(line_no, quoted, name, problem=str(exc), relation=relation)
        if target is None:
            return None
        return Tie(line_no, quoted, self.values.canonical(name), target, relation=relation)

    def prose_ties(self, line_no: int, text: str, offset: int = 0, linked=(), around: str = "") -> list[Tie]:
        """Ties written inline: `name <op> number`, `number name`, `number `reference``, and key names."""
        if not _DIGIT.search(text):  # every tie is a number's
            return []
        ties: dict[int, Tie] = {}
        for match in self._before.finditer(text):
            name = next(group for group in match.groups()[:3] if group is not None)
            relation = _RELATION_WORDS.get((match.group("rel") or match.group("rel2") or "=").lower(), "=")
            quoted = parse_quoted(match.group("num"), match.group("unit") or "", offset + match.start("num") + 1)
            tie = quoted and self.tie(line_no, quoted, _clean_name(name), linked, relation)
            if tie:
                ties.setdefault(quoted.col, tie)
        for code in _CODE_SPAN.finditer(text):
            if not self.values.is_reference(code.group(1)):
                continue
            match = _BEFORE_REFERENCE.search(text, max(0, code.start() - _REFERENCE_REACH), code.start())
            if match is None:
                continue
            quoted = parse_quoted(match.group(1), match.group(2) or "", offset + match.start(1) + 1)
            tie = quoted and self.tie(line_no, quoted, code.group(1), linked)
            if tie and not tie.problem:
                mislabel = self.values.label_problem(code.group(1), _phrase_before(readable(text, self.values),
                                                                                   match.start(1)))
                tie = replace(tie, problem=mislabel, mislabelled=True) if mislabel else tie
            if tie:
                ties.setdefault(quoted.col, tie)
        for match in self._number_first.finditer(text):
            name = next(group for group in match.groups()[-3:] if group is not None)
            quoted = parse_quoted(match.group("num"), match.group("unit") or "", offset + match.start("num") + 1)
            tie = quoted and self.tie(line_no, quoted, _clean_name(name), linked)
            if tie:
                ties.setdefault(quoted.col, tie)
        if self._keys is not None:
            self._key_ties(line_no, readable(text, self.values), offset, linked, around or text, ties)
        return list(ties.values())

    def _key_ties(self, line_no: int, text: str, offset: int, linked, around: str, ties: dict[int, Tie]) -> None:
        """In each clause, key names take the numbers after them in order (`a and b are 1 and 2`).

        A clause ends at a sentence end, a semicolon or a comma, except a comma right before a
        number (`rel_l2, 1.0e-9`): there the name still takes it.
        """
        names = list(self._keys.finditer(text))
        name_starts = [match.start() for match in names]
        events = [(match.start(), 0, match) for match in names]
        events += [(match.start(), 1, match) for match in _CLAUSE_END.finditer(text)]
        for match in _ANY_NUMBER.finditer(text):
            inside = bisect_left(name_starts, match.start() + 1) - 1
            if match.group("num").count(".") > 1 or (inside >= 0 and names[inside].end() > match.start()):
                continue
            events.append((match.start("num"), 2, match))
        boundaries = [0] + [match.end() for _, kind, match in events if kind == 1]
        boundaries.sort()
        def clause_of(position: int) -> str:
            at = bisect_left(boundaries, position + 1) - 1
            return text[boundaries[at]:boundaries[at + 1] if at + 1 < len(boundaries) else len(text)]

        def tie_to(match: re.Match, name: str, relation: str, any_value: bool = False) -> None:
            begin = match.start("num")
            quoted = parse_quoted(match.group("num"), match.group("unit") or "", offset + begin + 1)
            if quoted is not None and quoted.col not in ties:
                tie = self.tie(line_no, quoted, name, linked, relation, clause_of(begin), around, any_value)
                if tie:
                    ties[quoted.col] = tie

        ordered = sorted(events, key=lambda event: (event[0], event[1]))
        pending: deque = deque()
        for at, (begin, kind, match) in enumerate(ordered):
            if kind == 0:
                previous = ordered[at - 1] if at else None
                if not (previous and previous[1] == 2 and self._count_of_next(text, previous[2], begin)):
                    pending.append((match.end(), self.values.canonical(match.group(1))))
                continue
            if kind == 1:
                if not (match.group(0) == "," and _NUMBER_NEXT.match(text, match.end())):
                    pending.clear()
                continue
            following = ordered[at + 1] if at + 1 < len(ordered) else None
            if following and following[1] == 0 and self._count_of_next(text, match, following[0]):
                # `48 cases`, `2048 visible tokens`, `1.0e-9 rel_l2`: the number right before a name is its own
                tie_to(match, self.values.canonical(following[2].group(1)), "=", any_value=True)
            elif pending:
                name_end, name = pending.popleft()
                tie_to(match, name, _relation_before(text[name_end:begin]))

    @staticmethod
    def _count_of_next(text: str, number: re.Match, name_start: int) -> bool:
        """Whether a number belongs to the name right after it: only spaces between, and the number
        not bound to what stands before it (`Hq=24 Hkv=4`: 24 is Hq's)."""
        begin = number.start("num")
        return (not text[number.end():name_start].strip()
                and not _OPERATOR_AT_END.search(text[max(0, begin - 4):begin]))

    def bounds(self, text: str, offset: int = 0) -> set[int]:
        """Columns of the numbers presented as a limit (`≤ 1.0e-6`, `max 1.0e-6`, `tolerance 1.0e-6`)."""
        if not _DIGIT.search(text):
            return set()
        return {offset + match.start("num") + 1 for match in _BOUND_NUMBER.finditer(readable(text, self.values))}

    def cell_names(self, cell: str, linked=()) -> list[str]:
        """Metric names, key names or references a table cell holds (the cell names a value)."""
        found = []
        for match in self._names.finditer(cell):
            name = _clean_name(next(group for group in match.groups() if group is not None))
            name = self.values.canonical(name)
            if name in self.values.metric_names or name in self.values.key_names or self.values.is_reference(name):
                found.append(name)
        return found


@dataclass(frozen=True)
class Cell:
    text: str
    col: int


def split_row(line: str) -> list[Cell]:
    """The cells of a Markdown table row, with the 1-based column where each starts (pipes in code stay)."""
    cells, in_code = [], False
    start = line.index("|") + 1
    index = start
    while index < len(line):
        char = line[index]
        if char == "`":
            in_code = not in_code
        elif char == "\\":
            index += 1
        elif char == "|" and not in_code:
            cells.append(Cell(line[start:index], start + 1))
            start = index + 1
        index += 1
    if line[start:].strip():
        cells.append(Cell(line[start:], start + 1))
    return cells


def _is_delimiter(cells: list[Cell]) -> bool:
    return all(_DELIMITER_CELL.fullmatch(cell.text.strip()) or not cell.text.strip() for cell in cells)


def _templates(header: list[Cell], values: CitedValues) -> dict[int, str]:
    templates = {}
    for index, cell in enumerate(header):
        for code in _CODE_SPAN.findall(cell.text):
            if values.is_reference(code.replace(ROW, "x")):
                templates[index] = code
    return templates


def _value_column(header: list[Cell]) -> int | None:
    for index, cell in enumerate(header):
        if _clean_name(cell.text).lower() in VALUE_HEADERS:
            return index
    return None


class SectionTracer:
    """Traces the lines of one section: tables by their header, prose line by line."""

    def __init__(self, values: CitedValues, linked_ids=lambda line: ()):
        self.values = values
        self.lines = LineTracer(values)
        self.linked_ids = linked_ids

    def trace(self, lines, measured) -> Trace:
        """Ties in `lines` ((line number, text) pairs), and the numbers `measured(text, is_table)` finds untied."""
        trace = Trace()
        header: list[Cell] | None = None
        templates: dict[int, str] = {}
        value_column = None
        paragraph: list[tuple[int, str]] = []
        for line_no, raw in lines:
            if not raw.lstrip().startswith("|"):
                header = None
                if paragraph and _starts_block(raw):
                    self._paragraph(trace, paragraph, measured)
                    paragraph = []
                if raw.strip():
                    paragraph.append((line_no, raw))
                if _HEADING_LINE.match(raw):
                    self._paragraph(trace, paragraph, measured)
                    paragraph = []
                continue
            self._paragraph(trace, paragraph, measured)
            paragraph = []
            cells = split_row(raw)
            if header is None:
                header, templates, value_column = cells, _templates(cells, self.values), _value_column(cells)
                self._collect(trace, line_no, raw, [], measured(readable(raw, self.values), True))
                continue
            if _is_delimiter(cells):
                continue
            ties = self._row_ties(line_no, raw, header, cells, templates, value_column)
            trace.limits.update((line_no, col) for col in self._row_bounds(header, cells))
            self._collect(trace, line_no, raw, ties, measured(readable(raw, self.values), True))
        self._paragraph(trace, paragraph, measured)
        return trace

    def _paragraph(self, trace: Trace, lines: list[tuple[int, str]], measured) -> None:
        """A paragraph's lines read as one text (a name may end one line and its number start the next)."""
        if not lines:
            return
        joined = " ".join(raw for _, raw in lines)
        starts, at = [], 0
        for _, raw in lines:
            starts.append(at)
            at += len(raw) + 1
        by_line: dict[int, list[Tie]] = {}
        for tie in self.lines.prose_ties(lines[0][0], joined, linked=self.linked_ids(joined)):
            index = bisect_left(starts, tie.quoted.col) - 1
            line_no = lines[index][0]
            moved = replace(tie, line=line_no, quoted=replace(tie.quoted, col=tie.quoted.col - starts[index]))
            by_line.setdefault(line_no, []).append(moved)
        for col in self.lines.bounds(joined):
            index = bisect_left(starts, col) - 1
            trace.limits.add((lines[index][0], col - starts[index]))
        for line_no, raw in lines:
            self._collect(trace, line_no, raw, by_line.get(line_no, []), measured(readable(raw, self.values), False))

    def _row_bounds(self, header: list[Cell], cells: list[Cell]) -> set[int]:
        """Numbers presented as limits in a row: in a column headed tolerance/limit/bound/max/min, or `≤ v`."""
        found = set()
        for index, cell in enumerate(cells):
            found |= self.lines.bounds(cell.text, cell.col - 1)
            if index < len(header) and _LIMIT_HEADER.search(strip_code_spans(header[index].text)):
                text = readable(cell.text, self.values)
                found |= {cell.col + match.start("num") for match in _ANY_NUMBER.finditer(text)}
        return found

    def _collect(self, trace: Trace, line_no: int, raw: str, ties: list[Tie], numbers: list[Quoted]) -> None:
        trace.ties.extend(ties)
        tied = {tie.quoted.col for tie in ties}
        trace.untied.extend((line_no, number) for number in numbers if number.col not in tied)

    def _header_names(self, header: list[Cell], templates: dict[int, str]) -> dict[int, list[str]]:
        """Columns (without a template) whose header cell is one metric or key name and nothing else."""
        found = {}
        for index, cell in enumerate(header):
            if index in templates or index == 0:
                continue
            names = self.lines.cell_names(cell.text)
            if len(names) == 1 and self.values.canonical(_clean_name(cell.text)) == names[0]:
                found[index] = names
        return found

    def _row_ties(self, line_no, raw, header, cells, templates, value_column) -> list[Tie]:
        linked = self.linked_ids(raw)
        around = " ".join(cell.text for cell in header) + " " + raw
        ties: dict[int, Tie] = {}
        for cell in cells:
            for tie in self.lines.prose_ties(line_no, cell.text, cell.col - 1, linked, around):
                ties.setdefault(tie.quoted.col, tie)
        row_id = _clean_name(cells[0].text) if cells else ""
        for index, template in templates.items():
            if index < len(cells):
                quoted = _first_number(cells[index].text, cells[index].col)
                if quoted is not None:
                    tie = self.lines.tie(line_no, quoted, template.replace(ROW, row_id), linked)
                    if tie:
                        ties[quoted.col] = tie
        for index, names in self._header_names(header, templates).items():
            if index < len(cells):  # `| dtype | rel_l2 |`: the column holds values of the name it is headed with
                quoted = _first_number(cells[index].text, cells[index].col)
                tie = quoted and self.lines.tie(line_no, quoted, names[0], linked, clause=raw, around=around)
                if tie:
                    ties.setdefault(quoted.col, tie)
        next_with_number: list[int | None] = [None] * (len(cells) + 1)
        for index in range(len(cells) - 1, -1, -1):
            has_number = _first_number(cells[index].text) is not None
            next_with_number[index] = index if has_number else next_with_number[index + 1]
        tied_cols = sorted(ties)
        for index, cell in enumerate(cells):
            names = self.lines.cell_names(cell.text, linked)
            if not names or _any_between(tied_cols, cell.col, cell.col + len(cell.text)):
                continue
            value_cell = self._value_cell(cells, index, value_column, next_with_number)
            if value_cell is None:
                continue
            for name, quoted in self._pairs(cell, value_cell, names):
                tie = self.lines.tie(line_no, quoted, name, linked, clause=raw, around=around)
                if tie:
                    ties.setdefault(quoted.col, tie)
        return list(ties.values())

    @staticmethod
    def _value_cell(cells: list[Cell], index: int, value_column: int | None, next_with_number) -> Cell | None:
        if value_column is not None and value_column != index and value_column < len(cells):
            if next_with_number[value_column] == value_column:
                return cells[value_column]
        later = next_with_number[index + 1]
        return cells[later] if later is not None else None

    def _pairs(self, name_cell: Cell, value_cell: Cell, names: list[str]):
        name_parts = re.split(r"\s/\s", name_cell.text)
        value_parts, offset, starts = [], 0, []
        for part in re.split(r"(\s/\s)", value_cell.text):
            if re.fullmatch(r"\s/\s", part):
                offset += len(part)
                continue
            value_parts.append(part)
            starts.append(offset)
            offset += len(part)
        if len(names) > 1 and len(name_parts) == len(value_parts):
            for name_part, value_part, start in zip(name_parts, value_parts, starts):
                inner = self.lines.cell_names(name_part)
                quoted = _first_number(value_part, value_cell.col + start)
                if inner and quoted:
                    yield inner[0], quoted
            return
        quoted = _first_number(value_cell.text, value_cell.col)
        if quoted:
            yield names[0], quoted


_HEADING_LINE = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_BLOCK_START = re.compile(r"[ \t]*(?:#{1,6}(?:[ \t]|$)|[-*+][ \t]|\d+[.)][ \t]|>)")
_OPERATOR_AT_END = re.compile(r"[=:≈~≤≥<>＝：][ \t]*$")


def _starts_block(line: str) -> bool:
    """Whether a line starts a new block rather than continuing a paragraph (blank, heading, list item, quote)."""
    return not line.strip() or _BLOCK_START.match(line) is not None


def _any_between(sorted_cols: list[int], start: int, end: int) -> bool:
    """Whether a tied column lies in [start, end) (the cell already ties its own number)."""
    at = bisect_left(sorted_cols, start)
    return at < len(sorted_cols) and sorted_cols[at] < end


def links_to_artifacts(record, entries):
    """A function giving the ids of the artifacts (among `entries`) that one line of `record` links."""
    id_by_path = {entry.path: entry.id for entry in entries}

    def linked(line: str) -> set[str]:
        return {id_by_path[rel] for _, _, _, target in iter_links(line)
                if (rel := record.link_target_rel(target)) in id_by_path}
    return linked


def measured_numbers(units_only: bool, prose_decimals: bool = False):
    """What a results section must trace: numbers with a unit, and (unless `units_only`) every number
    written with a decimal point or a power of ten in tables, and with `prose_decimals` in prose too
    ("the relative error is 0.00000001", "within 1e-12 of the oracle").

    Not measured: a number inside a word, name or path (`fp16`, `sm_90`, `v1.2`, `§7.1`, a reference,
    whose code is blanked), a software version (`CUDA 12.4`, `torch 2.11.0`), the numbering of a heading
    or list item (`### 7.1 Timing`, `1.`), and whole numbers without a unit (counts, sizes, shapes:
    `48 cases`, `B=1 Hq=32`, `(1, 32, 8, 128)`).
    """
    def measured(text: str, is_table: bool) -> list[Quoted]:
        if not _DIGIT.search(text):
            return []
        found = numbers_with_units(text)
        if not units_only and (is_table or prose_decimals):
            taken = {number.col for number in found}
            found.extend(number for number in decimals(text)
                         if number.col not in taken and not _is_label(text, number))
        return found
    return measured


_VERSION_BEFORE = re.compile(r"(?<![\w-])(?:v|version|release|python|py|cuda|cu|cudnn|nccl|torch|pytorch|triton|jax"
                             r"|numpy|driver|gcc|clang|llvm|nvcc|rocm|ubuntu|debian|sm|compute\s+capability"
                             r"|版本)[ \t:]*$", re.IGNORECASE)
_NUMBERING = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+)?(?:§[ \t]*)?$")


def _is_label(text: str, number: Quoted) -> bool:
    """A number that labels rather than measures: a version after a software name, a heading's or item's numbering."""
    before = text[:number.col - 1]
    return bool(_VERSION_BEFORE.search(before[-40:]) or _NUMBERING.match(before))


_BAR_IN_NAME = re.compile(rf"(?:within[_ -]?|[<>]=?|[≤≥])[ \t]*({NUMBER})[ \t]*(pct|percent|%|x)?$", re.IGNORECASE)


def check_bars(artifacts) -> dict[str, tuple[float, ...]]:
    """The checks in the artifacts' results whose names state their bar, with the values the bar may be
    quoted as: `paged_within_1.1x` 1.1; `heuristic_within_10pct` 10 (%), 0.1 and 1.1 (a ratio);
    `read_ceiling_fraction>=0.85` 0.85."""
    bars: dict[str, tuple[float, ...]] = {}
    stack = list(artifacts)
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
            for key in node:
                match = _BAR_IN_NAME.search(str(key))
                quoted = parse_quoted(match.group(1)) if match else None
                if quoted is not None:
                    percent = (match.group(2) or "").lower() in ("pct", "percent", "%")
                    bars[str(key)] = ((quoted.value, quoted.value / 100, 1 + quoted.value / 100) if percent
                                      else (quoted.value,))
    return bars


def restates_a_bar(line: str, quoted: Quoted, bars: dict[str, tuple[float, ...]]) -> bool:
    """Whether `quoted` is the bar of a check its line names (`heuristic_within_10pct` … "at most 1.1 times")."""
    lowered = line.lower()
    return any(name.lower() in lowered and any(holds(quoted, value) for value in values)
               for name, values in bars.items())


def no_measured_numbers(text: str, is_table: bool) -> list[Quoted]:
    """For sections where only numbers tied to a name are checked (§1)."""
    return []
