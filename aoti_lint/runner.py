"""Running the per-file step over many files, fast.

Three tiers, cheapest first: a file that no enabled rule's prefilter accepts is settled in this process by
reading it (the vast majority of files); a file whose outcome is in the cache is settled by reading the entry;
only the rest is parsed, in a process pool when there is enough of it to pay for the workers' start (each
worker imports libcst, about half a second). Under pre-commit, which already runs hooks in parallel, the
default is serial.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from aoti_lint.diagnostics import FileError
from aoti_lint.engine import FileOutcome, FixOptions, RuleSet, process_source, read_source
from aoti_lint.files import Candidate
from aoti_lint.rules import Rule
from aoti_lint.source import SourceFile

if TYPE_CHECKING:
    from aoti_lint.cache import Cache

# Measured cost of linting a file with libcst on one core: parse, scope and qualified-name resolution, rules.
# Most of it is per node, but even a 1 kB module costs tens of milliseconds.
SECONDS_PER_FILE = 0.03
SECONDS_PER_BYTE = 10e-6
# Below this much estimated work, starting workers (each imports libcst: half a second) costs more than it saves.
POOL_MIN_SECONDS = 1.0


@dataclass(frozen=True)
class Execution:
    """How a run spends the machine: worker processes and the cache."""

    # None: one worker per core, or serial when pre-commit runs us (it parallelises hooks itself).
    jobs: int | None = 1
    # None: no cache.
    cache_dir: Path | None = None
    pool_min_seconds: float = POOL_MIN_SECONDS


def available_cores() -> int:
    if hasattr(os, "process_cpu_count"):  # Python 3.13+: honours affinity and -X cpu_count
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _jobs(execution: Execution) -> int:
    if execution.jobs is not None:
        return max(execution.jobs, 1)
    return 1 if os.environ.get("PRE_COMMIT") else available_cores()


@dataclass
class _Pending:
    index: int
    source: SourceFile
    rules: tuple[type[Rule], ...]
    cache_key: str | None
    # Project rules that need this file's summary, per-file-ignores aside (see engine.check_source).
    summary_rules: tuple[type[Rule], ...] = ()
    # The run's migration plan for this file (engine.plan_migrations), if any.
    flow: object = None


def run_files(
    candidates: Sequence[Candidate],
    ruleset: RuleSet,
    cwd: Path,
    fix: FixOptions,
    execution: Execution,
    flows: dict[str, object] | None = None,
) -> list[FileOutcome]:
    """The outcome of linting (and fixing) each candidate, in the same order; ``flows``: the migration plan
    per display path (engine.plan_migrations)."""
    from contextlib import nullcontext

    target = ruleset.settings.target_torch
    outcomes: list[FileOutcome | None] = [None] * len(candidates)
    pending: list[_Pending] = []
    cache = _open_cache(execution, ruleset)
    with cache or nullcontext():
        for index, candidate in enumerate(candidates):
            source = read_source(candidate, cwd)
            if isinstance(source, FileError):
                outcomes[index] = FileOutcome(path=source.path, errors=[source])
                continue
            rules = ruleset.for_file(source.path, source.kind)
            summary_rules = ruleset.project_rules(source.kind)
            flow = (flows or {}).get(source.display_path)
            summarise = any(rule.wants_summary(source.prefilter_data) for rule in summary_rules)
            if not summarise and not any(rule.could_match(source.prefilter_data) for rule in rules):
                # check_source runs no rule on such bytes: nothing to parse, nothing to find.
                outcomes[index] = FileOutcome(path=source.display_path, checked=True)
                continue
            key = cache.key(source, rules) if cache else None
            cached = cache.load(key, source.display_path) if cache and key else None
            # A cached outcome with fixes to apply is recomputed: fixes are never taken from the cache.
            if cached is not None and not (fix.apply and any(f.fix_applies(fix.unsafe) for f in cached.findings)):
                outcomes[index] = cached
                continue
            from aoti_lint.prefilter import needs_parse  # imports ast: only once some file passes stage one

            if needs_parse(source, rules, summary_rules):
                pending.append(_Pending(index, source, rules, key, summary_rules, flow))
                continue
            # Tokens only in strings or comments, or undecodable bytes: settled here without libcst.
            outcomes[index] = outcome = process_source(source, rules, fix, target, summary_rules, flow)
            _store(cache, key, outcome)
        for item, outcome in zip(pending, _process_all(pending, fix, execution, target), strict=True):
            outcomes[item.index] = outcome
            _store(cache, item.cache_key, outcome)
    return outcomes  # type: ignore[return-value]  # every slot is filled above


def _store(cache: Cache | None, key: str | None, outcome: FileOutcome) -> None:
    # A fixed file's findings belong to its new bytes, not to the key; errors may be transient.
    if cache is not None and key is not None and not outcome.errors and not outcome.fixed:
        cache.store(key, outcome)


def _open_cache(execution: Execution, ruleset: RuleSet) -> Cache | None:
    if execution.cache_dir is None:
        return None
    from aoti_lint.cache import Cache

    return Cache(execution.cache_dir, ruleset.settings)


def _process_all(
    pending: list[_Pending], fix: FixOptions, execution: Execution, target: tuple[int, int]
) -> list[FileOutcome]:
    jobs = min(_jobs(execution), len(pending))
    work = sum(SECONDS_PER_FILE + SECONDS_PER_BYTE * len(item.source.data) for item in pending)
    if jobs <= 1 or work < execution.pool_min_seconds:
        return [process_source(item.source, item.rules, fix, target, item.summary_rules, item.flow) for item in pending]
    return _process_in_pool(pending, fix, jobs, target)


def _process_in_pool(pending: list[_Pending], fix: FixOptions, jobs: int, target: tuple[int, int]) -> list[FileOutcome]:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        # Largest first, so that one big file started last does not keep the other workers waiting.
        order = sorted(range(len(pending)), key=lambda i: -len(pending[i].source.data))
        futures = {
            i: pool.submit(
                _process_in_worker,
                pending[i].source,
                pending[i].rules,
                fix,
                target,
                pending[i].summary_rules,
                pending[i].flow,
            )
            for i in order
        }
        outcomes = []
        for i, item in enumerate(pending):
            try:
                outcomes.append(futures[i].result())
            except BrokenProcessPool:
                # A worker died (killed, out of memory): that file is reported, the others still count.
                outcomes.append(
                    FileOutcome(
                        path=item.source.display_path,
                        errors=[FileError(item.source.display_path, "worker process died while linting")],
                    )
                )
        return outcomes


def _process_in_worker(
    source: SourceFile,
    rules: tuple[type[Rule], ...],
    fix: FixOptions,
    target: tuple[int, int],
    summary_rules: tuple[type[Rule], ...],
    flow: object = None,
) -> FileOutcome:
    outcome = process_source(source, rules, fix, target, summary_rules, flow)
    for finding in outcome.findings:
        # Rule-private payloads (libcst nodes) are neither needed by the parent nor cheap to pickle.
        finding.data = None
    return outcome
