"""The lint loop: read bytes, prefilter, parse once, run every enabled rule in one traversal, suppress.

libcst is imported only by ``_check_python``, i.e. only when some file passes the prefilter.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aoti_lint.config import Settings
from aoti_lint.diagnostics import FileError, Finding, Position
from aoti_lint.files import Candidate, MissingPath, discover
from aoti_lint.knowledge.deprecated_api import DEFAULT_TARGET_TORCH
from aoti_lint.rules import ALL_RULES, PythonRule, Rule
from aoti_lint.rules.base import ProjectRule, TextRule
from aoti_lint.rules.syntax_error import SyntaxErrorRule
from aoti_lint.source import PYTHON_KINDS, DecodeError, SourceFile, display_path, file_kind

if TYPE_CHECKING:
    from aoti_lint.runner import Execution
    from aoti_lint.suppressions import Suppressions


# The fixes planned per artifact flow across the files of a run, and the summary that plan reads.
MIGRATION_CODES = frozenset({"AOTI001", "AOTI002"})
FLOW_SUMMARY = "device-flow"


@dataclass
class ProjectPart:
    """What one file gives the project pass (plain data): summaries by ``ProjectRule.summary_key``, the
    project rules enabled for the file, and its noqa comments."""

    path: str
    summaries: dict[str, object]
    codes: frozenset[str]
    suppressions: Suppressions


@dataclass
class FileResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    parsed: bool = False
    project: ProjectPart | None = None


class RuleSet:
    """The enabled rules, and the per-file-ignores that switch some of them off for some paths."""

    def __init__(self, settings: Settings, rules: Sequence[type[Rule]] = ALL_RULES) -> None:
        from aoti_lint import selection

        self.settings = settings
        self.rules = tuple(rule for rule in rules if rule.code in settings.enabled)
        self._per_file = []
        # Invalid per-file-ignores patterns, reported by the run (which goes on without them).
        self.errors: list[FileError] = []
        if settings.per_file_ignores:
            from aoti_lint.files import gitignore_spec  # pathspec is slow to import: only when needed

            def spec(lines: list[str]) -> Any:
                built, problems = gitignore_spec(lines)
                origin = str(settings.config_path or "--per-file-ignores")
                self.errors += [FileError(origin, f"per-file-ignores: {problem}") for problem in problems]
                return built

            # One spec per set of ignored codes, not per pattern: thousands of patterns (generated configs)
            # stay one pass per file. A negated pattern keeps its own spec: in a shared one it would undo others.
            groups: dict[frozenset[str], list[str]] = {}
            for pattern, codes in settings.per_file_ignores:
                resolved = frozenset(selection.resolve(codes, (), ()))
                if pattern.startswith("!"):
                    self._per_file.append((spec([pattern]), resolved))
                else:
                    groups.setdefault(resolved, []).append(pattern)
            self._per_file += [(spec(group), codes) for codes, group in groups.items()]

    def project_rules(self, kind: str) -> tuple[type[Rule], ...]:
        """The project rules to summarise files of ``kind`` for, per-file-ignores left aside: the enabled ones,
        and the device-flow summary whenever the migration fixes are on (they are planned per artifact flow)."""
        rules = tuple(rule for rule in self.rules if issubclass(rule, ProjectRule) and kind in rule.file_kinds)
        if any(rule.code in MIGRATION_CODES for rule in self.rules) and not any(
            rule.summary_key == FLOW_SUMMARY for rule in rules
        ):
            from aoti_lint.rules.device_flow import CrossDeviceLoad

            if kind in CrossDeviceLoad.file_kinds:
                rules += (CrossDeviceLoad,)
        return rules

    def for_file(self, path: Path, kind: str) -> tuple[type[Rule], ...]:
        ignored: set[str] = set()
        if self._per_file:
            try:
                rel = path.resolve().relative_to(self.settings.root).as_posix()
            except ValueError:
                rel = path.as_posix()
            for spec, codes in self._per_file:
                if spec.match_file(rel) or spec.match_file(path.name):
                    ignored |= codes
        return tuple(rule for rule in self.rules if kind in rule.file_kinds and rule.code not in ignored)


# Past these, a file some rule would read is reported as not checked instead of parsed: libcst takes about
# 13 s per 600 kB and gigabytes on a 5 MB line; a file no rule looks at costs its read, whatever its size.
MAX_CHECKED_BYTES = 2_000_000
MAX_LINE_BYTES = 100_000


def over_limits(source: SourceFile) -> FileError | None:
    """Why the file is too big to check (size, longest line), or None."""
    size = len(source.data)
    if size > MAX_CHECKED_BYTES:
        return FileError(
            source.display_path, f"not checked: {size:,} bytes is over the {MAX_CHECKED_BYTES:,}-byte limit"
        )
    if size > MAX_LINE_BYTES:
        longest = max(map(len, source.data.splitlines()))
        if longest > MAX_LINE_BYTES:
            return FileError(
                source.display_path,
                f"not checked: a line of {longest:,} bytes is over the {MAX_LINE_BYTES:,}-byte limit",
            )
    return None


def syntax_error_finding(source: SourceFile, message: str, row: int, column: int) -> Finding:
    return Finding(
        code=SyntaxErrorRule.code,
        message=message,
        path=source.display_path,
        start=Position(max(row, 1), max(column, 1)),
        end=Position(max(row, 1), max(column, 1)),
        severity=SyntaxErrorRule.severity,
        url=SyntaxErrorRule.url(),
    )


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
    rules: Sequence[type[Rule]],
    prefilter: bool = True,
    target_torch: tuple[int, int] = DEFAULT_TARGET_TORCH,
    summary_rules: Sequence[type[Rule]] | None = None,
    flow: Any = None,
) -> FileResult:
    """Lint one file's content with the given rules (already filtered for its path and kind).

    ``prefilter=False`` runs every rule whatever the bytes hold: the soundness test compares both ways.
    ``summary_rules`` are the project rules to summarise the file for (default: those in ``rules``); a rule
    per-file-ignored here still needs the file's summary to check the other files.
    """
    result = FileResult()
    wanted = [rule for rule in rules if not prefilter or rule.could_match(source.prefilter_data)]
    if source.kind not in PYTHON_KINDS:
        return _check_text(source, [rule for rule in wanted if issubclass(rule, TextRule)])
    python_rules = [rule for rule in wanted if issubclass(rule, PythonRule)]
    project_rules = [
        rule
        for rule in (rules if summary_rules is None else summary_rules)
        if issubclass(rule, ProjectRule) and (not prefilter or rule.wants_summary(source.prefilter_data))
    ]
    if not python_rules and not project_rules:
        return result
    report_syntax = any(rule is SyntaxErrorRule for rule in rules)
    try:
        text = source.text
    except DecodeError as exc:
        if report_syntax:
            result.findings.append(syntax_error_finding(source, f"SyntaxError: {exc}", 1, 1))
        return result
    if prefilter:
        from aoti_lint.prefilter import refine, refine_summaries

        python_rules = refine(text, python_rules)
        project_rules = refine_summaries(text, project_rules)
        if not python_rules and not project_rules:
            return result
        light = _light_summaries(source, text, project_rules) if not python_rules and flow is None else None
        if light is not None:
            from aoti_lint.suppressions import python_suppressions

            codes = frozenset(
                rule.code for rule in rules if issubclass(rule, ProjectRule) or rule.code in MIGRATION_CODES
            )
            result.project = ProjectPart(source.display_path, light, codes, python_suppressions(text))
            return result
    module = _parse(source, text, result, report_syntax)
    if module is None:
        return result
    result.parsed = True
    try:
        findings, summaries = _check_python(source, module, python_rules, target_torch, project_rules, flow)
    except RecursionError:
        result.errors.append(FileError(source.display_path, "too deeply nested to analyse"))
        return result
    except Exception as exc:  # a bug in a rule must not stop the run
        result.errors.append(internal_error(source, exc))
        return result
    if findings or summaries:
        from aoti_lint.suppressions import python_suppressions  # tokenize and regexes: only when needed

        suppressions = python_suppressions(text)
        findings = suppressions.filter(findings)
        if summaries:
            codes = frozenset(
                rule.code for rule in rules if issubclass(rule, ProjectRule) or rule.code in MIGRATION_CODES
            )
            result.project = ProjectPart(source.display_path, summaries, codes, suppressions)
    result.findings.extend(findings)
    return result


def _light_summaries(source: SourceFile, text: str, project_rules: Sequence[type[Rule]]) -> dict[str, object] | None:
    """The flow summary of a file summarised only for strings naming a `.so`, read from ``ast``; None when
    libcst must read it (``analysis.so_mentions``)."""
    from aoti_lint.code_index import code_index
    from aoti_lint.rules.device_flow import DeviceFlowRule

    if not project_rules or not all(issubclass(rule, DeviceFlowRule) for rule in project_rules):
        return None
    index = code_index(text)
    if index is None or index.tree is None or not DeviceFlowRule.mentions_only(index):
        return None
    from aoti_lint.analysis.so_mentions import light_summary

    callees = index.called | {name for _, name in index.imported_names}
    summary = light_summary(source.path, source.display_path, text, index.tree, frozenset(callees))
    return None if summary is None else {FLOW_SUMMARY: summary}


def _check_text(source: SourceFile, rules: Sequence[type[TextRule]]) -> FileResult:
    result = FileResult()
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
        from aoti_lint.suppressions import cpp_suppressions, hash_comment_suppressions

        suppressions = cpp_suppressions(text.encode()) if source.kind == "cpp" else hash_comment_suppressions(text)
        result.findings = suppressions.filter(result.findings)
    return result


def _parse(source: SourceFile, text: str, result: FileResult, report_syntax: bool) -> Any:
    import libcst as cst

    try:
        if "\x00" in text:
            raise ValueError("source code contains NUL bytes")
        if _too_deep_for_python(text):
            raise RecursionError
        limit = _over_tokenizer_limit(text)
        if limit is not None:
            # No Python accepts it; past these limits libcst's native parser overflows the C stack (a
            # segfault, ~1,200 nested brackets) or takes minutes, so it is never given such a text.
            message, row, column = limit
        else:
            return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        message, row, column = _python_syntax_error(text) or (
            f"SyntaxError: {exc.message}",
            exc.raw_line,
            exc.raw_column + 1,
        )
    except RecursionError:
        message, row, column = "SyntaxError: too deeply nested to parse", 1, 1
    except (ValueError, UnicodeError) as exc:
        message, row, column = f"SyntaxError: {exc}", 1, 1
    if report_syntax:
        result.findings.append(syntax_error_finding(source, message, row, column))
    return None


def _too_deep_for_python(text: str) -> bool:
    """Whether CPython's own parser gives up on the nesting (thousands of chained attributes or operators).

    libcst takes minutes on such files, or overflows the C stack; ast.parse refuses them in milliseconds,
    and a file Python cannot compile needs no further analysis. It compiles nothing and runs nothing.
    """
    from aoti_lint.pyast import parse

    return isinstance(parse(text), (RecursionError, MemoryError))


# CPython's tokenizer limits (200 nested brackets, 100 indentation levels), the same in every version.
_TOKENIZER_LIMITS = ("too many nested parentheses", "too many levels of indentation")


def _over_tokenizer_limit(text: str) -> tuple[str, int, int] | None:
    """CPython's error when ``text`` nests past its tokenizer's limits, else None."""
    from aoti_lint.pyast import parse

    outcome = parse(text)
    if isinstance(outcome, SyntaxError) and outcome.msg in _TOKENIZER_LIMITS:
        return f"SyntaxError: {outcome.msg}", outcome.lineno or 1, outcome.offset or 1
    return None


def _python_syntax_error(text: str) -> tuple[str, int, int] | None:
    """CPython's own wording of a syntax error (clearer than libcst's), found by ast.parse: it compiles
    nothing and runs nothing."""
    from aoti_lint.pyast import parse

    outcome = parse(text)
    if isinstance(outcome, SyntaxError):
        return f"SyntaxError: {outcome.msg}", outcome.lineno or 1, outcome.offset or 1
    return None


def _check_python(
    source: SourceFile,
    module: Any,
    rules: Iterable[type[PythonRule]],
    target_torch: tuple[int, int],
    project_rules: Iterable[type[ProjectRule]] = (),
    flow: Any = None,
) -> tuple[list[Finding], dict[str, object]]:
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from aoti_lint.rules.base import PythonContext

    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    context = PythonContext(source, module, wrapper, target_torch)
    context.flow = flow

    class RuleVisitor(cst.BatchableCSTVisitor):
        """Hands libcst's batched traversal the rule's own visit_/leave_ methods."""

        def __init__(self, rule: PythonRule) -> None:
            super().__init__()
            self.rule = rule

        def get_visitors(self) -> dict[str, Any]:
            return {
                name: getattr(self.rule, name)
                for name in dir(type(self.rule))
                if name.startswith(("visit_", "leave_")) and callable(getattr(self.rule, name))
            }

    visitors = [RuleVisitor(rule(context)) for rule in rules]
    if visitors:
        wrapper.visit_batched(visitors)
    summaries: dict[str, object] = {}
    for project_rule in project_rules:
        if project_rule.summary_key not in summaries:
            summaries[project_rule.summary_key] = project_rule.summarize(context)
    return context.findings, summaries


def make_source(path: Path, shown: str, kind: str, data: bytes) -> SourceFile | FileError:
    if kind == "jupyter":
        from aoti_lint.notebook import NotebookError, NotebookSource

        try:
            return NotebookSource.from_bytes(path, shown, data)
        except NotebookError as exc:
            return FileError(shown, str(exc))
    return SourceFile(path=path, display_path=shown, kind=kind, data=data)


def read_source(candidate: Candidate, cwd: Path) -> SourceFile | FileError:
    shown = display_path(candidate.path, cwd)
    try:
        data = _read_regular_file(candidate.path)
    except IsADirectoryError:
        return FileError(shown, "is a directory")
    except _NotRegularFile:
        return FileError(shown, "is not a regular file (a FIFO, socket or device); not read")
    except FileNotFoundError:
        return FileError(shown, "file disappeared before it could be read")
    except OSError as exc:
        return FileError(shown, f"cannot read file: {exc.strerror or exc}")
    return make_source(candidate.path, shown, candidate.kind, data)


class _NotRegularFile(Exception):
    pass


def _read_regular_file(path: Path) -> bytes:
    """The file's bytes; a FIFO or device (named `x.py`, or linked there) is refused, not waited on forever."""
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise _NotRegularFile
        return handle.read()


