"""What a call passes: its arguments by position or keyword, as Python binds them."""

from __future__ import annotations

import ast


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
