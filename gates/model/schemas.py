"""The JSON Schemas of records, evidence artifacts, the policy and the configuration; the only module importing jsonschema."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SCHEMA_DIR = Path(__file__).parent / "schema"


@dataclass(frozen=True)
class SchemaError:
    """One violation: where (a key path into the document) and what.

    `choices` lists what the schema allows there (the known keys for an unknown key,
    the values of an enum), so that a caller can suggest the likely intended one.
    """

    path: tuple
    message: str
    choices: tuple[str, ...] = ()


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict:
    """`name` is "record", "evidence", "policy" or "config"."""
    with open(SCHEMA_DIR / f"{name}.schema.json", encoding="utf-8") as handle:
        return json.load(handle)


@lru_cache(maxsize=None)
def _validator(name: str):
    import jsonschema

    schema = load_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def validate(name: str, document) -> list[SchemaError]:
    """Every violation of schema `name` by `document`, most specific first, in document order."""
    errors = []
    for error in _validator(name).iter_errors(document):
        path = tuple(error.absolute_path)
        message = error.message
        choices: tuple[str, ...] = ()
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = set(error.schema.get("properties", {}))
            extra = sorted(str(key) for key in error.instance if key not in known)
            choices = tuple(sorted(known))
            if extra:
                path = path + (extra[0],)
                message = "; ".join(_unknown_key(key, known) for key in extra)
        elif error.validator == "required":
            message = error.message.replace(" is a required property", " is required")
        elif error.validator == "enum":
            choices = tuple(str(value) for value in error.validator_value)
            if "propertyNames" in error.schema_path:
                path = path + (error.instance,)
                message = _unknown_key(str(error.instance), set(choices))
        where = ".".join(str(part) for part in error.absolute_path)
        errors.append(SchemaError(path, f"{where}: {message}" if where else message, choices))
    errors.sort(key=lambda e: [str(p) for p in e.path])
    return errors


def _unknown_key(key: str, known: set) -> str:
    """"unknown key 'reviewer' (did you mean 'reviewers'?; allowed: ...)"."""
    guess = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    hint = f"did you mean {guess[0]!r}?; " if guess else ""
    return f"unknown key {key!r} ({hint}allowed: {', '.join(sorted(known)) or 'none'})"
