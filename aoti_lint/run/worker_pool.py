"""The worker processes of a run and the stream of files a pass sends them: started once per run and lent to each
pass, files retried alone when a worker dies, Ctrl-C handled in this process only."""

from __future__ import annotations

import os
from pathlib import Path

from aoti_lint.diagnostics import FileError
from aoti_lint.read.files import Candidate
from aoti_lint.run.disk import lint_file
from aoti_lint.run.results import FileOutcome
from aoti_lint.run.ruleset import RuleSet
from aoti_lint.run.work_items import (
    INLINE_SHARE,
    LATER_STAGE_MODULES,
    STAGE_SECONDS_PER_BYTE,
    LaterStages,
    Pending,
    Screened,
    jobs_of,
)
from aoti_lint.run.worker_process import failed, init_worker, process_in_worker, screen_chunk
from aoti_lint.settings.run_options import Execution, FixOptions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from concurrent.futures import Future
    from typing import TypeVar

    Result = TypeVar("Result")


class Workers:
    """The worker processes of a run: started when a pass over the files first has enough work for them, lent
    to each later pass (their start, a fork and a libcst import each, is paid once per run), stopped when the
    run ends (a context manager). While a pass has them, Ctrl-C is only recorded and raised at the next check
    (``Interrupts``); between passes it is the default handler's again, so that work done here (writing the
    fixes) stops at once."""

    def __init__(self) -> None:
        self.interrupts: Interrupts | None = None
        self._scope: InterruptScope | None = None
        self._pool: Pool | None = None

    def lend(self, jobs: int) -> Pool:
        """The pool an earlier pass started, or a new one of ``jobs`` workers if there is none or it broke, with
        no file queued; until ``give_back``, Ctrl-C is recorded."""
        assert self._scope is None, "the workers are lent to one pass at a time"
        if self._pool is not None and self._pool.broken:
            self._pool.close()
            self._pool = None
        scope = InterruptScope()
        interrupts = scope.__enter__()
        try:
            if self._pool is None:
                self._pool = Pool(jobs, interrupts)
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


class Stream:
    """Files sent to the workers as they are found, once their estimated work pays for starting them (or the
    workers already run); the workers parse while this process goes on reading the tree. Without enough work
    (or with one job) the files are processed here, after the others, in the order they were added. A context
    manager: the workers are given back when the pass ends (stopped if it ends with an exception)."""

    def __init__(self, fix: FixOptions, execution: Execution, workers: Workers) -> None:
        self.fix = fix
        self.jobs = jobs_of(execution)
        self.threshold = execution.pool_min_seconds
        self.workers = workers
        self.items: list[Pending] = []
        self.work = 0.0
        # Files too big for their later stages to run as they are read (``hold``), and those stages' cost.
        self._held: list[Pending] = []
        self._held_seconds = 0.0
        self._here_seconds = 0.0
        self._pool: Pool | None = None
        self._lent = False

    @property
    def running(self) -> bool:
        return self._pool is not None

    def check(self) -> None:
        self.workers.check()

    def add(self, item: Pending, work: float = 0.0) -> None:
        """Queue the file (``work``: its estimated cost); the workers start once the queue's work pays for them."""
        self.items.append(item)
        self.work += work
        if self._pool is not None:
            self._pool.submit(len(self.items) - 1, item, self.fix)
        elif self.jobs > 1 and (self.work >= self.threshold or self.workers.running):
            # Workers an earlier pass started cost nothing more to use.
            self.start()

    def hold(self, item: Pending) -> None:
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

    def release(self) -> list[Pending]:
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
        self, chunk: list[tuple[int, Candidate]], ruleset: RuleSet, cwd: Path, stamped: bool, later: LaterStages
    ) -> Future[list[Screened]] | None:
        """Send a chunk of files to be read and linted by a worker; None if the pool broke."""
        return self._pool.screen(chunk, ruleset, cwd, stamped, later) if self._pool is not None else None

    def screened(self, future: Future[list[Screened]] | None) -> list[Screened] | None:
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

    def finish(self) -> list[tuple[Pending, FileOutcome]]:
        """Every file's outcome, once (the workers are then done with this pass); a worker crash (a native parser
        segfault, the OOM killer) costs only its file."""
        pool, self._pool = self._pool, None
        interrupts = self.workers.interrupts
        if pool is None or interrupts is None:
            return [(item, process_here(item, self.fix)) for item in self.items]
        outcomes: dict[int, FileOutcome] = {}
        in_flight = pool.gather(self.items, outcomes)
        recover(self.items, list(range(len(self.items))), in_flight, self.fix, self.jobs, outcomes, interrupts)
        return [(item, outcomes[index]) for index, item in enumerate(self.items)]

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, traceback: object) -> None:
        if self._lent:
            self._lent = False
            self.workers.give_back(exc_type, exc, traceback)


