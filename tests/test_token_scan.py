"""The compiled scanners (``aoti_lint.screen.token_scan``, ``aoti_lint/screen/_token_scan.c``) answer exactly what
their Python equivalents answer: stage one's, what ``token in data`` answers, and stage one gives the same verdicts
with it and without it; the lexer of ``text_layout``, the strings and prefixes its pattern reads."""

from __future__ import annotations

import contextlib
import random
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aoti_lint.rules import ALL_RULES
from aoti_lint.rules.base import PythonRule
from aoti_lint.run.file_context import FileContext, _screen
from aoti_lint.run.prefilter import by_bytes
from aoti_lint.screen import text_layout, token_scan
from tests.conftest import REPO

compiled = pytest.importorskip(
    "aoti_lint.screen._token_scan", reason="the extension is not built here (.ci/run builds it)"
)


@pytest.fixture(autouse=True)
def extension_allowed(monkeypatch):
    """These tests are about the extension: a suite run with ``AOTI_LINT_NO_EXTENSIONS`` set still tests it."""
    monkeypatch.delenv("AOTI_LINT_NO_EXTENSIONS", raising=False)
    _screen.cache_clear()
    yield
    _screen.cache_clear()


def present(tokens: tuple[bytes, ...], data: bytes) -> int:
    """What a scanner's ``present`` gives, in Python: bit ``i`` set where ``tokens[i]`` occurs in ``data``."""
    return sum(1 << index for index, token in enumerate(tokens) if token in data)


def both(tokens: tuple[bytes, ...], data: bytes) -> tuple[int, int]:
    scanner = token_scan.scanner(tokens)
    assert scanner is not None
    return scanner.present(data), present(tokens, data)


def test_each_token_is_found_at_the_start_at_the_end_and_across_each_other():
    tokens = (b"aot", b"ot_l", b"aot_load", b"d\0", b"\xff\xfe", b"zz")
    for data in (b"aot_load", b"xaot_loa", b"ot_ld\0", b"\xff\xfe", b"d", b"", b"zzz", b"d\0aot"):
        found, expected = both(tokens, data)
        assert found == expected, data


def test_the_scanner_agrees_with_in_on_generated_tokens_and_bytes():
    rng = random.Random(2026)
    alphabet = b"aotTORCH_.so\"'Mme\0\n\xff"  # few bytes: tokens overlap, share pairs and recur
    for _ in range(20_000):
        data = bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 60)))
        tokens = tuple(
            bytes(rng.choice(alphabet) for _ in range(rng.randrange(2, 7))) for _ in range(rng.randrange(0, 10))
        )
        found, expected = both(tokens, data)
        assert found == expected, (tokens, data)


def test_sixty_four_tokens_are_scanned_and_sixty_five_are_not():
    tokens = tuple(f"t{index:02}".encode() for index in range(64))
    data = b" ".join(tokens[::3])
    assert both(tokens, data) == (present(tokens, data),) * 2
    assert both(tokens, b" ".join(tokens)) == ((1 << 64) - 1,) * 2
    assert token_scan.scanner((*tokens, b"t64")) is None


def test_the_default_screens_tokens_are_found_in_the_repository_as_in_finds_them():
    context = FileContext.of(ALL_RULES)
    screen = _screen(context.rules, context.project_rules)
    assert screen.compiled is not None and len(screen.scanned) > screen.screened > 10
    paths = [path for path in sorted(REPO.rglob("*.py")) if ".venv" not in path.parts]
    holding = 0
    for path in paths:
        data = path.read_bytes()
        found = screen.compiled.present(data)
        assert found == present(screen.scanned, data), path
        holding += found != 0
    assert len(paths) > 200 and holding > 50


def test_no_scanner_without_the_extension_or_for_a_token_shorter_than_a_pair(monkeypatch):
    assert token_scan.scanner((b"ab", b"c")) is None
    monkeypatch.setenv("AOTI_LINT_NO_EXTENSIONS", "1")
    assert token_scan.scanner((b"ab",)) is None


