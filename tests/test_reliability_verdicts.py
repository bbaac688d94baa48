"""Hostile input has one verdict: the same findings and exit code in every output format and with ``--diff`` and
``--fix`` for every file CPython reads (a file libcst cannot rewrite keeps its findings, its fixes unavailable and
said so); the screen reads names as CPython does (PEP 263 cookies, NFKC identifiers); a file past
``parse.MAX_LIBCST_BYTES`` is read at a cost that grows with the statements the rules read (libcst is given only
those)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from aoti_lint.fixes import parse
from aoti_lint.report import FORMATS
from tests.helpers import run_main

# A call with a fix to build (a load gets none without its compile): the verdicts below are about building it.
COMPILE = "torch._export.aot_compile(model, (example,))\n"


def _verdicts(
    tmp_path: Path, name: str, data: bytes, fix: bool = True
) -> dict[str, tuple[int, list[tuple[str, int]] | None]]:
    """Each way of running the command on the file: its exit code and, where it shows them as JSON (or for
    ``--diff`` and ``--fix``, a JSON run after it), its findings (code, row)."""
    found: dict[str, tuple[int, list[tuple[str, int]] | None]] = {}
    ways = [
        *(("--output-format", fmt) for fmt in FORMATS),
        ("--diff", "--unsafe-fixes"),
        *([("--fix", "--unsafe-fixes")] if fix else []),
    ]
    for way in ways:
        folder = tmp_path / "-".join(way).strip("-").replace("--", "")
        folder.mkdir()
        (folder / name).write_bytes(data)
        run = run_main("--no-cache", name, *way, cwd=folder)
        assert "error:" not in run.stderr and "Traceback" not in run.stderr, (way, run.stderr)
        rows = _rows(run.stdout) if way[-1] == "json" else None
        if way[0] in ("--diff", "--fix"):
            assert (folder / name).read_bytes() == data  # never written where the fix is unavailable, nor by --diff
            rows = _rows(run_main("--no-cache", name, "--output-format", "json", cwd=folder).stdout)
        found[" ".join(way)] = (run.returncode, rows)
    return found


def _rows(out: str) -> list[tuple[str, int]]:
    return sorted((item["code"], item["location"]["row"]) for item in json.loads(out))


def _one_verdict(found: dict[str, tuple[int, list[tuple[str, int]] | None]], expected: list[tuple[str, int]]) -> None:
    assert {code for code, _ in found.values()} == {1}, found
    assert len(found) > 9
    for way, (_, rows) in found.items():
        assert rows is None or rows == expected, way


def test_a_deep_but_valid_module_has_one_verdict_in_every_format_and_fix_mode(tmp_path):
    """180 nested dicts (CPython takes 200): the codemod's libcst recursion cannot build the fix; json, sarif,
    --diff and --fix used to drop the finding and exit 2."""
    depth = 180
    data = ("import torch\nx = " + "{1: " * depth + "1" + "}" * depth + "\n" + COMPILE).encode()
    found = _verdicts(tmp_path, "deep.py", data)
    _one_verdict(found, [("AOTI001", 3)])
    run = run_main("--no-cache", "deep.py", "--output-format", "json", cwd=tmp_path / "output-format-json")
    assert run.returncode == 1
    assert "warning: deep.py: fixes unavailable: too deeply nested for libcst to rewrite" in run.stderr


def _stdlib_webbrowser() -> Path:
    found = sorted(Path(sys.prefix).glob("lib/python3*/webbrowser.py")) or sorted(
        Path(p) for p in map(str, Path("/root/.pyenv/versions").glob("3.11*/lib/python3.11/webbrowser.py"))
    )
    import webbrowser

    return found[0] if found else Path(webbrowser.__file__)


def test_a_module_libcst_does_not_read_as_python_keeps_its_finding(tmp_path):
    """webbrowser.py (CPython 3.11) holds `except (...) :`, which libcst gives back as `except (...):`: its
    positions are not the text's, so the finding comes from the statements the rules read, and no fix."""
    text = _stdlib_webbrowser().read_text(encoding="utf-8")
    data = (text + "import torch\n" + COMPILE).encode()
    rows = text.count("\n") + 2
    found = _verdicts(tmp_path, "wb.py", data)
    _one_verdict(found, [("AOTI001", rows)])


