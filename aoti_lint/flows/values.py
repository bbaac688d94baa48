"""The abstract values of the device-flow evaluation: what an expression is known to be, and no more.

Each is plain data. ``None`` stands for an unknown value everywhere and never leads to a finding.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from aoti_lint.flows.flow_summary import CallArgument, Device, DynamicDim, ExampleInput
from aoti_lint.knowledge.device_flow import DEVICE_TYPES, DIM_STATIC


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
    if kind not in DEVICE_TYPES:
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


def int_of(value: object) -> int | None:
    if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool):
        return value.value
    return None


def size_of(value: object) -> tuple[int, ...] | None:
    """A size given as ``(2, 3)``/``[2, 3]``."""
    if isinstance(value, Seq):
        dims = [int_of(item) for item in value.items]
        if all(dim is not None and dim >= 0 for dim in dims):
            return tuple(dims)  # type: ignore[arg-type]
    return None


def data_shape_of(value: object) -> tuple[int, ...] | None:
    """The shape of ``torch.tensor(data)`` for nested literal lists of numbers."""
    if isinstance(value, Const) and isinstance(value.value, (int, float)):
        return ()
    if isinstance(value, Seq) and value.items:
        inner = {data_shape_of(item) for item in value.items}
        shape = inner.pop() if len(inner) == 1 else None
        if shape is not None:
            return (len(value.items), *shape)
    return None


def path_of(value: object) -> str | None:
    if isinstance(value, PathValue):
        return value.path
    if isinstance(value, Const) and isinstance(value.value, str) and value.value:
        return posixpath.normpath(value.value)
    return None


def device_types(value: object) -> set[str]:
    if isinstance(value, Placed):
        return {value.device.type} if value.device is not None else set()
    if isinstance(value, Seq):
        return set().union(*(device_types(item) for item in value.items))
    if isinstance(value, Mapping):
        return set().union(*(device_types(item) for _, item in value.items))
    return set()


def entry_dims(value: object) -> tuple[DynamicDim, ...] | None:
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
        if (isinstance(dim, Const) and dim.value is None) or (isinstance(dim, Qualified) and dim.name in DIM_STATIC):
            continue
        if isinstance(dim, DimValue):
            dims.append(DynamicDim(index, dim.min, dim.max))  # type: ignore[arg-type]
        else:
            # Dim.AUTO / Dim.DYNAMIC, a derived dim (2 * batch) or anything unknown: dynamic, unbounded.
            dims.append(DynamicDim(index))  # type: ignore[arg-type]
    return tuple(dims)


def add_argument(arguments: list[CallArgument], text: str, value: object, position: int | None) -> int | None:
    """Add what a loaded model is given at ``position`` among its flat positional inputs (a tensor there, or the
    tensors inside a container); the next input's position, None once it is not known."""
    if isinstance(value, Placed):
        arguments.append(CallArgument(text, position, value.device, value.shape))
        return None if position is None else position + 1
    add_elements(arguments, text, value)
    return None


def add_elements(arguments: list[CallArgument], text: str, value: object) -> None:
    """Tensors inside a container argument, for the device check only."""
    if isinstance(value, Placed):
        arguments.append(CallArgument(text, None, value.device, value.shape))
    elif isinstance(value, Seq):
        for index, item in enumerate(value.items):
            add_elements(arguments, f"{text}[{index}]", item)
    elif isinstance(value, Mapping):
        for key, item in value.items:
            add_elements(arguments, f"{text}[{key!r}]", item)
