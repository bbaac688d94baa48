"""Running the per-file step over many files, fast.

Four tiers, cheapest first: with a cache, a file whose stat is the one a run recorded with its verdict
(``aoti_lint.run.file_stats``) is settled without being opened; a file that no enabled rule's prefilter accepts is
settled by reading it (the vast majority of files); a file whose outcome is in the cache is settled by reading the
entry; only the rest is read in full, in a process pool when there is enough of it to pay for the workers'
start. Files go to the workers as soon as that much work is queued, so the
workers parse while this process is still reading the tree, and one set of workers serves every pass of a run
(``Workers``). In a large tree the reading itself is most of the work: once the files left would take this process
its share of the threshold, they are read in chunks by the workers, which run every stage on the few that pass
stage one and send back the outcomes (``_Chunks``). Under pre-commit, which already runs hooks in parallel, the
default is serial.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from time import perf_counter

from aoti_lint.diagnostics import FileError
from aoti_lint.read.files import Candidate
from aoti_lint.read.source import SourceFile, display_path
from aoti_lint.run.ast_answer import needs_libcst
from aoti_lint.run.disk import lint_file, make_source, read_stamped
from aoti_lint.run.engine import over_limits
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.file_stats import CLEAN, rules_named
from aoti_lint.run.prefilter import Wanted
from aoti_lint.run.results import FileOutcome
from aoti_lint.run.ruleset import RuleSet
from aoti_lint.run.work_items import (
    BATCH_FILES,
    CHUNK_FILES,
    INLINE_SHARE,
    INLINE_STAGE_BYTES,
    PACE_FILES,
    SECONDS_PER_BYTE,
    SECONDS_PER_FILE,
    LaterStages,
    Pending,
    Screened,
    available_cores,
    context_rules_named,
    first_stage,
)
from aoti_lint.run.worker_pool import Stream, Workers
from aoti_lint.run.worker_process import screen_chunk
from aoti_lint.settings.run_options import Execution, FixOptions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from concurrent.futures import Future

    from aoti_lint.flows.migration_flow import FileFlow
    from aoti_lint.run.cache import Cache
    from aoti_lint.run.file_stats import Stamps


def run_files(
    candidates: Sequence[Candidate],
    ruleset: RuleSet,
    cwd: Path,
    fix: FixOptions,
    execution: Execution,
    flows: dict[str, FileFlow] | None = None,
    shared_cache: Cache | None = None,
    stats: dict[str, os.stat_result] | None = None,
    shared_workers: Workers | None = None,
) -> list[FileOutcome]:
    """The outcome of linting (and fixing) each candidate, in the same order; ``flows``: the migration plan
    per display path (``project.plan_migrations``); ``shared_cache``: the cache of ``execution.cache_dir``
    opened by the caller for several calls (``cache.open_cache``), left open; ``stats``: path -> the stat the
    caller took of it before reading any file (``unchanged_run.run_key``), for the stamps to compare (never to
    record: a file read is stamped with the stat it was read with); ``shared_workers``: the caller's worker
    processes (``Workers``, entered by the caller, which stops them), left running."""
    from collections import deque
    from contextlib import ExitStack

    outcomes: list[FileOutcome | None] = [None] * len(candidates)
    # Files past the prefilter's first stage whose fixes' edits libcst builds (or, once workers run, every later
    # stage's files): sent to a pool as soon as there is enough of them to pay for one.
    workers = shared_workers or Workers()
    stream = Stream(fix, execution, workers)
    if execution.cache_dir is None:
        cache = None
    else:
        from aoti_lint.run.cache import open_cache

        cache = shared_cache or open_cache(execution, ruleset.settings)
    # Before any file is read: a file modified since may keep its stamp only if it is older than this.
    started_ns = time.time_ns()
    stamps = cache.stamps() if cache else None
    with ExitStack() as owned:
        if cache is not None and cache is not shared_cache:
            owned.enter_context(cache)
        if workers is not shared_workers:
            owned.enter_context(workers)
        owned.enter_context(stream)
        if execution.pool_min_seconds <= 0:
            stream.start()  # any work pays for the workers: they take every file past stage one

        def take(
            index: int,
            candidate: Candidate,
            source: SourceFile | FileError,
            info: os.stat_result | None,
            first: Wanted | None = None,
        ) -> None:
            """Everything after reading a file: stage one (``first``: its answer, found where the file was read), the
            cache, and the later stages here or in the stream."""
            if isinstance(source, FileError):
                outcomes[index] = FileOutcome(path=source.path, errors=[source])
                _learn(stamps, candidate, None, None, None, started_ns)
                return
            context = ruleset.context(source.path, source.kind, flow=(flows or {}).get(source.display_path))
            if first is None:
                if not context.reads(source.prefilter_data):
                    # check_source runs no rule on such bytes: nothing to parse, nothing to find.
                    outcomes[index] = FileOutcome(path=source.display_path, checked=True)
                    _learn(stamps, candidate, info, context, CLEAN, started_ns)
                    return
                first = first_stage(source.kind, source.prefilter_data, context)
            too_big = over_limits(source)
            if too_big is not None:
                outcomes[index] = FileOutcome(path=source.display_path, errors=[too_big])
                _learn(stamps, candidate, None, context, None, started_ns)
                return
            plan = context.flow.fingerprint() if context.flow is not None else ""
            digest = cache.digest(source.data) if cache else ""
            key = cache.key(source, context.rules, plan, digest) if cache else None
            cached = cache.load(key, source.display_path) if cache and key else None
            if cached is not None and _usable(cached, fix):
                outcomes[index] = cached
                _learn(stamps, candidate, info, context, _verdict(cached, digest), started_ns)
                return
            item = Pending(index, source, context, key, None, candidate, info, digest, first)
            if stream.running:
                stream.add(item)  # the workers take every later stage, each file's in one process
            elif len(source.data) > INLINE_STAGE_BYTES:
                stream.hold(item)
            else:
                began = perf_counter()
                if not _left_for_libcst(item, stream):
                    outcomes[index] = outcome = lint_file(item.source, item.context, fix, item.wanted)
                    _settle(cache, stamps, item, outcome, started_ns)
                stream.worked_here(perf_counter() - began)

        def settle(index: int, candidate: Candidate, screened: Screened | None) -> None:
            """A file of a chunk, by what its stage one gave (``screen_chunk``); None: its worker failed."""
            if screened is None:  # the file is read here, as any other
                take(index, candidate, *read_stamped(candidate, cwd))
                return
            error, info, data, rules, first, outcome, digest = screened
            if error is not None:
                take(index, candidate, error, None)
            elif outcome is not None:  # past stage one, and every later stage run by the worker that read it
                outcomes[index] = outcome
                if cache is None and stamps is None:
                    return
                context = ruleset.context(candidate.path, candidate.kind)
                if info is None:  # too large to lint: like a read error, read again next time
                    _learn(stamps, candidate, None, context, None, started_ns)
                    return
                shown = display_path(candidate.where, cwd)
                key = cache.key_of(digest, candidate.kind, shown, candidate.path, context.rules, "") if cache else None
                _stamp_imports(outcome, started_ns)
                stored = _store(cache, key, outcome)
                verdict = _verdict(outcome, digest) if stored else None
                _learn(stamps, candidate, info, context, verdict, started_ns, outcome)
            elif data is not None:  # past stage one: the rest as for a file read here
                shown = display_path(candidate.where, cwd)
                take(index, candidate, make_source(candidate.path, shown, candidate.kind, data), info, first)
            else:
                outcomes[index] = FileOutcome(path=display_path(candidate.where, cwd), checked=True)
                if stamps is not None:
                    stamps.learn(candidate.where, info, rules, CLEAN, started_ns)

        # Reading and stage one go to the workers too once the files left would take this process its share of the
        # threshold, at the pace it read the first ones, and enough are left for every worker (``_Chunks``); a pass
        # over planned flows is small, and stays here.
        chunks: _Chunks | None = None
        may_chunk = stream.jobs > 1 and not flows
        read_here, reading_seconds = 0, 0.0
        # Files read here as a worker reads a chunk, a few at a time: stage one looks for its words in all their bytes
        # at once (``FileContext.reads_many``), and a file it settles needs no SourceFile (nor a Path).
        batch: list[tuple[int, Candidate]] = []

        def screen_batch() -> None:
            for (at, file), screened in zip(batch, screen_chunk(batch, ruleset, cwd, stamps is not None), strict=True):
                settle(at, file, screened)
            batch.clear()

        for index, candidate in enumerate(candidates):
            stream.check()
            if cache and stamps:
                info = stats.get(candidate.where) if stats else None
                recalled = _recalled(cache, stamps, candidate, cwd, ruleset, flows, fix, info)
                if recalled is not None:
                    outcomes[index] = recalled
                    continue
            if chunks is not None:
                mine = chunks.add(index, candidate)
                if mine:  # read here as a worker reads it: stage one on the bytes alone
                    screened_here = screen_chunk(mine, ruleset, cwd, stamps is not None)
                    for (at, file), screened in zip(mine, screened_here, strict=True):
                        settle(at, file, screened)
                continue
            read_here += 1
            if flows:
                began = perf_counter()
                take(index, candidate, *read_stamped(candidate, cwd))
                reading_seconds += perf_counter() - began
            else:
                batch.append((index, candidate))
                if len(batch) < BATCH_FILES:
                    continue
                began = perf_counter()
                screen_batch()
                reading_seconds += perf_counter() - began
            left = len(candidates) - index - 1
            if (
                may_chunk
                and read_here >= PACE_FILES
                and left >= CHUNK_FILES * stream.jobs
                and reading_seconds / read_here * left >= execution.pool_min_seconds * INLINE_SHARE
            ):
                chunks = _Chunks(stream, ruleset, cwd, stamps is not None, cache is not None)
        screen_batch()
        for index, candidate, result in chunks.results() if chunks is not None else ():
            settle(index, candidate, result)
        # Held files no workers took: their later stages run here. A settled file's bytes and text are let go as
        # soon as it is done.
        queue = deque(stream.release())
        while queue:
            item = queue.popleft()
            if stream.running:
                stream.add(item)
            elif not _left_for_libcst(item, stream):
                outcomes[item.index] = outcome = lint_file(item.source, item.context, fix, item.wanted)
                _settle(cache, stamps, item, outcome, started_ns)
        for item, outcome in stream.finish():
            outcomes[item.index] = outcome
            _settle(cache, stamps, item, outcome, started_ns)
    return outcomes  # type: ignore[return-value]  # every slot is filled above


def _usable(cached: FileOutcome, fix: FixOptions) -> bool:
    """A cached outcome with fixes to apply is recomputed: fixes are never taken from the cache; nor are edits a
    run needs that the cached run left unbuilt."""
    return not (
        (fix.apply and any(f.fix_applies(fix.unsafe) for f in cached.findings))
        or (fix.edits and any(f.fix is not None and f.fix.deferred for f in cached.findings))
    )


def _recalled(
    cache: Cache,
    stamps: Stamps,
    candidate: Candidate,
    cwd: Path,
    ruleset: RuleSet,
    flows: dict[str, FileFlow] | None,
    fix: FixOptions,
    info: os.stat_result | None = None,
) -> FileOutcome | None:
    """The outcome of a file whose stamp is unchanged since a run settled it, without reading it; None when it
    must be read (a new stamp, an entry gone, a plan the entry was not made under)."""
    rules = ruleset.for_file(candidate.where, candidate.kind)
    verdict = stamps.recall(candidate.where, rules_named(rules, ruleset.project_rules(candidate.kind)), info)
    if verdict is None:
        return None
    shown = display_path(candidate.where, cwd)
    flow = (flows or {}).get(shown)
    if verdict == CLEAN:
        # Only a file with project data has a plan: one with a plan is read, whatever its stamp says.
        return FileOutcome(path=shown, checked=True) if flow is None else None
    context = ruleset.context(candidate.path, candidate.kind, flow=flow)
    plan = flow.fingerprint() if flow is not None else ""
    cached = cache.load(cache.key_of(verdict, candidate.kind, shown, candidate.path, context.rules, plan), shown)
    return cached if cached is not None and _usable(cached, fix) else None


def _verdict(outcome: FileOutcome, digest: str) -> str:
    return CLEAN if not outcome.findings and outcome.project is None else digest


def _learn(
    stamps: Stamps | None,
    candidate: Candidate,
    info: os.stat_result | None,
    context: FileContext | None,
    verdict: str | None,
    started_ns: int,
    outcome: FileOutcome | None = None,
) -> None:
    if stamps is not None:
        rules = context_rules_named(context) if context is not None else ""
        imports = (outcome.depends_on, outcome.imports_stamp) if outcome is not None else ((), "")
        stamps.learn(candidate.where, info, rules, verdict, started_ns, imports)


def _stamp_imports(outcome: FileOutcome, started_ns: int) -> None:
    """The digest of the stamps of the modules the outcome depends on, as the run settles it."""
    if outcome.depends_on:
        from aoti_lint.run.file_stats import imports_stamp

        outcome.imports_stamp = imports_stamp(outcome.depends_on, started_ns)


def _settle(cache: Cache | None, stamps: Stamps | None, item: Pending, outcome: FileOutcome, started_ns: int) -> None:
    _stamp_imports(outcome, started_ns)
    stored = _store(cache, item.cache_key, outcome)
    verdict = _verdict(outcome, item.digest) if stored else None
    _learn(stamps, item.candidate, item.stamp, item.context, verdict, started_ns, outcome)


def _store(cache: Cache | None, key: str | None, outcome: FileOutcome) -> bool:
    """Whether the outcome was worth storing (and so its file's stamp worth keeping)."""
    # A fixed file's findings belong to its new bytes, not to the key; errors may be transient.
    if (
        cache is not None
        and key is not None
        and not outcome.errors
        and not outcome.notes
        and not outcome.fixed
        and outcome.imports_stamp is not None
    ):
        cache.store(key, outcome)
        return True
    return False


def _left_for_libcst(item: Pending, stream: Stream) -> bool:
    """Run the file's later prefilter stages in this process; True when they leave it for libcst to build its fixes'
    edits (it is then in the stream), False when it is to be settled here (``item.wanted`` set for ``lint_file``)."""
    item.wanted = wanted = item.later_stages()
    # A fix of a deprecated call may be built: pool's work. Otherwise it is settled here, while the file's ast
    # index is still at hand.
    if wanted and needs_libcst(item.source, item.context, wanted, stream.fix.builds_edits):
        stream.add(item, SECONDS_PER_FILE + SECONDS_PER_BYTE * len(item.source.data))
        return True
    return False


class _Chunks:
    """The files still to read, in chunks (``CHUNK_FILES``) as the run reaches them: to a worker, which runs every
    stage on them, when one may be idle (fewer chunks in flight than workers) or when every core has a worker;
    else read here, so that this process reads its share too. With as many workers as cores, this process reading
    would only take a core from them. The results of the chunks sent come back in the order they went."""

    def __init__(self, stream: Stream, ruleset: RuleSet, cwd: Path, stamped: bool, digests: bool) -> None:
        stream.start(stream.jobs)
        self.stream = stream
        self.ruleset = ruleset
        self.cwd = cwd
        self.stamped = stamped
        self.later = LaterStages(stream.fix, digests)
        self.reads_here = stream.jobs < available_cores()
        self.chunk: list[tuple[int, Candidate]] = []
        self.sent: list[tuple[list[tuple[int, Candidate]], Future[list[Screened]] | None]] = []
        self.in_flight: list[Future[list[Screened]]] = []

    def add(self, index: int, candidate: Candidate) -> list[tuple[int, Candidate]]:
        """The files of a full chunk for this process to read, when every worker has one in hand and a core is
        left for this process; else none."""
        self.chunk.append((index, candidate))
        if len(self.chunk) < CHUNK_FILES:
            return []
        if self.reads_here:
            self.in_flight = [future for future in self.in_flight if not future.done()]
            if len(self.in_flight) >= self.stream.jobs:
                chunk, self.chunk = self.chunk, []
                return chunk
        self._send()
        return []

    def _send(self) -> None:
        chunk, self.chunk = self.chunk, []
        future = self.stream.screen(chunk, self.ruleset, self.cwd, self.stamped, self.later)
        self.sent.append((chunk, future))
        if future is not None:
            self.in_flight.append(future)

    def results(self) -> Iterator[tuple[int, Candidate, Screened | None]]:
        """Each file's result; None for the files of a chunk whose worker failed (it died, or raised)."""
        if self.chunk:
            self._send()
        for chunk, future in self.sent:
            screened = self.stream.screened(future)
            if screened is None:
                yield from ((index, candidate, None) for index, candidate in chunk)
            else:
                yield from (
                    (index, candidate, result) for (index, candidate), result in zip(chunk, screened, strict=True)
                )


# ---- in the worker processes ---------------------------------------------------------------------------------
