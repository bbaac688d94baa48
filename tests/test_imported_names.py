"""The qualified names read from imports (``aoti_lint.model.imported_names``) are libcst's own, node for node.

Rules ask ``PythonContext.qualified_names``; it answers from the module's imports without libcst's scope
analysis wherever it can. Each case compares that answer with libcst's ``QualifiedNameProvider`` on every
node of the file, so a difference anywhere (a read before its import, a shadowing parameter, a keyword's
name) fails here rather than as a lost or extra finding.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, QualifiedNameProvider

from aoti_lint.model.imported_names import QualifiedNames
from aoti_lint.rules import ALL_RULES

FIXTURES = Path(__file__).parent / "fixtures"

TRICKY = {
    "function imports": """
        import torch

        def load(path):
            early = load_package
            from torch._inductor.package import load_package
            import torch._inductor.config as cfg
            import os.path
            return load_package(path), cfg.debug, os.path.join, torch.compile, early

        def closure():
            from m import helper
            def inner():
                return helper()
            return [helper(x) for x in range(2)], lambda: helper, inner

        @decorate(helper)
        def decorated(x=helper):
            from m import helper
            return helper(x)

        def twice(flag):
            if flag:
                from m import f
            else:
                from n import f
            return f()

        def rebound():
            from m import g
            g = g()
            return g

        def declared():
            global h
            from m import h
            return h()

        def walrus():
            from m import w
            [(w := v) for v in range(2)]
            return w

        def handled():
            from m import e
            try:
                pass
            except Exception as e:
                pass
            return e

        def classy():
            from m import c
            class K:
                y = c
            return c, K

        def params(p):
            from m import p
            return p

        async def asynchronous():
            from m import a2
            return await a2()
    """,
    "imports": """
        import os
        import a.b.c
        import torch._export as e
        from m import n as k, ab
        from . import rel
        from .x import rel2
        from __future__ import annotations
        x = dict.fromkeys
        z = len(os.environ)
        w = unbound.attr
        q = a.b.c.d
        r = a.zz
        s = e.aot_compile(rel, rel2, k.foo, ab)
        u = __name__
        v = __file__
        os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
        torch.export.Dim("b", min=2, max=os.sep)
    """,
    "read before the import": """
        print(os.environ, late.x)
        import os
        from late import late
        def f():
            return os.environ, late.x
    """,
    "rebound": """
        import torch
        torch = wrap(torch)
        from m import helper
        def helper():
            pass
        helper()
        import os
        def g(os):
            return os.environ
        class C:
            import json
            json.dumps
        json.dumps
    """,
    "module-level definitions": """
        def compile_model(m):
            return compile_model, Model
        class Model:
            pass
        compile_model(Model())
        PATH = "m.so"
        load(PATH)
        for item in items:
            print(item)
        with open(PATH) as handle:
            handle.read()
    """,
    "scopes of their own": """
        import os
        squares = [os for os in range(3)]
        total = (n := len(squares))
        handler = lambda os: os.environ
        try:
            import json
        except ImportError as json_error:
            json = None
        print(json, json_error, n)
        global gone
        del total
        total: int
    """,
    "order of several imports": """
        import torch
        torch.compile
        import torch.distributed
        torch.distributed.init
        from m import thing
        thing.a
        from n import thing
        thing.b
    """,
    "imports again inside functions": """
        import torch
        import os.path
        def f():
            torch.compile
            import torch
            import torch.fx
            return torch.fx.symbolic_trace, os.path.join
        def g():
            import os.path as osp
            import json
            return torch.export, json.dumps, osp.join
        class C:
            print(torch.ones)
            import torch
        json.loads
    """,
    "annotations and defaults": """
        from __future__ import annotations
        def f(x: Later = Later.default, *, y: os.PathLike = None) -> Later:
            return x
        class Later:
            default = 1
        import os
    """,
    "match": """
        import os
        match command:
            case {"env": os, **rest}:
                print(os, rest)
            case [first, *others] if first:
                print(others)
            case Point(x=px) as point:
                print(px, point)
    """,
    "star import": """
        from os import *
        environ["CUDA_LAUNCH_BLOCKING"] = "1"
    """,
    "one-line suites and nested blocks": """
        if True: import os
        while False: import json as j
        try:
            pass
        finally:
            from m import k
        print(os.sep, j.dumps, k)
    """,
}
if sys.version_info >= (3, 12):
    TRICKY["type parameters"] = """
        import os
        def f[T](x: T) -> T:
            return x
        type Alias[U] = list[U]
        class Box[os]:
            pass
        print(T, U, os.sep, Alias)
    """


def _compare(text: str) -> tuple[int, list[str]]:
    """How many nodes were answered from the imports, and every answer that differs from libcst's."""
    module = cst.parse_module(text)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    provided = wrapper.resolve(QualifiedNameProvider)
    names = QualifiedNames(wrapper, text)
    answered, differences = 0, []
    for node, value in provided.items():
        expected = {name.name for name in (value() if callable(value) else value)}
        if names(node) != expected:
            differences.append(f"{module.code_for_node(node)!r}: libcst {sorted(expected)}, ours {sorted(names(node))}")
        cheap = names._from_imports(node)
        if cheap is None:
            continue
        answered += 1
        if cheap != expected:
            differences.append(f"{module.code_for_node(node)!r}: libcst {sorted(expected)}, read {sorted(cheap)}")
    return answered, differences


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_tricky_bindings_answer_as_libcst(name):
    _, differences = _compare(textwrap.dedent(TRICKY[name]).lstrip())
    assert differences == []


