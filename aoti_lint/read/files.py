"""Which files a run reads: directory walks, default and user excludes, .gitignore, file kinds."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from aoti_lint.read.ignores import IGNORE_SOURCES, Ignores, PlainNames, excluded_by, gitignore_bases_of
from aoti_lint.read.source import file_kind, kind_of_name
from aoti_lint.settings.config import Settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass


class Candidate:
    """A file the run reads: where it is, its kind, and whether it was named on the command line.

    ``where`` is the path as text; ``path`` builds the ``Path`` on first use. A walk makes one candidate per
    file and a warm run needs only the text (to stat the file and show it): a ``Path`` per file cost more
    than the rest of the walk's work on an entry.
    """

    __slots__ = ("_path", "explicit", "kind", "link", "where")

    def __init__(self, path: Path | str, kind: str, explicit: bool, link: bool | None = None) -> None:
        self.where = os.fspath(path)
        self.kind = kind
        self.explicit = explicit
        # Whether the path is a symlink, when the walk knows it for free (the directory entry's type); None
        # when not known.
        self.link = link
        self._path = path if isinstance(path, Path) else None

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = Path(self.where)
        return self._path

    def _identity(self) -> tuple[str, str, bool]:
        return (self.where, self.kind, self.explicit)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Candidate) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __repr__(self) -> str:
        return f"Candidate({self.where!r}, {self.kind!r}, explicit={self.explicit})"

    def __reduce__(self) -> tuple[type[Candidate], tuple[str, str, bool]]:
        return (Candidate, self._identity())


@dataclass(frozen=True)
class MissingPath:
    path: Path
    message: str


def ignores_of(settings: Settings) -> Ignores:
    """The run's exclude patterns and ignore files (``read.ignores``), as its settings say."""
    return Ignores(
        settings.root,
        [*settings.exclude, *settings.extend_exclude],
        settings.respect_gitignore,
        settings.config_path or Path("--extend-exclude"),
    )


def force_excluded(path: Path, settings: Settings, ignores: Ignores | None = None) -> bool:
    """Whether ``--force-exclude`` drops ``path`` (absolute) although it was named explicitly."""
    return settings.force_exclude and excluded_by(path, ignores or ignores_of(settings)) is not None


def discover(
    paths: list[Path], settings: Settings, kind_of: Callable[[str, str], str | None] = kind_of_name
) -> Iterator[Candidate | MissingPath]:
    """Yield the files to lint under ``paths``, in a stable order; ``kind_of(name, path)`` tells the walk which
    files to yield, and of what kind (the files aoti-lint reads by default)."""
    ignores = ignores_of(settings)
    seen: set[str] = set()  # paths as strings: hashing a Path costs more than the rest of an entry
    for given in paths:
        path = given if given.is_absolute() else Path.cwd() / given
        path = Path(os.path.normpath(path))
        if not os.path.lexists(path):
            yield MissingPath(given, "No such file or directory")
            continue
        if force_excluded(path, settings, ignores):
            continue
        if path.is_dir():
            # As ruff: a directory named on the command line is linted even where the excludes or a
            # .gitignore would skip it (`.venv/lib/python3.11/site-packages/torch`); they apply below it. Its
            # contents are then matched from the directory itself, not through the excluded name above it.
            above = gitignore_bases_of(path)
            base = path if ignores.excluded(path, True) else None
            bases = (path,) if ignores.gitignored(path, True, above) else (*above, path)
            yield from _walk(path, ignores, bases, seen, base, kind_of)
            continue
        if str(path) not in seen:
            seen.add(str(path))
            # A file named on the command line is read whatever its suffix, as Python.
            yield Candidate(path, file_kind(path) or "python", explicit=True)
    yield from (MissingPath(file, problem) for file, problem in ignores.problems)


