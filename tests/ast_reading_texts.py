"""Python texts for the differential sweeps of the two readings of AOTI201 (``texts``) and AOTI202
(``config_texts``), ``ast`` and libcst (see ``tests/test_debug_switches.py``): settings of debug variables and
config keys in every import form, receiver, key spelling, value, place, line ending and rebinding the readings
could tell apart. Written as a fuzzer in review; kept so that each new form an ``ast`` reading takes on is swept
too."""

# ruff: noqa: RUF001, RUF005, UP031
from __future__ import annotations

import random

from aoti_lint.knowledge.debug_switches import SWITCHES_BY_CONFIG_KEY, SWITCHES_BY_ENV_VAR

SWITCHES = list(SWITCHES_BY_ENV_VAR)
R = random.Random(0)


def texts(count: int, seed: int) -> list[str]:
    """``count`` generated texts, the same for the same seed."""
    R.seed(seed)
    return [gen() for _ in range(count)]


SIMPLE = [False]
EXTRA_KEYS = [
    lambda n: '"' + n[:3] + "\\\n" + n[3:] + '"',
    lambda n: ' "' + n + '" ',
    lambda n: '\\\n    "' + n + '"',
    lambda n: '# c\n "' + n + '"',
    lambda n: '"\\N{LATIN CAPITAL LETTER ' + n[0] + "}" + n[1:] + '"',
    lambda n: '"\\u%04x' % ord(n[0]) + n[1:] + '"',
    lambda n: "'''" + n + "'''",
]


def key(name):
    k = R.randrange(16) if not SIMPLE[0] or R.random() < 0.3 else 0
    if k < 5:
        return f'"{name}"'
    if k == 5:
        return f"'{name}'"
    if k == 6:
        i = R.randrange(1, len(name))
        return f'"{name[:i]}" "{name[i:]}"'
    if k == 7:
        return f'("{name}")'
    if k == 8:
        return f'b"{name}"'
    if k == 9:
        return f'f"{name}"'
    if k == 10:
        return '"' + name.replace("_", "\\x5f", 1) + '"'
    if k == 11:
        return f'r"{name}"'
    if k == 12:
        return f'u"{name}"'
    if k == 13:
        return f'"""{name}"""'
    if k == 14:
        i = R.randrange(1, len(name))
        return f'("{name[:i]}"\n "{name[i:]}")'
    return R.choice(EXTRA_KEYS)(name)


def value():
    return R.choice(
        [
            '"1"',
            '"1"',
            "'1'",
            '"0"',
            '""',
            '"true"',
            '"+dynamo"',
            '"-dynamo"',
            '"on"',
            '"2"',
            "flag",
            "1",
            "True",
            'f"1"',
            '("1")',
            'u"1"',
            'b"1"',
            '"1" "0"',
            'r"1"',
            '"""1"""',
        ]
    )


RECEIVERS = ["os.environ"] * 4 + [
    "ｏｓ.environ",
    "os.ｅｎｖｉｒｏｎ",
    "(os.environ)",
    "o.environ",
    "environ",
    "e",
    "(os).environ",
    "os.path.environ",
    "x.environ",
    "env",
]


def setting():
    name = R.choice(SWITCHES)
    k, v, r = key(name), value(), R.choice(RECEIVERS)
    form = R.randrange(20) if not SIMPLE[0] or R.random() < 0.3 else R.randrange(11)
    if SIMPLE[0] and R.random() < 0.85:
        r = R.choice(GOOD_RECEIVERS)
    if form < 7:
        return f"{r}[{k}] = {v}"
    if form < 10:
        return f"{r}.setdefault({k}, {v})"
    if form == 10:
        return R.choice(
            [f"({r}.setdefault({k}, {v}))", f"{r}.ｓｅｔｄｅｆａｕｌｔ({k}, {v})", f"await {r}.setdefault({k}, {v})"]
        )
    if form == 11:
        return f"y = {r}.setdefault({k}, {v})"
    if form == 12:
        return f"a = {r}[{k}] = {v}"
    if form == 13:
        return f"{r}[{k}] = {r}[{key(R.choice(SWITCHES))}] = {v}"
    if form == 14:
        return f"{r}[{k}], z = {v}, 2"
    if form == 15:
        return f"{r}[{k}]: str = {v}"
    if form == 16:
        return R.choice(
            [f"{r}.update({k}, {v})", f"{r}.update({{{k}: {v}}})", f"os.putenv({k}, {v})", f"{r}.update({name}={v})"]
        )
    if form == 17:
        return R.choice(
            [
                f"x = {r}.get({k}, {v})",
                f"x = os.getenv({k}, {v})",
                f"x = {r}[{k}]",
                f"print({r}[{k}])",
                f"del {r}[{k}]",
                f"{r}[{k}] += {v}",
            ]
        )
    if form == 18:
        return R.choice(
            [
                f"(w := {r}.setdefault({k}, {v}))",
                f"f = lambda: {r}.setdefault({k}, {v})",
                f"[{r}.setdefault({k}, {v}) for _ in x]",
                f"{r}.setdefault({k}, {v}) or 1",
                f"subprocess.run(c, env={{{k}: {v}}})",
                f"{r}.setdefault({k}, default={v})",
            ]
        )
    return f"{r}[{k}] = {v}  # noqa" + R.choice(["", ": AOTI201", ": AOTI999", ":AOTI201"])


