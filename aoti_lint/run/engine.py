"""The lint core's middle: one text in, its findings and fixed bytes out. Prefilter, parse once, run every enabled
rule in one traversal, suppress; with fixes, apply them and lint again until none is left.

Nothing here touches the disk or knows about other files: reading, writing, the worker pool, the cache and
stdin live above (``aoti_lint.run.disk``, ``aoti_lint.run.runner``, ``aoti_lint.run.lint``), the project pass
across files in ``aoti_lint.run.project_pass``. libcst is imported only once some file passes the prefilter
(``aoti_lint.model.parse``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from aoti_lint.diagnostics import FileError, Finding, Fix
from aoti_lint.model.node_positions import NotReproduced
from aoti_lint.model.parse import MAX_LIBCST_BYTES
from aoti_lint.read.source import PYTHON_KINDS, DecodeError, SourceFile
from aoti_lint.rules.base import AstModule, AstRule, PythonRule, TextRule
from aoti_lint.rules.syntax_error import SyntaxErrorRule
from aoti_lint.run.ast_answer import add_ast_answer, ast_answer, light_summaries
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.prefilter import Wanted, by_bytes, by_code, place, with_imported_modules
from aoti_lint.run.results import CheckResult, ProjectPart, project_codes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import libcst as cst

    from aoti_lint.rules.libcst_context import PythonContext


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


def internal_error(source: SourceFile, exc: Exception) -> FileError:
    """A bug in a rule, reported for the one file (traceback with --verbose); the run goes on."""
    import traceback

    return FileError(
        source.display_path,
        f"internal error while linting: {type(exc).__name__}: {exc}",
        detail=traceback.format_exc(),
    )


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
    if prefilter:
        # A file wanted only for its project data, without a migration plan, may not need libcst at all.
        light = None
        if not wanted.rules and context.flow is None:
            light = light_summaries(source, text, wanted.project_rules)
        if light is not None:
            summaries, noqa = light
            result.project = ProjectPart(source.display_path, summaries, project_codes(rules), noqa)
            return result
    # Past libcst's limit, a file the rules read (and not the strings alone) is read in its focused statements, where
    # the cost of the whole module's readings would grow with all of it.
    if len(source.data) > MAX_LIBCST_BYTES and not _focused:
        return _check_focused(source, context, prefilter, wanted, result)
    if prefilter and (not build_edits or not wanted.rules):
        answered = ast_answer(source, context, wanted)
        if answered is not None:
            add_ast_answer(source, result, rules, *answered)
            return result
    if not text.isascii():
        from aoti_lint.model.parse import folds_names, named_text

        if folds_names(text):  # libcst reads names as written, CPython as their NFKC form: give it those
            named = named_text(text)
            if named != text:
                source = SourceFile(source.path, source.display_path, source.kind, source.data, named, source.encoding)
                text = named
    return _check_with_libcst(source, context, wanted, text, build_edits, result)


def _check_focused(
    source: SourceFile, context: FileContext, prefilter: bool, wanted: Wanted, result: CheckResult
) -> CheckResult:
    """A file past ``MAX_LIBCST_BYTES``: checked as its focused text (``parse.focused_text``), which gives the same
    findings at the same places at a cost that grows with the statements the rules read, not with the file; no
    fix is built (libcst would rewrite the whole file)."""
    from aoti_lint.model.parse import MAX_LIBCST_BYTES, syntax_error

    text = source.text
    refused = syntax_error(text)  # CPython's own error, without libcst's parse of the whole text
    if refused is not None:
        if SyntaxErrorRule in context.rules:
            result.findings.append(SyntaxErrorRule.refusal(source, *refused))
        return result
    focused = _focus(text, wanted)
    if focused is None:
        # The limit is libcst's: where every rule the file wants is read from ``ast``, the whole text is.
        answered = ast_answer(source, context, wanted) if prefilter else None
        if answered is None:
            limit = f"{MAX_LIBCST_BYTES:,}"
            why = f"not checked: the statements the rules read are over the {limit}-byte limit of libcst's analysis"
            result.errors.append(FileError(source.display_path, why))
            return result
        add_ast_answer(source, result, context.rules, *answered)
        checked = result
    else:
        part = SourceFile(source.path, source.display_path, source.kind, source.data, focused, source.encoding)
        checked = check_source(part, context, prefilter, False, wanted if prefilter else None, _focused=True)
    for finding in checked.findings:
        if finding.fix is not None:
            finding.fix = unavailable(finding.fix, TOO_LARGE_TO_REWRITE)
            checked.notes[TOO_LARGE_TO_REWRITE] = FileError(
                source.display_path, f"fixes unavailable: {TOO_LARGE_TO_REWRITE}"
            )
    return checked


def _check_with_libcst(
    source: SourceFile, context: FileContext, wanted: Wanted, text: str, build_edits: bool, result: CheckResult
) -> CheckResult:
    """The findings libcst's analysis gives. libcst reads the whole text, or, past ``MAX_LIBCST_BYTES`` (or where
    its code generation does not give the text back), only the statements the rules can read
    (``parse.focused_text``): the findings are the same, their fixes unavailable."""
    focused: str | None = None
    why = ""
    checked = _libcst_findings(source, context, wanted, text, build_edits, result)
    if isinstance(checked, NotReproduced):
        focused, why = _focus(text, wanted), str(checked)
        if focused is not None and focused != text:
            result.notes.clear()
            checked = _libcst_findings(source, context, wanted, focused, False, result)
    if isinstance(checked, NotReproduced):
        error = FileError(source.display_path, f"not checked: {checked}; positions and fixes would be off")
        return _without_libcst(source, context, wanted, result, str(checked), error)
    if isinstance(checked, RecursionError):
        error = FileError(source.display_path, "too deeply nested to analyse")
        return _without_libcst(source, context, wanted, result, "too deeply nested for libcst", error)
    if isinstance(checked, FileError):
        result.errors.append(checked)
        return result
    if checked is None:
        return result
    if focused is not None:
        for finding in checked:
            if finding.fix is not None:
                finding.fix = unavailable(finding.fix, why)
                result.notes[why] = FileError(source.display_path, f"fixes unavailable: {why}")
    result.findings.extend(checked)
    return result


def _focus(text: str, wanted: Wanted) -> str | None:
    """The text libcst reads where it is not given the whole text (``parse.focused_text``), or None where that part
    is over ``MAX_LIBCST_BYTES``."""
    from aoti_lint.model.parse import MAX_LIBCST_BYTES, focused_text

    tokens: set[str] = set()
    for rule in (*wanted.rules, *wanted.project_rules):
        for group in (*rule.triggers, *getattr(rule, "summary_triggers", ())):
            tokens.update(token.decode("utf-8", "replace") for token in group)
    focused = focused_text(text, frozenset(tokens))
    if focused is None or focused[1] > MAX_LIBCST_BYTES:
        return None
    return focused[0]


def _libcst_findings(
    source: SourceFile, context: FileContext, wanted: Wanted, text: str, build_edits: bool, result: CheckResult
) -> list[Finding] | RecursionError | NotReproduced | FileError | None:
    """libcst's findings over ``text`` (the file's, or its focused part), noqa comments applied (project data and
    syntax errors go to ``result``); None for a syntax error; the exception that stopped the analysis."""
    from aoti_lint.model.parse import parse_module

    rules = context.rules
    if text is not source.text:  # the focused part: every reading of this analysis reads it, at the same rows
        source = SourceFile(source.path, source.display_path, source.kind, source.data, text, source.encoding)
    module = parse_module(source, text)
    if isinstance(module, tuple):
        refused = SyntaxErrorRule.refusal(source, *module)
        if _python_accepts(text):
            # CPython reads the file (its reading is what runs); libcst does not: the ast reading's findings, if it
            # settles them, and no fix.
            _without_libcst(source, context, wanted, result, "libcst cannot parse this file", refused)
        elif any(rule is SyntaxErrorRule for rule in rules):
            result.findings.append(refused)
        return None
    result.parsed = True
    try:
        findings, summaries, python_context = _check_python(source, module, wanted, context, text)
        for finding in findings:
            if finding.fix is not None:
                try:
                    finding.fix = finding.fix.settled(build_edits)
                except RecursionError:  # the codemod's libcst recursion: the finding stands, its fix cannot be built
                    finding.fix = unavailable(finding.fix, TOO_DEEP_TO_REWRITE)
                    result.notes[TOO_DEEP_TO_REWRITE] = FileError(
                        source.display_path, f"fixes unavailable: {TOO_DEEP_TO_REWRITE}"
                    )
    except (RecursionError, NotReproduced) as exc:
        return exc
    except Exception as exc:  # a bug in a rule must not stop the run
        return internal_error(source, exc)
    if summaries:
        from aoti_lint.model.suppressions import parsed_suppressions

        # The project pass filters its own findings in this file: every comment is read.
        suppressions = parsed_suppressions(python_context)
        findings = suppressions.filter(findings)
        result.project = ProjectPart(source.display_path, summaries, project_codes(rules), suppressions)
    elif findings:
        from aoti_lint.model.suppressions import parsed_suppressions, python_filter

        findings = python_filter(text, findings, lambda _: parsed_suppressions(python_context))
    return findings


TOO_LARGE_TO_REWRITE = "the file is too large for libcst to rewrite"
TOO_DEEP_TO_REWRITE = "too deeply nested for libcst to rewrite"


def unavailable(fix: Fix, why: str) -> Fix:
    """The fix as shown where its edits cannot be built: no edits, its message saying why."""
    return Fix(fix.applicability, f"{fix.message} (unavailable: {why})")


def _python_accepts(text: str) -> bool:
    from aoti_lint.model.syntax_tree import parse

    return not isinstance(parse(text), BaseException)


def _without_libcst(
    source: SourceFile,
    context: FileContext,
    wanted: Wanted,
    result: CheckResult,
    why: str,
    otherwise: Finding | FileError,
) -> CheckResult:
    """The file's findings where libcst cannot analyse a file CPython reads: the ``ast`` reading's (what a run that
    builds no fix edits reports anyway, so that no output format or fix option changes the verdict), each fix
    unavailable and saying why; ``otherwise`` (the error, or libcst's syntax error) where that reading does not
    settle the file."""
    # No fix can be built here, so the migration plan, which only decides fixes, has nothing to add.
    answered = ast_answer(source, replace(context, flow=None), wanted)
    if answered is None:
        if isinstance(otherwise, FileError):
            result.errors.append(otherwise)
        elif any(rule is SyntaxErrorRule for rule in context.rules):
            result.findings.append(otherwise)
        return result
    found, summaries = answered
    for finding in found:
        if finding.fix is not None:
            finding.fix = unavailable(finding.fix, why)
    if any(finding.fix is not None for finding in found):
        result.notes[why] = FileError(source.display_path, f"fixes unavailable: {why}")
    add_ast_answer(source, result, context.rules, found, summaries)
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


def _check_python(
    source: SourceFile, module: cst.Module, wanted: Wanted, context: FileContext, text: str
) -> tuple[list[Finding], dict[str, object], PythonContext]:
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from aoti_lint.rules.libcst_context import PythonContext

    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    python_context = PythonContext(source, module, wrapper, context.target_torch, text)
    python_context.flow = context.flow

    # Each rule's own visit_<Type>/leave_<Type> methods, called in one traversal as libcst's batched visitor
    # would call them.
    methods: dict[str, list[Any]] = {}
    read_from_ast = [rule_type for rule_type in wanted.rules if issubclass(rule_type, AstRule)]
    for rule_type in wanted.rules:
        if rule_type in read_from_ast:
            continue
        rule = rule_type(python_context)
        for name in dir(rule_type):
            if name.startswith(("visit_", "leave_")) and callable(getattr(rule, name)):
                methods.setdefault(name, []).append(getattr(rule, name))
    if methods:
        kinds = {getattr(cst, name.split("_", 1)[1], None) for name in methods}
        events = None if None in kinds else python_context.facts().visits(frozenset(kinds))  # type: ignore[arg-type]
        if events is None:  # an attribute's visitor (visit_Call_func), whitespace: libcst's traversal
            wrapper.visit_batched([_batched_rules(methods)])
        else:
            for entering, node in events:
                for method in methods.get(("visit_" if entering else "leave_") + type(node).__name__, ()):
                    method(node)
    if read_from_ast:
        from aoti_lint.model.name_index import code_index

        index = code_index(text)
        if index is not None:
            from aoti_lint.rules.checker import check_module

            module_read = AstModule(index, source.display_path, context.target_torch)
            python_context.findings.extend(check_module(read_from_ast, module_read))
    summaries: dict[str, object] = {}
    for project_rule in wanted.project_rules:
        if project_rule.summary_key not in summaries:
            summaries[project_rule.summary_key] = project_rule.summarize(python_context)
    return python_context.findings, summaries, python_context


def _batched_rules(methods: dict[str, list[Any]]) -> Any:
    import libcst as cst

    class BatchedRules(cst.BatchableCSTVisitor):
        """The rules' methods for libcst's own batched traversal."""

        def get_visitors(self) -> dict[str, Any]:
            def each(calls: list[Any]) -> Any:
                return lambda node: [call(node) for call in calls]

            return {name: each(calls) for name, calls in methods.items()}

    return BatchedRules()
