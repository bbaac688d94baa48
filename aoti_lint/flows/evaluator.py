"""What an expression of a module is, read from ``ast`` and the semantic model: the values of ``flows.values``
(exports, tensors and their devices and shapes, devices, paths, strings), where the code makes them certain; anything
else is unknown (None), and never leads to a finding."""

from __future__ import annotations

import ast
import posixpath
import re
from pathlib import Path

from aoti_lint.flows.example_inputs import ExampleInputs
from aoti_lint.flows.flow_summary import Device
from aoti_lint.flows.module_reader import ModuleReader
from aoti_lint.flows.tensor_values import TensorValues
from aoti_lint.flows.values import (
    Artifact,
    Const,
    DimValue,
    Exported,
    Loaded,
    Mapping,
    PathValue,
    Placed,
    Qualified,
    Seq,
    device_of,
    int_of,
    path_of,
)
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
from aoti_lint.model.bindings import IMPORTS
from aoti_lint.model.semantic import last_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_ATTRIBUTE_NAMES = last_parts(DTYPES, DIM_DYNAMIC, DIM_STATIC)
_CALLEE_NAMES = last_parts(
    {EXPORT, TORCH_DEVICE, "builtins.str"},
    TENSOR_FACTORIES,
    LIKE_FACTORIES,
    DIM,
    PATHLIB_PATH,
    OS_PATH_JOIN,
    SEQUENCE_BUILTINS,
    OS_PATH_IDENTITY,
    OS_PATH_DIRNAME,
)
STRING_START = re.compile(r"[A-Za-z]*('''|\"\"\"|'|\")")
# Text an f-string's source holds other than its value (escapes, doubled braces).
UNLIKE_WRITTEN = ("\\", "{{", "}}")


# target torch -> path -> ((size, mtime), its evaluator): the project's modules whose values another module asks for,
# each read once per process, file version and target.
_ELSEWHERE: dict[tuple[int, int], dict[str, tuple[tuple[int, int], ModuleEvaluator | None]]] = {}
# The (file, name) being followed into another module: a cycle of imports is not known.
_FOLLOWING: set[tuple[str, str]] = set()


