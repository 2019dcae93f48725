"""G5 reads a module the way Python runs it: aliases, coroutines, constructors, protocol methods,
the import system's package-over-module rule and source encodings.

Each case is a change that breaks callers through one of these, beside the honest change
next to it that must pass.
"""

from __future__ import annotations

import pytest

from gates.python_api.api_surface import diff_surfaces, module_surface
from gates.python_api.module_scope import module_reader
from gitrepo_builder import ADA, KERNEL_API, seeded_repo

PATH = "kernels/api.py"


def diff(old: str, new: str) -> list[str]:
    read_module = module_reader({PATH: None}.get)
    return [c.message for c in diff_surfaces(module_surface(old, PATH, read_module=read_module),
                                             module_surface(new, PATH, read_module=read_module))]


ALIASED_METHOD = '''\
class DecodeAttention:
    def _forward(self, q, k_cache, v_cache):
        return None

    __call__ = _forward
'''

ALIASED_FUNCTION = '''\
def _decode(q, k_cache, v_cache):
    return None


attention_decode = _decode
'''

PLAIN = "def attention_decode(q, k_cache, v_cache):\n    return None\n"

WORKSPACE = '''\
class LayerWorkspace:
    def __init__(self, max_batch, dtype="bf16"):
        self.max_batch = max_batch
'''

CACHE = '''\
class PagedCache:
    def __init__(self, pages):
        self.pages = pages

    def __getitem__(self, index):
        return self.pages[index]

    def __len__(self):
        return len(self.pages)
'''

BREAKS = [
    pytest.param(ALIASED_METHOD, ALIASED_METHOD.replace("q, k_cache, v_cache", "q, k_cache"),
                 "kernels.api.DecodeAttention.__call__: parameter 'v_cache' removed", id="method-alias-of-private"),
    pytest.param(ALIASED_FUNCTION, ALIASED_FUNCTION.replace("q, k_cache, v_cache", "q, k_cache"),
                 "kernels.api.attention_decode: parameter 'v_cache' removed", id="function-alias-of-private"),
    pytest.param(PLAIN, PLAIN.replace("def ", "async def "),
                 "'kernels.api.attention_decode' is now `async def`: callers get a coroutine instead of its result",
                 id="made-async"),
    pytest.param(WORKSPACE, WORKSPACE + "\n    def __new__(cls, max_batch):\n        return super().__new__(cls)\n",
                 "kernels.api.LayerWorkspace: parameter 'dtype' removed (the new `__new__` must accept what "
                 "`LayerWorkspace(...)` accepted)", id="narrowed-by-new"),
    pytest.param(CACHE, CACHE.replace("    def __getitem__(self, index):\n        return self.pages[index]\n\n", ""),
                 "public name 'kernels.api.PagedCache.__getitem__' removed", id="protocol-method-removed"),
    pytest.param(CACHE, CACHE.replace("__len__(self)", "__len__(self, pages)"),
                 "kernels.api.PagedCache.__len__: new parameter '#2' has no default (callers break)",
                 id="protocol-method-takes-more"),
]

HONEST = [
    pytest.param(ALIASED_METHOD, ALIASED_METHOD.replace("v_cache)", "v_cache, scale=None)"), id="alias-grows"),
    pytest.param(PLAIN.replace("def ", "async def "), PLAIN.replace("def ", "async def ").replace("v_cache)",
                                                                                            "v_cache, out=None)"),
                 id="async-stays-async"),
    pytest.param(WORKSPACE, WORKSPACE + "\n    def __new__(cls, *args, **kwargs):\n        return super().__new__(cls)\n",
                 id="new-that-takes-anything"),
    pytest.param(CACHE, CACHE.replace("__getitem__(self, index)", "__getitem__(self, key)")
                 .replace("pages[index]", "pages[key]"), id="protocol-parameter-renamed"),
    pytest.param(CACHE, CACHE + "\n    def __repr__(self):\n        return 'PagedCache'\n", id="repr-added"),
]


@pytest.mark.parametrize("base, head, message", BREAKS)
def test_a_break_python_would_show_callers_is_reported(base, head, message):
    assert message in diff(base, head)


@pytest.mark.parametrize("base, head", HONEST)
def test_the_honest_change_beside_it_passes(base, head):
    assert diff(base, head) == []


def g5(findings):
    return [(f.path, f.message) for f in findings if f.gate == "G5" and f.severity == "error"]


API = "src/kernels/decode_attention/api.py"


def test_a_package_added_beside_a_module_of_the_same_name_is_what_python_imports(tmp_path):
    repo = seeded_repo(tmp_path / "repo", package_root="src/")
    repo.branch("shadow")
    repo.write("src/kernels/decode_attention/api/__init__.py",
               "def attention_decode(q, k_cache, v_cache, *, scale=None, out=None):\n    return None\n")
    repo.commit("A package beside api.py", who=ADA)
    assert g5(repo.check()) == [(
        "src/kernels/decode_attention/api/__init__.py",
        "public API break: kernels.decode_attention.api.attention_decode: parameter 'visible_tokens' removed "
        "(Python imports kernels.decode_attention.api from src/kernels/decode_attention/api/__init__.py now, not "
        f"from {API}); the public API may only grow")]


def test_a_module_added_beside_a_package_changes_nothing(tmp_path):
    repo = seeded_repo(tmp_path / "repo", package_root="src/", files={
        "src/kernels/ops/__init__.py": "def fused(q):\n    return None\n"})
    repo.branch("dead-module")
    repo.write("src/kernels/ops.py", "def fused():\n    return None\n")
    repo.commit("A module the package hides", who=ADA)
    assert g5(repo.check()) == []


def test_a_coding_cookie_is_honoured_the_way_python_honours_it(tmp_path):
    repo = seeded_repo(tmp_path / "repo", package_root="src/")
    repo.branch("utf7")
    hidden = "+AAo-def attention_decode(q):+AAo-    return None"  # in UTF-7, `+AAo-` is a newline
    repo.write(API, ("# coding: utf-7\n" + KERNEL_API + f"# {hidden}\n").encode("ascii"))
    repo.commit("A comment", who=ADA)
    assert (API, "public API break: kernels.decode_attention.api.attention_decode: parameter 'k_cache' removed; "
                 "the public API may only grow") in g5(repo.check())


def test_a_latin_1_source_with_its_cookie_reads_as_written(tmp_path):
    repo = seeded_repo(tmp_path / "repo", package_root="src/")
    repo.branch("latin1")
    repo.write(API, ("# -*- coding: latin-1 -*-\n# Grüße\n" + KERNEL_API).encode("latin-1"))
    repo.commit("A comment in latin-1", who=ADA)
    assert g5(repo.check()) == []
