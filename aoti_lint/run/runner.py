"""Running the per-file step over many files, fast.

Four tiers, cheapest first: with a cache, a file whose stat is the one a run recorded with its verdict
(``aoti_lint.run.file_stats``) is settled without being opened; a file that no enabled rule's prefilter accepts is
settled by reading it (the vast majority of files); a file whose outcome is in the cache is settled by reading the
entry; only the rest is parsed, in a process pool when there is enough of it to pay for the workers' start (each
worker imports libcst, about half a second). Files go to the workers as soon as that much work is queued, so the
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
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter

from aoti_lint.diagnostics import FileError
from aoti_lint.read.files import Candidate
from aoti_lint.read.source import PYTHON_KINDS, SourceFile, display_path, screen_data
from aoti_lint.run.disk import lint_file, make_source, read_stamped
from aoti_lint.run.engine import FileOutcome, needs_libcst, over_limits
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.file_stats import CLEAN, rules_named
from aoti_lint.run.prefilter import Wanted, by_bytes, prefiltered
from aoti_lint.run.ruleset import RuleSet
from aoti_lint.settings.run_options import Execution, FixOptions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from concurrent.futures import Future
    from typing import TypeVar

    from aoti_lint.flows.migration_flow import FileFlow
    from aoti_lint.run.cache import Cache
    from aoti_lint.run.file_stats import Stamps

# The cost of linting a file with libcst on one core (parse, scope and qualified-name resolution, rules), as
# measured for the pool's threshold: most of it is per node, with a floor per module.
SECONDS_PER_FILE = 0.03
SECONDS_PER_BYTE = 10e-6
# The cost of the later prefilter stages (text, one `ast` parse and index) per byte of a file that passed the
# first, as measured on torch's sources. Past the pool's threshold they run in the workers as well.
STAGE_SECONDS_PER_BYTE = 0.3e-6
# A file past stage one this small has its later stages run here as soon as it is read, until workers run: they
# cost less than sending it to a worker (a few milliseconds), and a file they settle never goes to one.
INLINE_STAGE_BYTES = 32_000
# Once such work here adds up to this share of the pool's threshold, the tree holds enough files past stage one for
# workers to take the rest while this process reads on: their start is a fork, their imports this process's, and a
# file read from ``ast`` alone needs no libcst.
INLINE_SHARE = 0.25
# Past that share, the files still to read go to the workers in chunks of this many: each worker reads its files, runs
# stage one on them and every later stage on the few that pass it, and sends back their outcomes (``_Chunks``).
# Reading a large tree is most of its cost, and this spreads the reading itself over the workers.
CHUNK_FILES = 128
# How many files this process reads before it judges the pace of the rest by them (and again after each such batch
# until it chunks): few, since the workers start only once it has judged.
PACE_FILES = 8
# Files read here go through stage one this many at a time (``FileContext.reads_many``); the pace is judged after each
# such batch.
BATCH_FILES = PACE_FILES
# A file larger than this goes through stage one alone: a batch's files are held until it is screened.
BATCH_FILE_BYTES = 32_000
# The modules of the later prefilter stages and of the readings from ``ast`` (libcst aside): imported here before the
# workers start, so that each forked worker has them instead of importing them again.
LATER_STAGE_MODULES = (
    "aoti_lint.model.name_index",
    "aoti_lint.rules.kernel_prefilter",
    "aoti_lint.model.suppressions",
    "aoti_lint.rules.ast_flow",
    "aoti_lint.flows.so_mentions",
)


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
    context: FileContext
    cache_key: str | None
    wanted: Wanted | None
    candidate: Candidate
    stamp: os.stat_result | None = None
    digest: str = ""
    # What stage one found (a Python file's): the later stages start from it wherever they run, without asking
    # every rule about the bytes again (a worker, then this process, then a worker read them otherwise).
    first: Wanted | None = None

    def later_stages(self) -> Wanted | None:
        """``item.wanted`` once found; else what every stage finds, from stage one's answer when it is known."""
        if self.wanted is None and self.first is not None:
            return prefiltered(self.source, self.context, self.first)
        return self.wanted


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
    caller took of it before reading any file (``run_memo.run_key``), for the stamps to compare (never to
    record: a file read is stamped with the stat it was read with); ``shared_workers``: the caller's worker
    processes (``Workers``, entered by the caller, which stops them), left running."""
    from collections import deque
    from contextlib import ExitStack

    outcomes: list[FileOutcome | None] = [None] * len(candidates)
    # Files past the prefilter's first stage that are left for libcst (or, once workers run, for every later
    # stage): sent to a pool as soon as there is enough of them to pay for one.
    workers = shared_workers or Workers()
    stream = _Stream(fix, execution, workers)
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
                first = _first_stage(source.kind, source.prefilter_data, context)
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
            item = _Pending(index, source, context, key, None, candidate, info, digest, first)
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

        def settle(index: int, candidate: Candidate, screened: _Screened | None) -> None:
            """A file of a chunk, by what its stage one gave (``_screen_chunk``); None: its worker failed."""
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
                stored = _store(cache, key, outcome)
                _learn(stamps, candidate, info, context, _verdict(outcome, digest) if stored else None, started_ns)
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
            for (at, file), screened in zip(batch, _screen_chunk(batch, ruleset, cwd, stamps is not None), strict=True):
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
                    screened_here = _screen_chunk(mine, ruleset, cwd, stamps is not None)
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
) -> None:
    if stamps is not None:
        rules = _rules_named(context) if context is not None else ""
        stamps.learn(candidate.where, info, rules, verdict, started_ns)


def _rules_named(context: FileContext) -> str:
    """What a file's stamp holds of the rules it was linted with: its verdict holds for these alone."""
    return rules_named(context.rules, context.project_rules)


