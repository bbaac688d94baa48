"""A lint run, the top of the lint core: the paths given (or the code on stdin) to a sorted ``RunOutcome``.

Files are found (``aoti_lint.read.files``), read and linted many at a time (``aoti_lint.run.runner``), the migration is
planned and settled across them and the project rules run (``aoti_lint.run.project_pass``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from aoti_lint.diagnostics import FileError, Finding
from aoti_lint.read.files import Candidate, MissingPath, discover
from aoti_lint.read.source import display_path, file_kind
from aoti_lint.run.ruleset import RuleSet
from aoti_lint.settings.config import Settings
from aoti_lint.settings.run_options import Execution, FixOptions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.run.cache import Cache
    from aoti_lint.run.results import FileOutcome, ProjectPart
    from aoti_lint.run.runner import Workers
    from aoti_lint.run.unchanged_run import RunKey


@dataclass
class RunOutcome:
    """A whole run: every file's outcome merged, then the project pass's findings; sorted for the report."""

    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    # Fixes that could not be built (``FileOutcome.notes``): printed as warnings, the findings stand.
    notes: list[FileError] = field(default_factory=list)
    files_checked: int = 0
    fixed: dict[str, int] = field(default_factory=dict)
    # display path -> (before, after) for files whose text the fixes changed
    changes: dict[str, tuple[str, str]] = field(default_factory=dict)
    # The artifact flows the migration was planned on (``migration_flow.FlowReport``), for ``aoti-lint flows``.
    flows: list[Any] = field(default_factory=list)

    def add(self, outcome: FileOutcome) -> None:
        self.files_checked += outcome.checked
        self.findings.extend(outcome.findings)
        self.errors.extend(outcome.errors)
        self.notes.extend(outcome.notes)
        if outcome.fixed:
            self.fixed[outcome.path] = outcome.fixed
        if outcome.fixed_text is not None:
            self.changes[outcome.path] = (outcome.original_text or "", outcome.fixed_text)

    def sort(self) -> None:
        self.findings.sort(key=Finding.sort_key)
        self.errors.sort(key=lambda error: error.path)
        self.notes.sort(key=lambda note: note.path)


def lint_paths(
    paths: list[Path], settings: Settings, cwd: Path, fix: FixOptions | None = None, execution: Execution | None = None
) -> RunOutcome:
    """Lint (and fix) the files under ``paths``; ``execution`` sets workers and cache (default: serial, none)."""
    from contextlib import nullcontext

    fix = fix or FixOptions()
    execution = execution or Execution()
    # One cache for the run's passes over the files: its stamps are read once and written once. A fixing run
    # keeps off the cache, as it always did (fixes are never taken from it).
    cache = None
    if not fix.apply and execution.cache_dir is not None:
        from aoti_lint.run.cache import open_cache

        cache = open_cache(execution, settings)
    with cache or nullcontext():
        run = RunOutcome()
        ruleset = RuleSet(settings)
        run.errors.extend(ruleset.errors)
        candidates: list[Candidate] = []
        for item in discover(paths, settings):
            if isinstance(item, MissingPath):
                run.errors.append(FileError(display_path(item.path, cwd), item.message))
            else:
                candidates.append(item)
        # A checking run over files whose stamps all match the memo of an earlier run reports what it found,
        # before the engine, the rules or the worker pool are even imported.
        memo = None
        if cache is not None and cache.usable and not run.errors:
            from aoti_lint.run import unchanged_run

            memo = unchanged_run.run_key(cache, candidates, ruleset, cwd, fix)
            given = {candidate.where for candidate in candidates}
            recalled = unchanged_run.recall(cache, memo, settings, given) if memo is not None else None
            if recalled is not None:
                run.findings, run.files_checked = recalled
                return run
        # One set of workers for the run's passes, started by the first pass that has enough work for them.
        from aoti_lint.run.runner import Workers

        with Workers() as workers:
            # A run given the project's root (or a folder above it) was given every file of the project.
            whole = any(_holds(path if path.is_absolute() else cwd / path, settings.root) for path in paths)
            return _lint_files(run, candidates, ruleset, cwd, fix, execution, cache, memo, workers, whole)


def _lint_files(
    run: RunOutcome,
    candidates: list[Candidate],
    ruleset: RuleSet,
    cwd: Path,
    fix: FixOptions,
    execution: Execution,
    cache: Cache | None,
    memo: RunKey | None,
    workers: Workers,
    whole: bool = False,
) -> RunOutcome:
    from aoti_lint.run.project_pass import (
        OutsideMentions,
        check_project,
        cpp_artifact_loads,
        plan_migrations,
        settle_flows,
    )
    from aoti_lint.run.runner import run_files

    # First every file is read and summarised, nothing fixed: the migration is planned per artifact flow over
    # the whole run, then the files with something to fix (or whose findings the plan changes) are done again.
    # A checking run caches each file's outcome under its plan as well, so a warm run re-reads nothing.
    first = replace(execution, cache_dir=None) if fix.apply else execution
    stats = memo.stats if memo is not None else None
    check_only = replace(fix, apply=False)
    outcomes = run_files(
        candidates, ruleset, cwd, check_only, first, shared_cache=cache, stats=stats, shared_workers=workers
    )
    # A run given some of the project's files (pre-commit's staged ones, a folder) reads the others too, read-only,
    # once one of its files takes part in a flow: each flow is planned whole, and a member in a file the run may
    # not edit blocks its fix and is named. Their outcomes are dropped once the flows are planned.
    named = len(candidates)
    editable = {outcome.path for outcome in outcomes}
    rest = [] if whole else _rest_of_project(candidates, outcomes, ruleset)
    if rest:
        candidates = [*candidates, *rest]
        outcomes += run_files(
            rest, ruleset.flow_readers(), cwd, check_only, first, shared_cache=cache, shared_workers=workers
        )

    given_files = candidates[:named]
    outside = OutsideMentions(ruleset.settings, cwd, lambda: whole or _in_project(given_files, ruleset.settings.root))

    run.flows = []
    flows = plan_migrations(
        [outcome.project for outcome in outcomes if outcome.project is not None],
        lambda: cpp_artifact_loads(candidates, cwd),
        outside=outside,
        reports=run.flows,
        editable=editable,
    )
    read_only = [outcome.project for outcome in outcomes[named:] if outcome.project is not None]
    del outcomes[named:], candidates[named:]
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
            first,  # a check run caches these outcomes under the file's plan too (Cache.key)
            flows,
            cache,
            shared_workers=workers,
        )
        for index, outcome in zip(again, redone, strict=True):
            outcomes[index] = outcome
        if fix.apply:
            settle_flows(
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
                    shared_workers=workers,
                ),
            )
    parts: list[ProjectPart] = []
    # A file that imports modules of the project depends on them, and so does the run's memo.
    imports_project = any(outcome.depends_on for outcome in outcomes)
    for outcome in outcomes:
        run.add(outcome)
        if outcome.project is not None:
            parts.append(outcome.project)
    findings, errors = check_project(ruleset.rules, [*parts, *read_only])
    run.findings.extend(finding for finding in findings if finding.path in editable)
    run.errors.extend(errors)
    run.sort()
    if cache is not None and memo is not None and not (run.errors or run.notes or run.fixed or run.changes):
        from aoti_lint.run.unchanged_run import outside_digest, remember

        # A run that read the project's other files (``OutsideMentions``, the rest of the project) depends on them.
        given = {candidate.where for candidate in candidates}
        consulted = outside.consulted or rest or imports_project
        outside_files = outside_digest(ruleset.settings, given) if consulted else None
        remember(cache, memo, run.findings, run.files_checked, outside_files)
    return run


def _under(path: str | Path, folder: str | Path) -> bool:
    """Whether ``path`` is ``folder`` or lies below it, links resolved (``realpath``: a link loop among the files,
    reported as unreadable, must not stop the run here)."""

    return _all_under([path], folder)


def _all_under(paths: list[str | Path], folder: str | Path) -> bool:
    """``_under`` for each path, each folder they lie in resolved once (a run's files share a few hundred)."""
    import os

    inside = os.path.realpath(folder).rstrip(os.sep) + os.sep
    folders: dict[str, str] = {}
    for path in (str(path) for path in paths):
        head, tail = os.path.split(path)
        if tail in ("", ".", "..") or ".." in path.split(os.sep) or os.path.islink(path):
            real = os.path.realpath(path)
        else:
            if head not in folders:
                folders[head] = os.path.realpath(head or ".")
            real = os.path.join(folders[head], tail)
        if not (real + os.sep).startswith(inside):
            return False
    return True


def _holds(folder: Path, root: Path) -> bool:
    """Whether ``folder`` is ``root`` or a folder above it."""
    return folder.is_dir() and _under(root, folder)


def _in_project(candidates: list[Candidate], root: Path) -> bool:
    """Whether every file of the run lies under the project's root (the configuration's directory, else the working
    directory): only then are the root's other files those of their project."""
    return _all_under([candidate.where for candidate in candidates], root)


def _rest_of_project(candidates: list[Candidate], outcomes: list[FileOutcome], ruleset: RuleSet) -> list[Candidate]:
    """The project's files (under its root, as discovery finds them) the run was not given, when one it was given
    holds a call of the AOTI API (its flow summary): the migration plan reads them, read-only."""
    from aoti_lint.run.results import FLOW_SUMMARY

    if not any(outcome.project is not None and FLOW_SUMMARY in outcome.project.summaries for outcome in outcomes):
        return []
    settings = ruleset.settings
    if not _in_project(candidates, settings.root):
        return []  # files of another tree than the project's: their project is not known
    given = {candidate.where for candidate in candidates}
    every = discover([settings.root], settings)
    return [item for item in every if isinstance(item, Candidate) and item.where not in given]


def lint_stdin(
    data: bytes, path: Path | None, settings: Settings, cwd: Path, fix: FixOptions
) -> tuple[RunOutcome, bytes]:
    """Lint code read from stdin as the file ``path`` would be (its kind, its per-file-ignores, its name in
    the report); nothing is written. Returns the run and the code after fixes."""
    from aoti_lint.run.disk import make_source
    from aoti_lint.run.engine import over_limits
    from aoti_lint.run.file_context import FileContext
    from aoti_lint.run.fixing import process_source

    run = RunOutcome()
    path = path or Path("-")
    absolute = path if path.is_absolute() else cwd / path
    kind = file_kind(path) or "python"
    source = make_source(absolute, display_path(absolute, cwd) if path != Path("-") else "-", kind, data)
    if isinstance(source, FileError):
        run.errors.append(source)
        return run, data
    # The project rules are those enabled for the path: stdin has no other file to check them against.
    context = FileContext.of(RuleSet(settings).for_file(absolute, kind), target_torch=settings.target_torch)
    too_big = over_limits(source)
    if too_big is not None and any(rule.could_match(source.prefilter_data) for rule in context.rules):
        run.errors.append(too_big)
        return run, data
    outcome = process_source(source, context, replace(fix, write=False))
    run.add(outcome)
    run.sort()
    return run, outcome.fixed_data if outcome.fixed_data is not None else data
