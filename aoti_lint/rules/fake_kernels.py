"""What AOTI301 (``fake_kernel_concrete_size``) and AOTI302 (``fake_kernel_shape_branch``) share: the
prefilter stages that rule out a file holding no fake/meta kernel. The kernels themselves are found by
``aoti_lint.model.kernels``."""

from __future__ import annotations

import functools
import re

from aoti_lint.rules.base import tokens_match

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Python fake/meta kernels are registered through one of these names; a file without any cannot hold one.
# A Meta impl names its key in a plain string literal (see ``fake_kernels._is_meta``), quotes included.
KERNEL_TRIGGERS = (
    (b"register_fake",),
    (b"impl_abstract",),
    *((b"impl", quote + key + quote) for key in (b"Meta", b"meta") for quote in (b'"', b"'")),
)
# Every group above holds one of these: stage one's screen asks the rules' own test only for bytes holding one.
KERNEL_SCREEN_TOKENS = tuple(dict.fromkeys(max(group, key=len) for group in KERNEL_TRIGGERS))


# Stage one's own test: the tokens above, and a registering name as a whole word of the bytes. `impl` is mostly
# inside other words (`simple`, `_impl`, `implementation`): of torch's files holding it and a "meta" string, half
# hold it as a word. An identifier is preceded and followed by no identifier character; a byte of 128 or more
# counts as one (in code, a non-ASCII character next to a name is part of it), as in ``debug_switches``.
_KERNEL_NAMES = (b"register_fake", b"impl_abstract", b"impl")
_NAME_BYTES = frozenset(b"_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") | frozenset(range(128, 256))
# The bytes last asked about and the answer: AOTI301 and AOTI302 ask about the same bytes in a row.
_last_bytes: list[Any] = [None, False]


def could_hold_kernel_bytes(data: bytes) -> bool:
    """Stage one of AOTI301/AOTI302: the trigger tokens, one registering name among them as a word."""
    if _last_bytes[0] is not data:
        _last_bytes[:] = [data, tokens_match(KERNEL_TRIGGERS, data) and _holds_kernel_word(data)]
    return bool(_last_bytes[1])


def _holds_kernel_word(data: bytes) -> bool:
    # One `find` per occurrence, at C speed; a pattern with a look-behind first is tried at every position.
    for name in _KERNEL_NAMES:
        end = len(name)
        at = data.find(name)
        while at != -1:
            if (at == 0 or data[at - 1] not in _NAME_BYTES) and (
                at + end == len(data) or data[at + end] not in _NAME_BYTES
            ):
                return True
            at = data.find(name, at + 1)
    return False


# The same names as words of the text: `impl` also occurs inside `simple` or `impl_`, and a large torch file whose
# bytes hold `impl` and a "meta" string that way cost a whole `ast` tree. One pattern per name, each starting with
# the name itself: `re` then skips to each occurrence of it, where `\b(?:a|b|c)\b` tries every position. The word's
# start is tested apart (`_WORD`, as `\b`).
_KERNEL_WORDS = tuple(re.compile(name + r"(?!\w)") for name in ("register_fake", "impl_abstract", "impl"))
_WORD = re.compile(r"\w")


# One entry: AOTI301 and AOTI302 ask about the same text in a row.
@functools.lru_cache(maxsize=1)
def could_hold_kernel_text(text: str) -> bool:
    """Second prefilter stage: a registering name as a word (an identifier always is one), not in a comment.

    A word is taken for a comment's when its line holds a ``#`` before it and no quote at all: then either the
    line starts in code and the ``#`` opens a comment, or it starts inside a string that is still open at the
    word (closing it takes a quote). Either way the word is no identifier.
    """
    for pattern in _KERNEL_WORDS:
        for match in pattern.finditer(text):
            start = match.start()
            if start and _WORD.match(text, start - 1):
                continue  # inside a longer word (`simple`, `_impl`)
            # Python ends a line at \n, \r\n or a lone \r (old Mac files); each search stops at the line's start.
            newline = text.rfind("\n", 0, start)
            line = text[max(newline, text.rfind("\r", newline + 1, start)) + 1 : start]
            if "#" not in line or "'" in line or '"' in line:
                return True
    return False


def could_hold_finding_text(text: str) -> Any:
    """The kernels' own text stage (``aoti_lint.rules.kernel_regions``): the kernels read from the statements that can
    hold one, without parsing the module; both kinds of candidate where those cannot be told apart."""
    from aoti_lint.rules.kernel_prefilter import KernelCandidates
    from aoti_lint.rules.kernel_regions import kernel_candidates_in_regions

    found = kernel_candidates_in_regions(text)
    return KernelCandidates(concrete=True, branch=True) if found is None else found


def could_hold_finding(code: Any) -> Any:
    """The kernels' own stage (``aoti_lint.rules.kernel_prefilter``), over the index's cached tree."""
    from aoti_lint.rules.kernel_prefilter import KernelCandidates, kernel_candidates

    if code.tree is None:  # an index built without its tree: no finding can be ruled out
        return KernelCandidates(concrete=True, branch=True)
    return kernel_candidates(code.tree, code.text)


def could_hold_kernel(code: Any) -> bool:
    """Second prefilter stage shared by the Python AOTI3xx rules (see ``aoti_lint.model.name_index.CodeIndex``)."""
    names = code.identifiers
    if "register_fake" in names or "impl_abstract" in names:
        return True
    if ("torch.library", "impl") in code.imported_names:  # called under any name (`import impl as register`)
        return True
    return "impl" in code.called and (
        "library" in names
        or "Library" in names
        or any("library" in module.split(".") for module in code.imported_modules)
    )
