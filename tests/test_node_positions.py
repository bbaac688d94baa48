"""``NodePositions`` gives every node the range libcst's ``PositionProvider`` gives it.

Every finding's line and column, and every span a fix or a flow summary records, comes from it: a difference
on any node of any fixture fails here rather than as a finding moved by a line.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from aoti_lint.fixes.node_positions import NodePositions
from tests.helpers import libcst_modules

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parent.parent

# Line endings and ends of file that code generation handles apart: each changes how lines are counted.
TEXTS = {
    "no trailing newline": "import os\nos.environ['A'] = '1'",
    "windows line endings": "import os\r\n\r\ndef f(x):\r\n    return (x +\r\n        1)\r\n",
    "old mac line endings": "x = 1\ry = [\r  2,\r]\r",
    "mixed endings and a continuation": "a = 1 + \\\n  2\r\nb = '''\r\nq\n'''\n",
    "empty": "",
    "only a comment": "# nothing\n",
    "indented blocks and decorators": "@d\nclass A:\n\n    @p\n    def f(self):\n        if x:\n            pass\n",
    "unicode": "s = 'héllo' + \"日本\"  # ü\nt = f'{s!r:>{10}}'\n",
}


def _assert_same(module: cst.Module, where: object) -> int:
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = NodePositions(module)
    assert set(positions) == set(expected), where
    for node, code_range in expected.items():
        assert positions[node] == code_range, (where, type(node).__name__, code_range, positions[node])
    return len(expected)


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_positions_are_libcst_own_on_tricky_texts(name):
    _assert_same(cst.parse_module(TEXTS[name]), name)


def test_positions_are_libcst_own_on_every_fixture_and_a_large_module():
    paths = [*sorted(FIXTURES.rglob("*.py")), REPO / "aoti_lint" / "rules" / "debug_inductor_config.py"]
    checked = nodes = 0
    for path, module in libcst_modules(paths):
        nodes += _assert_same(module, path)
        checked += 1
    assert checked > 50 and nodes > 10_000


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_the_parsed_text_is_the_module_code_on_tricky_texts(name):
    """The text stands for ``module.code`` (the codemod reads lines from it without a code generation):
    libcst's round trip gives the text back exactly, but for the last line end of a file whose lines end in a lone
    "\r", which it drops; the rows the rules count are the same either way (a final empty piece is no row)."""
    text = TEXTS[name]
    code = cst.parse_module(text).code
    assert code == text or (text.endswith("\r") and not text.endswith("\r\n") and code == text[:-1])


def test_the_parsed_text_is_the_module_code_on_every_fixture():
    paths = sorted(FIXTURES.rglob("*.py"))
    checked = 0
    for path, module in libcst_modules(paths):
        assert module.code == path.read_text(), path
        checked += 1
    assert checked > 50
