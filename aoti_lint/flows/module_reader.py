"""The base of the device-flow analysis of one module: its calls, parents, names and positions.

One pass collects the calls (the compiles, loads and default-device setters among them), ``self.x``
assignments, ``with`` blocks and names changed in place. The layers above it (``default_device``,
``evaluator``, ``sites``, ``module_flow``) each add one job. libcst is imported inside the functions only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from aoti_lint.flows.flow_summary import (
    Device,
    Span,
)
from aoti_lint.knowledge.device_flow import (
    AOT_COMPILE_INDUCTOR,
    AOT_COMPILE_OLD,
    AOT_LOAD_OLD,
    COMPILE_AND_PACKAGE,
    MOVING_METHODS,
    OTHER_DEFAULT_DEVICE_SETTERS,
    PACKAGE_LOADERS,
    SET_DEFAULT_DEVICE,
    TORCH_DEVICE,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def last_parts(*tables: Iterable[str]) -> frozenset[str]:
    """The last parts of qualified names (``aoti_load_package`` of ``torch._inductor.aoti_load_package``): what
    a callee must be spelled with to have one of them (``QualifiedNames.may_name``)."""
    return frozenset(name.rsplit(".", 1)[-1] for table in tables for name in table)


_TORCH_DEVICE_NAME = last_parts({TORCH_DEVICE})
# The last parts of the names of every call the reader sorts into compiles, loads and default-device setters.
_SITE_SHORT_NAMES = last_parts(
    COMPILE_AND_PACKAGE,
    AOT_COMPILE_INDUCTOR,
    {AOT_COMPILE_OLD, AOT_LOAD_OLD, SET_DEFAULT_DEVICE},
    PACKAGE_LOADERS,
    OTHER_DEFAULT_DEVICE_SETTERS,
)


class ModuleReader:
    """One module's calls and syntax facts; ``eval`` (an expression's abstract value, or None when it is not
    known) is given by ``example_inputs.ExampleInputs``, mixed into ``evaluator.ModuleEvaluator``."""

    eval: Any

    def __init__(self, context: Any) -> None:
        import libcst as cst

        self.cst = cst
        self.context = context
        self.module = context.module
        # Parents, bindings and single assignments are shared with the other rules of the file.
        self.facts = context.facts()
        self.positions = context.positions()
        self._memo: dict[int, object] = {}
        self._busy: set[int] = set()
        self._default_device: tuple[Device | None, int] | None = None
        collector = scan_module(cst, self.facts)
        self.self_attributes = collector.self_attributes
        self.calls = collector.calls
        self.changed_in_place = collector.changed_in_place
        # A factory in a function may run inside a caller's ``with torch.device(...)`` (or an unknown context
        # object that may be one): the blocks that may set a device, and (lazily) the functions they may call.
        self.device_blocks = [
            block
            for block in collector.withs
            if any(
                not isinstance(item.item, cst.Call)
                or TORCH_DEVICE in self.names_among(item.item.func, _TORCH_DEVICE_NAME)
                for item in block.items
            )
        ]
        self.device_contexts = bool(self.device_blocks)
        self._under_device: set[str] | None = None
        self.compile_calls: list[Any] = []
        self.load_calls: list[Any] = []
        self.setter_calls: list[Any] = []
        for call in self.calls:
            # Syntax first: a method of a parameter would have libcst resolve the scopes of the module. libcst
            # names a call after its callee: `aoti_load_package(p)(x)` runs the loaded model, it loads nothing.
            if type(call.func) is cst.Call or not self.facts.may_name(call.func, _SITE_SHORT_NAMES):
                continue
            names = self.names(call.func)
            if names & (COMPILE_AND_PACKAGE | AOT_COMPILE_INDUCTOR | {AOT_COMPILE_OLD}):
                self.compile_calls.append(call)
            elif names & ({AOT_LOAD_OLD} | set(PACKAGE_LOADERS)):
                self.load_calls.append(call)
            elif names & ({SET_DEFAULT_DEVICE} | OTHER_DEFAULT_DEVICE_SETTERS):
                self.setter_calls.append(call)
        self.compile_index = {id(call): index for index, call in enumerate(self.compile_calls)}
        self.load_index = {id(call): index for index, call in enumerate(self.load_calls)}

    # -- helpers ------------------------------------------------------------------------------------------

    def parent(self, node: Any) -> Any:
        return self.facts.parent(node)

    def names(self, node: Any) -> set[str]:
        return self.context.qualified_names(node)

    def names_among(self, node: Any, short_names: frozenset[str]) -> set[str]:
        """The node's qualified names if one can end in ``short_names``, else none: syntax is looked at first
        (``QualifiedNames.may_name``), and a method of a parameter costs no scope analysis."""
        return self.names(node) if self.facts.may_name(node, short_names) else set()

    def span(self, node: Any) -> Span:
        position = self.positions[node]
        return Span(position.start.line, position.start.column + 1, position.end.line, position.end.column + 1)

    def text(self, node: Any) -> str:
        return self.module.code_for_node(node)

    def argument(self, call: Any, position: int | None, keyword: str | None) -> Any:
        """The expression passed as ``keyword`` or at ``position`` (before any ``*args``), or None."""
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == keyword:
                return arg.value
        if position is None:
            return None
        positional = []
        for arg in call.args:
            if arg.keyword is not None or arg.star:
                break
            positional.append(arg.value)
        return positional[position] if position < len(positional) else None

    def has_keyword(self, call: Any, keyword: str) -> bool:
        return any(arg.keyword is not None and arg.keyword.value == keyword for arg in call.args)

    @staticmethod
    def unpacks(call: Any) -> bool:
        """``f(*a)``/``f(**k)``: any argument not written out may be there."""
        return any(arg.star for arg in call.args)

    def _enclosing(self, node: Any, kind: type) -> Any:
        current = self.parent(node)
        while current is not None and not isinstance(current, kind):
            current = self.parent(current)
        return current


@dataclass
class ModuleScan:
    """``self.x = ...`` values per class, every call, the ``with`` blocks, names changed in place."""

    self_attributes: dict[tuple[int, str], list[Any]] = field(default_factory=dict)
    calls: Sequence[Any] = ()
    withs: Sequence[Any] = ()
    changed_in_place: set[str] = field(default_factory=set)


def scan_module(cst: Any, facts: Any) -> ModuleScan:
    """What the reader needs from the whole module, from the facts' one walk of its nodes (no visitor pass)."""
    scan = ModuleScan(calls=facts.nodes(cst.Call), withs=facts.nodes(cst.With))

    def enclosing_class(node: Any) -> Any:
        current = facts.parent(node)
        while current is not None and not isinstance(current, cst.ClassDef):
            current = facts.parent(current)
        return current

    def bind(target: Any, value: Any) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                bind(element.value, None)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            owner = enclosing_class(target)
            if owner is not None:
                # An assignment whose value is not tracked counts twice: the attribute is then unknown.
                values = scan.self_attributes.setdefault((id(owner), target.attr.value), [])
                values.extend([value] if value is not None else [None, None])

    for statement in facts.nodes(cst.Assign, cst.AnnAssign, cst.AugAssign):
        if isinstance(statement, cst.Assign):
            for target in statement.targets:
                bind(target.target, statement.value)
        elif isinstance(statement, cst.AnnAssign):
            if statement.value is not None:
                bind(statement.target, statement.value)
        else:
            bind(statement.target, None)

    for expression in facts.nodes(cst.Expr):
        # `model.cuda()` as a statement moves a module in place, `x.unsqueeze_(0)` reshapes a tensor: the
        # name's binding no longer tells its device or shape.
        call = expression.value
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and isinstance(call.func.value, cst.Name)
        ):
            continue
        method = call.func.attr.value
        if method in MOVING_METHODS or method == "to" or method.endswith("_"):
            scan.changed_in_place.add(call.func.value.value)
    return scan
