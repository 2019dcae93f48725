"""The public API read from source, and which changes break a caller."""

from __future__ import annotations

import pytest

from gates.api_surface import diff_surfaces, module_name, module_surface

BASE = '''\
"""Decode attention host wrappers."""
from __future__ import annotations

import torch

from kernels.decode_attention.checks import check_inputs

SPLITKV_ENV = "DECODE_SPLITKV"
SPLITKV_DEFAULT = False


def attention_decode(q, k_cache, v_cache, visible_tokens, *, scale=None, out=None):
    return None


def attention_decode_splitkv(q, k_cache, v_cache, visible_tokens, *, num_splits, workspace=None):
    return None


def _launch(grid):
    return None


class LayerWorkspace:
    def __init__(self, max_batch, num_heads, head_dim, *, dtype="bf16"):
        pass

    def partials(self, num_splits):
        return None

    def _grow(self):
        pass
'''


def surface_diff(old: str, new: str, path="kernels/decode_attention/api.py", switches=()):
    return [c.message for c in diff_surfaces(module_surface(old, path, switches), module_surface(new, path, switches))]


def test_public_surface_of_a_module():
    surface = module_surface(BASE, "kernels/decode_attention/api.py")
    assert surface.module == "kernels.decode_attention.api"
    assert sorted(surface.entries) == [
        "LayerWorkspace", "LayerWorkspace.__init__", "LayerWorkspace.partials",
        "SPLITKV_DEFAULT", "SPLITKV_ENV", "attention_decode", "attention_decode_splitkv",
    ]
    params = surface.entries["attention_decode_splitkv"].params
    assert [(p.name, p.kind, p.default) for p in params][-2:] == [
        ("num_splits", "keyword-only", None), ("workspace", "keyword-only", "None")]


def test_dunder_all_decides_what_is_public():
    source = '__all__ = ["attention_decode", "LayerWorkspace"]\nfrom .api import attention_decode\n' \
             'from .workspace import LayerWorkspace\nfrom .api import helper\n'
    surface = module_surface(source, "kernels/__init__.py")
    assert surface.module == "kernels" and surface.exports == ["attention_decode", "LayerWorkspace"]
    assert sorted(surface.entries) == ["LayerWorkspace", "attention_decode"]


def test_package_reexports_are_public_without_dunder_all():
    surface = module_surface("import os\nfrom .api import attention_decode\n", "kernels/__init__.py")
    assert sorted(surface.entries) == ["attention_decode"]


def test_dataclass_fields_are_the_constructor():
    source = "from dataclasses import dataclass\n\n@dataclass\nclass Shape:\n    batch: int\n    heads: int = 8\n"
    new = source.replace("heads: int = 8", "heads: int")
    assert surface_diff(source, new) == [
        "kernels.decode_attention.api.Shape.__init__: parameter 'heads' was optional and is now required"]


