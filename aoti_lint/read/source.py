"""One file as the engine sees it: its path, its kind and its bytes; text decoded on demand."""

from __future__ import annotations

import codecs
import functools
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from aoti_lint.diagnostics import Finding
from aoti_lint.lazy import LazyPattern
from aoti_lint.read.cpp import CPP_SUFFIXES
from aoti_lint.settings.defaults import PYTHON_SUFFIXES

SHELL_SUFFIXES = (".sh", ".bash")
YAML_SUFFIXES = (".yml", ".yaml")
# `#!/bin/sh`, `#!/usr/bin/bash`, `#!/usr/bin/env bash`, `#!/usr/bin/env -S bash -e`.
_SHELL_SHEBANG = LazyPattern(rb"#![ \t]*\S*/(?:env[ \t]+(?:-\S+[ \t]+)*)?(?:ba)?sh(?:[ \t]|\r?$)")
# Kinds whose text is Python that the Python rules read (a notebook's text is its code cells).
PYTHON_KINDS = frozenset({"python", "jupyter"})


def file_kind(path: Path) -> str | None:
    """The kind of file ``path`` is, or None when aoti-lint does not read it."""
    return kind_of_name(path.name, str(path))


# The kind of a file by its suffix, as PurePath.suffix gives it, before its name is looked at.
_KIND_BY_SUFFIX = {
    **dict.fromkeys(PYTHON_SUFFIXES, "python"),
    ".ipynb": "jupyter",
    **dict.fromkeys(SHELL_SUFFIXES, "shell"),
    **dict.fromkeys(YAML_SUFFIXES, "yaml"),
    **dict.fromkeys(CPP_SUFFIXES, "cpp"),
    ".mk": "makefile",
}
MAKEFILE_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})


def kind_of_name(name: str, path: str) -> str | None:
    """``file_kind`` of the file ``name`` at ``path``, from strings: the walk asks it of every file it meets."""
    dot = name.rfind(".")
    suffix = name[dot:] if 0 < dot < len(name) - 1 else ""  # as PurePath.suffix
    kind = _KIND_BY_SUFFIX.get(suffix)  # one lookup: the walk meets mostly these
    if kind is not None:
        return kind
    if name in ("Dockerfile", "Containerfile") or name.startswith(("Dockerfile.", "Containerfile.")):
        return "dockerfile"
    if suffix == ".dockerfile":
        return "dockerfile"
    if name == ".env" or suffix == ".env":
        return "env"
    if name in MAKEFILE_NAMES:
        return "makefile"
    if not suffix and _has_shell_shebang(path):
        return "shell"
    return None


def _has_shell_shebang(path: str) -> bool:
    """Only extension-less files get here, and only their first line is read."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the walk
            return False
        with open(path, "rb") as handle:
            first = handle.readline(128)
    except OSError:
        return False
    return _SHELL_SHEBANG.match(first.rstrip(b"\n")) is not None


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
    _screened: bytes | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        """The decoded text (PEP 263 cookie or BOM honoured, BOM removed); raises DecodeError."""
        if self._text is None:
            if self.kind == "python":
                self._text, self.encoding = decode_python(self.data)
            elif self.kind == "cpp":
                # C/C++ is only read, never written: a comment in Latin-1 must not make the file unreadable.
                text = self.data.decode("utf-8", "replace")
                self._text = text[1:] if text.startswith("\ufeff") else text
            else:
                self._text = decode_utf8(self.data)
        return self._text

    @property
    def had_bom(self) -> bool:
        return self.data.startswith(codecs.BOM_UTF8)

    @property
    def prefilter_data(self) -> bytes:
        """The bytes the rules' token prefilter looks at (``screen_data`` for Python)."""
        if self.kind != "python":
            return self.data
        if self._screened is None:  # stage one, the runner and the engine ask in turn
            self._screened = screen_data(self.data)
        return self._screened

    @property
    def diff_text(self) -> str:
        """The text ``--diff`` compares."""
        return self.text

    def locate(self, findings: list[Finding]) -> list[Finding]:
        """The findings as users should read their locations (a notebook makes rows cell-relative)."""
        return findings

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
    lines = _lines(data)
    head = next(lines, b"") + next(lines, b"")
    if head.isascii() and b"coding" not in head:
        # No BOM, no cookie, nothing tokenize would reject in the lines it reads: its answer, without importing it.
        encoding = "utf-8"
    else:
        import tokenize

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


