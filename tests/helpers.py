"""In-process helpers: lint a snippet with the real engine; read a rule fixture's expectations."""

from __future__ import annotations

import contextlib
import glob
import io
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from aoti_lint.cli import main
from aoti_lint.read.source import SourceFile, file_kind
from aoti_lint.rules import ALL_RULES
from aoti_lint.run.engine import check_source
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.project_pass import check_project
from aoti_lint.settings.config import Settings


def lint_text(
    text: str,
    filename: str = "example.py",
    select: tuple[str, ...] = ("ALL",),
    rules=ALL_RULES,
    prefilter=True,
    build_edits=True,
):
    settings = Settings(root=Path("."), select=select).with_enabled()
    enabled = [rule for rule in rules if rule.code in settings.enabled]
    kind = file_kind(Path(filename)) or "python"
    enabled = [rule for rule in enabled if kind in rule.file_kinds]
    source = SourceFile(path=Path(filename), display_path=filename, kind=kind, data=text.encode("utf-8"))
    result = check_source(source, FileContext.of(enabled), prefilter=prefilter, build_edits=build_edits)
    # Project rules see this one file as the whole project.
    findings, errors = check_project(enabled, [result.project] if result.project else [])
    result.findings.extend(findings)
    result.errors.extend(errors)
    return result


_FINDING_LINE = re.compile(r"^\S.*?:\d+:\d+: (AOTI\d{3}) ")


def by_code(output: str) -> dict[str, str]:
    """Concise CLI output grouped by rule code, each group's lines in output order."""
    groups: dict[str, str] = {}
    for line in output.splitlines(keepends=True):
        match = _FINDING_LINE.match(line)
        assert match is not None, line
        groups[match.group(1)] = groups.get(match.group(1), "") + line
    return groups


def expected_by_code(fixture: Path) -> dict[str, str]:
    """A rule fixture's expectations (``tests/fixtures/rules/<CODE>/``), one file per code: ``X.py.<CODE>.expected``
    next to a file, ``expected.<CODE>.txt`` in a project directory. An empty file: silent for that code."""
    if fixture.is_dir():
        files = fixture.glob("expected.AOTI*.txt")
        return {path.name.split(".")[1]: path.read_text() for path in sorted(files)}
    files = fixture.parent.glob(f"{glob.escape(fixture.name)}.AOTI*.expected")
    return {path.name.split(".")[-2]: path.read_text() for path in sorted(files)}


def reported(expected: dict[str, str]) -> dict[str, str]:
    """The codes of ``expected_by_code`` that report something, as ``by_code`` gives them."""
    return {code: text for code, text in expected.items() if text}


def run_main(
    *args: str, cwd: Path | None = None, stdin: str | None = None, env: dict | None = None, shared_cache: bool = True
):
    """The real command, ``aoti_lint.cli.main(argv)``, run in this process: what ``tests.conftest.run_cli``
    returns for a fresh process (exit code, stdout, stderr as text), without the half second or more that
    starting Python and importing libcst costs per run. Tests about the process itself (the entry point,
    signals, crashes, what a run imports) start one instead.

    As the process would, a run sees ``env`` on top of the test's environment, reads stdin as bytes, writes
    through strict UTF-8 text streams that have a ``buffer``, and starts with no state from an earlier run
    (aoti_lint's memoised functions are cleared)."""
    from tests.conftest import CLI_CACHE_DIR

    environment = {"AOTI_LINT_CACHE_DIR": str(CLI_CACHE_DIR)} if shared_cache else {}
    environment.update(env or {})
    saved_environ = dict(os.environ)
    if "AOTI_LINT_OUTPUT_FORMAT" not in (env or {}):
        os.environ.pop("AOTI_LINT_OUTPUT_FORMAT", None)
    os.environ.update(environment)
    out, err = io.BytesIO(), io.BytesIO()
    streams = (
        io.TextIOWrapper(io.BytesIO((stdin or "").encode()), encoding="utf-8"),
        io.TextIOWrapper(out, encoding="utf-8", errors="strict", write_through=True),
        io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True),
    )
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    previous = Path.cwd()
    _clear_memos()
    try:
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = streams
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: --help, --version, usage errors
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if isinstance(exc.code, str):
                print(exc.code, file=sys.stderr)
        with contextlib.suppress(ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(previous)
        os.environ.clear()
        os.environ.update(saved_environ)
        _clear_memos()
    # Decoded as subprocess.run(text=True) decodes a child's output: universal newlines.
    text = [stream.getvalue().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n") for stream in (out, err)]
    return subprocess.CompletedProcess(["aoti-lint", *args], code, text[0], text[1])


def _clear_memos() -> None:
    """Forget what aoti_lint memoised (file lines for snippets, the repository root, the last parse)."""
    for name, module in list(sys.modules.items()):
        if name == "aoti_lint" or name.startswith(("aoti_lint.", "codemods")):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def run_fixing_main(*args: str, cwd: Path, stdin: str | None = None):
    """``python -m tests.reliability_cli ARGS`` (the command with the test-only fixing rule), in this process and
    with the environment that command gets: no shared cache."""
    from aoti_lint.run import lint
    from tests.reliability_cli import FixingRuleSet

    original = lint.RuleSet
    lint.RuleSet = FixingRuleSet  # as tests/reliability_cli.py does
    try:
        return run_main(*args, cwd=cwd, stdin=stdin, shared_cache=False)
    finally:
        lint.RuleSet = original


def libcst_modules(paths: Iterable[Path]) -> Iterator[tuple[Path, Any]]:
    """Each file's libcst module, for the tests that compare our reading of a tree with libcst's own; a file
    libcst cannot parse (a syntax-error fixture) is left out."""
    import libcst as cst

    for path in paths:
        try:
            module = cst.parse_module(path.read_text())
        except cst.ParserSyntaxError:
            continue
        yield path, module


def default_ctrl_c() -> None:
    """``preexec_fn`` for a child a test stops with SIGINT: Ctrl-C's default action, as a command started from a
    terminal has. A child of a shell's background job (`(pytest &)`) inherits SIGINT ignored, and Python then
    installs no KeyboardInterrupt handler: the test would wait on a run that never stops."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def read_terminal(descriptor: int) -> bytes:
    """Everything a child wrote to the pseudo-terminal whose leader is ``descriptor``, until it closed it."""
    output = b""
    while True:
        try:
            chunk = os.read(descriptor, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        output += chunk
    return output
