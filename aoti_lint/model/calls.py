"""What a libcst call passes: its arguments by position or keyword, as Python binds them."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def call_argument(call: Any, position: int | None, keyword: str) -> Any:
    """The expression a libcst call passes as ``keyword`` or at ``position``; None if absent, or once a ``*``/``**``
    argument comes first (its position is then unknown)."""
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
        if arg.keyword is None and index == position:
            return arg.value
    return None