def _settle(cache: Cache | None, stamps: Stamps | None, item: _Pending, outcome: FileOutcome, started_ns: int) -> None:
    stored = _store(cache, item.cache_key, outcome)
    verdict = _verdict(outcome, item.digest) if stored else None
    _learn(stamps, item.candidate, item.stamp, item.context, verdict, started_ns)


def _store(cache: Cache | None, key: str | None, outcome: FileOutcome) -> bool:
    """Whether the outcome was worth storing (and so its file's stamp worth keeping)."""
    # A fixed file's findings belong to its new bytes, not to the key; errors may be transient.
    if cache is not None and key is not None and not outcome.errors and not outcome.notes and not outcome.fixed:
        cache.store(key, outcome)
        return True
    return False


def _left_for_libcst(item: _Pending, stream: _Stream) -> bool:
    """Run the file's later prefilter stages in this process; True when they leave it for libcst (it is then in
    the stream), False when it is to be settled here (``item.wanted`` set for ``lint_file``)."""
    item.wanted = wanted = item.later_stages()
    # Some rule passed every stage, or some project rule wants data only libcst reads: pool's work. Otherwise
    # (tokens only in strings or comments, `.so` mentions read from ast, undecodable bytes) it is settled here
    # without libcst, while the file's ast index is still at hand.
    if wanted and needs_libcst(item.source, item.context, wanted, stream.fix.builds_edits):
        stream.add(item, SECONDS_PER_FILE + SECONDS_PER_BYTE * len(item.source.data))
        return True
    return False


# What a worker gives for one file of a chunk: the read error, or the ``stat`` of what was read and one of
# - the file's outcome and the ``content_digest`` of its bytes (empty without a cache): it passed stage one, and the
#   worker ran every later stage on it too (a file too large to lint comes with no ``stat``);
# - its bytes and what stage one found in them (a Python file's): it passed stage one, and the rest is this process's
#   (a notebook, or a chunk read here);
# - the rules it was settled with (stamps).
_Screened = tuple[
    "FileError | None", "os.stat_result | None", "bytes | None", str, "Wanted | None", "FileOutcome | None", str
]


def _first_stage(kind: str, data: bytes, context: FileContext) -> Wanted | None:
    """What stage one found in the bytes of a file that passed it, for a Python file's later stages."""
    return by_bytes(data, context) if kind in PYTHON_KINDS else None


