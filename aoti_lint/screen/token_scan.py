"""The compiled scanners, where the C extension ``aoti_lint.screen._token_scan`` was built (at install time where a
compiler is found; ``setup.py``), each with the same answers as its Python equivalent:

- stage one's: which of a few dozen tokens some bytes hold, in one pass over them. The pure-Python first stage runs
  one ``bytes.find`` per anchor over each file (``file_context._Screen``): a pass over the bytes per anchor. Here each
  token is keyed by both pairs of its rarest three bytes (by its one pair if it has two), a buffer's pairs are looked up
  every other byte (every byte where some token has only two), and a token is compared only where a pair of its occurs;
  the answer is exactly ``[token in data for token in tokens]``, as a bit mask.
- ``text_layout``'s readings: the string literals of a Python text and their prefixes, as its pattern reads
  them, and where its top-level statements may start, as its Python reads them, at three to seven times their
  speed.

``tests/test_token_scan.py`` compares each with its equivalent. Without the extension, or with
``AOTI_LINT_NO_EXTENSIONS`` set to a non-empty value (as aiohttp and others name it: to compare, or to rule the
extension out), ``scanner``, ``string_lexer`` and ``statement_reader`` give None and the Python equivalents run.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from aoti_lint.screen._token_scan import Scanner


# The bytes of Python sources by how often they occur, most often first (torch's 2,285 modules): a pair of bytes
# late in this order, or absent from it, occurs seldom, so a token keyed by it is seldom compared in vain.
_COMMON_FIRST = b" etransoi_\nldcpufm,h.g)(:\"yb=vwkxT[]'N-#1`C2SEAz0IF>OD{}PqRM3L6*4/BUjV8G5+|KWH@\\"
_RARITY = {byte: rank for rank, byte in enumerate(_COMMON_FIRST)}
MAX_TOKENS = 64


def key_offset(token: bytes) -> int:
    """Where the token is keyed: the three of its bytes in a row that occur least often in Python sources (the
    scanner keys it by both pairs of them and looks at every other pair of a buffer); the rarest pair for a token
    of two bytes. The first of equals."""
    rarity = [_RARITY.get(byte, len(_COMMON_FIRST)) for byte in token]
    width = 3 if len(token) >= 3 else 2
    return max(range(len(token) - width + 1), key=lambda at: sum(rarity[at : at + width]))


def scanner(tokens: tuple[bytes, ...]) -> Scanner | None:
    """A compiled scanner for the tokens, or None: no extension, ``AOTI_LINT_NO_EXTENSIONS`` set, more than 64
    tokens or one shorter than two bytes."""
    extension = _extension()
    if extension is None or len(tokens) > MAX_TOKENS or any(len(token) < 2 for token in tokens):
        return None
    found: Scanner = extension.Scanner(tokens, tuple(key_offset(token) for token in tokens))
    return found


def string_lexer() -> Callable[[str], tuple[list[tuple[int, int]], list[str]] | None] | None:
    """The compiled lexer of ``text_layout``'s strings (``_token_scan.string_spans``), or None: no extension, or
    ``AOTI_LINT_NO_EXTENSIONS`` set."""
    extension = _extension()
    return None if extension is None else extension.string_spans


def statement_reader() -> Callable[[str, list[tuple[int, int]], bool], list[int] | None] | None:
    """The compiled reader of ``text_layout``'s statement starts (``_token_scan.statement_starts``: with ``True``,
    the top-level ones), or None: no extension, or ``AOTI_LINT_NO_EXTENSIONS`` set."""
    extension = _extension()
    return None if extension is None else extension.statement_starts


def _extension() -> Any:
    if os.environ.get("AOTI_LINT_NO_EXTENSIONS"):
        return None
    try:
        from aoti_lint.screen import _token_scan
    except ImportError:
        return None
    return _token_scan
