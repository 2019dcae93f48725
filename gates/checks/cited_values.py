"""The values a record's cited artifacts hold, and whether a quoted number is the value it names.

`CitedValues` reads the `results` of every artifact a record cites and answers the questions
`gates.checks.number_trace` asks while it reads the text: which value a reference
(`` `ARTIFACT-ID:KEY.PATH` ``) or a metric name points at, which of a key's values the dtype and
case words of a clause pick, and whether the number equals that value or meets the bound. A `Tie`
is one number tied to its value (with `Tie.problem` when the tie cannot be checked and
`Tie.mismatch()` when the value differs); `TraceError` is a reference that names no value.

The words that present a number (`=`, `≈`, `is`, `≥`, `at most` …: `OPERATOR`, `RELATION_WORDS`)
and the edges of a name in prose (`NAME_START`, `NAME_END`, `spelled`) are shared with the tracer.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache

from gates.checks.quoted_numbers import UNITS, WORD_CHAR, Quoted, holds, parse_quoted, stored_unit


_REFERENCE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*):(\S+)$")

RELATION_WORDS = {
    "≤": "≤", "<=": "≤", "at most": "≤", "no more than": "≤", "not more than": "≤", "up to": "≤",
    "<": "<", "below": "<", "under": "<", "less than": "<", "fewer than": "<", "lower than": "<",
    "≥": "≥", ">=": "≥", "at least": "≥", "no less than": "≥", "not less than": "≥",
    ">": ">", "above": ">", "over": ">", "more than": ">", "greater than": ">", "higher than": ">",
}
RELATION = "|".join(re.escape(word) for word in sorted(RELATION_WORDS, key=len, reverse=True))
HEDGE = r"(?:~|≈|≃|approx\.|(?:about|around|roughly|approximately|only|just|exactly|nearly)\b)"
_EQUALS = (r"(?:=|≈|~|≃|:|＝|：|→|->|=>|⇒|\(|（|\b(?:is|was|are|were|of|equals|equal to|equalled|reaches|reached|"
           r"hits|hit|reads|read|shows|showed|measures|measured|totals|stays at|stood at|sits at|comes to|came to)\b)")
# `name = v`, `name was ~v`, `name (v)`, `name → v`, `name ≥ v`, `name is at most v`
OPERATOR = (rf"(?:(?P<rel>{RELATION})|{_EQUALS}(?:[ \t]*(?P<rel2>{RELATION}))?)(?:[ \t]*{HEDGE})?")

_NOT_A_NAME = {"max", "min", "limit", "bound", "tolerance", "value", "values"}

# A name is not read inside a longer word or path; CJK text may touch it ("fp16的rel_l2为0.0002")
NAME_START = rf"(?<!{WORD_CHAR})(?<![.`])"
NAME_END = rf"(?!{WORD_CHAR}|`|\.\w)"
_WORD_BREAK = re.compile(rf"(?:(?!{WORD_CHAR})[^.+-])+")
# How a sentence may spell a dtype that an artifact's keys write short
_DTYPE_SPELLINGS = {"float16": "fp16", "half": "fp16", "f16": "fp16", "float32": "fp32", "f32": "fp32",
                    "bfloat16": "bf16", "float64": "fp64", "double": "fp64", "f64": "fp64", "float8": "fp8"}
_SELECTOR = re.compile(r"\[(\d+)\]|\[([^=\]]+)=([^\]]*)\]")
# The parts of a key's name: `one_call_layer` is one, call and layer
_NAME_PARTS = re.compile(r"[_\-]+")


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

        self.spelled = {_collapsed(name): name for name in sorted(self._leaves, reverse=True)}
        self.spelled.update({_collapsed(name): name for name in sorted(self._metrics, reverse=True)})

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
        return self.spelled.get(_collapsed(text), text)

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
        value, last_key = walk_path(results, path, reference)
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
            last_key = walk_path(self.artifacts[artifact_id], path.removeprefix("results."), reference, context)[1]
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
            alternatives = "|".join(map(spelled, names)) or r"(?!x)x"
            self._name_before = re.compile(rf"{NAME_START}((?i:{alternatives})){NAME_END}[ \t]*(?:{OPERATOR})?"
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


def walk_path(data, path: str, reference: str, context: set | None = None):
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


def spelled(name: str) -> str:
    """A pattern for a name that may also be written with spaces or hyphens for `_` (matched ignoring case)."""
    return re.sub(r"_+", "[ _-]+", re.escape(name))
