"""One module's nodes, parents, names, bindings, call arguments and default device, read from ``ast`` and the
semantic model: the base of the flow reading (``flows.evaluator`` and the layers above it)."""

from __future__ import annotations

import ast
import functools

from aoti_lint.flows.flow_summary import Device, Span
from aoti_lint.flows.values import DeviceValue, device_of
from aoti_lint.knowledge.device_flow import MOVING_METHODS, SET_DEFAULT_DEVICE, TORCH_DEVICE
from aoti_lint.model.bindings import ARGUMENT
from aoti_lint.model.semantic import SemanticModel, last_parts, model_of
from aoti_lint.model.syntax_tree import CHILD_FIELDS, child_fields, children, source_lines, source_segment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_TORCH_DEVICE_NAME = last_parts({TORCH_DEVICE})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def names_so(value: object) -> bool:
    """Whether a constant's value (a string's or bytes') holds `.so`."""
    if type(value) is str:
        return ".so" in value
    return type(value) is bytes and b".so" in value


class ModuleReader:
    """A module's nodes in source order, their parents, names and bindings."""

    eval: Any

    def __init__(
        self,
        text: str,
        tree: ast.Module,
        target_torch: tuple[int, int],
        path: str = "",
        model: SemanticModel | None = None,
    ) -> None:
        self.text, self.tree, self.target_torch, self.path = text, tree, target_torch, path
        self.lines = source_lines(text)
        self.model: SemanticModel = model if model is not None else model_of(tree)
        self.parents: dict[int, ast.AST] = {}
        self.nodes: list[ast.AST] = []  # every node but the expression contexts, parents before children
        self.in_fstring: set[int] = set()
        # The strings that name a `.so` (``PathExpressions.so_mentions``).
        self.so_strings: list[ast.Constant] = []
        # One pass over the tree, the children pushed last first so that they pop in field order (``children``).
        stack: list[tuple[ast.AST, ast.AST | None, bool]] = [(tree, None, False)]
        pop, push, add = stack.pop, stack.append, self.nodes.append
        parents, fields, node_type = self.parents, CHILD_FIELDS, ast.AST
        while stack:
            node, parent, formatted = pop()
            add(node)
            if parent is not None:
                parents[id(node)] = parent
            if formatted:
                self.in_fstring.add(id(node))
            kind = type(node)
            if kind is ast.Constant:
                if names_so(node.value):  # type: ignore[attr-defined]
                    self.so_strings.append(node)  # type: ignore[arg-type]
                continue  # no children, as a `Name` has none
            inner = formatted or kind is ast.JoinedStr
            for name in reversed(fields.get(kind) or child_fields(kind)):
                value = getattr(node, name, None)
                if type(value) is list:
                    for item in reversed(value):
                        if isinstance(item, node_type):
                            push((item, node, inner))
                elif isinstance(value, node_type):
                    push((value, node, inner))
        # Calls by where they start, one around another first: the order the codemod's plan numbers its sites in.
        self.calls: list[ast.Call] = sorted(
            (node for node in self.nodes if isinstance(node, ast.Call)),
            key=lambda call: (call.lineno, call.col_offset, -(call.end_lineno or 0), -(call.end_col_offset or 0)),
        )
        self._under_device: set[str] | None = None
        # The calls that set the default device, set by the flow reading.
        self.setter_calls: list[ast.Call] = []
        self._default_device: tuple[Device | None, int] | None = None

    # The facts below are read from the nodes when first asked: most modules a run reads never need them.

    @functools.cached_property
    def changed_in_place(self) -> set[str]:
        """`model.cuda()` as a statement moves a module in place, `x.unsqueeze_(0)` reshapes a tensor: the name's
        binding no longer tells its device or shape (``module_reader.scan_module``)."""
        return {
            node.value.func.value.id
            for node in self.nodes
            if type(node) is ast.Expr
            and type(node.value) is ast.Call
            and type(node.value.func) is ast.Attribute
            and type(node.value.func.value) is ast.Name
            and _changes_in_place(node.value.func.attr)
        }

    @functools.cached_property
    def device_blocks(self) -> list[ast.With | ast.AsyncWith]:
        """The blocks that may set a device for the factories they run."""
        return [
            node
            for node in self.nodes
            if isinstance(node, ast.With | ast.AsyncWith)
            and any(
                type(item.context_expr) is not ast.Call
                or TORCH_DEVICE in self.names_among(item.context_expr.func, _TORCH_DEVICE_NAME)
                for item in node.items
            )
        ]

    # -- positions and names ----------------------------------------------------------------------------

    def _column(self, line: int, offset: int) -> int:
        text = self.lines[line - 1]
        return offset if text.isascii() else len(text.encode()[:offset].decode(errors="replace"))

    def _at(self, node: Any) -> tuple[int, int]:
        """The (line, column) where a node starts: columns in characters, not bytes."""
        return (node.lineno, self._column(node.lineno, node.col_offset))

    def span(self, node: Any) -> Span:
        start = self._at(node)
        return Span(start[0], start[1] + 1, node.end_lineno, self._column(node.end_lineno, node.end_col_offset) + 1)

    def code(self, node: ast.AST) -> str:
        return source_segment(self.lines, node)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def may_name(self, node: Any, short_names: frozenset[str] | set[str]) -> bool:
        """Whether the node's qualified names can end in one of ``short_names``."""
        return self.model.may_name(node, short_names)

    def names(self, node: ast.AST) -> set[str]:
        """The qualified names of a name or attribute chain (``SemanticModel.qualified_names``)."""
        return self.model.qualified_names(node)

    def names_among(self, node: ast.AST, short_names: frozenset[str]) -> set[str]:
        return self.names(node) if self.may_name(node, short_names) else set()

    # -- the module's bindings (``model.semantic``) -----------------------------------------------------------------

    def single_value(self, name: ast.Name) -> ast.expr | None:
        binding = self.model.only_binding(name)
        return None if binding is None else binding.value

    def lone_parameter(self, name: ast.Name) -> ast.arg | None:
        binding = self.model.only_binding(name)
        return binding.node if binding is not None and binding.kind == ARGUMENT else None  # type: ignore[return-value]

    def references(self, name: ast.Name) -> list[tuple[int, int]] | None:
        binding = self.model.only_binding(name)
        reads = None if binding is None else self.model.references(binding)
        return None if reads is None else [self._at(read) for read in reads]

    def may_be_import(self, name: ast.Name) -> bool:
        return self.model.may_be_import(name)

    def imported_alone(self, name: ast.Name) -> bool:
        """Whether the one binding a read reaches is an import."""
        binding = self.model.only_binding(name)
        return binding is not None and binding.kind in ("import", "from-import")

    # -- a call's arguments -----------------------------------------------------------------------------------

    def argument(self, call: ast.Call, position: int | None, keyword: str | None) -> ast.expr | None:
        """The expression passed as ``keyword`` or at ``position`` (before any
        ``*args``)."""
        for item in call.keywords:
            if item.arg is not None and item.arg == keyword:
                return item.value
        if position is None:
            return None
        positional = []
        for arg in call.args:
            if type(arg) is ast.Starred:
                break
            positional.append(arg)
        return positional[position] if position < len(positional) else None

    @staticmethod
    def has_keyword(call: ast.Call, keyword: str) -> bool:
        return any(item.arg == keyword for item in call.keywords)

    @staticmethod
    def unpacks(call: ast.Call) -> bool:
        return any(type(arg) is ast.Starred for arg in call.args) or any(item.arg is None for item in call.keywords)

    @functools.cached_property
    def self_attributes(self) -> dict[tuple[int, str], list[ast.expr | None]]:
        """``self.x = ...`` values per class (``module_reader.scan_module``): a value not tracked counts twice."""
        found: dict[tuple[int, str], list[ast.expr | None]] = {}

        def bind(target: ast.expr, value: ast.expr | None) -> None:
            if isinstance(target, ast.Tuple | ast.List):
                for element in target.elts:
                    bind(element.value if isinstance(element, ast.Starred) else element, None)
            elif isinstance(target, ast.Attribute) and type(target.value) is ast.Name and target.value.id == "self":
                owner = self.enclosing(target, ast.ClassDef)
                if owner is not None:
                    found.setdefault((id(owner), target.attr), []).extend(
                        [value] if value is not None else [None, None]
                    )

        for node in self.nodes:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target, node.value)
            elif isinstance(node, ast.AnnAssign):
                if node.value is not None:
                    bind(node.target, node.value)
            elif isinstance(node, ast.AugAssign):
                bind(node.target, None)
        return found

    def enclosing(self, node: ast.AST, kinds: Any) -> Any:
        """The nearest node around ``node`` of one of ``kinds``."""
        current = self.parent(node)
        while current is not None and not isinstance(current, kinds):
            current = self.parent(current)
        return current

    # -- the default device, as ``flows.default_device`` reads it ----------------------------------------------

    def default_device(self, node: ast.AST) -> Device | None:
        """The device of a factory call without ``device=``."""
        current = self.parent(node)
        # A `with` outside the enclosing function does not hold when the function runs.
        while current is not None and not isinstance(current, (*_FUNCTIONS, ast.Lambda)):
            if isinstance(current, ast.With | ast.AsyncWith):
                for item in current.items:
                    context = item.context_expr
                    if type(context) is ast.Call:
                        if TORCH_DEVICE in self.names(context.func):
                            return device_of(self.eval(context))
                    else:
                        # An object used as a context manager may be a device.
                        value = self.eval(context)
                        return value.device if isinstance(value, DeviceValue) else None
            current = self.parent(current)
        if self.device_blocks and self._may_run_under_device_block(node):
            return None
        return self._module_default_device(node)

    def _may_run_under_device_block(self, node: ast.AST) -> bool:
        """Whether the function around ``node`` may be called inside a ``with torch.device(...)`` of this module: its
        name (or a function's that calls it) is used in such a block. A lambda is not followed."""
        if self.enclosing(node, ast.Lambda) is not None:
            return True
        functions = []
        current = self.enclosing(node, _FUNCTIONS)
        while current is not None:
            functions.append(current)
            current = self.enclosing(current, _FUNCTIONS)
        if not functions:
            return False
        if self._under_device is None:
            self._under_device = self._names_reached_from(self.device_blocks)
        return any(function.name in self._under_device for function in functions)

    def _names_reached_from(self, blocks: list[Any]) -> set[str]:
        """The names in ``blocks``' bodies (bare names, attributes' last parts, keywords,
        parameters, defs: so methods count), and transitively in the bodies of the functions so named."""
        bodies: dict[str, list[list[ast.stmt]]] = {}
        for node in self.nodes:
            if isinstance(node, _FUNCTIONS):
                bodies.setdefault(node.name, []).append(node.body)
        reached: set[str] = set()
        pending = [block.body for block in blocks]
        while pending:
            found: set[str] = set()
            for statement in pending.pop():
                found |= _name_nodes(statement)
            for name in found - reached:
                reached.add(name)
                pending.extend(bodies.get(name, ()))
        return reached

    def _module_default_device(self, node: ast.AST) -> Device | None:
        if not self.setter_calls:
            return Device("cpu")
        if self._default_device is None:
            self._default_device = (None, 0)
            if len(self.setter_calls) == 1:
                setter = self.setter_calls[0]
                statement = self.parent(setter)
                at_top = type(statement) is ast.Expr and self.parent(statement) is self.tree
                if at_top and SET_DEFAULT_DEVICE in self.names(setter.func):
                    argument = self.argument(setter, 0, "device")
                    device = device_of(self.eval(argument)) if argument is not None else None
                    self._default_device = (device, self.span(setter).row)
        device, row = self._default_device
        if device is not None and self.span(node).row < row and self.enclosing(node, _FUNCTIONS) is None:
            return Device("cpu")
        return device