@dataclass(frozen=True)
class FixOptions:
    apply: bool = False  # --fix, --fix-only, --diff
    unsafe: bool = False  # --unsafe-fixes
    write: bool = True  # False with --diff: compute, never write


@dataclass
class FileOutcome:
    """What processing one file produced; plain data, so a worker process can return it."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    fixed: int = 0
    # Set when fixes changed the text (and, without --diff, were written).
    original_text: str | None = None
    fixed_text: str | None = None
    fixed_data: bytes | None = None
    checked: bool = False
    project: ProjectPart | None = None
    # Artifact flows (aoti_lint.analysis.migration_flow) whose part in this file the fixed text migrates.
    flow_groups: frozenset[int] = frozenset()
    # What a fixed file is written over, when the run writes it after checking the whole flow.
    source_path: Path | None = None
    original_data: bytes | None = None


MAX_FIX_ITERATIONS = 10


def fix_source(
    source: SourceFile,
    rules: Sequence[type[Rule]],
    result: FileResult,
    unsafe: bool,
    target_torch: tuple[int, int] = DEFAULT_TARGET_TORCH,
    summary_rules: Sequence[type[Rule]] | None = None,
    flow: Any = None,
) -> tuple[SourceFile, int, FileResult]:
    """Apply the applicable fixes, re-linting after each round (as ruff does) until none is left.

    Each round takes the fixes whose edits do not overlap those already taken; the rest wait for the next
    round, computed on the new text. Returns the fixed source, the number of fixes applied and the final
    lint result.
    """
    from aoti_lint.edits import apply_edits, overlaps

    fixed = 0
    applied: set[str] = set()
    for _ in range(MAX_FIX_ITERATIONS):
        chosen: list[Finding] = []
        for finding in sorted(result.findings, key=Finding.sort_key):
            if finding.fix_applies(unsafe) and not any(overlaps(c.fix.edits, finding.fix.edits) for c in chosen):
                chosen.append(finding)
        if not chosen:
            break
        text = apply_edits(source.text, [edit for finding in chosen for edit in finding.fix.edits])
        if text == source.text:
            break
        fixed += len(chosen)
        applied.update(finding.code for finding in chosen)
        source = source.with_text(text)
        result = check_source(source, rules, target_torch=target_torch, summary_rules=summary_rules, flow=flow)
    text = source.text
    for rule in rules:
        # A fix sees one finding at a time; what only the whole set of fixes leaves behind (an import no
        # longer used by anything) is tidied once at the end.
        if rule.code in applied and rule.tidy_after_fix is not Rule.tidy_after_fix:
            text = rule.tidy_after_fix(text)
    if text != source.text:
        source = source.with_text(text)
        result = check_source(source, rules, target_torch=target_torch, summary_rules=summary_rules, flow=flow)
    return source, fixed, result


def _parse_error(source: SourceFile) -> str | None:
    """Why the fixed text of a Python file does not parse, or None. Re-parsed whatever the prefilter says."""
    if source.kind not in PYTHON_KINDS:
        return None
    import libcst as cst

    try:
        cst.parse_module(source.text)
    except Exception as exc:  # any parser failure means: do not write
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        cpython = _python_syntax_error(source.text)
        return cpython[0].removeprefix("SyntaxError: ") if cpython else first_line
    return None


def _write_fixed(original: SourceFile, fixed: SourceFile) -> FileError | None:
    """Write atomically, and only if the file on disk is still the one that was read."""
    return write_bytes(original.path, original.display_path, original.data, fixed.data)


def write_bytes(path: Path, shown: str, original: bytes, data: bytes, dry_run: bool = False) -> FileError | None:
    """Write ``data`` over ``path`` atomically if it still holds ``original``; ``dry_run``: only check that."""
    import os

    from aoti_lint.fsutil import ChangedOnDisk, atomic_write_bytes, identity

    changed = FileError(shown, "changed on disk while it was being fixed; not written")
    # A symlinked file is fixed where it lives; replacing the link by a copy would lose it.
    path = path.resolve() if path.is_symlink() else path
    try:
        with open(path, "rb") as handle:
            # The identity of what is re-read here is checked again right before the rename.
            seen = identity(os.fstat(handle.fileno()))
            if handle.read() != original:
                return changed
        # No write bit counts as read-only even for root, whom os.access lets write anything not immutable.
        if not os.access(path, os.W_OK) or not path.stat().st_mode & 0o222:
            return FileError(shown, "is read-only; fixes not written")
        if not dry_run:
            atomic_write_bytes(path, data, expected=seen)
    except ChangedOnDisk:
        return changed
    except OSError as exc:
        return FileError(shown, f"cannot write fixes: {exc.strerror or exc}")
    return None


def process_source(
    source: SourceFile,
    rules: Sequence[type[Rule]],
    fix: FixOptions,
    target_torch: tuple[int, int] = DEFAULT_TARGET_TORCH,
    summary_rules: Sequence[type[Rule]] | None = None,
    flow: Any = None,
) -> FileOutcome:
    """Lint one file and, when asked, fix it. Never leaves a file half-written or broken.

    ``flow`` is the run's migration plan for this file (``aoti_lint.analysis.migration_flow.FileFlow``): its
    part of every artifact flow the fix options allow is migrated in one pass, then the other fixes follow.
    """
    outcome = FileOutcome(path=source.display_path, checked=True)
    result = check_source(source, rules, target_torch=target_torch, summary_rules=summary_rules, flow=flow)
    shown = source
    groups = flow.allowed_groups(fix.unsafe) if fix.apply and flow is not None else frozenset()
    if fix.apply and (groups or any(f.fix_applies(fix.unsafe) for f in result.findings)):
        try:
            fixed_source, fixed, after = source, 0, result
            if groups:
                from aoti_lint.codemods.migrate_aoti import migrate_flows

                try:
                    text, fixed = migrate_flows(source.text, flow, groups, target_torch)
                except Exception as exc:  # a bug in the codemod must not stop the run, nor write anything
                    raise ValueError(
                        f"the migration of its artifact flows failed: {type(exc).__name__}: {exc}"
                    ) from exc
                flow = flow.after(groups)
                fixed_source = source.with_text(text)
                after = check_source(
                    fixed_source, rules, target_torch=target_torch, summary_rules=summary_rules, flow=flow
                )
            if any(f.fix_applies(fix.unsafe) for f in after.findings):
                fixed_source, more, after = fix_source(
                    fixed_source, rules, after, fix.unsafe, target_torch, summary_rules, flow
                )
                fixed += more
        except ValueError as exc:  # edits that cannot be applied, e.g. across notebook cells
            outcome.errors.append(
                FileError(source.display_path, f"fixes could not be applied ({exc}); nothing written")
            )
            fixed_source, fixed, after, groups = source, 0, result, frozenset()
        broken = _parse_error(fixed_source) if fixed_source.text != source.text else None
        if broken is not None:
            outcome.errors.append(
                FileError(source.display_path, f"fixes would break the file ({broken}); nothing written")
            )
        elif (fixed or groups) and fixed_source.text != source.text:
            error = _write_fixed(source, fixed_source) if fix.write else None
            if error is not None:
                outcome.errors.append(error)
            else:
                outcome.fixed = fixed
                outcome.flow_groups = groups
                outcome.original_text, outcome.fixed_text = source.diff_text, fixed_source.diff_text
                outcome.fixed_data = fixed_source.data
                outcome.source_path, outcome.original_data = source.path, source.data
                result, shown = after, fixed_source
    outcome.findings = shown.locate(result.findings)
    outcome.errors.extend(result.errors)
    outcome.project = result.project
    return outcome


@dataclass
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    files_checked: int = 0
    fixed: dict[str, int] = field(default_factory=dict)
    # display path -> (before, after) for files whose text the fixes changed
    changes: dict[str, tuple[str, str]] = field(default_factory=dict)

    def add(self, outcome: FileOutcome) -> None:
        self.files_checked += outcome.checked
        self.findings.extend(outcome.findings)
        self.errors.extend(outcome.errors)
        if outcome.fixed:
            self.fixed[outcome.path] = outcome.fixed
        if outcome.fixed_text is not None:
            self.changes[outcome.path] = (outcome.original_text or "", outcome.fixed_text)

    def sort(self) -> None:
        self.findings.sort(key=Finding.sort_key)
        self.errors.sort(key=lambda error: error.path)


def lint_paths(
    paths: list[Path], settings: Settings, cwd: Path, fix: FixOptions | None = None, execution: Execution | None = None
) -> RunResult:
    """Lint (and fix) the files under ``paths``; ``execution`` sets workers and cache (default: serial, none)."""
    from aoti_lint.runner import Execution, run_files

    fix = fix or FixOptions()
    run = RunResult()
    ruleset = RuleSet(settings)
    run.errors.extend(ruleset.errors)
    candidates: list[Candidate] = []
    for item in discover(paths, settings):
        if isinstance(item, MissingPath):
            run.errors.append(FileError(display_path(item.path, cwd), item.message))
        else:
            candidates.append(item)
    execution = execution or Execution()
    # First every file is read and summarised, nothing fixed: the migration is planned per artifact flow over
    # the whole run, then the files with something to fix (or whose findings the plan changes) are done again.
    # A fixing run keeps off the cache, as it always did (fixes are never taken from it).
    first = replace(execution, cache_dir=None) if fix.apply else execution
    outcomes = run_files(candidates, ruleset, cwd, replace(fix, apply=False), first)
    _complete_summaries(
        outcomes,
        lambda chosen, flows: run_files(
            [candidates[index] for index in chosen],
            ruleset,
            cwd,
            replace(fix, apply=False),
            replace(execution, cache_dir=None),
            flows,
        ),
    )
    flows = plan_migrations(
        [outcome.project for outcome in outcomes if outcome.project is not None],
        lambda: _cpp_artifact_loads(candidates, cwd),
    )
    again = [
        index
        for index, outcome in enumerate(outcomes)
        if (outcome.path in flows and (flows[outcome.path].changed or fix.apply))
        or (fix.apply and any(f.fix_applies(fix.unsafe) for f in outcome.findings))
    ]
    if again:
        redone = run_files(
            [candidates[index] for index in again],
            ruleset,
            cwd,
            replace(fix, write=False),
            replace(execution, cache_dir=None),
            flows,
        )
        for index, outcome in zip(again, redone, strict=True):
            outcomes[index] = outcome
        if fix.apply:
            _settle_flows(
                outcomes,
                flows,
                fix,
                lambda chosen: run_files(
                    [candidates[index] for index in chosen],
                    ruleset,
                    cwd,
                    replace(fix, apply=False),
                    replace(execution, cache_dir=None),
                    flows,
                ),
            )
    parts: list[ProjectPart] = []
    for outcome in outcomes:
        run.add(outcome)
        if outcome.project is not None:
            parts.append(outcome.project)
    findings, errors = check_project(ruleset.rules, parts)
    run.findings.extend(findings)
    run.errors.extend(errors)
    run.sort()
    return run


def _complete_summaries(outcomes: list[FileOutcome], rerun: Any) -> None:
    """Summarise with libcst the files whose summary was read from ``ast`` but whose path arguments the plan
    needs (``migration_flow.incomplete``)."""
    summaries = [
        outcome.project.summaries[FLOW_SUMMARY]
        for outcome in outcomes
        if outcome.project is not None and FLOW_SUMMARY in outcome.project.summaries
    ]
    if not any(getattr(summary, "callees", None) is not None for summary in summaries):
        return
    from aoti_lint.analysis.migration_flow import FileFlow, incomplete

    paths = incomplete(summaries)
    chosen = [index for index, outcome in enumerate(outcomes) if outcome.path in paths]
    if not chosen:
        return
    # A plan given for a file (here an empty one) makes check_source summarise it with libcst.
    flows = {outcomes[index].path: FileFlow(outcomes[index].path, ()) for index in chosen}
    for index, outcome in zip(chosen, rerun(chosen, flows), strict=True):
        outcomes[index] = outcome


def plan_migrations(parts: Sequence[ProjectPart], cpp_loads: Any = dict) -> dict[str, Any]:
    """The migration planned per artifact flow over the files of a run (empty without deprecated calls).

    ``cpp_loads()`` gives, per `.so` file name, where C++ files of the run load it (read only when needed).
    """
    summaries = [part.summaries[FLOW_SUMMARY] for part in parts if FLOW_SUMMARY in part.summaries]
    if not any(getattr(summary, "migrations", ()) for summary in summaries):
        return {}
    from aoti_lint.analysis.migration_flow import plan_flows
    from aoti_lint.rules.device_flow import CrossDeviceLoad

    enabled = {part.path: part.codes for part in parts}
    loaded_from_cpp = cpp_loads()

    def foreign(name: str) -> str | None:
        places = loaded_from_cpp.get(name)
        if not places:
            return None
        return f"loaded from C++ at {places[0]}: migrate it to AOTIModelPackageLoader"

    return plan_flows(summaries, CrossDeviceLoad.check_load, foreign, enabled=lambda path, code: code in enabled[path])


def _cpp_artifact_loads(candidates: Sequence[Candidate], cwd: Path) -> dict[str, list[str]]:
    """``file:row`` of each C/C++ construction of an AOTI runner from a literal `.so` path, by file name."""
    import posixpath

    found: dict[str, list[str]] = {}
    for candidate in candidates:
        if candidate.kind != "cpp":
            continue
        try:
            data = _read_regular_file(candidate.path)
            # Only the old runners read a bare `.so`; other C++ files are not parsed for the plan.
            if b"AOTIModelContainerRunner" not in data or b".so" not in data:
                continue
            from aoti_lint.analysis.cpp_consumers import find_artifact_loads

            loads = find_artifact_loads(data)
        except Exception:  # unreadable or unparsable: the C++ rules report it; the plan sees no load there
            continue
        for load in loads:
            if load.path.endswith(".so"):
                where = f"{display_path(candidate.path, cwd)}:{load.start.row}"
                found.setdefault(posixpath.basename(load.path), []).append(where)
    return found


def _settle_flows(outcomes: list[FileOutcome], flows: dict[str, Any], fix: FixOptions, recheck: Any) -> None:
    """Write the fixed files, but a flow's fix only if every file of it has it: a file that could not be
    fixed or written keeps the whole flow (its other files included) as it was."""
    where = {outcome.path: index for index, outcome in enumerate(outcomes)}
    members: dict[int, set[str]] = {}
    for path, flow in flows.items():
        for group in flow.allowed_groups(fix.unsafe) & flow.whole_groups:
            members.setdefault(group, set()).add(path)
    why: dict[str, str] = {}
    for outcome in outcomes:
        if outcome.fixed_data is not None and outcome.source_path is not None and fix.write:
            error = write_bytes(
                outcome.source_path, outcome.path, outcome.original_data or b"", outcome.fixed_data, dry_run=True
            )
            if error is not None:
                why[outcome.path] = error.message
    changed = True
    while changed:
        changed = False
        for group, paths in members.items():
            missing = [
                path
                for path in sorted(paths)
                if path in why or path not in where or group not in outcomes[where[path]].flow_groups
            ]
            if not missing:
                continue
            for path in paths - why.keys():
                if path in where and outcomes[where[path]].fixed_data is not None:
                    why[path] = f"fixes not written: its artifact flow could not be migrated in {missing[0]}"
                    changed = True
    refused = [where[path] for path in why if path in where and outcomes[where[path]].fixed_data is not None]
    if refused:
        for index, outcome in zip(refused, recheck(refused), strict=True):
            outcome.errors.append(FileError(outcome.path, why[outcomes[index].path]))
            outcomes[index] = outcome
    if not fix.write:
        return
    for outcome in outcomes:
        if outcome.fixed_data is not None and outcome.source_path is not None:
            error = write_bytes(outcome.source_path, outcome.path, outcome.original_data or b"", outcome.fixed_data)
            if error is not None:
                outcome.errors.append(error)
                outcome.fixed, outcome.fixed_text, outcome.fixed_data = 0, None, None


def check_project(rules: Sequence[type[Rule]], parts: Sequence[ProjectPart]) -> tuple[list[Finding], list[FileError]]:
    """The project pass: each project rule sees every file's summary; its findings go through the noqa
    comments and per-file-ignores of the file they are in."""
    findings: list[Finding] = []
    errors: list[FileError] = []
    by_path = {part.path: part for part in parts}
    for rule in rules:
        if not issubclass(rule, ProjectRule):
            continue
        summaries = [part.summaries[rule.summary_key] for part in parts if rule.summary_key in part.summaries]
        if not summaries:
            continue
        try:
            reported = rule.check_project(summaries)
        except Exception as exc:  # a bug in a rule must not stop the run
            import traceback

            errors.append(
                FileError(".", f"internal error in {rule.code}: {type(exc).__name__}: {exc}", traceback.format_exc())
            )
            continue
        for finding in reported:
            part = by_path.get(finding.path)
            if part is not None and rule.code in part.codes and not part.suppressions.suppresses(finding):
                findings.append(finding)
    return findings, errors


def lint_stdin(
    data: bytes, path: Path | None, settings: Settings, cwd: Path, fix: FixOptions
) -> tuple[RunResult, bytes]:
    """Lint code read from stdin as the file ``path`` would be (its kind, its per-file-ignores, its name in
    the report); nothing is written. Returns the run and the code after fixes."""
    run = RunResult()
    path = path or Path("-")
    absolute = path if path.is_absolute() else cwd / path
    kind = file_kind(path) or "python"
    source = make_source(absolute, display_path(absolute, cwd) if path != Path("-") else "-", kind, data)
    if isinstance(source, FileError):
        run.errors.append(source)
        return run, data
    rules = RuleSet(settings).for_file(absolute, kind)
    too_big = over_limits(source)
    if too_big is not None and any(rule.could_match(source.prefilter_data) for rule in rules):
        run.errors.append(too_big)
        return run, data
    outcome = process_source(source, rules, replace(fix, write=False), settings.target_torch)
    run.add(outcome)
    run.sort()
    return run, outcome.fixed_data if outcome.fixed_data is not None else data
