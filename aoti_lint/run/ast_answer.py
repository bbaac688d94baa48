"""A Python file's findings and project data, read from its ``ast`` (``AstRule``, ``rules/module_flow.py``). libcst
reads no file here."""

from __future__ import annotations

from collections.abc import Sequence

from aoti_lint.diagnostics import FileError, Finding
from aoti_lint.read.source import SourceFile
from aoti_lint.rules.base import AstModule, AstRule, Rule
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.prefilter import Wanted
from aoti_lint.run.results import FLOW_SUMMARY, MIGRATION_CODES, CheckResult, ProjectPart, project_codes

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass


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
    """Whether ``check_source`` may parse the file with libcst, given what ``prefilter.prefiltered`` found: only to
    build the edits of a fix of a deprecated call (``fixes.migration_edits``), in a run that builds edits."""
    return build_edits and any(rule.code in MIGRATION_CODES for rule in wanted.rules)


def ast_answer(
    source: SourceFile, context: FileContext, wanted: Wanted
) -> tuple[list[Finding], dict[str, object]] | FileError:
    """The findings (before noqa comments, their fixes' edits not built) and the project data of a Python file, read
    from its ``ast``: every rule but AOTI001/AOTI002 is an ``AstRule``, and those two and the device-flow summary
    come from one reading (``rules.module_flow``), which applies the run's migration plan (``context.flow``) to the
    fixes' verdicts. A reading that fails is the file's error."""
    from aoti_lint.model.name_index import code_index
    from aoti_lint.run.results import internal_error

    text = source.text
    index = code_index(text)
    if index is None or index.tree is None:
        return [], {}  # CPython refuses it: AOTI000 says so where selected (``engine.check_source``)
    from aoti_lint.rules.checker import check_module

    others = [rule for rule in wanted.rules if issubclass(rule, AstRule)]
    try:
        found = check_module(others, AstModule(index, source.display_path, context.target_torch))
    except RecursionError:
        return FileError(source.display_path, "not checked: too deeply nested to analyse")
    except Exception as exc:  # a bug in a rule must not stop the run
        return internal_error(source, exc)
    summaries: dict[str, object] = {}
    codes = {rule.code for rule in wanted.rules if not issubclass(rule, AstRule)} & MIGRATION_CODES
    if codes or wanted.project_rules:
        from aoti_lint.model.suppressions import indexed_suppressions
        from aoti_lint.rules.module_flow import read_flow

        noqa = indexed_suppressions(text, index.hash_strings)
        try:
            flow = read_flow(
                source.path, source.display_path, text, index.tree, context.target_torch, noqa, context.flow
            )
        except RecursionError:
            return FileError(source.display_path, "not checked: too deeply nested to analyse")
        except Exception as exc:  # a bug in the reading must not stop the run
            return internal_error(source, exc)
        found.extend(finding for finding in flow.findings if finding.code in codes)
        if wanted.project_rules:
            summaries[FLOW_SUMMARY] = flow.summary
    return found, summaries
