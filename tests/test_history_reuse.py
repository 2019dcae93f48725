"""What a history run reuses from one commit to the next, and that a reused result follows the files it was read from.

- a kept surface is served again on a root tree where it was found the same (commit i's head tree is commit
  i+1's base tree, and a revert brings an earlier tree back), never on a tree where a file it read differs;
- a Python file's token digest is kept by its object id, so a comment-only edit and a real break of the same
  file in the next commit are told apart;
- a new module text is walked once for the guard's definitions, the names changed in place and whether any
  call reads a name with a default: the one walk finds what each reader finds on its own.
- the module a surface reading starts from is bound again only for a new text or where a file its binding read
  changed (a star import), and a break through it is still reported;
- `evolve`, the copy of an entry or parameter a reading makes, is `dataclasses.replace`.
- the walk of a new module text, which looks each node up by its class, finds what a chain of `isinstance` tests finds.
"""

from __future__ import annotations

import ast
from dataclasses import fields, replace
from pathlib import Path

import pytest

import gates.history.api_compat as api_compat
import gates.history.comment_edits as comment_edits
from gates.history.git_repo import load_change_set
from gates.history.ratchet import check_history
from gates.python_api.lazy_exports import changed_in_place, changed_name
from gates.python_api.scope_model import KEYWORD_ONLY, POSITIONAL, Entry, Parameter, evolve
from gates.python_api.static_guard import ModuleWalk, dynamic_constructs, walk_module
from gates.python_api.switch_reads import name_reads, reads_a_name
from gitrepo_builder import ADA, MAX, POLICY, seeded_repo

INIT = "kernels/ops/__init__.py"
IMPL = "kernels/ops/_impl.py"
OTHER = "kernels/ops/other.py"

WITH_EPS = "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n"
WITHOUT_EPS = "def rms_norm(x, weight):\n    return x\n"
BREAK = ("public API break: kernels.ops.rms_norm: parameter 'eps' removed (through the import in "
         "kernels/ops/__init__.py); the public API may only grow")


@pytest.fixture
def no_readings(monkeypatch):
    """The history run's readings kept by id start empty (surfaces, scopes, digests, decoded texts)."""
    for cache in ("_SURFACES", "_SCOPES", "_TEXTS"):
        monkeypatch.setattr(api_compat, cache, {})
    for cache in ("_DIGESTS", "_CODE_DIGESTS"):
        monkeypatch.setattr(comment_edits, cache, {})


def test_a_break_is_reported_again_when_a_revert_brings_back_a_tree_read_before(tmp_path, monkeypatch, no_readings):
    reads = []
    real = api_compat._read_surface

    def counted(ctx, read_text, path, *args, **kwargs):
        reads.append((ctx.change.head, path))
        return real(ctx, read_text, path, *args, **kwargs)

    monkeypatch.setattr(api_compat, "_read_surface", counted)
    repo = seeded_repo(tmp_path / "repo", files={
        IMPL: WITH_EPS, OTHER: "def other(x):\n    return x\n", INIT: "from kernels.ops._impl import rms_norm\n"})
    start = repo.sha("HEAD")
    repo.write(IMPL, "# the reference RMSNorm\n" + WITH_EPS)
    repo.commit("rms_norm: a comment", who=ADA)
    comment = repo.sha("HEAD")
    repo.write(IMPL, "# the reference RMSNorm\n" + WITHOUT_EPS)
    repo.commit("rms_norm: no eps", who=ADA)
    first_break = repo.sha("HEAD")
    repo.write(IMPL, "# the reference RMSNorm\n" + WITH_EPS)
    repo.commit("rms_norm: eps again", who=ADA)
    repo.write(IMPL, "# the reference RMSNorm\n" + WITHOUT_EPS)
    repo.commit("rms_norm: no eps again", who=ADA)
    second_break = repo.sha("HEAD")
    repo.write(".design-gates/policy.yaml", POLICY + f"history:\n  enforce_from: {start}\n")
    repo.commit("Judge the history", who=MAX)

    result = check_history(repo.root)
    breaks = sorted((f.commit, f.path, f.message) for f in result.findings if f.gate == "G5" and f.severity == "error")
    assert breaks == sorted([(first_break, IMPL, BREAK), (second_break, IMPL, BREAK)])
    assert not [head for head, _ in reads if head == comment]  # a comment only: no surface read at all
    # the second break's trees are the first break's (a revert, then the same change): nothing is read again
    assert not [head for head, _ in reads if head == second_break]


def test_paths_looked_up_in_one_tree_are_not_answered_for_another(tmp_path):
    repo = seeded_repo(tmp_path / "repo", files={IMPL: WITH_EPS})
    before = repo.sha("HEAD")
    repo.write(IMPL, WITHOUT_EPS)
    after = repo.commit("rms_norm: no eps", who=ADA)
    reader = load_change_set(repo.root, before, after)
    old = reader.blob_id(before, IMPL)
    assert reader.blob_id(after, IMPL) != old
    assert reader.blob_id(before, IMPL) == old
    assert reader.blob_id(after, "kernels/ops/missing.py") is None


