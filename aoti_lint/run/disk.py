"""The per-file step where it touches the disk: read a file into a ``SourceFile``, lint and fix it
(``fixing.process_source``, which only sees bytes), and write the fixes back atomically, only over the bytes that
were read.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from aoti_lint.diagnostics import FileError
from aoti_lint.read.file_bytes import NotRegularFile, read_regular_file_stat
from aoti_lint.read.files import Candidate
from aoti_lint.read.source import SourceFile, display_path
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.fixing import process_source
from aoti_lint.run.prefilter import Wanted
from aoti_lint.run.results import FileOutcome
from aoti_lint.settings.run_options import FixOptions


def make_source(path: Path, shown: str, kind: str, data: bytes) -> SourceFile | FileError:
    if kind == "jupyter":
        from aoti_lint.read.notebook import NotebookError, NotebookSource

        try:
            return NotebookSource.from_bytes(path, shown, data)
        except NotebookError as exc:
            return FileError(shown, str(exc))
    return SourceFile(path=path, display_path=shown, kind=kind, data=data)


def read_source(candidate: Candidate, cwd: Path) -> SourceFile | FileError:
    return read_stamped(candidate, cwd)[0]


def read_stamped(candidate: Candidate, cwd: Path) -> tuple[SourceFile | FileError, os.stat_result | None]:
    """The file as ``read_source`` reads it, and the ``stat`` of what was read (``aoti_lint.run.file_stats``)."""
    shown = display_path(candidate.path, cwd)
    try:
        data, info = read_regular_file_stat(candidate.path)
    except (OSError, NotRegularFile) as exc:
        return read_error(shown, exc), None
    return make_source(candidate.path, shown, candidate.kind, data), info


def read_error(shown: str, exc: OSError | NotRegularFile) -> FileError:
    """What a file that could not be read (``read_regular_file_stat``'s error) is reported as."""
    if isinstance(exc, IsADirectoryError):
        return FileError(shown, "is a directory")
    if isinstance(exc, NotRegularFile):
        return FileError(shown, "is not a regular file (a FIFO, socket or device); not read")
    if isinstance(exc, FileNotFoundError):
        return FileError(shown, "file disappeared before it could be read")
    return FileError(shown, f"cannot read file: {exc.strerror or exc}")


def read_regular_file(path: Path) -> bytes:
    """The file's bytes; a FIFO or device (named `x.py`, or linked there) is refused, not waited on forever."""
    return read_regular_file_stat(path)[0]


def lint_file(
    source: SourceFile, context: FileContext, fix: FixOptions, prefiltered: Wanted | None = None
) -> FileOutcome:
    """Lint and fix one file read from disk, writing the fixes unless ``fix.write`` is off. A fix that cannot be
    written leaves the file as it was, and the outcome as if nothing had been fixed, with the reason.
    ``prefiltered``: what ``prefilter.prefiltered`` found for the file."""
    outcome = process_source(source, context, fix, prefiltered)
    if not fix.write or outcome.fixed_data is None:
        return outcome
    error = write_bytes(source.path, source.display_path, source.data, outcome.fixed_data)
    if error is None:
        return outcome
    # The findings as the fixing run saw them before its fixes: edits built, nothing applied.
    unfixed = process_source(source, context, replace(fix, apply=False, edits=True), prefiltered)
    unfixed.errors.insert(0, error)
    return unfixed


def write_bytes(path: Path, shown: str, original: bytes, data: bytes, dry_run: bool = False) -> FileError | None:
    """Write ``data`` over ``path`` atomically if it still holds ``original``; ``dry_run``: only check that."""
    import os

    from aoti_lint.fixes.safe_write import ChangedOnDisk, atomic_write_bytes, identity

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
