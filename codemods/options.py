"""A compile's ``options=``: which entries become ``inductor_configs=``, the output path that becomes the
package path, and the comments of the entries the fix removes."""

from __future__ import annotations

import libcst as cst

from aoti_lint.codemods.expressions import replace_suffix, string_value
from aoti_lint.codemods.rewrites import CompileRewrite
from aoti_lint.knowledge.deprecated_api import OUTPUT_PATH_OPTION, PACKAGE_OPTION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def analyse_options(site: CompileRewrite, options: cst.BaseExpression) -> bool:
    """Read ``options=`` into the rewrite (the reading judged them, ``flows.site_plan``); False where their syntax
    is not what a rewrite takes: a dict with literal keys, or a name kept whole."""
    if isinstance(options, cst.Name):
        site.options = options
        return True
    if not isinstance(options, cst.Dict):
        return False
    kept = []
    for element in options.elements:
        key = string_value(element.key) if isinstance(element, cst.DictElement) else None
        if key is None:
            return False
        if key == OUTPUT_PATH_OPTION:
            site.so_path = element.value
            site.package_path = replace_suffix(element.value, ".so", ".pt2")
        elif key != PACKAGE_OPTION:
            kept.append(element)
    if kept:
        site.options = options.with_changes(elements=_reflow(options.elements, kept))
    _keep_dict_comments(site, options, kept)
    return True


def _keep_dict_comments(site: CompileRewrite, options: cst.Dict, kept: list[Any]) -> None:
    """A removed entry's trailing comment goes with the package path; the comment lines after it stay in
    front of the next entry that is kept."""
    lines: list[cst.EmptyLine] = []
    elements = list(site.options.elements) if kept and isinstance(site.options, cst.Dict) else []
    kept_ids = {id(element) for element in kept}
    position = 0
    for element in options.elements:
        if id(element) in kept_ids:
            if lines and elements:
                if position == 0:
                    brace = site.options.lbrace
                    whitespace = brace.whitespace_after
                    if isinstance(whitespace, cst.ParenthesizedWhitespace):
                        brace = brace.with_changes(
                            whitespace_after=whitespace.with_changes(empty_lines=[*whitespace.empty_lines, *lines])
                        )
                        site.options = site.options.with_changes(lbrace=brace)
                else:
                    before = elements[position - 1]
                    whitespace = before.comma.whitespace_after if isinstance(before.comma, cst.Comma) else None
                    if isinstance(whitespace, cst.ParenthesizedWhitespace) and isinstance(before.comma, cst.Comma):
                        elements[position - 1] = before.with_changes(
                            comma=before.comma.with_changes(
                                whitespace_after=whitespace.with_changes(empty_lines=[*whitespace.empty_lines, *lines])
                            )
                        )
                        site.options = site.options.with_changes(elements=elements)
                lines = []
            position += 1
            continue
        after = element.comma.whitespace_after if isinstance(element.comma, cst.Comma) else None
        if isinstance(after, cst.ParenthesizedWhitespace):
            if after.first_line.comment is not None:
                site.removed_comments.append(after.first_line.comment.value)
            lines += [line for line in after.empty_lines if line.comment is not None]
    site.removed_comments += [line.comment.value for line in lines if line.comment is not None]


def _reflow(original: Any, kept: list[Any]) -> list[Any]:
    """Keep ``kept`` elements of a comma-separated sequence, giving the last one the original last comma."""
    if not kept or kept[-1] is original[-1]:
        return list(kept)
    return [*kept[:-1], kept[-1].with_changes(comma=original[-1].comma)]
