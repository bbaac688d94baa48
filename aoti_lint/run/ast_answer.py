"""A Python file's findings and project data read from its ``ast`` alone, where every rule it wants answers there
(``AstRule``, ``rules/ast_flow.py``) or it is wanted only for the strings naming a `.so` it holds: such a
file is never parsed with libcst in a run that builds no fix edits."""

from __future__ import annotations

from collections.abc import Sequence

from aoti_lint.diagnostics import Finding
from aoti_lint.model.parse import MAX_LIBCST_BYTES
from aoti_lint.read.source import SourceFile
from aoti_lint.rules.base import AstModule, AstRule, Rule
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.prefilter import Wanted
from aoti_lint.run.results import FLOW_SUMMARY, MIGRATION_CODES, CheckResult, ProjectPart, project_codes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.model.name_index import CodeIndex
    from aoti_lint.model.suppressions import Suppressions


def add_ast_answer(
    source: SourceFile,
    result: CheckResult,
    rules: Sequence[type[Rule]],
    found: list[Finding],
    summaries: dict[str, object],
) -> None:
    text = source.text
    if summaries:
        from aoti_lint.model.name_index import code_index
        from aoti_lint.model.suppressions import indexed_suppressions

        noqa = indexed_suppressions(text, code_index(text).hash_strings)  # type: ignore[union-attr]
        result.findings.extend(noqa.filter(found))
        result.project = ProjectPart(source.display_path, summaries, project_codes(rules), noqa)
    else:
        from aoti_lint.model.suppressions import python_filter

        result.findings.extend(python_filter(text, found))


def needs_libcst(source: SourceFile, context: FileContext, wanted: Wanted, build_edits: bool = True) -> bool:
    """Whether ``check_source`` parses the file with libcst, given what ``prefilter.prefiltered`` found: not
    when it is wanted only for the strings naming a `.so` it holds (``light_summaries``), nor when its rules and
    project data are read from ``ast`` (``ast_answer``), in a run that builds no fix edits if a rule is wanted."""
    if len(source.data) > MAX_LIBCST_BYTES:
        return True  # its focused text is read (``_check_focused``), never the whole text's ``ast`` answer
    if not wanted.rules and context.flow is None and _light_index(source.text, wanted.project_rules) is not None:
        return False
    if wanted.rules and build_edits:
        return True
    return ast_answer(source, context, wanted) is None


# The last file ``ast_answer`` answered for: the runner asks, then check_source asks again about the same text.
_answered: list[Any] = [None, None, None]


def ast_answer(
    source: SourceFile, context: FileContext, wanted: Wanted
) -> tuple[list[Finding], dict[str, object]] | None:
    """The findings (before noqa comments) and the project data of a Python file read from its ``ast`` alone; None
    when libcst must read it: some rule is read with libcst (not an ``AstRule``), the run's migration plan
    concerns the file, or its deprecated calls or device flow are not settled from ``ast``
    (``analysis.ast_flow``: AOTI001/AOTI002 and the device-flow summary come from one reading). Fixes' edits are
    left deferred."""
    if context.flow is not None or source.kind != "python":
        return None
    from aoti_lint.rules.device_flow import DeviceFlowRule

    if not all(issubclass(rule, DeviceFlowRule) for rule in wanted.project_rules):
        return None
    others: list[type[AstRule]] = []
    for rule in wanted.rules:
        if rule.code in MIGRATION_CODES:
            continue
        if not issubclass(rule, AstRule):
            return None
        others.append(rule)
    text = source.text
    key = (source.display_path, tuple(wanted.rules), tuple(wanted.project_rules), context.target_torch)
    if _answered[0] is text and _answered[1] == key:
        return _answered[2]
    _answered[:] = [text, key, _ast_answer(source, context, wanted, others)]
    return _answered[2]


def _ast_answer(
    source: SourceFile, context: FileContext, wanted: Wanted, others: list[type[AstRule]]
) -> tuple[list[Finding], dict[str, object]] | None:
    from aoti_lint.model.name_index import code_index

    text = source.text
    index = code_index(text)
    if index is None or index.tree is None:
        return None
    from aoti_lint.rules.checker import check_module

    try:
        found = check_module(others, AstModule(index, source.display_path, context.target_torch))
    except Exception:  # a bug in a reading, or a tree too deep for it: the full path reports the error
        return None
    for finding in found:
        if finding.fix is not None:
            finding.fix = finding.fix.settled(build_edits=False)
    summaries: dict[str, object] = {}
    codes = {rule.code for rule in wanted.rules} & MIGRATION_CODES
    if codes or wanted.project_rules:
        from aoti_lint.model.suppressions import indexed_suppressions
        from aoti_lint.rules.ast_flow import read_flow

        noqa = indexed_suppressions(text, index.hash_strings)
        try:
            flow = read_flow(source.path, source.display_path, text, index.tree, context.target_torch, noqa)
        except Exception:  # a bug in the ast reading: libcst's analysis answers
            flow = None
        if flow is None:
            return None
        found.extend(finding for finding in flow.findings if finding.code in codes)
        if wanted.project_rules:
            summaries[FLOW_SUMMARY] = flow.summary
    return found, summaries


def _light_index(text: str, project_rules: Sequence[type[Rule]]) -> CodeIndex | str | None:
    """For a file whose project data is only its `.so` mentions: "text" when its text alone tells them
    (``so_mentions.text_mentions``), else its ``ast`` index; None when libcst must read it."""
    from aoti_lint.rules.device_flow import DeviceFlowRule

    if not project_rules or not all(issubclass(rule, DeviceFlowRule) for rule in project_rules):
        return None
    from aoti_lint.flows.so_mentions import text_mentions

    if text_mentions(text) is not None:
        return "text"
    from aoti_lint.model.name_index import code_index

    index = code_index(text)
    if index is None or index.tree is None or not DeviceFlowRule.mentions_only(index):
        return None
    return index


def light_summaries(
    source: SourceFile, text: str, project_rules: Sequence[type[Rule]]
) -> tuple[dict[str, object], Suppressions] | None:
    """The flow summary of a file summarised only for strings naming a `.so`, read from its text or its ``ast``,
    with the file's noqa comments; None when libcst must read it (``analysis.so_mentions``)."""
    index = _light_index(text, project_rules)
    if index is None:
        return None
    from aoti_lint.flows.so_mentions import light_summary, text_mentions
    from aoti_lint.model.suppressions import indexed_suppressions

    if index == "text":
        read = text_mentions(text)
        assert read is not None
        return {FLOW_SUMMARY: read.summary(source.path, source.display_path)}, indexed_suppressions(
            text, read.hash_strings
        )
    assert not isinstance(index, str) and index.tree is not None
    summary = light_summary(source.path, source.display_path, text, index.tree, frozenset(index.reached))
    if summary is None:
        return None
    return {FLOW_SUMMARY: summary}, indexed_suppressions(text, index.hash_strings)
