"""What AOTI001 and AOTI002 share: a reference, under any import form, to a deprecated function of ``torch._export``
(``aot_compile``, ``aot_load``): what screens a file for one, and the tidying after their fixes."""

from __future__ import annotations

import functools
import re

from aoti_lint.knowledge.deprecated_api import DeprecatedSymbol
from aoti_lint.rules.base import PythonRule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

# What stands between two tokens of one expression: blanks, a continuing backslash, a comment running to its line's
# end (bounded so: a banner of `#`s would make the match exponential), and, before the `.`, closing parentheses.
_GAP = r"(?:\s|\\|#[^\n]*(?![^\n]))*"
_CLOSING_GAP = r"(?:\s|\\|\)|#[^\n]*(?![^\n]))*"


@functools.cache
def _reference_patterns(parent: str, name: str) -> tuple[re.Pattern[str], ...]:
    """A superset of the text of every reference that resolves to ``parent.name``: the attribute written out,
    or an import statement naming the parent or the name (on its logical line, or in its parentheses)."""
    either = rf"(?<!\w)(?:{parent}|{name})(?!\w)"
    return (
        re.compile(rf"{parent}{_CLOSING_GAP}\.{_GAP}{name}(?!\w)"),
        # `getattr(torch._export, "aot_compile")`: the name as a string after the parent
        re.compile(rf"{parent}{_CLOSING_GAP},{_GAP}[rRuU]?[\"']{name}[\"']"),
        re.compile(rf"import(?!\w)(?:(?:[^\n;#]|\\\r?\n)*?{either}|\s*\((?:[^)#]|#[^\n]*(?![^\n]))*?{either})"),
    )


class DeprecatedReference(PythonRule):
    """Shared check: any reference (call or not) that resolves to ``symbol``, whatever the import form: an attribute
    or a name, `getattr(torch._export, "aot_load")`, a call of a name bound to it. The findings and their fixes'
    verdicts are read with the device-flow summary, in one reading (``rules.module_flow``); the fixes' edits are the
    codemod's (``run.fix_edits``). Import statements are not reported on their own: the fix rewrites them with
    the uses."""

    symbol: ClassVar[DeprecatedSymbol]
    fix_availability = "sometimes"

    @classmethod
    def could_match_python(cls, text: str) -> bool:
        # The same, in the text (``_reference_patterns``): most of torch's files that hold both words import
        # something else from `torch._export`, or name the other `aot_compile`.
        module, name = cls.symbol.qualified_name.rsplit(".", 1)
        parent = module.rsplit(".", 1)[-1]
        if f"{parent}.{name}" in text:
            return True  # the common spelling, without compiling the patterns (a one-file run pays for that)
        return any(pattern.search(text) for pattern in _reference_patterns(parent, name))

    @classmethod
    def could_match_code(cls, code: Any) -> bool:
        # A reference resolves to `pkg.parent.name` only through `x.parent.name` / `parent.name`, or through
        # a name bound by an import of `...parent...` (`import pkg.parent as p`, `from pkg import parent`,
        # `from pkg.parent import name`).
        module, name = cls.symbol.qualified_name.rsplit(".", 1)
        parent = module.rsplit(".", 1)[-1]
        return (
            (parent, name) in code.attribute_pairs
            or ("getattr" in code.called and parent in code.identifiers)
            or any(parent in imported.split(".") for imported in code.imported_modules)
            or any(
                imported == parent or (imported == name and parent in source.split("."))
                for source, imported in code.imported_names
            )
        )

    @classmethod
    def tidy_after_fix(cls, text: str) -> str:
        """Once fixes are applied, drop imports of the old API that no fix alone could see were unused."""
        from aoti_lint.codemods.migration import tidy_text

        return tidy_text(text)
