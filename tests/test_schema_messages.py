"""Schema errors say what is allowed and what was probably meant."""

from gates.model.schemas import validate


def messages(document):
    return {e.path: e.message for e in validate("record", document)}


def test_an_unknown_key_names_the_likely_key_and_the_allowed_ones():
    found = messages({"reviewer": []})
    assert "unknown key 'reviewer' (did you mean 'reviewers'?; allowed: api, authors," in found[("reviewer",)]


def test_an_unknown_key_unlike_any_other_only_lists_the_allowed_ones():
    assert "did you mean" not in messages({"zzz": 1})[("zzz",)]


def test_a_value_outside_an_enumeration_names_the_allowed_values():
    assert messages({"stage": "Q"})[("stage",)] == "stage: 'Q' is not one of ['A', 'B', 'C', 'D']"
