"""Command line: arguments -> settings -> run -> report -> exit code (0 clean, 1 findings, 2 error)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from aoti_lint.arguments import apply_cli_settings, check_parser, help_formatter, top_parser

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class OutputError(Exception):
    """The report (-o FILE) could not be written; the message names the file and why."""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return _guarded(lambda: _command(argv), argv)


def _command(argv: list[str]) -> int:
    if argv and argv[0] == "rule":
        return _rule_command(argv[1:])
    if argv and argv[0] == "rules":
        return _rules_command(argv[1:])
    if argv and argv[0] == "flows":
        from aoti_lint.show_flows import flows_command

        return flows_command(argv[1:], help_formatter())
    if argv and argv[0] == "validate":
        from aoti_lint.runtime.commands import validate_command

        return validate_command(argv[1:])
    if argv and argv[0] == "explain":
        from aoti_lint.runtime.commands import explain_command

        return explain_command(argv[1:])
    if argv and argv[0] in ("-h", "--help"):
        top_parser().print_help()
        print()
        check_parser().print_help()
        return EXIT_CLEAN
    if argv and argv[0] == "check":
        argv = argv[1:]
    with _FewerCollections():
        return _check_command(argv)


def _guarded(command: Callable[[], int], argv: list[str]) -> int:
    """The command's exit code; an interruption, a report that cannot be written, a closed pipe or a bug of ours
    is told as such and exits as ruff's would."""
    _tolerant_stdio()
    try:
        return command()
    except KeyboardInterrupt:
        print("aoti-lint: interrupted", file=sys.stderr)
        return 130
    except OutputError as exc:
        _error(str(exc))
        return EXIT_ERROR
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); nothing left to say.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except Exception as exc:  # a bug of ours: exit 2 (an error), never 1 (which means findings)
        import traceback

        _error(f"internal error: {type(exc).__name__}: {exc} (please report it; --verbose shows the traceback)")
        if "-v" in argv or "--verbose" in argv:
            traceback.print_exc()
        return EXIT_ERROR


def _tolerant_stdio() -> None:
    """A file name that is not UTF-8 (a surrogate escape) must not crash a strict stdout or stderr."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def _error(message: str) -> None:
    from aoti_lint.report import printable  # file names and messages may come from the code under review

    print(f"error: {printable(message)}", file=sys.stderr)


def _rule_command(argv: list[str]) -> int:
    from aoti_lint.docs import rule_markdown
    from aoti_lint.rules import RULES_BY_CODE, RULES_BY_NAME
    from aoti_lint.usage import Parser

    parser = Parser(
        formatter_class=help_formatter(), prog="aoti-lint rule", description="Print a rule's documentation."
    )
    parser.add_argument("code", help="rule code (AOTI001) or name (deprecated-aot-compile)")
    args = parser.parse_args(argv)
    rule = RULES_BY_CODE.get(args.code.upper()) or RULES_BY_NAME.get(args.code)
    if rule is None:
        _error(f"unknown rule `{args.code}`; `aoti-lint rules` lists them")
        return EXIT_ERROR
    sys.stdout.write(rule_markdown(rule))
    return EXIT_CLEAN


def _rules_command(argv: list[str]) -> int:
    import json

    from aoti_lint.rules import ALL_RULES
    from aoti_lint.usage import Parser

    parser = Parser(formatter_class=help_formatter(), prog="aoti-lint rules", description="List every rule.")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    if args.output_format == "json":
        rows = [
            {
                "code": r.code,
                "name": r.name,
                "summary": r.summary,
                "severity": r.severity.value,
                "fix": r.fix_availability,
                "file_kinds": sorted(r.file_kinds),
                "url": r.url(),
            }
            for r in ALL_RULES
        ]
        print(json.dumps(rows, indent=2))
        return EXIT_CLEAN
    for rule in ALL_RULES:
        fix = "[*]" if rule.fix_availability != "never" else "   "
        print(f"{rule.code} {fix} {rule.name:<28} {rule.summary}")
    return EXIT_CLEAN


class _StdinEcho:
    """stdin under --fix: stdout must carry code whatever happens, since an editor replaces its buffer with it."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.written = False

    def write(self, code: bytes) -> None:
        self.written = True
        sys.stdout.buffer.write(code)
        sys.stdout.flush()

    def fallback(self) -> None:
        """On any error before the code went out: the input, unchanged."""
        if not self.written:
            self.write(self.data)


# The cyclic garbage collector's first threshold (CPython's default: 700 allocations). A run allocates
# millions of short-lived syntax-tree nodes, freed by reference counting, and the default makes the collector
# scan the young objects every 700 of them, for nothing. mypy raises it to the same figure for the same reason; the
# price is a higher peak of memory (benchmarks/RESULTS.md).
GC_THRESHOLD = (200_000, 30, 30)


