"""The linter never imports, executes or evaluates what it reads, never imports torch, and never writes
through a symlink planted where its report goes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import REPO

# Each of these would leave a marker file (or kill the process) if anything ran, imported or evaluated it.
HOSTILE = {
    "__init__.py": "import torch\nopen({marker!r}, 'w').write('__init__ ran')\ntorch._export.aot_load(p)\n",
    "conftest.py": "import torch\nopen({marker!r}, 'w').write('conftest ran')\ntorch._export.aot_load(p)\n",
    "setup.py": "import torch, os\nos._exit(open({marker!r}, 'w').write('setup ran'))\ntorch._export.aot_load(p)\n",
    "model.py": textwrap.dedent(
        """\
        import torch
        from torch._export import aot_load
        __import__('os').system('touch ' + {marker!r})

        class Meta(type):
            def __new__(mcs, *args):
                open({marker!r}, 'w').write('metaclass ran')

        def __getattr__(name):
            open({marker!r}, 'w').write('module getattr ran')

        r = aot_load(eval("open({marker!r}, 'w')"), 'cpu')
        """
    ),
    "annotations.py": "import torch._export\nx: open({marker!r}, 'w') = 1\ny = f\"{{open({marker!r}, 'w')}}\"\n"
    "torch._export.aot_compile(m, (x,))\n",
    "sitecustomize.py": "open({marker!r}, 'w').write('sitecustomize ran')\nimport torch._export\n",
}
CONFIG = "[tool.aoti-lint]\nselect = ['ALL']\n# __import__('os').system('touch {marker}')\n"

# One process runs the command once per argument list (json in argv[1]) and checks after each run.
PROBE = """
import json, os, sys
from aoti_lint.cli import main
for args in json.loads(sys.argv[1]):
    code = main(args)
    assert 'torch' not in sys.modules, (args, 'torch was imported')
    assert not any(name.split('.')[0] in {names} for name in sys.modules), (args, 'a linted module was imported')
    assert not os.path.exists({marker!r}), (args, open({marker!r}).read())
    print('exit', code)
"""


def test_linting_and_fixing_never_run_the_code_or_import_torch(tmp_path):
    marker = tmp_path / "ran"
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    for name, text in HOSTILE.items():
        (tree / "pkg" / name).write_text(text.format(marker=str(marker)))
    (tree / "pyproject.toml").write_text(CONFIG.format(marker=marker))
    names = {"model", "annotations", "setup", "conftest", "pkg"}
    runs = [["."], ["--fix", "--unsafe-fixes", "."], ["--diff", "."], ["--output-format", "json", "pkg"]]
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(names=names, marker=str(marker)), json.dumps(runs)],
        cwd=tree,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )
    exits = [line for line in result.stdout.splitlines() if line.startswith("exit ")]
    assert len(exits) == len(runs), (result.stdout, result.stderr)
    assert set(exits) <= {"exit 0", "exit 1"}, (result.stdout, result.stderr)
    assert not marker.exists(), marker.read_text()


def test_report_writes_through_a_symlink_at_the_output_file(cli, tmp_path):
    """As a shell's `>` does (issue 18): the link stays, the file it points to gets the report."""
    target = tmp_path / "reports" / "lint.txt"
    target.parent.mkdir()
    target.write_text("old report\n")
    (tmp_path / "a.py").write_text("import torch\nr = torch._export.aot_load(p)\n")
    (tmp_path / "report.txt").symlink_to(target)
    result = cli("--isolated", "-o", "report.txt", "a.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert (tmp_path / "report.txt").is_symlink()
    assert target.read_text().startswith("a.py:2:5: AOTI002")


def test_report_to_a_dangling_symlink_creates_nothing_at_its_target(cli, tmp_path):
    target = tmp_path / "elsewhere" / "created.txt"
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "report.txt").symlink_to(target)
    (tmp_path / "a.py").write_text("x = 1\n")
    result = cli("--isolated", "-o", "report.txt", "a.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not target.exists()
    assert (tmp_path / "report.txt").read_text() == "All checks passed!\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "elsewhere", "report.txt"]


def test_unwritable_output_file_is_a_clear_error(cli, tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    result = cli("--isolated", "-o", "missing/dir/report.txt", "a.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: missing/dir/report.txt: ")
    assert not Path(tmp_path / "missing").exists()