def screen_data(data: bytes) -> bytes:
    """The bytes the screen and stage one read of a Python file, so that they never pass over names CPython reads:
    the bytes themselves where they are ASCII and name no coding; else, where CPython reads other names than the
    bytes spell (decoded as its PEP 263 cookie says, `utf-7` for one; identifiers NFKC-normalised, so a fullwidth
    `l`, U+FF4C, is `l`), the bytes followed by that reading (the whole text normalised, strings and comments too: a
    superset of the names, as the screen must be), as UTF-8. Undecodable bytes are read as they are (the engine
    reports them)."""
    if data.isascii():
        lines = _lines(data)
        if b"coding" not in next(lines, b"") + next(lines, b""):  # PEP 263: a cookie is on one of the first two
            return data
    try:
        text, _ = decode_python(data)
    except DecodeError:
        return data
    if not text.isascii():
        import unicodedata

        text = unicodedata.normalize("NFKC", text)
    read = text.encode("utf-8", "surrogatepass")
    return data if read in data else data + b"\n" + read


def decode_utf8(data: bytes) -> str:
    """Shell scripts, Dockerfiles, YAML and .env files: UTF-8, a BOM removed (and put back on write)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"not valid utf-8: {exc}") from None
    return text[1:] if text.startswith("\ufeff") else text


@functools.lru_cache(maxsize=8)
def _absolute_prefix(root: str) -> str:
    """``root`` with a separator at its end, or "" when it is not absolute (a path under it may not be)."""
    return os.path.join(root, "") if os.path.isabs(root) else ""


def encode_python(text: str, encoding: str, had_bom: bool) -> bytes:
    data = text.encode("utf-8" if encoding == "utf-8-sig" else encoding)
    if had_bom and not data.startswith(codecs.BOM_UTF8):
        data = codecs.BOM_UTF8 + data
    return data


def display_path(path: Path | str, root: Path) -> str:
    """The path as users expect to read it: relative to the working directory when inside it."""
    # Most paths lie under the root: slicing is much cheaper than relpath, which runs once per file read.
    text, root_text = os.fspath(path), str(root)
    prefix = _absolute_prefix(root_text)
    if prefix and text.startswith(prefix):
        return text[len(prefix) :]
    if not os.path.isabs(text):
        return text
    # Outside the root (a tree named by an absolute path elsewhere): relpath is paid once per directory, the file's
    # name joined to its directory's. It runs on the whole path where a relative root makes it read the working
    # directory, or where it would fold the name away (the path is the root or one of its parents, or is not in
    # normal form).
    directory, _, name = text.rpartition(os.sep)
    if (
        not os.path.isabs(root_text)
        or os.altsep
        or "/." in text
        or "//" in text
        or not name
        or _normal(root_text) == text
        or _normal(root_text).startswith(text + os.sep)
    ):
        shown = _relative(text, root_text)
    else:
        shown = _relative_directory(directory or os.sep, root_text)
        if shown is not None:
            shown = name if shown == "." else os.path.join(shown, name)
    return str(path) if shown is None else shown


def _relative(path: str, root: str) -> str | None:
    try:
        return os.path.relpath(path, root)
    except ValueError:  # a different drive on Windows
        return None


# Asked with absolute roots only: the answer then does not depend on the working directory.
_relative_directory = functools.lru_cache(maxsize=1024)(_relative)


@functools.lru_cache(maxsize=8)
def _normal(root: str) -> str:
    """The root as relpath reads it: its absolute path's parts, one separator between them."""
    return os.sep + os.sep.join(part for part in os.path.abspath(root).split(os.sep) if part)