class ModuleEvaluator(ModuleReader, ExampleInputs, TensorValues):
    """A module's values."""

    def __init__(
        self, text: str, tree: ast.Module, target_torch: tuple[int, int], path: str = "", model: Any = None
    ) -> None:
        super().__init__(text, tree, target_torch, path, model)
        self._memo: dict[int, object] = {}
        self._busy: set[int] = set()
        # The AOTI calls by the id of their node, each with its index among the compiles or the loads (set by the
        # flow reading, ``module_flow``): what ``_eval_call`` gives such a call.
        self.compile_index: dict[int, int] = {}
        self.load_index: dict[int, int] = {}

    def _eval(self, node: Any) -> object:
        kind = type(node)
        if kind is ast.Constant:
            value = node.value
            # A string's value, an integer's, and None, True and False.
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
            return self._eval_attribute(node)
        if kind is ast.Subscript:
            return self._eval_subscript(node)
        if kind is ast.BinOp:
            return self._eval_binary(node)
        if kind is ast.JoinedStr:
            return self._eval_fstring(node)
        if kind is ast.Call:
            return self._eval_call(node)
        return None

    def _eval_name(self, node: ast.Name) -> object:
        bound = self.single_value(node)
        if bound is not None:
            value = self.eval(bound)
            return Placed(None) if isinstance(value, Placed) and node.id in self.changed_in_place else value
        parameter = self.lone_parameter(node)
        if parameter is not None:
            default = self._default_of(parameter)
            if default is None:
                return None
            value = self.eval(default)
            return value if isinstance(value, Const) and self._left_to_default(parameter) else None
        if node.id == "__file__" and self.model.bindings_of(node) == ():
            return Const(str(Path(self.path).resolve()))
        # (A constant imported from another module is the project pass's to resolve: ``sites._import_ref``.)
        return None

    def _imported(self, read: ast.Name, value: Any) -> object:
        """``value(module, name)`` of the project module that binds what ``read`` imports, where that module binds
        it once and otherwise than by an import: what a call of a helper defined there gives (``_eval_call``)."""
        binding = self.model.only_binding(read) if self.path else None
        if binding is None or binding.kind not in IMPORTS:
            return None
        names = self.names(read)
        from aoti_lint.model.project_names import defined_in

        found = defined_in(self.path, names.pop()) if len(names) == 1 else None
        if found is None or found in _FOLLOWING:
            return None
        path, name = found
        from aoti_lint.read.project_modules import once_per_version

        memo = _ELSEWHERE.setdefault(self.target_torch, {})
        module = once_per_version(memo, path, lambda data: _evaluator(data, path, self.target_torch))
        if module is None:
            return None
        _FOLLOWING.add(found)
        try:
            return value(module, name)
        finally:
            _FOLLOWING.discard(found)

    def _left_to_default(self, parameter: ast.arg) -> bool:
        """Whether every call of the parameter's function leaves it to its default: a function of no class,
        undecorated, called in this module, by its name
        (``SemanticModel.references`` of its def)."""
        function = self.parent(self.parent(parameter))  # type: ignore[arg-type]  # an ast.arguments, see _default_of
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            return False  # a lambda's: its calls are not followed
        if function.decorator_list or self.enclosing(function, ast.ClassDef) is not None:
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
            return None
        positional = [*arguments.posonlyargs, *arguments.args]
        if parameter in positional:
            index = positional.index(parameter) - (len(positional) - len(arguments.defaults))
            return arguments.defaults[index] if index >= 0 else None
        if parameter in arguments.kwonlyargs:
            return arguments.kw_defaults[arguments.kwonlyargs.index(parameter)]
        return None  # *args, **kwargs

    def _eval_attribute(self, node: ast.Attribute) -> object:
        for name in self.names_among(node, _ATTRIBUTE_NAMES):
            if name in DTYPES or name in DIM_DYNAMIC or name in DIM_STATIC:
                return Qualified(name)
        if type(node.value) is ast.Name and node.value.id == "self":
            owner = self.enclosing(node, ast.ClassDef)
            values = self.self_attributes.get((id(owner), node.attr), []) if owner is not None else []
            return self.eval(values[0]) if len(values) == 1 else None
        if node.attr == "parent":
            base = path_of(self.eval(node.value))
            return None if base is None else PathValue(posixpath.dirname(base) or ".")
        return None

    def _eval_subscript(self, node: ast.Subscript) -> object:
        if type(node.slice) in (ast.Slice, ast.Tuple):
            # A slice, or several indices (`x[a, b]`), has no value; `x[(a, b)]` has one index, a tuple,
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

    def _eval_binary(self, node: ast.BinOp) -> object:
        left, right = self.eval(node.left), self.eval(node.right)
        if type(node.op) is ast.Div and isinstance(left, PathValue):
            tail = path_of(right)
            return None if tail is None else PathValue(posixpath.normpath(posixpath.join(left.path, tail)))
        if (
            type(node.op) is ast.Add
            and isinstance(left, Const)
            and isinstance(right, Const)
            and isinstance(left.value, str)
            and isinstance(right.value, str)
        ):
            return Const(left.value + right.value)
        return None

    def as_written(self, node: ast.Constant | ast.JoinedStr) -> re.Match[str] | None:
        """The opening (prefix and quote) of a string's source where it is one literal as written; None where it is
        several joined (whose pieces ``ast`` merges), or where ``ast`` may place it otherwise (inside an f-string
        before Python 3.12) and its text is not known."""
        if id(node) in self.in_fstring:
            return None
        segment = self.code(node)
        opening = STRING_START.match(segment)
        if opening is None:
            return None
        quote, body = opening.group(1), segment[opening.end() :]
        return opening if body.endswith(quote) and quote not in body[: -len(quote)] else None

    def _eval_fstring(self, node: ast.JoinedStr) -> object:
        """An f-string's value where each part it formats has one (without conversion or format spec)."""
        parts = []
        for part in node.values:
            if type(part) is ast.Constant:
                parts.append(str(part.value))
                continue
            if type(part) is not ast.FormattedValue:
                return None
            if part.conversion != -1 or part.format_spec is not None:
                return None
            value = self.eval(part.value)
            if isinstance(value, PathValue):
                parts.append(value.path)
            elif isinstance(value, Const) and isinstance(value.value, str | int):
                parts.append(str(value.value))
            else:
                return None
        return Const("".join(parts))

    def _eval_call(self, call: ast.Call) -> object:
        if id(call) in self.compile_index:
            return Artifact(self.compile_index[id(call)])
        if id(call) in self.load_index:
            return Loaded(self.load_index[id(call)])
        names = self.names_among(call.func, _CALLEE_NAMES)
        if EXPORT in names:
            return self.exported(call)
        if TORCH_DEVICE in names:
            return self._torch_device(call)
        factory = names & TENSOR_FACTORIES.keys()
        if factory:
            return self._factory(call, factory.pop())
        if names & LIKE_FACTORIES:
            template = self.argument(call, 0, "input")
            base = self.eval(template) if template is not None else None
            if self.unpacks(call):
                return Placed(None, None)
            device = self._device_argument(call) if self.has_keyword(call, "device") else device_of(base)
            return Placed(device, base.shape if isinstance(base, Placed) else None)
        if names & DIM:
            if self.unpacks(call):
                return DimValue(None, None)
            return DimValue(int_of(self._eval_keyword(call, "min")), int_of(self._eval_keyword(call, "max")))
        if names & (PATHLIB_PATH | OS_PATH_JOIN):
            return self._joined_path(call, as_pathlib=bool(names & PATHLIB_PATH))
        if names & SEQUENCE_BUILTINS and len(call.args) + len(call.keywords) == 1:
            if call.keywords and call.keywords[0].arg is not None:
                return None
            only = call.args[0] if call.args else call.keywords[0]
            value = self.eval(only.value if isinstance(only, ast.Starred | ast.keyword) else only)
            return value if isinstance(value, Seq) else None
        if names & OS_PATH_IDENTITY or "builtins.str" in names:
            argument = self.argument(call, 0, "path")
            path = path_of(self.eval(argument)) if argument is not None else None
            return None if path is None else Const(path)
        if names & OS_PATH_DIRNAME:
            argument = self.argument(call, 0, "p")
            path = path_of(self.eval(argument)) if argument is not None else None
            return None if path is None else Const(posixpath.dirname(path) or ".")
        if type(call.func) is ast.Attribute:
            return self._method(call, call.func.attr, call.func.value)
        if type(call.func) is ast.Name and not call.args and not call.keywords:
            if call.func.id in self.model.functions:
                returned = self._returned_by(call.func.id, call.func)
                return None if returned is None else self.eval(returned)
            return self._imported(call.func, lambda module, name: module.helper_value(name))
        return None

    def helper_value(self, name: str) -> object:
        """What a call of the module's helper ``name`` gives (``_returned_by``), called from another module."""
        returned = self._returned_by(name, None) if name in self.model.functions else None
        return None if returned is None else self.eval(returned)

    def _returned_by(self, name: str, callee: ast.Name | None) -> ast.expr | None:
        """What a call of a helper of the module gives, when it is a function defined at module level, without
        parameters or decorators, whose body returns one expression; ``callee``: the read that calls it here, which
        must reach that function alone (None: a call from another module, which reaches the module's one binding)."""
        for function in self.tree.body:
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) or function.name != name:
                continue
            arguments = function.args
            if function.decorator_list or type(function) is ast.AsyncFunctionDef:
                return None
            if arguments.posonlyargs or arguments.args or arguments.vararg or arguments.kwonlyargs or arguments.kwarg:
                return None
            binding = self.model.binding_made_by(function)
            if callee is not None:
                reads = None if binding is None else self.model.references(binding)
                if reads is None or not any(read is callee for read in reads):
                    return None
            elif binding is None or self.model.module.bindings.get(name) != [binding]:
                return None
            body = function.body
            first = body[0]
            if self.lines[first.lineno - 1].encode()[: first.col_offset].strip():
                return None  # `def f(): return x` on one line is not followed
            statements = body
            if ast.get_docstring(function, clean=False) is not None:
                if len(body) > 1 and body[1].lineno == body[0].end_lineno:
                    return None  # `"doc"; return x` on one line is not followed
                statements = body[1:]
            if len(statements) != 1 or type(statements[0]) is not ast.Return:
                return None
            return statements[0].value
        return None

    def _joined_path(self, call: ast.Call, as_pathlib: bool) -> object:
        if call.keywords or any(type(arg) is ast.Starred for arg in call.args):
            return None
        paths = [path_of(self.eval(arg)) for arg in call.args]
        parts = [path for path in paths if path is not None]
        if len(parts) != len(paths) or (not parts and not as_pathlib):
            return None
        joined = posixpath.normpath(posixpath.join(*parts)) if parts else "."
        return PathValue(joined) if as_pathlib else Const(joined)

    def _method(self, call: ast.Call, method: str, receiver: ast.expr) -> object:
        if method == "module":
            base = self.eval(receiver)
            return base if isinstance(base, Exported) else None
        if method in ("resolve", "absolute"):
            base = self.eval(receiver)
            return base if isinstance(base, PathValue) else None
        if method in PRESERVING_METHODS:
            base = self.eval(receiver)
            return base if isinstance(base, Placed) else None
        if method in MOVING_METHODS:
            base = self.eval(receiver)
            index = None
            if MOVING_METHODS[method] != "cpu":
                index_node = self.argument(call, 0, "device")
                index = int_of(self.eval(index_node)) if index_node is not None else None
            return Placed(Device(MOVING_METHODS[method], index), base.shape if isinstance(base, Placed) else None)
        if method == "to":
            return self._moved(call, receiver)
        return None

    def exported(self, call: ast.Call) -> Exported:
        device, inputs = self._example_inputs(
            self.argument(call, 0, "mod"),
            self.argument(call, 1, "args"),
            self.argument(call, 2, "kwargs"),
        )
        dynamic = self._dynamic_dims(call, inputs)
        return Exported(device, dynamic)


def _evaluator(data: bytes, path: str, target_torch: tuple[int, int]) -> ModuleEvaluator | None:
    """The evaluator of a project module another module asks values of, on the model the names were followed into
    (``project_names.module_model``); None where it does not parse."""
    from aoti_lint.model.project_names import module_model
    from aoti_lint.read.source import DecodeError, decode_python

    model = module_model(path)
    try:
        text = decode_python(data)[0]  # as the module's own check reads it (its coding, no BOM)
    except DecodeError:
        return None
    return None if model is None else ModuleEvaluator(text, model.tree, target_torch, path, model)
