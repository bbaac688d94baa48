"""A file's bytes as every reader of the tool takes them: read to the end, a FIFO or device refused, not waited on.
Only ``os`` and ``stat``: the entry point (``aoti_lint.entry_point``) reads with it before it imports anything else.
"""

from __future__ import annotations

import os
from stat import S_ISREG

# Never wait on a FIFO; on Windows, read bytes as they are (a descriptor opens in text mode there by default).
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_READ_CHUNK = 1 << 20


class NotRegularFile(Exception):
    pass


def read_regular_file_stat(path: str | os.PathLike[str]) -> tuple[bytes, os.stat_result]:
    """The file's bytes and the ``stat`` of the open file they were read from."""
    # Plain descriptor calls: a file object (its buffer, its close) costs more than the read of a small file,
    # and a large tree reads tens of thousands of them.
    fd = os.open(path, _READ_FLAGS)
    try:
        info = os.fstat(fd)
        if not S_ISREG(info.st_mode):
            raise NotRegularFile
        # To the end, not to the size of the stat: a file may grow, and some report no size (/proc).
        chunks = []
        size = info.st_size + 1
        while chunk := os.read(fd, size):
            chunks.append(chunk)
            size = _READ_CHUNK
        return chunks[0] if len(chunks) == 1 else b"".join(chunks), info
    finally:
        os.close(fd)
