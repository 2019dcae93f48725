"""One exception type per kind of failure; `gates.frontends.cli` maps them to exit codes."""

from __future__ import annotations


class DesignGatesError(Exception):
    """Base of every error design-gates raises on purpose."""

    exit_code = 3


class UsageError(DesignGatesError):
    """The command line asks for something that cannot be done."""

    exit_code = 2


class InputError(DesignGatesError):
    """An input file (record, artifact, policy, PR body) is unreadable or invalid."""

    exit_code = 2

    def __init__(self, path: str, line: int, message: str, col: int = 1):
        self.path = str(path)
        self.line = max(int(line), 1)
        self.col = max(int(col), 1)
        self.message = message
        super().__init__(f"{self.path}:{self.line}:{self.col}: {message}")

    def __reduce__(self):
        return type(self), (self.path, self.line, self.message, self.col)


class GitContextError(DesignGatesError):
    """The git history a check needs is not there; the message says what to fetch."""

    exit_code = 2


class InternalError(DesignGatesError):
    """A bug in design-gates itself."""

    exit_code = 3
