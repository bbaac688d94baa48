"""The command's entry point, and the run it answers without loading the linter: files that cannot hold a finding.

Pre-commit hands the hook a commit's files, and most hold none of the words any rule needs (``SCREEN``). The full
command imports its modules (argparse, dataclasses, pathlib, re, the rules...) before it reads a byte, several times
what the interpreter's start costs (benchmarks/RESULTS.md). This module uses only ``os`` and ``sys``, which the
interpreter has loaded before it runs a line, and answers such a run exactly as the full command would: the same output,
the same exit code. Whatever it cannot settle that way goes to ``aoti_lint.cli``, unchanged: any other option or
argument, a directory, a link, a notebook, a file holding a group of the words, a Python file that does not
parse (``compile`` to the tree only: the full run reports it, AOTI000), an output format from
the environment, a configuration file with aoti-lint settings or one that does not parse (a pyproject.toml is
parsed with ``tomllib``, imported only then, unless an earlier run kept its verdict: ``pyproject_verdicts``), an
ignore pattern outside the plain forms read here. ``tests/test_fast_path.py`` runs both on the same cases and
compares what they print. A `check` of named paths with those options alone that may hold a finding goes to
``cli.check_parsed`` with the arguments read here, so that the full run does not import argparse.
"""

from __future__ import annotations

import os
import sys
from stat import S_ISREG

from aoti_lint.read.path_text import gitignore_bases, parents, relative
from aoti_lint.rule_manifest import SCREEN
from aoti_lint.settings.defaults import CACHE_DIR_ENV, CACHE_DIR_NAME, CONFIG_FILES, DEFAULT_EXCLUDE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.run.pyproject_verdicts import Verdicts


def could_hold_a_finding(data: bytes) -> bool:
    """Whether ``data`` holds one of ``SCREEN``'s groups whole: else no rule's first stage passes it."""
    return any(all(token in data for token in group) for group in SCREEN)


# The options that leave the output of a run without findings or errors as it is, and what each sets.
_FLAGS = {
    "-q": ("quiet", True),
    "--quiet": ("quiet", True),
    "-v": ("verbose", True),
    "--verbose": ("verbose", True),
    "--exit-zero": ("exit_zero", True),
    "--exit-non-zero-on-fix": ("exit_non_zero_on_fix", True),
    "--no-cache": ("no_cache", True),
    "--fix": ("fix", True),
    "--no-fix": ("fix", False),
    "--unsafe-fixes": ("unsafe_fixes", True),
    "--no-unsafe-fixes": ("unsafe_fixes", False),
    "--force-exclude": ("force_exclude", True),
    "--no-force-exclude": ("force_exclude", False),
    "--respect-gitignore": ("respect_gitignore", True),
    "--no-respect-gitignore": ("respect_gitignore", False),
    # (what ``settle`` answers holds only without any configuration file, with this flag or not)
    "--isolated": ("isolated", True),
}
OUTPUT_FORMAT_ENV = "AOTI_LINT_OUTPUT_FORMAT"
# The commands other than `check`, named first.
_COMMANDS = ("rule", "rules", "flows", "validate", "explain")
# Opening brackets a pyproject.toml read here may hold (a few dozen in most): well below any nesting that comes
# near the interpreter's recursion limit in either run.
_MAX_PYPROJECT_BRACKETS = 200


def _import_pathlib() -> None:
    """Import ``pathlib`` without the ``urllib.parse`` it imports for ``Path.as_uri`` alone (with ``ipaddress``, which
    that imports, a visible share of a run on one file). While ``pathlib`` loads, a stand-in answers for
    ``urllib.parse``: its ``quote_from_bytes`` imports the real one when first called, any other name imports it at
    once. The stand-in leaves ``sys.modules`` as soon as ``pathlib`` is loaded, so nothing else ever imports it."""
    if "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return
    import types

    stand_in = types.ModuleType("urllib.parse")

    def real() -> types.ModuleType:
        if sys.modules.get("urllib.parse") is stand_in:
            del sys.modules["urllib.parse"]
        import urllib.parse

        return urllib.parse

    def quote_from_bytes(*args: Any, **kwargs: Any) -> str:
        return real().quote_from_bytes(*args, **kwargs)

    stand_in.quote_from_bytes = quote_from_bytes  # type: ignore[attr-defined]

    def other(name: str) -> object:
        if name.startswith("__"):  # what the import system asks of any module (`__path__`): not a name of it
            raise AttributeError(name)
        return getattr(real(), name)

    stand_in.__getattr__ = other  # type: ignore[method-assign]
    sys.modules["urllib.parse"] = stand_in
    try:
        import pathlib  # noqa: F401
    finally:
        if sys.modules.get("urllib.parse") is stand_in:
            del sys.modules["urllib.parse"]


