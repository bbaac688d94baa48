"""One file as the engine sees it: its path, its kind and its bytes; text decoded on demand."""

from __future__ import annotations

import codecs
import os
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PYTHON_SUFFIXES = (".py", ".pyi")


def file_kind(path: Path) -> str | None:
    """The kind of file ``path`` is, or None when aoti-lint does not read it."""
    if path.suffix in PYTHON_SUFFIXES:
        return "python"
    return None


class DecodeError(Exception):
    """The bytes are not text in the declared encoding; the message says why."""


@dataclass
class SourceFile:
    path: Path
    display_path: str
    kind: str
    data: bytes
    _text: str | None = field(default=None, repr=False)
    encoding: str = "utf-8"

    @property
    def text(self) -> str:
        """The decoded text (PEP 263 cookie or BOM honoured, BOM removed); raises DecodeError."""
        if self._text is None:
            self._text, self.encoding = decode_python(self.data)
        return self._text

    @property
    def had_bom(self) -> bool:
        return self.data.startswith(codecs.BOM_UTF8)

    def with_text(self, text: str) -> SourceFile:
        """The same file with new text, encoded as the original was (encoding cookie, BOM)."""
        data = encode_python(text, self.encoding, self.had_bom)
        return SourceFile(self.path, self.display_path, self.kind, data, _text=text, encoding=self.encoding)


# A line as CPython's tokenizer reads one: a lone "\r" ends it too, so a coding cookie in a CR-only file is
# found on its own first line (BytesIO.readline would hand over the whole file as one line).
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def _lines(data: bytes) -> Iterator[bytes]:
    return (match.group() for match in _LINE.finditer(data))


def decode_python(data: bytes) -> tuple[str, str]:
    try:
        encoding, _ = tokenize.detect_encoding(_lines(data).__next__)
    except SyntaxError as exc:
        raise DecodeError(str(exc)) from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise DecodeError(f"not valid {encoding}: {exc}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, encoding


def encode_python(text: str, encoding: str, had_bom: bool) -> bytes:
    data = text.encode("utf-8" if encoding == "utf-8-sig" else encoding)
    if had_bom and not data.startswith(codecs.BOM_UTF8):
        data = codecs.BOM_UTF8 + data
    return data


def display_path(path: Path, root: Path) -> str:
    """The path as users expect to read it: relative to the working directory when inside it."""
    try:
        return os.path.relpath(path, root) if path.is_absolute() else str(path)
    except ValueError:  # a different drive on Windows
        return str(path)