def test_every_fixture_and_rule_example_answers_as_libcst():
    texts = {str(path): path.read_text() for path in sorted(FIXTURES.rglob("*.py"))}
    for rule in ALL_RULES:
        for index, example in enumerate([*rule.VALID, *rule.INVALID]):
            if example.filename.endswith(".py"):
                texts[f"{rule.code} example {index}"] = example.source
    answered = 0
    for label, text in texts.items():
        try:
            count, differences = _compare(text)
        except cst.ParserSyntaxError:
            continue
        assert differences == [], label
        answered += count
    assert answered > 1000  # the imports answer most questions, or the model has stopped helping


def test_common_questions_are_answered_without_scope_analysis():
    text = textwrap.dedent(
        """
        import os
        from torch._export import aot_compile

        def run(model, inputs):
            os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
            return aot_compile(model, inputs)
        """
    )
    module = cst.parse_module(text)
    names = QualifiedNames(MetadataWrapper(module, unsafe_skip_copy=True), text)
    function = module.body[2]
    assign, returned = function.body.body
    environ = assign.body[0].targets[0].target.value
    call = returned.body[0].value
    assert names(environ) == {"os.environ"}
    assert names(call.func) == {"torch._export.aot_compile"}
    assert names._scopes is None  # libcst's scope analysis never ran


def test_a_parameter_asks_libcst():
    text = "def run(model):\n    return model\n"
    module = cst.parse_module(text)
    names = QualifiedNames(MetadataWrapper(module, unsafe_skip_copy=True), text)
    returned = module.body[0].body.body[0].body[0].value
    assert names._from_imports(returned) is None
    assert names(returned) == {"run.<locals>.model"}


def test_defs_at_any_depth_may_be_the_function_a_name_reads():
    text = "class C:\n    def method(self):\n        async def inner():\n            pass\nmodel = C()\n"
    module = cst.parse_module(text)
    names = QualifiedNames(MetadataWrapper(module, unsafe_skip_copy=True), text)
    assert names.may_be_function("method") and names.may_be_function("inner")
    assert not names.may_be_function("model") and not names.may_be_function("C")


def test_a_function_importing_torch_again_needs_no_scope_analysis():
    text = "import torch\n\ndef f(model):\n    import torch\n    return torch.compile(model)\n"
    module = cst.parse_module(text)
    names = QualifiedNames(MetadataWrapper(module, unsafe_skip_copy=True), text)
    call = module.body[1].body.body[1].body[0].value
    assert names(call.func) == {"torch.compile"}
    assert names._scopes is None


def test_only_an_import_renames_a_name():
    text = "from torch._export import aot_compile as build\nwith open('x') as f:\n    build(f)\n"
    module = cst.parse_module(text)
    names = QualifiedNames(MetadataWrapper(module, unsafe_skip_copy=True), text)
    build, f = cst.Name("build"), cst.Name("f")
    assert names.may_name(build, {"aot_compile"})  # renamed by its import
    assert not names.may_name(f, {"aot_compile"})  # a `with ... as` binds no import
    starred = "from os import *\nwith open('x') as f:\n    pass\n"
    module = cst.parse_module(starred)
    names = QualifiedNames(MetadataWrapper(module, unsafe_skip_copy=True), starred)
    assert names.may_name(f, {"aot_compile"})  # bindings unknown: any `as` counts