@dataclass(frozen=True)
class _Later:
    """What a worker needs to run the later stages of the files of a chunk that pass stage one, where it read them:
    their bytes then never travel (to this process and back to a worker), and no file waits for the chunk's return
    to start them. ``digests``: whether the run keeps a cache, whose keys hold the digest of the bytes."""

    fix: FixOptions
    digests: bool


class _Chunks:
    """The files still to read, in chunks (``CHUNK_FILES``) as the run reaches them: to a worker, which runs every
    stage on them, when one may be idle (fewer chunks in flight than workers) or when every core has a worker;
    else read here, so that this process reads its share too. With as many workers as cores, this process reading
    would only take a core from them. The results of the chunks sent come back in the order they went."""

    def __init__(self, stream: _Stream, ruleset: RuleSet, cwd: Path, stamped: bool, digests: bool) -> None:
        stream.start(stream.jobs)
        self.stream = stream
        self.ruleset = ruleset
        self.cwd = cwd
        self.stamped = stamped
        self.later = _Later(stream.fix, digests)
        self.reads_here = stream.jobs < available_cores()
        self.chunk: list[tuple[int, Candidate]] = []
        self.sent: list[tuple[list[tuple[int, Candidate]], Future[list[_Screened]] | None]] = []
        self.in_flight: list[Future[list[_Screened]]] = []

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

    def results(self) -> Iterator[tuple[int, Candidate, _Screened | None]]:
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


class Workers:
    """The worker processes of a run: started when a pass over the files first has enough work for them, lent
    to each later pass (their start, a fork and a libcst import each, is paid once per run), stopped when the
    run ends (a context manager). While a pass has them, Ctrl-C is only recorded and raised at the next check
    (``_Interrupts``); between passes it is the default handler's again, so that work done here (writing the
    fixes) stops at once."""

    def __init__(self) -> None:
        self.interrupts: _Interrupts | None = None
        self._scope: _InterruptScope | None = None
        self._pool: _Pool | None = None

    def lend(self, jobs: int) -> _Pool:
        """The pool an earlier pass started, or a new one of ``jobs`` workers if there is none or it broke, with
        no file queued; until ``give_back``, Ctrl-C is recorded."""
        assert self._scope is None, "the workers are lent to one pass at a time"
        if self._pool is not None and self._pool.broken:
            self._pool.close()
            self._pool = None
        scope = _InterruptScope()
        interrupts = scope.__enter__()
        try:
            if self._pool is None:
                self._pool = _Pool(jobs, interrupts)
        except BaseException:
            # No pool (no semaphores, no descriptors left): Ctrl-C must not stay merely recorded.
            scope.__exit__(None, None, None)
            raise
        self._scope, self.interrupts = scope, interrupts
        self._pool.lent(interrupts)
        return self._pool

    @property
    def running(self) -> bool:
        """Whether a pool started by an earlier pass is at hand (not known to be broken)."""
        return self._pool is not None and not self._pool.broken

    def give_back(self, exc_type: object, exc: BaseException | None, traceback: object) -> None:
        """The pass is done with the pool: on an exception (Ctrl-C included) the workers are stopped, not waited
        for; a Ctrl-C recorded after the last check is raised."""
        scope, self._scope, self.interrupts = self._scope, None, None
        try:
            if exc is not None:
                self._close(stop=True)
        finally:
            if scope is not None:
                scope.__exit__(exc_type, exc, traceback)

    def check(self) -> None:
        """Raise KeyboardInterrupt if Ctrl-C was pressed while a pass has the workers."""
        if self.interrupts is not None:
            self.interrupts.check()

    def _close(self, stop: bool) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            if stop:
                pool.stop()
            pool.close()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, traceback: object) -> None:
        self._close(stop=exc is not None)