WALKED = {
    "plain": "def f(x, *, eps=1e-6):\n    return x\n",
    "a switch read in a method": "import os\n\nclass A:\n    def f(self):\n        return os.environ.get(MODE, '0')\n",
    "a read without a default": "import os\n\nMODE = os.getenv(NAME)\n",
    "a dict read, no name": "CONFIG = {}\nvalue = CONFIG.get('key', 1)\n",
    "changed in place": "_MAP = {}\n_MAP['a'] = 1\ndel _OTHER[0]\n_LIST.append(2)\nx = _KEEP.keys()\n",
    "sys and own package": "import sys as _sys\nimport kernels.ops as ops\nfrom .impl import f as g\n",
}


@pytest.mark.parametrize("text", WALKED.values(), ids=WALKED.keys())
def test_one_walk_finds_what_the_separate_readers_find(text):
    tree = ast.parse(text)
    walked = walk_module(tree, "kernels")
    assert walked.mutated == changed_in_place(tree)
    assert walked.reads_names == bool(name_reads(tree))
    assert dynamic_constructs(tree, "kernels.ops.m", walked) == dynamic_constructs(ast.parse(text), "kernels.ops.m")


def test_a_surface_read_on_the_base_is_served_on_the_head_when_the_change_touches_none_of_its_files(
        tmp_path, monkeypatch, no_readings):
    compared = []
    real_same = api_compat._Recorded.same

    def same(self, files):
        compared.append(self.ref)
        return real_same(self, files)

    monkeypatch.setattr(api_compat._Recorded, "same", same)
    repo = seeded_repo(tmp_path / "repo", files={
        IMPL: WITH_EPS, OTHER: "def other(x):\n    return x\n", INIT: "from kernels.ops._impl import rms_norm\n"})
    start = repo.sha("HEAD")
    repo.write(OTHER, "def other(x):\n    return x * 1\n")
    body_change = repo.commit("other: a body change", who=ADA)
    repo.write(IMPL, WITHOUT_EPS)
    repo.commit("rms_norm: no eps", who=ADA)
    broken = repo.sha("HEAD")
    repo.write(".design-gates/policy.yaml", POLICY + f"history:\n  enforce_from: {start}\n")
    repo.commit("Judge the history", who=MAX)

    result = check_history(repo.root)
    breaks = [(f.commit, f.path, f.message) for f in result.findings if f.gate == "G5" and f.severity == "error"]
    assert breaks == [(broken, IMPL, BREAK)]  # the package __init__ read through _impl.py is read again at head
    # on the head of the body change, what was read on its base is reused by the change's own paths alone, without
    # looking up every file each reading looked at
    assert body_change not in compared


def test_a_python_file_is_decoded_once_per_object_id_across_commits(tmp_path, monkeypatch, no_readings):
    decoded = []
    real = api_compat.decode_source

    def counted(data, path):
        decoded.append(path)
        return real(data, path)

    monkeypatch.setattr(api_compat, "decode_source", counted)
    repo = seeded_repo(tmp_path / "repo", files={
        IMPL: WITH_EPS, OTHER: "def other(x):\n    return x\n", INIT: "from kernels.ops._impl import rms_norm\n"})
    start = repo.sha("HEAD")
    for n in range(3):
        repo.write(OTHER, f"def other(x):\n    return x * {n}\n")
        repo.commit(f"other: body change {n}", who=ADA)
    repo.write(".design-gates/policy.yaml", POLICY + f"history:\n  enforce_from: {start}\n")
    repo.commit("Judge the history", who=MAX)

    check_history(repo.root)
    assert decoded.count(INIT) == 1 and decoded.count(IMPL) == 1
    assert decoded.count(OTHER) == 4  # each version of the changed file once


def _bound_modules(monkeypatch) -> list[str]:
    """The modules whose top level is bound (run statement by statement), in order, from now on."""
    import gates.python_api.module_scope as module_scope

    bound = []
    real = module_scope.bind_module

    def counted(scope, tree, resolver, visiting):
        bound.append(scope.module)
        return real(scope, tree, resolver, visiting)

    monkeypatch.setattr(module_scope, "bind_module", counted)
    return bound


@pytest.mark.parametrize("init, through", [
    ("from kernels.ops._impl import rms_norm\n", "the import"),
    ("from kernels.ops._impl import *\n", "the star import"),
])
def test_an_unchanged_module_read_again_for_a_changed_import_is_bound_again_only_where_its_binding_read_it(
        tmp_path, monkeypatch, no_readings, init, through):
    bound = _bound_modules(monkeypatch)
    repo = seeded_repo(tmp_path / "repo", files={IMPL: WITH_EPS, OTHER: "def other(x):\n    return x\n", INIT: init})
    start = repo.sha("HEAD")
    repo.write(IMPL, WITH_EPS.replace("return x", "return x * 2"))
    repo.commit("rms_norm: a body change", who=ADA)
    repo.write(IMPL, WITHOUT_EPS)
    broken = repo.commit("rms_norm: no eps", who=ADA)
    repo.write(".design-gates/policy.yaml", POLICY + f"history:\n  enforce_from: {start}\n")
    repo.commit("Judge the history", who=MAX)

    result = check_history(repo.root)
    breaks = [(f.commit, f.path, f.message) for f in result.findings if f.gate == "G5" and f.severity == "error"]
    assert breaks == [(broken, IMPL, BREAK.replace("the import", through))]
    if through == "the import":
        # its own text binds what it did, over no file the changes touch: bound once, on the first base
        assert bound.count("kernels.ops") == 1
    else:
        # what the star import binds is _impl.py's names: bound again on each head where _impl.py changed
        assert bound.count("kernels.ops") == 3


