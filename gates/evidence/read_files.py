"""Every file the measuring run opens for reading, recorded through Python's audit hooks.

A kernel's behaviour can come from a file it reads rather than imports: a table of tuned
launch configurations, a weights blob, a JSON of block sizes. Such a file is as much part of
what was measured as the kernel's source, so the evidence must go stale when it changes.
`record_file_reads()` installs an audit hook (`sys.addaudithook`, once per process: the
`open` event that `open()`, `io.open_code`, `numpy.load`, `torch.load` and friends raise) and
notes every path opened for reading while recording is on. The evidence plugin turns it on
when the session starts and off before the artifact is written, so pytest's own configuration
reads and the writer's reads of the records are not part of the run.

A file read by compiled code without Python's `open` (C `fopen`, a memory map made in C) is not
seen; the trust model (`gates/site/pages/trust-model.md`) says what defends against that.
"""

from __future__ import annotations

import os
import sys

_READ_FLAGS = os.O_RDONLY | os.O_RDWR


class FileReadRecorder:
    """Paths opened for reading while `active`."""

    def __init__(self) -> None:
        self.paths: set[str] = set()
        self.active = False

    def __call__(self, event: str, args) -> None:
        if event != "open" or not self.active or not args:
            return
        path, mode = args[0], args[1] if len(args) > 1 else None
        if isinstance(path, int):
            return
        if isinstance(mode, str):
            reading = "r" in mode or "+" in mode
        else:
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            reading = (flags & (os.O_WRONLY | os.O_RDWR)) != os.O_WRONLY
        if reading:
            try:
                self.paths.add(os.fsdecode(path))
            except (TypeError, ValueError):
                pass


_RECORDER: FileReadRecorder | None = None


def record_file_reads(active: bool = True) -> FileReadRecorder:
    """Install the recorder (once per process) and switch recording on or off."""
    global _RECORDER
    if _RECORDER is None:
        _RECORDER = FileReadRecorder()
        sys.addaudithook(_RECORDER)
    _RECORDER.active = active
    return _RECORDER


def recorded_reads() -> set[str]:
    """The paths opened for reading so far (empty when recording never started)."""
    return set(_RECORDER.paths) if _RECORDER is not None else set()
