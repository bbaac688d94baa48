"""AOTI003 read from ``ast`` (``AotiApiMisuse.check_ast``): where it answers, it answers as libcst's traversal does.

It answers only with no findings, where no call of the API can be reported (torch's own modules that define the
API call it so); any other file is libcst's. Compared on every fixture and rule example and on generated modules.
"""

from __future__ import annotations

import random
from pathlib import Path

from aoti_lint.model.name_index import code_index
from aoti_lint.rules import AotiApiMisuse
from tests.helpers import lint_text
from tests.test_ast_flow import FIXTURE_TEXTS

IMPORTS = [
    "import torch\n",
    "import os\nimport torch\n",
    "from torch._inductor import aoti_load_package, aoti_compile_and_package\n",
    "from torch._inductor import aoti_load_package as load_package\n",
    "from torch._inductor.package import load_package\n",
    "from torch._inductor.package import load_package as open_package\n",
    "from torch._export import aot_load\nimport torch\n",
    "import torch._inductor as ind\n",
]
LOADERS = ["torch._inductor.aoti_load_package", "load_package", "open_package", "ind.aoti_load_package"]
LOADERS += ["torch._inductor.package.load_package", "aoti_load_package", "self.load_package", "loaders[0]"]
PATHS = ['"m.pt2"', '"m.so"', "path", 'os.path.join(d, "m.so")', 'f"{d}/m.so"', "MODEL", "p", '"m" ".so"']
KEYWORDS = ["", ", device_index=1", ', device="cuda"', ", **kw", ", run_single_threaded=True", ", model_name='x'"]
CONFIG_CALLS = [
    'torch.compile(model, options={"aot_inductor.debug_intermediate_value_printer": 3})',
    'torch.compile(model, options={"max_autotune": True})',
    "torch.compile(model, options=opts)",
    'torch._inductor.aot_compile(gm, args, options={"aot_inductor.output_path": "m.so"})',
    "torch._inductor.aot_compile(gm, args, kwargs, options=options)",
    'torch._inductor.aoti_compile_and_package(ep, package_path="m.pt2")',
    'aot_load("m.pt2", "cpu")',
    "aot_compile_warning()",
]
EXTRAS = ["", "", 'MODEL = "m.so"\n', 'd = "out"\n', 'SUFFIX = ".so"\n', 'opts = {"aot_inductor.output_path": "x"}\n']
EXTRAS += ["def f(p):\n    from torch._inductor.package import load_package\n    return load_package(p)\n"]
# Strings naming a `.so` that no path the rule follows holds: a comparison's operand, a statement of its own.
EXTRAS += ['def native(f):\n    return os.path.splitext(f)[1] == ".so"\n', '"""Reads m.so"""\n', "x = '.so' != s\n"]


def _module(rng: random.Random) -> str:
    lines = [rng.choice(IMPORTS), rng.choice(EXTRAS), "\n\ndef run(model, gm, ep, args, kwargs, path, p, kw, d):\n"]
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.6:
            call = f"{rng.choice(LOADERS)}({rng.choice(PATHS)}{rng.choice(KEYWORDS)})"
        else:
            call = rng.choice(CONFIG_CALLS)
        lines.append(f"    x = {call}\n")
    lines.append("    return x\n")
    return "".join(lines)


def _agrees(text: str) -> bool:
    """Whether the ast reading answered; asserts that it answers as libcst's traversal does."""
    index = code_index(text)
    answer = AotiApiMisuse.check_ast(index, "m.py") if index is not None and index.tree is not None else None
    if answer is None:
        return False
    full = [f for f in lint_text(text, "m.py", prefilter=False).findings if f.code == "AOTI003"]
    assert answer == [] and full == [], text
    return True


def test_the_readings_agree_on_every_fixture_and_example():
    answered = sum(_agrees(text) for name, text in FIXTURE_TEXTS if Path(name).suffix in (".py", ""))
    assert answered >= 10, answered


def test_the_readings_agree_on_generated_modules():
    rng = random.Random(3)
    answered = 0
    for _ in range(400):
        answered += _agrees(_module(rng))
    assert 60 < answered < 360, f"the ast reading answered {answered} of 400: the sweep misses one side"


def test_torch_s_own_call_of_the_compile_is_read_from_ast():
    text = (
        "import torch\n\n\ndef aot_compile(f, args, kwargs=None, *, options=None):\n"
        "    aot_compile_warning()\n"
        "    gm = export(f, args, kwargs)\n"
        "    return torch._inductor.aot_compile(gm, args, kwargs, options=options)\n"
    )
    assert _agrees(text)
