"""Where each libcst node lies, its parent, and the order a libcst visitor meets it: one code generation.

libcst's ``PositionProvider`` generates the module's code and, for every token, splits it on newlines and builds a
``CodePosition`` pair for every node: several times the cost of the code generation itself.
The state below counts characters instead and keeps two offsets per node; lines and columns are worked out
only for the nodes asked about, from the generated text. The same pass records each node's parent (the node
whose code holds it) and, as each node's code starts and ends, the events a visitor makes: code is generated
in the order libcst's traversal visits, but for a whitespace child of five classes (``model.module_facts``'s
``visits``). ``tests/test_node_positions.py`` compares every node of the fixtures with ``PositionProvider``,
``tests/test_parent_map.py`` the parents with ``ParentNodeProvider`` and the events with libcst's batched
traversal.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator, Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:  # the type checker sees libcst itself, with its node types
    from typing import Any

    import libcst.metadata as metadata
    from libcst import CSTNode, Module
    from libcst.metadata import CodePosition, CodeRange
else:
    from aoti_lint.lazy import LazyModule

    # Imported by the engine for ``NotReproduced``: libcst is loaded only once a fix is built.
    metadata = LazyModule("libcst.metadata")

# libcst's own newline pattern (libcst.metadata.position_provider.NEWLINE_RE).
_NEWLINE = re.compile(r"\r\n?|\n")


class _SyntacticPosition:
    """``OffsetState.record_syntactic_position``: what libcst's generator-based context manager does there, as a
    plain one (it is entered for most nodes of a module)."""

    __slots__ = ("end_node", "node", "start", "start_node", "state")

    def __init__(self, state: Any, node: CSTNode, start_node: CSTNode | None, end_node: CSTNode | None) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = self.state.offset

    def __exit__(self, *exc: object) -> None:
        state = self.state
        start, end = self.start, state.offset
        if self.start_node is not None:
            start = state.offsets[id(self.start_node)][0]
        if self.end_node is not None:
            end = state.offsets[id(self.end_node)][1]
        state.offsets[id(self.node)] = (start, end)


@functools.cache
def _offset_state_class() -> type:
    from libcst._nodes.internal import CodegenState

    class OffsetState(CodegenState):  # libcst's private base, the one PositionProvider extends
        """Code generation that records each node's (start, end) character offsets, syntactic as libcst's.

        The tables are keyed by ``id(node)``: a node's ``__hash__`` is a Python method, called on every lookup.
        """

        __slots__ = ("events", "inclusive", "offset", "offsets", "owners", "parents", "stack")

        def __init__(self, default_indent: str, default_newline: str) -> None:
            super().__init__(default_indent=default_indent, default_newline=default_newline)
            self.offset = 0
            self.stack: list[int] = []
            self.owners: list[CSTNode] = []
            self.offsets: dict[int, tuple[int, int]] = {}
            self.inclusive: dict[int, tuple[int, int]] = {}
            self.parents: dict[int, CSTNode] = {}
            self.events: list[tuple[bool, CSTNode]] = []

        def add_indent_tokens(self) -> None:
            self.tokens.extend(self.indent_tokens)
            for token in self.indent_tokens:
                self.offset += len(token)

        def add_token(self, value: str) -> None:
            self.tokens.append(value)
            self.offset += len(value)

        def before_codegen(self, node: CSTNode) -> None:
            self.stack.append(self.offset)
            owners = self.owners
            if owners:
                self.parents[id(node)] = owners[-1]
            owners.append(node)
            self.events.append((True, node))

        def after_codegen(self, node: CSTNode) -> None:
            start = self.stack.pop()
            self.owners.pop()
            self.events.append((False, node))
            key = id(node)
            self.inclusive[key] = (start, self.offset)
            # A syntactic position recorded inside the node's own code generation stands (as in libcst).
            if key not in self.offsets:
                self.offsets[key] = (start, self.offset)

        def pop_trailing_newline(self) -> None:
            # The text is kept whole: offsets past the last newline still need its line (libcst counts it too).
            pass

        # libcst only enters what this returns: any context manager does.
        def record_syntactic_position(  # type: ignore[override]
            self, node: CSTNode, *, start_node: CSTNode | None = None, end_node: CSTNode | None = None
        ) -> _SyntacticPosition:
            return _SyntacticPosition(self, node, start_node, end_node)

    return OffsetState


# Blank and comment lines ending a text, and its last line end (the code generated here keeps a last line end
# the text may lack: libcst's own generation pops it, ``OffsetState.pop_trailing_newline``).
_TRAILING = re.compile(r"(?:(?:\r\n|\r|\n)[ \t]*(?:#[^\r\n]*)?)*\Z")


# Form feeds, with the blanks before them on their line (libcst drops ` \f` that starts a line).
_FORM_FEEDS = re.compile(r"[ \t\f]*\f")


def _comparable(text: str) -> str:
    """The text as far as libcst's code generation keeps it where it moves no row: it drops form feeds and the
    blanks before them (a line's columns then count from after them, as ``PositionProvider``'s do), a last lone
    ``\\r``, and at times the blank and comment lines that end a text without a last line end."""
    return _TRAILING.sub("", _FORM_FEEDS.sub("", text))


def gives_back(code: str, text: str) -> bool:
    """Whether libcst's code generation ``code`` of a module parsed from ``text`` is that text, but for what it drops
    without moving a row (``_comparable``): only then may a fix write libcst's code of the whole module."""
    return code == text or _comparable(code) == _comparable(text)


