"""The kernels' text stage (``aoti_lint.rules.kernel_regions``) against the whole tree: the strings it finds are the
tokenizer's, the pieces it parses are the module's own statements, the top-level statements it tells apart
(``text_layout.top_level_starts``) are the tree's, and its judgment of the kernels keeps every module the ``ast``
stage keeps, on the fixtures, on tricky forms and on torch's own sources."""

from __future__ import annotations

import ast
import importlib.util
import io
import itertools
import re
import sys
import tokenize
from pathlib import Path

import pytest

from aoti_lint.rules import ALL_RULES
from aoti_lint.rules.fake_kernels import could_hold_kernel_text
from aoti_lint.rules.kernel_prefilter import kernel_candidates
from aoti_lint.rules.kernel_regions import kernel_candidates_in_regions
from aoti_lint.screen.text_layout import Places, statement_starts, string_prefix, string_spans, top_level_starts
from tests.conftest import FIXTURES, REPO


def _python_files() -> list[Path]:
    """This repository's Python: its code, tests and fixtures (strings of every form, kernels of many)."""
    return sorted(
        path
        for folder in ("aoti_lint", "codemods", "tests", "benchmarks")
        for path in (REPO / folder).rglob("*.py")
        if "__pycache__" not in path.parts
    )


def _tokenizer_strings(text: str) -> list[tuple[int, int]]:
    """(offset of the opening quote, end) of every string literal, as Python's tokenizer reads them."""
    line_starts = [0]
    for line in io.StringIO(text).readlines():
        line_starts.append(line_starts[-1] + len(line))

    def offset(row: int, column: int) -> int:
        return line_starts[row - 1] + column

    spans, fstring_starts = [], []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        kind = tokenize.tok_name[token.type]
        if kind in ("STRING", "FSTRING_START"):
            start = offset(*token.start)
            quote = start + len(token.string) - len(token.string.lstrip("rbufRBUF"))
            if kind == "STRING":
                spans.append((quote, offset(*token.end)))
            else:
                fstring_starts.append(quote)
        elif kind == "FSTRING_END":  # Python 3.12+: an f-string is a sequence of tokens
            spans.append((fstring_starts.pop(), offset(*token.end)))
    return sorted(spans)