class _Stream:
    """Files sent to the workers as they are found, once their estimated work pays for starting them (or the
    workers already run); the workers parse while this process goes on reading the tree. Without enough work
    (or with one job) the files are processed here, after the others, in the order they were added. A context
    manager: the workers are given back when the pass ends (stopped if it ends with an exception)."""

    def __init__(self, fix: FixOptions, execution: Execution, workers: Workers) -> None:
        self.fix = fix
        self.jobs = _jobs(execution)
        self.threshold = execution.pool_min_seconds
        self.workers = workers
        self.items: list[_Pending] = []
        self.work = 0.0
        # Files too big for their later stages to run as they are read (``hold``), and those stages' cost.
        self._held: list[_Pending] = []
        self._held_seconds = 0.0
        self._here_seconds = 0.0
        self._pool: _Pool | None = None
        self._lent = False

    @property
    def running(self) -> bool:
        return self._pool is not None

    def check(self) -> None:
        self.workers.check()

    def add(self, item: _Pending, work: float = 0.0) -> None:
        """Queue the file (``work``: its estimated cost); the workers start once the queue's work pays for them."""
        self.items.append(item)
        self.work += work
        if self._pool is not None:
            self._pool.submit(len(self.items) - 1, item, self.fix)
        elif self.jobs > 1 and (self.work >= self.threshold or self.workers.running):
            # Workers an earlier pass started cost nothing more to use.
            self.start()

    def hold(self, item: _Pending) -> None:
        """A file whose later stages cost enough to leave to the workers: it goes to them once they run (they
        start when the held files' stages add up to the threshold), or back to the caller (``release``)."""
        if self._pool is not None:
            self.add(item)
            return
        self._held.append(item)
        self._held_seconds += STAGE_SECONDS_PER_BYTE * len(item.source.data)
        if self.jobs > 1 and (self._held_seconds >= self.threshold or self.workers.running):
            self.start()

    def worked_here(self, seconds: float) -> None:
        """``seconds`` of work this process did on a file past stage one while no workers ran: once it adds up
        to ``INLINE_SHARE`` of the threshold, the workers start and take the files still to come."""
        self._here_seconds += seconds
        if self._pool is None and self.jobs > 1 and self._here_seconds >= self.threshold * INLINE_SHARE:
            self.start(self.jobs)

    def release(self) -> list[_Pending]:
        """The held files no workers took (none started while they were held), for this process."""
        held, self._held = self._held, []
        return held

    def start(self, workers: int = 1) -> None:
        """Send the files queued and held so far to the workers, whatever their estimated work (with one job,
        nothing); ``workers``: how many to start at least (up to the jobs), whatever is queued."""
        if self._pool is not None or self.jobs <= 1:
            return
        self.items += self._held
        self._held = []
        # As many workers as files, up to the jobs: two big files on 64 cores fork two workers, not 64. Past the
        # threshold, files keep coming as the tree is read; at a threshold of zero, any number may.
        queued = max(len(self.items), workers) if self.threshold > 0 else self.jobs
        self._pool = self.workers.lend(min(self.jobs, max(queued, 1)))
        self._lent = True
        # Largest first, so that one big file started last does not keep the other workers waiting.
        for index in sorted(range(len(self.items)), key=lambda i: -len(self.items[i].source.data)):
            self._pool.submit(index, self.items[index], self.fix)

    def screen(
        self, chunk: list[tuple[int, Candidate]], ruleset: RuleSet, cwd: Path, stamped: bool, later: _Later
    ) -> Future[list[_Screened]] | None:
        """Send a chunk of files to be read and linted by a worker; None if the pool broke."""
        return self._pool.screen(chunk, ruleset, cwd, stamped, later) if self._pool is not None else None

    def screened(self, future: Future[list[_Screened]] | None) -> list[_Screened] | None:
        """The chunk's results; None if its worker failed."""
        from concurrent.futures.process import BrokenProcessPool

        interrupts = self.workers.interrupts
        if future is None or interrupts is None:
            return None
        try:
            return _result(future, interrupts)
        except BrokenProcessPool:
            if self._pool is not None:
                self._pool.broken = True
            return None
        except Exception:  # raised in the worker: its files are read here, where the error is theirs alone
            return None

    def finish(self) -> list[tuple[_Pending, FileOutcome]]:
        """Every file's outcome, once (the workers are then done with this pass); a worker crash (a native parser
        segfault, the OOM killer) costs only its file."""
        pool, self._pool = self._pool, None
        interrupts = self.workers.interrupts
        if pool is None or interrupts is None:
            return [(item, _process_here(item, self.fix)) for item in self.items]
        outcomes: dict[int, FileOutcome] = {}
        in_flight = pool.gather(self.items, outcomes)
        _recover(self.items, list(range(len(self.items))), in_flight, self.fix, self.jobs, outcomes, interrupts)
        return [(item, outcomes[index]) for index, item in enumerate(self.items)]

    def __enter__(self) -> _Stream:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, traceback: object) -> None:
        if self._lent:
            self._lent = False
            self.workers.give_back(exc_type, exc, traceback)


