"""What runs in a worker process: its set-up (signals, its slot, never outliving the parent) and its tasks, reading
and screening a chunk of files or linting one."""

from __future__ import annotations

import os
from pathlib import Path

from aoti_lint.diagnostics import FileError
from aoti_lint.read.files import Candidate
from aoti_lint.read.source import SourceFile, display_path, screen_data
from aoti_lint.run.disk import lint_file, make_source, read_stamped
from aoti_lint.run.engine import over_limits
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.prefilter import Wanted, prefiltered
from aoti_lint.run.results import FileOutcome
from aoti_lint.run.ruleset import RuleSet
from aoti_lint.run.work_items import BATCH_FILE_BYTES, LaterStages, Screened, context_rules_named, first_stage
from aoti_lint.settings.run_options import FixOptions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    Result = TypeVar("Result")


_slots: object = None


_slot = -1


_busy = False


def init_worker(slots: object, counter: object, parent: int) -> None:
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


def screen_chunk(
    chunk: list[tuple[int, Candidate]], ruleset: RuleSet, cwd: Path, stamped: bool, later: LaterStages | None = None
) -> list[Screened]:
    """Read each file of the chunk and run stage one on it, in a worker or here: ``run_files`` settles each by what
    this gives (``settle``). The small files' bytes go through stage one together (``FileContext.reads_many``).
    ``later``: in a worker, the later stages of a file that passes stage one (a notebook's aside) are run here too."""
    from aoti_lint.read.file_bytes import NotRegularFile, read_regular_file_stat
    from aoti_lint.run.disk import read_error

    screened: list[Screened | None] = []
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
    later: LaterStages | None,
) -> Screened:
    if not reads:
        # The stat travels only when the run keeps stamps: on a large tree they weigh on the chunks' bytes.
        return (None, info if stamped else None, None, context_rules_named(context) if stamped else "", None, None, "")
    first = first_stage(candidate.kind, prefilter_data, context)
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
        outcome = failed(source.display_path, exc)
    return (None, info, None, "", None, outcome, digest)


def process_in_worker(
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


def failed(path: str, exc: BaseException) -> FileOutcome:
    import traceback

    detail = "".join(traceback.format_exception(exc))
    error = FileError(path, f"internal error while linting: {type(exc).__name__}: {exc}", detail=detail)
    return FileOutcome(path=path, errors=[error])
