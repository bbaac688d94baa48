"""The edits of the fixes, built where a run applies or shows them (``--fix``, ``--diff``, an output that shows
edits): the one place a check parses a file with libcst, and only for the fixes of deprecated calls.

The findings, their fixes' verdicts and the file's flow summary are ``rules.module_flow``'s; here the codemod
(``codemods.migration``) writes what the reading planned for each site (``flows.sites.planned_rewrites``). A site
whose syntax the codemod cannot rewrite as planned gets no edits: its fix says why, and nothing is written for it.
"""

from __future__ import annotations

from dataclasses import replace

from aoti_lint.diagnostics import Applicability, FileError, Finding, Fix
from aoti_lint.fixes.node_positions import NotReproduced
from aoti_lint.flows.migration_verdicts import CANNOT_WRITE
from aoti_lint.read.source import SourceFile
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.results import MIGRATION_CODES, CheckResult, internal_error

TOO_LARGE_TO_REWRITE = "the file is too large for libcst to rewrite"
TOO_DEEP_TO_REWRITE = "too deeply nested for libcst to rewrite"


def add_migration_edits(
    source: SourceFile, context: FileContext, findings: list[Finding], notes: dict[str, FileError]
) -> bool:
    """Give each AOTI001/AOTI002 finding with a fix the builder of its edits; a fix whose edits cannot be built is
    marked unavailable, saying why (``notes``). Returns whether libcst parsed the file."""
    pending = [f for f in findings if f.code in MIGRATION_CODES and f.fix is not None and f.fix.deferred]
    if not pending:
        return False
    why = _unwritable(source)
    plan = None
    parsed = False
    if why is None:
        from aoti_lint.fixes.parse import parse_module

        module = parse_module(source, source.text)
        if isinstance(module, tuple):
            why = "libcst cannot parse this file"
        else:
            parsed = True
            from libcst.metadata import MetadataWrapper

            from aoti_lint.codemods.migration_plan import MigrationPlan
            from aoti_lint.fixes.module_facts import ModuleFacts

            wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
            try:
                facts = ModuleFacts(wrapper, source.text)
                # The reading's plan of this text, which the check made (every migration finding carries it).
                planned = list(pending[0].data) if isinstance(pending[0].data, tuple) else None
                plan = MigrationPlan(facts, context.target_torch, context.flow, str(source.path), planned)
            except RecursionError:
                why = TOO_DEEP_TO_REWRITE
            except NotReproduced as exc:
                why = str(exc)
    if plan is None:
        assert why is not None
        notes[why] = FileError(source.display_path, f"fixes unavailable: {why}")
        for finding in pending:
            finding.fix = unavailable(finding.fix, why)  # type: ignore[arg-type]
        return parsed
    from aoti_lint.codemods.migration import fix_for_site

    positions = plan.facts.positions
    sites = {}
    for site in plan.sites:
        start = positions[site.reference].start
        sites[(start.line, start.column + 1)] = site
    for finding in pending:
        fix = finding.fix
        assert fix is not None
        site = sites.get((finding.start.row, finding.start.column))
        if site is None or site.verdict.applicability is not fix.applicability:
            finding.fix = unavailable(fix, CANNOT_WRITE)
            notes[CANNOT_WRITE] = FileError(source.display_path, f"fixes unavailable: {CANNOT_WRITE}")
            continue
        # A notebook's fix edits its own cell only: a flow across cells is migrated whole by `--fix`.
        built = fix_for_site(plan, id(site.reference), source.text, whole_flow=source.kind != "jupyter")
        if built.applicability is Applicability.DISPLAY_ONLY or built.build is None:
            finding.fix = unavailable(fix, CANNOT_WRITE)
            notes[CANNOT_WRITE] = FileError(source.display_path, f"fixes unavailable: {CANNOT_WRITE}")
            continue
        finding.fix = replace(fix, build=built.build, deferred=False)
    return True


def _unwritable(source: SourceFile) -> str | None:
    """Why the codemod cannot rewrite the file, before parsing it; None when it may."""
    from aoti_lint.fixes.parse import MAX_LIBCST_BYTES

    if len(source.data) > MAX_LIBCST_BYTES:
        return TOO_LARGE_TO_REWRITE
    if not source.text.isascii():
        from aoti_lint.model.parse import folds_names

        if folds_names(source.text):  # planned on the names as CPython reads them, not as written
            return "its names are read in their NFKC form, which the migration would write"
    return None


def built(source: SourceFile, fix: Fix, result: CheckResult) -> Fix:
    """The fix with its edits built, or unavailable saying why (the codemod's libcst cannot rewrite the file)."""
    try:
        return fix.settled(build_edits=True)
    except RecursionError:
        why = TOO_DEEP_TO_REWRITE
    except NotReproduced as exc:
        why = str(exc)
    except Exception as exc:
        import libcst

        if not isinstance(exc, libcst.ParserSyntaxError):
            result.errors.append(internal_error(source, exc))  # a bug in a fix must not stop the run
            return unavailable(fix, "building it failed")
        why = "libcst cannot parse this file"
    result.notes[why] = FileError(source.display_path, f"fixes unavailable: {why}")
    return unavailable(fix, why)


def unavailable(fix: Fix, why: str) -> Fix:
    """The fix as shown where its edits cannot be built: no edits, its message saying why."""
    return Fix(fix.applicability, f"{fix.message} (unavailable: {why})")