def _process_here(item: _Pending, fix: FixOptions) -> FileOutcome:
    try:
        return lint_file(item.source, item.context, fix, item.later_stages())
    except Exception as exc:  # a bug of ours costs this file, not the run
        return _failed(item.source.display_path, exc)


def _failed(path: str, exc: BaseException) -> FileOutcome:
    import traceback

    detail = "".join(traceback.format_exception(exc))
    error = FileError(path, f"internal error while linting: {type(exc).__name__}: {exc}", detail=detail)
    return FileOutcome(path=path, errors=[error])


# After the first Ctrl-C, how long in-flight files may take to finish before their workers are stopped.
INTERRUPT_GRACE_SECONDS = 1.0


def _recover(
    pending: list[_Pending],
    todo: list[int],
    in_flight: set[int],
    fix: FixOptions,
    jobs: int,
    outcomes: dict[int, FileOutcome],
    interrupts: _Interrupts,
) -> None:
    """After a round of ``todo`` in a pool: if a worker died, the files in flight at that moment are suspects,
    each retried alone in a pool of its own (a crash there is that file's error); the others go back to a fresh
    pool, until every file has an outcome."""
    whole_again = True
    while True:
        unfinished = [i for i in todo if i not in outcomes]
        if not unfinished:
            return
        if not in_flight and whole_again:
            # No file was seen in flight: a worker died between files (or idle, between passes). A fresh pool
            # gets the unfinished files once before each is suspected alone (a pool each: N libcst imports).
            whole_again = False
            in_flight = _run_pool(pending, unfinished, fix, jobs, outcomes, interrupts)
            todo = unfinished
            continue
        # Still nothing seen in flight: every unfinished one is a suspect.
        suspects = [i for i in unfinished if i in in_flight] or unfinished
        for index in suspects:
            _run_pool(pending, [index], fix, 1, outcomes, interrupts)
            if index not in outcomes:
                outcomes[index] = _crashed(pending[index])
        todo = [i for i in unfinished if i not in outcomes]
        if not todo:
            return
        in_flight = _run_pool(pending, todo, fix, jobs, outcomes, interrupts)


def _crashed(item: _Pending) -> FileOutcome:
    path = item.source.display_path
    message = "not checked: the worker process crashed on this file (a native parser crash or out of memory)"
    return FileOutcome(path=path, errors=[FileError(path, message)])


def _run_pool(
    pending: list[_Pending],
    indices: list[int],
    fix: FixOptions,
    jobs: int,
    outcomes: dict[int, FileOutcome],
    interrupts: _Interrupts,
) -> set[int]:
    """Process ``indices`` into ``outcomes``; when a worker dies, the files that were in flight."""
    pool = _Pool(jobs, interrupts)
    try:
        for i in indices:
            pool.submit(i, pending[i], fix)
        return pool.gather(pending, outcomes)
    except KeyboardInterrupt:
        pool.stop()
        raise
    finally:
        pool.close()


