"""AOTI003 on the forms a path, a program and a config dict are written in: each reported where its call fails, or
left alone where the value is not certain. Read from ``ast`` and the semantic model alone (``AstRule``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aoti_lint.read.source import SourceFile
from aoti_lint.rules import AotiApiMisuse
from aoti_lint.run.engine import check_source
from aoti_lint.run.file_context import FileContext

HEAD = "import functools\nimport os\nfrom pathlib import Path\n\nimport torch\n"
COMPILE = "torch._inductor.aoti_compile_and_package"
LOAD = "torch._inductor.aoti_load_package"

# (code after HEAD, [(row, column, what the message says)])
FORMS = [
    (f"{COMPILE}(lambda x: x)\n", [(6, 42, "not a lambda")]),
    (f"{COMPILE}(functools.partial(f, 1))\n", [(6, 42, "not a `functools.partial`")]),
    (f"class M(torch.nn.Module):\n    pass\n{COMPILE}(M())\n", [(8, 42, "not an `nn.Module`")]),
    (f"{COMPILE}(exported_program=torch.nn.Linear(2, 2))\n", [(6, 59, "not an `nn.Module`")]),
    (f"m = torch.nn.Linear(2, 2).eval().cuda()\n{COMPILE}(m)\n", [(7, 42, "not an `nn.Module`")]),
    (f"{COMPILE}(ep, package_path=Path(d) / 'x.so')\n", [(6, 69, "got `x.so`")]),
    (f"{COMPILE}(ep, package_path=os.path.join(d, 'x.zip'))\n", [(6, 75, "got `x.zip`")]),
    (f"{COMPILE}(ep, package_path=('x' '.so'))\n", [(6, 60, "got `x.so`")]),
    (f"{LOAD}(Path('a').with_suffix('.so'))\n", [(6, 35, "not a bare `.so`")]),
    (f"{LOAD}(str(Path(d) / 'a.so'))\n", [(6, 35, "not a bare `.so` (`a.so`)")]),
    (f"{LOAD}(os.fspath(d + '/a.so'))\n", [(6, 35, "not a bare `.so`")]),
    (f"{LOAD}(path='a.so')\n", [(6, 40, "not a bare `.so`")]),
    (f"{LOAD}(f'{{d}}/x.so', **kw)\n", [(6, 35, "not a bare `.so`")]),
    (f"{LOAD}('a.so', map_location='cpu')\n", [(6, 35, "not a bare `.so`"), (6, 43, "pass `device_index=N`")]),
    (
        "torch._inductor.package.load_package('a.so', model_name='x', device='cuda')\n",
        [(6, 38, "`load_package`"), (6, 62, "no `device=`")],
    ),
    (f"def f():\n    p = 'x.so'\n    return {LOAD}(p)\n", [(8, 46, "not a bare `.so`")]),
    (f"p = 'x.so'\ndef f():\n    return {LOAD}(p)\n", [(8, 46, "not a bare `.so`")]),
    (f"P = {COMPILE}(ep)\ntorch._export.aot_load(P, 'cpu')\n", [(7, 24, "cannot read a `.pt2`")]),
    ("torch._export.aot_load(so_path='m.pt2', device='cpu')\n", [(6, 32, "cannot read a `.pt2`")]),
    (
        "opts = {'aot_inductor.output_path': 'x', 'aot_inductor.debug_intermediate_value_printer': 0x2}\n"
        f"{COMPILE}(ep, inductor_configs=opts)\n",
        [(6, 9, "refused by `aoti_compile_and_package`"), (6, 91, 'a string such as "0x2"')],
    ),
    (
        "torch.compile(m, options={'aot_inductor.debug_intermediate_value_printer': 2,"
        " 'aot_inductor.output_path': 1})\n",
        [(6, 76, 'a string such as "2"')],  # the output path is refused by the new compile alone
    ),
    # Not certain, or not failing: silent.
    (f"{LOAD}(*a)\n", []),
    (f"p = 'x.so'\np = 'y.pt2'\n{LOAD}(p)\n", []),
    (f"{LOAD}('x.so' if a else 'y.so')\n", []),
    (f"{LOAD}(b'x.so')\n", []),
    ("P = f'{d}/m.so'\ntorch._export.aot_load(P, 'cpu')\n", []),
    ("torch.compile(m, options={'aot_inductor.debug_intermediate_value_printer': True})\n", []),
    (f"{LOAD}('m.pt2')(x, device='cuda')\n", []),
]


def _findings(text: str) -> list[tuple[int, int, str]]:
    source = SourceFile(Path("m.py"), "m.py", "python", text.encode())
    return [
        (f.start.row, f.start.column, f.message)
        for f in check_source(source, FileContext.of([AotiApiMisuse]), build_edits=False).findings
    ]


@pytest.mark.parametrize(("code", "expected"), FORMS, ids=[str(i) for i in range(len(FORMS))])
def test_each_form_is_reported_where_its_call_fails(code, expected):
    found = _findings(HEAD + code)
    assert [(row, column) for row, column, _ in found] == [(row, column) for row, column, _ in expected]
    for (_, _, message), (_, _, what) in zip(found, expected, strict=True):
        assert what in message


def test_torch_s_own_call_of_the_compile_is_read_without_libcst(monkeypatch):
    """torch's modules that define the API call it; nothing there fails, and nothing parses them with libcst."""
    from aoti_lint.fixes import parse

    text = (
        "import torch\n\n\ndef aot_compile(f, args, kwargs=None, *, options=None):\n"
        "    aot_compile_warning()\n"
        "    gm = export(f, args, kwargs)\n"
        "    return torch._inductor.aot_compile(gm, args, kwargs, options=options)\n"
    )
    monkeypatch.setattr(parse, "parse_module", lambda *_: pytest.fail("parsed with libcst"))
    assert _findings(text) == []
