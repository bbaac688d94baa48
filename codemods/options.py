"""A compile's ``options=``: which entries become ``inductor_configs=``, the output path that becomes the
package path, and the comments of the entries the fix removes."""

from __future__ import annotations

import libcst as cst

from aoti_lint.codemods.expressions import is_false, is_true, replace_suffix, string_value
from aoti_lint.codemods.rewrites import CompileRewrite
from aoti_lint.diagnostics import Applicability
from aoti_lint.fixes.module_facts import ModuleFacts
from aoti_lint.flows.migration_verdicts import OPTIONS_KEYS, OPTIONS_UNFOLLOWED, OPTIONS_UNPACKED, options_away
from aoti_lint.knowledge.deprecated_api import OUTPUT_PATH_OPTION, PACKAGE_OPTION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def analyse_options(facts: ModuleFacts, site: CompileRewrite, options: cst.BaseExpression) -> bool:
    """Read ``options=`` into the rewrite; True when they ask for ``aot_inductor.package`` (to pair with
    ``package_aoti``)."""
    verdict = site.verdict
    if isinstance(options, cst.Dict):
        return _analyse_options_dict(site, options)
    keys = _literal_keys_of_variable(facts, options) if isinstance(options, cst.Name) else None
    if isinstance(options, cst.Name) and keys is not None:
        if OUTPUT_PATH_OPTION in keys or PACKAGE_OPTION in keys:
            verdict.lower(Applicability.DISPLAY_ONLY, options_away(options.value))
        site.options = options
        return False
    verdict.lower(Applicability.DISPLAY_ONLY, OPTIONS_UNFOLLOWED)
    return False


def _analyse_options_dict(site: CompileRewrite, options: cst.Dict) -> bool:
    kept = []
    package = False
    for element in options.elements:
        if not isinstance(element, cst.DictElement):
            site.verdict.lower(Applicability.DISPLAY_ONLY, OPTIONS_UNPACKED)
            return False
        key = string_value(element.key)
        if key is None:
            site.verdict.lower(Applicability.DISPLAY_ONLY, OPTIONS_KEYS)
            return False
        if key == OUTPUT_PATH_OPTION:
            site.so_path = element.value
            site.package_path = replace_suffix(element.value, ".so", ".pt2")
        elif key == PACKAGE_OPTION:
            if not is_true(element.value) and not is_false(element.value):
                site.verdict.lower(Applicability.DISPLAY_ONLY, f"`{PACKAGE_OPTION}` is not a literal boolean")
                return False
            package = is_true(element.value)
        else:
            kept.append(element)
    if kept:
        site.options = options.with_changes(elements=_reflow(options.elements, kept))
    _keep_dict_comments(site, options, kept)
    return package


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


def _literal_keys_of_variable(facts: ModuleFacts, name: cst.Name) -> set[str] | None:
    """All keys a dict variable can hold, when every write to it in its scope is a literal-keyed dict."""
    value = facts.single_value(name)
    if not isinstance(value, cst.Dict):
        return None
    keys = set()
    for element in value.elements:
        key = string_value(element.key) if isinstance(element, cst.DictElement) else None
        if key is None:
            return None
        keys.add(key)
    reads = facts.sibling_reads(name)
    if reads is None:
        return None
    for node in reads:
        parent = facts.parent(node)
        if node is name:
            continue
        if isinstance(parent, cst.Attribute) and parent.attr.value == "update":
            call = facts.parent(parent)
            if not isinstance(call, cst.Call):
                return None
            for arg in call.args:
                if arg.star:
                    return None
                if arg.keyword is not None:
                    keys.add(arg.keyword.value)
                elif isinstance(arg.value, cst.Dict):
                    for element in arg.value.elements:
                        key = string_value(element.key) if isinstance(element, cst.DictElement) else None
                        if key is None:
                            return None
                        keys.add(key)
                else:
                    return None
        elif isinstance(parent, cst.Subscript):
            key = None
            if len(parent.slice) == 1 and isinstance(parent.slice[0].slice, cst.Index):
                key = string_value(parent.slice[0].slice.value)
            if key is None:
                return None
            keys.add(key)
        elif isinstance(parent, cst.Arg):
            continue  # passed on: read-only use, e.g. to this very call
        else:
            return None
    return keys


def _reflow(original: Any, kept: list[Any]) -> list[Any]:
    """Keep ``kept`` elements of a comma-separated sequence, giving the last one the original last comma."""
    if not kept or kept[-1] is original[-1]:
        return list(kept)
    return [*kept[:-1], kept[-1].with_changes(comma=original[-1].comma)]
