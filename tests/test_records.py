"""``aoti_lint.records`` against ``dataclasses``: each class is defined both ways and must behave the same."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
from typing import ClassVar

import pytest

from aoti_lint import records


@pytest.fixture(autouse=True, params=["compiled", "generic"])
def init_kind(request, monkeypatch):
    """Every test runs with the compiled ``__init__`` from the first instance, and with the generic one only."""
    monkeypatch.setattr(records, "GENERIC_INITS", 0 if request.param == "compiled" else 10**9)
    return request.param


def _both(frozen: bool = False, eq: bool = True, order: bool = False):
    """The same class body under dataclasses and under records."""

    def define(decorate, field):
        @decorate(frozen=frozen, eq=eq, order=order)
        class Point:
            kind: ClassVar[str] = "point"
            x: int
            y: int = 2
            tags: list[str] = field(default_factory=list)
            note: str = field(default="", compare=False, repr=False)

        return Point

    return define(dataclasses.dataclass, dataclasses.field), define(records.dataclass, records.field)


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("eq", [False, True])
def test_init_defaults_factories_repr_eq_and_hash_match_dataclasses(frozen, eq):
    standard, ours = _both(frozen=frozen, eq=eq)
    for cls in (standard, ours):
        assert cls.kind == "point" and cls.y == 2 and "tags" not in cls.__dict__
    a, b = standard(1), ours(1)
    assert repr(a) == repr(b) == f"{ours.__qualname__}(x=1, y=2, tags=[])"
    assert [(f.name, f.compare) for f in dataclasses.fields(a)] == [(f.name, f.compare) for f in records.fields(b)]
    assert ours(1).tags is not ours(1).tags  # a fresh list per instance
    assert (ours(1, note="a") == ours(1, note="b")) == (standard(1, note="a") == standard(1, note="b"))
    assert (ours(1) == ours(2)) == (standard(1) == standard(2)) is False
    assert (ours.__hash__ is None) == (standard.__hash__ is None)
    if frozen and eq:
        assert hash(ours(1, tags=(), note="a")) == hash(ours(1, tags=(), note="b"))
        assert len({ours(1, tags=()), ours(1, tags=()), ours(3, tags=())}) == 2
    if frozen:
        with pytest.raises(AttributeError):
            b.x = 5
        with pytest.raises(AttributeError):
            del b.x
    else:
        b.x = 5
        assert b.x == 5


def test_ordering_matches_dataclasses():
    standard, ours = _both(frozen=True, order=True)
    values = [(3, 1), (1, 2), (1, 1), (2, 9)]
    assert [(p.x, p.y) for p in sorted(ours(*v) for v in values)] == [
        (p.x, p.y) for p in sorted(standard(*v) for v in values)
    ]
    assert ours(1, 1) <= ours(1, 1) and ours(2, 0) > ours(1, 9) and ours(1, 1) < ours(1, 2)
    with pytest.raises(TypeError):
        ours(1) < standard(1)  # noqa: B015 - only the TypeError is asked for


def test_replace_fields_and_is_dataclass():
    _, ours = _both(frozen=True)
    point = ours(1, tags=["a"], note="n")
    moved = records.replace(point, y=7)
    assert (moved.x, moved.y, moved.tags, moved.note) == (1, 7, ["a"], "n") and point.y == 2
    assert records.is_dataclass(ours) and records.is_dataclass(point) and not records.is_dataclass(object())
    assert [f.name for f in records.fields(point)] == ["x", "y", "tags", "note"]
    with pytest.raises(TypeError):
        records.fields(object())
    with pytest.raises(TypeError):
        ours()  # x has no default


def test_a_method_the_class_defines_is_kept_and_fields_are_inherited():
    @records.dataclass(frozen=True)
    class Base:
        a: int
        b: int = 0

        def __repr__(self) -> str:
            return "own"

        def __hash__(self) -> int:
            return 42

    @records.dataclass(frozen=True)
    class Child(Base):
        c: str = "c"

    child = Child(1, 2, "z")
    assert (child.a, child.b, child.c) == (1, 2, "z") and repr(Base(1)) == "own" and hash(Base(1)) == 42
    assert repr(child).endswith("Child(a=1, b=2, c='z')")  # a subclass gets its own, as in dataclasses
    assert [f.name for f in records.fields(Child)] == ["a", "b", "c"] and Child.__match_args__ == ("a", "b", "c")


def test_post_init_runs_and_instances_pickle():
    @records.dataclass
    class Counted:
        n: int

        def __post_init__(self) -> None:
            self.n += 1

    assert Counted(1).n == 2
    _, ours = _both(frozen=True)
    globals()["_Pickled"] = ours  # pickle finds a class by its module and name
    ours.__qualname__ = "_Pickled"
    try:
        point = ours(4, tags=["t"])
        assert pickle.loads(pickle.dumps(point)) == point
    finally:
        del globals()["_Pickled"]


def test_init_is_compiled_once_a_class_has_made_its_first_instances(monkeypatch):
    monkeypatch.setattr(records, "GENERIC_INITS", 2)
    compiled = []
    real = records._compiled_init
    monkeypatch.setattr(records, "_compiled_init", lambda cls: compiled.append(cls) or real(cls))

    @records.dataclass(frozen=True)
    class Never:
        a: int

    @records.dataclass(frozen=True)
    class Often:
        a: int
        b: list[int] = records.field(default_factory=list)

    made = [Often(n) for n in range(5)]
    assert compiled == [Often] and [o.a for o in made] == list(range(5)) and made[0].b is not made[4].b


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [((1, 2, [], "n", 5), {}, "arguments"), ((1,), {"x": 1}, "multiple values"), ((), {"y": 1}, "missing")],
)
def test_bad_arguments_raise_type_error_as_dataclasses_do(args, kwargs, message):
    standard, ours = _both()
    with pytest.raises(TypeError):
        standard(*args, **kwargs)
    with pytest.raises(TypeError, match=message):
        ours(*args, **kwargs)
    with pytest.raises(TypeError, match="unexpected keyword"):
        ours(1, colour="red")


def test_importing_records_imports_neither_dataclasses_nor_inspect():
    probe = "import sys, aoti_lint.records; print(sorted({'dataclasses', 'inspect'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"
