"""G5 reads a default that names a constant by the constant's value, and a switch by the defaults it is read with.

Each case is a base/head pair of `kernels/api.py` (and the repository modules it imports):
the head changes what callers get by default without touching the `def` line, and the
diff must report it. Each has a benign counterpart that must pass.
"""

from __future__ import annotations

import pytest

from gates.python_api.api_surface import diff_surfaces, module_surface
from gates.python_api.module_scope import module_reader

PATH = "kernels/api.py"

BASE = '''\
"""Split sums."""
_SPLITS = 1


def split_sum(values, num_splits=_SPLITS):
    return None
'''

CONSTS = 'SPLITS = 1\n'


def diff(old: str, new: str, old_files: dict | None = None, new_files: dict | None = None,
         switches=()) -> list[str]:
    """The messages of what breaks between two versions of kernels/api.py, each read with its own modules."""
    old_reader = module_reader({**(old_files or {}), PATH: old}.get)
    new_reader = module_reader({**(new_files if new_files is not None else old_files or {}), PATH: new}.get)
    return [c.message for c in diff_surfaces(module_surface(old, PATH, switches, old_reader),
                                             module_surface(new, PATH, switches, new_reader))]


CHANGED = "kernels.api.split_sum: default of 'num_splits' changed from"

IMPORTED = BASE.replace('_SPLITS = 1\n', 'from kernels.consts import SPLITS as _SPLITS\n')
MODULE_ATTRIBUTE = BASE.replace('_SPLITS = 1\n', 'from kernels import consts\n').replace("=_SPLITS", "=consts.SPLITS")
DOTTED_IMPORT = BASE.replace('_SPLITS = 1\n', 'import kernels.consts\n').replace("=_SPLITS", "=kernels.consts.SPLITS")
CLASS_ATTRIBUTE = BASE.replace('_SPLITS = 1\n', 'class Tuning:\n    SPLITS = 1\n').replace("=_SPLITS", "=Tuning.SPLITS")
METHOD = BASE + '\n\nclass Splitter:\n    _PER_ROW = 2\n\n    def run(self, values, per_row=_PER_ROW):\n        return None\n'
BRANCHES = BASE.replace('_SPLITS = 1\n', 'import torch\n\nif torch.cuda.is_available():\n    _SPLITS = 4\n'
                        'else:\n    _SPLITS = 1\n')
AUGMENTED = BASE.replace('_SPLITS = 1\n', '_SPLITS = 1\n_SPLITS += 3\n')
ALIASED = BASE.replace('_SPLITS = 1\n', '_BASE_SPLITS = 1\n_SPLITS = _BASE_SPLITS\n')
LOOPED = BASE.replace('_SPLITS = 1\n', 'for _SPLITS in (1,):\n    pass\n')
FIELD = '"""Split sums."""\nfrom dataclasses import dataclass\n\n_SPLITS = 1\n\n\n@dataclass\nclass SplitConfig:\n' \
        '    num_splits: int = _SPLITS\n'

VIA_CONSTANT = BASE.replace('_SPLITS = 1\n', 'from kernels import consts\n\n_SPLITS = consts.SPLITS\n')
COMPUTED = BASE.replace('_SPLITS = 1\n', '_BASE = 1\n_SPLITS = _BASE * 2\n')

