"""The semantic model (``aoti_lint.model.semantic``) against the truth: what Python binds, checked with the
standard library's ``symtable`` on every fixture and rule example, and what each read names in hand-written cases."""

from __future__ import annotations

import ast
import symtable
import sys
from pathlib import Path

import pytest

from aoti_lint.model.bindings import COMPREHENSION, FUNCTION, LAMBDA, MODULE
from aoti_lint.model.semantic import SemanticModel
from aoti_lint.rules import ALL_RULES

ROOT = Path(__file__).resolve().parent


def _names(source: str) -> dict[str, set[str]]:
    """``spelling@line`` -> what the model says each name or attribute chain read there names."""
    tree = ast.parse(source)
    model = SemanticModel(tree)
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute | ast.Name) and isinstance(node.ctx, ast.Load):
            found.setdefault(f"{ast.unparse(node)}@{node.lineno}", set()).update(model.qualified_names(node))
    return found


CASES = [
    # Imports, plain, dotted, aliased, relative.
    (
        "import torch\nimport torch._inductor.config as cfg\nfrom torch._export import aot_load as load\n"
        "from . import helpers\nfrom ..pkg.m import x as y\n"
        "torch._export.aot_compile\ncfg.trace.enabled\nload\nhelpers.h\ny\n",
        {
            "torch._export.aot_compile@6": {"torch._export.aot_compile"},
            "cfg.trace.enabled@7": {"torch._inductor.config.trace.enabled"},
            "load@8": {"torch._export.aot_load"},
            "helpers.h@9": {".helpers.h"},
            "y@10": {"..pkg.m.x"},
        },
    ),
    # `import a.b` binds `a`: `a.c` is `a.c`.
    ("import os.path\nos.environ\n", {"os.environ@2": {"os.environ"}}),
    # A later binding replaces an earlier one that always ran; in exclusive branches, both may reach a read.
    (
        "import os\nos = fake\nos.environ\n",
        {"os.environ@3": {"<module>.os.environ"}},
    ),
    (
        "try:\n    from torch._inductor import aoti_load_package as load\nexcept ImportError:\n"
        "    from torch._export import aot_load as load\nload\n",
        {"load@5": {"torch._inductor.aoti_load_package", "torch._export.aot_load"}},
    ),
    ("if c:\n    import a as m\nelse:\n    import b as m\nm.f\n", {"m.f@5": {"a.f", "b.f"}}),
    ("import a as m\nif c:\n    import b as m\nm.f\n", {"m.f@4": {"a.f", "b.f"}}),
    # None has no attribute: the fallback `torch = None` names nothing when an attribute is read off it.
    ("try:\n    import torch\nexcept ImportError:\n    torch = None\ntorch.x\n", {"torch.x@5": {"torch.x"}}),
    # A read before the binding is not the binding's; a function's body runs later and sees the module's end.
    ("environ\nfrom os import environ\n", {"environ@1": set()}),
    ("def f():\n    return environ\nfrom os import environ\n", {"environ@2": {"os.environ"}}),
    # A function's own names: parameters, imports, a local read before it is bound (unbound, no global).
    (
        "import os\ndef f(os):\n    os.environ\ndef g():\n    import os as o\n    o.environ\n"
        "def h():\n    os.environ\n    os = 1\n",
        {"os.environ@3": {"f.<locals>.os.environ"}, "o.environ@6": {"os.environ"}, "os.environ@8": set()},
    ),
    # global and nonlocal.
    (
        "def f():\n    global cfg\n    import torch._inductor.config as cfg\ndef g():\n    cfg.debug\n",
        {"cfg.debug@5": {"torch._inductor.config.debug"}},
    ),
    # A class's names are not seen by its methods; a comprehension has its own scope, its first iterable not.
    (
        "import os\nclass C:\n    os = 1\n    def m(self):\n        return os.environ\n",
        {"os.environ@5": {"os.environ"}},
    ),
    ("import os as x\n[x for x in range(3)]\nx.environ\n", {"x.environ@3": {"os.environ"}}),
    # A walrus binds outside the comprehension; a loop's body runs again.
    ("import os\n[(os := 1) for _ in y]\nos.environ\n", {"os.environ@3": {"<module>.os.environ"}}),
    (
        "import a as m\nfor _ in y:\n    m.f\n    import b as m\n",
        {"m.f@3": {"a.f", "b.f"}},
    ),
    # `del` unbinds; an exception name is unbound after its handler.
    ("import os\ndel os\nos.environ\n", {"os.environ@3": set()}),
    # Builtins, shadowed or not; a star import leaves the rest unknown (nothing named).
    ("getattr\ndef getattr(): pass\ngetattr\n", {"getattr@1": {"builtins.getattr"}, "getattr@3": {"getattr"}}),
    ("from os import *\nenviron\n", {"environ@2": set()}),
    # A call is named by its callee, a subscript by its value, within a chain too.
    (
        "from pathlib import Path\nPath(__file__).parent\nd[0].x\n",
        {"Path(__file__).parent@2": {"pathlib.Path.parent"}, "d[0].x@3": set()},
    ),
    # Python reads identifiers in their NFKC form: a fullwidth `os` is `os`.
    ("import os\n\uff4f\uff53.environ\n", {"os.environ@2": {"os.environ"}}),
]