class NotReproduced(Exception):
    """libcst's code generation does not give back the text it parsed (libcst 1.9 drops a line holding only a
    backslash): its positions are not the text's, and fixes built on them would edit the wrong lines."""


class NodePositions(Mapping["CSTNode", "CodeRange"]):
    """The syntactic ``CodeRange`` of every node of ``module`` (one code generation, on creation), with
    each node's ``parent`` and the ``events`` ((True, node) where a visitor visits the node, (False, node) where
    it leaves it, in the order it does)."""

    def __init__(self, module: Module, text: str | None = None) -> None:
        """``text``: what libcst parsed into ``module``; ``NotReproduced`` when its code generation differs."""
        state = _offset_state_class()(module.default_indent, module.default_newline)
        module._codegen(state)
        self._module = module  # the tables are keyed by the ids of its nodes: they live as long as it does
        self._offsets: dict[int, tuple[int, int]] = state.offsets
        self._inclusive: dict[int, tuple[int, int]] = state.inclusive
        self._parents: dict[int, CSTNode] = state.parents
        self.events: list[tuple[bool, CSTNode]] = state.events
        code = "".join(state.tokens)
        # Whether the generated code is the text itself: then every comment is a node (``suppressions``).
        self.reproduces = text is None or code == text
        if text is not None and not self.reproduces and _comparable(code) != _comparable(text):
            given, read = _comparable(text), _comparable(code)
            pairs = enumerate(zip(read, given, strict=False))
            differ = next((i for i, (a, b) in pairs if a != b), min(len(read), len(given)))
            row = len(_NEWLINE.findall(given, 0, differ)) + 1
            lines = _NEWLINE.split(given)
            continuation = row <= len(lines) and lines[row - 1].strip(" \t") == "\\"
            why = "it holds only a `\\` line continuation, which libcst drops"
            if not continuation:
                why = "libcst gives back other text"
            raise NotReproduced(f"libcst does not read line {row} as Python does ({why})")
        self._line_starts = [0, *(match.end() for match in _NEWLINE.finditer(code))]

    def _position(self, offset: int) -> CodePosition:
        line = bisect.bisect_right(self._line_starts, offset)
        return metadata.CodePosition(line, offset - self._line_starts[line - 1])

    def offsets(self, node: CSTNode) -> tuple[int, int]:
        """The node's (start, end) offsets in characters from the start of the module."""
        return self._offsets[id(node)]

    def parent(self, node: CSTNode) -> CSTNode | None:
        """The node whose code holds the node's (libcst's ``ParentNodeProvider``); None for the module."""
        return self._parents.get(id(node))

    def __getitem__(self, node: CSTNode) -> CodeRange:
        start, end = self._offsets[id(node)]
        return metadata.CodeRange(self._position(start), self._position(end))

    def __iter__(self) -> Iterator[CSTNode]:
        return (node for entering, node in self.events if entering)

    def __len__(self) -> int:
        return len(self._offsets)
