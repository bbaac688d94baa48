"""Property-based and mutation fuzzing: no crash, and --fix never breaks a file or touches what it did not fix.

CI runs a fixed, derandomized set of examples: the full suite all of them, the fast suite (`-m "not slow"`) the
first few of each property. For a longer hunt: AOTI_LINT_FUZZ_EXAMPLES=5000 pytest -k fuzz (random seeds then,
and hypothesis prints the seed of any failure).
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import random
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aoti_lint.cli import main
from aoti_lint.read.files import Candidate
from aoti_lint.read.source import SourceFile
from aoti_lint.rules import ALL_RULES, RULES_BY_CODE
from aoti_lint.rules.syntax_error import SyntaxErrorRule
from aoti_lint.run.disk import lint_file, read_source
from aoti_lint.run.engine import check_source
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.fixing import process_source
from aoti_lint.run.lint import lint_paths
from aoti_lint.settings.config import Settings
from aoti_lint.settings.run_options import FixOptions
from tests.conftest import FIXTURES
from tests.reliability_sources import RenameDeprecatedLoad, aoti_sources, offset_of

_EXAMPLES = int(os.environ.get("AOTI_LINT_FUZZ_EXAMPLES", "0"))
FUZZ = settings(
    max_examples=_EXAMPLES or 60,
    derandomize=not _EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FIX_ALL = FixOptions(apply=True, unsafe=True)


def examples(full: int) -> pytest.MarkDecorator:
    """Each property twice: a few examples in the fast suite, the full count marked slow (the full suite)."""
    return pytest.mark.parametrize(
        "examples", [pytest.param(4, id="few"), pytest.param(full, id="full", marks=pytest.mark.slow)]
    )


def fuzz(strategy, examples: int, check) -> None:
    settings(FUZZ, max_examples=examples)(given(strategy)(check))()


# What a deprecated reference's span may hold: a dotted name, possibly spaced or continued.
REFERENCE_SPAN = re.compile(r"[\w. ]*(aot_compile|aot_load|compile_so|load_so)")


def _source(data: bytes, path: Path = Path("fuzz.py")) -> SourceFile:
    return SourceFile(path=path, display_path=path.name, kind="python", data=data)


def _fixable_spans(text: str, findings) -> list[tuple[int, int]]:
    return [
        (offset_of(text, edit.start), offset_of(text, edit.end))
        for finding in findings
        if finding.fix_applies(unsafe=True)
        for edit in finding.fix.edits
    ]


@contextlib.contextmanager
def _workdir():
    previous = Path.cwd()
    with tempfile.TemporaryDirectory() as directory:
        os.chdir(directory)
        try:
            yield Path(directory).resolve()
        finally:
            os.chdir(previous)


@examples(_EXAMPLES or 60)
def test_fuzz_generated_sources_lint_without_crash_and_point_at_the_reference(examples):
    fuzz(aoti_sources(), examples, _lints_without_crash_and_points_at_the_reference)


def _lints_without_crash_and_points_at_the_reference(data):
    ast.parse(data)  # the generator's promise: valid Python
    source = _source(data)
    result = check_source(source, FileContext.of(ALL_RULES))
    assert result.errors == []
    assert [f for f in result.findings if f.code == SyntaxErrorRule.code] == []
    text = source.text
    for finding in result.findings:
        span = text[offset_of(text, finding.start) : offset_of(text, finding.end)]
        if finding.code in ("AOTI001", "AOTI002"):
            assert REFERENCE_SPAN.fullmatch(span), (finding, span)


@examples(_EXAMPLES or 60)
def test_fuzz_fix_with_every_rule_parses_is_idempotent_and_keeps_the_rest(examples):
    """Generic over whatever fixes the registered rules return: it bites as soon as a rule gains a fix."""
    fuzz(aoti_sources(), examples, _fix_with_every_rule_parses_is_idempotent_and_keeps_the_rest)


def _fix_with_every_rule_parses_is_idempotent_and_keeps_the_rest(data):
    with _workdir() as root:
        path = root / "fuzz.py"
        path.write_bytes(data)
        options = Settings(root=root).with_enabled()
        before = check_source(_source(data, path), FileContext.of(ALL_RULES))
        first = lint_paths([path], options, root, FIX_ALL)
        assert first.errors == []
        fixed = path.read_bytes()
        if fixed == data:
            assert first.changes == {}
            return
        ast.parse(fixed)
        assert fixed.startswith(b"\xef\xbb\xbf") == data.startswith(b"\xef\xbb\xbf")
        original_text, fixed_text = _source(data).text, _source(fixed).text
        spans = _fixable_spans(original_text, before.findings)
        assert spans, "the file changed although no finding had a fix"
        head, tail = min(start for start, _ in spans), max(end for _, end in spans)
        assert fixed_text.startswith(original_text[:head])
        assert fixed_text.endswith(original_text[tail:])
        if "\n" not in original_text.replace("\r\n", ""):
            assert "\n" not in fixed_text.replace("\r\n", ""), "fixes brought bare newlines into a CRLF file"
        second = lint_paths([path], options, root, FIX_ALL)
        assert second.errors == [] and second.changes == {}
        assert path.read_bytes() == fixed


@examples(_EXAMPLES or 60)
def test_fuzz_fix_pipeline_changes_exactly_the_edited_nodes(examples):
    """With a test rule whose edits are known, the written bytes must be the original with only those spans
    replaced: same encoding, BOM, newlines, and every other byte."""
    fuzz(aoti_sources(), examples, _fix_pipeline_changes_exactly_the_edited_nodes)


def _fix_pipeline_changes_exactly_the_edited_nodes(data):
    rules = (SyntaxErrorRule, RenameDeprecatedLoad)
    with _workdir() as root:
        path = root / "fuzz.py"
        path.write_bytes(data)
        source = read_source(Candidate(path, "python", explicit=True), root)
        text = source.text
        spans = sorted(_fixable_spans(text, check_source(source, FileContext.of(rules)).findings))
        for start, end in spans:
            assert REFERENCE_SPAN.fullmatch(text[start:end]), text[start:end]
        expected = text
        for start, end in reversed(spans):
            expected = expected[:start] + RenameDeprecatedLoad.REPLACEMENT + expected[end:]

        outcome = lint_file(source, FileContext.of(rules), FIX_ALL)
        assert outcome.errors == []
        assert outcome.fixed == len(spans)
        written = path.read_bytes()
        assert written == source.with_text(expected).data
        ast.parse(written)
        again = lint_file(read_source(Candidate(path, "python", explicit=True), root), FileContext.of(rules), FIX_ALL)
        assert again.fixed == 0 and again.errors == []
        assert [f.code for f in again.findings if f.code == "AOTI002"] == []


# The full suite only: hypothesmith's strategies cost seconds before the first example (its grammar strategy
# compiles a LALR parser of all Python); the fast suite fuzzes with the AOTI-shaped generator above. Built in
# the test, not at import, so that no session pays for them at collection.
@pytest.mark.slow
def test_fuzz_arbitrary_python_from_hypothesmith():
    # optional: a generator of arbitrary Python from the grammar
    hypothesmith = pytest.importorskip("hypothesmith", reason="hypothesmith is not installed (optional)")
    strategy = st.one_of(hypothesmith.from_node(), hypothesmith.from_grammar())
    fuzz(strategy, max(_EXAMPLES // 2, 40), _arbitrary_python)


def _arbitrary_python(code):
    """Arbitrary valid Python, with the AOTI tokens prepended so every file reaches the parser and the rules."""
    data = ("import torch._export\n" + code).encode("utf-8", "surrogatepass")
    try:
        ast.parse(data)
    except (SyntaxError, ValueError):
        return  # hypothesmith's grammar strategy sometimes yields code CPython rejects
    result = check_source(_source(data), FileContext.of(ALL_RULES))
    assert result.errors == []
    assert [f for f in result.findings if f.code == SyntaxErrorRule.code] == []
    outcome = process_source(_source(data), FileContext.of(ALL_RULES), FixOptions(apply=True, unsafe=True, write=False))
    assert outcome.errors == []
    if outcome.fixed_text is not None:
        ast.parse(outcome.fixed_text)


# ---- mutation fuzzing of the fixture corpus ----------------------------------------------------------------

CORPUS = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and not p.name.endswith(".expected"))
MUTATIONS = ("delete", "duplicate", "swap", "bytes", "truncate")


@st.composite
def mutated_fixtures(draw) -> tuple[Path, bytes]:
    path = draw(st.sampled_from(CORPUS))
    lines = path.read_bytes().splitlines(keepends=True) or [b""]
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(MUTATIONS))
        at = draw(st.integers(0, len(lines) - 1))
        if kind == "delete" and len(lines) > 1:
            del lines[at]
        elif kind == "duplicate":
            lines.insert(at, lines[at])
        elif kind == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[at], lines[other] = lines[other], lines[at]
        elif kind == "bytes":
            noise = draw(st.binary(min_size=1, max_size=8))
            cut = draw(st.integers(0, len(lines[at])))
            lines[at] = lines[at][:cut] + noise + lines[at][cut:]
        elif kind == "truncate":
            lines[at] = lines[at][: draw(st.integers(0, len(lines[at])))]
    return path, b"".join(lines)


def _run_main(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def _check_run(code: int, out: str, err: str) -> list[dict]:
    assert code in (0, 1, 2), (code, err)
    assert "Traceback" not in err
    assert all(line.startswith("error: ") for line in err.splitlines()), err
    findings = json.loads(out)
    assert {item["code"] for item in findings} <= set(RULES_BY_CODE)
    assert code == (2 if err else 1 if findings else 0)
    return findings


@examples(_EXAMPLES or 60)
def test_fuzz_mutated_fixtures_never_crash(examples):
    """Deleted, duplicated, swapped lines and random bytes: findings or AOTI000, exit 0/1/2, never a crash;
    --fix writes only files that still parse, and never one with a syntax error."""
    fuzz(mutated_fixtures(), examples, _mutated_fixture_never_crashes)


def _mutated_fixture_never_crashes(mutated):
    original, data = mutated
    with _workdir() as root:
        path = root / original.name
        path.write_bytes(data)
        findings = _check_run(*_run_main("--isolated", "--output-format", "json", path.name))
        broken = any(item["code"] == SyntaxErrorRule.code for item in findings)
        _check_run(*_run_main("--isolated", "--output-format", "json", "--fix", "--unsafe-fixes", path.name))
        after = path.read_bytes()
        if broken:
            assert after == data
        elif after != data and path.suffix == ".py":
            ast.parse(after)


def test_mutated_corpus_through_the_real_command(cli, tmp_path):
    """The same corpus, mutated with a fixed seed, linted by one real process: documented exit code, one
    `error:` line per unreadable file, no traceback."""
    assert CORPUS
    rng = random.Random(9)
    for index, path in enumerate(CORPUS * 3):
        lines = path.read_bytes().splitlines(keepends=True) or [b""]
        at = rng.randrange(len(lines))
        lines[at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6))) + lines[at]
        if index % 3 == 2:
            rng.shuffle(lines)
        (tmp_path / f"m{index}_{path.name}").write_bytes(b"".join(lines))
    result = cli("--isolated", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode in (0, 1, 2)
    assert "Traceback" not in result.stderr
    findings = json.loads(result.stdout)
    assert findings, "the mutated corpus should still hold findings"
    assert result.returncode == (2 if result.stderr else 1)
