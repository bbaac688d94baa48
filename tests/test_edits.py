from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aoti_lint.diagnostics import Edit, Position
from aoti_lint.fixes.edits import apply_edits, edits_between, overlaps

LINES = st.lists(st.sampled_from(["a\n", "bb\n", "x = 1\r\n", "\n", "ccc", "\x0cform feed\n", "é\n"]), max_size=12)


@given(LINES, LINES)
def test_edits_between_round_trips(before_lines, after_lines):
    before, after = "".join(before_lines), "".join(after_lines)
    assert apply_edits(before, edits_between(before, after)) == after


def test_apply_edits_in_one_line_and_across_lines():
    text = "import torch\nx = torch._export.aot_load(p, 'cpu')\n"
    edits = [
        Edit("torch._inductor.aoti_load_package", Position(2, 5), Position(2, 27)),
        Edit("(p)", Position(2, 27), Position(2, 37)),
    ]
    assert apply_edits(text, edits) == "import torch\nx = torch._inductor.aoti_load_package(p)\n"


def test_overlapping_edits_are_refused():
    a = Edit("x", Position(1, 1), Position(1, 5))
    b = Edit("y", Position(1, 3), Position(1, 7))
    assert overlaps([a], [b])
    with pytest.raises(ValueError):
        apply_edits("0123456789", [a, b])
    assert not overlaps([a], [Edit("z", Position(1, 5), Position(1, 6))])