def test_a_large_file_is_read_from_ast_and_never_parsed_with_libcst(tmp_path, monkeypatch):
    """A file past MAX_LIBCST_BYTES: its findings in every format and with --diff, its fixes unavailable (libcst
    would rewrite the whole file), and libcst never parses it. Counted, not timed."""
    import libcst

    parsed: list[str] = []
    original = libcst.parse_module

    def counting(text, *args, **kwargs):
        parsed.append(text)
        return original(text, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", counting)
    lines = parse.MAX_LIBCST_BYTES // 6 + 10
    body = "import torch\npath = 'm' + '.so'\n" + "x = 1\n" * lines + "model = torch._export.aot_load(path, 'cpu')\n"
    (tmp_path / "big.py").write_text(body)
    for way in (("--output-format", "concise"), ("--output-format", "json"), ("--diff",)):
        run = run_main("--no-cache", "--jobs", "1", "big.py", *way, cwd=tmp_path)
        assert run.returncode == 1, way
        assert way[0] == "--diff" or f"big.py:{lines + 3}:9: AOTI002" in run.stdout or _rows(run.stdout)
        assert "fixes unavailable: the file is too large for libcst to rewrite" in run.stderr
    assert not parsed


def test_a_large_file_has_one_verdict_in_every_format(tmp_path):
    lines = parse.MAX_LIBCST_BYTES // 6 + 10
    data = ("import torch\n" + "x = 1\n" * lines + COMPILE).encode()
    found = _verdicts(tmp_path, "big.py", data)
    _one_verdict(found, [("AOTI001", lines + 2)])


FULLWIDTH = "import torch\ntorch._export.aot_\uff43ompile(m, (x,))\n".encode()
UTF7 = b"# -*- coding: utf-7 -*-\nimport torch\ntorch.+AF8-export.aot+AF8-compile(m, (x,))\n"


def test_statements_over_libcsts_limit_are_read_from_ast_where_every_rule_the_file_wants_is(tmp_path):
    """One function past MAX_LIBCST_BYTES setting a debug switch (torch's own `symbolic_shapes.py` is such a file):
    the limit is libcst's, and AOTI201 reads the module from `ast`: its finding in every format, its fix unavailable
    (it was `not checked`, exit 2)."""
    lines = parse.MAX_LIBCST_BYTES // 14 + 10
    body = "import os\n\n\ndef setup():\n" + "    value = 1\n" * lines
    body += '    os.environ["TORCHINDUCTOR_NAN_ASSERTS"] = "1"\n'
    found = _verdicts(tmp_path, "big.py", body.encode())
    _one_verdict(found, [("AOTI201", lines + 5)])
    run = run_main("--no-cache", "big.py", cwd=tmp_path / "output-format-json")
    assert "warning: big.py: fixes unavailable: the file is too large for libcst to rewrite" in run.stderr


@pytest.mark.parametrize(("data", "row"), [(FULLWIDTH, 2), (UTF7, 3)], ids=["nfkc", "utf-7"])
def test_names_as_cpython_reads_them_are_screened_and_reported(tmp_path, data, row):
    """`aot_` and a fullwidth `c` (U+FF43) is `aot_compile` to CPython, which NFKC-normalises identifiers; a utf-7
    cookie makes `+AF8-` an underscore. The screen used to read the bytes and say "All checks passed!"."""
    from aoti_lint.entry_point import _cannot_hold_a_finding
    from aoti_lint.read.source import screen_data

    assert b"aot_compile" in screen_data(data) and b"_export" in screen_data(data)
    (tmp_path / "m.py").write_bytes(data)
    assert not _cannot_hold_a_finding(str(tmp_path / "m.py"))
    found = _verdicts(tmp_path, "m.py", data, fix=False)
    _one_verdict(found, [("AOTI001", row)])


def test_the_screen_reads_ascii_without_a_cookie_as_it_is():
    """The common path: ASCII bytes naming no coding in their first two lines are what the screen reads."""
    from aoti_lint.read.source import screen_data

    data = b"import torch\n# encoding is mentioned later\n# coding: none here\n"
    assert screen_data(data) is data
    assert screen_data(b"x = 1\n\n# -*- coding: utf-8 -*-\n") == b"x = 1\n\n# -*- coding: utf-8 -*-\n"
    latin = "# -*- coding: latin-1 -*-\nx = 'é'\n".encode("latin-1")
    assert screen_data(latin).startswith(latin)


@pytest.fixture(autouse=True)
def _no_leftovers(tmp_path):
    yield
    shutil.rmtree(tmp_path, ignore_errors=True)
