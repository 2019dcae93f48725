"""The repository policy: path globs to risk levels, validated by its schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from gates.model.errors import InputError
from gates.model.policy import POLICY_PATH, Policy, glob_matches, load_policy, parse_policy

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "pattern, path, expected",
    [
        ("kernels/decode_attention/**", "kernels/decode_attention/api.py", True),
        ("kernels/decode_attention/**", "kernels/decode_attention/sub/x.py", True),
        ("kernels/decode_attention/**", "kernels/decode_attention_v2/api.py", False),
        ("kernels/*.py", "kernels/decode_layer.py", True),
        ("kernels/*.py", "kernels/decode_attention/api.py", False),
        ("**/routing*", "kernels/routing.yaml", True),
        ("**/routing*", "routing.yaml", True),
        ("docs/", "docs/design/a.md", True),
        ("tests/test_?.py", "tests/test_a.py", True),
        ("README.md", "README.md", True),
        ("README.md", "docs/README.md", False),
        ("a.b", "axb", False),
    ],
)
def test_glob_semantics(pattern, path, expected):
    assert glob_matches(pattern, path) is expected


POLICY = """\
schema_version: 1
default_level: L1
rules:
  - paths: ["kernels/decode_attention/**"]
    level: L4
    reason: shared hot path
  - paths: ["kernels/**"]
    level: L2
  - paths: ["docs/**"]
    level: L0
api:
  packages: [kernels]
  switches: ["kernels.decode_layer:SPLITKV_DEFAULT"]
"""


@pytest.mark.parametrize(
    "path, level",
    [
        ("kernels/decode_attention/api.py", "L4"),  # the highest matching rule wins
        ("kernels/decode_layer.py", "L2"),
        ("docs/index.md", "L0"),  # a matching rule may set a level below the default
        ("setup.py", "L1"),  # no rule: the default
        (POLICY_PATH, "L4"),  # the policy file is always L4
    ],
)
def test_levels(path, level):
    assert parse_policy(POLICY).level_of(path)[0] == level


def test_loosenings_name_what_was_lowered():
    base = parse_policy(POLICY)
    looser = parse_policy(POLICY.replace("level: L4", "level: L1").replace("default_level: L1", "default_level: L0")
                          .replace('  switches: ["kernels.decode_layer:SPLITKV_DEFAULT"]\n', ""))
    assert base.loosenings(looser) == [
        "default_level L1 -> L0",
        "kernels/decode_attention/** L4 -> L1",
        "switch kernels.decode_layer:SPLITKV_DEFAULT no longer checked",
    ]
    assert looser.loosenings(base) == []
    assert base.loosenings(parse_policy(POLICY.replace('["docs/**"]', '["docs/**", "kernels/x/**"]'))) == []


@pytest.mark.parametrize(
    "text, line, message",
    [
        pytest.param("schema_version: 1\nrules:\n  - paths: [a]\n    level: L9\n", 4, "'L9' is not one of", id="bad-level"),
        pytest.param("schema_version: 1\nrules: []\nextra: 1\n", 3, "unknown key 'extra'", id="unknown-key"),
        pytest.param("schema_version: 2\nrules: []\n", 1, "schema_version", id="wrong-version"),
        pytest.param("rules:\n  - paths: []\n    level: L3\n", 1, "schema_version", id="missing-version"),
        pytest.param("schema_version: 1\nrules:\n  - paths: [/etc/passwd]\n    level: L3\n", 3, "does not match", id="absolute-glob"),
        pytest.param("schema_version: 1\nrules: [\n", 3, "invalid YAML", id="broken-yaml"),
        pytest.param("", 1, "policy file is empty", id="empty"),
        pytest.param("schema_version: 1\nschema_version: 1\nrules: []\n", 2, "duplicate key", id="duplicate-key"),
    ],
)
def test_invalid_policies_name_file_and_line(text, line, message):
    with pytest.raises(InputError) as error:
        parse_policy(text)
    assert error.value.path == POLICY_PATH and error.value.line == line
    assert message in error.value.message


def test_the_repository_policy_is_valid_and_guards_the_kernels():
    policy = load_policy(REPO)
    assert isinstance(policy, Policy)
    for path in ("kernels/decode_attention/kernel_partial.py", "kernels/decode_attention/api.py"):
        assert policy.level_of(path)[0] == "L4"
    for path in ("kernels/decode_layer.py", "kernels/split_heuristic.py"):
        assert policy.level_of(path)[0] in ("L3", "L4")
    assert policy.level_of("docs/design/splitkv-decode-attention.md")[0] == "L0"
    assert "kernels" in policy.api_packages


def test_no_policy_file_means_no_policy(tmp_path):
    assert load_policy(tmp_path) is None


def test_every_switch_of_the_repository_policy_names_a_module_constant():
    from gates.python_api.api_surface import module_surface

    policy = load_policy(REPO)
    for switch in policy.switches:
        module, _, name = switch.partition(":")
        path = module.replace(".", "/") + ".py"
        source = (REPO / path).read_text(encoding="utf-8")
        entry = module_surface(source, path, [name]).entries[f"switch:{name}"]
        assert entry.value is not None, f"{switch}: {path} defines no module-level {name}"


def test_reading_more_of_the_api_by_trust_is_a_loosening():
    base = parse_policy("schema_version: 1\nrules: []\napi:\n  packages: [kernels]\n  import_fallback: false\n"
                        "  internal_decorators: [triton.jit]\n")
    looser = parse_policy("schema_version: 1\nrules: []\napi:\n  packages: [kernels]\n"
                          "  internal_decorators: [triton.jit, kernels.register]\n  transparent_decorators: [docs.add]\n")
    assert base.loosenings(looser) == ["api import_fallback turned on", "api internal_decorators added kernels.register",
                                       "api transparent_decorators added docs.add"]
    back_to_the_defaults = parse_policy("schema_version: 1\nrules: []\napi:\n  packages: [kernels]\n")
    assert base.loosenings(back_to_the_defaults) == [
        "api import_fallback turned on", "api internal_decorators added triton.autotune, triton.heuristics"]
    assert looser.loosenings(looser) == [] and base.loosenings(base) == []


def test_leaving_a_module_unchecked_is_a_loosening():
    base = parse_policy("schema_version: 1\nrules: []\napi:\n  packages: [kernels]\n")
    looser = parse_policy("schema_version: 1\nrules: []\napi:\n  packages: [kernels]\n  unchecked_modules: [kernels]\n")
    assert base.loosenings(looser) == ["api unchecked_modules added kernels"]
    assert looser.loosenings(base) == []
