"""What ``aoti_lint.model.local_bindings`` reads from ``ast`` is libcst's own answer, name for name.

Each case asks ``single_value``, ``lone_parameter`` and ``references`` both ways for every name of the module:
where the ``ast`` reading answers, the answer must be the nodes libcst's scope analysis gives (or None where
it gives none). A difference (a read before the
assignment, a name bound twice, a ``nonlocal``) fails here rather than as a lost or extra finding.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper
from libcst.metadata.scope_provider import ImportAssignment

from aoti_lint.model.local_bindings import NOT_KNOWN
from aoti_lint.model.module_facts import ModuleFacts
from tests.helpers import libcst_modules

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parent.parent

TRICKY = {
    "parameters and a local": """
        import torch
        x = 5
        def build(model, x, *args, y=1, **kw):
            so = torch._export.aot_compile(model, (x, y, args, kw))
            return torch._export.aot_load(so, "cpu"), so
    """,
    "read before the assignment": """
        def f():
            print(so)
            so = 1
            so2 = so2 if False else 2
            return so, so2
    """,
    "bound twice or otherwise": """
        def f(flag):
            a = 1
            if flag:
                a = 2
            b = 1
            b += 1
            c: int = 3
            for d in range(3):
                pass
            with open("x") as e:
                pass
            try:
                g = 1
            except Exception as g:
                pass
            import os as h
            k = 1
            del k
            return a, b, c, d, e, g, h, os
    """,
    "nested scopes": """
        def outer():
            n = 1
            m = 1
            q = 1
            def inner():
                nonlocal n
                n = 2
                m = 3
                return n, m, q
            lam = lambda q: q
            comp = [m for m in range(3)]
            walrus = [(w := i) for i in range(3)]
            class K:
                z = q
                q = 2
            return n, m, q, lam, comp, walrus, w, inner, K
    """,
    "globals": """
        g = 1
        def f():
            global g
            g = 2
            return g
        def h():
            return g
    """,
    "dotted imports": """
        import os.path
        def f():
            os = 1
            return os.path
    """,
    "f-strings and methods": """
        class A:
            def m(self, x):
                y = x + 1
                z = f"{y} {x!r:>{y}}"
                return self.w(y), z
    """,
    "non-ascii columns": """
        def f(é):
            s = "日本"; t = é
            return s, t, é
    """,
    "module-level names": """
        import torch
        from torch._export import aot_compile
        LOG = make_log()
        PATH = "model.so"
        TWICE = 1
        TWICE = 2
        print(LATE)
        LATE = 3
        class Model:
            size = PATH
            def forward(self, x):
                return aot_compile(x, PATH), super().forward(tuple(x)), TWICE, LATE, LOG, Model
        def helper():
            global SET_LATER
            SET_LATER = 1
        def reader():
            return SET_LATER, PATH, [p for p in PATH], (lambda: PATH)()
        def annotated(x: "PATH") -> None:
            return f"{LOG}"
        def local_import():
            import os
            return os
        ANNOTATED: int = 4
        value = [LOG for _ in range(2)]
    """,
    "module-level names bound again": """
        import torch
        so = torch._export.aot_compile(m, (x,))
        runner = torch._export.aot_load(so, "cpu")
        import torch
        so = torch._export.aot_compile(m, (x,))
        runner = torch._export.aot_load(so, "cpu")
        so = f(so)
        print(so, runner, later)
        later = 1
        if flag:
            branch = 1
        else:
            branch = 2
        print(branch)
        for item in range(2):
            print(looped)
            looped = item
        once = 1
        print(once)
        gone = 1
        del gone
        print(gone)
        grown = 1
        grown += 1
        print(grown)
        both = 1
        def uses():
            return both, so
        class Holder:
            held = 1
            print(held)
        held = 2
        print(held)
    """,
    # Found by review: a walrus (or an assignment in a string libcst reads as a type) inside a binding's value
    # moves libcst's order of reads and bindings; class bases, keywords and decorators, lambda defaults and a
    # comprehension's first iterator are read in the module's scope; a class pattern's keyword is an access.
    "module-level reads libcst orders otherwise": """
        import typing
        a = (y := 2) + a
        b = 1
        b = (w := 2) + b
        c = 1
        c = 2 if (v := 0) else c
        d = 1
        d = typing.cast('z = 1', d)
        e = 1
        class K(e, metaclass=e):
            pass
        @e
        class L:
            pass
        f = lambda p=e: p
        g = [i for i in e]
        h = list(i for i in e)
        k = {i: 0 for i in e}
        e = 2
        m = 0
        m = 1
        match v:
            case K(m=1):
                pass
    """,
    "a class pattern's keyword in a function": """
        def f(v):
            x = 0
            match v:
                case P(x=1):
                    return x
    """,
    "module-level names and a star import": """
        from os.path import *
        joined = 1
        print(joined, join)
    """,
    "annotated assignments": """
        import torch
        from typing import Any
        registry: dict[str, Any] = {}
        path: str = "model.pt2"
        declared: int
        declared = 1
        again: int = 1
        again: int = 2
        wrapped: int = 3
        quoted: "quoted" = 4
        itself: itself = 5
        print(registry, path, declared, again, wrapped, quoted, itself)
        class K:
            field: int = 1
            other: field = 2
        def build(model, x):
            so: str = torch._export.aot_compile(model, (x,))
            kind: Any = so
            empty: int
            k: "K" = K()
            self_ref: self_ref = 1
            registry["m"] = so
            return torch._export.aot_load(so, "cpu"), kind, path, empty, k, self_ref
        def nested():
            held: int = 1
            def inner():
                return held
            return inner, [held for _ in range(2)]
        def attribute_target(obj):
            obj.value: int = 1
            obj[0]: int = 2
            return obj
    """,
    "assigned again in a function": """
        import torch
        gm = "module"
        def f(model, x, flag):
            print(gm)
            gm = torch.export.export(model, (x,))
            first = gm
            gm = gm.module()
            if flag:
                path = "a.so"
            else:
                path = "b.so"
            so = torch._export.aot_compile(gm, (x,))
            so = so if flag else so
            so = f(so, (w := so), so)
            for i in range(3):
                acc = i
                acc = acc + 1
            return first, gm, path, so, w, acc
    """,
    "one target among many": """
        def f():
            a = b = 1
            c, d = 1, 2
            e = [1]
            e[0] = 2
            return a, b, c, d, e
    """,
    "bound only by loops, tuples and augmented assignments": """
        import torch
        ep = torch.export.export(m, (x,))
        flat = 1

        def loop(items, flat_inputs):
            print(ep)
            for name, ep in items:
                print(ep.module(), name)
            for ep in ep.items():
                pass
            else:
                print(ep)
            return ep

        def unpack(args):
            print(flat)
            flat, _ = tree_flatten(flat)
            rest, *more = flat
            total = 0
            total += total
            count: int
            print(flat, rest, more, total, count)

            def inner(*flat):
                return flat

            async def walk(stream):
                async for chunk in stream:
                    yield chunk
                print(chunk)

            return inner(flat)

        def outer(p):
            def inner():
                print(p)
                for p in range(3):
                    print(p)
            return inner

        def parameters_bound_again(kwargs, options, items):
            kwargs = kwargs or {}
            for options in items:
                pass
            items += [kwargs]
            return kwargs, options, items

        def imported(files):
            print(compile_fx, os)
            from .compile_fx import compile_fx
            import os.path
            import numpy as np, json
            paths = [os.path.splitext(file)[0] for file in files if isinstance(file, str)]
            return compile_fx(paths), np, json, os

        def shadowed():
            lambda: ep
            [ep for ep in range(3)]
            while True:
                for ep in ():
                    break
                print(ep)
                break
    """,
    # A module-level function's reads (its callers): in functions, its own body, after it, in decorators and
    # defaults before it, bound again, declared global, named in a string.
    "F1": "def g():\n    return f(1)\ndef f(x=2):\n    return f(x - 1) if x else 0\nf(3)\nh = lambda: f()\n",
    "F2": "f(0)\ndef f(x=2):\n    pass\n",
    "F3": "@d(f)\ndef f(x=2):\n    pass\n",
    "F4": "def f(x=2):\n    pass\ndef f(y=1):\n    pass\nf()\n",
    "F5": "def f(x=2):\n    pass\ndef g():\n    global f\n    f = None\n",
    "F6": 'def f(x=2):\n    pass\ny: "f" = f()\n',
    "F7": "async def f(x=2):\n    pass\nclass C:\n    y = f()\n    def m(self):\n        return f()\n",
    "P1": (
        'def f(mode, ab, b, x=0):\n    g = [f"{x}" for x in ab]\n'
        '    return f"{ab} {b} {mode=} {mode!r:>{ab}} {(lambda b: b)(1)}", g\n'
    ),
    "P2": 'def f(mode):\n    def g():\n        return f"{mode}"\n    mode = 1\n    return f"""{\nmode}""", g\n',
    "F11": (
        "def f(x=2):\n    return 1\ndef g():\n    early = f(1)\n    from m import f\n"
        "    def inner():\n        return f()\n    return f(2), early, inner\ndef h():\n    return f()\n"
    ),
    "F13": (
        "def f(x=2):\n    return 1\ndef g():\n    from m import f\n    def k():\n        a = f()\n"
        "        from n import f\n        return f(), a\n    return k\nf()\n"
    ),
    "F12": "def f(x=2):\n    return 1\ndef g():\n    from m import f\n    f = f()\n    return f\nf()\n",
    "F9": 'def f(x=2):\n    """Calls f(0) again."""\n    return f\nf()\nT = TypeVar("T", bound="f")\n',
    "F10": 'def f(x=2):\n    """f"""\nclass C(Generic["f"]):\n    pass\n',
    "F8": "def f(x=2, y=f):\n    pass\n[f() for _ in range(2)]\nprint(f'{f()}')\n",
}


# Modules a differential fuzzer found where the ast reading disagreed with libcst (four kinds: a walrus or an
# assignment in a string inside an assignment, a string annotation that is a statement, a fullwidth name ast folds
# into an ASCII one, a non-ASCII name in a string annotation).
FUZZED = {
    "A1": "def f():\n    x = (w := 1) + x\n    return x\n",
    "A2": "def f():\n    x: int = (w := 1) + x\n    return x\n",
    "A3": 'def f():\n    x: "a = 1" = x\n    return x\n',
    "B1": 'def f():\n    x = 1\n    y: "import x" = 0\n    return x\n',
    "B2": 'def f():\n    x: "import x" = 1\n    return x\n',
    "B2m": 'x: "import x" = 1\nprint(x)\n',
    "B3": 'def f():\n    x = 1\n    y: "import x" = 0\n    print(x)\n    x = 2\n',
    "B3g": 'def f():\n    x = 1\n    y: "global x" = 0\n    print(x)\n    x = 2\n',
    "C1": "def f():\n    x = 1\n    \uff58 = 2\n    return x\n",
    "C2": "def f():\n    \uff58: int = 1\n    return x\n",
    "C2i": "import x\ndef f():\n    \uff58: int = 1\n    return x\n",
    "C2m": "\uff58: int = 1\nprint(x)\n",
    "C3": "def f():\n    \uff58 = 1\n    return x\n",
    "D1": 'def f():\n    é = 1\n    y: "é" = 0\n',
    "D1m": 'é = 1\ny: "é" = 0\n',
    "D2": 'def f():\n    é: int = 1\n    y: "é" = 0\n',
    "D2m": 'é: int = 1\ny: "é" = 0\n',
}


def _in_module_body(facts: ModuleFacts, node: cst.CSTNode) -> bool:
    """Whether ``node`` is in a simple statement of the module's own body."""
    parent = facts.parent(node)
    while parent is not None and not isinstance(parent, cst.SimpleStatementLine):
        if isinstance(parent, cst.Lambda | cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp):
            return False
        parent = facts.parent(parent)
    return parent is not None and isinstance(facts.parent(parent), cst.Module)


