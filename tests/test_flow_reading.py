"""AOTI001/AOTI002 and the device-flow summary, read from ``ast`` in one reading (``rules.module_flow``): a run that
builds no fix edits parses nothing with libcst, and gives what a run that builds them gives (findings, fixes'
verdicts, the summary and the noqa comments the project pass reads); every fix the check offers, the codemod builds.
On every fixture and rule example, and on generated modules."""

from __future__ import annotations

import itertools
import random
import subprocess
import sys
from pathlib import Path

import pytest

from aoti_lint.codemods.migration_plan import PLACED_ELSEWHERE
from aoti_lint.fixes import parse
from aoti_lint.flows.migration_verdicts import CANNOT_WRITE
from aoti_lint.read.source import SourceFile
from aoti_lint.rules import ALL_RULES, DeprecatedAotCompile, DeprecatedAotLoad
from aoti_lint.run.engine import check_source
from aoti_lint.run.file_context import FileContext
from aoti_lint.settings.target_torch import parse_target_torch
from benchmarks.run import AOTI_FORMS, PLAIN
from tests.conftest import FIXTURES, REPO

MIGRATION_RULES = [DeprecatedAotCompile, DeprecatedAotLoad]
CONTEXTS = [
    FileContext.of(ALL_RULES),
    FileContext.of(MIGRATION_RULES),
    FileContext.of(ALL_RULES, target_torch=parse_target_torch("2.5")),
    FileContext.of(ALL_RULES, target_torch=parse_target_torch("2.8")),
]


def source_of(text: str, name: str = "m.py") -> SourceFile:
    return SourceFile(Path(name), name, "python", text.encode())


def shown(result) -> tuple:
    """All a check gives the report and the project pass, as comparable data."""
    findings = sorted(
        (
            f.code,
            f.message,
            f.start.row,
            f.start.column,
            f.end.row,
            f.end.column,
            f.noqa_row,
            None if f.fix is None else (f.fix.applicability, f.fix.message, f.fix.has_edits),
        )
        for f in result.findings
    )
    project = None
    if result.project is not None:
        noqa = result.project.suppressions
        project = (
            result.project.summaries,
            result.project.codes,
            (noqa.lines, noqa.file_all, noqa.file_codes),
        )
    return findings, project, sorted(error.message for error in result.errors)


def reads_alike(text: str, context: FileContext, name: str = "m.py") -> None:
    """Asserts that a run that builds the fixes' edits reports what one that does not reports, that the reading
    raised nothing, and that the codemod builds every fix the check offers."""
    checked = check_source(source_of(text, name), context, build_edits=False)
    built = check_source(source_of(text, name), context, build_edits=True)
    assert not checked.errors and not built.errors, (text, checked.errors, built.errors)
    messages = [f.fix.message for f in built.findings if f.fix is not None]
    assert not any(CANNOT_WRITE in message or PLACED_ELSEWHERE in message for message in messages), text
    if any("(unavailable: " in message for message in messages):
        # A text libcst cannot read or rewrite: the same findings; only the run that builds the edits learns the
        # fix's fate.
        assert [f[:-1] for f in shown(checked)[0]] == [f[:-1] for f in shown(built)[0]], text
        assert shown(checked)[1:] == shown(built)[1:], text
    else:
        assert shown(checked) == shown(built), text