def test_the_extension_rejects_what_it_cannot_scan():
    with pytest.raises(ValueError, match="two bytes"):
        compiled.Scanner((b"a",), (0,))
    with pytest.raises(ValueError, match="outside"):
        compiled.Scanner((b"ab",), (1,))
    with pytest.raises(ValueError, match="one offset"):
        compiled.Scanner((b"ab",), ())
    with pytest.raises(TypeError):
        compiled.Scanner((b"ab",), (0,)).present("text")
    assert compiled.Scanner.__new__(compiled.Scanner).present(b"ab") == 0  # never initialised: scans nothing


def test_each_token_is_keyed_by_its_rarest_three_bytes():
    assert token_scan.key_offset(b"aoti_X") == 3  # `i_X`: an upper-case letter is rarer than any lower-case one
    assert token_scan.key_offset(b'"Meta"') == 0
    assert token_scan.key_offset(b"ab") == 0  # two bytes: its one pair (and the scan then looks at every pair)


def test_tokens_of_three_bytes_or_more_are_found_at_every_other_pair():
    """Each token keyed by both pairs of its three bytes (the scan's every-other-pair mode): found at even and odd
    starts, at the buffer's ends, over and inside each other."""
    rng = random.Random(7)
    alphabet = b"aotTORCH_.so\"'Mme\0\n\xff"
    for _ in range(20_000):
        data = bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        tokens = tuple(
            bytes(rng.choice(alphabet) for _ in range(rng.randrange(3, 7))) for _ in range(rng.randrange(1, 8))
        )
        if rng.random() < 0.5 and data:  # a token that the data holds, wherever it starts
            start = rng.randrange(len(data))
            tokens += (data[start : start + rng.randrange(3, 7)],) if len(data) - start >= 3 else ()
        found, expected = both(tokens, data)
        assert found == expected, (tokens, data)


@pytest.fixture(params=["compiled", "python"])
def stage_one(request, monkeypatch):
    """Stage one with the compiled scanner, then without it (``AOTI_LINT_NO_EXTENSIONS``)."""
    if request.param == "python":
        monkeypatch.setenv("AOTI_LINT_NO_EXTENSIONS", "1")
    _screen.cache_clear()
    return request.param


def is_python(rule) -> bool:
    return issubclass(rule, PythonRule)


def test_stage_one_rejects_only_what_every_rule_rejects_with_either_scanner(stage_one):
    context = FileContext.of(ALL_RULES)
    assert (_screen(context.rules, context.project_rules).compiled is not None) == (stage_one == "compiled")
    samples = [path.read_bytes() for path in sorted((REPO / "tests" / "fixtures").rglob("*")) if path.is_file()]
    samples += [example.source.encode() for rule in ALL_RULES for example in (*rule.VALID, *rule.INVALID)]
    samples += [b"", b"import os\nprint(os.sep)\n", b"x = 'impl' # Meta\n"]
    expected = [
        any(rule.could_match(data) for rule in context.rules)
        or any(rule.wants_summary(data) for rule in context.project_rules)
        for data in samples
    ]
    # Copies: what stage one remembers of the last bytes it read (``rules.base.holds``) is not reused.
    assert [context.reads(bytes(bytearray(data))) for data in samples] == expected
    assert context.reads_many([bytes(bytearray(data)) for data in samples]) == expected
    # Which rules: what the screen found and kept for each rule is what each rule's own test gives.
    for data in samples:
        copy = bytes(bytearray(data))
        if context.reads(copy):
            wanted = by_bytes(copy, context)
            assert wanted.rules == [rule for rule in context.rules if is_python(rule) and rule.could_match(data)]
            assert wanted.project_rules == [rule for rule in context.project_rules if rule.wants_summary(data)]
    assert sum(expected) > 100 and len(samples) - sum(expected) > 10


# ---- the lexer of text_layout ----------------------------------------------------------------------------------


def test_the_lexer_reads_the_strings_and_prefixes_the_pattern_reads_in_generated_texts():
    rng = random.Random(2026)
    # Quotes, escapes, line ends, comments, prefixes and braces; letters and word characters outside ASCII, of
    # every width Python stores a text in.
    pieces = ['"', "'", '"""', "'''", "\\", "\n", "\r", "#", "f", "F", "rb", "Rb", "u", "x", "_", "1", " ", "{", "}"]
    pieces += ["{{", "}}", "\u00e9", "\u00df", "\u20ac", "\u01c5", "\U0001d54f", "\U0001f600"]
    for _ in range(50_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 30)))
        assert text_layout._strings.__wrapped__(text) == text_layout._read_strings(text), repr(text)


