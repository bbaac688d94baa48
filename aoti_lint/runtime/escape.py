"""Text from a package or a log, made safe to print: one line, no terminal escapes, no workflow commands.

Package metadata, member names, error messages and log lines come from files aoti-lint did not write. Printed raw,
a newline can forge a line of the report (or a GitHub ``::error`` workflow command at the start of a line), and
``\\x1b[...`` sequences drive the terminal. Every control character (C0, DEL, C1), line and paragraph separator and
bidirectional override is shown escaped, as Python writes it (``\\n``, ``\\x1b``, ``\\u202e``); XML 1.0 cannot hold
most of them either, so the JUnit report uses the same form.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """text on one line, with every control or direction-changing character escaped."""
    return _UNSAFE.sub(_escape, text)