def _changes_in_place(method: str) -> bool:
    return method in MOVING_METHODS or method == "to" or method.endswith("_")


def _name_nodes(root: ast.AST) -> set[str]:
    """Every name under ``root`` (bare names, attributes' last parts, keywords, parameters, defs)."""
    found: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            found.add(node.id)  # type: ignore[attr-defined]
        elif kind is ast.Attribute:
            found.add(node.attr)  # type: ignore[attr-defined]
        elif kind is ast.keyword or kind is ast.arg:
            name = node.arg  # type: ignore[attr-defined]
            if name is not None:
                found.add(name)
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            found.add(node.name)  # type: ignore[attr-defined]
        elif kind is ast.alias:
            found.update(node.name.split("."))  # type: ignore[attr-defined]
            if node.asname:  # type: ignore[attr-defined]
                found.add(node.asname)  # type: ignore[attr-defined]
        elif kind is ast.ImportFrom:
            found.update(part for part in (node.module or "").split(".") if part)  # type: ignore[attr-defined]
        elif kind is ast.Global or kind is ast.Nonlocal:
            found.update(node.names)  # type: ignore[attr-defined]
        elif kind in (ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
            if node.name:  # type: ignore[attr-defined]
                found.add(node.name)  # type: ignore[attr-defined]
        elif kind is ast.MatchMapping:
            if node.rest:  # type: ignore[attr-defined]
                found.add(node.rest)  # type: ignore[attr-defined]
        elif kind is ast.Constant and node.value in (None, True, False) and type(node.value) is not int:  # type: ignore[attr-defined]
            found.add(repr(node.value))  # type: ignore[attr-defined]  # `None`, `True`, `False` count as names
        stack.extend(children(node))
    return found
