"""The per-file cache, like ruff's: the outcome of linting some bytes with some rules, kept between runs.

An entry is named by a hash of everything its outcome depends on: a digest of the file's bytes, its kind, the
rules that apply to it, the settings that change findings, and the linter itself (version, Python, libcst, and
the size and time of each of its own source files, so an edited checkout never reads stale entries). Entries are
thus content-addressed: two runs that write the same name write the same bytes, and an atomic rename is all the
concurrency control needed.

Beside the entries, one stamps file per run fingerprint (``aoti_lint.run.file_stats``) records each file's ``stat`` when
it was read and what was found (nothing, or the digest naming its entries): a warm run stats the files instead of
reading them. A file stage one settles has no entry, only a stamp. A run over files that all kept their stamps
may be answered whole by the memo of an earlier run (``aoti_lint.run.unchanged_run``), also kept beside the entries.

Entries are JSON, never pickle: a repository could ship a planted cache directory, and loading it must not run
code. For the same reason, nothing is read or written through a symlink planted at the cache directory or at an
entry (every access goes through a directory descriptor opened with O_NOFOLLOW). Any unreadable or malformed
entry is a miss: an entry is checked field by field (types, positive positions, known rule codes) and a deeply
nested one is refused. The directory is pruned by age and count (``prune``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from pathlib import Path

from aoti_lint import __version__
from aoti_lint.run.cache_encoding import outcome_from_json, outcome_to_json
from aoti_lint.run.dir_entries import FLAGS as _FLAGS
from aoti_lint.run.dir_entries import supported, write_entry
from aoti_lint.run.file_stats import Stamps
from aoti_lint.run.file_stats import decode as decode_stamps
from aoti_lint.run.file_stats import encode as encode_stamps
from aoti_lint.settings.defaults import CACHE_DIR_ENV, CACHE_DIR_NAME, CACHE_GITIGNORE, CACHEDIR_TAG

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.read.source import SourceFile
    from aoti_lint.rules import Rule
    from aoti_lint.run.results import FileOutcome
    from aoti_lint.settings.config import Settings
    from aoti_lint.settings.run_options import Execution

# Bump when the entry layout changes.
ENTRY_FORMAT = 3
# The stamps of a run fingerprint (``aoti_lint.run.file_stats``): one file beside the entries.
STAMPS_SUFFIX = ".stamps"
# The memo of a whole run (``aoti_lint.run.unchanged_run``): one file per run fingerprint, root, working directory and
# fix options (which say whether fixes' edits are built).
MEMO_SUFFIX = ".run"
# Settings that only choose which files are read or how findings are printed; every other field (including
# ones added later) is part of the key, so a new setting can never serve stale findings.
SETTINGS_NOT_IN_KEY = frozenset(
    {"root", "config_path", "exclude", "extend_exclude", "respect_gitignore", "force_exclude", "output_format"}
)
# Pruning: entries unused this long go (those of other versions and settings are never used again); past
# MAX_ENTRIES the least recently used go too. A run that stored something prunes at most once a day.
MAX_AGE_SECONDS = 30 * 24 * 3600
MAX_ENTRIES = 50_000
PRUNE_INTERVAL_SECONDS = 24 * 3600
_PRUNE_STAMP = "last-prune"


def default_cache_dir(settings: Settings) -> Path:
    configured = os.environ.get(CACHE_DIR_ENV)
    return Path(configured) if configured else settings.root / CACHE_DIR_NAME


class Cache:
    """The cache directory as one run uses it: opened per run (``open_cache``), which reads its stamps
    once, resolves each directory once, and writes the stamps back when it is closed."""

    def __init__(self, directory: Path, settings: Settings) -> None:
        self.directory = directory
        self._settings = settings
        self._prefix: bytes | None = None
        self._dir_fd: int | None = None
        # Set when the directory is a planted symlink or cannot be created: the run goes on without a cache.
        self._unusable = False
        self._stored = False
        self._stamps: Stamps | None = None
        self._directories: dict[str, str] = {}

    def close(self) -> None:
        self._write_stamps()
        if self._dir_fd is not None and self._stored:
            with contextlib.suppress(OSError):
                prune(self._dir_fd)
        if self._dir_fd is not None:
            os.close(self._dir_fd)
            self._dir_fd = None

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def digest(data: bytes) -> str:
        return content_digest(data)

    def key(self, source: SourceFile, rules: tuple[type[Rule], ...], plan: str = "", digest: str | None = None) -> str:
        """``plan``: the run's migration plan for the file (``FileFlow.fingerprint``); its findings depend on it.
        ``digest``: ``content_digest(source.data)``, when the caller has it already."""
        return self.key_of(
            digest or content_digest(source.data), source.kind, source.display_path, source.path, rules, plan
        )

    def key_of(
        self, digest: str, kind: str, display_path: str, path: Path, rules: tuple[type[Rule], ...], plan: str
    ) -> str:
        """The key of bytes whose ``content_digest`` is ``digest``: a file recalled by its stamp is not read."""
        from aoti_lint.run.blake2 import blake2b

        digest_of_key = blake2b(self._run_prefix(), digest_size=20)
        digest_of_key.update(f"\0{kind}\0{','.join(sorted(rule.code for rule in rules))}\0".encode())
        # Project summaries hold the file's paths (display path, directory): a moved file is another entry. A
        # name that is not UTF-8 reaches us with surrogates (os.fsdecode), and goes back to its bytes.
        directory = self.resolved_directory(str(path))
        digest_of_key.update(f"{display_path}\0{directory}\0".encode("utf-8", "surrogateescape"))
        digest_of_key.update(f"{plan}\0{digest}".encode())
        return digest_of_key.hexdigest()

    def resolved_directory(self, where: str, link: bool | None = None) -> str:
        """``Path(where).resolve().parent``, the directory a file's summaries hold: its target's for a symlink,
        else its directory's, resolved once per directory of the run (the files of one directory share it).
        ``link``: whether the file is a symlink, when the caller knows."""
        if os.path.islink(where) if link is None else link:
            return os.path.dirname(os.path.realpath(where))
        # Keyed by the text up to the last separator, which alone makes the directory's name: a warm run over a large
        # tree asks for each, and `os.path.dirname` would show in its time. (Windows: two separators.)
        head = where[: where.rfind(os.sep) + 1] if os.altsep is None else os.path.dirname(where)
        resolved = self._directories.get(head)
        if resolved is None:
            resolved = self._directories[head] = os.path.realpath(os.path.dirname(where))
        return resolved

    def _run_prefix(self) -> bytes:
        if self._prefix is None:
            self._prefix = _run_fingerprint(self._settings)
        return self._prefix

    def stamps(self) -> Stamps | None:
        """The stamps recorded by earlier runs with these settings (``aoti_lint.run.file_stats``); None without a cache
        directory to keep them in."""
        if self._stamps is None and not self._unusable:
            dir_fd = self._directory(create=False)
            self._stamps = Stamps(self._recorded_stamps(dir_fd) if dir_fd is not None else {})
        return self._stamps

    def _recorded_stamps(self, dir_fd: int) -> dict[str, Any]:
        """The stamps on disk; none when the file is absent, unreadable or not a stamps file."""
        data = _read_entry(dir_fd, self._stamps_name())
        if data is not None:
            with contextlib.suppress(ValueError):
                return decode_stamps(data)
        return {}

    def _stamps_name(self) -> str:
        from aoti_lint.run.blake2 import blake2b

        # Per root too: per-file-ignores, and so a file's rules, are read relative to it.
        named = blake2b(self._run_prefix() + f"\0{self._settings.root}".encode(), digest_size=16)
        return f"{named.hexdigest()}{STAMPS_SUFFIX}"

    @property
    def usable(self) -> bool:
        """False when no entry can be read or written here (no safe file access on this platform, a planted
        symlink or file at the directory's name, a directory that cannot be made)."""
        return supported() and not self._unusable

    def named_for_run(self, suffix: str, *parts: str) -> str:
        """The name of a file kept beside the entries for this run fingerprint, the root and ``parts``."""
        from aoti_lint.run.blake2 import blake2b

        named = blake2b(self._run_prefix(), digest_size=16)
        for part in (str(self._settings.root), *parts):
            named.update(b"\0" + part.encode("utf-8", "surrogateescape"))
        return f"{named.hexdigest()}{suffix}"

    def read_beside(self, name: str, header: bytes) -> bytes | None:
        """The bytes after ``header`` of a file kept beside the entries (``aoti_lint.run.unchanged_run``), never
        through a symlink; None when absent, unreadable or not starting with ``header``."""
        dir_fd = self._directory(create=False)
        return None if dir_fd is None else _read_entry(dir_fd, name, header)

    def write_beside(self, name: str, data: bytes) -> None:
        """Write such a file atomically; a cache that cannot be written is silently skipped."""
        dir_fd = self._directory(create=True)
        if dir_fd is None:
            return
        with contextlib.suppress(OSError):
            _write_atomic(dir_fd, name, data)
            self._stored = True

    def _write_stamps(self) -> None:
        stamps = self._stamps
        if stamps is None or not stamps.changed:
            return
        dir_fd = self._directory(create=True)
        if dir_fd is None:
            return
        with contextlib.suppress(OSError):
            merged = stamps.merged(self._recorded_stamps(dir_fd))
            _write_atomic(dir_fd, self._stamps_name(), encode_stamps(merged))
            self._stored = True

    def load(self, key: str, display_path: str) -> FileOutcome | None:
        dir_fd = self._directory(create=False)
        if dir_fd is None:
            return None
        data = _read_entry(dir_fd, f"{key}.json")
        if data is None:
            return None
        import json

        try:
            outcome = outcome_from_json(json.loads(data), display_path)
        # RecursionError: a deeply nested entry (planted, or corrupt) is a miss like any other bad entry.
        except (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError):
            return None
        if outcome.depends_on:
            from aoti_lint.run.file_stats import imports_stamp

            if imports_stamp(outcome.depends_on) != outcome.imports_stamp:
                return None  # a module of the project it imports changed since
        return outcome

    def store(self, key: str, outcome: FileOutcome) -> None:
        """Write the entry atomically; a cache that cannot be written is silently skipped."""
        dir_fd = self._directory(create=True)
        if dir_fd is None:
            return
        import json

        data = json.dumps(outcome_to_json(outcome), separators=(",", ":")).encode()
        with contextlib.suppress(OSError):
            _write_atomic(dir_fd, f"{key}.json", data)
            self._stored = True

    def _directory(self, create: bool) -> int | None:
        """A descriptor of the cache directory, never reached through a symlink at its own name."""
        if self._dir_fd is not None or self._unusable:
            return self._dir_fd
        if not supported():
            self._unusable = True
            return None
        try:
            self._dir_fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | _FLAGS)
        except FileNotFoundError:
            if not create:
                return None
            try:
                self.directory.parent.mkdir(parents=True, exist_ok=True)
                with contextlib.suppress(FileExistsError):
                    os.mkdir(self.directory)
                self._dir_fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | _FLAGS)
            except OSError:
                self._unusable = True
                return None
        except OSError:  # a symlink (ELOOP) or a file (ENOTDIR) planted at the name: no cache
            self._unusable = True
            return None
        for name, content in ((".gitignore", CACHE_GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
            try:
                os.stat(name, dir_fd=self._dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                with contextlib.suppress(OSError):
                    _write_atomic(self._dir_fd, name, content)
            except OSError:
                pass
        return self._dir_fd


def _read_entry(dir_fd: int, name: str, header: bytes = b"") -> bytes | None:
    """The bytes of the regular file ``name`` in the cache directory after ``header``, never through a symlink; a
    hit is a use (pruning goes by mtime). None if absent, unreadable or not starting with ``header`` (the rest is
    then not read)."""
    try:
        fd = os.open(name, os.O_RDONLY | _FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            if header and handle.read(len(header)) != header:
                return None
            data = handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    with contextlib.suppress(OSError, NotImplementedError):
        os.utime(name, dir_fd=dir_fd, follow_symlinks=False)
    return data


def content_digest(data: bytes) -> str:
    """What names a file's bytes in its entries' keys and in its stamp."""
    from aoti_lint.run.blake2 import blake2b

    return blake2b(data, digest_size=20).hexdigest()


def prune(dir_fd: int, now: float | None = None) -> int:
    """Remove entries unused for MAX_AGE_SECONDS, then the least recently used past MAX_ENTRIES, and leftover
    temporary files; at most once per PRUNE_INTERVAL_SECONDS. Returns how many files went."""
    import time

    now = time.time() if now is None else now
    try:
        if now - os.stat(_PRUNE_STAMP, dir_fd=dir_fd, follow_symlinks=False).st_mtime < PRUNE_INTERVAL_SECONDS:
            return 0
    except FileNotFoundError:
        pass
    _write_atomic(dir_fd, _PRUNE_STAMP, b"")
    entries: list[tuple[float, str]] = []
    doomed: list[str] = []
    with os.scandir(dir_fd) as scan:
        for entry in scan:
            if not entry.is_file(follow_symlinks=False):
                continue
            age = now - entry.stat(follow_symlinks=False).st_mtime
            if entry.name.endswith((".json", STAMPS_SUFFIX, MEMO_SUFFIX)):
                if age > MAX_AGE_SECONDS:
                    doomed.append(entry.name)
                else:
                    entries.append((age, entry.name))
            elif entry.name.endswith(".tmp") and age > PRUNE_INTERVAL_SECONDS:
                doomed.append(entry.name)
    if len(entries) > MAX_ENTRIES:
        entries.sort()
        doomed += [name for _, name in entries[MAX_ENTRIES:]]
    for name in doomed:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)
    return len(doomed)


def _write_atomic(dir_fd: int, name: str, data: bytes) -> None:
    from aoti_lint.fixes.safe_write import signals_deferred

    with signals_deferred():
        write_entry(dir_fd, name, data)


def open_cache(execution: Execution, settings: Settings) -> Cache | None:
    """The run's cache, or None when it has no cache directory."""
    return None if execution.cache_dir is None else Cache(execution.cache_dir, settings)


def _run_fingerprint(settings: Settings) -> bytes:
    import dataclasses
    import json

    relevant = {
        field.name: getattr(settings, field.name)
        for field in dataclasses.fields(settings)
        if field.name not in SETTINGS_NOT_IN_KEY
    }
    parts = [
        f"aoti-lint cache {ENTRY_FORMAT}",
        __version__,
        sys.version,
        _libcst_stamp(),
        json.dumps(_canonical(relevant), sort_keys=True),
        *_own_sources(),
    ]
    return "\0".join(parts).encode()


def _libcst_stamp() -> str:
    """Which libcst is installed, without ``importlib.metadata`` (slow to import at every start): where it lives and the
    size and time of its version file, which an upgrade or reinstall rewrites."""
    import importlib.util

    spec = importlib.util.find_spec("libcst")  # finds the package without importing it
    if spec is None or spec.origin is None:
        return "libcst ?"
    folder = os.path.dirname(spec.origin)
    stamps = [folder]
    for name in ("__init__.py", "_version.py"):
        try:
            info = os.stat(os.path.join(folder, name))
            stamps.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
        except OSError:
            stamps.append(f"{name}:-")
    return " ".join(stamps)


def _canonical(value: Any) -> Any:
    """The value as JSON with a stable order: a set's repr changes with each process's hash seed."""
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(item) for item in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [_canonical(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _canonical(item) for key, item in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def _own_sources() -> list[str]:
    """Size and modification time of each of the linter's own modules, the codemods too (a folder of their own
    in a checkout): an edit invalidates every entry."""
    import importlib.util

    import aoti_lint

    codemods = importlib.util.find_spec("aoti_lint.codemods")  # found, not imported (it imports libcst)
    folders = [os.path.dirname(aoti_lint.__file__), *((codemods and codemods.submodule_search_locations) or [])]
    stamps = []
    for package in dict.fromkeys(folders):
        for folder, subfolders, names in os.walk(package):
            subfolders.sort()
            for name in sorted(names):
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    with contextlib.suppress(OSError):
                        info = os.stat(path)
                        stamps.append(f"{os.path.relpath(path, package)}:{info.st_size}:{info.st_mtime_ns}")
    return stamps
