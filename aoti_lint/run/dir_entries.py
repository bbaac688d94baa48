"""Files of a directory held by a descriptor (the cache's): opened and replaced there, never through a symbolic
link planted at the directory's name or at a file's. Uses ``os`` alone: the entry point (``entry_point``) writes
one too (``pyproject_verdicts``)."""

from __future__ import annotations

import os

# Refuses a symbolic link at the name opened; closed in a child process.
FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def supported() -> bool:
    """Whether this platform can refuse symlinks on every access (it can on Linux and macOS)."""
    return hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd


def write_entry(dir_fd: int, name: str, data: bytes) -> None:
    """Replace the file ``name`` with ``data`` whole: a temporary file beside it, renamed over it."""
    temporary = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | FLAGS, 0o644, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        # rename() replaces a symlink planted at the entry's name; it never writes through it.
        os.replace(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        import contextlib  # only on the way out of a failed write

        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=dir_fd)
        raise