def _compare(module: cst.Module) -> tuple[int, int]:
    """How many of the module's names the ``ast`` reading answered, of how many, for each of the three
    questions; every answer is checked against libcst's."""
    facts = ModuleFacts(MetadataWrapper(module, unsafe_skip_copy=True))
    local = facts._locals
    answered = asked = 0
    for name in facts.nodes(cst.Name):
        where = (name.value, facts.positions[name].start)
        asked += 4
        fast = facts._single_value_without_scopes(name)
        if fast is not NOT_KNOWN:
            answered += 1
            expected = facts._single_value_from_scopes(name)
            if expected is None and fast is not None:
                # Where libcst's scopes give none, ``ast`` follows a script's straight line: the last of several
                # assignments of the module's body before a read in a simple statement of it.
                assert _in_module_body(facts, fast) and _in_module_body(facts, name), ("single_value", where)
            else:
                assert fast is expected, ("single_value", where)
        start = facts.positions[name].start
        if local is not None and local.lone_parameter(name.value, start.line, start.column) is not NOT_KNOWN:
            answered += 1
            assert facts.lone_parameter(name) is facts._lone_parameter_from_scopes(name), ("parameter", where)
        if local is not None and not local.may_be_import(name.value, start.line, start.column):
            answered += 1
            scope = facts.scopes.get(name)
            assignments = list(scope[name.value]) if scope is not None else []
            assert not (len(assignments) == 1 and isinstance(assignments[0], ImportAssignment)), ("import", where)
        fast_reads = local.references(name.value, start.line, start.column) if local is not None else NOT_KNOWN
        if fast_reads is not NOT_KNOWN:
            answered += 1
            reads, expected = facts.references(name), facts._references_from_scopes(name)
            if fast_reads is None:  # other bindings reach its reads too
                assert reads is None and expected is None, ("references", where)
                continue
            assert reads is not None and expected is not None, ("references", where)
            assert {id(node) for node in reads} == {id(node) for node in expected}, ("references", where)
    for function in module.body:
        if not isinstance(function, cst.FunctionDef):
            continue
        asked += 1
        reads = facts.function_references(function)
        if reads is None:
            continue
        answered += 1
        scope = facts.scopes.get(function)
        definitions = list(scope.assignments[function.name.value]) if scope is not None else []
        where = ("function", function.name.value)
        assert len(definitions) == 1 and definitions[0].node is function, where
        assert {id(node) for node in reads} == {id(access.node) for access in definitions[0].references}, where
    return answered, asked


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_answers_are_libcst_own_on_tricky_modules(name):
    _compare(cst.parse_module(textwrap.dedent(TRICKY[name])))


