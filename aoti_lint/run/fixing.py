"""One text with fixes: lint it, apply the fixes the options allow, lint the result again until no fix is left,
and refuse a result that does not parse; the findings that remain are reported at the fixed text's places."""

from __future__ import annotations

from dataclasses import replace

from aoti_lint.diagnostics import Edit, FileError, Finding
from aoti_lint.fixes.node_positions import NotReproduced
from aoti_lint.read.source import SourceFile
from aoti_lint.rules.base import Rule
from aoti_lint.run.engine import check_source
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.fix_edits import TOO_DEEP_TO_REWRITE, TOO_LARGE_TO_REWRITE
from aoti_lint.run.prefilter import Wanted
from aoti_lint.run.results import CheckResult, FileOutcome
from aoti_lint.settings.run_options import FixOptions


def fix_source(
    source: SourceFile, context: FileContext, result: CheckResult, unsafe: bool
) -> tuple[SourceFile, int, CheckResult]:
    """Apply the applicable fixes, re-linting after each round (as ruff does) until none is left.

    Each round takes the fixes whose edits do not overlap those already taken; the rest wait for the next
    round, computed on the new text. Returns the fixed source, the number of fixes applied and the final
    lint result.
    """
    from aoti_lint.fixes.edits import apply_edits, overlaps

    fixed = 0
    applied: set[str] = set()
    for _ in range(MAX_FIX_ITERATIONS):
        chosen: list[Finding] = []
        edits: list[tuple[Edit, ...]] = []
        taken: set[Edit] = set()
        for finding in sorted(result.findings, key=Finding.sort_key):
            fix = finding.fix
            if fix is None or not finding.fix_applies(unsafe):
                continue
            if fix.edits and taken.issuperset(fix.edits):
                # The same edits as a fix already taken (each site of a flow carries the whole flow's): fixed by
                # it, counted as ruff counts a fix it applies once for several diagnostics.
                chosen.append(finding)
            elif not any(overlaps(e, fix.edits) for e in edits):
                chosen.append(finding)
                edits.append(fix.edits)
                taken.update(fix.edits)
        if not chosen:
            break
        text = apply_edits(source.text, [edit for group in edits for edit in group])
        if text == source.text:
            break
        fixed += len(chosen)
        applied.update(finding.code for finding in chosen)
        source = source.with_text(text)
        result = check_source(source, context)
    text = source.text
    for rule in context.rules:
        # A fix sees one finding at a time; what only the whole set of fixes leaves behind (an import no
        # longer used by anything) is tidied once at the end.
        if rule.code in applied and rule.tidy_after_fix is not Rule.tidy_after_fix:
            text = rule.tidy_after_fix(text)
    if text != source.text:
        source = source.with_text(text)
        result = check_source(source, context)
    return source, fixed, result


class _Unfixable(Exception):
    """A file CPython reads whose fixes libcst cannot build: its findings stand, nothing is written."""


def process_source(
    source: SourceFile, context: FileContext, fix: FixOptions, prefiltered: Wanted | None = None
) -> FileOutcome:
    """Lint one file and, when asked, fix it in memory: the outcome carries the fixed bytes only if they still
    parse (``aoti_lint.run.disk.lint_file`` writes them). ``prefiltered``: see ``check_source``.

    ``context.flow`` is the run's migration plan for this file: its part of every artifact flow the fix options
    allow is migrated in one pass, then the other fixes follow.
    """
    flow = context.flow
    outcome = FileOutcome(path=source.display_path, checked=True)
    from aoti_lint.model import project_names

    project_names.consulted.clear()
    result = check_source(source, context, build_edits=fix.builds_edits, prefiltered=prefiltered)
    outcome.depends_on = tuple(dict.fromkeys([*result.depends_on, *sorted(project_names.consulted)]))
    shown = source
    groups = flow.allowed_groups(fix.unsafe) if fix.apply and flow is not None else frozenset()
    if fix.apply and (groups or any(f.fix_applies(fix.unsafe) for f in result.findings)):
        try:
            fixed_source, fixed, after = source, 0, result
            if groups and flow is not None:
                from aoti_lint.codemods.migration import migrate_flows
                from aoti_lint.fixes.parse import MAX_LIBCST_BYTES

                if result.notes:  # libcst cannot rewrite this file (the check found why)
                    raise _Unfixable(next(iter(result.notes)))
                if len(source.data) > MAX_LIBCST_BYTES:
                    raise _Unfixable(TOO_LARGE_TO_REWRITE)
                if not source.text.isascii():
                    from aoti_lint.model.parse import folds_names

                    if folds_names(source.text):  # planned on the names as CPython reads them, not as written
                        raise _Unfixable("its names are read in their NFKC form, which the migration would write")

                try:
                    text, fixed = migrate_flows(source.text, flow, groups, context.target_torch, path=str(source.path))
                except RecursionError:  # libcst's recursion on a file CPython reads: reported, never a half fix
                    raise _Unfixable(TOO_DEEP_TO_REWRITE) from None
                except NotReproduced as exc:
                    raise _Unfixable(str(exc)) from None
                except Exception as exc:  # a bug in the codemod must not stop the run, nor write anything
                    raise ValueError(
                        f"the migration of its artifact flows failed: {type(exc).__name__}: {exc}"
                    ) from exc
                context = replace(context, flow=flow.after(groups))
                fixed_source = source.with_text(text)
                after = check_source(fixed_source, context)
            if any(f.fix_applies(fix.unsafe) for f in after.findings):
                fixed_source, more, after = fix_source(fixed_source, context, after, fix.unsafe)
                fixed += more
        except _Unfixable as exc:
            result.notes[str(exc)] = FileError(source.display_path, f"fixes unavailable: {exc}; nothing written")
            fixed_source, fixed, after, groups = source, 0, result, frozenset()
        except ValueError as exc:  # edits that cannot be applied, e.g. across notebook cells
            outcome.errors.append(
                FileError(source.display_path, f"fixes could not be applied ({exc}); nothing written")
            )
            fixed_source, fixed, after, groups = source, 0, result, frozenset()
        from aoti_lint.fixes.parse import parse_error

        broken = parse_error(fixed_source) if fixed_source.text != source.text else None
        if broken is not None:
            outcome.errors.append(
                FileError(source.display_path, f"fixes would break the file ({broken}); nothing written")
            )
        elif (fixed or groups) and fixed_source.text != source.text:
            outcome.fixed = fixed
            outcome.flow_groups = groups
            outcome.original_text, outcome.fixed_text = source.diff_text, fixed_source.diff_text
            outcome.fixed_data = fixed_source.data
            outcome.source_path, outcome.original_data = source.path, source.data
            result, shown = after, fixed_source
    outcome.findings = shown.locate(result.findings)
    outcome.errors.extend(result.errors)
    outcome.notes.extend(result.notes.values())
    outcome.project = result.project
    return outcome


MAX_FIX_ITERATIONS = 10
