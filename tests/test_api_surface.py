"""The public API read from source, and which changes break a caller."""

from __future__ import annotations

import pytest

from gates.model.errors import InputError
from gates.python_api.api_surface import diff_surfaces, module_surface
from gates.python_api.module_scope import module_name, module_reader

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


PACKAGE = {
    "kernels/__init__.py": '"""Reference kernels."""\nfrom .impl import *\n',
    "kernels/impl.py": """\
__all__ = ["attention_decode", "LayerWorkspace"]


def attention_decode(q, k_cache, v_cache, *, scale=None):
    return None


def helper(x):
    return x


class LayerWorkspace:
    def __init__(self, max_batch, *, dtype="bf16"):
        pass
""",
}


def package_surface(files, path="kernels/__init__.py"):
    """The surface of `path`, star imports read from `files` (repository path -> source)."""
    return module_surface(files[path], path, read_module=module_reader(files.get))


def package_diff(old_files, new_files, path="kernels/__init__.py"):
    return [c.message for c in diff_surfaces(package_surface(old_files, path), package_surface(new_files, path))]


def edited(files, path, before, after):
    assert before in files[path]
    return {**files, path: files[path].replace(before, after, 1)}


def test_a_star_import_brings_in_the_dunder_all_of_the_module():
    surface = package_surface(PACKAGE)
    assert sorted(surface.entries) == ["LayerWorkspace", "LayerWorkspace.__init__", "attention_decode"]
    assert surface.entries["attention_decode"].line == 2  # the star import in kernels/__init__.py
    assert surface.entries["attention_decode"].origin == ("kernels/impl.py", 4)
    assert surface.star_paths == ["kernels/impl.py"]


def test_without_dunder_all_a_star_import_brings_in_every_public_top_level_name():
    files = edited(PACKAGE, "kernels/impl.py", '__all__ = ["attention_decode", "LayerWorkspace"]\n',
                   "import math\nfrom kernels.checks import check_inputs\n_BLOCK = 64\n")
    surface = package_surface(files)
    assert sorted(n for n in surface.entries if "." not in n) == [
        "LayerWorkspace", "attention_decode", "check_inputs", "helper", "math"]


def test_a_name_removed_from_the_star_imported_module_is_removed_from_the_package():
    files = edited(PACKAGE, "kernels/impl.py", '"attention_decode", "LayerWorkspace"', '"attention_decode"')
    assert package_diff(PACKAGE, files) == [
        "public name 'kernels.LayerWorkspace' removed", "public name 'kernels.LayerWorkspace.__init__' removed"]


def test_a_parameter_change_in_the_star_imported_module_is_a_break_of_the_package():
    files = edited(PACKAGE, "kernels/impl.py", "*, scale=None)", "*, softmax_scale=None)")
    changes = diff_surfaces(package_surface(PACKAGE), package_surface(files))
    assert [c.message for c in changes] == [
        "kernels.attention_decode: parameter 'scale' removed (renamed to 'softmax_scale'?)"]
    assert changes[0].origin == ("kernels/impl.py", 4)


def test_star_imports_are_followed_through_a_chain():
    files = {
        "kernels/__init__.py": "from kernels.decode.api import *\n",
        "kernels/decode/api.py": "from ..common import *\n\n\ndef attention_decode(q):\n    return None\n",
        "kernels/common.py": "def check_inputs(q, *, strict=True):\n    return None\n",
    }
    surface = package_surface(files)
    assert sorted(surface.entries) == ["attention_decode", "check_inputs"]
    assert surface.star_paths == ["kernels/decode/api.py", "kernels/common.py"]
    stricter = edited(files, "kernels/common.py", "strict=True", "strict")
    assert package_diff(files, stricter) == [
        "kernels.check_inputs: parameter 'strict' was optional and is now required"]


def test_a_star_import_cycle_ends():
    files = {
        "kernels/__init__.py": "from .a import *\n",
        "kernels/a.py": "from .b import *\n\n\ndef from_a():\n    return None\n",
        "kernels/b.py": "from .a import *\nfrom kernels import *\n\n\ndef from_b():\n    return None\n",
    }
    assert sorted(package_surface(files).entries) == ["from_a", "from_b"]


@pytest.mark.parametrize("impl, problem", [
    pytest.param("def attention_decode(:\n", "kernels/impl.py does not parse: ", id="does-not-parse"),
    pytest.param(InputError("kernels/impl.py", 1, "not valid UTF-8 (byte offset 7)"),
                 "kernels/impl.py not valid UTF-8 (byte offset 7)", id="unreadable"),
])
def test_a_repository_module_that_cannot_be_read_fails_closed(impl, problem):
    def read_text(path):
        if path == "kernels/impl.py" and isinstance(impl, Exception):
            raise impl
        return {**PACKAGE, "kernels/impl.py": impl}.get(path)

    path = "kernels/__init__.py"
    surface = module_surface(PACKAGE[path], path, read_module=module_reader(read_text))
    assert surface.error.startswith(f"cannot follow 'from .impl import *' (line 2): {problem}")
    changes = [c.message for c in diff_surfaces(package_surface(PACKAGE), surface)]
    assert len(changes) == 1 and changes[0].startswith("module kernels cannot follow 'from .impl import *'")


def test_a_relative_star_import_above_the_top_level_package_fails_closed():
    surface = package_surface({"kernels/__init__.py": "from .. import *\n"})
    assert surface.error == "cannot follow 'from .. import *' (line 1): relative import beyond the top-level package"


def test_a_star_import_from_outside_the_repository_stays_an_entry():
    files = {**PACKAGE, "kernels/__init__.py": "from torch.nn.functional import *\nfrom .impl import *\n"}
    surface = package_surface(files)
    assert surface.entries["*:torch.nn.functional"].kind == "star-import"
    dropped = edited(files, "kernels/__init__.py", "from torch.nn.functional import *\n", "")
    assert package_diff(files, dropped) == [
        "star import 'from torch.nn.functional import *' removed from 'kernels'"]
    gone = [c.message for c in diff_surfaces(surface, None)]
    assert "star import 'from torch.nn.functional import *' removed from 'kernels' with its module" in gone


def test_a_star_import_the_repository_comes_to_hold_is_not_a_removal():
    before = {"kernels/__init__.py": PACKAGE["kernels/__init__.py"]}  # kernels/impl.py not there yet
    assert sorted(package_surface(before).entries) == ["*:kernels.impl"]
    assert package_diff(before, PACKAGE) == []


def test_without_a_reader_star_imports_stay_entries():
    surface = module_surface(PACKAGE["kernels/__init__.py"], "kernels/__init__.py")
    assert sorted(surface.entries) == ["*:kernels.impl"]


def test_a_package_folder_comes_before_a_module_file_of_the_same_name():
    read_module = module_reader({"kernels/impl/__init__.py": "A = 1\n", "kernels/impl.py": "B = 2\n"}.get)
    assert read_module("kernels.impl") == ("A = 1\n", "kernels/impl/__init__.py")
    assert read_module("kernels.missing") is None
