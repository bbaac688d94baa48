"""The lint core's middle: one text in, its findings and fixed bytes out. Prefilter, parse once, run every enabled
rule in one traversal, suppress; with fixes, apply them and lint again until none is left.

Nothing here touches the disk or knows about other files: reading, writing, the worker pool, the cache and
stdin live above (``aoti_lint.run.disk``, ``aoti_lint.run.runner``, ``aoti_lint.run.lint``), the project pass
across files in ``aoti_lint.run.project_pass``. libcst is imported only once some file passes the prefilter
(``aoti_lint.model.parse``).
"""

from __future__ import annotations

from collections.abc import Sequence

from aoti_lint.diagnostics import FileError
from aoti_lint.fixes.parse import MAX_LIBCST_BYTES
from aoti_lint.read.source import PYTHON_KINDS, DecodeError, SourceFile
from aoti_lint.rules.base import PythonRule, TextRule
from aoti_lint.rules.syntax_error import SyntaxErrorRule
from aoti_lint.run.ast_answer import add_ast_answer, ast_answer
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.fix_edits import TOO_LARGE_TO_REWRITE, add_migration_edits, built, unavailable
from aoti_lint.run.prefilter import Wanted, by_bytes, by_code, place, with_imported_modules
from aoti_lint.run.results import CheckResult, internal_error

# Past these, a file some rule would read is reported as not checked instead of parsed: libcst's time and memory
# grow past any budget on such files, and gigabytes on one long line; a file no rule looks at costs its read,
# whatever its size.
MAX_CHECKED_BYTES = 2_000_000
MAX_LINE_BYTES = 100_000


def over_limits(source: SourceFile) -> FileError | None:
    """Why the file is too big to check (size, longest line), or None."""
    size = len(source.data)
    if size > MAX_CHECKED_BYTES:
        return FileError(
            source.display_path, f"not checked: {size:,} bytes is over the {MAX_CHECKED_BYTES:,}-byte limit"
        )
    if size > MAX_LINE_BYTES and has_line_over(source.data, MAX_LINE_BYTES):
        longest = max(map(len, source.data.splitlines()))
        return FileError(
            source.display_path,
            f"not checked: a line of {longest:,} bytes is over the {MAX_LINE_BYTES:,}-byte limit",
        )
    return None


def has_line_over(data: bytes, limit: int) -> bool:
    """Whether a line of ``data`` (as ``bytes.splitlines`` splits it) is longer than ``limit`` bytes: the last line
    end of each window of ``limit + 1`` bytes, searched from the end at C speed, instead of a list of every line
    (torch's big files made that a visible share of a run)."""
    start, size = 0, len(data)
    while size - start > limit:
        stop = start + limit + 1
        end = max(data.rfind(b"\n", start, stop), data.rfind(b"\r", start, stop))
        if end == -1:
            return True
        start = end + 1
    return False


def check_source(
    source: SourceFile,
    context: FileContext,
    prefilter: bool = True,
    build_edits: bool = True,
    prefiltered: Wanted | None = None,
    _focused: bool = False,
) -> CheckResult:
    """Lint one file's content with the context's rules (already chosen for its path and kind).

    ``prefilter=False`` runs every rule whatever the bytes hold: the soundness test compares both ways.
    ``build_edits=False`` leaves the fixes whose edits are costly to build deferred (``Fix.settled``).
    ``prefiltered``: what ``prefilter.prefiltered`` already found for these bytes and this context.
    """
    result = CheckResult()
    rules = context.rules
    if source.kind not in PYTHON_KINDS:
        return _check_text(
            source,
            [
                rule
                for rule in rules
                if issubclass(rule, TextRule) and (not prefilter or rule.could_match(source.prefilter_data))
            ],
        )
    if prefilter:
        wanted = prefiltered if prefiltered is not None else by_bytes(source.prefilter_data, context)
    else:
        wanted = Wanted([rule for rule in rules if issubclass(rule, PythonRule)], list(context.project_rules))
    # A text no rule wants after the prefilter's stages cannot hold a finding: it is not parsed, and AOTI000 has
    # nothing to say of it (``prefiltered`` holds every stage's answer, else stage one's is given here; a file that
    # passes the screen may still be wanted for the modules it imports, ``with_imported_modules``).
    if not wanted and (prefiltered is not None or not prefilter or not context.reads(source.prefilter_data)):
        result.depends_on = wanted.imported
        return result
    report_syntax = SyntaxErrorRule in rules
    try:
        text = source.text
    except DecodeError as exc:
        if report_syntax:
            result.findings.append(SyntaxErrorRule.refusal(source, f"SyntaxError: {exc}", 1, 1))
        return result
    if prefilter and prefiltered is None:
        wanted = with_imported_modules(source, text, context, by_code(text, wanted) if wanted else wanted)
        if not wanted:
            result.depends_on = wanted.imported
            return result
    if not prefilter and context.reads(source.prefilter_data):
        # Every rule, and names followed into the modules the file imports where the screen would read it.
        wanted = with_imported_modules(source, text, context, wanted)
    result.depends_on = wanted.imported
    if wanted.imported:
        place(source, text)  # in this process too: the stages may have run in another
    if report_syntax:
        # A text some rule reads is reported, and read no further, when CPython refuses it: the same parse the code
        # stage made (``syntax_tree.parse``), asked again.
        from aoti_lint.model.parse import syntax_error

        refused = syntax_error(text)
        if refused is not None:
            result.findings.append(SyntaxErrorRule.refusal(source, *refused))
            return result
    answered = ast_answer(source, context, wanted)
    if isinstance(answered, FileError):
        result.errors.append(answered)
        return result
    found, summaries = answered
    if len(source.data) > MAX_LIBCST_BYTES:  # in every run, so that no output format changes what a fix says
        for finding in found:
            if finding.fix is not None:
                finding.fix = unavailable(finding.fix, TOO_LARGE_TO_REWRITE)
                result.notes[TOO_LARGE_TO_REWRITE] = FileError(
                    source.display_path, f"fixes unavailable: {TOO_LARGE_TO_REWRITE}"
                )
    elif build_edits:
        result.parsed = add_migration_edits(source, context, found, result.notes)
        for finding in found:
            if finding.fix is not None:
                finding.fix = built(source, finding.fix, result)
    else:
        for finding in found:
            if finding.fix is not None:
                finding.fix = finding.fix.settled(build_edits=False)
    add_ast_answer(source, result, rules, found, summaries)
    return result


def _check_text(source: SourceFile, rules: Sequence[type[TextRule]]) -> CheckResult:
    result = CheckResult()
    if not rules:
        return result
    try:
        text = source.text
    except DecodeError as exc:
        result.errors.append(FileError(source.display_path, f"cannot read as text: {exc}"))
        return result
    result.parsed = True
    for rule in rules:
        try:
            result.findings.extend(rule.check(source))
        except Exception as exc:  # a bug in a rule must not stop the run
            result.errors.append(internal_error(source, exc))
    if result.findings:
        from aoti_lint.model.suppressions import cpp_suppressions, hash_comment_suppressions

        suppressions = cpp_suppressions(text.encode()) if source.kind == "cpp" else hash_comment_suppressions(text)
        result.findings = suppressions.filter(result.findings)
    return result
