"""A finding never depends on the output format: every format reports the same findings (path, row, column where
the format has one, code) and exits with the same code, on every fixture and on every case of the corpus.

Formats that show fixes (json, json-lines, sarif) used to read some modules with libcst where the others settled
them from ``ast``; where the two readings differed, json reported what concise did not (issue 43)."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tests.corpus import FORMATS, WITHOUT_COLUMN, cases, findings, run_case, without_column
from tests.helpers import run_main

CASES = cases()
OTHER_FORMATS = [fmt for fmt in FORMATS if fmt != "concise"]


def _run(root, fmt, *extra):
    # The corpus's cases are run one by one below, each from its own root.
    result = run_main(".", "--isolated", "--extend-exclude", "corpus", "--output-format", fmt, *extra, cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, findings(fmt, result.stdout, root)


def _comparable(fmt, found):
    return without_column(found) if fmt in WITHOUT_COLUMN else found


@pytest.fixture(scope="module")
def whole_tree():
    """Every fixture in one run, concise: what the other formats are held to."""
    return _run(FIXTURES, "concise", "--no-cache")


@pytest.mark.parametrize("fmt", OTHER_FORMATS)
def test_every_fixture_in_every_format(whole_tree, fmt):
    returncode, found = whole_tree
    assert sum(found.values()) >= 200, "the parser of concise output reads the run"
    other_returncode, other = _run(FIXTURES, fmt, "--no-cache")
    expected = _comparable(fmt, found)
    assert other_returncode == returncode
    assert other - expected == {}, f"{fmt} reports what concise does not"
    assert expected - other == {}, f"concise reports what {fmt} does not"


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_every_corpus_case_in_every_format(case):
    runs = {}
    for fmt in FORMATS:
        result = run_case(case, fmt)
        assert result.returncode in (0, 1), result.stderr
        runs[fmt] = (result.returncode, findings(fmt, result.stdout, case))
    returncode, found = runs["concise"]
    for fmt in OTHER_FORMATS:
        assert runs[fmt] == (returncode, _comparable(fmt, found)), fmt


def test_a_cache_filled_by_one_format_serves_another(whole_tree, tmp_path):
    """The cache keeps findings, not a format's view of them: json (which shows fixes) fills it, concise reads it."""
    _run(FIXTURES, "json", "--cache-dir", str(tmp_path))
    assert _run(FIXTURES, "concise", "--cache-dir", str(tmp_path)) == whole_tree
