"""A small abstract interpretation of one module: the device type and static shape of expressions.

Values are known only when the code makes them certain: literals, ``torch.device(...)``, factories with
``device=``, ``.to()``/``.cuda()``/``.cpu()``, names bound exactly once (module constants, plain assignments),
parameters' literal defaults that no call in the module overrides. Anything else (a value chosen at run time,
a loop variable, a name bound twice, a helper's argument) is unknown (``None``) and never leads to a finding.

The result is a :class:`~aoti_lint.analysis.flow_summary.FlowSummary`: compile sites, load sites and calls of
loaded models, as plain data. libcst is imported inside the functions only.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aoti_lint.analysis.flow_summary import (
    CallArgument,
    CompileSite,
    ConstantSite,
    Device,
    DynamicDim,
    ExampleInput,
    FlowSummary,
    LoadSite,
    MigrationSite,
    ModelCall,
    PathArgument,
    Span,
)
from aoti_lint.knowledge import device_flow as K


@dataclass(frozen=True)
class Const:
    value: object


@dataclass(frozen=True)
class DeviceValue:
    device: Device


@dataclass(frozen=True)
class Placed:
    """A tensor, or a module moved with ``.to()``; either part may be unknown."""

    device: Device | None
    shape: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Seq:
    items: tuple


@dataclass(frozen=True)
class Mapping:
    items: tuple[tuple[object, object], ...]


@dataclass(frozen=True)
class PathValue:
    path: str


@dataclass(frozen=True)
class DimValue:
    min: int | None
    max: int | None


@dataclass(frozen=True)
class Qualified:
    """A torch attribute used as a value, e.g. ``torch.float16`` or ``Dim.AUTO``."""

    name: str


@dataclass(frozen=True)
class Exported:
    device: Device | None
    inputs: tuple[ExampleInput, ...] | None


@dataclass(frozen=True)
class Artifact:
    compile_index: int


@dataclass(frozen=True)
class Loaded:
    load_index: int


def parse_device(text: str) -> Device | None:
    kind, _, index = text.partition(":")
    if kind not in K.DEVICE_TYPES:
        return None
    if not index:
        return Device(kind)
    return Device(kind, int(index)) if index.isdigit() else None


def device_of(value: object) -> Device | None:
    if isinstance(value, Const) and isinstance(value.value, str):
        return parse_device(value.value)
    if isinstance(value, DeviceValue):
        return value.device
    if isinstance(value, Placed):
        return value.device
    return None


def _int(value: object) -> int | None:
    if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool):
        return value.value
    return None


def _shape(value: object) -> tuple[int, ...] | None:
    """A size given as ``(2, 3)``/``[2, 3]``."""
    if isinstance(value, Seq):
        dims = [_int(item) for item in value.items]
        if all(dim is not None and dim >= 0 for dim in dims):
            return tuple(dims)  # type: ignore[arg-type]
    return None


def _data_shape(value: object) -> tuple[int, ...] | None:
    """The shape of ``torch.tensor(data)`` for nested literal lists of numbers."""
    if isinstance(value, Const) and isinstance(value.value, (int, float)):
        return ()
    if isinstance(value, Seq) and value.items:
        inner = {_data_shape(item) for item in value.items}
        if len(inner) == 1 and None not in inner:
            return (len(value.items), *inner.pop())
    return None


def _path(value: object) -> str | None:
    if isinstance(value, PathValue):
        return value.path
    if isinstance(value, Const) and isinstance(value.value, str) and value.value:
        return posixpath.normpath(value.value)
    return None


class ModuleFlow:
    """Evaluates expressions of one module on demand, memoised per node."""

    def __init__(self, context: Any) -> None:
        import libcst as cst

        self.cst = cst
        self.context = context
        self.module = context.module
        # Parents, scopes and single assignments are shared with the other rules of the file.
        self.facts = context.facts()
        self.scopes = self.facts.scopes
        self.positions = context.positions()
        self._memo: dict[int, object] = {}
        self._busy: set[int] = set()
        self._default_device: tuple[Device | None, int] | None = None
        collector = _collect(cst, self.module)
        self.self_attributes = collector.self_attributes
        self.calls = collector.calls
        self.changed_in_place = collector.changed_in_place
        # A factory in a function may run inside a caller's ``with torch.device(...)`` (or an unknown context
        # object that may be one): the blocks that may set a device, and (lazily) the functions they may call.
        self.device_blocks = [
            block
            for block in collector.withs
            if any(
                not isinstance(item.item, cst.Call) or K.TORCH_DEVICE in self.names(item.item.func)
                for item in block.items
            )
        ]
        self.device_contexts = bool(self.device_blocks)
        self._under_device: set[str] | None = None
        self.compile_calls: list[Any] = []
        self.load_calls: list[Any] = []
        self.setter_calls: list[Any] = []
        for call in self.calls:
            names = self.names(call.func)
            if names & (K.COMPILE_AND_PACKAGE | K.AOT_COMPILE_INDUCTOR | {K.AOT_COMPILE_OLD}):
                self.compile_calls.append(call)
            elif names & ({K.AOT_LOAD} | set(K.PACKAGE_LOADERS)):
                self.load_calls.append(call)
            elif names & ({K.SET_DEFAULT_DEVICE} | K.OTHER_DEFAULT_DEVICE_SETTERS):
                self.setter_calls.append(call)
        self.compile_index = {id(call): index for index, call in enumerate(self.compile_calls)}
        self.load_index = {id(call): index for index, call in enumerate(self.load_calls)}

    # -- helpers ------------------------------------------------------------------------------------------

    def parent(self, node: Any) -> Any:
        return self.facts.parent(node)

    def names(self, node: Any) -> set[str]:
        return self.context.qualified_names(node)

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

    # -- evaluation ---------------------------------------------------------------------------------------

    def eval(self, node: Any) -> object:
        key = id(node)
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return None
        self._busy.add(key)
        try:
            value = self._eval(node)
        finally:
            self._busy.discard(key)
        self._memo[key] = value
        return value

    def _eval(self, node: Any) -> object:
        cst = self.cst
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            value = node.evaluated_value
            return Const(value) if isinstance(value, str) else None
        if isinstance(node, cst.Integer):
            return Const(node.evaluated_value)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            operand = _int(self.eval(node.expression))
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
        from libcst.metadata.scope_provider import Assignment

        if node.value in ("None", "True", "False"):
            return Const({"None": None, "True": True, "False": False}[node.value])
        bound = self.facts.single_value(node)
        if bound is not None:
            value = self.eval(bound)
            return Placed(None) if isinstance(value, Placed) and node.value in self.changed_in_place else value
        scope = self.scopes.get(node)
        if scope is None:
            return None
        assignments = list(scope[node.value])
        if not assignments and node.value == "__file__":
            return Const(str(Path(self.context.source.path).resolve()))
        if len(assignments) == 1 and isinstance(assignments[0], Assignment):
            target = assignments[0].node
            if isinstance(target, self.cst.Param):
                return self._parameter_default(target)
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
        for name in self.names(node):
            if name in K.DTYPES or name in K.DIM_DYNAMIC or name in K.DIM_STATIC:
                return Qualified(name)
        attr = node.attr.value
        if isinstance(node.value, self.cst.Name) and node.value.value == "self":
            return self._eval_self_attribute(node)
        if attr == "parent":
            base = _path(self.eval(node.value))
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
            tail = _path(right)
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
        names = self.names(call.func)
        if K.EXPORT in names:
            return self._exported(call)
        if K.TORCH_DEVICE in names:
            return self._torch_device(call)
        factory = names & K.TENSOR_FACTORIES.keys()
        if factory:
            return self._factory(call, factory.pop())
        if names & K.LIKE_FACTORIES:
            template = self.argument(call, 0, "input")
            base = self.eval(template) if template is not None else None
            if self.unpacks(call):
                return Placed(None, None)
            device = self._device_argument(call) if self.has_keyword(call, "device") else device_of(base)
            return Placed(device, base.shape if isinstance(base, Placed) else None)
        if names & K.DIM:
            if self.unpacks(call):
                return DimValue(None, None)
            return DimValue(_int(self._eval_keyword(call, "min")), _int(self._eval_keyword(call, "max")))
        if names & (K.PATHLIB_PATH | K.OS_PATH_JOIN):
            return self._joined_path(call, as_pathlib=bool(names & K.PATHLIB_PATH))
        if names & K.SEQUENCE_BUILTINS and len(call.args) == 1 and not call.args[0].keyword:
            value = self.eval(call.args[0].value)
            return value if isinstance(value, Seq) else None
        if names & K.OS_PATH_IDENTITY or "builtins.str" in names:
            argument = self.argument(call, 0, "path")
            path = _path(self.eval(argument)) if argument is not None else None
            return None if path is None else Const(path)
        if names & K.OS_PATH_DIRNAME:
            argument = self.argument(call, 0, "p")
            path = _path(self.eval(argument)) if argument is not None else None
            return None if path is None else Const(posixpath.dirname(path) or ".")
        if isinstance(call.func, self.cst.Attribute):
            return self._method(call, call.func.attr.value, call.func.value)
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
            index = _int(self.eval(index_node))
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
            if _data_shape(value) is None:
                return Placed(None, None)
        return Placed(self.default_device(call), shape)

    def _factory_shape(self, call: Any, name: str) -> tuple[int, ...] | None:
        size = self.argument(call, None, "size")
        if size is not None:
            return _shape(self.eval(size))
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if any(arg.star for arg in call.args):
            return None
        first_size = K.TENSOR_FACTORIES[name]
        if first_size is not None:
            values = [self.eval(arg) for arg in positional[first_size:]]
            if len(values) == 1 and isinstance(values[0], Seq):
                return _shape(values[0])
            return _shape(Seq(tuple(values))) if values else None
        if name == "torch.full" and positional:
            return _shape(self.eval(positional[0]))
        if name in ("torch.tensor", "torch.as_tensor") and positional:
            return _data_shape(self.eval(positional[0]))
        if name == "torch.arange" and len(positional) == 1:
            end = _int(self.eval(positional[0]))
            return None if end is None or end < 0 else (end,)
        if name == "torch.randint" and len(positional) in (2, 3):
            return _shape(self.eval(positional[-1]))
        return None

    def _joined_path(self, call: Any, as_pathlib: bool) -> object:
        if any(arg.keyword is not None or arg.star for arg in call.args):
            return None
        parts = [_path(self.eval(arg.value)) for arg in call.args]
        if None in parts or (not parts and not as_pathlib):
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
        if method in K.PRESERVING_METHODS:
            base = self.eval(receiver)
            return base if isinstance(base, Placed) else None
        if method in K.MOVING_METHODS:
            base = self.eval(receiver)
            index = None
            if K.MOVING_METHODS[method] != "cpu":
                index_node = self.argument(call, 0, "device")
                index = _int(self.eval(index_node)) if index_node is not None else None
            return Placed(Device(K.MOVING_METHODS[method], index), base.shape if isinstance(base, Placed) else None)
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
        if isinstance(value, Qualified) and value.name in K.DTYPES:
            return Placed(kept, shape)
        return Placed(device_of(value), shape)

    # -- names, parameters, default device -----------------------------------------------------------------

    def _enclosing(self, node: Any, kind: type) -> Any:
        current = self.parent(node)
        while current is not None and not isinstance(current, kind):
            current = self.parent(current)
        return current

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
        scope = self.scopes.get(function)
        if scope is None:
            return None
        definitions = list(scope.assignments[function.name.value])
        if len(definitions) != 1 or definitions[0].node is not function:
            return None
        # References from every scope (a call inside another function counts too).
        accesses = list(definitions[0].references)
        if not accesses:
            return None
        for access in accesses:
            call = self.parent(access.node)
            if not isinstance(call, self.cst.Call) or call.func is not access.node:
                return None
            if any(arg.star for arg in call.args) or self.has_keyword(call, param.name.value):
                return None
            given = sum(1 for arg in call.args if arg.keyword is None)
            if position is not None and given > position:
                return None
        return default

    def default_device(self, node: Any) -> Device | None:
        """The device of a factory call without ``device=``."""
        current = self.parent(node)
        # A `with` outside the enclosing function does not hold when the function runs.
        while current is not None and not isinstance(current, (self.cst.FunctionDef, self.cst.Lambda)):
            if isinstance(current, self.cst.With):
                for item in current.items:
                    if isinstance(item.item, self.cst.Call):
                        if K.TORCH_DEVICE in self.names(item.item.func):
                            return device_of(self.eval(item.item))
                    else:
                        # An object used as a context manager may be a device.
                        value = self.eval(item.item)
                        return value.device if isinstance(value, DeviceValue) else None
            current = self.parent(current)
        if self.device_contexts and self._may_run_under_device_block(node):
            return None
        return self._module_default_device(node)

    def _may_run_under_device_block(self, node: Any) -> bool:
        """Whether the function around ``node`` may be called inside a ``with torch.device(...)`` of this module:
        its name (or a function's that calls it) is used in such a block. A lambda is not followed."""
        if self._enclosing(node, self.cst.Lambda) is not None:
            return True
        functions = []
        current = self._enclosing(node, self.cst.FunctionDef)
        while current is not None:
            functions.append(current)
            current = self._enclosing(current, self.cst.FunctionDef)
        if not functions:
            return False
        if self._under_device is None:
            self._under_device = self._names_reached_from(self.device_blocks)
        return any(function.name.value in self._under_device for function in functions)

    def _names_reached_from(self, blocks: list[Any]) -> set[str]:
        """Names used in ``blocks`` (bare names and attribute names, so methods count), and transitively the
        names used in the bodies of the functions so named."""
        cst = self.cst
        bodies: dict[str, list[Any]] = {}

        class Definitions(cst.CSTVisitor):
            def visit_FunctionDef(self, node: Any) -> None:
                bodies.setdefault(node.name.value, []).append(node.body)

        self.module.visit(Definitions())

        class Names(cst.CSTVisitor):
            def __init__(self) -> None:
                super().__init__()
                self.found: set[str] = set()

            def visit_Name(self, node: Any) -> None:
                self.found.add(node.value)

        reached: set[str] = set()
        pending = [block.body for block in blocks]
        while pending:
            finder = Names()
            pending.pop().visit(finder)
            for name in finder.found - reached:
                reached.add(name)
                pending.extend(bodies.get(name, ()))
        return reached

    def _module_default_device(self, node: Any) -> Device | None:
        if not self.setter_calls:
            return Device("cpu")
        if self._default_device is None:
            self._default_device = (None, 0)
            if len(self.setter_calls) == 1:
                setter = self.setter_calls[0]
                statement = self.parent(self.parent(setter))
                at_top = isinstance(self.parent(setter), self.cst.Expr) and isinstance(
                    self.parent(statement), self.cst.Module
                )
                if at_top and K.SET_DEFAULT_DEVICE in self.names(setter.func):
                    argument = self.argument(setter, 0, "device")
                    device = device_of(self.eval(argument)) if argument is not None else None
                    self._default_device = (device, self.span(setter).row)
        device, row = self._default_device
        if device is not None and self.span(node).row < row and self._enclosing(node, self.cst.FunctionDef) is None:
            return Device("cpu")
        return device

    # -- sites ----------------------------------------------------------------------------------------------

    def _exported(self, call: Any) -> Exported:
        device, inputs = self._example_inputs(
            self.argument(call, 0, "mod"),
            self.argument(call, 1, "args"),
            self.argument(call, 2, "kwargs"),
        )
        dynamic = self._dynamic_dims(call, inputs)
        return Exported(device, dynamic)

    def _example_inputs(self, model: Any, args: Any, kwargs: Any) -> tuple[Device | None, tuple[Placed, ...] | None]:
        """The compile device and the known prefix of the flat positional example inputs."""
        devices: set[str] = set()
        inputs: list[Placed] | None = None
        args_value = self.eval(args) if args is not None else None
        if isinstance(args_value, Seq):
            inputs = []
            aligned = True
            for item in args_value.items:
                aligned = aligned and isinstance(item, Placed)
                if aligned:
                    inputs.append(item)
                devices |= _device_types(item)
        if kwargs is not None:
            devices |= _device_types(self.eval(kwargs))
        if model is not None:
            model_device = device_of(self.eval(model))
            if model_device is not None:
                if devices and devices != {model_device.type}:
                    return None, _tuple(inputs)
                devices.add(model_device.type)
        device = Device(devices.pop()) if len(devices) == 1 else None
        return device, _tuple(inputs)

    def _dynamic_dims(self, call: Any, inputs: tuple[Placed, ...] | None) -> tuple[ExampleInput, ...] | None:
        """The example inputs with the dims ``dynamic_shapes=`` of ``call`` declares dynamic."""
        if inputs is None:
            return None
        count = len(inputs)
        per_input: list[tuple[DynamicDim, ...] | None]
        node = self.argument(call, None, "dynamic_shapes")
        if node is None and self.unpacks(call):
            spec: object = None
        else:
            spec = self.eval(node) if node is not None else Const(None)
        if isinstance(spec, Const) and spec.value is None:
            per_input = [()] * count
        elif isinstance(spec, Seq):
            per_input = [_entry_dims(spec.items[i]) if i < len(spec.items) else None for i in range(count)]
        elif isinstance(spec, Mapping) and count == 1 and len(spec.items) == 1:
            per_input = [_entry_dims(spec.items[0][1])]
        elif isinstance(spec, Mapping):
            # Keys are forward()'s parameter names, which are not known here: every dim any entry declares
            # dynamic counts as dynamic, unbounded, for every input.
            entries = [_entry_dims(value) for _, value in spec.items]
            merged: tuple[DynamicDim, ...] | None = None
            if None not in entries:
                indices = sorted({dim.index for entry in entries for dim in entry or ()})
                merged = tuple(DynamicDim(index) for index in indices)
            per_input = [merged] * count
        else:
            per_input = [None] * count
        return tuple(ExampleInput(item.shape, dims) for item, dims in zip(inputs, per_input, strict=True))

    def _import_ref(self, node: Any) -> str | None:
        """The qualified name of ``NAME``/``module.NAME`` imported from another module, to resolve it there."""
        from libcst.metadata.scope_provider import ImportAssignment

        base = node
        while isinstance(base, self.cst.Attribute):
            base = base.value
        scope = self.scopes.get(base) if isinstance(base, self.cst.Name) else None
        if scope is None:
            return None
        assignments = list(scope[base.value])
        if len(assignments) != 1 or not isinstance(assignments[0], ImportAssignment):
            return None
        names = self.names(node)
        return names.pop() if len(names) == 1 else None

    def _artifact(self, node: Any) -> tuple[str | None, str | None]:
        """The artifact path an expression gives, or the imported constant it names."""
        if node is None:
            return None, None
        path = _path(self.eval(node))
        return path, (self._import_ref(node) if path is None else None)

    def compile_site(self, call: Any) -> CompileSite:
        names = self.names(call.func)
        if names & K.COMPILE_AND_PACKAGE:
            program = self.argument(call, 0, "exported_program")
            exported = self.eval(program) if program is not None else None
            artifact, ref = self._artifact(self.argument(call, None, "package_path"))
            if isinstance(exported, Exported):
                return CompileSite(self.span(call), exported.device, artifact, exported.inputs, ref)
            return CompileSite(self.span(call), None, artifact, None, ref)
        model = self.argument(call, 0, "gm" if names & K.AOT_COMPILE_INDUCTOR else "f")
        device, inputs = self._example_inputs(model, self.argument(call, 1, "args"), self.argument(call, 2, "kwargs"))
        artifact = ref = None
        options_node = self.argument(call, None, "options")
        if isinstance(options_node, self.cst.Dict) and all(
            isinstance(element, self.cst.DictElement) for element in options_node.elements
        ):
            outputs = [
                element.value
                for element in options_node.elements
                if isinstance(element, self.cst.DictElement) and self.eval(element.key) == Const(K.OUTPUT_PATH_OPTION)
            ]
            artifact, ref = self._artifact(outputs[-1] if outputs else None)
        else:
            options = self.eval(options_node) if options_node is not None else None
            if isinstance(options, Mapping):
                outputs = [value for key, value in options.items if key == K.OUTPUT_PATH_OPTION]
                artifact = _path(outputs[-1]) if outputs else None
        if names & K.AOT_COMPILE_INDUCTOR:
            exported = self.eval(model) if model is not None else None
            examples = exported.inputs if isinstance(exported, Exported) else None
            if examples is not None and inputs is not None:
                dims = {i: example.dynamic for i, example in enumerate(examples)}
                examples = tuple(ExampleInput(item.shape, dims.get(i)) for i, item in enumerate(inputs))
            return CompileSite(self.span(call), device, artifact, examples, ref)
        dynamic = self._dynamic_dims(call, inputs)
        return CompileSite(self.span(call), device, artifact, dynamic, ref)

    def load_site(self, call: Any) -> LoadSite:
        names = self.names(call.func)
        path_node = self.argument(call, 0, "so_path" if K.AOT_LOAD in names else "path")
        path_value = self.eval(path_node) if path_node is not None else None
        compile_index = path_value.compile_index if isinstance(path_value, Artifact) else None
        artifact, ref = self._artifact(path_node)
        if K.AOT_LOAD in names:
            device_node = self.argument(call, 1, "device")
            device = device_of(self.eval(device_node)) if device_node is not None else None
            return LoadSite(self.span(call), "aot_load", compile_index, artifact, device, None, ref)
        api = "aoti_load_package" if "torch._inductor.aoti_load_package" in names else "load_package"
        index_position = max(K.PACKAGE_LOADERS[name] for name in names if name in K.PACKAGE_LOADERS)
        index_node = self.argument(call, index_position, "device_index")
        device = device_index = None
        if isinstance(index_node, self.cst.Attribute) and index_node.attr.value == "index":
            device = device_of(self.eval(index_node.value))
        elif index_node is not None:
            device_index = _int(self.eval(index_node))
        return LoadSite(self.span(call), api, compile_index, artifact, device, device_index, ref)

    def model_call(self, call: Any, load_index: int) -> ModelCall:
        arguments: list[CallArgument] = []
        position: int | None = 0
        for arg in call.args:
            value = self.eval(arg.value)
            text = self.text(arg.value)
            if arg.star == "*" and isinstance(value, Seq):
                for index, item in enumerate(value.items):
                    position = self._add_argument(arguments, f"{text}[{index}]", item, position)
            elif arg.star == "**" and isinstance(value, Mapping):
                position = None
                for key, item in value.items:
                    _add_elements(arguments, str(key), item)
            elif arg.star or arg.keyword is not None:
                position = None
                _add_elements(arguments, text, value)
            else:
                position = self._add_argument(arguments, text, value, position)
        return ModelCall(self.span(call), load_index, tuple(arguments))

    @staticmethod
    def _add_argument(arguments: list[CallArgument], text: str, value: object, position: int | None) -> int | None:
        if isinstance(value, Placed):
            arguments.append(CallArgument(text, position, value.device, value.shape))
            return None if position is None else position + 1
        _add_elements(arguments, text, value)
        return None

    def summary(self) -> FlowSummary:
        compiles = tuple(self.compile_site(call) for call in self.compile_calls)
        loads = tuple(self.load_site(call) for call in self.load_calls)
        calls = []
        if loads:
            for call in self.calls:
                if isinstance(call.func, (self.cst.Name, self.cst.Attribute)):
                    loaded = self.eval(call.func)
                    if isinstance(loaded, Loaded):
                        calls.append(self.model_call(call, loaded.load_index))
        source_path = Path(self.context.source.path)
        return FlowSummary(
            path=self.context.source.display_path,
            directory=str(source_path.resolve().parent),
            compiles=compiles,
            loads=loads,
            calls=tuple(calls),
            constants=self.artifact_constants(),
            migrations=self.migration_sites(),
            constant_sites=self.constant_sites(),
            so_mentions=self.so_mentions(),
            path_arguments=self.path_arguments(),
        )

    def path_arguments(self) -> tuple[PathArgument, ...]:
        """`.so` paths passed to functions other than the AOTI ones: a helper of the run may load them."""
        if ".so" not in self.context.source.text:
            return ()
        from aoti_lint.codemods.analysis import replace_suffix

        found = []
        for call in self.calls:
            if id(call) in self.compile_index or id(call) in self.load_index:
                continue
            position = 0
            for arg in call.args:
                if arg.star:
                    break
                path = _path(self.eval(arg.value))
                so_name = _so_name(arg.value)
                if (path is not None and path.endswith(".so")) or so_name is not None:
                    new = replace_suffix(arg.value, ".so", ".pt2")
                    found.append(
                        PathArgument(
                            tuple(sorted(self.names(call.func))),
                            None if arg.keyword else position,
                            arg.keyword.value if arg.keyword else None,
                            path if path is not None and path.endswith(".so") else None,
                            self.span(arg.value),
                            None if new is None else self.module.code_for_node(new),
                            so_name or posixpath.basename(path or ""),
                        )
                    )
                position += arg.keyword is None
        return tuple(found)

    def _parameter_of(self, node: Any) -> tuple[str, int, str] | None:
        """(function, position, name) when ``node`` is a parameter of a module-level function."""
        if not isinstance(node, self.cst.Name):
            return None
        scope = self.scopes.get(node)
        assignments = list(scope[node.value]) if scope is not None else []
        if len(assignments) != 1 or not isinstance(getattr(assignments[0], "node", None), self.cst.Param):
            return None
        param = assignments[0].node
        function = self._enclosing(param, self.cst.FunctionDef)
        if function is None or not isinstance(self.parent(function), self.cst.Module):
            return None
        positional = [*function.params.posonly_params, *function.params.params]
        index = next((i for i, p in enumerate(positional) if p is param), None)
        return (function.name.value, -1 if index is None else index, node.value)

    def so_mentions(self) -> tuple[tuple[str, int, int], ...]:
        """Where a string names a `.so` file (its base name), for the migration plan's escape check."""
        flow = self

        class Finder(self.cst.CSTVisitor):
            def __init__(self) -> None:
                super().__init__()
                self.found: list[tuple[str, int, int]] = []

            def visit_SimpleString(self, node: Any) -> None:
                value = node.evaluated_value
                self._add(node, value if isinstance(value, str) else "")

            def visit_FormattedStringText(self, node: Any) -> None:
                self._add(node, node.value)

            def _add(self, node: Any, text: str) -> None:
                text = text.strip()
                if text.endswith(".so") and "\n" not in text:
                    position = flow.positions[node].start
                    self.found.append((posixpath.basename(text), position.line, position.column + 1))

        finder = Finder()
        self.module.visit(finder)
        return tuple(finder.found)

    def migration_sites(self) -> tuple[MigrationSite, ...]:
        """The deprecated calls with the codemod's own verdicts: the same plan the AOTI001/AOTI002 fixes use."""
        old = [call for call in self.compile_calls if K.AOT_COMPILE_OLD in self.names(call.func)]
        old += [call for call in self.load_calls if K.AOT_LOAD in self.names(call.func)]
        if not old:
            return ()
        from aoti_lint.codemods.analysis import MigrationPlan

        # The verdicts as if every path constant could be rewritten: whether it can is the project's question.
        context = self.context
        plan = MigrationPlan(context.facts(), context.target_torch, lift_paths=True)
        suppressions = None
        if "noqa" in context.source.text:
            from aoti_lint.suppressions import python_suppressions

            suppressions = python_suppressions(context.source.text)
        sites = []
        for site in plan.sites:
            position = self.positions[site.reference].start
            if site.kind == "compile":
                index = self.compile_index.get(id(site.call))
                path = site.so_path
            else:
                index = self.load_index.get(id(site.call))
                path = site.arguments["so_path"].value if "so_path" in site.arguments else None
            if index is None:
                continue
            suppressed = False
            if suppressions is not None:
                from aoti_lint.diagnostics import Finding, Position

                at = Position(position.line, position.column + 1)
                code = "AOTI001" if site.kind == "compile" else "AOTI002"
                suppressed = suppressions.suppresses(Finding(code, "", context.source.display_path, at, at))
            sites.append(
                MigrationSite(
                    kind=site.kind,
                    row=position.line,
                    column=position.column + 1,
                    index=index,
                    applicability=site.verdict.applicability.value,
                    reason=site.verdict.reason,
                    path_name=path.value if isinstance(path, self.cst.Name) else None,
                    path_blocked=site.path_blocked is not None,
                    rewrites_path=site.kind == "load" and site.path_literal is not None,
                    param=self._parameter_of(path) if site.kind == "load" else None,
                    suppressed=suppressed,
                    so_name=_so_name(path),
                )
            )
        return tuple(sites)

    def constant_sites(self) -> tuple[ConstantSite, ...]:
        """Module-level names bound once to a `.so` path, with the `.pt2` expression a migration writes there."""
        from aoti_lint.codemods.analysis import replace_suffix

        found = []
        for statement in self.module.body:
            if not isinstance(statement, self.cst.SimpleStatementLine):
                continue
            for small in statement.body:
                targets = [t.target for t in small.targets] if isinstance(small, self.cst.Assign) else []
                if isinstance(small, self.cst.AnnAssign) and small.value is not None:
                    targets = [small.target]
                for target in targets:
                    if not isinstance(target, self.cst.Name) or self.facts.references(target) is None:
                        continue
                    path = _path(self.eval(small.value))
                    if path is None or not path.endswith(".so"):
                        continue
                    new = replace_suffix(small.value, ".so", ".pt2")
                    replacement = None if new is None else self.module.code_for_node(new)
                    found.append(ConstantSite(target.value, path, self.span(small.value), replacement))
        return tuple(found)

    def artifact_constants(self) -> tuple[tuple[str, str], ...]:
        """Module-level names bound once to a ``.pt2``/``.so`` path, which other files may import."""
        constants = []
        for statement in self.module.body:
            if not isinstance(statement, self.cst.SimpleStatementLine):
                continue
            for small in statement.body:
                targets = [t.target for t in small.targets] if isinstance(small, self.cst.Assign) else []
                if isinstance(small, self.cst.AnnAssign):
                    targets = [small.target]
                for target in targets:
                    if not isinstance(target, self.cst.Name) or self.facts.references(target) is None:
                        continue
                    path = _path(self.eval(small.value))
                    if path is not None and path.endswith(K.ARTIFACT_SUFFIXES):
                        constants.append((target.value, path))
        return tuple(constants)


def _so_name(node: Any) -> str | None:
    """The `.so` file name a path expression ends with: "m.so", join(d, "m.so"), d / "m.so", f"{d}/m.so"."""
    if node is None:
        return None
    from aoti_lint.codemods.analysis import _suffix_literal, string_value

    tail = _suffix_literal(node)
    text = string_value(tail)
    if text is None and type(tail).__name__ == "FormattedString" and tail.parts:
        text = getattr(tail.parts[-1], "value", None)
    if isinstance(text, str) and text.strip().endswith(".so"):
        return posixpath.basename(text.strip())
    return None


def _tuple(items: list | None) -> tuple | None:
    return None if items is None else tuple(items)


def _device_types(value: object) -> set[str]:
    if isinstance(value, Placed):
        return {value.device.type} if value.device is not None else set()
    if isinstance(value, Seq):
        return set().union(*(_device_types(item) for item in value.items))
    if isinstance(value, Mapping):
        return set().union(*(_device_types(item) for _, item in value.items))
    return set()


def _add_elements(arguments: list[CallArgument], text: str, value: object) -> None:
    """Tensors inside a container argument, for the device check only."""
    if isinstance(value, Placed):
        arguments.append(CallArgument(text, None, value.device, value.shape))
    elif isinstance(value, Seq):
        for index, item in enumerate(value.items):
            _add_elements(arguments, f"{text}[{index}]", item)
    elif isinstance(value, Mapping):
        for key, item in value.items:
            _add_elements(arguments, f"{text}[{key!r}]", item)


def _entry_dims(value: object) -> tuple[DynamicDim, ...] | None:
    """The dynamic dims of one input's spec: ``{0: batch}``, ``(batch, None)`` or None (all static)."""
    if isinstance(value, Const) and value.value is None:
        return ()
    if isinstance(value, Mapping):
        pairs = list(value.items)
        if not all(isinstance(key, int) for key, _ in pairs):
            return None
    elif isinstance(value, Seq):
        pairs = list(enumerate(value.items))
    else:
        return None
    dims = []
    for index, dim in pairs:
        if (isinstance(dim, Const) and dim.value is None) or (isinstance(dim, Qualified) and dim.name in K.DIM_STATIC):
            continue
        if isinstance(dim, DimValue):
            dims.append(DynamicDim(index, dim.min, dim.max))  # type: ignore[arg-type]
        else:
            # Dim.AUTO / Dim.DYNAMIC, a derived dim (2 * batch) or anything unknown: dynamic, unbounded.
            dims.append(DynamicDim(index))  # type: ignore[arg-type]
    return tuple(dims)


def _collect(cst: Any, module: Any) -> Any:
    """One pass over the module: ``self.x = ...`` per class, every call, ``with`` items, names changed in place."""

    class Collector(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.self_attributes: dict[tuple[int, str], list[Any]] = {}
            self.calls: list[Any] = []
            self.with_items: list[Any] = []
            self.withs: list[Any] = []
            self.changed_in_place: set[str] = set()
            self.classes: list[Any] = []

        def visit_ClassDef(self, node: Any) -> None:
            self.classes.append(node)

        def leave_ClassDef(self, original_node: Any) -> None:
            self.classes.pop()

        def visit_Assign(self, node: Any) -> None:
            for target in node.targets:
                self._bind(target.target, node.value)

        def visit_AnnAssign(self, node: Any) -> None:
            if node.value is not None:
                self._bind(node.target, node.value)

        def visit_AugAssign(self, node: Any) -> None:
            self._bind(node.target, None)

        def visit_WithItem(self, node: Any) -> None:
            self.with_items.append(node.item)

        def visit_With(self, node: Any) -> None:
            self.withs.append(node)

        def _bind(self, target: Any, value: Any) -> None:
            if isinstance(target, (cst.Tuple, cst.List)):
                for element in target.elements:
                    self._bind(element.value, None)
            elif (
                isinstance(target, cst.Attribute)
                and isinstance(target.value, cst.Name)
                and target.value.value == "self"
                and self.classes
            ):
                # An assignment whose value is not tracked counts twice: the attribute is then unknown.
                values = self.self_attributes.setdefault((id(self.classes[-1]), target.attr.value), [])
                values.extend([value] if value is not None else [None, None])

        def visit_Call(self, node: Any) -> None:
            self.calls.append(node)

        def visit_Expr(self, node: Any) -> None:
            # `model.cuda()` as a statement moves a module in place, `x.unsqueeze_(0)` reshapes a tensor: the
            # name's binding no longer tells its device or shape.
            call = node.value
            if not (
                isinstance(call, cst.Call)
                and isinstance(call.func, cst.Attribute)
                and isinstance(call.func.value, cst.Name)
            ):
                return
            method = call.func.attr.value
            if method in K.MOVING_METHODS or method == "to" or method.endswith("_"):
                self.changed_in_place.add(call.func.value.value)

    collector = Collector()
    module.visit(collector)
    return collector


def summarize(context: Any) -> FlowSummary:
    return ModuleFlow(context).summary()