IMPORTS = [
    "import os",
    "import os",
    "import os as o",
    "from os import environ",
    "from os import environ as e",
    "import os.path",
    "import os, sys",
    "import sys as os",
    "from os import *",
    "from os import path as environ",
    "import os.path as os",
    "from . import os",
    "import subprocess",
    "from os import environ, putenv",
]

REBIND = [
    "os = None",
    "environ = {}",
    "def g(os): pass",
    "for os in x: pass",
    "(os := 1)",
    "def g():\n    global os",
    "del os",
    "class A:\n    os = 1",
    "[os for os in x]",
    "match x:\n    case os: pass",
    "match x:\n    case {**environ}: pass",
    "f = lambda os: 0",
    "try:\n    pass\nexcept E as os:\n    pass",
    "with x as os: pass",
    "e = 1",
    "o = 2",
    "import os as environ",
    "def os(): pass",
    "class environ: pass",
    "def g():\n    import os",
    "def g():\n    from os import environ",
    "if TYPE_CHECKING:\n    import os",
    "try:\n    import os\nexcept ImportError:\n    pass",
    "os: int",
    "x = [environ for environ in y]",
    "def g():\n    def h():\n        nonlocal os",
    "async def g():\n    async for os in x: pass",
    "match x:\n    case [*os]: pass",
    "env = os.environ",
    "os.environ = {}",
]

PREFIX0 = [
    "",
    "",
    "",
    'é = "😀"; ',
    'x = """a\nb😀"""; ',
    "x = 1; \t",
    "x = ('😀',\n  2); ",
    'x = "é"; ',
    'x = "😀😀"; ',
    'x = "\t"; ',
    "\t" if False else "",
    'y = "日本"; ',
    "\x0c",
]

PREFIX = PREFIX0