def main() -> int:
    """The ``aoti-lint`` command."""
    try:
        answer = settle(sys.argv[1:], os.getcwd(), os.environ)
    except (OSError, ValueError):  # a working directory gone, a name the file system refuses: the full run says
        answer = None
    except KeyboardInterrupt:  # as ``cli.main`` says it
        print("aoti-lint: interrupted", file=sys.stderr)
        return 130
    if answer is None:
        _import_pathlib()
        parsed = plain_check(sys.argv[1:])
        if parsed is not None:
            from aoti_lint.cli import check_parsed

            return check_parsed(*parsed, sys.argv[1:])
        from aoti_lint.cli import main as full_run

        return full_run()
    out, err, code = answer
    try:
        sys.stderr.write(err)
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away, as ``cli.main`` handles it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 2
    return code


def entry() -> None:
    """The ``aoti-lint`` console script and ``python -m aoti_lint``: ``main``, then an exit without the interpreter's
    teardown, which frees every object of the run one by one (mypy's ``hard_exit`` skips it too). The run has
    written and closed every file and stopped its workers by then; what it printed is flushed first. An exception,
    or a ``SystemExit`` (``--help``, a usage error), ends it the usual way, and so does a run under a profiler, a
    tracer or coverage, which write their data at the interpreter's exit."""
    code = main()
    if sys.getprofile() is not None or sys.gettrace() is not None or "coverage" in sys.modules:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away: an error, as ``main`` tells it
        code = 2
    os._exit(code)


def settle(argv: list[str], cwd: str, environ: dict[str, str] | os._Environ[str]) -> tuple[str, str, int] | None:
    """What ``aoti-lint`` prints (stdout, stderr) and exits with for ``argv``, when no file named can hold a
    finding; None when only the full run can tell."""
    parsed = plain_check(argv)
    if parsed is None:
        return None
    options, paths = parsed
    if not paths or (options.get("exit_zero") and options.get("exit_non_zero_on_fix")):
        return None
    cache = None if options.get("no_cache") else os.path.join(cwd, environ.get(CACHE_DIR_ENV) or CACHE_DIR_NAME)
    if environ.get(OUTPUT_FORMAT_ENV) or not _without_configuration(cwd, cache):
        return None
    force_exclude = options.get("force_exclude", False)
    ignores = _Ignores(cwd, options.get("respect_gitignore", True))
    checked: set[str] = set()
    for given in paths:
        path = os.path.normpath(os.path.join(cwd, given))
        try:
            if not S_ISREG(os.lstat(path).st_mode):
                return None  # a directory, a link, a FIFO: discovery's and reading's own cases
        except OSError:
            return None
        if path.endswith(".ipynb"):
            return None  # a notebook is parsed (and may be refused) before its first stage
        if force_exclude:
            excluded = ignores.excludes(path)
            if excluded is None:
                return None
            if excluded:
                continue
        if path in checked:
            continue
        if not _cannot_hold_a_finding(path):
            return None
        checked.add(path)
    err = f"debug: Checked {len(checked)} file{'s' if len(checked) != 1 else ''}\n" if options.get("verbose") else ""
    if not checked:
        return "", err + "warning: No Python files found under the given path(s)\n", 0
    return ("" if options.get("quiet") else "All checks passed!\n"), err, 0


def plain_check(argv: list[str]) -> tuple[dict[str, bool], list[str]] | None:
    """The flags (each as the option's name and value argparse gives it) and the paths of a `check` whose arguments
    are flags of ``_FLAGS`` and paths alone; None for any other command line, which argparse parses."""
    options: dict[str, bool] = {}
    paths: list[str] = []
    after_paths = False  # argparse takes the paths as one run: one after an option that follows them is an error
    for index, arg in enumerate(argv):
        if arg in _FLAGS:
            name, value = _FLAGS[arg]
            options[name] = value
            after_paths = bool(paths)
        elif index == 0 and arg == "check":
            continue
        elif not arg or arg.startswith("-") or after_paths or (index == 0 and arg in _COMMANDS):
            return None
        else:
            paths.append(arg)
    return options, paths


def _cannot_hold_a_finding(path: str) -> bool:
    """Whether the file holds no group of ``SCREEN``; False too when it cannot be read as the full run reads it."""
    from aoti_lint.read.file_bytes import NotRegularFile, read_regular_file_stat

    try:
        data, _ = read_regular_file_stat(path)
    except (OSError, NotRegularFile):  # the full run says why
        return False
    if not data.isascii() or b"coding" in data:  # the names CPython reads may be other than the bytes spell
        from aoti_lint.read.source import screen_data

        data = screen_data(data)
    return not could_hold_a_finding(data)