def test_a_module_whose_own_text_changes_is_bound_from_its_new_text(tmp_path, monkeypatch, no_readings):
    bound = _bound_modules(monkeypatch)
    repo = seeded_repo(tmp_path / "repo", files={IMPL: WITH_EPS, INIT: "from kernels.ops._impl import rms_norm\n"})
    start = repo.sha("HEAD")
    repo.write(INIT, "from kernels.ops._impl import rms_norm\n\n\ndef helper(x, *, scale=1):\n    return x\n")
    repo.commit("ops: a helper", who=ADA)
    repo.write(INIT, "from kernels.ops._impl import rms_norm\n\n\ndef helper(x):\n    return x\n")
    broken = repo.commit("ops: helper without scale", who=ADA)
    repo.write(".design-gates/policy.yaml", POLICY + f"history:\n  enforce_from: {start}\n")
    repo.commit("Judge the history", who=MAX)

    result = check_history(repo.root)
    breaks = [(f.commit, f.path, f.message) for f in result.findings if f.gate == "G5" and f.severity == "error"]
    assert breaks == [(broken, INIT, "public API break: kernels.ops.helper: parameter 'scale' removed; the public API "
                                     "may only grow")]
    assert bound.count("kernels.ops") == 3  # one binding per text


@pytest.mark.parametrize("item, changes", [
    (Entry("f", "function", 3, params=(Parameter("x", POSITIONAL),), decorators=("d",)), {"origin": ("m.py", 3)}),
    (Entry("C", "class", 1, bases=("B",), limits=frozenset({"slots"})), {"name": "D", "line": 7, "params": None}),
    (Parameter("eps", KEYWORD_ONLY, "1e-6"), {"value": "1e-06", "reference": ()}),
])
def test_evolve_is_dataclasses_replace_for_entries_and_parameters(item, changes):
    assert not hasattr(type(item), "__post_init__")
    assert all(f.init for f in fields(item))  # every field is __init__'s: a copy of the fields is a new instance
    copied = evolve(item, **changes)
    assert type(copied) is type(item) and copied == replace(item, **changes)
    assert hash(copied) == hash(replace(item, **changes)) and copied is not item
    assert evolve(item) == item
    with pytest.raises(TypeError):
        evolve(item, nmae="x")


def _walked_by_isinstance(tree: ast.Module, package: str) -> ModuleWalk:
    """`walk_module` as one chain of `isinstance` tests per node (what its lookup by class must find)."""
    defined, sys_names, builtins_names, mutated, by_def, otherwise = set(), set(), set(), set(), set(), set()
    reads_names = False
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            by_def.add(node.name)
        elif isinstance(node, ast.ClassDef):
            otherwise.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            otherwise.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            otherwise.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            otherwise.update(node.names)
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            name = changed_name(node)
            if name is not None:
                mutated.add(name)
        elif isinstance(node, ast.Call):
            reads_names = reads_names or reads_a_name(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == package:
                    defined.add(alias.asname or alias.name.split(".")[0])
                if alias.name == "sys":
                    sys_names.add(alias.asname or "sys")
                elif alias.name == "builtins":
                    builtins_names.add(alias.asname or "builtins")
        elif isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == package):
            defined.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
    return ModuleWalk(frozenset(defined), frozenset(sys_names), frozenset(mutated), reads_names,
                      frozenset(by_def - otherwise), frozenset(builtins_names))


def test_the_walk_by_node_class_finds_what_isinstance_tests_find():
    root = Path(__file__).resolve().parents[1]
    # the walk cases, the modules of the package that reads Python, and the kinds those lack (async def, global)
    modules = sorted((root / "gates" / "python_api").glob("*.py"))
    rest = "import os.path as p\nN = 0\n\nasync def g(x):\n    global N\n    N = await x\n    return p.join(N)\n"
    texts = [*WALKED.values(), rest, *(path.read_text(encoding="utf-8") for path in modules)]
    for text in texts:
        assert walk_module(ast.parse(text), "gates") == _walked_by_isinstance(ast.parse(text), "gates")

    class Renamed(ast.Name):  # a subclass of a kind the walk reads is read as that kind
        pass

    tree = ast.parse("x = 1\nimport sys as s\n")
    tree.body[0].targets[0] = Renamed(id="y", ctx=ast.Store())
    assert walk_module(tree, "gates") == _walked_by_isinstance(tree, "gates")
