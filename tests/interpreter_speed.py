"""The Triton interpreter without its repeated set-up: the kernels' results stay the same, in less time.

Through the interpreter (`TRITON_INTERPRET=1`) every call of a `@triton.jit` helper inside a kernel patches
`triton.language` again (`interpreter._patch_lang`: an `inspect.getmembers` over the language's modules and
a new wrapper for each builtin), once per program and per helper call: a fifth to a quarter of the time of a
kernel test. While one grid runs, the language modules a helper sees are the ones the grid's first patch
already changed, so `install()` lets a helper's call skip the patch when the modules its globals name were
patched in the running grid, and patch as before when they were not (a helper of another module that names
`triton.language.core`, which the kernel's module does not). The grid's own patch, and the restore at its
end, are Triton's.

Installed only where the interpreter keeps its patches in a `_LangPatchScope` (as Triton 3.9's does); with an
interpreter that does not, `install()` leaves it as it is, and the tests only take longer.
"""

from __future__ import annotations

import inspect


def install() -> bool:
    """Make nested helper calls skip the re-patch; True when installed."""
    try:
        import triton.language as tl
        from triton.runtime import interpreter
    except ImportError:
        return False
    if getattr(interpreter, "_design_gates_fast_patch", False):
        return True
    if not (hasattr(interpreter, "_LangPatchScope") and hasattr(interpreter, "_patch_lang")
            and hasattr(interpreter, "GridExecutor")):
        return False
    patch_lang, run_grid = interpreter._patch_lang, interpreter.GridExecutor.__call__
    patched: set[int] = set()  # ids of the language modules the running grid has patched

    def languages(fn) -> set[int]:
        return {id(value) for value in fn.__globals__.values()
                if inspect.ismodule(value) and value in (tl, tl.core)}

    def patch_once(fn):
        seen = languages(fn)
        if patched and seen <= patched:
            return interpreter._LangPatchScope()  # nothing to change, nothing to restore
        scope = patch_lang(fn)
        patched.update(seen)
        return scope

    def grid_call(self, *args, **kwargs):
        try:
            return run_grid(self, *args, **kwargs)
        finally:
            patched.clear()

    interpreter._patch_lang = patch_once
    interpreter.GridExecutor.__call__ = grid_call
    interpreter._design_gates_fast_patch = True
    return True
