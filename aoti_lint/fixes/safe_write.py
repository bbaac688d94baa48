"""Writing users' files safely: a temporary file beside the target, then an atomic rename."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
from collections.abc import Iterator
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class ChangedOnDisk(Exception):
    """The file is no longer the one that was read (size, modification time or inode moved)."""


def identity(info: os.stat_result) -> tuple[int, int, int, int]:
    """What tells a file's content apart without reading it: device, inode, size, modification time."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM take effect once the block is done.

    Their handlers raise (Ctrl-C; a worker being stopped): a raise between creating a temporary file and the
    ``try`` that removes it would leave the file behind, one in the middle of an in-place write would leave
    the user's file half-written. The handlers are swapped, not the signals masked: the kernel hands a
    process's signal to any thread that does not block it, and Python then runs the handler in the main
    thread whichever thread received it. Off the main thread there is nothing to do, for the same reason.
    """
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def defer(signum: int, frame: object) -> None:
        caught.append(signum)

    previous: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not None:  # None: installed outside Python, nothing we could restore
            previous[signum] = signal.signal(signum, defer)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        for number in dict.fromkeys(caught):
            signal.raise_signal(number)  # now handled as it would have been: it raises, exits or is ignored


def atomic_write_bytes(path: Path, data: bytes, expected: tuple[int, int, int, int] | None = None) -> None:
    """Replace ``path`` with ``data`` all at once, keeping its permission bits, owner and group.

    A symlink planted at ``path`` is replaced, never followed. On any failure the original stays as it was.
    With ``expected`` (``identity`` of the file as it was read), the file is checked once more right before
    the rename, and ``ChangedOnDisk`` is raised if another writer got there first; what remains is the window
    between that ``stat`` and the ``rename`` (no portable way closes it without locks the other writer honours).
    A file with other hard links is written in place instead (a rename would split it from them): that write
    is not atomic. Either way, Ctrl-C or SIGTERM during the write takes effect once it is done.
    """
    with signals_deferred():
        _write_whole(path, data, expected)


def _write_whole(path: Path, data: bytes, expected: tuple[int, int, int, int] | None) -> None:
    directory = path.parent if str(path.parent) else Path(".")
    try:
        info = os.lstat(path) if not path.is_symlink() else None
    except FileNotFoundError:
        info = None
    if info is not None and info.st_nlink > 1 and stat.S_ISREG(info.st_mode):
        _write_in_place(path, data, expected)
        return
    import tempfile  # not at the top: it imports shutil and random, for the few runs that write a file

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".aoti-lint.tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if info is not None:
            os.chmod(tmp, stat.S_IMODE(info.st_mode))
            _keep_owner(tmp, info)
        else:
            os.chmod(tmp, 0o666 & ~_umask())
        if expected is not None and identity(os.stat(path)) != expected:
            raise ChangedOnDisk
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _keep_owner(tmp: str, info: os.stat_result) -> None:
    """The new file belongs to whoever owned the old one (root fixing another user's file), as far as we may."""
    if (info.st_uid, info.st_gid) == (os.geteuid(), os.getegid()) or not hasattr(os, "chown"):
        return
    try:
        os.chown(tmp, info.st_uid, info.st_gid)
    except PermissionError:  # not root: the group, if we are in it, is still ours to keep
        with contextlib.suppress(OSError):
            os.chown(tmp, -1, info.st_gid)


def _write_in_place(path: Path, data: bytes, expected: tuple[int, int, int, int] | None) -> None:
    fd = os.open(path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        if expected is not None and identity(os.fstat(fd)) != expected:
            raise ChangedOnDisk
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)


def write_report(path: Path, data: bytes) -> None:
    """``-o``: write through a symlink, and into a device or FIFO (``/dev/stdout``, ``/dev/full``) as into any
    open file; only a regular file is replaced atomically. A dangling symlink is replaced, its target never
    created."""
    try:
        info = os.stat(path)  # follows links
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        with open(path, "wb") as handle:  # O_TRUNC means nothing to a device or a FIFO
            handle.write(data)
        return
    if info is not None and path.is_symlink():
        path = Path(os.path.realpath(path))
    atomic_write_bytes(path, data)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
