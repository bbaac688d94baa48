"""Rebuilding argument lists while keeping the call's own layout (one line, or one argument a line)."""

from __future__ import annotations

import libcst as cst


def _without_comment(comma):
    """A copy of a comma whose trailing comment is dropped, so reusing its layout never duplicates a comment."""
    if not isinstance(comma, cst.Comma):
        return comma
    after = comma.whitespace_after
    if isinstance(after, cst.ParenthesizedWhitespace) and after.first_line.comment is not None:
        first_line = after.first_line.with_changes(comment=None, whitespace=cst.SimpleWhitespace(""))
        return comma.with_changes(whitespace_after=after.with_changes(first_line=first_line))
    return comma


def keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def arrange(template: list[cst.Arg] | tuple[cst.Arg, ...], args: list[cst.Arg]) -> list[cst.Arg]:
    """Give ``args`` the separators of ``template``: the first separator between all, the last one at the end."""
    if not template:
        return args
    first_comma = template[0].comma
    last = template[-1]
    arranged = []
    for index, arg in enumerate(args):
        if index == len(args) - 1:
            arranged.append(arg.with_changes(comma=last.comma, whitespace_after_arg=last.whitespace_after_arg))
        else:
            comma = first_comma if index == 0 else _without_comment(first_comma)
            if not isinstance(comma, cst.Comma):
                comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            arranged.append(arg.with_changes(comma=comma, whitespace_after_arg=cst.SimpleWhitespace("")))
    return arranged
