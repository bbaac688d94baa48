"""Colour in the human formats, as ruff gives it: on a terminal by default; never with NO_COLOR set, always with
FORCE_COLOR set (NO_COLOR wins when both are, as in CPython's own colouring); never for TERM=dumb or a report
written to a file."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

BOLD = "\x1b[1m"
RED = "\x1b[31m"
CYAN = "\x1b[36m"
_RESET = "\x1b[0m"


def wanted(stream: TextIO) -> bool:
    """Whether a report written to ``stream`` is coloured."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a stream without a descriptor, or closed
        return False


def paint(text: str, style: str, on: bool) -> str:
    return f"{style}{text}{_RESET}" if on else text