def _fixture_texts() -> list[tuple[str, str]]:
    found = []
    for path in sorted([*FIXTURES.rglob("*.py"), *(REPO / "examples").rglob("*.py")]):
        try:
            found.append((str(path.relative_to(REPO)), path.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, OSError):
            continue
    for rule in ALL_RULES:
        for index, example in enumerate([*rule.VALID, *rule.INVALID]):
            if example.filename.endswith(".py"):
                found.append((f"{rule.code}-example-{index}", example.source))
    return found


FIXTURE_TEXTS = _fixture_texts()
# The file the benchmark planted until it planted one finding of each kind (db16daf): a bare compile.
PLANTED = "import torch\n\nso = torch._export.aot_compile(model, (x,))\n"
BENCHMARK_FORMS = [PLAIN.format(doc="x", cls="Block", func="run", width=64) + "\n\n" + form for form in AOTI_FORMS]


def test_every_fixture_and_example_reads_alike_whatever_the_run_builds():
    read = 0
    for name, text in FIXTURE_TEXTS:
        # What the reading is asked about: the deprecated calls, and the summary of a file with an AOTI name.
        if not any(token in text for token in ("aot_compile", "aot_load", "load_package", ".pt2")):
            continue
        for context in CONTEXTS:
            reads_alike(text, context, Path(name).name if name.endswith(".py") else "m.py")
            read += 1
    assert read >= 400, f"{read} readings: the test does not reach the fixtures"


@pytest.fixture
def parsed(monkeypatch) -> list[str]:
    """The files parsed with libcst while the test runs."""
    files: list[str] = []
    original = parse.parse_module
    monkeypatch.setattr(parse, "parse_module", lambda src, txt: files.append(src.display_path) or original(src, txt))
    return files


@pytest.mark.parametrize("text", [*BENCHMARK_FORMS, PLANTED], ids=["form0", "form1", "form2", "planted"])
def test_a_deploy_helper_is_read_without_libcst(text, parsed):
    result = check_source(source_of(text), CONTEXTS[0], build_edits=False)
    assert {f.code for f in result.findings} >= {"AOTI001"} and result.project is not None
    assert not parsed, "a run that builds no edits parsed with libcst"
    for context in CONTEXTS:
        reads_alike(text, context)


# Modules that call `torch._inductor.aot_compile`, as torch's own export helpers do: read from ast (torch's sources
# then need no libcst), a deprecated load of what it writes too.
INDUCTOR_COMPILES = [
    """import torch


def package(self, standalone=False):
    options = {"aot_inductor.package": True, "aot_inductor.package_constants_in_so": standalone}
    for name, ep in self._method_overloads:
        options["aot_inductor.model_name_for_generated_files"] = name
        files = torch._inductor.aot_compile(
            ep.module(), ep.example_inputs[0], kwargs=ep.example_inputs[1], options=options
        )
    return files
""",
    """import torch
from torch.utils import _pytree as pytree


def lower(exported_program):
    args, kwargs = exported_program.example_inputs
    flat_inputs, _ = pytree.tree_flatten((args, kwargs))
    return torch._inductor.aot_compile(
        exported_program.module(), tuple(flat_inputs), options={"aot_inductor.package": True}
    )
""",
    """import torch


def build(model, x):
    options = {"aot_inductor.output_path": "out/m.pt2"}
    options["k"] = 1
    return torch._inductor.aot_compile(model, (x,), options=options)
""",
    """import torch


def build(model, x):
    return torch._inductor.aot_compile(model, (x,), options={"aot_inductor.output_path": "out/m.pt2"})
""",
    """import torch


def build(model, x):
    return torch._export.aot_load(torch._inductor.aot_compile(model, (x,)), "cpu")
""",
    """import torch


def build(model, x):
    return torch._inductor.aot_compile(model, (torch.randn(2, 3),))
""",
]


@pytest.mark.parametrize("index", range(len(INDUCTOR_COMPILES)))
def test_torch_inductor_aot_compile_is_summarised(index):
    for context in CONTEXTS:
        reads_alike(INDUCTOR_COMPILES[index], context)
    result = check_source(source_of(INDUCTOR_COMPILES[index]), CONTEXTS[0], build_edits=False)
    assert result.project is not None and result.project.summaries["device-flow"].compiles


# Pieces of generated modules: how the API is imported and spelled, where the calls stand, what they are given.
IMPORTS = [
    ("import torch\n", "torch._export.aot_compile", "torch._export.aot_load"),
    ("from torch._export import aot_compile, aot_load\n", "aot_compile", "aot_load"),
    ("import torch._export as te\n", "te.aot_compile", "te.aot_load"),
    ("from torch import _export\n", "_export.aot_compile", "_export.aot_load"),
    ("import torch as t\n", "t._export.aot_compile", "t._export.aot_load"),
    ("from torch._export import aot_compile as build, aot_load as open_so\n", "build", "open_so"),
    ("import torch\ntorch = None\n", "torch._export.aot_compile", "torch._export.aot_load"),
    ("import os\nfrom torch._export import aot_compile\nimport torch\n", "aot_compile", "torch._export.aot_load"),
    # The compile torch's own export helpers call, which the device-flow rules summarise too.
    ("import torch\n", "torch._inductor.aot_compile", "torch._export.aot_load"),
    ("from torch._inductor import aot_compile\nimport torch\n", "aot_compile", "torch._export.aot_load"),
]
ARGS = ["(x,)", "(x, y)", "[x]", "()", "args", "(1, 2)", "(x,), {}", "(x,), {'k': y}", "*pair", "tuple(x)"]
ARGS += ["tuple((x, y))", "list([x])", "tuple(*pair)", "tuple(x, y)", "tuple(torch.randn(2))"]
KEYWORDS = [
    "",
    ", options={}",
    ", options={'max_autotune': True}",
    ", options={**base}",
    ", options={key: 1}",
    ", options=opts",
    ", options=dict(a=1)",
    ", dynamic_shapes={'x': {0: batch}}",
    ", dynamic_shapes=None",
    ", disable_constraint_solver=True",
    ", disable_constraint_solver=False",
    ", same_signature=False",
    ", remove_runtime_assertions=True",
    ", bogus=1",
    # An output path the fix makes the package path: absolute or not, written out or joined, read elsewhere or not.
    ", options={'aot_inductor.output_path': '/srv/m.so'}",
    ", options={'aot_inductor.output_path': 'm.so', 'max_autotune': True}",
    ", options={'aot_inductor.output_path': os.path.join(os.getcwd(), 'm.so')}",
    ", options={'aot_inductor.output_path': os.path.join(root, 'm.so'), 'aot_inductor.package': False}",
    ", options={'aot_inductor.output_path': '/srv/' 'm.so', **base}",
    ", options={'aot_inductor.output_path': SO_PATH}",
    ", options={'aot_inductor.package': flag, 'aot_inductor.output_path': '/srv/m.so'}",
    # One the fix cannot rewrite: it blocks the fix of the file alone, not the project plan's.
    ", options={'aot_inductor.output_path': path}",
    ", options={'aot_inductor.output_path': os.path.join(root, name)}",
]
MODELS = ["model", "lambda z: z", "Net()", "ep.module()", "net", "functools.partial(f, 1)", "m"]
DEVICES = ["'cpu'", "'cuda'", "'cuda:0'", "'cuda:1'", "'mps'", "'cuda:x'", "device", "dev.kind", "f'cuda:{rank}'"]
DEVICES += ["torch.device('cuda', 1)", "'cuda' if gpu else 'cpu'", "pick()", "(yield)", "x := 'cpu'"]
DEVICES += ["lambda: (yield)"]
LOAD_PATHS = ["so", "path", "'model.pt2'", "other", "compiled", "'model.so'", "os.path.join(root, 'm.so')"]
LOAD_PATHS += ["Path(root) / 'm.so'", "SO_PATH", "'a' 'b.so'", "('m.so')", "'m.s' + 'o'", "r'/srv/m.so'"]
LOAD_PATHS += ["f'{root}.so'", "os.path.join(root, name='m.so')", "str(Path('m.so'))", "'m.so '"]
LOAD_PATHS += ["'''m.so'''", "cfg.SO", "'/srv/m.so'", "'m.so'"]
CALL_ARGUMENTS = ["x", "x, 1", "*x", "**x", "torch.randn(2, 3)", "x.cuda()", "[x, y]", "x=x", "x.eval()", "(x, (1, 2))"]


# Strings naming a `.so`, and f-strings: read from ast but where an f-string's text names one (libcst reads it as
# written), and an f-string's call is of an attribute whose value no name or position tells.
SO_STRINGS = [
    "def native(f):\n    return os.path.splitext(f)[1] == '.so'\n",
    '"""Builds m.so"""\n',
    "def odd(f):\n    return f == 'lib' 'm.so' or f == 'm.s\\x6f'\n",
    "def kinds(f):\n    return f.endswith('.so')\n",
    "SUFFIX = '.so'\n",
    "def show(opts):\n    return f'{opts.keys()} {opts.so}'\n",
    "def named(f):\n    return f'{f}.so' == f\n",
]


def _so_strings(rng: random.Random) -> str:
    """One of ``SO_STRINGS`` in a third of the modules: most would send a module with deprecated calls to libcst."""
    return rng.choice(SO_STRINGS) if rng.random() < 0.35 else ""


def _module(rng: random.Random) -> str:
    header, compile_name, load_name = rng.choice(IMPORTS)
    model, args, keywords = rng.choice(MODELS), rng.choice(ARGS), rng.choice(KEYWORDS)
    device = rng.choice(DEVICES)
    compile_call = f"{compile_name}({model}, {args}{keywords})"
    shape = rng.randrange(15)
    noqa = rng.choice(["", "", "  # noqa", "  # noqa: AOTI001", "  # noqa: AOTI002"])
    if shape == 0:
        body = f"def build(model, x, y=None, *pair, net=2, **k):\n    so = {compile_call}{noqa}\n"
        body += f"    return {load_name}(so, {device})\n"
    elif shape == 1:
        body = f"def build(model, x, path):\n    {compile_call}\n"
        body += f"    return {load_name}({rng.choice(LOAD_PATHS)}, {device})\n"
    elif shape == 2:
        body = f"so = {compile_call}\nrunner = {load_name}(so, {device})\n"
    elif shape == 3:
        body = f"def build(model, x):\n    return {load_name}({compile_call}, {device}){noqa}\n"
    elif shape == 4:
        body = f"def build(model, x):\n    return {compile_call}\n\n\ndef serve(path):\n"
        body += f"    return {load_name}(path, {device})\n"
    elif shape == 5:
        body = f"def build(model, x):\n    so = {compile_call}\n    keep(so)\n    {load_name}(so, {device})\n"
    elif shape == 6:
        body = f"fn = {compile_name}\nloader = {load_name}\n\n\ndef go(model, x):\n    return fn(model, x)\n"
    elif shape == 7:
        body = f"class Exporter:\n    def build(self, model, x):\n        so = {compile_call}\n"
        body += f"        return {load_name}(so, {device})\n"
    elif shape == 9:
        body = f"def build(model, x):\n    so = {compile_call}\n    runner = {load_name}(so, {device})\n"
        body += f"    return runner({rng.choice(CALL_ARGUMENTS)})\n"
    elif shape == 10:
        body = f"class Server:\n    def __init__(self, so):\n        self.model = {load_name}(so, {device})\n\n"
        body += f"    def __call__(self, x):\n        return self.model({rng.choice(CALL_ARGUMENTS)})\n"
    elif shape == 11:
        body = f"def build(model, x, pair):\n    return {compile_call}\n"
    elif shape == 12:
        options = rng.choice(["{'aot_inductor.package': True, 'flag': standalone}", "{**base}", "dict(a=1)"])
        options = rng.choice([options, "{'aot_inductor.output_path': 'out/m.pt2'}"])
        # Each write to the dict tells its keys, or leaves them unknown (the plan then reads none).
        write = rng.choice(["opts['k'] = standalone", "opts.update(max_autotune=True)", "opts.update({'a': 1})"])
        write = rng.choice([write, "opts.update(**more)", "log(opts)", "update = opts.update", "opts[key] = 1"])
        write = rng.choice([write, "opts.update({'aot_inductor.output_path': 'm.so'})", "x[opts] = 1"])
        body = f"def build(model, x, pair, standalone=False):\n    opts = {options}\n    {write}\n"
        body += f"    return {compile_name}({model}, {args}, options=opts)\n"
    elif shape in (13, 14):
        # A parameter's default is its value where every call of the function in the module leaves it so.
        default = rng.choice(["'cpu'", "'cuda:1'", "None", "dev", "'cuda'"])
        given = rng.choice(["", ", 'cuda'", ", device='cpu'", ", *rest", ", n=3", ", **kw", ", 'cpu', 3"])
        body = f"def build(model, x, device={default}, n=2):\n    so = {compile_call}\n"
        body += f"    return {load_name}(so, device)\n\n\n"
        body += f"runner = build(m, t{given})\n" if shape == 13 else f"def main():\n    return build(m, t{given})\n"
        body += rng.choice(["", "other = build(m, t)\n", "handle = build\n", "@wrap\ndef later():\n    build(m, t)\n"])
    else:
        body = f"def build(model, x):\n    so: str = {compile_call}\n    print(so)\n"
        body += f"    return {load_name}(so, {device})\n"
    extra = rng.choice(["", "", "BATCH = 8\n", "PATH = 'out/model.pt2'\n", "log = logging.getLogger(__name__)\n"])
    extra += rng.choice(["", "SO_PATH = 'out/m.so'\n", "SO_PATH = os.path.join('out', 'm.so')\n"])
    extra += rng.choice(["", "", "SO_PATH = ('m.so')\n"])
    extra += rng.choice(["", "", "root = '/srv'\n", "keep('m.so')\n", "shutil.copy(src, dst='out/m.so')\n"])
    extra += rng.choice(["", "", "def model():\n    pass\n", "compiled = 1\n", "global_name = torch\n"])
    extra += rng.choice(["", "", "from torch._inductor import config as inductor_config\n", "import numpy as np\n"])
    return f"{header}{extra}\n\n{body}\n\n{_so_strings(rng)}"


def test_a_run_of_deploy_helpers_imports_no_libcst(tmp_path):
    for index, form in enumerate(itertools.islice(itertools.cycle(BENCHMARK_FORMS), 6)):
        (tmp_path / f"m{index}.py").write_text(form)
    code = (
        "import sys\nfrom aoti_lint.cli import main\n"
        "rc = main(['--quiet', '--no-cache', '--jobs', '1', '.'])\n"
        "assert 'libcst' not in sys.modules, 'libcst imported'\n"
        "print(rc)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(REPO)}
    )
    assert result.stdout.strip().endswith("1"), result.stderr


# Modules that load packages with the new API, as a deploy helper does once migrated: read from ast where every load's
# path and device index are read as libcst reads them, and no deprecated call shares the module.
PACKAGE_IMPORTS = [
    ("import torch\n", "torch._inductor.aoti_load_package"),
    ("from torch._inductor import aoti_load_package\n", "aoti_load_package"),
    ("from torch._inductor import aoti_load_package as load\n", "load"),
    ("import torch._inductor as ti\n", "ti.aoti_load_package"),
    ("from torch._inductor.package import load_package\n", "load_package"),
    ("from torch._inductor.package.package import load_package\n", "load_package"),
    ("import torch\nfrom torch._inductor import package\n", "package.load_package"),
    ("import torch\n", "torch._inductor.package.load_package"),
    ("from torch._inductor import aoti_load_package\naoti_load_package = None\n", "aoti_load_package"),
    ("from somewhere import aoti_load_package\n", "aoti_load_package"),
]
PACKAGE_PATHS = ["'model.pt2'", "'out/../model.pt2'", "path", "PATH", "cfg.MODEL", "MODEL", "f'{root}/m.pt2'"]
PACKAGE_PATHS += ["os.path.join(root, 'm.pt2')", "'a' + '.pt2'", "''", "paths[0]", "self.path", "pick()"]
DEVICE_INDICES = ["", ", device_index=1", ", device_index=-1", ", device_index=index", ", device_index=dev.index"]
DEVICE_INDICES += [", device_index=rank", ", device_index=True", ", False, 1", ", 'model', False, 1, 0"]
DEVICE_INDICES += [", device_index='1'", ", **kw", ", run_single_threaded=True"]


# Where the loads stand: `{load}` the call, `{argument}` what a loaded model is called with, `{imports}` the import
# statements, here inside the function that loads, as torch's own loader imports `load_package` (the module then
# imports `os` alone).
PACKAGE_SHAPES = [
    "def serve(x, path='m.pt2', index=0, root='.'):\n    model = {load}\n    return model({argument})\n",
    "model = {load}\n\n\ndef predict(x):\n    return model({argument})\n",
    "class Server:\n    def __init__(self, path, rank=1):\n        self.path = path\n        self.model = {load}\n\n"
    "    def __call__(self, x):\n        return self.model(x)\n",
    "def load(path, index=-1, root='.'):\n    return {load}\n\n\nrunner = load('a.pt2')\n",
    "def serve(path, rank=0, root='.'):\n    {imports}\n    return {load}\n",
    "def both(path, index=1, root='.'):\n    first = {load}\n    second = {load}\n    return first(1), second\n",
    "def mixed(model, x, path, root='.'):\n    {load}\n    return torch._export.aot_load(path, 'cpu')\n",
]


def _package_module(rng: random.Random) -> str:
    header, load_name = rng.choice(PACKAGE_IMPORTS)
    load = f"{load_name}({rng.choice(PACKAGE_PATHS)}{rng.choice(DEVICE_INDICES)})"
    shape = rng.choice(PACKAGE_SHAPES)
    imports = "; ".join(header.strip().splitlines())
    body = shape.format(load=load, argument=rng.choice(CALL_ARGUMENTS), imports=imports)
    if "{imports}" in shape:
        header = "import os\n"
    extra = rng.choice(["", "", "PATH = 'out/model.pt2'\n", "MODEL = 'm.pt2'\n", "from config import MODEL\n"])
    extra += rng.choice(["", "", "import os\n", "paths = ['a.pt2']\n", "import config as cfg\n"])
    return f"{header}{extra}\n\n{body}\n\n{_so_strings(rng)}"


# Modules migrated to the new API, as they live on: an export's example inputs built by tensor factories, devices,
# `dynamic_shapes`, package paths built from `__file__`, `pathlib` and f-strings, loaded models called with tensors.
TENSORS = ["torch.randn(2, 3)", "torch.randn(2, 3, device='cuda')", "torch.zeros((4, 8))", "torch.ones(2, 3).cuda()"]
TENSORS += ["torch.tensor([[1.0, 2.0]])", "torch.randn(2, 3).to('cuda:1')", "torch.empty(5, device=dev)", "make()"]
TENSORS += ["torch.randn(2, 3).to(torch.float16)", "torch.zeros_like(base)", "torch.arange(6)", "torch.full((2,), 1)"]
TENSORS += ["torch.rand(*shape)", "torch.randn(size=(3, 3))", "torch.randint(0, 5, (2, 2))", "base.to(device)"]
DYNAMIC = ["", ", dynamic_shapes=None", ", dynamic_shapes=({0: Dim('batch', min=1, max=64)},)"]
DYNAMIC += [", dynamic_shapes={'x': {0: Dim.AUTO}}", ", dynamic_shapes=[(batch, None)]", ", strict=False"]
PACKAGES = ["'model.pt2'", "PACKAGE", "os.path.join(HERE, 'model.pt2')", "str(ROOT / 'model.pt2')", "f'{ROOT}/m.pt2'"]
PACKAGES += ["Path(__file__).parent / 'model.pt2'", "f'{name}.pt2'", "out_dir + '/m.pt2'", "paths()[0]"]
LOAD_INDICES = ["", ", device_index=0", ", device_index=torch.device('cuda', 1).index", ", device_index=dev.index"]
LOAD_INDICES += [", device_index=torch.device('cuda:1').index", ", 1"]
DEVICE_BLOCKS = ["", "with torch.device('cuda'):\n    warm = torch.randn(2, 3)\n", "with ctx:\n    run()\n"]
DEVICE_BLOCKS += ["torch.set_default_device('cuda')\n", "with torch.device(dev):\n    helper()\n"]


def _migrated_module(rng: random.Random) -> str:
    header = rng.choice(["import os\nimport torch\n", "import torch\nfrom torch.export import Dim, export\n"])
    header += rng.choice(["", "from pathlib import Path\n", "from torch._inductor import aoti_load_package\n"])
    constants = "HERE = os.path.dirname(__file__)\nROOT = Path('/srv/models')\nbase = torch.randn(2, 3)\n"
    constants += rng.choice(["PACKAGE = 'out/model.pt2'\n", "PACKAGE = os.path.join('out', 'model.pt2')\n", ""])
    constants += rng.choice(["dev = 'cuda:0'\n", "dev = torch.device('cuda')\n", "", "batch = Dim('batch')\n"])
    helper = rng.choice(["", "def make():\n    return torch.randn(4, 4)\n", "def helper():\n    return make()\n"])
    helper += rng.choice(["", "\n\ndef paths():\n    return ['a.pt2']\n", "def make():\n    return x\n"])
    inputs = ", ".join(rng.choice(TENSORS) for _ in range(rng.randrange(1, 3)))
    program = f"torch.export.export(model, ({inputs},){rng.choice(DYNAMIC)})"
    program = rng.choice([program, f"export(model.to('cuda'), ({inputs},))", "ep", program + ".module()"])
    shape = rng.randrange(5)
    package = rng.choice(PACKAGES)
    load = rng.choice(["torch._inductor.aoti_load_package", "aoti_load_package"])
    call = rng.choice([*TENSORS, "x", "*inputs", "**named", "(x)", "x, y=torch.randn(1)", "[torch.randn(3)]"])
    if shape == 0:
        body = f"def build(model, name='m'):\n    return torch._inductor.aoti_compile_and_package({program}, "
        body += f"package_path={package})\n\n\ndef serve():\n    runner = {load}({package}{rng.choice(LOAD_INDICES)})\n"
        body += f"    return runner({call})\n"
    elif shape == 1:
        body = f"path = torch._inductor.aoti_compile_and_package({program})\nrunner = {load}(path)\n"
        body += f"out = runner({call})\n"
    elif shape == 2:
        body = "class Server:\n    def __init__(self):\n"
        body += f"        self.runner = {load}({package}{rng.choice(LOAD_INDICES)})\n\n"
        body += f"    def __call__(self, x):\n        return self.runner({call})\n"
    elif shape == 3:
        block = "".join(f"    {line}\n" for line in rng.choice(DEVICE_BLOCKS).splitlines())
        body = f"def main(model, out_dir, name='m'):\n{block}"
        body += f"    pt2 = torch._inductor.aoti_compile_and_package({program}, package_path={package})\n"
        body += f"    return {load}(pt2)({call})\n"
    else:
        body = f"{rng.choice(DEVICE_BLOCKS)}\nrunner = {load}({package})\nresult = runner({call})\n"
    return f"{header}{constants}\n\n{helper}\n\n{body}\n{rng.choice(DEVICE_BLOCKS)}"


@pytest.mark.parametrize(
    ("generate", "count", "seed"),
    [
        (_module, 150, 1),
        pytest.param(_module, 4000, 2, marks=pytest.mark.slow),
        (_package_module, 150, 3),
        pytest.param(_package_module, 3000, 4, marks=pytest.mark.slow),
        (_migrated_module, 150, 5),
        pytest.param(_migrated_module, 3000, 6, marks=pytest.mark.slow),
    ],
    ids=["small", "full", "packages-small", "packages-full", "migrated-small", "migrated-full"],
)
def test_generated_modules_read_alike_and_every_offered_fix_is_built(generate, count, seed):
    rng = random.Random(seed)
    for _ in range(count):
        text = generate(rng)
        for context in (CONTEXTS[0], rng.choice(CONTEXTS[1:])):
            reads_alike(text, context)


MIGRATED_SERVER = """import torch


def serve(x, path="model.pt2", device_index=-1):
    model = torch._inductor.aoti_load_package(path, device_index=device_index)
    return model(x)
"""


@pytest.mark.parametrize(
    "extra",
    [
        *SO_STRINGS,
        "class Shown:\n    def show(self):\n        return f'{self.model(1)}'\n",
        "def shown(model):\n    return f'{model.eval()}'\n",
    ],
)
def test_a_server_naming_a_so_is_summarised_with_its_mentions(extra):
    # torch's `aoti_compile_and_package` module tests a file name's suffix against ".so" and loads with a function's
    # own import.
    text = MIGRATED_SERVER + "\n\n" + extra
    reads_alike(text, CONTEXTS[0])
    without_misuse = FileContext.of([rule for rule in ALL_RULES if rule.code != "AOTI003"])
    reads_alike(text, without_misuse)
    result = check_source(source_of(text), without_misuse, build_edits=False)
    assert result.project is not None and [load.api for load in result.project.summaries["device-flow"].loads]


INDUCTOR_LIKE = '''import os


def aoti_load_package(path, device_index=-1):
    """Loads a .pt2 package, never a bare .so"""
    from torch._inductor.package import load_package

    return load_package(path, device_index=device_index)


def libraries(files):
    return [f for f in files if isinstance(f, str) and os.path.splitext(f)[1] == ".so"]
'''


def test_torch_inductors_own_loader_is_read_from_ast():
    # As torch/_inductor/__init__.py: a load by a function's own import, a file name's suffix compared with ".so".
    reads_alike(INDUCTOR_LIKE, CONTEXTS[0])
    result = check_source(source_of(INDUCTOR_LIKE), CONTEXTS[0], build_edits=False)
    summary = result.project.summaries["device-flow"]
    assert [load.api for load in summary.loads] == ["load_package"]
    assert [mention[1:] for mention in summary.so_mentions] == [(5, 5), (12, 82)]


def test_a_migrated_server_is_read_without_libcst(parsed):
    # The migration rules alone want nothing of it; the device-flow rules want its summary.
    result = check_source(source_of(MIGRATED_SERVER), CONTEXTS[0], build_edits=False)
    assert result.project is not None and not result.findings
    (load,) = result.project.summaries["device-flow"].loads
    assert (load.api, load.artifact, load.device_index) == ("aoti_load_package", None, None)
    for context in CONTEXTS:
        reads_alike(MIGRATED_SERVER, context)
    assert not parsed, "a migrated server has no fix to build"


MIGRATED_PIPELINE = """import os

import torch

HERE = os.path.dirname(__file__)
PACKAGE = os.path.join(HERE, "model.pt2")


def build(model):
    example = (torch.randn(8, 16, device="cuda"),)
    program = torch.export.export(model.cuda(), example)
    return torch._inductor.aoti_compile_and_package(program, package_path=PACKAGE)


def serve():
    runner = torch._inductor.aoti_load_package(PACKAGE, device_index=torch.device("cuda", 1).index)
    return runner(torch.randn(8, 16).cuda())
"""


def test_a_migrated_pipeline_is_read_without_libcst(parsed):
    # What a project holds once migrated: an export of tensors a factory makes, a package path built from `__file__`,
    # a load onto a device: its device-flow summary.
    for context in CONTEXTS:
        reads_alike(MIGRATED_PIPELINE, context)
    assert not parsed, "a migrated pipeline has no fix to build"
    result = check_source(source_of(MIGRATED_PIPELINE), CONTEXTS[0], build_edits=False)
    summary = result.project.summaries["device-flow"]
    (compiled,) = summary.compiles
    (loaded,) = summary.loads
    assert (str(compiled.device), compiled.artifact) == ("cuda", loaded.artifact)
    assert compiled.artifact.endswith("/model.pt2") and str(loaded.device) == "cuda:1"
    assert [(argument.device, argument.shape) for argument in summary.calls[0].arguments] == [
        (compiled.device, (8, 16))
    ]
