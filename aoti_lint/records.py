"""``dataclass`` without its import-time cost: the part of ``dataclasses`` this project uses.

``dataclasses.dataclass`` compiles every method it writes, one ``exec`` each, when the class is defined: about
0.6 ms for a frozen class, and 34 ms of the 75 ms a one-file run spent after the interpreter started (63 classes,
most of which that run never instantiates). Here a class costs no compile until it is instantiated many times:
its first instances are bound by a generic ``__init__``, then its own is compiled, as ``dataclasses`` writes
it; equality, hashing and ordering compare the fields through one ``operator.attrgetter`` (C code);
``__repr__`` reads the fields in a loop. Importing this module does not import ``dataclasses`` (nor
``inspect``, which that imports).

Supported, with the standard meaning: ``@dataclass`` and ``@dataclass(frozen=..., eq=..., order=...)``; fields
from the class's annotations in order (``ClassVar`` ones left out), inherited from a base ``dataclass`` first;
``field(default=..., default_factory=..., compare=..., repr=...)``; ``fields``, ``replace``, ``is_dataclass``.
A method the class body defines is kept, as ``dataclasses`` keeps it. Type checkers read the decorator as a
dataclass (PEP 681 ``dataclass_transform``). ``aoti_lint.runtime``, which imports torch, keeps ``dataclasses``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

# ``typing`` is slow to import, and a run reads its names in annotations only (strings, PEP 563): every
# module of the package names them under ``if TYPE_CHECKING:``, read by type checkers alone.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar, overload

    from typing_extensions import dataclass_transform

    _T = TypeVar("_T")
    _C = TypeVar("_C", bound=type)
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda function: function

    def overload(function: Any) -> Any:
        return function


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen instance."""


class Field:
    """One field: its name, its default or default factory, and whether it takes part in comparisons and repr."""

    __slots__ = ("compare", "default", "default_factory", "name", "repr")

    def __init__(self, default: Any, default_factory: Any, compare: bool, repr: bool) -> None:
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.repr = repr

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r}, default_factory={self.default_factory!r})"


class _Params:
    __slots__ = ("eq", "frozen", "order")

    def __init__(self, frozen: bool, eq: bool, order: bool) -> None:
        self.frozen, self.eq, self.order = frozen, eq, order


@overload
def field(*, default: _T, compare: bool = True, repr: bool = True) -> _T: ...
@overload
def field(*, default_factory: Callable[[], _T], compare: bool = True, repr: bool = True) -> _T: ...  # noqa: F811
def field(  # noqa: F811  (``overload`` is typing's for type checkers only: see TYPE_CHECKING above)
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    compare: bool = True,
    repr: bool = True,
) -> Any:
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, compare, repr)


@overload
def dataclass(cls: _C, /) -> _C: ...
@overload
def dataclass(*, frozen: bool = False, eq: bool = True, order: bool = False) -> Callable[[_C], _C]: ...  # noqa: F811
@dataclass_transform(field_specifiers=(field, Field))
def dataclass(cls: Any = None, /, *, frozen: bool = False, eq: bool = True, order: bool = False) -> Any:  # noqa: F811
    def wrap(cls: type) -> type:
        return _process(cls, frozen, eq, order)

    return wrap if cls is None else wrap(cls)


def is_dataclass(value: Any) -> bool:
    """Whether ``value`` is a class made by ``dataclass`` or an instance of one."""
    return hasattr(value if isinstance(value, type) else type(value), "__record_fields__")


def fields(value: Any) -> tuple[Field, ...]:
    try:
        return (value if isinstance(value, type) else type(value)).__record_fields__  # type: ignore[attr-defined]
    except AttributeError:
        raise TypeError("must be called with a dataclass type or instance") from None


def replace(obj: _T, /, **changes: Any) -> _T:
    """A copy of ``obj`` with ``changes``, built through its ``__init__`` as ``dataclasses.replace`` does."""
    for item in type(obj).__record_fields__:  # type: ignore[attr-defined]
        if item.name not in changes:
            changes[item.name] = getattr(obj, item.name)
    return type(obj)(**changes)


