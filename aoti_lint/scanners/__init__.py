"""Line scanners for the files that launch Python: shell scripts, Dockerfiles, YAML, ``.env``.

Each module reads one file kind without any parser dependency and yields the environment variables the file
sets, as ``EnvSetting`` records. They are deliberately careful rather than complete: what they cannot read
with certainty (an expansion, a flow mapping, a multi-line value) they leave out or mark unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aoti_lint.diagnostics import Edit, Position
from aoti_lint.fixes.edits import line_starts, position

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class EnvSetting:
    """One environment variable set by a file."""

    name: str
    # The value as the process will see it; None when it is not a literal (an expansion, an expression).
    value: str | None
    # Where the name is written.
    start: Position
    end: Position
    # Edits that remove the setting and leave a valid file; empty when no such edit is known.
    removal: tuple[Edit, ...] = ()
    # Set inside a condition that mentions "debug": a deliberate switch, not one left on.
    under_debug_condition: bool = False


class Locator:
    """Character offsets of one text to 1-based positions and edits."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts = line_starts(text)

    def position(self, offset: int) -> Position:
        return position(self.text, offset, self._starts)

    def edit(self, start: int, end: int, content: str = "") -> Edit:
        return Edit(content, self.position(start), self.position(end))

    def line_start(self, offset: int) -> int:
        return self.text.rfind("\n", 0, offset) + 1

    def line_end(self, offset: int) -> int:
        """The offset just after the newline that ends the line holding ``offset`` (or the text's end)."""
        newline = self.text.find("\n", offset)
        return len(self.text) if newline == -1 else newline + 1

    def delete_lines(self, start: int, end: int) -> Edit:
        """Remove the whole lines holding ``start`` .. ``end`` (offsets), newlines included."""
        return self.edit(self.line_start(start), self.line_end(max(start, end - 1)))


def mentions_debug(text: str) -> bool:
    return "debug" in text.lower()
