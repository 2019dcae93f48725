"""Every file the import system loads from now on, recorded when it is found.

A module can delete its own `__file__` (or its `__spec__`) once it has run, and so drop
out of a scan of `sys.modules` at the end of a run: code that replaced the kernel under
test would then not be bound to the evidence. `record_import_origins()` puts a finder in
front of `sys.meta_path` that asks the finders behind it, as the import system would,
and notes the origin of every spec they return before the module runs. The evidence
writer binds these files as well as the `__file__`s still present at the end.
"""

from __future__ import annotations

import sys
import threading


class ImportOriginRecorder:
    """A meta path finder that finds nothing itself: it records what the finders after it find."""

    def __init__(self) -> None:
        self.origins: set[str] = set()
        self._inside = threading.local()

    def find_spec(self, name, path=None, target=None):
        if getattr(self._inside, "active", False):
            return None
        self._inside.active = True
        try:
            for finder in list(sys.meta_path):
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(name, path, target)
                if spec is not None:
                    if isinstance(spec.origin, str):
                        self.origins.add(spec.origin)
                    return spec
            return None
        finally:
            self._inside.active = False

    def invalidate_caches(self) -> None:
        return None


_RECORDER: ImportOriginRecorder | None = None


def record_import_origins() -> ImportOriginRecorder:
    """Start recording (once per process; the recorder stays first on `sys.meta_path`)."""
    global _RECORDER
    if _RECORDER is None:
        _RECORDER = ImportOriginRecorder()
    if not sys.meta_path or sys.meta_path[0] is not _RECORDER:
        if _RECORDER in sys.meta_path:
            sys.meta_path.remove(_RECORDER)
        sys.meta_path.insert(0, _RECORDER)
    return _RECORDER


def recorded_origins() -> set[str]:
    """The files recorded so far (empty when recording never started)."""
    return set(_RECORDER.origins) if _RECORDER is not None else set()