DEFAULT_CHANGES = [
    pytest.param(BASE, BASE.replace("_SPLITS = 1", "_SPLITS = 4"), None, None,
                 f"{CHANGED} _SPLITS (= 1) to _SPLITS (= 4)", id="private-constant"),
    pytest.param(IMPORTED, IMPORTED, {"kernels/consts.py": CONSTS}, {"kernels/consts.py": "SPLITS = 4\n"},
                 f"{CHANGED} _SPLITS (= 1) to _SPLITS (= 4)", id="imported-constant"),
    pytest.param(IMPORTED, IMPORTED, {"kernels/consts.py": CONSTS},
                 {"kernels/consts.py": "from kernels.tuning import SPLITS\n", "kernels/tuning.py": "SPLITS = 4\n"},
                 f"{CHANGED} _SPLITS (= 1) to _SPLITS (= 4)", id="imported-through-a-re-export"),
    pytest.param(MODULE_ATTRIBUTE, MODULE_ATTRIBUTE, {"kernels/consts.py": CONSTS}, {"kernels/consts.py": "SPLITS = 4\n"},
                 f"{CHANGED} consts.SPLITS (= 1) to consts.SPLITS (= 4)", id="module-attribute"),
    pytest.param(DOTTED_IMPORT, DOTTED_IMPORT, {"kernels/consts.py": CONSTS}, {"kernels/consts.py": "SPLITS = 4\n"},
                 f"{CHANGED} kernels.consts.SPLITS (= 1) to kernels.consts.SPLITS (= 4)", id="dotted-import"),
    pytest.param(VIA_CONSTANT, VIA_CONSTANT, {"kernels/consts.py": CONSTS}, {"kernels/consts.py": "SPLITS = 4\n"},
                 f"{CHANGED} _SPLITS (= 1) to _SPLITS (= 4)", id="constant-bound-to-an-imported-constant"),
    pytest.param(COMPUTED, COMPUTED.replace("_BASE = 1", "_BASE = 2"), None, None,
                 f"{CHANGED} _SPLITS (= 1 * 2) to _SPLITS (= 2 * 2)", id="constant-computed-from-a-constant"),
    pytest.param(CLASS_ATTRIBUTE, CLASS_ATTRIBUTE.replace("SPLITS = 1", "SPLITS = 4"), None, None,
                 f"{CHANGED} Tuning.SPLITS (= 1) to Tuning.SPLITS (= 4)", id="class-attribute"),
    pytest.param(METHOD, METHOD.replace("_PER_ROW = 2", "_PER_ROW = 3"), None, None,
                 "kernels.api.Splitter.run: default of 'per_row' changed from _PER_ROW (= 2) to _PER_ROW (= 3)",
                 id="class-body-constant"),
    pytest.param(BRANCHES, BRANCHES.replace("    _SPLITS = 1", "    _SPLITS = 2"), None, None,
                 f"{CHANGED} _SPLITS (= 4 or 1 (depending on `if torch.cuda.is_available():`)) to _SPLITS (= 4 or 2 "
                 "(depending on `if torch.cuda.is_available():`))", id="constant-set-on-branches"),
    pytest.param(AUGMENTED, AUGMENTED.replace("+= 3", "+= 4"), None, None,
                 f"{CHANGED} _SPLITS (= 1 + 3) to _SPLITS (= 1 + 4)", id="augmented-assignment"),
    pytest.param(ALIASED, ALIASED.replace("_BASE_SPLITS = 1", "_BASE_SPLITS = 4"), None, None,
                 f"{CHANGED} _SPLITS (= 1) to _SPLITS (= 4)", id="constant-aliasing-a-constant"),
    pytest.param(LOOPED, LOOPED.replace("(1,)", "(4,)"), None, None,
                 f"{CHANGED} _SPLITS (= `for _SPLITS in (1,):`) to _SPLITS (= `for _SPLITS in (4,):`)",
                 id="loop-target"),
    pytest.param(FIELD, FIELD.replace("_SPLITS = 1", "_SPLITS = 4"), None, None,
                 "kernels.api.SplitConfig.__init__: default of 'num_splits' changed from _SPLITS (= 1) to _SPLITS (= 4)",
                 id="dataclass-field"),
    pytest.param(BASE.replace("=_SPLITS", "=_SPLITS + 0"), BASE.replace("=_SPLITS", "=_SPLITS + 0").replace(
        "_SPLITS = 1", "_SPLITS = 4"), None, None, f"{CHANGED} _SPLITS + 0 (= 1 + 0) to _SPLITS + 0 (= 4 + 0)",
                 id="constant-inside-an-expression"),
    pytest.param(IMPORTED.replace("=_SPLITS", "=max(_SPLITS, 1)"), IMPORTED.replace("=_SPLITS", "=max(_SPLITS, 1)"),
                 {"kernels/consts.py": CONSTS}, {"kernels/consts.py": "SPLITS = 4\n"},
                 f"{CHANGED} max(_SPLITS, 1) (= max((1), 1)) to max(_SPLITS, 1) (= max((4), 1))",
                 id="imported-constant-inside-an-expression"),
    pytest.param(BASE, BASE.replace("_SPLITS = 1", "_SPLITS = _tuned()"), None, None,
                 f"{CHANGED} _SPLITS (= 1) to _SPLITS (= _tuned())", id="constant-becomes-an-expression"),
]


@pytest.mark.parametrize("base, head, old_files, new_files, message", DEFAULT_CHANGES)
def test_a_default_changed_through_a_constant_is_a_break(base, head, old_files, new_files, message):
    changes = diff(base, head, old_files, new_files)
    assert any(message in c for c in changes), changes


