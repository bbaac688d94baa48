"""What a tensor factory, a `torch.device(...)` and a `.to(...)` give: a tensor's device and shape, a device. Read
through the evaluator's ``eval``, ``argument``, ``unpacks``, ``has_keyword`` and ``default_device``
(``flows.evaluator``)."""

from __future__ import annotations

import ast

from aoti_lint.flows.flow_summary import Device
from aoti_lint.flows.values import DeviceValue, Placed, Qualified, Seq, data_shape_of, device_of, int_of, size_of
from aoti_lint.knowledge.device_flow import DTYPES, TENSOR_FACTORIES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class TensorValues:
    """Mixed into the evaluator (``flows.evaluator.ModuleEvaluator``), which gives the readings named above."""

    eval: Any
    argument: Any
    unpacks: Any
    has_keyword: Any
    default_device: Any

    def _eval_keyword(self, call: ast.Call, keyword: str) -> object:
        argument = self.argument(call, None, keyword)
        return None if argument is None else self.eval(argument)

    def _device_argument(self, call: ast.Call) -> Device | None:
        return device_of(self._eval_keyword(call, "device"))

    def _torch_device(self, call: ast.Call) -> object:
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

    def _factory(self, call: ast.Call, name: str) -> Placed:
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

    def _factory_shape(self, call: ast.Call, name: str) -> tuple[int, ...] | None:
        size = self.argument(call, None, "size")
        if size is not None:
            return size_of(self.eval(size))
        if self.unpacks(call):
            return None
        positional = list(call.args)
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

    def _moved(self, call: ast.Call, receiver: ast.expr) -> Placed:
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
        if type(first) is ast.Attribute and first.attr == "dtype":
            return Placed(kept, shape)
        value = self.eval(first)
        if isinstance(value, Qualified) and value.name in DTYPES:
            return Placed(kept, shape)
        return Placed(device_of(value), shape)
