"""A small abstract interpretation of one module: the device type and static shape of expressions.

Values are known only when the code makes them certain: literals, ``torch.device(...)``, factories with
``device=``, ``.to()``/``.cuda()``/``.cpu()``, names bound exactly once (module constants, plain assignments),
parameters' literal defaults that no call in the module overrides. Anything else (a value chosen at run time,
a loop variable, a name bound twice, a helper's argument) is unknown (``None``) and never leads to a finding.

The values are those of ``analysis.values``; ``exported`` reads what ``torch.export.export`` is given
(device, example inputs, dynamic dims). libcst is imported inside the functions only.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from aoti_lint.flows.default_device import DefaultDeviceReader
from aoti_lint.flows.example_inputs import ExampleInputs
from aoti_lint.flows.flow_summary import (
    Device,
)
from aoti_lint.flows.module_reader import last_parts
from aoti_lint.flows.values import (
    Artifact,
    Const,
    DeviceValue,
    DimValue,
    Exported,
    Loaded,
    Mapping,
    PathValue,
    Placed,
    Qualified,
    Seq,
    data_shape_of,
    device_of,
    int_of,
    path_of,
    size_of,
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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The last parts of every name the evaluator gives a value to: a callee or attribute that cannot end in one is
# not named at all (libcst's scope analysis may be what naming it takes).
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


class ModuleEvaluator(DefaultDeviceReader, ExampleInputs):
    """Evaluates expressions of one module on demand, memoised per node."""

    def _eval(self, node: Any) -> object:
        cst = self.cst
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            value = node.evaluated_value
            return Const(value) if isinstance(value, str) else None
        if isinstance(node, cst.Integer):
            return Const(node.evaluated_value)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            operand = int_of(self.eval(node.expression))
            return None if operand is None else Const(-operand)
        if isinstance(node, cst.Name):
            return self._eval_name(node)
        if isinstance(node, (cst.Tuple, cst.List)):
            return self._eval_sequence(node.elements)
        if isinstance(node, cst.Dict):
            return self._eval_dict(node)
        if isinstance(node, cst.Attribute):
            return self._eval_attribute(node)
        if isinstance(node, cst.Subscript):
            return self._eval_subscript(node)
        if isinstance(node, cst.BinaryOperation):
            return self._eval_binary(node)
        if isinstance(node, cst.FormattedString):
            return self._eval_fstring(node)
        if isinstance(node, cst.Call):
            return self._eval_call(node)
        return None

    def _eval_name(self, node: Any) -> object:
        if node.value in ("None", "True", "False"):
            return Const({"None": None, "True": True, "False": False}[node.value])
        bound = self.facts.single_value(node)
        if bound is not None:
            value = self.eval(bound)
            return Placed(None) if isinstance(value, Placed) and node.value in self.changed_in_place else value
        parameter = self.facts.lone_parameter(node)
        if parameter is not None:
            return self._parameter_default(parameter)
        if node.value != "__file__":
            return None
        if self.facts.is_unbound(node):
            return Const(str(Path(self.context.source.path).resolve()))
        return None

    def _eval_sequence(self, elements: Any) -> object:
        items: list[object] = []
        for element in elements:
            value = self.eval(element.value)
            if isinstance(element, self.cst.StarredElement):
                if not isinstance(value, Seq):
                    return None
                items.extend(value.items)
            else:
                items.append(value)
        return Seq(tuple(items))

    def _eval_dict(self, node: Any) -> object:
        items = []
        for element in node.elements:
            if not isinstance(element, self.cst.DictElement):
                return None
            key = self.eval(element.key)
            if not isinstance(key, Const):
                return None
            items.append((key.value, self.eval(element.value)))
        return Mapping(tuple(items))

    def _eval_attribute(self, node: Any) -> object:
        for name in self.names_among(node, _ATTRIBUTE_NAMES):
            if name in DTYPES or name in DIM_DYNAMIC or name in DIM_STATIC:
                return Qualified(name)
        attr = node.attr.value
        if isinstance(node.value, self.cst.Name) and node.value.value == "self":
            return self._eval_self_attribute(node)
        if attr == "parent":
            base = path_of(self.eval(node.value))
            return None if base is None else PathValue(posixpath.dirname(base) or ".")
        return None

    def _eval_self_attribute(self, node: Any) -> object:
        """``self.x`` in a method, when the class assigns ``self.x`` exactly once."""
        owner = self._enclosing(node, self.cst.ClassDef)
        if owner is None:
            return None
        values = self.self_attributes.get((id(owner), node.attr.value), [])
        return self.eval(values[0]) if len(values) == 1 else None

    def _eval_subscript(self, node: Any) -> object:
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, self.cst.Index):
            return None
        base = self.eval(node.value)
        key = self.eval(node.slice[0].slice.value)
        if not isinstance(key, Const):
            return None
        if isinstance(base, Seq) and isinstance(key.value, int) and -len(base.items) <= key.value < len(base.items):
            return base.items[key.value]
        if isinstance(base, Mapping):
            matches = [value for item_key, value in base.items if item_key == key.value]
            return matches[-1] if matches else None
        return None

    def _eval_binary(self, node: Any) -> object:
        left, right = self.eval(node.left), self.eval(node.right)
        if isinstance(node.operator, self.cst.Divide) and isinstance(left, PathValue):
            tail = path_of(right)
            return None if tail is None else PathValue(posixpath.normpath(posixpath.join(left.path, tail)))
        if (
            isinstance(node.operator, self.cst.Add)
            and isinstance(left, Const)
            and isinstance(right, Const)
            and isinstance(left.value, str)
            and isinstance(right.value, str)
        ):
            return Const(left.value + right.value)
        return None

    def _eval_fstring(self, node: Any) -> object:
        parts = []
        for part in node.parts:
            if isinstance(part, self.cst.FormattedStringText):
                parts.append(part.value)
                continue
            if part.conversion is not None or part.format_spec is not None:
                return None
            value = self.eval(part.expression)
            if isinstance(value, PathValue):
                parts.append(value.path)
            elif isinstance(value, Const) and isinstance(value.value, (str, int)):
                parts.append(str(value.value))
            else:
                return None
        return Const("".join(parts))

    def _eval_call(self, call: Any) -> object:
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
        if names & SEQUENCE_BUILTINS and len(call.args) == 1 and not call.args[0].keyword:
            value = self.eval(call.args[0].value)
            return value if isinstance(value, Seq) else None
        if names & OS_PATH_IDENTITY or "builtins.str" in names:
            argument = self.argument(call, 0, "path")
            path = path_of(self.eval(argument)) if argument is not None else None
            return None if path is None else Const(path)
        if names & OS_PATH_DIRNAME:
            argument = self.argument(call, 0, "p")
            path = path_of(self.eval(argument)) if argument is not None else None
            return None if path is None else Const(posixpath.dirname(path) or ".")
        if isinstance(call.func, self.cst.Attribute):
            return self._method(call, call.func.attr.value, call.func.value)
        if isinstance(call.func, self.cst.Name) and not call.args:
            returned = self._returned_by(call.func)
            return None if returned is None else self.eval(returned)
        return None

    def _returned_by(self, callee: Any) -> Any:
        """What a call of a helper of the module gives (`def make_input(): return torch.randn(3, 10)`): a
        function defined once at module level, without parameters or decorators, whose body returns one
        expression; None for anything else (its value then stays unknown)."""
        cst = self.cst
        if not self.facts.may_be_function(callee.value):
            return None
        for function in self.facts.nodes(cst.FunctionDef):
            if function.name.value != callee.value or not isinstance(self.facts.parent(function), cst.Module):
                continue
            if function.decorators or function.asynchronous or function.params.children:
                return None
            references = self.facts.function_references(function)
            if references is None or not any(reference is callee for reference in references):
                return None
            body = list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []
            statements = body[1:] if function.get_docstring() is not None else body
            if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine):
                return None
            small = statements[0].body
            return small[0].value if len(small) == 1 and isinstance(small[0], cst.Return) else None
        return None

    def _eval_keyword(self, call: Any, keyword: str) -> object:
        argument = self.argument(call, None, keyword)
        return None if argument is None else self.eval(argument)

    def _device_argument(self, call: Any) -> Device | None:
        return device_of(self._eval_keyword(call, "device"))

    def _torch_device(self, call: Any) -> object:
        kind = self.argument(call, 0, "type")
        if kind is None:
            return None
        device = device_of(self.eval(kind))
        index_node = self.argument(call, 1, "index")
        if device is None:
            return None
        if index_node is not None:
            index = int_of(self.eval(index_node))
            if index is None or device.index is not None:
                return DeviceValue(Device(device.type))
            device = Device(device.type, index)
        return DeviceValue(device)

    def _factory(self, call: Any, name: str) -> Placed:
        shape = self._factory_shape(call, name)
        if self.unpacks(call):
            return Placed(None, shape)
        if self.has_keyword(call, "device"):
            return Placed(self._device_argument(call), shape)
        if name in ("torch.tensor", "torch.as_tensor"):
            # Data that is already a tensor (or may be) keeps its device.
            data = self.argument(call, 0, "data")
            value = self.eval(data) if data is not None else None
            if isinstance(value, Placed):
                return Placed(value.device, value.shape)
            if data_shape_of(value) is None:
                return Placed(None, None)
        return Placed(self.default_device(call), shape)

    def _factory_shape(self, call: Any, name: str) -> tuple[int, ...] | None:
        size = self.argument(call, None, "size")
        if size is not None:
            return size_of(self.eval(size))
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if any(arg.star for arg in call.args):
            return None
        first_size = TENSOR_FACTORIES[name]
        if first_size is not None:
            values = [self.eval(arg) for arg in positional[first_size:]]
            if len(values) == 1 and isinstance(values[0], Seq):
                return size_of(values[0])
            return size_of(Seq(tuple(values))) if values else None
        if name == "torch.full" and positional:
            return size_of(self.eval(positional[0]))
        if name in ("torch.tensor", "torch.as_tensor") and positional:
            return data_shape_of(self.eval(positional[0]))
        if name == "torch.arange" and len(positional) == 1:
            end = int_of(self.eval(positional[0]))
            return None if end is None or end < 0 else (end,)
        if name == "torch.randint" and len(positional) in (2, 3):
            return size_of(self.eval(positional[-1]))
        return None

    def _joined_path(self, call: Any, as_pathlib: bool) -> object:
        if any(arg.keyword is not None or arg.star for arg in call.args):
            return None
        paths = [path_of(self.eval(arg.value)) for arg in call.args]
        parts = [path for path in paths if path is not None]
        if len(parts) != len(paths) or (not parts and not as_pathlib):
            return None
        joined = posixpath.normpath(posixpath.join(*parts)) if parts else "."
        return PathValue(joined) if as_pathlib else Const(joined)

    def _method(self, call: Any, method: str, receiver: Any) -> object:
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

    def _moved(self, call: Any, receiver: Any) -> Placed:
        """``x.to(...)``: the device argument decides; a dtype-only ``.to`` keeps the receiver's device."""
        base = self.eval(receiver)
        shape = base.shape if isinstance(base, Placed) else None
        kept = base.device if isinstance(base, Placed) else None
        if self.unpacks(call):
            return Placed(None, shape)
        if self.has_keyword(call, "device"):
            return Placed(self._device_argument(call), shape)
        first = self.argument(call, 0, None)
        if first is None:
            return Placed(kept, shape)
        if isinstance(first, self.cst.Attribute) and first.attr.value == "dtype":
            return Placed(kept, shape)
        value = self.eval(first)
        if isinstance(value, Qualified) and value.name in DTYPES:
            return Placed(kept, shape)
        return Placed(device_of(value), shape)

    def _parameter_default(self, param: Any) -> object:
        """A literal default, when the function is called in this module and no call passes the parameter.

        A function never called here may be called from anywhere with anything; a decorated one may get its
        arguments from a CLI framework; a method's receiver shifts positions: all three stay unknown.
        """
        if param.default is None:
            return None
        default = self.eval(param.default)
        if not isinstance(default, Const):
            return None
        function = self._enclosing(param, self.cst.FunctionDef)
        if function is None or function.decorators or self._enclosing(function, self.cst.ClassDef) is not None:
            return None
        params = function.params
        positional = [*params.posonly_params, *params.params]
        position = next((i for i, p in enumerate(positional) if p is param), None)
        # References from every scope (a call inside another function counts too).
        reads = self.facts.function_references(function)
        if not reads:
            return None
        for read in reads:
            call = self.parent(read)
            if not isinstance(call, self.cst.Call) or call.func is not read:
                return None
            if any(arg.star for arg in call.args) or self.has_keyword(call, param.name.value):
                return None
            given = sum(1 for arg in call.args if arg.keyword is None)
            if position is not None and given > position:
                return None
        return default

    def exported(self, call: Any) -> Exported:
        device, inputs = self._example_inputs(
            self.argument(call, 0, "mod"),
            self.argument(call, 1, "args"),
            self.argument(call, 2, "kwargs"),
        )
        dynamic = self._dynamic_dims(call, inputs)
        return Exported(device, dynamic)