@pytest.mark.parametrize("name", sorted(FUZZED))
def test_answers_are_libcst_own_on_what_the_fuzzer_found(name):
    _compare(cst.parse_module(FUZZED[name]))


def test_strings_that_are_only_expressions_leave_the_module_answered():
    """Docstrings and strings holding statements stay outside: only a string where libcst parses code (an
    annotation, a subscript's index, TypeVar/NewType/cast) that is more than one plain expression stops the reading."""
    plain = (
        'def f(m, d) -> "torch.nn.Module":\n    """x = 1; import os"""\n    log("a = b")\n'
        '    return d["k.v"], d["a: b"]\n'
    )
    facts = ModuleFacts(MetadataWrapper(cst.parse_module(plain), unsafe_skip_copy=True))
    assert facts._locals is not None
    opaque = [
        'x: "import x" = 1\n',
        "T = typing.TypeVar('T', bound='(w := 1)')\n",
        "from typing import Dict\ny = Dict['a = 1']\n",
    ]
    for text in opaque:
        facts = ModuleFacts(MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True))
        assert facts._locals is None, text


def test_parameters_and_a_single_local_are_answered_without_scopes():
    module = cst.parse_module(textwrap.dedent(TRICKY["parameters and a local"]))
    facts = ModuleFacts(MetadataWrapper(module, unsafe_skip_copy=True))
    values = {
        (name.value, facts.positions[name].start.line): facts._single_value_without_scopes(name)
        for name in facts.nodes(cst.Name)
    }
    assert values[("x", 5)] is None and values[("kw", 5)] is None
    assert module.code_for_node(values[("so", 6)]).startswith("torch._export.aot_compile(")
    assert values[("so", 5)] is NOT_KNOWN  # an assignment's target is no read
    so = next(name for name in facts.nodes(cst.Name) if name.value == "so")
    local, start = facts._locals, facts.positions[so].start
    assert local is not None and len(local.references("so", start.line, start.column)) == 2
    x = next(name for name in facts.nodes(cst.Name) if name.value == "x" and facts.positions[name].start.line == 5)
    assert local.lone_parameter("x", 5, facts.positions[x].start.column) is not NOT_KNOWN


