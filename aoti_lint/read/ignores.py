"""What leaves a path out of a run: the exclude patterns (gitignore syntax, relative to the project root) and the
ignore files met on the way (``.gitignore``, ``.ignore``, ``.git/info/exclude``), as git reads them.

One reading, for the walk, for ``--force-exclude`` and for the entry point alike. Patterns of the plain forms most
ignore files hold (a name, a glob within one name, anchored or directory-only: ``build/``, ``*.py[cod]``, ``/dist``)
are matched here by path components (``PlainPattern``); a file holding any other form (a negation, ``**``, an
escape, an unusual bracket expression) is read with pathspec, imported only then.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from aoti_lint.lazy import LazyPattern
from aoti_lint.read.path_text import gitignore_bases, relative

TYPE_CHECKING = False
if TYPE_CHECKING:
    import pathspec

# The entries of a directory whose ignore patterns the walk reads (`.git` for `.git/info/exclude`).
IGNORE_SOURCES = frozenset({".gitignore", ".ignore", ".git"})
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


class _PlainSpec:
    """The lines of an ignore file when each is of a plain form (``PlainPattern``): ``match_file`` as pathspec's."""

    def __init__(self, patterns: Sequence[PlainPattern]) -> None:
        self.patterns = patterns

    def match_file(self, rel: str) -> bool:
        return any(pattern.matches(rel) for pattern in self.patterns)


def plain_spec(lines: list[str]) -> _PlainSpec | None:
    """The lines as plain patterns (blank lines and comments left out); None if any is of another form."""
    patterns = []
    for line in lines:
        if not line or line.startswith("#"):
            continue
        pattern = PlainPattern.of(line)
        if pattern is None:
            return None
        patterns.append(pattern)
    return _PlainSpec(patterns)


class Ignores:
    """The exclude patterns of a run and the ignore files met, read once each."""

    def __init__(self, root: Path, patterns: Sequence[str], respect_gitignore: bool, origin: Path) -> None:
        self.root = root
        self._patterns = list(patterns)
        self._exclude: Callable[[str], bool] | None = None
        self._names: tuple[frozenset[str] | None] | None = None
        self.respect_gitignore = respect_gitignore
        self._gitignores: dict[Path, _PlainSpec | pathspec.PathSpec | None] = {}
        self._origin = origin
        # Invalid patterns met so far, as (file, message): each is reported once, the walk goes on.
        self.problems: list[tuple[Path, str]] = []

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
        if directory not in self._gitignores and not names & IGNORE_SOURCES:
            self._gitignores[directory] = None

    def _gitignore(self, directory: Path) -> _PlainSpec | pathspec.PathSpec | None:
        if directory not in self._gitignores:
            files = [directory / ".gitignore", directory / ".ignore"]
            if os.path.isdir(directory / ".git"):  # False, not an exception, in a directory we cannot search
                files.append(directory / ".git" / "info" / "exclude")
            read: list[tuple[Path, list[str]]] = []
            for file in files:
                with contextlib.suppress(OSError):
                    read.append((file, file.read_text(encoding="utf-8", errors="replace").splitlines()))
            lines = [line for _, file_lines in read for line in file_lines]
            plain = plain_spec(lines)
            spec: _PlainSpec | pathspec.PathSpec | None = plain if plain is not None and plain.patterns else None
            if plain is None:
                valid: list[str] = []
                for file, file_lines in read:
                    good, problems = gitignore_lines(file_lines)
                    self.problems += [(file, problem) for problem in problems]
                    valid += good
                spec = gitignore_spec(valid)[0] if valid else None
            self._gitignores[directory] = spec
        return self._gitignores[directory]

    def _exclude_matcher(self) -> Callable[[str], bool]:
        if self._exclude is None:
            # Built on first use: importing pathspec costs more than a whole run on one named file.
            spec, problems = gitignore_spec(self._patterns)
            self.problems += [(self._origin, f"exclude: {problem}") for problem in problems]
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
            return PlainNames(plain)

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


class PlainNames(frozenset[str]):
    """The exclude patterns of a directory whose entries only plain names exclude (``Ignores.in_directory``)."""

    def __call__(self, name: str, is_dir: bool) -> bool:
        return name in self


def gitignore_bases_of(directory: Path) -> tuple[Path, ...]:
    """Directories above ``directory`` whose .gitignore applies: up to the enclosing git repository."""
    return tuple(Path(base) for base in gitignore_bases(str(directory)))