def test_an_imported_default_from_an_unreadable_module_fails_closed():
    changes = diff(IMPORTED, IMPORTED, {"kernels/consts.py": CONSTS}, {"kernels/consts.py": "exec('SPLITS = 4')\n"})
    assert any("the default of 'num_splits' (_SPLITS)" in c and "cannot read" in c for c in changes), changes


def test_a_constant_a_function_rebinds_with_global_fails_closed():
    head = BASE.replace('_SPLITS = 1\n', '_SPLITS = 1\n\n\ndef _tune():\n    global _SPLITS\n    _SPLITS = 4\n\n\n_tune()\n')
    changes = diff(BASE, head)
    assert any("`global _SPLITS` in a function (it can change the value of a default that names it)" in c
               for c in changes), changes


def test_constants_built_from_constants_stay_small():
    doubling = "".join(f"_C{i + 1} = _C{i} + _C{i}\n" for i in range(60))
    base = BASE.replace('_SPLITS = 1\n', f"_C0 = 1\n{doubling}_SPLITS = _C60\n")
    head = base.replace("_C0 = 1", "_C0 = 2")
    changes = diff(base, head)
    assert len(changes) == 1 and "characters, sha256" in changes[0], changes


DEFAULT_KEPT = [
    pytest.param(BASE.replace("=_SPLITS", "=1"), BASE, None, None, id="literal-named-as-a-constant-of-that-value"),
    pytest.param(BASE, BASE.replace("_SPLITS", "_NUM_SPLITS"), None, None, id="constant-renamed"),
    pytest.param(BASE, BASE + "\n_SPLITS = 4\n", None, None, id="rebound-after-the-def"),
    pytest.param(BASE.replace("=_SPLITS", "=_SPLITS + 0"), BASE.replace("=_SPLITS", "=_SPLITS + 0").replace(
        "_SPLITS = 1", "_SPLITS = 1\n_ROWS = 2"), None, None, id="expression-of-an-unchanged-constant"),
    pytest.param(BASE, BASE.replace('_SPLITS = 1\n', '_SPLITS = 1\n_ROWS = 8\n'), None, None, id="another-constant"),
    pytest.param(IMPORTED, IMPORTED, {"kernels/consts.py": CONSTS}, {"kernels/consts.py": CONSTS + "ROWS = 8\n"},
                 id="imported-module-grows"),
    pytest.param(BASE.replace('_SPLITS = 1\n', 'import torch\n').replace("num_splits=_SPLITS", "dtype=torch.float32"),
                 BASE.replace('_SPLITS = 1\n', 'import torch\n').replace("num_splits=_SPLITS", "dtype=torch.float32"),
                 None, None, id="default-from-outside-the-repository"),
]


@pytest.mark.parametrize("base, head, old_files, new_files", DEFAULT_KEPT)
def test_a_default_whose_value_is_kept_passes(base, head, old_files, new_files):
    assert diff(base, head, old_files, new_files) == []


LAYER = '''\
"""Decode layer."""
import os

SWITCH_ENV = "DESIGN_GATES_SPLITKV"


def switch_from_env(environ=None) -> bool:
    value = (os.environ if environ is None else environ).get(SWITCH_ENV, "0").strip()
    if value not in ("0", "1", ""):
        raise ValueError(f"{SWITCH_ENV} must be 0 or 1, got {value!r}")
    return value == "1"
'''

SWITCH = ("SWITCH_ENV",)
READ = "the default with which switch_from_env reads switch kernels.api.SWITCH_ENV changed from"
WITH_DEFAULT_CONSTANT = LAYER.replace('SWITCH_ENV = "DESIGN_GATES_SPLITKV"\n',
                                      'SWITCH_ENV = "DESIGN_GATES_SPLITKV"\nSWITCH_DEFAULT = "0"\n').replace(
    'SWITCH_ENV, "0")', "SWITCH_ENV, SWITCH_DEFAULT)")

IMPORTED_DEFAULT = LAYER.replace("import os\n", "import os\n\nfrom kernels.config import DEFAULT\n").replace(
    'SWITCH_ENV, "0")', "SWITCH_ENV, DEFAULT)")

