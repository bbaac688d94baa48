"""The command's entry point, and the run it answers without loading the linter: files that cannot hold a finding.

Pre-commit hands the hook a commit's files, and most hold none of the words any rule needs (``SCREEN``). The full
command imports the rules, the engine and the worker pool before it reads a byte; here the command line is read by
the check's own parser (``arguments.plain_check``), a named file excluded by ``--force-exclude`` as the full run
excludes it (``read.files``), and the files' bytes screened, and such a run is answered exactly as the full command
would answer it: the same output, the same exit code. Whatever it cannot settle that way goes to ``aoti_lint.cli``,
unchanged: any other option or argument, a directory, a link, a notebook, a file holding a group of the words, an
output format from the environment, a configuration file with aoti-lint settings or one that does not parse (a
pyproject.toml is parsed with ``tomllib``, imported only then, unless an earlier run kept its verdict:
``run.pyproject_verdicts``). ``tests/test_entry_point.py`` runs both on the same cases and compares what they print.
"""

from __future__ import annotations

import os
import sys
from stat import S_ISREG

from aoti_lint.read.path_text import parents
from aoti_lint.rule_manifest import SCREEN
from aoti_lint.settings.defaults import (
    CACHE_DIR_ENV,
    CACHE_DIR_NAME,
    CONFIG_FILES,
    DEFAULT_EXCLUDE,
    OUTPUT_FORMAT_ENV,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from aoti_lint.run.pyproject_verdicts import Verdicts


def could_hold_a_finding(data: bytes) -> bool:
    """Whether ``data`` holds one of ``SCREEN``'s groups whole: else no rule's first stage passes it."""
    return any(all(token in data for token in group) for group in SCREEN)


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
    _import_pathlib()
    from aoti_lint.arguments import plain_check

    args = plain_check(argv)
    if args is None or not args.paths or (args.exit_zero and args.exit_non_zero_on_fix):
        return None
    cache = None if args.no_cache else os.path.join(cwd, environ.get(CACHE_DIR_ENV) or CACHE_DIR_NAME)
    if environ.get(OUTPUT_FORMAT_ENV) or not _without_configuration(cwd, cache):
        return None
    excluded = _force_excluded(args, cwd) if args.force_exclude else None
    checked: set[str] = set()
    for given in args.paths:
        path = os.path.normpath(os.path.join(cwd, given))
        try:
            if not S_ISREG(os.lstat(path).st_mode):
                return None  # a directory, a link, a FIFO: discovery's and reading's own cases
        except OSError:
            return None
        if path.endswith(".ipynb"):
            return None  # a notebook is parsed (and may be refused) before its first stage
        if excluded is not None and excluded(path):
            continue
        if path in checked:
            continue
        if not _cannot_hold_a_finding(path):
            return None
        checked.add(path)
    err = f"debug: Checked {len(checked)} file{'s' if len(checked) != 1 else ''}\n" if args.verbose else ""
    if not checked:
        return "", err + "warning: No Python files found under the given path(s)\n", 0
    return ("" if args.quiet else "All checks passed!\n"), err, 0


def _force_excluded(args: Any, cwd: str) -> Callable[[str], bool]:
    """Whether ``--force-exclude`` leaves a named file out, by the full run's reading (``read.ignores``), with the
    settings of a run that no configuration file sets: the default excludes, the ignore files unless
    ``--no-respect-gitignore``."""
    from pathlib import Path

    from aoti_lint.read.ignores import Ignores, excluded_by

    respect_gitignore = args.respect_gitignore is not False
    ignores = Ignores(Path(cwd), DEFAULT_EXCLUDE, respect_gitignore, Path("--extend-exclude"))
    return lambda path: excluded_by(Path(path), ignores) is not None


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
