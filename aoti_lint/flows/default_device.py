"""The device a tensor factory without ``device=`` runs on: ``with torch.device(...)``, a module-level
``torch.set_default_device``, or cpu; unknown when a caller's block may set another."""

from __future__ import annotations

from aoti_lint.flows.flow_summary import (
    Device,
)
from aoti_lint.flows.module_reader import ModuleReader
from aoti_lint.flows.values import (
    DeviceValue,
    device_of,
)
from aoti_lint.knowledge.device_flow import SET_DEFAULT_DEVICE, TORCH_DEVICE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import libcst as cst


class DefaultDeviceReader(ModuleReader):
    """Adds the default device of a factory call to the module reader."""

    def default_device(self, node: Any) -> Device | None:
        """The device of a factory call without ``device=``."""
        current = self.parent(node)
        # A `with` outside the enclosing function does not hold when the function runs.
        while current is not None and not isinstance(current, (self.cst.FunctionDef, self.cst.Lambda)):
            if isinstance(current, self.cst.With):
                for item in current.items:
                    if isinstance(item.item, self.cst.Call):
                        if TORCH_DEVICE in self.names(item.item.func):
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
        from aoti_lint.lazy import cst

        bodies: dict[str, list[Any]] = {}

        class Definitions(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
                bodies.setdefault(node.name.value, []).append(node.body)

        self.module.visit(Definitions())

        class Names(cst.CSTVisitor):
            def __init__(self) -> None:
                super().__init__()
                self.found: set[str] = set()

            def visit_Name(self, node: cst.Name) -> None:
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
                if at_top and SET_DEFAULT_DEVICE in self.names(setter.func):
                    argument = self.argument(setter, 0, "device")
                    device = device_of(self.eval(argument)) if argument is not None else None
                    self._default_device = (device, self.span(setter).row)
        device, row = self._default_device
        if device is not None and self.span(node).row < row and self._enclosing(node, self.cst.FunctionDef) is None:
            return Device("cpu")
        return device