def process_here(item: Pending, fix: FixOptions) -> FileOutcome:
    try:
        return lint_file(item.source, item.context, fix, item.later_stages())
    except Exception as exc:  # a bug of ours costs this file, not the run
        return failed(item.source.display_path, exc)


# After the first Ctrl-C, how long in-flight files may take to finish before their workers are stopped.
INTERRUPT_GRACE_SECONDS = 1.0


def recover(
    pending: list[Pending],
    todo: list[int],
    in_flight: set[int],
    fix: FixOptions,
    jobs: int,
    outcomes: dict[int, FileOutcome],
    interrupts: Interrupts,
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
            in_flight = run_pool(pending, unfinished, fix, jobs, outcomes, interrupts)
            todo = unfinished
            continue
        # Still nothing seen in flight: every unfinished one is a suspect.
        suspects = [i for i in unfinished if i in in_flight] or unfinished
        for index in suspects:
            run_pool(pending, [index], fix, 1, outcomes, interrupts)
            if index not in outcomes:
                outcomes[index] = crashed(pending[index])
        todo = [i for i in unfinished if i not in outcomes]
        if not todo:
            return
        in_flight = run_pool(pending, todo, fix, jobs, outcomes, interrupts)


def crashed(item: Pending) -> FileOutcome:
    path = item.source.display_path
    message = "not checked: the worker process crashed on this file (a native parser crash or out of memory)"
    return FileOutcome(path=path, errors=[FileError(path, message)])


def run_pool(
    pending: list[Pending],
    indices: list[int],
    fix: FixOptions,
    jobs: int,
    outcomes: dict[int, FileOutcome],
    interrupts: Interrupts,
) -> set[int]:
    """Process ``indices`` into ``outcomes``; when a worker dies, the files that were in flight."""
    pool = Pool(jobs, interrupts)
    try:
        for i in indices:
            pool.submit(i, pending[i], fix)
        return pool.gather(pending, outcomes)
    except KeyboardInterrupt:
        pool.stop()
        raise
    finally:
        pool.close()


class Pool:
    """Worker processes, given files one at a time; the slots tell which file each worker has in hand, so that
    when one dies the files in flight are known (``recover``)."""

    def __init__(self, jobs: int, interrupts: Interrupts) -> None:
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
            initializer=init_worker,
            initargs=(self.slots, counter, os.getpid()),
        )
        self.interrupts = interrupts
        interrupts.pool = self.executor
        self.futures: dict[int, Future[FileOutcome]] = {}
        self.broken = False

    def lent(self, interrupts: Interrupts) -> None:
        """A new pass has the pool: no file queued, none in hand (a slot left set by a pass that raised would
        name a file of that pass)."""
        self.interrupts = interrupts
        interrupts.pool = self.executor
        self.futures = {}
        for slot in range(len(self.slots)):
            self.slots[slot] = -1

    def submit(self, index: int, item: Pending, fix: FixOptions) -> None:
        """Queue the file; the workers start with the first one. A file not queued because the pool broke is
        left without a future: ``recover`` takes it with the unfinished ones."""
        from concurrent.futures.process import BrokenProcessPool

        self.interrupts.check()
        if self.broken:
            return
        try:
            self.futures[index] = self.executor.submit(
                process_in_worker, index, item.source, item.context, fix, item.wanted, item.first
            )
        except BrokenProcessPool:
            self.broken = True
        self.interrupts.check()

    def screen(
        self, chunk: list[tuple[int, Candidate]], ruleset: RuleSet, cwd: Path, stamped: bool, later: LaterStages
    ) -> Future[list[Screened]] | None:
        """Queue a chunk to be read and linted (``screen_chunk``); None once the pool broke."""
        from concurrent.futures.process import BrokenProcessPool

        self.interrupts.check()
        if self.broken:
            return None
        try:
            return self.executor.submit(screen_chunk, chunk, ruleset, cwd, stamped, later)
        except BrokenProcessPool:
            self.broken = True
            return None

    def gather(self, pending: list[Pending], outcomes: dict[int, FileOutcome]) -> set[int]:
        """Wait for every queued file; when a worker died, the files that were in flight."""
        from concurrent.futures.process import BrokenProcessPool

        try:
            for i, future in self.futures.items():
                try:
                    outcomes[i] = _result(future, self.interrupts)
                except BrokenProcessPool:
                    raise
                except Exception as exc:  # raised in the worker (or its result could not be sent back)
                    outcomes[i] = failed(pending[i].source.display_path, exc)
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


# How often the parent, waiting for a result, looks whether Ctrl-C was pressed.
INTERRUPT_POLL_SECONDS = 0.1


def _result(future: Future[Result], interrupts: Interrupts) -> Result:
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


class Interrupts:
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


class InterruptScope:
    def __enter__(self) -> Interrupts:
        import signal
        import threading

        self.interrupts = Interrupts()
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