class _Pool:
    """Worker processes, given files one at a time; the slots tell which file each worker has in hand, so that
    when one dies the files in flight are known (``_recover``)."""

    def __init__(self, jobs: int, interrupts: _Interrupts) -> None:
        import importlib
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        for name in LATER_STAGE_MODULES:
            importlib.import_module(name)
        self.jobs = jobs
        context = multiprocessing.get_context()
        # Slot k holds the index of the file worker k is processing, -1 between files: what was in flight.
        self.slots = context.Array("q", [-1] * jobs, lock=False)
        counter = context.Value("i", 0)
        self.executor = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=context,
            initializer=_init_worker,
            initargs=(self.slots, counter, os.getpid()),
        )
        self.interrupts = interrupts
        interrupts.pool = self.executor
        self.futures: dict[int, Future[FileOutcome]] = {}
        self.broken = False

    def lent(self, interrupts: _Interrupts) -> None:
        """A new pass has the pool: no file queued, none in hand (a slot left set by a pass that raised would
        name a file of that pass)."""
        self.interrupts = interrupts
        interrupts.pool = self.executor
        self.futures = {}
        for slot in range(len(self.slots)):
            self.slots[slot] = -1

    def submit(self, index: int, item: _Pending, fix: FixOptions) -> None:
        """Queue the file; the workers start with the first one. A file not queued because the pool broke is
        left without a future: ``_recover`` takes it with the unfinished ones."""
        from concurrent.futures.process import BrokenProcessPool

        self.interrupts.check()
        if self.broken:
            return
        try:
            self.futures[index] = self.executor.submit(
                _process_in_worker, index, item.source, item.context, fix, item.wanted, item.first
            )
        except BrokenProcessPool:
            self.broken = True
        self.interrupts.check()

    def screen(
        self, chunk: list[tuple[int, Candidate]], ruleset: RuleSet, cwd: Path, stamped: bool, later: _Later
    ) -> Future[list[_Screened]] | None:
        """Queue a chunk to be read and linted (``_screen_chunk``); None once the pool broke."""
        from concurrent.futures.process import BrokenProcessPool

        self.interrupts.check()
        if self.broken:
            return None
        try:
            return self.executor.submit(_screen_chunk, chunk, ruleset, cwd, stamped, later)
        except BrokenProcessPool:
            self.broken = True
            return None

    def gather(self, pending: list[_Pending], outcomes: dict[int, FileOutcome]) -> set[int]:
        """Wait for every queued file; when a worker died, the files that were in flight."""
        from concurrent.futures.process import BrokenProcessPool

        try:
            for i, future in self.futures.items():
                try:
                    outcomes[i] = _result(future, self.interrupts)
                except BrokenProcessPool:
                    raise
                except Exception as exc:  # raised in the worker (or its result could not be sent back)
                    outcomes[i] = _failed(pending[i].source.display_path, exc)
        except BrokenProcessPool:
            self.broken = True
        if not self.broken:
            return set()
        for i, future in self.futures.items():
            if future.done() and not future.cancelled() and future.exception() is None:
                outcomes[i] = future.result()
        return {index for index in self.slots if index >= 0}

    def stop(self) -> None:
        _stop(self.executor, self.futures.values())

    def close(self) -> None:
        self.interrupts.pool = None
        self.executor.shutdown(wait=True, cancel_futures=True)


if TYPE_CHECKING:
    Result = TypeVar("Result")

# How often the parent, waiting for a result, looks whether Ctrl-C was pressed.
INTERRUPT_POLL_SECONDS = 0.1


def _result(future: Future[Result], interrupts: _Interrupts) -> Result:
    from concurrent.futures import wait

    while not wait([future], timeout=INTERRUPT_POLL_SECONDS).done:
        interrupts.check()
    interrupts.check()
    return future.result()


def _stop(pool: object, futures: object) -> None:
    """The first Ctrl-C: no new file starts; in-flight files get a moment to finish, then their workers are
    stopped (SIGTERM: a worker removes its temporary file before it exits, so no file is half-written)."""
    from concurrent.futures import wait

    # Taken before the shutdown, which forgets them (the executor keeps its processes in a private mapping).
    workers = _workers(pool)
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)  # type: ignore[attr-defined]
    wait([f for f in futures if not f.done()], timeout=INTERRUPT_GRACE_SECONDS)  # type: ignore[attr-defined]
    _terminate(workers)
    # Python 3.11's exit hook wakes every executor's manager thread through a pipe that thread closes on its
    # way out; racing with it, the hook printed "OSError: [Errno 9] Bad file descriptor" after our last line.
    # Once the thread has finished, the hook finds the pipe closed and leaves it alone.
    if manager is not None:
        manager.join(timeout=INTERRUPT_GRACE_SECONDS)


