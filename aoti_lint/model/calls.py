"""What a call passes: its arguments by position or keyword, as Python binds them (an ``ast`` call, and a libcst
call for the rules that still read libcst)."""

from __future__ import annotations

import ast

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def argument(call: ast.Call, position: int | None, keyword: str) -> ast.expr | None:
    """The expression a call passes as ``keyword`` or at ``position``; None if absent, or once a ``*``/``**``
    argument comes first (its position is then unknown)."""
    for index, arg in enumerate(call.args):
        if type(arg) is ast.Starred:
            return None
        if index == position:
            return arg
    for item in call.keywords:
        if item.arg is None:
            return None
        if item.arg == keyword:
            return item.value
    return None


def call_argument(call: Any, position: int | None, keyword: str) -> Any:
    """``argument`` of a libcst call."""
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
        if arg.keyword is None and index == position:
            return arg.value
    return None