def _without_configuration(cwd: str, cache: str | None = None) -> bool:
    """Whether ``config.find_config`` finds nothing from ``cwd`` and reads every pyproject.toml on the way
    without an error: the run then has the default settings, rooted at ``cwd``. ``cache``: the cache directory the
    full run would use (``cache.default_cache_dir``), where a pyproject.toml's verdict is kept for its stat
    (``aoti_lint.run.pyproject_verdicts``); None with ``--no-cache``."""
    verdicts: Verdicts | None = None
    for directory in (cwd, *parents(cwd)):
        for name in CONFIG_FILES:
            candidate = os.path.join(directory, name)
            try:
                if not os.path.isfile(candidate):
                    continue
                info = os.stat(candidate) if name == "pyproject.toml" and cache is not None else None
            except (OSError, ValueError):
                return False
            if name != "pyproject.toml":
                return False
            if info is not None and cache is not None:
                if verdicts is None:
                    from aoti_lint.run.pyproject_verdicts import Verdicts

                    verdicts = Verdicts(cache)
                if verdicts.holds(candidate, info):
                    continue
            if not _pyproject_without_table(candidate):
                return False
            if info is not None and verdicts is not None:
                verdicts.learn(candidate, info)
    if verdicts is not None:
        verdicts.save()
    return True


def _pyproject_without_table(path: str) -> bool:
    """Whether ``path`` is valid TOML without a ``[tool.aoti-lint]`` table, as ``config.read_table`` reads it."""
    if sys.version_info >= (3, 11):
        import tomllib as toml
    else:  # pragma: no cover - exercised on 3.10 only
        try:
            import tomli as toml
        except ImportError:
            return False
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        # tomllib recurses per nesting level, and the full run parses from deeper in its stack: a document
        # nested near the limit parses here and fails there ("nested too deeply"). So few brackets cannot nest.
        if data.count(b"[") + data.count(b"{") > _MAX_PYPROJECT_BRACKETS:
            return False
        document = toml.loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, toml.TOMLDecodeError, RecursionError):
        return False
    tool = document.get("tool", {})
    return not isinstance(tool, dict) or tool.get("aoti-lint") is None


class _Ignores:
    """``files.force_excluded`` for a named file under the default settings: the default excludes, and the
    ignore files from the enclosing repository down to the file's directory, read in the plain forms that
    ``_IgnorePattern`` matches as pathspec does; None from ``excludes`` for any other form."""

    def __init__(self, root: str, respect_gitignore: bool) -> None:
        self.root = root
        self.respect_gitignore = respect_gitignore
        self._patterns: dict[str, list[_IgnorePattern] | None] = {}

    def excludes(self, path: str) -> bool | None:
        rel = relative(path, self.root)
        if rel is None:
            rel = os.path.basename(path)
        if any(part in DEFAULT_EXCLUDE for part in rel.split("/")):
            return True
        if not self.respect_gitignore:
            return False
        directory = os.path.dirname(path)
        for base in (*gitignore_bases(directory), directory):
            patterns = self._read(base)
            if patterns is None:
                return None
            rel = relative(path, base)
            if rel is not None and any(pattern.matches(rel) for pattern in patterns):
                return True
        return False

    def _read(self, directory: str) -> list[_IgnorePattern] | None:
        if directory not in self._patterns:
            files = [os.path.join(directory, ".gitignore"), os.path.join(directory, ".ignore")]
            if os.path.isdir(os.path.join(directory, ".git")):
                files.append(os.path.join(directory, ".git", "info", "exclude"))
            lines: list[str] = []
            for file in files:
                try:
                    with open(file, "rb") as handle:
                        lines += handle.read().decode("utf-8", errors="replace").splitlines()
                except OSError:
                    continue
            patterns = [_IgnorePattern.of(line) for line in lines if line and not line.startswith("#")]
            self._patterns[directory] = None if None in patterns else patterns  # type: ignore[assignment]
        return self._patterns[directory]


# One position of a name's glob: "*", "?", a character, or a bracket expression as (characters, ranges).
_Part = str | tuple[frozenset[str], tuple[tuple[str, str], ...]]
# Characters a bracket expression may hold here, besides a range's dash.
_CLASS_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._")


class _IgnorePattern:
    """One gitignore line without negation, escape, `**`, whitespace or an unusual bracket expression, matched
    by path components: `*`, `?` and `[...]` within one name. A pattern with a slash before its end is anchored
    at its file's directory and matches the path's first names; one without matches any name; a trailing
    slash matches directories only, so never the file's own name. A match of a directory covers what it holds.
    """

    __slots__ = ("anchored", "directory_only", "parts")

    def __init__(self, parts: list[list[_Part]], anchored: bool, directory_only: bool) -> None:
        self.parts = parts
        self.anchored = anchored
        self.directory_only = directory_only

    @classmethod
    def of(cls, line: str) -> _IgnorePattern | None:
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
        names = rel.split("/")
        # A directory-only pattern must end before the file's own name.
        last = len(names) - len(self.parts) - (1 if self.directory_only else 0)
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
