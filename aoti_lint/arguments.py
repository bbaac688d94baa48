"""The command line's parsers (argparse, imported when a parser is built), and the one question the entry point
asks of a command line before it loads the linter: is it a `check` of named paths with options that leave a run
without findings as it is (``plain_check``)?"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

from aoti_lint import __version__
from aoti_lint.settings.defaults import CACHE_DIR_ENV, OUTPUT_FORMAT_ENV
from aoti_lint.settings.target_torch import DEFAULT_TARGET_TORCH_TEXT

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

# The commands other than `check`, named first.
COMMANDS = ("rule", "rules", "flows", "validate", "explain")
# The options of `check` that leave the output of a run without findings or errors as it is (``--isolated``: the
# entry point answers only where no configuration file is found, with this flag or not).
ANSWERED_ALONE = frozenset(
    {
        "paths",
        "quiet",
        "verbose",
        "exit_zero",
        "exit_non_zero_on_fix",
        "no_cache",
        "fix",
        "unsafe_fixes",
        "force_exclude",
        "respect_gitignore",
        "isolated",
    }
)


def codes(value: str) -> list[str]:
    return [code.strip() for code in value.split(",") if code.strip()]


def positive_int(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        import argparse

        raise argparse.ArgumentTypeError(f"expected a positive integer, got `{value}`")
    return int(value)


@functools.cache
def help_formatter() -> type[argparse.HelpFormatter]:
    """argparse's own, told the terminal's width: argparse asks ``shutil`` for it, and importing ``shutil`` (with
    ``bz2`` and ``lzma``) would be paid by every run, as the parser makes a formatter for each option."""
    import argparse

    class HelpFormatter(argparse.HelpFormatter):
        def __init__(
            self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
        ) -> None:
            super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)

    return HelpFormatter


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` tells it: $COLUMNS, else stdout's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


def check_parser() -> argparse.ArgumentParser:
    from aoti_lint.settings.output_formats import FORMATS
    from aoti_lint.usage import Parser

    parser = Parser(
        formatter_class=help_formatter(),
        prog="aoti-lint check",
        description="Find deprecated AOTInductor APIs, device mismatches and debug switches left on.",
        epilog=f"Environment: {OUTPUT_FORMAT_ENV} (the output format), {CACHE_DIR_ENV}, NO_COLOR and FORCE_COLOR "
        "(colour, on a terminal by default).",
    )
    parser.add_argument("paths", nargs="*", type=Path, help="files or directories to check (default: .); - for stdin")
    rules = parser.add_argument_group("rule selection")
    rules.add_argument("--select", type=codes, action="append", metavar="CODES", help="codes, prefixes or ALL")
    rules.add_argument("--extend-select", type=codes, action="append", metavar="CODES")
    rules.add_argument("--ignore", type=codes, action="append", metavar="CODES")
    rules.add_argument("--per-file-ignores", action="append", metavar="PATTERN:CODES", help="e.g. 'tests/*:AOTI001'")
    rules.add_argument(
        "--target-torch", metavar="X.Y", help=f"oldest torch the code must run on (default {DEFAULT_TARGET_TORCH_TEXT})"
    )
    files = parser.add_argument_group("file selection")
    files.add_argument("--extend-exclude", type=codes, action="append", metavar="PATTERNS")
    files.add_argument("--force-exclude", action="store_true", default=None, help="exclude even named files")
    files.add_argument("--no-force-exclude", action="store_false", dest="force_exclude")
    files.add_argument(
        "--stdin-filename", type=Path, metavar="PATH", help="the file that code read from stdin stands for"
    )
    files.add_argument("--respect-gitignore", action="store_true", default=None)
    files.add_argument("--no-respect-gitignore", action="store_false", dest="respect_gitignore")
    fixes = parser.add_argument_group("fixes")
    fixes.add_argument("--fix", action="store_true", default=None, help="apply fixes (safe ones by default)")
    fixes.add_argument("--no-fix", action="store_false", dest="fix")
    fixes.add_argument("--unsafe-fixes", action="store_true", default=None, help="include unsafe fixes")
    fixes.add_argument("--no-unsafe-fixes", action="store_false", dest="unsafe_fixes")
    fixes.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    fixes.add_argument("--show-fixes", action="store_true", help="list the fixes applied")
    fixes.add_argument("--fix-only", action="store_true", help="apply fixes; do not report what remains")
    fixes.add_argument(
        "--add-noqa", action="store_true", help="add a `# noqa: CODE` comment to the line of each finding"
    )
    output = parser.add_argument_group("output")
    output.add_argument("--output-format", choices=sorted(FORMATS), default=None)
    output.add_argument("-o", "--output-file", type=Path, metavar="FILE")
    output.add_argument("--statistics", action="store_true", help="counts per rule instead of findings")
    output.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    output.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 when something was fixed")
    output.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    output.add_argument("-v", "--verbose", action="store_true", help="show tracebacks of internal errors")
    output.add_argument("--show-files", action="store_true", help="list the files a run would check, then exit")
    output.add_argument("-w", "--watch", action="store_true", help="run again whenever a file checked changes")
    output.add_argument(
        "--show-settings", action="store_true", help="show the settings the first file would be checked with, then exit"
    )
    speed = parser.add_argument_group("speed")
    speed.add_argument("--jobs", type=positive_int, metavar="N", help="worker processes (default: one per core)")
    speed.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    speed.add_argument("--cache-dir", type=Path, metavar="DIR", help="default: .aoti_lint_cache in the project root")
    config = parser.add_argument_group("configuration")
    config.add_argument("--config", type=Path, metavar="FILE", help="pyproject.toml or aoti-lint.toml to use")
    config.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    parser.add_argument("--version", action="version", version=f"aoti-lint {__version__}")
    return parser


def top_parser() -> argparse.ArgumentParser:
    from aoti_lint.usage import Parser

    parser = Parser(
        formatter_class=help_formatter(),
        prog="aoti-lint",
        description="aoti-lint: a linter and migration codemod for PyTorch AOTInductor code.",
        epilog="Commands: check [PATHS] (default), rule CODE, rules, flows [PATHS], validate PKG.pt2, "
        "explain [FILE|-]. Run `aoti-lint COMMAND --help` for options.",
    )
    parser.add_argument("--version", action="version", version=f"aoti-lint {__version__}")
    return parser


def apply_cli_settings(settings: Any, args: argparse.Namespace) -> Any:
    """The configuration's settings with the command line's over them."""
    from dataclasses import replace

    from aoti_lint.settings.config import ConfigError, target_torch_setting

    changes: dict[str, object] = {}
    if args.select:
        changes["select"] = tuple(code for group in args.select for code in group)
    if args.extend_select:
        changes["extend_select"] = settings.extend_select + tuple(c for g in args.extend_select for c in g)
    if args.ignore:
        changes["ignore"] = settings.ignore + tuple(c for g in args.ignore for c in g)
    if args.extend_exclude:
        changes["extend_exclude"] = settings.extend_exclude + tuple(p for g in args.extend_exclude for p in g)
    if args.per_file_ignores:
        pairs = []
        for item in args.per_file_ignores:
            pattern, sep, listed = item.rpartition(":")
            if not sep or not pattern:
                raise ConfigError(f"--per-file-ignores: expected PATTERN:CODES, got `{item}`")
            pairs.append((pattern, tuple(codes(listed))))
        changes["per_file_ignores"] = settings.per_file_ignores + tuple(pairs)
    if args.force_exclude is not None:
        changes["force_exclude"] = args.force_exclude
    if args.respect_gitignore is not None:
        changes["respect_gitignore"] = args.respect_gitignore
    if args.target_torch:
        changes["target_torch"] = target_torch_setting(args.target_torch, "--target-torch")
    if args.output_format:
        changes["output_format"] = args.output_format
    elif os.environ.get(OUTPUT_FORMAT_ENV):
        from aoti_lint.settings.output_formats import FORMATS

        value = os.environ[OUTPUT_FORMAT_ENV]
        if value not in FORMATS:
            raise ConfigError(f"{OUTPUT_FORMAT_ENV}: unknown output format `{value}`")
        changes["output_format"] = value
    settings = replace(settings, **changes)
    for pattern, listed in settings.per_file_ignores:
        from aoti_lint.settings import selection

        try:
            selection.validate(listed)
        except selection.SelectorError as exc:
            raise ConfigError(f"--per-file-ignores `{pattern}`: {exc}") from None
    return settings.with_enabled()


class _Unparsed(Exception):
    pass


def plain_check(argv: list[str]) -> argparse.Namespace | None:
    """The arguments of `aoti-lint [check] PATHS` as the check's own parser reads them, when every option given is one
    of ``ANSWERED_ALONE``; None for any other command line (another command, stdin, help, an error: the full run
    parses it again and says what it says)."""
    if argv and argv[0] in COMMANDS:
        return None
    parser = check_parser()
    # Silent: what the parser would print (help, a usage error) is the full run's to print.
    parser.exit = parser.error = _unparsed  # type: ignore[method-assign,assignment]
    parser._print_message = lambda *_: None  # type: ignore[method-assign]
    try:
        args = parser.parse_args(argv[1:] if argv and argv[0] == "check" else argv)
    except _Unparsed:
        return None
    if any(value != parser.get_default(name) for name, value in vars(args).items() if name not in ANSWERED_ALONE):
        return None
    if any(str(path) == "-" for path in args.paths):
        return None  # stdin
    return args


def _unparsed(*_: object) -> None:
    raise _Unparsed
