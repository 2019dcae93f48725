"""Safe YAML for untrusted front matter: plain data only, with the line of every key.

The text is composed into a node graph by PyYAML's safe parser (the C one when
available) and then turned into Python data here, so that every rule is enforced in
one place: only the standard scalar, sequence and mapping tags; no duplicate keys;
no merge keys; a bounded number of alias uses and of nodes (a YAML "billion laughs"
document is rejected after a few thousand steps); no cycles; no number written with
more than MAX_NUMBER_CHARS characters (its conversion would be slow or overflow). Timestamps stay
strings, so the data is exactly what JSON Schema sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from gates.model.errors import InputError

try:
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader

MAX_ALIASES = 100
MAX_NODES = 100_000
MAX_DEPTH = 64
MAX_NUMBER_CHARS = 100  # a number written longer than this is refused before it is converted

_TAG = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_TAG + "str", _TAG + "int", _TAG + "float", _TAG + "bool", _TAG + "null", _TAG + "timestamp"}
_SEQ_TAG = _TAG + "seq"
_MAP_TAG = _TAG + "map"


@dataclass
class YamlDocument:
    """Plain data and the 1-based line of each key path, e.g. ("questions", 2, "decision")."""

    data: object
    lines: dict[tuple, int] = field(default_factory=dict)


class _Builder:
    def __init__(self, path: str, line_offset: int):
        self.path = path
        self.line_offset = line_offset
        self.lines: dict[tuple, int] = {}
        self.nodes = 0
        self.aliases = 0
        self.seen: set[int] = set()
        self.active: set[int] = set()
        self.scalars = yaml.constructor.SafeConstructor()

    def fail(self, node, message: str) -> InputError:
        mark = node.start_mark
        return InputError(self.path, mark.line + 1 + self.line_offset, message, col=mark.column + 1)

    def build(self, node, key_path: tuple, depth: int):
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self.fail(node, f"front matter has more than {MAX_NODES} YAML nodes")
        if depth > MAX_DEPTH:
            raise self.fail(node, f"front matter nests deeper than {MAX_DEPTH} levels")
        ident = id(node)
        if ident in self.active:
            raise self.fail(node, "recursive YAML alias")
        if ident in self.seen:
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise self.fail(node, f"more than {MAX_ALIASES} YAML alias uses (alias bomb?)")
        self.seen.add(ident)
        kind = getattr(node, "id", None)
        if kind == "scalar":
            return self.scalar(node)
        self.active.add(ident)
        try:
            if kind == "sequence":
                if node.tag != _SEQ_TAG:
                    raise self.fail(node, f"YAML tag {node.tag!r} is not allowed")
                items = []
                for index, child in enumerate(node.value):
                    self.lines[key_path + (index,)] = child.start_mark.line + 1 + self.line_offset
                    items.append(self.build(child, key_path + (index,), depth + 1))
                return items
            if node.tag != _MAP_TAG:
                raise self.fail(node, f"YAML tag {node.tag!r} is not allowed")
            mapping: dict = {}
            for key_node, value_node in node.value:
                if key_node.tag == _TAG + "merge":
                    raise self.fail(key_node, "YAML merge keys (<<) are not allowed")
                key = self.build(key_node, key_path, depth + 1)
                if isinstance(key, (list, dict)):
                    raise self.fail(key_node, "a mapping key must be a scalar")
                if key in mapping:
                    first = self.lines.get(key_path + (key,), "?")
                    raise self.fail(key_node, f"duplicate key {key!r} (first defined on line {first})")
                self.lines[key_path + (key,)] = key_node.start_mark.line + 1 + self.line_offset
                mapping[key] = self.build(value_node, key_path + (key,), depth + 1)
            return mapping
        finally:
            self.active.discard(ident)

    def scalar(self, node):
        tag = node.tag
        if tag not in _SCALAR_TAGS:
            raise self.fail(node, f"YAML tag {tag!r} is not allowed")
        if tag == _TAG + "str" or tag == _TAG + "timestamp":
            return str(node.value)
        if tag in (_TAG + "int", _TAG + "float") and len(node.value) > MAX_NUMBER_CHARS:
            raise self.fail(node, f"bad {tag.rsplit(':', 1)[-1]} value: a number written with {len(node.value)} "
                            f"characters (at most {MAX_NUMBER_CHARS}); write it in scientific notation")
        try:
            if tag == _TAG + "int":
                return self.scalars.construct_yaml_int(node)
            if tag == _TAG + "float":
                return self.scalars.construct_yaml_float(node)
            if tag == _TAG + "bool":
                return self.scalars.construct_yaml_bool(node)
            return None
        except (ValueError, yaml.YAMLError) as exc:
            raise self.fail(node, f"bad {tag.rsplit(':', 1)[-1]} value: {exc}") from None


def load_yaml(text: str, path: str, line_offset: int = 0) -> YamlDocument:
    """Parse one YAML document from untrusted `text`.

    `line_offset` is added to every line so that lines refer to the enclosing file.
    Raises `InputError` naming `path` and the line for every rejected construct.
    """
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = (mark.line + 1 + line_offset) if mark else 1 + line_offset
        col = (mark.column + 1) if mark else 1
        problem = exc.problem or exc.context or "invalid YAML"
        raise InputError(path, line, f"invalid YAML: {problem}", col=col) from None
    except yaml.YAMLError as exc:
        raise InputError(path, 1 + line_offset, f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()
    if node is None:
        return YamlDocument(None, {})
    builder = _Builder(path, line_offset)
    try:
        data = builder.build(node, (), 0)
    except RecursionError:
        raise InputError(path, 1 + line_offset, "front matter nests too deeply") from None
    return YamlDocument(data, builder.lines)
