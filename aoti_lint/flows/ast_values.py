"""What an expression of a module is, read from ``ast`` and the semantic model: the ``ast`` counterpart of
``flows.evaluator`` (libcst's), which ``rules.ast_flow`` reads AOTI001/AOTI002 and the device-flow summary on.

Values are those of ``flows.values``, given where this reading settles them exactly as libcst's evaluator does;
anything else raises ``NotSettled`` and the module is left to libcst.
"""

from __future__ import annotations

import ast

from aoti_lint.flows.example_inputs import ExampleInputs
from aoti_lint.flows.flow_summary import Span
from aoti_lint.flows.module_reader import last_parts
from aoti_lint.flows.values import Artifact, Const, Loaded, Mapping, Qualified, Seq, int_of
from aoti_lint.knowledge.device_flow import (
    DIM,
    DIM_DYNAMIC,
    DIM_STATIC,
    DTYPES,
    EXPORT,
    LIKE_FACTORIES,
    MOVING_METHODS,
    OS_PATH_DIRNAME,
    OS_PATH_IDENTITY,
    OS_PATH_JOIN,
    PATHLIB_PATH,
    PRESERVING_METHODS,
    SEQUENCE_BUILTINS,
    TENSOR_FACTORIES,
    TORCH_DEVICE,
)
from aoti_lint.model.bindings import ARGUMENT
from aoti_lint.model.parse import folds_names
from aoti_lint.model.semantic import SemanticModel, model_of
from aoti_lint.model.syntax_tree import children, source_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class NotSettled(Exception):
    """Something this reading does not settle exactly as libcst's analysis: the module goes to libcst."""


# The callees and attributes the evaluator gives a value to (``evaluator``): a value this reading does not build.
_SPECIAL_CALLEES = frozenset(
    {EXPORT, TORCH_DEVICE, "builtins.str"}
    | TENSOR_FACTORIES.keys()
    | LIKE_FACTORIES
    | DIM
    | PATHLIB_PATH
    | OS_PATH_JOIN
    | SEQUENCE_BUILTINS
    | OS_PATH_IDENTITY
    | OS_PATH_DIRNAME
)
_CALLEE_NAMES = last_parts(_SPECIAL_CALLEES)
_ATTRIBUTE_NAMES = last_parts(DTYPES, DIM_DYNAMIC, DIM_STATIC)
# Methods whose value the evaluator reads from their receiver (``ModuleEvaluator._method``): the value of a tensor, a
# program or a path, which this reading never gives, so theirs is none; and those that place a tensor.
_RECEIVER_METHODS = frozenset({"module", "resolve", "absolute"}) | PRESERVING_METHODS
_PLACING_METHODS = frozenset({"to"}) | MOVING_METHODS.keys()


def names_so(value: object) -> bool:
    """Whether a constant's value (a string's or bytes') holds `.so`."""
    if type(value) is str:
        return ".so" in value
    return type(value) is bytes and b".so" in value


