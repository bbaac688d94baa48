"""Output formats. Each module renders a sorted list of findings to text; this module picks one."""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from aoti_lint.diagnostics import Finding
from aoti_lint.lazy import LazyPattern
from aoti_lint.settings.output_formats import FORMATS, FORMATS_WITH_EDITS

__all__ = ["FORMATS", "FORMATS_WITH_EDITS", "ReportContext", "render"]


@dataclass
class ReportContext:
    cwd: Path
    format: str
    # Shown with --show-fixes / in the summary after --fix.
    fixed: dict[str, int] = field(default_factory=dict)  # path -> number of findings fixed
    show_fixes: bool = False
    fix_mode: bool = False
    unsafe_fixes: bool = False
    quiet: bool = False
    # Errors of the run (files not read or not checked): the summary must not say that all checks passed.
    errors: int = 0
    # Display paths of the files the fixes wrote, those edited only as part of another file's flow included.
    written: tuple[str, ...] = ()
    # ANSI colours in the human formats (``report.colour.wanted``).
    colour: bool = False
    # Source text for the snippet formats, keyed by display path (stdin has no file to re-read).
    texts: dict[str, str] = field(default_factory=dict)

    def absolute(self, path: str) -> str:
        return os.path.normpath(os.path.join(self.cwd, path))

    def lines(self, path: str, cell: int | None = None) -> list[str]:
        """The file's lines, or with ``cell`` the lines of that notebook cell."""
        if path in self.texts:
            text = self.texts[path]
            if cell is not None:
                from aoti_lint.read.notebook import cell_source

                text = cell_source(text.encode("utf-8"), cell)
            return text.splitlines()
        return _read_lines(self.absolute(path), cell)


@lru_cache(maxsize=64)
def _read_lines(path: str, cell: int | None) -> list[str]:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return []
    if cell is not None:
        from aoti_lint.read.notebook import cell_source

        return cell_source(data, cell).splitlines()
    return data.decode("utf-8", errors="replace").splitlines()


# What must never reach a terminal or a log raw from the code under review (or its file names): C0 and C1
# controls but tab (newlines would forge report lines or CI workflow commands, ESC starts terminal escapes),
# bidirectional overrides (Trojan Source), line and paragraph separators, lone surrogates (file names that
# are not UTF-8), and the XML non-characters.
_UNSAFE = LazyPattern(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a non-UTF-8 file name (surrogateescape): show the byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with what could inject (see ``_UNSAFE``) shown as Python escapes: `\\n`, `\\x1b`, `\\u202e`."""
    if text.isascii() and text.isprintable():  # most messages and paths: nothing to escape, no pattern to compile
        return text
    return _UNSAFE.sub(_escaped, text) if _UNSAFE.search(text) else text


def render(findings: list[Finding], context: ReportContext) -> str:
    module = importlib.import_module(FORMATS[context.format])
    render_format = getattr(module, "render_" + context.format.replace("-", "_"), None) or module.render
    return render_format(findings, context)
