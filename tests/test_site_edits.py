"""``codemods.site_edits``: a flow's fix built call by call must be the fix migrating the whole module gives, edit
for edit (so the JSON and SARIF output are the same too), with and without a project plan; and a module's fixes
must cost work linear in its calls."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from aoti_lint.codemods import site_edits
from aoti_lint.fixes.edits import apply_edits
from aoti_lint.run.lint import lint_paths
from aoti_lint.settings.config import Settings
from aoti_lint.settings.run_options import Execution, FixOptions
from tests.helpers import lint_text

HEADERS = [
    "import torch\nimport torch._export\nfrom torch._export import aot_compile, aot_load\nimport torch._export as te\n",
    "import torch\r\nfrom torch._export import aot_compile, aot_load\r\nimport torch._export as te\r\n",
]

# Function bodies, each one flow or more; `{i}` numbers the function. Indented by one level, re-indented below.
BODIES = [
    'so = torch._export.aot_compile(model, (x,))\nreturn torch._export.aot_load(so, "cpu")\n',
    'return aot_load(aot_compile(model, (x,)), "cuda:1")\n',
    "so = torch._export.aot_compile(\n    model,  # the model\n    (x,),\n"
    '    options={{"aot_inductor.output_path": "out_{i}.so"}},\n)\nrunner = aot_load(so, device="cpu")\n'
    "return runner\n",
    'path = te.aot_compile(model, (x,), options={{}})\nreturn te.aot_load(so_path=path, device="cuda")\n',
    'a = te.aot_compile(model, (x,)); b = te.aot_load(a, "cpu")\nreturn b\n',
    "return torch._export.aot_load(torch._export.aot_compile(model, (x,)), pick_device())\n",
    "so = aot_compile(model, (x,),\n                  dynamic_shapes=None)\n"
    'fn = aot_load(so, \\\n    "cpu")\nreturn fn(x)\n',
    "f = lambda m, y: torch._export.aot_compile(m, (y,))\nreturn f(model, x)\n",
    "if x is not None:\n    with torch.no_grad():\n        so = aot_compile(model, (x,))\n"
    '        return aot_load(so, "cpu")\n',
    'def inner():\n    return te.aot_load(te.aot_compile(model, (x,)), "cpu")\nreturn inner()\n',
    'return torch._export.aot_load("model_{i}.so", "cuda:0")\n',
    "so = torch._export.aot_compile(model, (x,))\nreturn so\n",
]


def generated_module(seed: int, functions: int = 14) -> str:
    rng = random.Random(seed)
    header = rng.choice(HEADERS)
    newline = "\r\n" if "\r\n" in header else "\n"
    indent = rng.choice(["    ", "  ", "\t"])
    parts = [header, "\n"]
    in_class = rng.random() < 0.5
    if in_class:
        parts.append("class Build:\n")
    for index in range(functions):
        body = rng.choice(BODIES).format(i=index)
        prefix = indent * (2 if in_class else 1)
        lines = [prefix + line if line else line for line in body.split("\n")]
        head = indent if in_class else ""
        if rng.random() < 0.2:
            parts.append(f"{head}@staticmethod\n" if in_class else "@functools.cache\n")
        parts.append(f"{head}def build_{index}(model, x):\n" + "\n".join(lines) + "\n")
    return "".join(parts).replace("\n", newline) if newline != "\n" else "".join(parts)


def fix_edits(findings, text: str) -> dict[tuple[str, int, int], tuple]:
    """Each fix's edits, checked to apply."""
    edits = {(f.code, f.start.row, f.start.column): f.fix.edits for f in findings if f.fix is not None and f.fix.edits}
    for found in edits.values():
        apply_edits(text, found)
    return edits


@pytest.fixture
def counted(monkeypatch):
    """How many fixes ``call_edits`` built (not None), with a switch to make it give up on every one."""
    state = {"built": 0, "off": False}
    original = site_edits.call_edits

    def call_edits(plan, targets, text, rewrite):
        if state["off"]:
            return None
        edits = original(plan, targets, text, rewrite)
        state["built"] += edits is not None
        return edits

    monkeypatch.setattr(site_edits, "call_edits", call_edits)
    return state


@pytest.mark.parametrize("seed", range(16))
def test_each_fix_edits_the_text_into_the_whole_module_migration(seed, counted):
    text = generated_module(seed)
    result = lint_text(text, build_edits=True)
    assert not result.errors
    by_calls = fix_edits(result.findings, text)
    assert counted["built"] > 0 and len(by_calls) > 8
    counted["off"] = True
    assert by_calls == fix_edits(lint_text(text, build_edits=True).findings, text)


