"""What the entry point learned of a pyproject.toml, kept for the next run: valid TOML without aoti-lint settings.

Pre-commit runs the hook on every commit of a repository whose pyproject.toml (the settings of other tools) rarely
changes. ``entry_point`` must know that file parses and holds no ``[tool.aoti-lint]`` before it answers, and parsing
it takes ``tomllib`` (with ``re``, ``datetime`` and ``string``): about as long as the interpreter's start. Once
parsed, the file's stat (size, mtime, ctime, inode, device) is kept with that verdict in the cache directory the
full run uses (``.aoti_lint_cache`` in the working directory, or $AOTI_LINT_CACHE_DIR); a later run that finds the
same stat takes the verdict without parsing. As the cache's stamps (``aoti_lint.run.file_stats``), a file whose mtime or
ctime is less than 2 s old is not kept (they may not tell a change made within the same tick), and nothing is kept
for a run with ``--no-cache``. Every access goes through a descriptor of the directory opened without following a
symbolic link at its name, and the file is read and written without following one at its own; it is replaced
whole (a temporary file renamed). Uses ``os`` and ``time`` alone, as ``entry_point``.
"""

from __future__ import annotations

import os
import stat
import time

from aoti_lint import __version__
from aoti_lint.run.dir_entries import FLAGS as _FLAGS
from aoti_lint.run.dir_entries import supported, write_entry
from aoti_lint.settings.defaults import CACHE_GITIGNORE, CACHEDIR_TAG, RACY_SECONDS

FILE_NAME = "pyproject.verdicts"
# A file from another version is not read: what counts as aoti-lint settings may change.
HEADER = f"aoti-lint {__version__}: pyproject.toml files that parse and hold no aoti-lint settings\n".encode()


def _key(info: os.stat_result) -> bytes:
    return b"%d %d %d %d %d" % (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


class Verdicts:
    """The verdicts kept in ``directory``: ``holds`` one for a file's stat, ``learn`` one, ``save`` what was
    learned."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._kept: dict[bytes, bytes] | None = None  # path -> stat key
        self._learned: dict[bytes, bytes] = {}

    def holds(self, path: str, info: os.stat_result) -> bool:
        """Whether the file at ``path``, with this stat, was found to parse and to hold no aoti-lint settings."""
        return self._read().get(os.fsencode(path)) == _key(info)

    def learn(self, path: str, info: os.stat_result) -> None:
        """The file at ``path``, with this stat, parses and holds no aoti-lint settings."""
        encoded = os.fsencode(path)
        settled = time.time_ns() - RACY_SECONDS * 1_000_000_000
        if b"\n" in encoded or not (info.st_mtime_ns < settled and info.st_ctime_ns < settled):
            return
        if self._read().get(encoded) != _key(info):
            self._learned[encoded] = _key(info)

    def save(self) -> None:
        """Write what was learned, with what was kept before; a directory or file that cannot be written is left."""
        if not self._learned or not supported():
            return
        kept = {**self._read(), **self._learned}
        data = HEADER + b"".join(b"%s %s\n" % (key, path) for path, key in kept.items())
        try:
            directory = self._directory(create=True)
        except OSError:
            return
        try:
            write_entry(directory, FILE_NAME, data)
        except OSError:
            pass
        finally:
            os.close(directory)

    def _read(self) -> dict[bytes, bytes]:
        if self._kept is None:
            self._kept = {}
            if supported():
                try:
                    directory = self._directory(create=False)
                except OSError:
                    return self._kept
                try:
                    self._kept = _parse(_read_file(directory))
                finally:
                    os.close(directory)
        return self._kept

    def _directory(self, create: bool) -> int:
        """A descriptor of the cache directory, never reached through a symbolic link at its own name."""
        try:
            return os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | _FLAGS)
        except FileNotFoundError:
            if not create:
                raise
        os.makedirs(self.directory, exist_ok=True)
        directory = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | _FLAGS)
        for name, content in ((".gitignore", CACHE_GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
            try:
                fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FLAGS, 0o644, dir_fd=directory)
            except OSError:  # there already, or not writable: the full run writes them as well
                continue
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
        return directory


def _read_file(directory: int) -> bytes:
    try:  # not blocking on a FIFO planted at the name
        fd = os.open(FILE_NAME, os.O_RDONLY | os.O_NONBLOCK | _FLAGS, dir_fd=directory)
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(1 << 20)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _parse(data: bytes) -> dict[bytes, bytes]:
    """The kept verdicts: path -> stat key; none from a file of another version or a malformed one."""
    if not data.startswith(HEADER):
        return {}
    kept: dict[bytes, bytes] = {}
    for line in data[len(HEADER) :].split(b"\n"):
        fields = line.split(b" ", 5)
        if len(fields) == 6 and all(field.isdigit() for field in fields[:5]):
            kept[fields[5]] = b" ".join(fields[:5])
    return kept