def indent(block, n):
    pad = "\t" * (n // 4) if R.random() < 0.15 else " " * n
    return "\n".join((pad + line) if line else line for line in block.split("\n"))


def place(stmt):
    p = (
        R.randrange(26)
        if not SIMPLE[0] or R.random() < 0.4
        else R.choice([0, 8, 9, 10, 11, 17, 18, 19, 20, 21, 23, 24])
    )
    if p < 8:
        return stmt
    if p == 8:
        return "def f():\n" + indent(stmt, 4)
    if p == 9:
        return "async def f():\n" + indent(stmt, 4)
    if p == 10:
        return "class C:\n" + indent(stmt, 4)
    if p == 11:
        return "def f():\n    def g():\n" + indent(stmt, 8)
    if p == 12:
        return R.choice(["if x:\n", "if debug:\n", "if args.debug_mode:\n"]) + indent(stmt, 4)
    if p == 13:
        return "with x:\n" + indent(stmt, 4)
    if p == 14:
        return "for i in x:\n" + indent(stmt, 4)
    if p == 15:
        return "try:\n" + indent(stmt, 4) + "\nexcept E:\n    pass"
    if p == 16:
        return "while x:\n" + indent(stmt, 4)
    if p == 17 and "\n" not in stmt:
        return "x = 1; " + stmt + R.choice(["", "; y = 2"])
    if p == 18 and "\n" not in stmt:
        return R.choice(["def f(): ", "class C: ", "if x: ", "with x: ", "if debug: "]) + stmt
    if p == 19:
        return "@dec\ndef f():\n" + indent(stmt, 4)
    if p == 20 and "\n" not in stmt and " = " in stmt and "[" in stmt:
        return R.choice(["if debug: pass\n", "if x: pass\nelse:\n    pass\n"]) + stmt
    if p == 21:
        sd = f"os.environ.setdefault({key(R.choice(SWITCHES))}, {value()})"
        return R.choice(
            [f"if {sd}:\n    pass", f"if debug and {sd}:\n    pass"]
            + [
                f"while {sd}:\n    pass",
                f"@{sd}\ndef f(): pass",
                f"def f(a={sd}): pass",
                f"with {sd}: pass",
                f"for q in {sd}: pass",
                f"if x:\n    pass\nelif {sd}:\n    pass",
                f"x = 1 if debug else {sd}",
                f"assert {sd}",
                f"return_ = [{sd}]",
            ]
        )
    if p == 22:
        return "match x:\n    case 1:\n" + indent(stmt, 8)
    if p == 23:
        return "def f():\n    if debug:\n        pass\n" + indent(stmt, 4)
    if p == 24:
        return "class C:\n    def m(self):\n" + indent(stmt, 8)
    return stmt


GOOD = {
    "import os": ["os.environ", "(os).environ"],
    "import os as o": ["o.environ"],
    "from os import environ": ["environ"],
    "from os import environ as e": ["e"],
    "import os.path": ["os.environ"],
    "import os, sys": ["os.environ"],
    "import os\nfrom os import environ": ["os.environ", "environ"],
}
GOOD_RECEIVERS = ["os.environ"]


def gen():
    global GOOD_RECEIVERS
    SIMPLE[0] = R.random() < 0.75
    parts = []
    if SIMPLE[0]:
        imp = R.choice(list(GOOD))
        GOOD_RECEIVERS = GOOD[imp]
        parts.append(imp)
    else:
        for _ in range(R.choice([1, 1, 2])):
            parts.append(R.choice(IMPORTS))
    body = []
    for _ in range(R.randint(1, 3)):
        stmt = place(setting())
        pre = R.choice(PREFIX)
        if (
            pre
            and not (
                stmt.startswith(("if ", "def ", "class ", "async ", "with ", "for ", "try", "while ", "match ", "@"))
            )
        ) or pre == "\x0c":
            stmt = pre + stmt
        body.append(stmt)
    if R.random() < (0.15 if SIMPLE[0] else 0.35):
        body.insert(R.randrange(len(body) + 1), R.choice(REBIND))
    if R.random() < 0.2:  # an import after the use, or inside a function
        if SIMPLE[0] and R.random() < 0.7:
            parts, body = [], body + parts
        else:
            body.append(R.choice(IMPORTS))
    if R.random() < 0.1:
        body.insert(0, '"""doc CUDA_LAUNCH_BLOCKING"""')
    if R.random() < 0.1:
        body.append('x = {"CUDA_LAUNCH_BLOCKING": "1"}')
    lines = parts + [""] + body
    if R.random() < 0.1:
        lines = ["", *lines]
    text = "\n".join(lines) + R.choice(["\n", "\n", ""])
    if R.random() < 0.05:
        text = text.replace("\n", "\n\x0c", 1)
    nl = R.choice(["\n"] * 6 + ["\r\n", "\r"])
    if nl != "\n":
        text = text.replace("\n", nl)
    return text


# AOTI202: assignments to torch._inductor.config keys.

CONFIG_IMPORTS = {  # an import, and the receivers it binds to torch._inductor.config
    "import torch._inductor.config as cfg": ["cfg"],
    "import torch._inductor.config as config": ["config"],
    "from torch._inductor import config": ["config"],
    "from torch._inductor import config as c": ["c"],
    "import torch._inductor.config": ["torch._inductor.config"],
    "import torch": ["torch._inductor.config"],
    "import torch as t": ["t._inductor.config"],
    "from torch import _inductor": ["_inductor.config"],
    "import torch._inductor as ind": ["ind.config"],
    "import torch._inductor.config as cfg, os": ["cfg"],
}
CONFIG_OTHER_IMPORTS = [
    "import torch._dynamo.config as cfg",
    "from torch._inductor import utils as config",
    "from torch._inductor.config import *",
    "from . import config",
    "import other as torch",
    "from torch._inductor.config import aot_inductor",
    "from torch._inductor.config import patch",
    "import torch._inductor.config as \uff43fg",
]
CONFIG_KEYS = [*SWITCHES_BY_CONFIG_KEY, "max_autotune", "aot_inductor.output_path", "debug_dir", "trace"]
CONFIG_VALUES = [
    *["True", "1", '"1"', "2", "0x1", "'yes'", "(True)", '"a" "b"', "True  # on", "(\n    True\n)"],
    *["False", "0", '"0"', "None", "flag", "-1", "1.0", "b'1'", '""', "not False", "f'1'", "...", "1j"],
]
CONFIG_RECEIVERS = [
    "x",
    "self.config",
    "(cfg)",
    "cfg .aot_inductor",
    "cfg.\\\n  debug",
    "\uff43fg",
    "config.aot_inductor",
]
CONFIG_REBIND = [
    "cfg = None",
    "config = {}",
    "def g(cfg): pass",
    "for config in x: pass",
    "def g():\n    global cfg",
    "del config",
    "torch = None",
    "c = 3",
    "import other as cfg",
    "def g():\n    import torch._inductor.config as cfg",
    "try:\n    import torch._inductor.config as cfg\nexcept ImportError:\n    cfg = None",
    "class config: pass",
    "(cfg := 1)",
    "[config for config in y]",
    "if TYPE_CHECKING:\n    import torch._inductor.config as cfg",
]
CONFIG_READERS = [  # a patch or a dict passed to a compile: libcst reads the file
    "config.patch(debug=True)",
    "@cfg.patch(debug=True)\ndef f(): pass",
    "torch.compile(m, options={'debug': True})",
    "opts = {'debug': True}\naoti_compile_and_package(ep, inductor_configs=opts)",
    "with cfg.patch('trace.enabled', True): pass",
    "patch = 1",
    "x = {'debug': True}",
]
CONFIG_PLACES = [
    "{}",
    "{}",
    "{}",
    "def f():\n{4}",
    "async def f():\n{4}",
    "class C:\n{4}",
    "def f():\n    def g():\n{8}",
    "class C:\n    def m(self):\n{8}",
    "@dec\ndef f():\n{4}",
    "if x:\n{4}",
    "if debug:\n{4}",
    "with x:\n{4}",
    "for i in x:\n{4}",
    "try:\n{4}\nexcept E:\n    pass",
    "match x:\n    case 1:\n{8}",
    "def f():\n    if debug:\n        pass\n{4}",
    "x = 1; {}",
    "def f(): {}",
    "if debug: {}",
]


def _config_setting(receivers: list[str]) -> str:
    receiver = R.choice(receivers) if R.random() < 0.75 else R.choice(CONFIG_RECEIVERS)
    target = f"{receiver}.{R.choice(CONFIG_KEYS)}"
    value = R.choice(CONFIG_VALUES)
    form = R.randrange(10)
    if form == 0:
        return f"a = {target} = {value}"
    if form == 1:
        return f"{target} = {target.replace('.', '.aot_inductor.', 1) if R.random() < 0.5 else 'b'} = {value}"
    if form == 2:
        return f"{target} += {value}"
    if form == 3:
        return f"{target}: bool = {value}"
    if form == 4:
        return f"{target} = \\\n    {value}"
    return f"{target} = {value}"


def _config_place(statement: str) -> str:
    place = R.choice(CONFIG_PLACES)
    if "\n" in statement and not place.startswith(
        ("{", "def", "async", "class", "@", "if x:\n", "try", "with", "for", "match")
    ):
        place = "{}"
    for width in (4, 8):
        pad = "\t" * (width // 4) if R.random() < 0.1 else " " * width
        place = place.replace("{%d}" % width, "\n".join(pad + line if line else line for line in statement.split("\n")))
    return place.replace("{}", statement)


def config_text() -> str:
    """One module setting config keys (a few in the forms the ast reading answers, the rest anything else)."""
    imports = [R.choice(list(CONFIG_IMPORTS))]
    receivers = CONFIG_IMPORTS[imports[0]]
    if R.random() < 0.3:
        imports.append(R.choice(CONFIG_OTHER_IMPORTS + list(CONFIG_IMPORTS)))
    body = []
    for _ in range(R.randint(1, 3)):
        statement, prefix = _config_place(_config_setting(receivers)), R.choice(PREFIX0)
        compound = statement.startswith(("if ", "def ", "class ", "async ", "with ", "for ", "try", "match ", "@"))
        body.append(prefix + statement if prefix == "\x0c" or not compound else statement)
    if R.random() < 0.2:
        body.insert(R.randrange(len(body) + 1), R.choice(CONFIG_REBIND))
    if R.random() < 0.15:
        body.append(R.choice(CONFIG_READERS))
    if R.random() < 0.1:
        body.append(R.choice(["# noqa: AOTI202", "x = 1  # noqa"]))
    if R.random() < 0.1:  # the import after the use
        imports, body = [], body + imports
    text = "\n".join([*imports, "", *body]) + R.choice(["\n", "\n", ""])
    newline = R.choice(["\n"] * 6 + ["\r\n", "\r"])
    return text.replace("\n", newline) if newline != "\n" else text


def config_texts(count: int, seed: int) -> list[str]:
    """``count`` generated AOTI202 texts, the same for the same seed."""
    R.seed(seed)
    return [config_text() for _ in range(count)]