@pytest.mark.parametrize(("source", "expected"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_what_a_read_names(source, expected):
    found = _names(source)
    for key, names in expected.items():
        assert found.get(key) == names, (key, found)


def _sources() -> list[tuple[str, str]]:
    found = [(str(path.relative_to(ROOT)), path.read_text()) for path in sorted((ROOT / "fixtures").rglob("*.py"))]
    for rule in ALL_RULES:
        for index, example in enumerate([*getattr(rule, "VALID", ()), *getattr(rule, "INVALID", ())]):
            found.append((f"{rule.code}-{index}", example.source))
    return found


def _parsed(sources: list[tuple[str, str]]) -> list[tuple[str, str]]:
    kept = []
    for name, text in sources:
        try:
            compile(text, name, "exec", ast.PyCF_ONLY_AST)
        except (SyntaxError, ValueError):
            continue
        kept.append((name, text))
    return kept


SOURCES = _parsed(_sources())


@pytest.mark.parametrize(("name", "text"), SOURCES, ids=[name for name, _ in SOURCES])
def test_every_read_resolves_in_the_scope_symtable_gives(name, text):
    """symtable (CPython's own compiler pass) says for every name of every scope whether it is local, global or
    free; each read the model resolves must reach bindings of that very scope, of the module, or of an enclosing
    function."""
    tree = ast.parse(text)
    model = SemanticModel(tree)
    tables: dict[tuple[str, int], symtable.SymbolTable] = {}
    stack = [symtable.symtable(text, name, "exec")]
    while stack:
        table = stack.pop()
        tables[(table.get_name(), table.get_lineno())] = table
        stack.extend(table.get_children())
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
            continue
        scope = model.scope_of(node)
        bindings = model.bindings_of(node)
        assert scope is not None, (name, node.id, node.lineno)
        if scope.kind in (COMPREHENSION, LAMBDA) or not bindings:
            continue  # symtable names comprehensions and lambdas apart; an unbound read has nothing to check
        key = ("top", 0) if scope.kind == MODULE else (scope.node.name, scope.node.lineno)  # type: ignore[attr-defined]
        table = tables.get(key)
        if table is None:
            continue
        symbol = table.lookup(node.id)
        owners = {binding.scope for binding in bindings}
        if symbol.is_global() or (scope.kind == MODULE):
            assert owners == {model.module}, (name, node.id, node.lineno)
        elif symbol.is_local():
            assert owners == {scope}, (name, node.id, node.lineno)
        elif symbol.is_free():
            assert all(owner.kind in (FUNCTION, LAMBDA) and owner is not scope for owner in owners), (
                name,
                node.id,
                node.lineno,
            )


def test_the_model_never_raises_on_the_syntax_python_reads():
    """Every statement and expression form: the model answers, it does not fail."""
    text = (
        "import a, b.c as d\nfrom e import *\nx: int\ny: int = 1\nz += 1\n"
        "async def f(p, /, q=1, *r, s, t=2, **u) -> int:\n    global g\n    nonlocal_ = 1\n"
        "    async with m as (n, *o):\n        async for v in w:\n            await v\n    del x\n"
        "    try:\n        pass\n    except" + ("* " if sys.version_info >= (3, 11) else " ") + "E as err:\n"
        "        pass\n    return lambda k=1: k\n"
        "class C(B, metaclass=M):\n    attr = [i for i in range(3) if i]\n"
        "match subject:\n    case {'k': v, **rest}:\n        pass\n    case [1, *others] if others:\n        pass\n"
        "    case P(x=1) as captured:\n        pass\n"
        "print(f'{x!r:>{width}}', {k: v for k, v in items}, {e for e in s}, (g for g in h))\n"
    )
    model = SemanticModel(ast.parse(text))
    assert model.module.bindings
