"""Rebuilding argument lists while keeping the call's own layout (one line, or one argument a line)."""

from __future__ import annotations

import libcst as cst

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


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


def comments_of(args: list[cst.Arg] | tuple[cst.Arg, ...]) -> list[tuple[list[str], list[str]]]:
    """Per argument of a call: the comment lines written before it (after the previous comma) and the comment
    trailing it on its line. The first argument's lines belong to the call's own whitespace and stay there."""
    found: list[tuple[list[str], list[str]]] = []
    for index, arg in enumerate(args):
        previous_comma = args[index - 1].comma if index else None
        before = previous_comma.whitespace_after if isinstance(previous_comma, cst.Comma) else None
        lead = _comment_lines(before)
        after = arg.comma.whitespace_after if isinstance(arg.comma, cst.Comma) else arg.whitespace_after_arg
        trail = []
        if isinstance(after, cst.ParenthesizedWhitespace) and after.first_line.comment is not None:
            trail.append(after.first_line.comment.value)
        found.append((lead, trail))
    return found


def _bare(comma: Any) -> Any:
    comma = _without_comment(comma)
    if isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
        return comma.with_changes(whitespace_after=comma.whitespace_after.with_changes(empty_lines=[]))
    return comma


def _comment_lines(whitespace: Any) -> list[str]:
    if not isinstance(whitespace, cst.ParenthesizedWhitespace):
        return []
    return [line.comment.value for line in whitespace.empty_lines if line.comment is not None]


def with_comments(args: list[cst.Arg], comments: list[tuple[list[str], list[str]]]) -> list[cst.Arg]:
    """Put each new argument's comments (lines before it, trailing comments) back into a multi-line call laid
    out by ``arrange``; a one-line call has no comments to keep."""
    if not args or not any(lead or trail for lead, trail in comments):
        return args
    between = args[0].comma.whitespace_after if isinstance(args[0].comma, cst.Comma) else None
    if len(args) > 1 and not isinstance(between, cst.ParenthesizedWhitespace):
        return args
    # The separators ``arrange`` borrowed from the old call carry the old comments in the old places: start bare.
    result = [arg.with_changes(comma=_bare(arg.comma)) for arg in args]
    carried: list[str] = []  # comments that cannot stay where they were: lines before the next argument
    for index, (lead, trail) in enumerate(comments):
        lead = carried + lead
        carried = []
        if len(trail) > 1:
            carried, trail = trail[1:], trail[:1]
        arg = result[index]
        if lead and index > 0:
            previous = result[index - 1]
            whitespace = cst.ensure_type(previous.comma, cst.Comma).whitespace_after
            if isinstance(whitespace, cst.ParenthesizedWhitespace):
                lines = [
                    cst.EmptyLine(
                        indent=True, whitespace=cst.SimpleWhitespace(whitespace.last_line.value), comment=cst.Comment(c)
                    )
                    for c in lead
                ]
                result[index - 1] = previous.with_changes(
                    comma=cst.ensure_type(previous.comma, cst.Comma).with_changes(
                        whitespace_after=whitespace.with_changes(empty_lines=[*whitespace.empty_lines, *lines])
                    )
                )
        elif lead:
            carried = lead  # before the first argument: moved below it
        if trail:
            if isinstance(arg.comma, cst.Comma) and isinstance(arg.comma.whitespace_after, cst.ParenthesizedWhitespace):
                whitespace = arg.comma.whitespace_after
                first = whitespace.first_line.with_changes(
                    whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(trail[0])
                )
                result[index] = arg.with_changes(
                    comma=arg.comma.with_changes(whitespace_after=whitespace.with_changes(first_line=first))
                )
            else:
                carried = trail + carried
    last = result[-1]
    closing = cst.ensure_type(last.comma, cst.Comma).whitespace_after if isinstance(last.comma, cst.Comma) else None
    if carried and isinstance(closing, cst.ParenthesizedWhitespace):
        # Left over after the last argument: lines after it, before the closing parenthesis.
        indent = (
            between.last_line.value if len(result) > 1 and isinstance(between, cst.ParenthesizedWhitespace) else None
        )
        indent = indent if indent is not None else closing.last_line.value + "    "
        lines = [
            cst.EmptyLine(indent=True, whitespace=cst.SimpleWhitespace(indent), comment=cst.Comment(c)) for c in carried
        ]
        result[-1] = last.with_changes(
            comma=cst.ensure_type(last.comma, cst.Comma).with_changes(
                whitespace_after=closing.with_changes(empty_lines=[*closing.empty_lines, *lines])
            )
        )
        carried = []
    if carried and len(result) > 1:
        # Left over after the last argument: lines before it, so that none is lost.
        previous = result[-2]
        whitespace = cst.ensure_type(previous.comma, cst.Comma).whitespace_after
        if isinstance(whitespace, cst.ParenthesizedWhitespace):
            lines = [
                cst.EmptyLine(
                    indent=True, whitespace=cst.SimpleWhitespace(whitespace.last_line.value), comment=cst.Comment(c)
                )
                for c in carried
            ]
            result[-2] = previous.with_changes(
                comma=cst.ensure_type(previous.comma, cst.Comma).with_changes(
                    whitespace_after=whitespace.with_changes(empty_lines=[*whitespace.empty_lines, *lines])
                )
            )
    return result
