"""The migration as before/after pairs (tests/fixtures/codemod/*.in.py -> *.out.py), run through the CLI.

The first line of each input holds the command-line flags (`# aoti-lint-test: --fix --unsafe-fixes`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from aoti_lint.diagnostics import Edit, Position
from aoti_lint.fixes.edits import apply_edits
from tests.conftest import FIXTURES

PAIRS = sorted((FIXTURES / "codemod").glob("*.in.py"))


def _flags(path: Path) -> list[str]:
    first = path.read_text().splitlines()[0]
    assert first.startswith("# aoti-lint-test:"), path
    return first.split(":", 1)[1].split()


def _misuse(cli, directory: Path) -> set[str]:
    result = cli("--isolated", "--select", "AOTI003", "--output-format", "json", "module.py", cwd=directory)
    return {finding["message"] for finding in json.loads(result.stdout)}


@pytest.mark.parametrize("before", PAIRS, ids=[p.name.removesuffix(".in.py") for p in PAIRS])
def test_fix_matches_expected_and_is_idempotent(cli, tmp_path, before: Path):
    expected = before.with_name(before.name.replace(".in.py", ".out.py")).read_text()
    target = tmp_path / "module.py"
    shutil.copy(before, target)
    flags = _flags(before)
    misuse_before = _misuse(cli, tmp_path)
    first = cli("--isolated", *flags, "module.py", cwd=tmp_path)
    assert first.returncode in (0, 1), first.stderr
    assert target.read_text() == expected
    cst.parse_module(target.read_text())
    second = cli("--isolated", *flags, "--diff", "module.py", cwd=tmp_path)
    assert second.stdout == "", "a second --fix would change the file again"
    assert second.returncode in (0, 1)
    # The codemod's own output never misuses the new API (calls it left alone may still be reported).
    assert _misuse(cli, tmp_path) <= misuse_before
    # Whatever the fix could not do is still reported, with what to do by hand.
    remaining = json.loads(cli("--isolated", "--output-format", "json", "module.py", cwd=tmp_path).stdout)
    for finding in remaining:
        if finding["code"] in ("AOTI001", "AOTI002") and finding["fix"] is None:
            pytest.fail(f"a deprecated call without any fix information: {finding}")


def test_diff_writes_nothing_and_exits_one(cli, tmp_path):
    source = (FIXTURES / "codemod" / "compile_and_load.in.py").read_text()
    target = tmp_path / "m.py"
    target.write_text(source)
    result = cli("--isolated", "--diff", "m.py", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("--- a/m.py\n+++ b/m.py\n")
    assert "+    runner = torch._inductor.aoti_load_package(so_path)" in result.stdout
    assert target.read_text() == source
    assert "Would fix 2 errors." in result.stderr


def test_safe_fixes_only_by_default_and_unsafe_on_request(cli, tmp_path):
    source = (FIXTURES / "codemod" / "escapes.in.py").read_text()
    (tmp_path / "m.py").write_text(source)
    result = cli("--isolated", "--fix", "m.py", cwd=tmp_path)
    assert result.returncode == 1
    assert (tmp_path / "m.py").read_text() == source
    # The load of `serve` reads a path the run cannot follow to a compile: it gets no fix at all (issue 42).
    assert "1 hidden fix can be enabled with the `--unsafe-fixes` option." in result.stdout
    shown = cli("--isolated", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert sum("[*]" in line for line in shown.stdout.splitlines() if line.startswith("m.py")) == 1
    assert (tmp_path / "m.py").read_text() == source


def test_json_fix_field(cli, tmp_path):
    """Each finding's fix holds the edits of its whole flow in the module, as `--fix` applies it: the load's fix
    applied alone by an editor must not leave the compile writing a `.so` (nor the compile's, the loader
    reading one; found in review)."""
    code = (FIXTURES / "codemod" / "compile_and_load.in.py").read_text()
    (tmp_path / "m.py").write_text(code)
    listed = json.loads(cli("--isolated", "--output-format", "json", "m.py", cwd=tmp_path).stdout)
    (load,) = [f for f in listed if f["code"] == "AOTI002"]
    fix = load["fix"]
    assert fix["applicability"] == "safe"
    assert fix["message"] == "Load the package with `aoti_load_package`"
    assert fix["edits"] == [
        {
            "content": "    so_path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)), "
            'package_path="/srv/models/model.pt2")\n    runner = torch._inductor.aoti_load_package(so_path)\n',
            "end_location": {"row": 8, "column": 1},
            "location": {"row": 6, "column": 1},
        }
    ]
    cli("--isolated", "--fix", "m.py", cwd=tmp_path)
    fixed = (tmp_path / "m.py").read_text()
    for finding in listed:
        edits = [
            Edit(
                e["content"],
                Position(e["location"]["row"], e["location"]["column"]),
                Position(e["end_location"]["row"], e["end_location"]["column"]),
            )
            for e in finding["fix"]["edits"]
        ]
        assert apply_edits(code, edits) == fixed, finding["code"]


def test_display_only_fix_in_json(cli, tmp_path):
    (tmp_path / "m.py").write_text((FIXTURES / "codemod" / "not_rewritable.in.py").read_text())
    findings = json.loads(cli("--isolated", "--output-format", "json", "m.py", cwd=tmp_path).stdout)
    assert [f["fix"]["applicability"] for f in findings] == ["display-only"] * 4
    assert all(f["fix"]["edits"] == [] for f in findings)
    assert "not fixed automatically: `disable_constraint_solver=True`" in findings[0]["message"]


def test_fix_summary_and_exit_codes(cli, tmp_path):
    (tmp_path / "m.py").write_text((FIXTURES / "codemod" / "compile_and_load.in.py").read_text())
    result = cli("--isolated", "--fix", "--show-fixes", "m.py", cwd=tmp_path)
    assert result.returncode == 0
    assert "Found 2 errors (2 fixed, 0 remaining)." in result.stdout
    assert "- m.py:\n    2 fixes" in result.stdout
    (tmp_path / "m.py").write_text((FIXTURES / "codemod" / "compile_and_load.in.py").read_text())
    assert cli("--isolated", "--fix", "--exit-non-zero-on-fix", "m.py", cwd=tmp_path).returncode == 1
    (tmp_path / "m.py").write_text((FIXTURES / "codemod" / "compile_and_load.in.py").read_text())
    only = cli("--isolated", "--fix-only", "m.py", cwd=tmp_path)
    assert (only.returncode, only.stdout) == (0, "Fixed 2 errors.\n")


def test_nothing_written_when_nothing_changes(cli, tmp_path):
    target = tmp_path / "m.py"
    target.write_text((FIXTURES / "codemod" / "escapes.in.py").read_text())
    before = target.stat().st_mtime_ns
    cli("--isolated", "--fix", "m.py", cwd=tmp_path)
    assert target.stat().st_mtime_ns == before


def test_fix_keeps_mode_crlf_and_bom(cli, tmp_path):
    source = (FIXTURES / "codemod" / "compile_and_load.in.py").read_text()
    target = tmp_path / "m.py"
    target.write_bytes(b"\xef\xbb\xbf" + source.replace("\n", "\r\n").encode())
    target.chmod(0o750)
    assert cli("--isolated", "--fix", "m.py", cwd=tmp_path).returncode == 0
    data = target.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b"aoti_load_package(so_path)\r\n" in data
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert target.stat().st_mode & 0o777 == 0o750


def test_libcst_tool_runs_the_same_codemod(tmp_path):
    source = (FIXTURES / "codemod" / "compile_and_load.in.py").read_text()
    expected = (FIXTURES / "codemod" / "compile_and_load.out.py").read_text()
    target = tmp_path / "m.py"
    target.write_text(source)
    (tmp_path / ".libcst.codemod.yaml").write_text("modules:\n  - aoti_lint.codemods\nrepo_root: .\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "libcst.tool",
            "codemod",
            "--no-format",
            "--hide-progress",
            "migrate_aoti.MigrateAotiCommand",
            str(target),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert target.read_text() == expected


def test_a_call_of_the_loaded_model_is_no_load_site():
    """libcst names a call after its callee, so `aot_load(so, "cpu")(x)` is named `aot_load` too: it runs the
    loaded model and must not count as a load (found in review), in the plan nor in the flow summary."""
    import ast

    from libcst.metadata import MetadataWrapper

    from aoti_lint.codemods.migration_plan import MigrationPlan
    from aoti_lint.fixes.module_facts import ModuleFacts
    from aoti_lint.model.suppressions import python_suppressions
    from aoti_lint.rules.module_flow import read_flow

    text = 'from torch._export import aot_compile, aot_load\n\nout = aot_load(aot_compile(m, (x,)), "cpu")(x)\n'
    module = cst.parse_module(text)
    plan = MigrationPlan(ModuleFacts(MetadataWrapper(module, unsafe_skip_copy=True)), (2, 8))
    assert [site.kind for site in plan.sites] == ["load", "compile"]
    summary = read_flow(Path("m.py"), "m.py", text, ast.parse(text), (2, 8), python_suppressions(text)).summary
    assert (len(summary.compiles), len(summary.loads), len(summary.migrations)) == (1, 1, 2)


def test_no_fix_below_the_torch_that_has_the_new_api(cli, tmp_path):
    """`target-torch` below 2.6 (torch 2.5 has no `aoti_compile_and_package`): the calls are reported, and no fix
    rewrites them to an API the code's torch lacks (found in review)."""
    code = 'import torch\n\nso = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, "cpu")\n'
    (tmp_path / "m.py").write_text(code)
    fixed = cli("--isolated", "--target-torch", "2.5", "--fix", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert fixed.returncode == 1 and (tmp_path / "m.py").read_text() == code, fixed.stdout + fixed.stderr
    listed = cli("--isolated", "--target-torch", "2.5", "--output-format", "json", "m.py", cwd=tmp_path)
    shown = json.loads(listed.stdout)
    assert [item["code"] for item in shown] == ["AOTI001", "AOTI002"]
    for item in shown:
        assert item["fix"]["applicability"] == "display-only" and "needs torch 2.6" in item["fix"]["message"], item
    assert cli("--isolated", "--fix", "m.py", cwd=tmp_path).returncode == 0  # at the default 2.6 the fix applies


def test_no_fix_where_torch_may_name_something_else(cli, tmp_path):
    """The fix spells the new API `torch._inductor...`: where a parameter, an assignment or another import binds
    `torch`, that may not be the package (found in review). An import of torch in a function is torch too."""
    shadowed = "from torch._export import aot_compile, aot_load\n\n\ndef a(model, x, torch):\n"
    shadowed += '    return aot_load(aot_compile(model, (x,)), "cpu")\n'
    local_import = "def b(model, x):\n    import torch\n\n    so = torch._export.aot_compile(model, (x,))\n"
    local_import += '    return torch._export.aot_load(so, "cpu")\n'
    # Where the old call reads `torch` itself, the new one reads the same binding, whatever else binds it.
    fallback = "try:\n    import torch\nexcept ImportError:\n    torch = None\n\n\ndef c(model, x):\n"
    fallback += '    so = torch._export.aot_compile(model, (x,))\n    return torch._export.aot_load(so, "cpu")\n'
    (tmp_path / "shadowed.py").write_text(shadowed)
    (tmp_path / "local_import.py").write_text(local_import)
    (tmp_path / "fallback.py").write_text(fallback)
    cli("--isolated", "--fix", "--unsafe-fixes", "shadowed.py", "local_import.py", "fallback.py", cwd=tmp_path)
    assert (tmp_path / "shadowed.py").read_text() == shadowed
    assert "torch._inductor.aoti_load_package(so)" in (tmp_path / "local_import.py").read_text()
    assert "torch._inductor.aoti_load_package(so)" in (tmp_path / "fallback.py").read_text()
    listed = json.loads(cli("--isolated", "--output-format", "json", "shadowed.py", cwd=tmp_path).stdout)
    assert [item["fix"]["applicability"] for item in listed] == ["display-only", "display-only"]
    assert all("`torch` is bound to something else" in item["fix"]["message"] for item in listed)


def test_a_so_name_put_together_elsewhere_makes_the_fix_unsafe(cli, tmp_path):
    """`os.remove("/srv/m" + ".so")` reads the artifact too, by a name made of pieces no literal count sees
    (found in review): the fix that turns the artifact into a `.pt2` is unsafe."""
    code = "import os\nimport torch\n\n\ndef build(model, x):\n"
    code += '    so = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": "/srv/m.so"})\n'
    code += '    runner = torch._export.aot_load(so, "cpu")\n    os.remove("/srv/m" + ".so")\n    return runner\n'
    (tmp_path / "m.py").write_text(code)
    listed = json.loads(cli("--isolated", "--output-format", "json", "m.py", cwd=tmp_path).stdout)
    assert [item["fix"]["applicability"] for item in listed] == ["unsafe", "unsafe"]
    assert "another string of this module ends in `.so` (`.so`)" in listed[0]["fix"]["message"]
    cli("--isolated", "--fix", "m.py", cwd=tmp_path)
    assert (tmp_path / "m.py").read_text() == code


def test_a_device_argument_that_does_something_is_not_dropped(cli, tmp_path):
    """The load fix drops a device argument that is not a literal; one holding a call would take the call's work
    with it (`aot_load(path, aot_compile(...))`, `aot_load(path, pick_device())`; found in review): no fix there.
    A name or an attribute is read and dropped, as before (an unsafe fix). The loads read a `.pt2` package: a
    load whose producer the run does not see gets no fix at all."""
    code = "import torch\n\n\ndef go(model, x, dev):\n"
    code += "    m = torch._export.aot_load('m.pt2', torch._export.aot_compile(model, (x,)))\n"
    code += "    n = torch._export.aot_load('n.pt2', pick_device())\n"
    code += "    o = torch._export.aot_load('o.pt2', dev)\n"
    # Calls that only read a value leave the unsafe fix as it was (found in review of the rule above).
    code += '    p = torch._export.aot_load("p.pt2", "cuda" if torch.cuda.is_available() else "cpu")\n'
    code += "    q = torch._export.aot_load('q.pt2', torch.device(dev))\n"
    code += '    r = torch._export.aot_load("r.pt2", "cuda:{}".format(dev))\n'
    code += "    return m(x), n(x), o(x), p(x), q(x), r(x)\n"
    (tmp_path / "m.py").write_text(code)
    listed = json.loads(cli("--isolated", "--output-format", "json", "m.py", cwd=tmp_path).stdout)
    loads = [item for item in listed if item["code"] == "AOTI002"]
    assert [item["fix"]["applicability"] for item in loads] == ["display-only", "display-only", *["unsafe"] * 4]
    assert "the device argument is computed by a call" in loads[0]["fix"]["message"]
    cli("--isolated", "--fix", "--unsafe-fixes", "m.py", cwd=tmp_path)
    fixed = (tmp_path / "m.py").read_text()
    assert "torch._export.aot_load('n.pt2', pick_device())" in fixed
    assert "o = torch._inductor.aoti_load_package('o.pt2')" in fixed
    assert "aoti_compile_and_package(torch.export.export(model, (x,)))" in fixed  # the call itself still runs


def test_a_flow_left_by_fix_keeps_its_fix_shown(cli, tmp_path):
    """`--fix` migrates the safe flow first, which moves the rows below it; the unsafe flow left with a path
    constant must still be reported with its fix, not crash on the constant's old span (found in review)."""
    code = "import os\nfrom torch._export import aot_compile, aot_load\n\n"
    code += 'RANKER_PATH = os.path.join("/srv/models", "ranker.so")\n\n\n'
    code += "def export(model, x):\n"
    code += '    aot_compile(model, (x,), options={"aot_inductor.output_path": RANKER_PATH})\n\n\n'
    code += 'def serve():\n    return aot_load(RANKER_PATH, "cpu")\n\n\ndef other():\n'
    code += '    return aot_load("/srv/models/x.pt2", "cpu")\n'
    (tmp_path / "m.py").write_text(code)
    result = cli("--isolated", "--no-cache", "--fix", "m.py", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr == "", result.stderr
    assert "Found 3 errors (1 fixed, 2 remaining)." in result.stdout
    assert 'aoti_load_package("/srv/models/x.pt2")' in (tmp_path / "m.py").read_text()
    (tmp_path / "m.py").write_text(code)
    result = cli("--isolated", "--no-cache", "--fix", "--output-format", "json", "m.py", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr == "", result.stderr
    listed = json.loads(result.stdout)
    assert sorted(item["code"] for item in listed) == ["AOTI001", "AOTI002"]
    assert all(item["fix"]["applicability"] == "unsafe" and item["fix"]["edits"] for item in listed)


def test_a_notebook_fix_stays_in_its_cell(cli, tmp_path):
    """A notebook finding's edits are rows of its own cell: the fix shown alone migrates its site only, where a
    flow across cells would need edits in another cell (found in review); `--fix` migrates the flow whole."""
    cells = [
        "import torch",
        'so_path = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": "/srv/m.so"})',
        'runner = torch._export.aot_load(so_path, "cpu")',
    ]
    notebook = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": [cell]}
            for cell in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "n.ipynb").write_text(json.dumps(notebook))
    listed = json.loads(cli("--isolated", "--no-cache", "--output-format", "json", "n.ipynb", cwd=tmp_path).stdout)
    for item in listed:
        (edit,) = item["fix"]["edits"]
        assert edit["location"]["row"] == 1 and edit["end_location"]["row"] == 2, item
    assert "aot_compile" not in listed[1]["fix"]["edits"][0]["content"]
    cli("--isolated", "--no-cache", "--fix", "n.ipynb", cwd=tmp_path)
    fixed = (tmp_path / "n.ipynb").read_text()
    assert "aoti_compile_and_package" in fixed and "aoti_load_package(so_path)" in fixed


def test_a_planned_fix_the_codemod_cannot_write_leaves_its_whole_flow_alone(monkeypatch):
    """The codemod writes what the reading planned; where the syntax does not hold it (here a plan that claims the
    load's device holds an index expression), that call gets no edits, and neither does the compile it goes with:
    migrated alone, the compile would hand the old loader a package."""
    import dataclasses

    from libcst.metadata import MetadataWrapper

    from aoti_lint.codemods.migration import fix_for_site
    from aoti_lint.codemods.migration_plan import MigrationPlan
    from aoti_lint.diagnostics import Applicability
    from aoti_lint.fixes.module_facts import ModuleFacts
    from aoti_lint.fixes.node_positions import NotReproduced
    from aoti_lint.flows import sites
    from aoti_lint.flows.migration_verdicts import CANNOT_WRITE

    real = sites.planned_rewrites

    def misplanned(*args, **kwargs):
        planned = real(*args, **kwargs)
        return [dataclasses.replace(r, device_index_passed=r.kind == "load") for r in planned]

    monkeypatch.setattr(sites, "planned_rewrites", misplanned)
    text = (
        "import torch\n\n"
        'so = torch._export.aot_compile(m, (x,), options={"aot_inductor.output_path": "/srv/m.so"})\n'
        'runner = torch._export.aot_load(so, "cuda")\n'
    )
    plan = MigrationPlan(ModuleFacts(MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)), (2, 8))
    compile_site, load = plan.sites
    assert load.cannot_write and load.verdict.reason == CANNOT_WRITE
    assert compile_site.verdict.applicability is not Applicability.DISPLAY_ONLY  # the reading's own verdict
    fix = fix_for_site(plan, id(compile_site.reference), text)
    with pytest.raises(NotReproduced, match=CANNOT_WRITE):
        fix.settled(build_edits=True)
