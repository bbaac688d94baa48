"""Which files a run reads: directory walks, default and user excludes, .gitignore, file kinds."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from aoti_lint.lazy import LazyPattern
from aoti_lint.read.path_text import gitignore_bases, relative
from aoti_lint.read.source import file_kind, kind_of_name
from aoti_lint.settings.config import Settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    import pathspec


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


# The entries of a directory whose ignore patterns the walk reads (`.git` for `.git/info/exclude`).
_IGNORE_SOURCES = frozenset({".gitignore", ".ignore", ".git"})
# A gitignore pattern that matches one name exactly: no slash, glob, escape, negation, comment or trailing space.
_PLAIN_NAME = LazyPattern(r"[A-Za-z0-9_.+=@-]*[A-Za-z0-9_+=@-][A-Za-z0-9_.+=@-]*")
# Each pattern names its groups alike; an alternation of them must not.
_NAMED_GROUP = LazyPattern(r"\(\?P<\w+>")


def fast_matcher(spec: pathspec.PathSpec) -> Callable[[str], bool]:
    """``spec.match_file`` as one regular expression when no pattern negates another.

    pathspec tries each pattern's regex in turn (28 for the default excludes) for every entry walked; without
    negations a path is excluded exactly when one of them matches, which one alternation decides at once.
    Anything unexpected in the patterns falls back to pathspec itself.
    """
    try:
        patterns = [(p.include, p.regex.pattern) for p in spec.patterns if p.include is not None]
        if not patterns or any(not include or not isinstance(regex, str) for include, regex in patterns):
            return spec.match_file
        if any("(?P=" in regex for _, regex in patterns):
            return spec.match_file
        unnamed = [_NAMED_GROUP.sub("(?:", regex) for _, regex in patterns]
        combined = re.compile("|".join(f"(?:{regex})" for regex in unnamed))
    except (AttributeError, re.error):
        return spec.match_file
    return lambda path: combined.search(path) is not None


def gitignore_spec(lines: list[str]) -> tuple[pathspec.PathSpec, list[str]]:
    """The spec of the valid patterns among ``lines``, and a message for each invalid one (`!`, `\\`,
    `[z-a]`): git skips a pattern it cannot use, and so do we, but we say so."""
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines), []
    except (ValueError, re.error):  # pathspec's GitIgnorePatternError is a ValueError
        good, problems = gitignore_lines(lines)
        return pathspec.GitIgnoreSpec.from_lines(good), problems


def gitignore_lines(lines: list[str]) -> tuple[list[str], list[str]]:
    """The valid lines, and a message for each invalid one."""
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines(lines)
        return lines, []
    except (ValueError, re.error):
        pass
    good, problems = [], []
    for line in lines:
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except (ValueError, re.error) as exc:
            reason = str(exc.msg) if isinstance(exc, re.error) else "not a valid pattern"
            problems.append(f"invalid pattern `{line}` ({reason}); ignored")
        else:
            good.append(line)
    return good, problems


class _Ignores:
    """Exclude patterns (gitignore syntax, relative to the project root) and the .gitignore files met."""

    def __init__(self, settings: Settings) -> None:
        self.root = settings.root
        self._patterns = [*settings.exclude, *settings.extend_exclude]
        self._exclude: Callable[[str], bool] | None = None
        self._names: tuple[frozenset[str] | None] | None = None
        self.respect_gitignore = settings.respect_gitignore
        self._gitignores: dict[Path, pathspec.PathSpec | None] = {}
        self._origin = settings.config_path or Path("--extend-exclude")
        # Invalid patterns met so far, as (file, message): each is reported once, the walk goes on.
        self.problems: list[MissingPath] = []

    def _relative(self, path: Path, base: Path) -> str | None:
        # String slicing, not Path.relative_to: this runs for every entry of every directory walked.
        return relative(str(path), str(base))

    def excluded(self, path: Path, is_dir: bool, base: Path | None = None) -> bool:
        """Whether an exclude pattern matches ``path``, relative to the project root or to ``base``."""
        rel = self._relative(path, base or self.root)
        if rel is None:
            # Outside the project root, patterns still match by name (e.g. `build`, `.venv`).
            rel = path.name
        names = self._plain_names()
        if names is not None:
            # A plain name matches a path when it is one of its components: no pathspec to import and compile.
            return any(part in names for part in rel.split("/"))
        return self._exclude_matcher()(rel + "/" if is_dir else rel)

    def listed(self, directory: Path, names: set[str]) -> None:
        """The walk has listed ``directory``: with none of the names it reads, it has no ignore file to read."""
        if directory not in self._gitignores and not names & _IGNORE_SOURCES:
            self._gitignores[directory] = None

    def _gitignore(self, directory: Path) -> pathspec.PathSpec | None:
        if directory not in self._gitignores:
            spec = None
            files = [directory / ".gitignore", directory / ".ignore"]
            if os.path.isdir(directory / ".git"):  # False, not an exception, in a directory we cannot search
                files.append(directory / ".git" / "info" / "exclude")
            lines: list[str] = []
            for file in files:
                with contextlib.suppress(OSError):
                    read = file.read_text(encoding="utf-8", errors="replace").splitlines()
                    valid, problems = gitignore_lines(read)
                    self.problems += [MissingPath(file, problem) for problem in problems]
                    lines += valid
            if lines:
                spec, _ = gitignore_spec(lines)
            self._gitignores[directory] = spec
        return self._gitignores[directory]

    def _exclude_matcher(self) -> Callable[[str], bool]:
        if self._exclude is None:
            # Built on first use: importing pathspec costs more than a whole run on one named file.
            spec, problems = gitignore_spec(self._patterns)
            self.problems += [MissingPath(self._origin, f"exclude: {problem}") for problem in problems]
            self._exclude = fast_matcher(spec)
        return self._exclude

    def in_directory(
        self, directory: Path, bases: tuple[Path, ...], base: Path | None = None
    ) -> Callable[[str, bool], bool] | None:
        """``excluded(...) or gitignored(...)`` for the entries of ``directory`` by name, with the relative paths
        worked out once for the directory rather than per entry; None when the directory is not inside the
        root (or ``base``) and every base it is matched against (callers then ask per entry)."""
        exclude_prefix = self._relative(directory, base or self.root)
        if exclude_prefix is None:
            return None
        names = self._plain_names()
        exclude = self._exclude_matcher() if names is None else None
        ignores: list[tuple[Callable[[str], bool], str]] = []
        if self.respect_gitignore:
            for each in bases:
                spec = self._gitignore(each)
                if spec is None:
                    continue
                prefix = self._relative(directory, each)
                if prefix is None:
                    return None
                ignores.append((spec.match_file, "" if prefix == "." else prefix + "/"))
        exclude_prefix = "" if exclude_prefix == "." else exclude_prefix + "/"
        plain: frozenset[str] = names if names is not None else frozenset()
        if exclude is None and not ignores:
            # The walk has matched every directory above this one already: a pattern that is a plain name
            # matches an entry exactly when it is the entry's own name.
            return _PlainNames(plain)

        def skipped(name: str, is_dir: bool) -> bool:
            tail = name + "/" if is_dir else name
            if (name in plain) if exclude is None else exclude(exclude_prefix + tail):
                return True
            return any(match(prefix + tail) for match, prefix in ignores)

        return skipped

    def _plain_names(self) -> frozenset[str] | None:
        """The exclude patterns, if each is a plain name (``build``, ``.venv``: ruff's defaults), which gitignore
        matches against every path component; None if any has a slash, a glob or a negation."""
        if self._names is None:
            plain = all(_PLAIN_NAME.fullmatch(pattern) for pattern in self._patterns)
            self._names = (frozenset(self._patterns),) if plain else (None,)
        return self._names[0]

    def gitignored(self, path: Path, is_dir: bool, bases: tuple[Path, ...]) -> bool:
        if not self.respect_gitignore:
            return False
        for base in bases:
            spec = self._gitignore(base)
            if spec is None:
                continue
            rel = self._relative(path, base)
            if rel is not None and spec.match_file(rel + "/" if is_dir else rel):
                return True
        return False


class _PlainNames(frozenset[str]):
    """The exclude patterns of a directory whose entries only plain names exclude (``_Ignores.in_directory``)."""

    def __call__(self, name: str, is_dir: bool) -> bool:
        return name in self


def _gitignore_bases(directory: Path) -> tuple[Path, ...]:
    """Directories above ``directory`` whose .gitignore applies: up to the enclosing git repository."""
    return tuple(Path(base) for base in gitignore_bases(str(directory)))


def force_excluded(path: Path, settings: Settings, ignores: _Ignores | None = None) -> bool:
    """Whether ``--force-exclude`` drops ``path`` (absolute) although it was named explicitly."""
    return settings.force_exclude and excluded_by(path, settings, ignores) is not None


def excluded_by(path: Path, settings: Settings, ignores: _Ignores | None = None) -> str | None:
    """What leaves ``path`` (absolute) out of a walk, and out of a run with ``--force-exclude``: "exclude" (the
    ``exclude``/``extend-exclude`` patterns) or "gitignore" (an ignore file); None when nothing does."""
    ignores = ignores or _Ignores(settings)
    is_dir = path.is_dir()
    if ignores.excluded(path, is_dir):
        return "exclude"
    bases = _gitignore_bases(path) if is_dir else (*_gitignore_bases(path.parent), path.parent)
    return "gitignore" if ignores.gitignored(path, is_dir, bases) else None


def discover(
    paths: list[Path], settings: Settings, kind_of: Callable[[str, str], str | None] = kind_of_name
) -> Iterator[Candidate | MissingPath]:
    """Yield the files to lint under ``paths``, in a stable order; ``kind_of(name, path)`` tells the walk which
    files to yield, and of what kind (the files aoti-lint reads by default)."""
    ignores = _Ignores(settings)
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
            above = _gitignore_bases(path)
            base = path if ignores.excluded(path, True) else None
            bases = (path,) if ignores.gitignored(path, True, above) else (*above, path)
            yield from _walk(path, ignores, bases, seen, base, kind_of)
            continue
        if str(path) not in seen:
            seen.add(str(path))
            # A file named on the command line is read whatever its suffix, as Python.
            yield Candidate(path, file_kind(path) or "python", explicit=True)
    yield from ignores.problems


def _walk(
    directory: Path,
    ignores: _Ignores,
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
        if is_dir and type(skipped) is _PlainNames:
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
    ignores: _Ignores,
    bases: tuple[Path, ...],
    seen: set[str],
    base: Path | None,
    plain: _PlainNames,
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
    if ignores.respect_gitignore and any(entry.name in _IGNORE_SOURCES for entry in entries):
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


# Kinds whose mentions of an artifact the migration plan reads on its own: Python strings (``analysis.so_mentions``),
# C/C++ runners (``project.cpp_artifact_loads``).
_MENTIONS_READ_ELSEWHERE = frozenset({"python", "jupyter", "cpp"})


def other_project_files(settings: Settings) -> list[Candidate]:
    """The project's files (under ``settings.root``, its excludes and ignore files applied) of no kind whose
    mentions the plan reads elsewhere: a Makefile, a shell script, a manifest, a Dockerfile, where a consumer may
    name an artifact's file (``project.OutsideMentions``; ``run_memo`` stamps them)."""
    every = discover([settings.root], settings, lambda name, path: kind_of_name(name, path) or "other")
    return [item for item in every if isinstance(item, Candidate) and item.kind not in _MENTIONS_READ_ELSEWHERE]