class _FewerCollections:
    def __enter__(self) -> None:
        import gc

        self.previous = gc.get_threshold()
        gc.set_threshold(*GC_THRESHOLD)

    def __exit__(self, *exc: object) -> None:
        import gc

        gc.set_threshold(*self.previous)


def _check_command(argv: list[str]) -> int:
    parser = check_parser()
    args = parser.parse_args(argv)
    stdin = Path("-") in args.paths or (args.stdin_filename is not None and not args.paths)
    if not (stdin and (args.fix or args.fix_only) and not args.diff) or len(args.paths) > 1:
        return _check(parser, args, None)
    echo = _StdinEcho(sys.stdin.buffer.read())
    try:
        code = _check(parser, args, echo)
    except BaseException:
        echo.fallback()
        raise
    if code == EXIT_ERROR:
        echo.fallback()
    return code


def _check(parser: argparse.ArgumentParser, args: Any, echo: _StdinEcho | None) -> int:
    """``parser``: the one that parsed ``args``, which says a usage error."""
    from aoti_lint.report import ReportContext, render
    from aoti_lint.settings.config import ConfigError

    if args.watch:
        return _watch(parser, args)

    if args.exit_zero and args.exit_non_zero_on_fix:
        parser.error("--exit-zero and --exit-non-zero-on-fix cannot be used together")
    if args.diff and (args.show_fixes or args.statistics):
        parser.error("--diff cannot be used with --show-fixes or --statistics")
    cwd = Path.cwd()
    try:
        settings = _settings(args, cwd)
    except ConfigError as exc:
        _error(str(exc))
        return EXIT_ERROR
    if args.show_files or args.show_settings:
        if args.show_files and args.show_settings:
            parser.error("--show-files and --show-settings cannot be used together")
        from aoti_lint.show import show_files, show_settings

        return (show_files if args.show_files else show_settings)(args.paths or [Path(".")], settings)
    if args.add_noqa:
        if args.fix or args.fix_only or args.diff or Path("-") in args.paths or args.stdin_filename is not None:
            parser.error("--add-noqa cannot be used with --fix, --diff or stdin")
        return _add_noqa(args, settings, cwd)

    from aoti_lint.report import FORMATS_WITH_EDITS
    from aoti_lint.run.lint import lint_paths
    from aoti_lint.settings.run_options import FixOptions

    fix = FixOptions(
        apply=bool(args.fix) or args.fix_only or args.diff,
        unsafe=bool(args.unsafe_fixes),
        write=not args.diff,
        edits=settings.output_format in FORMATS_WITH_EDITS,
    )
    stdin = Path("-") in args.paths or (args.stdin_filename is not None and not args.paths)
    stdin_code = b""
    if stdin:
        from aoti_lint.read.files import force_excluded
        from aoti_lint.run.lint import lint_stdin

        if len(args.paths) > 1:
            parser.error("`-` (stdin) cannot be combined with other paths")
        stdin_code = echo.data if echo is not None else sys.stdin.buffer.read()
        if args.stdin_filename is not None and force_excluded(cwd / args.stdin_filename, settings):
            # An editor or pre-commit passed an excluded file: hand the code back untouched, report nothing.
            if echo is not None:
                echo.write(stdin_code)
            return EXIT_CLEAN
        run, stdin_code = lint_stdin(stdin_code, args.stdin_filename, settings, cwd, fix)
    else:
        from aoti_lint.settings.run_options import Execution

        cache_dir = None
        if not args.no_cache:
            from aoti_lint.run.cache import default_cache_dir

            cache_dir = args.cache_dir or default_cache_dir(settings)
        paths = args.paths or [Path(".")]
        run = lint_paths(paths, settings, cwd, fix, Execution(jobs=args.jobs, cache_dir=cache_dir))

    for error in run.errors:
        _error(f"{error.path}: {error.message}")
        if args.verbose and error.detail:
            print(error.detail, file=sys.stderr)
    if run.notes:
        from aoti_lint.report import printable

        for note in run.notes:
            print(f"warning: {printable(f'{note.path}: {note.message}')}", file=sys.stderr)
    if args.verbose:
        print(f"debug: Checked {run.files_checked} file{'s' if run.files_checked != 1 else ''}", file=sys.stderr)
    nothing_checked = not stdin and not run.files_checked and not run.errors
    if nothing_checked:
        print("warning: No Python files found under the given path(s)", file=sys.stderr)
    fixed = sum(run.fixed.values())

    if args.diff:
        from aoti_lint.report.diff import print_diff_summary, unified_diffs

        _write_output(unified_diffs(run.changes), args.output_file)
        if not args.quiet:
            print_diff_summary(fixed, run.findings, fix.unsafe)
        # A fix that could not be built is a change not shown: the same exit as a diff.
        return EXIT_ERROR if run.errors else (EXIT_FINDINGS if run.changes or run.notes else EXIT_CLEAN)

    context = ReportContext(
        cwd=cwd,
        format=settings.output_format,
        # "All checks passed!" only when some file was checked and nothing went wrong.
        quiet=args.quiet or (not run.findings and not fixed and (nothing_checked or bool(run.errors))),
        fixed=run.fixed,
        show_fixes=args.show_fixes,
        fix_mode=fix.apply,
        unsafe_fixes=fix.unsafe,
        errors=len(run.errors),
        written=tuple(run.changes) if fix.write and not stdin else (),
    )
    # With --fix on stdin, as with ruff, stdout carries the fixed code and the report goes to stderr.
    code_to_stdout = stdin and fix.apply
    if args.output_file is None and settings.output_format in ("concise", "full"):
        from aoti_lint.report.colour import wanted

        context.colour = wanted(sys.stderr if code_to_stdout else sys.stdout)
    if stdin:
        context.texts = {finding.path: stdin_code.decode("utf-8", errors="replace") for finding in run.findings}
    if code_to_stdout and echo is not None:
        echo.write(echo.data if run.errors else stdin_code)
    findings = [] if args.fix_only else run.findings
    if args.fix_only:
        text = "" if args.quiet else f"Fixed {fixed} error{'s' if fixed != 1 else ''}.\n"
    elif args.statistics:
        from aoti_lint.report.statistics import render_statistics

        text = render_statistics(findings, fix.unsafe)
    else:
        text = render(findings, context)
    if code_to_stdout and args.output_file is None:
        sys.stderr.write(text)
    else:
        _write_output(text, args.output_file)

    if run.errors:
        return EXIT_ERROR
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    if fixed and args.exit_non_zero_on_fix:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _watch(parser: argparse.ArgumentParser, args: Any) -> int:
    """``--watch``: the same check, again after each change of the files it reads or of the configuration."""
    from aoti_lint.settings.config import ConfigError, load_settings
    from aoti_lint.watch import watch

    stdin = Path("-") in args.paths or args.stdin_filename is not None
    if stdin or args.diff or args.add_noqa or args.show_files or args.show_settings:
        parser.error("--watch cannot be used with stdin, --diff, --add-noqa or --show-*")
    once = _args_with(args, watch=False)
    cwd = Path.cwd()

    def settings() -> Any:
        try:
            return _settings(args, cwd)
        except ConfigError:
            return load_settings(None, cwd, isolated=True)  # the run itself says what is wrong

    return watch(args.paths or [Path(".")], settings, lambda: _check(parser, once, None))