def _is_class_var(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    from typing import ClassVar  # an annotation evaluated (a module without PEP 563's lazy annotations)

    return annotation is ClassVar or getattr(annotation, "__origin__", None) is ClassVar


def _process(cls: type, frozen: bool, eq: bool, order: bool) -> type:
    own: dict[str, Field] = {}
    # A class's own annotations, not its bases' (Python 3.10+); inspect.get_annotations would import inspect.
    for name, annotation in cls.__annotations__.items():
        if _is_class_var(annotation):
            continue
        value = cls.__dict__.get(name, MISSING)
        item = value if isinstance(value, Field) else Field(value, MISSING, True, True)
        item.name = name
        own[name] = item
        # As dataclasses: a plain default stays a class attribute, a factory's field has none.
        if item.default is MISSING:
            if name in cls.__dict__:
                delattr(cls, name)
        else:
            setattr(cls, name, item.default)
    inherited: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for item in base.__dict__.get("__record_fields__", ()):
            inherited[item.name] = item
    everything = tuple({**inherited, **own}.values())
    cls.__record_fields__ = everything  # type: ignore[attr-defined]
    cls.__record_params__ = _Params(frozen, eq, order)  # type: ignore[attr-defined]
    cls.__match_args__ = tuple(item.name for item in everything)  # type: ignore[attr-defined,misc]
    body = cls.__dict__

    def put(name: str, method: Any) -> None:
        if name not in body:
            method.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, method)

    put("__init__", _lazy_init(cls))
    put("__repr__", _repr(everything))
    compared = [item.name for item in everything if item.compare]
    key: Callable[[Any], Any] = operator.attrgetter(*compared) if compared else (lambda _: ())
    if eq:

        def __eq__(self: Any, other: Any) -> Any:
            if other.__class__ is self.__class__:
                return key(self) == key(other)
            return NotImplemented

        put("__eq__", __eq__)
    if order:
        for name, compare in _ORDERINGS:
            put(name, _ordering(key, compare))
    if frozen:
        put("__setattr__", _frozen_setattr)
        put("__delattr__", _frozen_delattr)
    if "__hash__" not in body or (body["__hash__"] is None and "__eq__" in body):
        # dataclasses' table: eq and frozen hash the fields; eq alone makes the class unhashable (as a class
        # that defines __eq__ is); no eq keeps the inherited hash.
        if eq and frozen:

            def __hash__(self: Any) -> int:
                return hash(key(self))

            cls.__hash__ = __hash__  # type: ignore[method-assign,assignment]
        elif eq:
            cls.__hash__ = None  # type: ignore[method-assign,assignment]
    return cls


_ORDERINGS = (("__lt__", operator.lt), ("__le__", operator.le), ("__gt__", operator.gt), ("__ge__", operator.ge))


def _ordering(key: Callable[[Any], Any], compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return compare(key(self), key(other))
        return NotImplemented

    return method


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _repr(everything: tuple[Field, ...]) -> Callable[[Any], str]:
    shown = [item.name for item in everything if item.repr]

    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{type(self).__qualname__}({inner})"

    return __repr__


# Instantiations a class takes through the generic ``__init__`` before its own is compiled: a run over one file
# makes a few instances of most of its classes, a large tree many thousands of some.
GENERIC_INITS = 8


def _lazy_init(cls: type) -> Callable[..., None]:
    """An ``__init__`` that binds the arguments generically for the class's first instantiations, then
    compiles the class's own (as fast as ``dataclasses``') and hands over to it."""
    everything: tuple[Field, ...] = cls.__record_fields__  # type: ignore[attr-defined]
    names = {item.name for item in everything}
    assign = object.__setattr__ if cls.__record_params__.frozen else setattr  # type: ignore[attr-defined]
    post_init = getattr(cls, "__post_init__", None)
    calls = 0

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal calls
        calls += 1
        if calls > GENERIC_INITS:
            if cls.__dict__.get("__init__") is __init__:
                real = _compiled_init(cls)
                real.__qualname__ = __init__.__qualname__
                type.__setattr__(cls, "__init__", real)
            cls.__dict__["__init__"](self, *args, **kwargs)
            return
        if len(args) > len(everything):
            raise TypeError(f"{__init__.__qualname__}() takes {len(everything)} arguments, {len(args)} given")
        for name in kwargs:
            if name not in names:
                raise TypeError(f"{__init__.__qualname__}() got an unexpected keyword argument {name!r}")
        for position, item in enumerate(everything):
            name = item.name
            if position < len(args):
                if name in kwargs:
                    raise TypeError(f"{__init__.__qualname__}() got multiple values for argument {name!r}")
                value = args[position]
            elif name in kwargs:
                value = kwargs[name]
            elif item.default_factory is not MISSING:
                value = item.default_factory()
            elif item.default is not MISSING:
                value = item.default
            else:
                raise TypeError(f"{__init__.__qualname__}() missing a required argument: {name!r}")
            assign(self, name, value)
        if post_init is not None:
            self.__post_init__()

    return __init__


def _compiled_init(cls: type) -> Callable[..., None]:
    """The ``__init__`` dataclasses writes: parameters in field order with their defaults, each assigned."""
    frozen = cls.__record_params__.frozen  # type: ignore[attr-defined]
    names: dict[str, Any] = {"__object_setattr": object.__setattr__, "__MISSING": MISSING}
    parameters, lines = [], []
    for item in cls.__record_fields__:  # type: ignore[attr-defined]
        value = item.name
        if item.default_factory is not MISSING:
            names[f"__factory_{item.name}"] = item.default_factory
            parameters.append(f"{item.name}=__MISSING")
            value = f"__factory_{item.name}() if {item.name} is __MISSING else {item.name}"
        elif item.default is not MISSING:
            names[f"__default_{item.name}"] = item.default
            parameters.append(f"{item.name}=__default_{item.name}")
        else:
            parameters.append(item.name)
        if frozen:
            lines.append(f"    __object_setattr(self, {item.name!r}, {value})")
        else:
            lines.append(f"    self.{item.name} = {value}")
    post_init = "    self.__post_init__()" if hasattr(cls, "__post_init__") else ""
    source = f"def __init__(self, {', '.join(parameters)}):\n" + "\n".join([*lines, post_init, "    pass"]) + "\n"
    exec(source, names)  # built above from the class's own field names, as dataclasses builds it
    return names["__init__"]