def test_annotated_assignments_are_answered_as_plain_ones_without_scopes():
    """``name: T = value`` binds as ``name = value`` does (torch's ``_registry: dict[...] = {}``): its reads and
    its value are answered from ``ast``, in a function and at module level."""
    module = cst.parse_module(textwrap.dedent(TRICKY["annotated assignments"]))
    facts = ModuleFacts(MetadataWrapper(module, unsafe_skip_copy=True))
    names = {(name.value, facts.positions[name].start.line): name for name in facts.nodes(cst.Name)}
    so = facts._single_value_without_scopes(names[("so", 19)])
    assert so is not NOT_KNOWN and module.code_for_node(so).startswith("torch._export.aot_compile(")
    local = facts._locals
    assert local is not None
    for name, line in [("registry", 4), ("path", 5), ("so", 18)]:
        start = facts.positions[names[(name, line)]].start
        reads = local.references(name, start.line, start.column)
        assert reads is not NOT_KNOWN and len(reads) >= 2, name  # type: ignore[arg-type]
    answered, asked = _compare(module)
    assert answered > asked // 4


def test_a_local_assigned_again_is_answered_without_scopes():
    """A function's local bound by several plain assignments: a read after exactly one of them reads its value,
    after two or more none; before any, or inside one, libcst's scopes decide."""
    module = cst.parse_module(textwrap.dedent(TRICKY["assigned again in a function"]))
    facts = ModuleFacts(MetadataWrapper(module, unsafe_skip_copy=True))
    values: dict[tuple[str, int], list[object]] = {}
    for name in facts.nodes(cst.Name):
        values.setdefault((name.value, facts.positions[name].start.line), []).append(
            facts._single_value_without_scopes(name)
        )
    assert module.code_for_node(values[("gm", 7)][0]).startswith("torch.export.export(")
    assert values[("gm", 8)] == [NOT_KNOWN, NOT_KNOWN]  # the target, and a read inside the second assignment
    assert values[("gm", 13)] == [None] and values[("path", 19)] == [None]
    assert values[("gm", 5)] == [NOT_KNOWN]  # before any: the module's gm, as libcst's scopes say
    assert values[("so", 15)][2] is NOT_KNOWN  # inside an assignment holding a walrus
    _compare(module)