def _settings(args: Any, cwd: Path) -> Any:
    """The run's settings: the configuration file found from ``cwd`` (or named), then the command line's."""
    from aoti_lint.report import FORMATS
    from aoti_lint.settings.config import load_settings

    return apply_cli_settings(load_settings(args.config, cwd, formats=tuple(FORMATS), isolated=args.isolated), args)


def _args_with(args: Any, **changes: object) -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(**{**vars(args), **changes})


def _add_noqa(args: Any, settings: Any, cwd: Path) -> int:
    """``--add-noqa``: lint, then a directive on the line of each finding; what was done on stderr, as ruff says it."""
    from aoti_lint.add_noqa import add_noqa
    from aoti_lint.run.lint import lint_paths
    from aoti_lint.settings.run_options import Execution

    cache_dir = None
    if not args.no_cache:
        from aoti_lint.run.cache import default_cache_dir

        cache_dir = args.cache_dir or default_cache_dir(settings)
    run = lint_paths(args.paths or [Path(".")], settings, cwd, None, Execution(jobs=args.jobs, cache_dir=cache_dir))
    added = add_noqa(run.findings, cwd)
    for error in [*run.errors, *added.errors]:
        _error(f"{error.path}: {error.message}")
    for skipped in added.skipped:
        from aoti_lint.report import printable

        print(f"warning: no noqa directive added: {printable(skipped)}", file=sys.stderr)
    if not args.quiet:
        count = added.directives
        print(f"Added {count} noqa directive{'s' if count != 1 else ''}.", file=sys.stderr)
    return EXIT_ERROR if run.errors or added.errors else EXIT_CLEAN


def _write_output(text: str, output_file: Path | None) -> None:
    if output_file is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from aoti_lint.fixes.safe_write import write_report

    try:
        write_report(output_file, text.encode("utf-8", "backslashreplace"))
    except OSError as exc:
        raise OutputError(f"{output_file}: cannot write the report: {exc.strerror or exc}") from None