@pytest.mark.parametrize(
    "text",
    [
        # Found by review: the whole text's diff matched the changed line against a later identical copy (an
        # insertion and a deletion), and took a file of lone CRs for one line (one edit of the whole file).
        "import torch\n"
        + "".join(f"r{i} = torch._export.aot_load('m{i}.pt2', 'cpu')\n" for i in range(7))
        + "r = torch._export.aot_load('a.pt2', 'cpu')\n" * 2,
        "import torch\r"
        + "".join(
            f"def g{i}(m, x):\r    s = torch._export.aot_compile(m, (x,))\r"
            "    return torch._export.aot_load(s, 'cpu')\r"
            for i in range(5)
        ),
    ],
    ids=["identical-last-lines", "lone-cr"],
)
def test_where_the_whole_text_diff_was_not_minimal_each_fix_still_gives_its_text(text, counted):
    by_calls = fix_edits(lint_text(text, build_edits=True).findings, text)
    assert counted["built"] > 0
    counted["off"] = True
    whole = fix_edits(lint_text(text, build_edits=True).findings, text)
    assert by_calls.keys() == whole.keys()
    for key, edits in by_calls.items():
        assert apply_edits(text, edits) == apply_edits(text, whole[key]), key
        assert len(edits) == 1 and len(edits[0].content) < len(text) / 2, key  # one edit of the changed lines


def project(root: Path, seed: int) -> Path:
    root.mkdir()
    (root / "export.py").write_text(generated_module(seed))
    (root / "serve.py").write_text(
        "import torch\nfrom export import PATH\n\nrunner = torch._export.aot_load(PATH, 'cpu')\n"
    )
    with open(root / "export.py", "a", newline="") as handle:
        handle.write('PATH = "shared.so"\n\n\ndef make(model, x):\n    torch._export.aot_compile(\n'
                     '        model, (x,), options={"aot_inductor.output_path": PATH}\n    )\n')  # fmt: skip
    return root


@pytest.mark.parametrize("seed", range(4))
def test_with_a_project_plan_each_fix_edits_as_the_whole_module_migration(tmp_path, seed, counted):
    root = project(tmp_path / "p", seed)
    settings = Settings(root=root).with_enabled()

    def fixes() -> dict:
        outcome = lint_paths([root], settings, root, FixOptions(edits=True), Execution(jobs=1))
        assert not outcome.errors
        texts = {path.name: path.read_text() for path in root.iterdir()}
        by_file: dict = {}
        for finding in outcome.findings:
            if finding.fix is not None and finding.fix.edits:
                name = Path(finding.path).name
                key = (name, finding.code, finding.start.row, finding.start.column)
                by_file[key] = finding.fix.edits
                apply_edits(texts[name], finding.fix.edits)
        return by_file

    by_calls = fixes()
    assert counted["built"] > 0
    counted["off"] = True
    assert by_calls == fixes()


def test_the_fixes_of_a_module_are_built_in_work_linear_in_its_calls(monkeypatch):
    """Twice the flows, twice the calls generated and no more: a fix per flow generating the whole module (and
    diffing it) was quadratic. Counted as calls of ``_code`` (a node's code generation) and of ``edits_between``
    on the whole text."""
    from aoti_lint.codemods import site_edits as module
    from aoti_lint.fixes.edits import edits_between

    generated: list[int] = []
    whole: list[int] = []
    original_code = module._code
    monkeypatch.setattr(
        module, "_code", lambda m, node, indents: generated.append(1) or original_code(m, node, indents)
    )

    def counting_edits_between(before, after):
        whole.append(len(before))
        return edits_between(before, after)

    import aoti_lint.fixes.edits

    # What fix_for_site diffs (it imports the function when a fix is built); site_edits keeps its own reference.
    monkeypatch.setattr(aoti_lint.fixes.edits, "edits_between", counting_edits_between)
    body = "    so = torch._export.aot_compile(model, (x,))\n    return torch._export.aot_load(so, 'cpu')\n"
    counts = []
    for functions in (20, 40):
        text = "import torch\n\n" + "".join(f"def f{i}(model, x):\n{body}" for i in range(functions))
        generated.clear()
        whole.clear()
        findings = lint_text(text, build_edits=True).findings
        assert len([f for f in findings if f.fix is not None and f.fix.edits]) == 2 * functions
        counts.append(len(generated))
        assert not whole, "no fix diffed the whole module"
    assert counts[1] == 2 * counts[0]