def _walk(
    directory: Path,
    ignores: Ignores,
    bases: tuple[Path, ...],
    seen: set[str],
    base: Path | None = None,
    kind_of: Callable[[str, str], str | None] = kind_of_name,
) -> Iterator[Candidate | MissingPath]:
    try:
        # Listing needs `r`, reaching the entries `x`: a directory with only one of them is as unreadable
        # (its files would be skipped silently, or fail one by one) and is reported once, as ruff does.
        os.stat(os.path.join(directory, os.curdir))
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError as exc:
        yield MissingPath(directory, f"cannot read directory: {exc.strerror or exc}")
        return
    if ignores.respect_gitignore:
        ignores.listed(directory, {entry.name for entry in entries})
    skipped = ignores.in_directory(directory, bases, base)
    for entry in entries:
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if skipped is not None and skipped(entry.name, is_dir):
            continue
        if is_dir and type(skipped) is PlainNames:
            yield from _walk_plain(entry.path, ignores, bases, seen, base, skipped, kind_of)
            continue
        if is_dir or skipped is None:
            path = directory / entry.name
            if skipped is None and (ignores.excluded(path, is_dir, base) or ignores.gitignored(path, is_dir, bases)):
                continue
            if is_dir:
                yield from _walk(path, ignores, (*bases, path), seen, base, kind_of)
                continue
        kind = kind_of(entry.name, entry.path)
        if kind is not None and entry.path not in seen:
            seen.add(entry.path)
            yield Candidate(entry.path, kind, explicit=False, link=entry.is_symlink())


def _walk_plain(
    directory: str,
    ignores: Ignores,
    bases: tuple[Path, ...],
    seen: set[str],
    base: Path | None,
    plain: PlainNames,
    kind_of: Callable[[str, str], str | None] = kind_of_name,
) -> Iterator[Candidate | MissingPath]:
    """``_walk`` of a directory under one whose entries only plain names exclude, while no ignore file is met: the
    same files, read with the path as text (a ``Path`` and the matching work for each directory were half the
    walk's time over torch's sources). A directory holding an ignore file goes back to ``_walk``, with the
    directories between it and ``bases`` left out of them: no ignore file of theirs applies."""
    try:
        os.stat(os.path.join(directory, os.curdir))
        entries = sorted(os.scandir(directory), key=_entry_name)
    except OSError as exc:
        yield MissingPath(Path(directory), f"cannot read directory: {exc.strerror or exc}")
        return
    if ignores.respect_gitignore and any(entry.name in IGNORE_SOURCES for entry in entries):
        path = Path(directory)
        yield from _walk(path, ignores, (*bases, path), seen, base, kind_of)
        return
    for entry in entries:
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if entry.name in plain:
            continue
        if is_dir:
            yield from _walk_plain(entry.path, ignores, bases, seen, base, plain, kind_of)
            continue
        kind = kind_of(entry.name, entry.path)
        if kind is not None and entry.path not in seen:
            seen.add(entry.path)
            yield Candidate(entry.path, kind, explicit=False, link=entry.is_symlink())


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


# Kinds whose mentions of an artifact the migration plan reads on its own: Python strings (``PathExpressions``),
# C/C++ runners (``project.cpp_artifact_loads``).
_MENTIONS_READ_ELSEWHERE = frozenset({"python", "jupyter", "cpp"})


# Documentation names files without running them: a page that shows `model.so` is no consumer of it.
_DOCUMENTATION_SUFFIXES = (".md", ".markdown", ".rst", ".adoc")


def other_project_files(settings: Settings) -> list[Candidate]:
    """The project's files (under ``settings.root``, its excludes and ignore files applied) of no kind whose
    mentions the plan reads elsewhere, and no documentation: a Makefile, a shell script, a manifest, a Dockerfile,
    where a consumer may name an artifact's file (``project.OutsideMentions``; ``unchanged_run`` stamps them)."""
    every = discover([settings.root], settings, lambda name, path: kind_of_name(name, path) or "other")
    return [
        item
        for item in every
        if isinstance(item, Candidate)
        and item.kind not in _MENTIONS_READ_ELSEWHERE
        and not item.where.lower().endswith(_DOCUMENTATION_SUFFIXES)
    ]