def test_the_lexer_reads_the_repositorys_modules_as_the_pattern_reads_them():
    paths = [path for path in sorted(REPO.rglob("*.py")) if ".venv" not in path.parts]
    read = [(path, path.read_text(encoding="utf-8")) for path in paths]
    for path, text in read:
        assert text_layout._strings.__wrapped__(text) == text_layout._read_strings(text), path
    assert sum(text_layout._read_strings(text) is not None for _, text in read) > 200


def test_the_lexer_is_not_used_without_the_extension(monkeypatch):
    assert token_scan.string_lexer() is compiled.string_spans
    monkeypatch.setenv("AOTI_LINT_NO_EXTENSIONS", "1")
    assert token_scan.string_lexer() is None
    with pytest.raises(TypeError):
        compiled.string_spans(b"'bytes'")


def python_top_level_starts(text: str, spans: list[tuple[int, int]], monkeypatch) -> list[int] | None:
    with monkeypatch.context() as patch:
        patch.setenv("AOTI_LINT_NO_EXTENSIONS", "1")
        return text_layout.top_level_starts(text, spans)


def test_the_statement_starts_are_those_python_reads_in_generated_texts(monkeypatch):
    rng = random.Random(2026)
    # Strings, brackets, comments, backslashes, decorators and the keywords that start no statement or end a
    # decorator's, line ends of each kind, form feeds and whitespace outside ASCII.
    pieces = ['"', '"""', "'", "\\", "\n", "\r\n", "\r", "#", "(", ")", "[", "]", "{", "}", "@", "@d\n", ":", " "]
    pieces += ["def", "class", "async", "else", "elif", "except", "finally", "defx", "x", "_", "1", "\t", "\f"]
    pieces += ["\u00a0", "\u00e9", "\U0001d54f"]
    reader = token_scan.statement_reader()
    assert reader is not None
    compared = 0
    for _ in range(30_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 25)))
        strings = text_layout._read_strings(text)
        if strings is None:
            continue
        spans = strings[0]
        assert reader(text, spans, False) == text_layout._statement_starts(text, spans), repr(text)
        top_level = text_layout.top_level_starts(text, spans)
        assert top_level == python_top_level_starts(text, spans, monkeypatch), repr(text)
        compared += 1
    assert compared > 10_000


def test_the_statement_starts_of_the_repositorys_modules_are_those_python_reads(monkeypatch):
    reader = token_scan.statement_reader()
    assert reader is not None
    for path in sorted(REPO.rglob("*.py")):
        if ".venv" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        spans = text_layout.string_spans(text)
        assert spans is not None, path
        assert reader(text, spans, False) == text_layout._statement_starts(text, spans), path
        assert text_layout.top_level_starts(text, spans) == python_top_level_starts(text, spans, monkeypatch), path


def test_the_statement_reader_rejects_spans_out_of_order():
    with pytest.raises(ValueError, match="ordered"):
        compiled.statement_starts("'a' 'b'", [(4, 7), (0, 3)], False)
    with pytest.raises(TypeError):
        compiled.statement_starts("'a'", [[0, 3]], False)


# The entry points called directly with any argument: an error, never a crash (`.ci/run` runs this file again under
# `PYTHONMALLOC=debug`, where a read past a buffer or of a freed object aborts).
_HUGE = st.sampled_from([sys.maxsize, sys.maxsize - 1, sys.maxsize - 2, -sys.maxsize - 1, 2**63, 2**64, -1, -(2**70)])
_ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    _HUGE,
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.binary(max_size=8),
    st.just(bytearray(b"ab")),
    st.just(memoryview(b"abcd")[::2]),  # not contiguous
    st.lists(st.integers(), max_size=3),
    st.tuples(st.integers(), st.integers()),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    tokens=st.one_of(st.lists(st.one_of(st.binary(max_size=6), _ANY), max_size=66).map(tuple), _ANY),
    offsets=st.one_of(st.lists(st.one_of(st.integers(-3, 8), _HUGE, _ANY), max_size=66).map(tuple), _ANY),
    data=_ANY,
)
def test_the_scanner_takes_any_argument_without_crashing(tokens, offsets, data):
    try:
        scanner = compiled.Scanner(tokens, offsets)
    except (TypeError, ValueError, OverflowError):
        scanner = compiled.Scanner.__new__(compiled.Scanner)
    else:
        assert scanner.present(b"".join(t for t in tokens if type(t) is bytes)) >= 0
    try:
        found = scanner.present(data)
    except (TypeError, ValueError, BufferError):
        return
    assert found >= 0


