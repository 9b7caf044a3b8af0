"""The referee's errors: one family under :class:`board_rules.errors.TavliError`.

Each error is also the matching builtin (``ValueError``), so callers that know only
Python's builtins still catch it; messages name the field and quote the value.
"""

from __future__ import annotations

import os

from board_rules.errors import TavliError


class JournalError(TavliError, ValueError):
    """A journal, an event or a match spec that cannot be read.

    ``line`` is the 1-based line number and ``path`` the file, when known; the message
    starts with them: ``'m.jsonl': line 5: ...``.
    """

    def __init__(self, message: str, line: int | None = None, path: str | os.PathLike | None = None) -> None:
        where = "" if path is None else f"{str(path)!r}: "
        where += "" if line is None else f"line {line}: "
        super().__init__(where + message)
        self.detail = message
        self.line = line
        self.path = path

    def at(self, path: str | os.PathLike) -> JournalError:
        """The same error, naming the journal file."""
        return type(self)(self.detail, self.line, path)


class JournalReplayError(JournalError):
    """Events that break the rules when replayed (an illegal play, a cube action out of turn)."""