ROUTE_CHANGES = [
    pytest.param(LAYER, LAYER.replace('SWITCH_ENV, "0")', 'SWITCH_ENV, "1")'), f"{READ} '0' to '1'",
                 id="environ-get-default"),
    pytest.param(LAYER.replace('.get(SWITCH_ENV, "0")', '.get(SWITCH_ENV, default="0")'),
                 LAYER.replace('.get(SWITCH_ENV, "0")', '.get(SWITCH_ENV, default="1")'), f"{READ} '0' to '1'",
                 id="keyword-default"),
    pytest.param(LAYER.replace('(os.environ if environ is None else environ).get(SWITCH_ENV, "0")',
                               'os.getenv(SWITCH_ENV, "0")'),
                 LAYER.replace('(os.environ if environ is None else environ).get(SWITCH_ENV, "0")',
                               'os.getenv(SWITCH_ENV, "1")'), f"{READ} '0' to '1'", id="getenv"),
    pytest.param(LAYER, LAYER.replace('.get(SWITCH_ENV, "0")', '.get(SWITCH_ENV) or "1"'), f"{READ} '0' to None",
                 id="default-dropped"),
    pytest.param(WITH_DEFAULT_CONSTANT, WITH_DEFAULT_CONSTANT.replace('SWITCH_DEFAULT = "0"', 'SWITCH_DEFAULT = "1"'),
                 f"{READ} '0' to '1'", id="default-through-a-constant"),
    pytest.param(LAYER, LAYER + '\n\ndef split_kv_enabled() -> bool:\n    return os.environ.get(SWITCH_ENV, "1") == "1"\n',
                 "switch kernels.api.SWITCH_ENV is now read in split_kv_enabled with the default '1' (before, it was "
                 "read with '0')", id="new-reader-with-another-default"),
    pytest.param(LAYER, LAYER.replace('value = (os.environ if environ is None else environ).get(SWITCH_ENV, "0").strip()',
                                      'value = "1"'),
                 "switch kernels.api.SWITCH_ENV is no longer read with the default '0' (it was, in switch_from_env)",
                 id="read-removed"),
]


@pytest.mark.parametrize("base, head, message", ROUTE_CHANGES)
def test_a_changed_default_of_a_switch_read_is_a_route_change(base, head, message):
    old_reader, new_reader = module_reader({PATH: base}.get), module_reader({PATH: head}.get)
    changes = diff_surfaces(module_surface(base, PATH, SWITCH, old_reader), module_surface(head, PATH, SWITCH, new_reader))
    assert any(c.kind == "route" and message in c.message for c in changes), [(c.kind, c.message) for c in changes]


def test_a_switch_read_default_imported_from_another_module_is_followed():
    old_reader = module_reader({PATH: IMPORTED_DEFAULT, "kernels/config.py": 'DEFAULT = "0"\n'}.get)
    new_reader = module_reader({PATH: IMPORTED_DEFAULT, "kernels/config.py": 'DEFAULT = "1"\n'}.get)
    old, new = (module_surface(IMPORTED_DEFAULT, PATH, SWITCH, reader) for reader in (old_reader, new_reader))
    assert "kernels/config.py" in new.import_paths  # so a change of config.py alone rereads this module
    assert [(c.kind, c.message) for c in diff_surfaces(old, new)] == [("route", f"{READ} '0' to '1'")]


ROUTE_KEPT = [
    pytest.param(LAYER, LAYER.replace("must be 0 or 1", "must be '0' or '1'"), id="body-changed-elsewhere"),
    pytest.param(LAYER, LAYER + '\n\ndef split_kv_enabled() -> bool:\n    return os.environ.get(SWITCH_ENV, "0") == "1"\n',
                 id="new-reader-with-the-same-default"),
    pytest.param(LAYER, WITH_DEFAULT_CONSTANT, id="default-moved-into-a-constant-of-that-value"),
    pytest.param(LAYER, LAYER.replace('value = (os.environ if environ is None else environ).get(SWITCH_ENV, "0").strip()',
                                      'value = _read(environ)') + '\n\ndef _read(environ):\n'
                 '    return (os.environ if environ is None else environ).get(SWITCH_ENV, "0").strip()\n',
                 id="read-moved-into-a-helper"),
    pytest.param(LAYER, LAYER.replace('SWITCH_ENV = "DESIGN_GATES_SPLITKV"\n',
                                      'SWITCH_ENV = "DESIGN_GATES_SPLITKV"\nTRACE_ENV = "TRACE"\n').replace(
        '    return value == "1"\n', '    return value == "1" and os.environ.get(TRACE_ENV, "1") != ""\n'),
                 id="another-variable-read-with-another-default"),
]


@pytest.mark.parametrize("base, head", ROUTE_KEPT)
def test_a_switch_read_with_the_same_default_passes(base, head):
    assert diff(base, head, switches=SWITCH) == []


def test_without_a_declared_switch_the_read_default_is_not_part_of_the_api():
    assert diff(LAYER, LAYER.replace('SWITCH_ENV, "0")', 'SWITCH_ENV, "1")')) == []