def _workers(pool: object) -> list[object]:
    """The pool's worker processes; without the private mapping, none (the workers then exit on their own)."""
    return list((getattr(pool, "_processes", None) or {}).values())


def _terminate(workers: list[object]) -> None:
    import contextlib

    for process in workers:
        with contextlib.suppress(Exception):
            process.terminate()  # type: ignore[attr-defined]


class _Interrupts:
    """SIGINT while a pool runs: after the first, the parent's next ``check`` raises KeyboardInterrupt (the run
    winds down); a second exits at once.

    The handler itself does not raise: it can run inside the at-fork hooks of a worker being started (the
    logging module's, say), and Python swallows an exception raised there; the run then waited for ever.
    """

    def __init__(self) -> None:
        self.pool: object | None = None
        self.workers: list[object] = []
        self.count = 0

    def handle(self, signum: int, frame: object) -> None:
        self.count += 1
        if self.count == 1 and self.pool is not None:
            self.workers = _workers(self.pool)  # before the shutdown that follows forgets them
        if self.count > 1:
            _terminate(self.workers or _workers(self.pool))
            os.write(2, b"aoti-lint: interrupted\n")
            os._exit(130)

    def check(self) -> None:
        if self.count:
            raise KeyboardInterrupt


class _InterruptScope:
    def __enter__(self) -> _Interrupts:
        import signal
        import threading

        self.interrupts = _Interrupts()
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self.interrupts.handle)
        return self.interrupts

    def __exit__(self, exc_type: object, *exc: object) -> None:
        import signal

        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
        if exc_type is None:
            self.interrupts.check()  # Ctrl-C after the last check still ends the run as interrupted


# ---- in the worker processes ---------------------------------------------------------------------------------

_slots: object = None
_slot = -1
_busy = False


def _init_worker(slots: object, counter: object, parent: int) -> None:
    """Ctrl-C is the parent's to handle; SIGTERM (the parent stopping us, or dying) ends the worker cleanly;
    the worker must not outlive its parent (a `kill -9` of the run)."""
    import signal

    global _slots, _slot
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_terminate)
    _die_with_parent()
    if os.getppid() != parent:  # the parent died before the request above took effect
        os._exit(1)
    with counter.get_lock():  # type: ignore[attr-defined]
        _slot = counter.value  # type: ignore[attr-defined]
        counter.value += 1  # type: ignore[attr-defined]
    _slots = slots


class _Terminated(BaseException):
    pass


def _on_terminate(signum: int, frame: object) -> None:
    if not _busy:
        os._exit(1)
    # Unwind the file in flight: an atomic write removes its temporary file on the way out.
    raise _Terminated


def _die_with_parent() -> None:
    """Linux: the kernel sends SIGTERM when the parent exits, whatever killed it. Elsewhere a no-op."""
    import sys

    if not sys.platform.startswith("linux"):
        return
    import contextlib
    import ctypes
    import signal

    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)