@pytest.mark.parametrize("offset", [sys.maxsize, sys.maxsize - 1, sys.maxsize - 2, 2**63, 2**64, -1, -sys.maxsize - 1])
def test_an_offset_near_the_largest_size_is_refused_not_overflowed(offset):
    with pytest.raises((ValueError, OverflowError)):
        compiled.Scanner((b"abc",), (offset,))


def test_an_offset_that_is_not_an_int_runs_no_code_and_is_refused():
    """An ``__index__`` could call ``__init__`` again on the same scanner (whose old tokens would then be freed
    under the entries being built): offsets are ints, nothing else is asked."""
    scanner = compiled.Scanner((b"abc",), (0,))
    ran = []

    class Offset:
        def __index__(self):
            ran.append(1)
            scanner.__init__((b"xyz",), (0,))
            return 0

    with pytest.raises(TypeError):
        scanner.__init__((b"abc",), (Offset(),))
    assert not ran
    assert scanner.present(b"abc xyz") == 0  # a failed __init__ leaves a scanner that scans nothing


def test_a_buffer_whose_export_reinitialises_the_scanner_is_scanned_safely():
    """Getting a buffer may run Python code (``__buffer__``, Python 3.12): a re-initialisation there happens before
    the scan reads the table, never during it."""
    scanner = compiled.Scanner((b"abc",), (0,))

    class Exporter:
        def __buffer__(self, flags):
            scanner.__init__((bytes([120, 121, 122]),), (0,))  # a fresh bytes object, freed with the old table
            return memoryview(b"abc xyz")

    try:
        found = scanner.present(Exporter())
    except TypeError:  # before 3.12 a class cannot export a buffer
        return
    assert found == 1  # `xyz`, the token of the table that scanned


def test_the_scanner_reads_weird_buffers_as_their_bytes():
    import array
    import mmap

    scanner = compiled.Scanner((b"ab", b"\x01\x00"), (0, 0))
    assert scanner.present(bytearray(b"xab")) == 1
    assert scanner.present(memoryview(b"zzab")[2:]) == 1
    assert scanner.present(array.array("i", [1])) == 2  # its bytes, not its items
    assert scanner.present(b"") == 0
    with mmap.mmap(-1, 4096) as mapped:
        mapped[4094:] = b"ab"
        assert scanner.present(mapped) == 1
    with pytest.raises(BufferError):
        scanner.present(memoryview(b"abab")[::2])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    text=st.one_of(st.text(alphabet="'\"\\#{}fFrb \n\r()[]x@", max_size=40), _ANY),
    spans=st.one_of(
        st.lists(
            st.one_of(st.tuples(st.one_of(st.integers(-2, 50), _HUGE), st.one_of(st.integers(-2, 50), _HUGE)), _ANY),
            max_size=6,
        ),
        _ANY,
    ),
    top_level=_ANY,
)
def test_the_lexers_take_any_argument_without_crashing(text, spans, top_level):
    with contextlib.suppress(TypeError):
        compiled.string_spans(text)
    with contextlib.suppress(TypeError, ValueError, OverflowError):
        compiled.statement_starts(text, spans, top_level)


def test_the_statement_reader_reads_its_spans_after_a_bool_that_empties_them():
    spans = [(0, 3)]

    class Truth:
        def __bool__(self):
            spans.clear()
            return True

    assert compiled.statement_starts("'a'\nx = 1\n", spans, Truth()) == [0, 4, 10]
    with pytest.raises(TypeError):
        compiled.statement_starts("'a'", [(0, 3.0)], False)