class AstValues(ExampleInputs):
    """A module's nodes, parents, names, bindings and the values of its expressions."""

    def __init__(self, text: str, tree: ast.Module, target_torch: tuple[int, int]) -> None:
        if folds_names(text):
            raise NotSettled
        self.text, self.tree, self.target_torch = text, tree, target_torch
        self.lines = source_lines(text)
        self.model: SemanticModel = model_of(tree)
        self.parents: dict[int, ast.AST] = {}
        self.nodes: list[ast.AST] = []  # every node but the expression contexts, parents before children
        self.in_fstring: set[int] = set()
        # The strings that name a `.so`: a comparison's operands and statements of their own (a docstring) alone,
        # whose value no call or name receives (see ``_so_mentions``).
        self.so_strings: list[ast.Constant] = []
        stack: list[tuple[ast.AST, ast.AST | None, bool]] = [(tree, None, False)]
        while stack:
            node, parent, formatted = stack.pop()
            self.nodes.append(node)
            if parent is not None:
                self.parents[id(node)] = parent
            if formatted:
                self.in_fstring.add(id(node))
            if type(node) is ast.Constant and names_so(node.value):
                if formatted or type(parent) not in (ast.Compare, ast.Expr):
                    raise NotSettled  # a path the migration plan follows, or one libcst places otherwise
                self.so_strings.append(node)
            inner = formatted or type(node) is ast.JoinedStr
            stack.extend((child, node, inner) for child in reversed(children(node)))
        # Calls in the order libcst meets them: by where they start, one around another first.
        self.calls: list[ast.Call] = sorted(
            (node for node in self.nodes if isinstance(node, ast.Call)),
            key=lambda call: (call.lineno, call.col_offset, -(call.end_lineno or 0), -(call.end_col_offset or 0)),
        )
        # The target of each plain one-name assignment, where libcst's single assignment of a name is read.
        self.assignments: dict[tuple[int, int], ast.Assign | ast.AnnAssign] = {}
        self.parameters: dict[tuple[int, int], ast.arg] = {}
        for node in self.nodes:
            if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
                self.assignments[self._at(node.targets[0])] = node
            elif type(node) is ast.AnnAssign and type(node.target) is ast.Name:
                self.assignments[self._at(node.target)] = node
            elif type(node) is ast.arg:
                self.parameters[self._at(node)] = node
        self.self_attributes = self._self_attributes()
        # The loads of the new API (``aoti_load_package``, ``load_package``), each call with its index among the
        # summary's loads: in a module without a deprecated call, those are all its loads.
        self.package_loads: dict[int, int] = {}
        self._memo: dict[int, object] = {}
        self._busy: set[int] = set()
        # The deprecated calls by the id of their node, each with its index among the compiles or the loads (set
        # by the flow reading, ``ast_flow``): what ``_eval_call`` gives such a call.
        self.sites_by_call: dict[int, tuple[Any, int]] = {}

    # -- positions and names ----------------------------------------------------------------------------

    def _column(self, line: int, offset: int) -> int:
        text = self.lines[line - 1]
        return offset if text.isascii() else len(text.encode()[:offset].decode(errors="replace"))

    def _at(self, node: Any) -> tuple[int, int]:
        """libcst's (line, column) of where a node starts: columns in characters, not bytes."""
        return (node.lineno, self._column(node.lineno, node.col_offset))

    def span(self, node: Any) -> Span:
        start = self._at(node)
        return Span(start[0], start[1] + 1, node.end_lineno, self._column(node.end_lineno, node.end_col_offset) + 1)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def may_name(self, node: Any, short_names: frozenset[str] | set[str]) -> bool:
        """``QualifiedNames.may_name``: whether the node's qualified names can end in one of ``short_names``."""
        return self.model.may_name(node, short_names)

    def names(self, node: ast.AST) -> set[str]:
        """The qualified names of a name or attribute chain (``SemanticModel.qualified_names``)."""
        if id(node) in self.in_fstring:
            raise NotSettled  # before Python 3.12, ast may place what an f-string holds elsewhere
        names = self.model.qualified_names(node)
        if self.model.follow is not None and names != self.model.qualified_names(node, across_modules=False):
            raise NotSettled  # named through another module of the project: the fix's verdict is libcst's reading's
        return names

    def names_among(self, node: ast.AST, short_names: frozenset[str]) -> set[str]:
        return self.names(node) if self.may_name(node, short_names) else set()

    # -- the module's bindings, as ``model.module_facts.ModuleFacts`` reads them ------------------------------------

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

    # -- values, as ``analysis.evaluator`` gives them -----------------------------------------------------

    def _eval(self, node: Any) -> object:
        if id(node) in self.in_fstring:
            if self._unknown_attribute(node):
                return None  # as anywhere else: no name or position of it is read (`f"{options.keys()}"`)
            raise NotSettled
        kind = type(node)
        if kind is ast.Constant:
            value = node.value
            # libcst: a string's value, an integer's, and the names None, True and False.
            if value is None or type(value) in (str, int, bool):
                return Const(value)
            return None
        if kind is ast.UnaryOp:
            if type(node.op) is not ast.USub:
                return None
            operand = int_of(self.eval(node.operand))
            return None if operand is None else Const(-operand)
        if kind is ast.Name:
            return self._eval_name(node)
        if kind is ast.Tuple or kind is ast.List:
            items: list[object] = []
            for element in node.elts:
                if type(element) is ast.Starred:
                    value = self.eval(element.value)
                    if not isinstance(value, Seq):
                        return None
                    items.extend(value.items)
                else:
                    items.append(self.eval(element))
            return Seq(tuple(items))
        if kind is ast.Dict:
            pairs = []
            for key_node, value_node in zip(node.keys, node.values, strict=True):
                if key_node is None:
                    return None
                key = self.eval(key_node)
                if not isinstance(key, Const):
                    return None
                pairs.append((key.value, self.eval(value_node)))
            return Mapping(tuple(pairs))
        if kind is ast.Attribute:
            for name in self.names_among(node, _ATTRIBUTE_NAMES):
                if name in DTYPES or name in DIM_DYNAMIC or name in DIM_STATIC:
                    return Qualified(name)
            if type(node.value) is ast.Name and node.value.id == "self":
                owner = self._enclosing_class(node)
                values = self.self_attributes.get((id(owner), node.attr), []) if owner is not None else []
                return self.eval(values[0]) if len(values) == 1 else None
            if node.attr == "parent":
                raise NotSettled  # a path's parent
            return None
        if kind is ast.Subscript:
            return self._eval_subscript(node)
        if kind is ast.BinOp:
            # A path built with `/` starts from a path this reading never gives; `+` joins two strings.
            left, right = self.eval(node.left), self.eval(node.right)
            if type(node.op) is not ast.Add or not (isinstance(left, Const) and isinstance(right, Const)):
                return None
            if isinstance(left.value, str) and isinstance(right.value, str):
                return Const(left.value + right.value)
            return None
        if kind is ast.JoinedStr:
            raise NotSettled  # libcst reads an f-string's parts as written
        if kind is ast.Call:
            return self._eval_call(node)
        return None

    @staticmethod
    def _unknown_attribute(node: Any) -> bool:
        """An attribute that ``_eval`` gives no value without asking what it names: not `self.x`, no dtype or `Dim`
        attribute, no path's `parent`."""
        return (
            type(node) is ast.Attribute
            and node.attr not in _ATTRIBUTE_NAMES
            and node.attr != "parent"
            and not (type(node.value) is ast.Name and node.value.id == "self")
        )

    def _eval_name(self, node: ast.Name) -> object:
        # (The evaluator never gives a tensor here, so a name changed in place needs no care.)
        bound = self.single_value(node)
        if bound is not None:
            return self.eval(bound)
        parameter = self.lone_parameter(node)
        if parameter is not None:
            default = self._default_of(parameter)
            if default is None:
                return None
            value = self.eval(default)
            return value if isinstance(value, Const) and self._left_to_default(parameter) else None
        if node.id == "__file__":
            raise NotSettled
        return None

    def _left_to_default(self, parameter: ast.arg) -> bool:
        """Whether every call of the parameter's function leaves it to its default, as ``ModuleEvaluator``'s
        ``_parameter_default`` reads it: a function of no class, undecorated, called in this module, by its name
        (``SemanticModel.references`` of its def)."""
        function = self.parent(self.parent(parameter))  # type: ignore[arg-type]  # an ast.arguments, see _default_of
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            raise NotSettled  # a lambda's: libcst's evaluator looks for the def around it
        if function.decorator_list or self._enclosing_class(function) is not None:
            return False
        binding = self.model.binding_made_by(function)
        reads = None if binding is None else self.model.references(binding)
        if not reads:
            return False
        arguments = function.args
        positional = [*arguments.posonlyargs, *arguments.args]
        position = positional.index(parameter) if parameter in positional else None
        for read in reads:
            call = self.parent(read)
            if type(call) is not ast.Call or call.func is not read:
                return False
            if any(type(item) is ast.Starred for item in call.args) or any(
                item.arg is None or item.arg == parameter.arg for item in call.keywords
            ):
                return False
            if position is not None and len(call.args) > position:
                return False
        return True

    def _default_of(self, parameter: ast.arg) -> ast.expr | None:
        arguments = self.parent(parameter)
        if type(arguments) is not ast.arguments:
            raise NotSettled
        positional = [*arguments.posonlyargs, *arguments.args]
        if parameter in positional:
            index = positional.index(parameter) - (len(positional) - len(arguments.defaults))
            return arguments.defaults[index] if index >= 0 else None
        if parameter in arguments.kwonlyargs:
            return arguments.kw_defaults[arguments.kwonlyargs.index(parameter)]
        return None  # *args, **kwargs

    def _eval_subscript(self, node: ast.Subscript) -> object:
        if type(node.slice) in (ast.Slice, ast.Tuple):
            # libcst: a slice, or several indices (`x[a, b]`), has no value; `x[(a, b)]` has one index, a tuple,
            # which is no constant either.
            return None
        base = self.eval(node.value)
        key = self.eval(node.slice)
        if not isinstance(key, Const):
            return None
        if isinstance(base, Seq) and isinstance(key.value, int) and -len(base.items) <= key.value < len(base.items):
            return base.items[key.value]
        if isinstance(base, Mapping):
            matches = [value for item_key, value in base.items if item_key == key.value]
            return matches[-1] if matches else None
        return None

    def _eval_call(self, call: ast.Call) -> object:
        site = self.sites_by_call.get(id(call))
        if site is not None:
            return Artifact(site[1]) if site[0].kind == "compile" else Loaded(site[1])
        package_load = self.package_loads.get(id(call))
        if package_load is not None:
            return Loaded(package_load)
        special = self.names_among(call.func, _CALLEE_NAMES) & _SPECIAL_CALLEES
        if special:
            if special <= SEQUENCE_BUILTINS and len(call.args) == 1 and not call.keywords:
                if type(call.args[0]) is ast.Starred:
                    raise NotSettled  # libcst's evaluator reads the starred value itself
                value = self.eval(call.args[0])  # `tuple(x)`, `list(x)`: x's items, when it is a sequence
                return value if isinstance(value, Seq) else None
            raise NotSettled  # a tensor factory, a device, an export, a path builder: not read here
        if type(call.func) is ast.Attribute and call.func.attr in _PLACING_METHODS:
            raise NotSettled
        if type(call.func) is ast.Attribute and call.func.attr in _RECEIVER_METHODS:
            self.eval(call.func.value)
        if type(call.func) is ast.Name and not call.args and not call.keywords and call.func.id in self.model.functions:
            raise NotSettled  # a helper of the module: libcst's evaluator reads what it returns
        return None

    # -- what the module reader finds ---------------------------------------------------------------------

    def argument(self, call: ast.Call, position: int | None, keyword: str | None) -> ast.expr | None:
        """``ModuleReader.argument``: the expression passed as ``keyword`` or at ``position`` (before any
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
    def unpacks(call: ast.Call) -> bool:
        return any(type(arg) is ast.Starred for arg in call.args) or any(item.arg is None for item in call.keywords)

    def _self_attributes(self) -> dict[tuple[int, str], list[ast.expr | None]]:
        """``self.x = ...`` values per class (``module_reader.scan_module``): a value not tracked counts twice."""
        found: dict[tuple[int, str], list[ast.expr | None]] = {}

        def bind(target: ast.expr, value: ast.expr | None) -> None:
            if isinstance(target, ast.Tuple | ast.List):
                for element in target.elts:
                    bind(element.value if isinstance(element, ast.Starred) else element, None)
            elif isinstance(target, ast.Attribute) and type(target.value) is ast.Name and target.value.id == "self":
                owner = self._enclosing_class(target)
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

    def _enclosing_class(self, node: ast.AST) -> ast.AST | None:
        current = self.parent(node)
        while current is not None and type(current) is not ast.ClassDef:
            current = self.parent(current)
        return current