@pytest.mark.parametrize("path", _python_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_strings_are_the_tokenizers(path):
    text = path.read_text()
    try:
        expected = _tokenizer_strings(text)
    except (tokenize.TokenError, SyntaxError):
        pytest.skip("not Python the tokenizer reads")
    assert string_spans(text) == expected
    # The prefixes read in the same pass are the letters before each quote.
    places = Places.of(text)
    assert places is not None and places.prefixes == [string_prefix(text, start) for start, _ in expected]


def test_strings_and_their_prefixes_are_read_in_one_pass_as_the_tokenizer_reads_them():
    """Generated fragments, unterminated strings and f-strings with unpaired braces among them."""
    import random

    pieces = ['"', "'", '"""', "'''", "#", "\n", "x", "f", "rb", "F", "\\", "{", "}", "{{", " ", "é", "\\\n", "Rf"]
    generated = random.Random(5)
    read = 0
    for _ in range(20000):
        text = "".join(generated.choice(pieces) for _ in range(generated.randint(0, 12)))
        try:
            expected = _tokenizer_strings(text)
        except (tokenize.TokenError, SyntaxError, IndentationError):
            continue
        places = Places.of(text)
        if places is None:
            continue  # an f-string whose braces Python 3.12 reads otherwise
        read += 1
        assert places.spans == expected, text
        assert places.prefixes == [string_prefix(text, start) for start, _ in expected], text
    assert read > 2000


@pytest.mark.skipif(sys.version_info < (3, 11), reason="possessive quantifiers came with Python 3.11")
def test_the_faster_form_of_the_lexers_pattern_matches_as_the_plain_one():
    """On the repository's Python files and on generated fragments (unterminated strings, escapes, quote runs,
    blanks before brackets among them), ``text_layout``'s possessive string pattern, which never gives back a
    character, finds what the plain one finds (3.10 reads the plain one)."""
    import random

    from aoti_lint.screen.text_layout import POSSESSIVE_TOKEN_FORM, TOKEN_FORM

    plain, faster = re.compile(TOKEN_FORM, re.DOTALL), re.compile(POSSESSIVE_TOKEN_FORM, re.DOTALL)
    texts = [path.read_text() for path in _python_files()]
    pieces = ['"', "'", '"""', "'''", '""', "#", "\n", "\r", "x", "ab", "é", "\\", "\\\n", " ", "\t", "\f", "(", ")"]
    pieces += ["import", "_import", "import_", ";", "\\\r\n", "[", "ñ1"]
    generated = random.Random(17)
    texts += ["".join(generated.choice(pieces) for _ in range(generated.randint(0, 16))) for _ in range(20000)]
    for text in texts:
        assert [m.span() for m in faster.finditer(text)] == [m.span() for m in plain.finditer(text)], text


def _statements_of_pieces(text: str) -> tuple[list[str], list[str]]:
    """The top-level statements of the whole tree, and those of every piece between two starts that parses."""
    whole = [ast.dump(statement) for statement in ast.parse(text).body]
    starts = statement_starts(text, string_spans(text) or [])
    pieces = []
    for start, end in itertools.pairwise(starts):
        try:
            tree = ast.parse("\n" * text.count("\n", 0, start) + text[start:end])
        except SyntaxError:
            continue
        pieces += [ast.dump(statement) for statement in tree.body]
    return whole, pieces


@pytest.mark.parametrize("path", _python_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_piece_that_parses_holds_the_modules_own_statements(path):
    """The soundness of the pieces: one that parses holds top-level statements of the module, whole, at their
    rows (a piece cut inside a statement would have to fail)."""
    text = path.read_text()
    try:
        ast.parse(text)
    except SyntaxError:
        pytest.skip("not Python the parser reads")
    whole, pieces = _statements_of_pieces(text)
    assert set(pieces) <= set(whole)
    assert len(pieces) == len(whole)  # on well-formed code, every statement starts a piece of its own


def _tree_starts(text: str) -> set[int]:
    """The offsets of the lines on which the tree's top-level statements start (a decorator's, for a decorated
    definition; not one after a `;`), and the text's start."""
    line_starts = list(itertools.accumulate((len(line) for line in io.StringIO(text).readlines()), initial=0))
    rows = {
        min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
        for statement in ast.parse(text).body
        if statement.col_offset == 0 or getattr(statement, "decorator_list", ())
    }
    return {0} | {line_starts[row - 1] for row in rows}


def _assert_top_level_starts_are_the_trees(text: str, where: object) -> None:
    starts = top_level_starts(text, string_spans(text) or [])
    if starts is None:
        return  # a form feed, or brackets that do not pair up: the reader falls back to the tree
    assert starts[-1] == len(text), where
    assert set(starts[:-1]) == _tree_starts(text), where


@pytest.mark.parametrize("path", _python_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_top_level_starts_are_the_trees(path):
    text = path.read_text()
    try:
        ast.parse(text)
    except SyntaxError:
        pytest.skip("not Python the parser reads")
    _assert_top_level_starts_are_the_trees(text, path)


TOP_LEVEL_FORMS = {
    "column-0 lines in brackets": 'X = [\n"a.so",\n"b",\n]\nY = {\n1: (\n2)}\n',
    "a continued line": "import a, \\\nb; X = 1\nY = 2\n",
    "a comment ending in a backslash": "def f():\n    pass  # see \\\nX = 'a.so'\n",
    "CRLF continuation": "x = 1 + \\\r\n2\r\ny = 3\r\n",
    "decorators and branches": (
        "@d\n@e(\n1)\nclass C:\n    pass\nif a:\n    pass\nelse:\n    pass\ntry:\n    pass\nfinally:\n    pass\n"
    ),
    "brackets in strings and comments": "x = '(['  # )\ny = f'{z}]'\nz = 1\n",
}


@pytest.mark.parametrize("name", sorted(TOP_LEVEL_FORMS))
def test_top_level_starts_of_tricky_forms(name):
    _assert_top_level_starts_are_the_trees(TOP_LEVEL_FORMS[name], name)


# (text, the word looked at (its last occurrence), whether it lies in code)
PLACES = [
    ('x = f"a {b} c"', "b", True),
    ('x = f"a {b} c"', "c", False),
    ('x = f"{{b}} {c:>{w}}"', "w", True),
    ('x = f"{{b}} c"', "b", False),
    ('x = "b"  # c', "b", False),
    ('x = "b"  # c', "c", False),
    ('x = "#"; y  # z', "y", True),
    ('x = "#"; y  # z', "z", False),
    ("x = '''\n# b\n''' + c", "b", False),
    ("x = '''\n# b\n''' + c", "c", True),
]


@pytest.mark.parametrize(("text", "word", "code"), PLACES)
def test_places_tell_code_from_strings_and_comments(text, word, code):
    from aoti_lint.screen.text_layout import Places

    assert Places(text, string_spans(text)).in_code(text.rindex(word)) == code


def test_top_level_starts_give_way_to_form_feeds_and_unpaired_brackets():
    assert top_level_starts("if a:\n    pass\n\fx = 1\n", []) is None
    assert top_level_starts("x = )\n", []) is None


# (text, what the regions say: None where they give way to the ast stage). Each is also compared with the
# whole tree's judgment below.
_KERNEL = '@torch.library.register_fake("ns::op")\ndef op_fake(x):\n'
CASES = {
    "a registering name in messages and comments": (
        "import torch\n\n\nclass Big:\n    def f(self, x):\n"
        '        raise RuntimeError(f"use torch.library.register_fake for {x}")  # or impl_abstract\n'
        "    def g(self):\n        return 'impl(op)'\n",
        (False, False),
    ),
    "col-0 lines in a kernel's string": (
        f'import torch\n\n{_KERNEL}    """Rows:\nnot code\n"""\n    return x.new_empty(int(x.shape[0]))\n',
        (True, False),
    ),
    "a kernel in an else branch": (
        f"import torch\nif HAS:\n    pass\nelse:\n    {_KERNEL.replace(chr(10), chr(10) + '    ')}"
        "    if x.shape[0] == 3:\n            pass\n        return x\n",
        (False, True),
    ),
    "a registered function defined far away, in a class": (
        "import torch\n\n\nclass K:\n    @staticmethod\n    def meta(x):\n        return float(x.size(0))\n\n\n"
        "lib = torch.library.Library('ns', 'IMPL')\nlib.impl('op', K.meta, 'Meta')\nlib.impl('op2', meta, 'Meta')\n",
        (True, False),
    ),
    "an impl imported under another name": (
        "from torch.library import (\n    impl  # the registering one\n    as register,\n)\n\n\n"
        '@register("ns::op", "Meta")\ndef op_meta(x):\n    return x.new_empty(x.shape[0].item())\n',
        (True, False),
    ),
    "range imported under another name": (
        f"import torch\nfrom myrange import range as upto\n\n\n{_KERNEL}"
        "    for _ in upto(x.shape[0]):\n        pass\n    return x\n",
        (False, True),
    ),
    "math under another name": (
        f"import torch\nimport os, \\\n    math as m\n\n\n{_KERNEL}    return x.new_empty(m.floor(x.shape[0]))\n",
        (True, False),
    ),
    "a multi-line decorator": (
        "import torch\n\n\n@torch.library.register_fake(\n    'ns::op'\n)\ndef op_fake(x):\n"
        "    return x.new_empty(int(x.shape[0]))\n",
        (True, False),
    ),
    "a kernel without candidates": (f"import torch\n\n\n{_KERNEL}    return x.new_empty(x.shape)\n", (False, False)),
    "a line continued in brackets from column 0": (
        f"import torch\n\n\n{_KERNEL}    return x.new_empty(\nint(x.shape[0]))\n",
        None,
    ),
    "a lone carriage return": (f"import torch\r\r\r{_KERNEL}    return x\n", None),
    "the joke future import": (f"from __future__ import barry_as_FLUFL\nimport torch\n{_KERNEL}    return x\n", None),
    "an f-string nesting its own quotes (Python 3.12)": (
        f'import torch\n{_KERNEL}    name = f"{{x["a"]}}"\n    return x\n',
        None,
    ),
    "a string that does not end": (f'import torch\n{_KERNEL}    return "x\n', None),
}


@pytest.mark.parametrize("name", CASES)
def test_kernel_forms(name):
    text, expected = CASES[name]
    found = kernel_candidates_in_regions.__wrapped__(text)
    assert (found if found is None else (found.concrete, found.branch)) == expected
    _assert_keeps_what_the_tree_keeps(text)


def _assert_keeps_what_the_tree_keeps(text: str, where: object = None) -> None:
    found = kernel_candidates_in_regions.__wrapped__(text)
    if found is None:
        return
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return  # the ast stage keeps what it cannot parse: no judgment to keep up with
    whole = kernel_candidates.__wrapped__(tree, text)
    assert (found.concrete or not whole.concrete) and (found.branch or not whole.branch), where


def _example_texts() -> list[str]:
    texts = [path.read_text() for path in FIXTURES.rglob("*.py")]
    for rule in ALL_RULES:
        texts += [example.source for example in (*rule.VALID, *rule.INVALID)]
    return texts


def test_keeps_every_fixture_and_example_the_tree_keeps():
    texts = [text for text in _example_texts() if could_hold_kernel_text(text)]
    assert len(texts) > 20
    for text in texts:
        _assert_keeps_what_the_tree_keeps(text, text[:200])


def test_keeps_every_module_of_torchs_sources_the_tree_keeps():
    """Read from the installed torch package's sources (the linter never imports them); 100 modules or so."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    root = Path(next(iter(spec.submodule_search_locations)))
    checked = 0
    for path in sorted(root.rglob("*.py")):
        data = path.read_bytes()
        if b"register_fake" not in data and b"impl" not in data:
            continue
        text = data.decode("utf-8", "replace")
        if could_hold_kernel_text(text):
            _assert_keeps_what_the_tree_keeps(text, path)
            whole, pieces = _statements_of_pieces(text)
            assert set(pieces) <= set(whole), path
            _assert_top_level_starts_are_the_trees(text, path)
            checked += 1
    assert checked > 50, f"{checked} modules: torch's sources are not where they were"


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ('x = f"{d["k"]}"\n', False),  # Python 3.12 nests the f-string's own quotes: 3.11's rules misread it
        ("x = f'{a:>{w}} {{literal}} {b!r}'\n", True),
        ('x = rf"{{}}" + F"{{{y}}}"\n', True),
        ('x = f"{y}}"\n', False),
    ],
)
def test_an_fstring_is_read_only_where_its_fields_close(text, read):
    assert (string_spans(text) is not None) == read


def test_a_registering_name_in_a_message_or_a_comment_parses_nothing(monkeypatch):
    """torch's messages name `register_fake`: the class around one is not parsed for it (work counted, not timed)."""
    import aoti_lint.rules.kernel_regions as regions

    parsed = []
    monkeypatch.setattr(regions.ast, "parse", lambda text, *a, **k: parsed.append(text) or ast.Module([], []))
    text, _ = CASES["a registering name in messages and comments"]
    assert regions.kernel_candidates_in_regions.__wrapped__(text) is not None
    assert parsed == []


def test_registered_names_and_aliases_are_found_as_a_pattern_per_name_finds_them():
    """One pattern for every definition, and ``str.find`` for each alias, give the sites a pattern compiled per name
    gave, once each is tested to start a word."""
    from aoti_lint.rules.kernel_regions import _GAP, _definitions, _starting_words, _word_starts

    texts = [path.read_text() for path in _python_files()]
    texts.append("def\\\n f(x): pass\ndef  # c\n g(): pass\nundefined = defx = 1\nf_x = ff = f\nf(f_f)\nundef\ndef g(")
    for text in texts:
        names = {"f", "g", "x", "run", "_", "impl", "test"}
        found = _starting_words([start for start, name in _definitions(text) if name in names], text)
        per_name = [m.start() for name in names for m in re.finditer(rf"def{_GAP}{name}(?!\w)", text)]
        assert sorted(found) == sorted(_starting_words(per_name, text))
        for name in names:
            expected = _starting_words([m.start() for m in re.finditer(rf"{name}(?!\w)", text)], text)
            assert _starting_words(_word_starts(name, text), text) == expected