def _screen_chunk(
    chunk: list[tuple[int, Candidate]], ruleset: RuleSet, cwd: Path, stamped: bool, later: _Later | None = None
) -> list[_Screened]:
    """Read each file of the chunk and run stage one on it, in a worker or here: ``run_files`` settles each by what
    this gives (``settle``). The small files' bytes go through stage one together (``FileContext.reads_many``).
    ``later``: in a worker, the later stages of a file that passes stage one (a notebook's aside) are run here too."""
    from aoti_lint.read.file_bytes import NotRegularFile, read_regular_file_stat
    from aoti_lint.run.disk import read_error

    screened: list[_Screened | None] = []
    # The files read, by the context they are read in (one, unless per-file-ignores set some apart).
    read: dict[int, tuple[FileContext, list[tuple[int, os.stat_result | None, bytes, bytes]]]] = {}
    for _, candidate in chunk:
        data: bytes | None = None
        info: os.stat_result | None = None
        if candidate.kind != "jupyter":  # a notebook's stage one reads its cells' code, not its JSON
            try:
                data, info = read_regular_file_stat(candidate.where)
            except (OSError, NotRegularFile) as exc:  # as read_stamped reports it
                screened.append((read_error(display_path(candidate.where, cwd), exc), None, None, "", None, None, ""))
                continue
        if data is None:
            source, info = read_stamped(candidate, cwd)
            if isinstance(source, FileError):
                screened.append((source, None, None, "", None, None, ""))
                continue
            data, prefilter_data = source.data, source.prefilter_data
        else:
            prefilter_data = screen_data(data) if candidate.kind == "python" else data
        context = ruleset.context(candidate.where, candidate.kind)
        if len(prefilter_data) > BATCH_FILE_BYTES:  # a search's own cost is nothing next to its scan: alone
            reads = context.reads(prefilter_data)
            screened.append(_screened(candidate, cwd, info, data, prefilter_data, reads, context, stamped, later))
            continue
        read.setdefault(id(context), (context, []))[1].append((len(screened), info, data, prefilter_data))
        screened.append(None)
    for context, files in read.values():
        passed = context.reads_many([prefilter_data for _, _, _, prefilter_data in files])
        for (at, info, data, prefilter_data), reads in zip(files, passed, strict=True):
            candidate = chunk[at][1]
            screened[at] = _screened(candidate, cwd, info, data, prefilter_data, reads, context, stamped, later)
    return screened  # type: ignore[return-value]  # every slot is filled above


def _screened(
    candidate: Candidate,
    cwd: Path,
    info: os.stat_result | None,
    data: bytes,
    prefilter_data: bytes,
    reads: bool,
    context: FileContext,
    stamped: bool,
    later: _Later | None,
) -> _Screened:
    if not reads:
        # The stat travels only when the run keeps stamps: on a large tree they weigh on the chunks' bytes.
        return (None, info if stamped else None, None, _rules_named(context) if stamped else "", None, None, "")
    first = _first_stage(candidate.kind, prefilter_data, context)
    if later is None or candidate.kind == "jupyter":
        return (None, info, data, "", first, None, "")
    source = make_source(candidate.path, display_path(candidate.where, cwd), candidate.kind, data)
    assert isinstance(source, SourceFile)  # only a notebook's bytes can fail to make one
    too_big = over_limits(source)
    if too_big is not None:
        return (None, None, None, "", None, FileOutcome(path=source.display_path, errors=[too_big]), "")
    if later.digests:
        from aoti_lint.run.cache import content_digest

        digest = content_digest(data)
    else:
        digest = ""
    try:
        outcome = _lint_in_worker(source, context, later.fix, None, first)
    except Exception as exc:  # a bug of ours costs this file, not the chunk
        outcome = _failed(source.display_path, exc)
    return (None, info, None, "", None, outcome, digest)


def _process_in_worker(
    index: int,
    source: SourceFile,
    context: FileContext,
    fix: FixOptions,
    wanted: Wanted | None,
    first: Wanted | None = None,
) -> FileOutcome:
    return _lint_in_worker(source, context, fix, wanted, first, index)


def _lint_in_worker(
    source: SourceFile,
    context: FileContext,
    fix: FixOptions,
    wanted: Wanted | None,
    first: Wanted | None,
    index: int = -1,
) -> FileOutcome:
    """``lint_file`` in a worker; ``index``: the file's index among those sent one at a time, for its slot to tell
    it was in hand if the worker dies (a file of a chunk has none: the chunk is sent again file by file)."""
    global _busy
    slots = _slots
    if slots is not None and 0 <= _slot < len(slots):  # type: ignore[arg-type]
        slots[_slot] = index  # type: ignore[index]
    _busy = True
    try:
        if wanted is None and first is not None:
            wanted = prefiltered(source, context, first)
        outcome = lint_file(source, context, fix, wanted)
    except _Terminated:
        os._exit(1)
    finally:
        _busy = False
        # Also when the file raised: the pool lives on, and a slot left set would name a file not in hand.
        if slots is not None and 0 <= _slot < len(slots):  # type: ignore[arg-type]
            slots[_slot] = -1  # type: ignore[index]
    for finding in outcome.findings:
        # Rule-private payloads (libcst nodes) are neither needed by the parent nor cheap to pickle.
        finding.data = None
    return outcome
