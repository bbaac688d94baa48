"""A file's bytes as every reader of the tool takes them: read to the end, a FIFO or device refused, not waited on.
Only ``os`` and ``stat``: the entry point (``aoti_lint.fast_path``) reads with it before it imports anything else.
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


# ``ast.PyCF_ONLY_AST``: ``compile`` builds the tree and stops, and ``ast`` need not be imported to ask it.
_ONLY_AST = 0x400


def python_parses(data: bytes) -> bool:
    """Whether CPython's parser reads these bytes as a module (their PEP 263 cookie or BOM honoured): a file that no
    rule wants is still checked for AOTI000 with it, without ``ast`` or libcst. It compiles nothing and runs
    nothing; a file it refuses goes to the engine, which says why (``parse.syntax_error``)."""
    import warnings

    try:
        with warnings.catch_warnings():
            # The parser warns of what it reads (an invalid escape): the code is not being run.
            warnings.simplefilter("ignore")
            compile(data, "<aoti-lint>", "exec", _ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError):
        return False
    return True
