"""What a compile is given as example inputs: the compile device, and each flat positional input's static shape
and the dims ``dynamic_shapes=`` declares dynamic. Read through the evaluator's ``eval``, ``argument`` and
``unpacks`` (``flows.evaluator``)."""

from __future__ import annotations

from aoti_lint.flows.flow_summary import Device, DynamicDim, ExampleInput
from aoti_lint.flows.values import Const, Mapping, Placed, Seq, device_of, device_types, entry_dims

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class ExampleInputs:
    """Mixed into an evaluator that gives ``_eval(node)`` (one node's value, reading others through ``eval``),
    ``argument(call, position, keyword)`` and ``unpacks(call)``, and starts ``_memo`` and ``_busy`` empty."""

    _eval: Any
    _memo: dict[int, object]
    _busy: set[int]
    argument: Any
    unpacks: Any

    def eval(self, node: Any) -> object:
        """The node's value, memoised per node; None for no node, and for a node whose value depends on itself
        (``x = x + 1`` read from its own assignment)."""
        if node is None:
            return None
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
                devices |= device_types(item)
        if kwargs is not None:
            devices |= device_types(self.eval(kwargs))
        if model is not None:
            model_device = device_of(self.eval(model))
            if model_device is not None:
                if devices and devices != {model_device.type}:
                    return None, (None if inputs is None else tuple(inputs))
                devices.add(model_device.type)
        device = Device(devices.pop()) if len(devices) == 1 else None
        return device, (None if inputs is None else tuple(inputs))

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
            per_input = [entry_dims(spec.items[i]) if i < len(spec.items) else None for i in range(count)]
        elif isinstance(spec, Mapping) and count == 1 and len(spec.items) == 1:
            per_input = [entry_dims(spec.items[0][1])]
        elif isinstance(spec, Mapping):
            # Keys are forward()'s parameter names, which are not known here: every dim any entry declares
            # dynamic counts as dynamic, unbounded, for every input.
            entries = [entry_dims(value) for _, value in spec.items]
            merged: tuple[DynamicDim, ...] | None = None
            if None not in entries:
                indices = sorted({dim.index for entry in entries for dim in entry or ()})
                merged = tuple(DynamicDim(index) for index in indices)
            per_input = [merged] * count
        else:
            per_input = [None] * count
        return tuple(ExampleInput(item.shape, dims) for item, dims in zip(inputs, per_input, strict=True))