def test_answers_are_libcst_own_on_every_fixture_and_the_analysis_modules():
    paths = [*sorted(FIXTURES.rglob("*.py")), *sorted((REPO / "aoti_lint" / "analysis").glob("*.py"))]
    answered = 0
    for _path, module in libcst_modules(paths):
        answered += _compare(module)[0]
    assert answered > 1_000


def test_module_level_reads_of_a_name_bound_again_are_answered_without_scopes():
    """A script or notebook assigning one name again and again: each read's single value is the last assignment
    before it in the module's straight line (none inside a compound statement); libcst's scope analysis of such a
    module is quadratic in them, and gives none past the second."""
    module = cst.parse_module(textwrap.dedent(TRICKY["module-level names bound again"]))
    facts = ModuleFacts(MetadataWrapper(module, unsafe_skip_copy=True))
    values = {
        (name.value, facts.positions[name].start.line): facts._single_value_without_scopes(name)
        for name in facts.nodes(cst.Name)
    }
    assert module.code_for_node(values[("so", 4)]).startswith("torch._export.aot_compile(")
    assert facts.positions[values[("so", 7)]].start.line == 6  # two assignments before: the last
    assert module.code_for_node(values[("so", 9)]) == "f(so)"  # three
    assert values[("branch", 15)] is None and values[("later", 9)] is None
    assert module.code_for_node(values[("once", 20)]) == "1"
    # Bound in another way too (del, +=) or in a class: libcst's scopes decide.
    assert values[("gone", 23)] is NOT_KNOWN and values[("grown", 26)] is NOT_KNOWN
    assert values[("held", 34)] is NOT_KNOWN


def test_a_script_binding_one_name_again_and_again_needs_no_scope_analysis(monkeypatch):
    """A script (or a notebook's cells, joined) that imports torch and assigns `so` again for every model: libcst's
    scope analysis of it is quadratic in the bindings (1,000 of them: 15 s); every question about its names is
    answered from ``ast``, and the findings and fixes are the same."""
    from libcst.metadata import ScopeProvider

    from tests.helpers import lint_text

    resolved: list[object] = []
    original = MetadataWrapper.resolve
    monkeypatch.setattr(
        MetadataWrapper, "resolve", lambda self, provider: resolved.append(provider) or original(self, provider)
    )
    pair = "import torch\nso = torch._export.aot_compile(model, (x,))\nrunner = torch._export.aot_load(so, 'cpu')\n"
    result = lint_text(pair * 30, build_edits=True)
    assert [f.code for f in result.findings].count("AOTI001") == 30
    assert sum(f.fix is not None and bool(f.fix.edits) for f in result.findings) == 60
    assert ScopeProvider not in resolved