def excluded_by(path: Path, ignores: Ignores) -> str | None:
    """What leaves ``path`` (absolute) out of a walk, and out of a run with ``--force-exclude``: "exclude" (the
    ``exclude``/``extend-exclude`` patterns) or "gitignore" (an ignore file); None when nothing does."""
    is_dir = path.is_dir()
    if ignores.excluded(path, is_dir):
        return "exclude"
    bases = gitignore_bases_of(path) if is_dir else (*gitignore_bases_of(path.parent), path.parent)
    return "gitignore" if ignores.gitignored(path, is_dir, bases) else None


# One position of a name's glob: "*", "?", a character, or a bracket expression as (characters, ranges).
_Part = str | tuple[frozenset[str], tuple[tuple[str, str], ...]]
# Characters a bracket expression may hold here, besides a range's dash.
_CLASS_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._")


class PlainPattern:
    """One gitignore line without negation, escape, `**`, whitespace or an unusual bracket expression, matched
    by path components: `*`, `?` and `[...]` within one name. A pattern with a slash before its end is anchored
    at its file's directory and matches the path's first names; one without matches any name; a trailing
    slash matches directories only, so never a file's own name. A match of a directory covers what it holds.
    ``tests/test_ignores.py`` holds it to pathspec's ``GitIgnoreSpec`` on generated patterns and paths."""

    __slots__ = ("anchored", "directory_only", "parts")

    def __init__(self, parts: list[list[_Part]], anchored: bool, directory_only: bool) -> None:
        self.parts = parts
        self.anchored = anchored
        self.directory_only = directory_only

    @classmethod
    def of(cls, line: str) -> PlainPattern | None:
        if line.startswith("!") or "\\" in line or "**" in line or any(c.isspace() for c in line):
            return None
        directory_only = line.endswith("/")
        body = line[:-1] if directory_only else line
        anchored = "/" in body
        body = body[1:] if body.startswith("/") else body
        names = body.split("/")
        if "" in names or any(name in (".", "..") for name in names):
            return None
        parts = [_glob(name) for name in names]
        if any(part is None for part in parts):
            return None
        return cls(parts, anchored, directory_only)  # type: ignore[arg-type]

    def matches(self, rel: str) -> bool:
        """Whether the pattern matches ``rel`` (relative to its file's directory; a directory's ends with `/`) or a
        directory above it."""
        is_dir = rel.endswith("/")
        names = (rel[:-1] if is_dir else rel).split("/")
        # A directory-only pattern must end before a file's own name; a directory's own name it may match.
        last = len(names) - len(self.parts) - (1 if self.directory_only and not is_dir else 0)
        starts = range(0, min(last, 0) + 1) if self.anchored else range(0, last + 1)
        return any(all(_glob_matches(part, names[start + i]) for i, part in enumerate(self.parts)) for start in starts)


def _glob(name: str) -> list[_Part] | None:
    """A name's glob as a list: "*", "?", a character (there is no escape: "*" and "?" are always globs), or a
    class as (characters, ranges)."""
    out: list[_Part] = []
    i = 0
    while i < len(name):
        c = name[i]
        if c != "[":
            out.append(c)
            i += 1
            continue
        end = name.find("]", i + 1)
        if end == -1:
            return None
        body = name[i + 1 : end]
        # pathspec copies a class into its regular expression, where a negated one or a range around "/"
        # matches the separator too (`a[!x]b` matches `a/b`): those are left to it.
        if body[:1] in ("!", "^") or not body or body[0] == "-" or body[-1] == "-" or "--" in body:
            return None
        chars: set[str] = set()
        ranges: list[tuple[str, str]] = []
        j = 0
        while j < len(body):
            if body[j] not in _CLASS_CHARACTERS:
                return None
            if j + 2 < len(body) and body[j + 1] == "-":
                low, high = body[j], body[j + 2]
                if high not in _CLASS_CHARACTERS or low > high or low <= "/" <= high:
                    return None
                ranges.append((low, high))
                j += 3
            else:
                chars.add(body[j])
                j += 1
        out.append((frozenset(chars), tuple(ranges)))
        i = end + 1
    return out


def _glob_matches(glob: list[_Part], name: str) -> bool:
    """Whether ``name`` matches ``glob`` whole: a table of which prefixes of the name each prefix of the glob
    matches, so a run of stars costs the product of the lengths, never more."""
    reach = [True] + [False] * len(name)
    for part in glob:
        if part == "*":
            for k in range(1, len(name) + 1):
                reach[k] = reach[k] or reach[k - 1]
            continue
        nxt = [False] * (len(name) + 1)
        for k in range(len(name)):
            if reach[k] and _one_matches(part, name[k]):
                nxt[k + 1] = True
        reach = nxt
    return reach[len(name)]


def _one_matches(part: _Part, char: str) -> bool:
    if isinstance(part, str):
        return part == "?" or part == char
    chars, ranges = part
    return char in chars or any(low <= char <= high for low, high in ranges)