BREAKS = [
    pytest.param("def attention_decode(q, k_cache, v_cache, visible_tokens, *, scale=None, out=None)",
                 "def attention_decode(q, k_cache, v_cache, visible_tokens, *, out=None)",
                 "parameter 'scale' removed", id="remove-parameter"),
    pytest.param("def attention_decode(q, k_cache, v_cache, visible_tokens, *, scale=None, out=None)",
                 "def attention_decode(q, k_cache, v_cache, visible_tokens, *, softmax_scale=None, out=None)",
                 "parameter 'scale' removed (renamed to 'softmax_scale'?)", id="rename-parameter"),
    pytest.param("def attention_decode(q, k_cache, v_cache, visible_tokens, *",
                 "def attention_decode(q, v_cache, k_cache, visible_tokens, *",
                 "parameter 'k_cache' moved from position 2 to 3", id="reorder-parameters"),
    pytest.param("visible_tokens, *, scale=None, out=None)",
                 "visible_tokens, *, scale=1.0, out=None)",
                 "default of 'scale' changed from None to 1.0", id="change-default"),
    pytest.param("visible_tokens, *, scale=None, out=None)",
                 "visible_tokens, *, scale, out=None)",
                 "parameter 'scale' was optional and is now required", id="optional-to-required"),
    pytest.param("def attention_decode(q, k_cache, v_cache, visible_tokens, *",
                 "def attention_decode(q, k_cache, v_cache, *, visible_tokens",
                 "parameter 'visible_tokens' became keyword-only", id="positional-to-keyword-only"),
    pytest.param("visible_tokens, *, scale=None, out=None)",
                 "visible_tokens, block_size, *, scale=None, out=None)",
                 "new parameter 'block_size' has no default", id="new-required-parameter"),
    pytest.param("def attention_decode_splitkv(", "def attention_decode_split_kv(",
                 "public name 'kernels.decode_attention.api.attention_decode_splitkv' removed", id="rename-function"),
    pytest.param("    def partials(self, num_splits):", "    def _partials(self, num_splits):",
                 "public name 'kernels.decode_attention.api.LayerWorkspace.partials' removed", id="remove-method"),
    pytest.param('*, dtype="bf16"):', '*, dtype="fp16"):',
                 "LayerWorkspace.__init__: default of 'dtype' changed from 'bf16' to 'fp16'", id="constructor-default"),
    pytest.param('SPLITKV_ENV = "DECODE_SPLITKV"\n', "",
                 "public name 'kernels.decode_attention.api.SPLITKV_ENV' removed", id="remove-constant"),
]


@pytest.mark.parametrize("before, after, message", BREAKS)
def test_breaking_changes_are_reported(before, after, message):
    assert before in BASE
    changes = surface_diff(BASE, BASE.replace(before, after, 1))
    assert any(message in c for c in changes), changes


GROWTH = [
    pytest.param("visible_tokens, *, scale=None, out=None)",
                 "visible_tokens, *, scale=None, out=None, num_splits=1)", id="add-optional-parameter"),
    pytest.param("def _launch(grid):", "def attention_decode_paged(q, k_cache, v_cache, block_table):\n"
                 "    return None\n\n\ndef _launch(grid):", id="add-function"),
    pytest.param("def _launch(grid):", "def _launch(grid, stream=None):", id="private-change"),
    pytest.param("    def _grow(self):", "    def grow(self, factor=2):\n        pass\n\n    def _grow(self):",
                 id="add-method"),
    pytest.param("    return None\n", "    return 42\n", id="body-change"),
    pytest.param("*, scale=None, out=None", "scale=None, *, out=None", id="keyword-only-to-positional"),
]


@pytest.mark.parametrize("before, after", GROWTH)
def test_additions_and_private_changes_are_fine(before, after):
    assert before in BASE
    assert surface_diff(BASE, BASE.replace(before, after, 1)) == []


def test_switch_constants_are_reported_as_route_changes():
    new = BASE.replace("SPLITKV_DEFAULT = False", "SPLITKV_DEFAULT = True")
    path = "kernels/decode_attention/api.py"
    changes = diff_surfaces(module_surface(BASE, path, ["SPLITKV_DEFAULT"]), module_surface(new, path, ["SPLITKV_DEFAULT"]))
    assert [(c.kind, c.message) for c in changes] == [
        ("route", "switch kernels.decode_attention.api.SPLITKV_DEFAULT changed from False to True")]
    assert changes[0].line == 9
    assert surface_diff(BASE, new) == []  # without a declared switch the value is not part of the API


def test_a_removed_module_removes_its_names():
    old = module_surface(BASE, "kernels/decode_attention/api.py")
    messages = [c.message for c in diff_surfaces(old, None)]
    assert "public name 'kernels.decode_attention.api.attention_decode' removed with its module" in messages
    assert not [m for m in messages if "LayerWorkspace.partials" in m]


def test_a_module_that_stops_parsing_is_a_break():
    changes = surface_diff(BASE, BASE + "\ndef broken(:\n")
    assert len(changes) == 1 and "does not parse" in changes[0]


@pytest.mark.parametrize("path, module", [
    ("kernels/__init__.py", "kernels"),
    ("kernels/decode_attention/api.py", "kernels.decode_attention.api"),
])
def test_module_name(path, module):
    assert module_name(path) == module
