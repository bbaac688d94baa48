"""Names imported from the project's own modules (``model/project_names.py``, ``read/project_modules.py``): followed
into the module that binds them, the same whichever files a run is given, and never stale in the cache."""

from __future__ import annotations

import ast
import json
import os
import time
from pathlib import Path

import pytest

from aoti_lint.read.project_modules import _imports, imported_files, module_file

ROOT = Path(__file__).resolve().parent

SHIM = "from .aoti import aot_compile as compile_model\nfrom .aoti import aot_load as load_model\n"
AOTI = "from torch._export import aot_compile, aot_load\n"
CONSUMER = (
    "import torch\n\nfrom mlserve import compile_model, load_model\n\n\n"
    "def build(model):\n    return compile_model(model, (torch.randn(2, 3),))\n\n\n"
    'def serve():\n    return load_model("build/model.so", "cpu")\n'
)


def _project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    return root


def _found(cli, root: Path, *args: str) -> list[tuple[str, int, str, str]]:
    result = cli("--isolated", "--output-format", "json", *args, cwd=root)
    return sorted(
        (
            Path(item["filename"]).relative_to(root).as_posix(),
            item["location"]["row"],
            item["code"],
            (item["fix"] or {}).get("applicability", ""),
        )
        for item in json.loads(result.stdout)
    )


def _sources() -> list[tuple[str, str]]:
    found = []
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        try:
            text = path.read_text()
            ast.parse(text)
        except (SyntaxError, ValueError, UnicodeDecodeError):
            continue
        found.append((str(path.relative_to(ROOT)), text))
    return found


@pytest.mark.parametrize(("name", "text"), _sources(), ids=[name for name, _ in _sources()])
def test_the_import_pattern_finds_every_import_that_starts_a_line(name, text):
    """The screen's reading of imports finds every import statement ``ast`` finds at a line's start."""
    found = set(_imports(text))
    lines = text.splitlines()
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Import | ast.ImportFrom) or lines[node.lineno - 1][: node.col_offset].strip():
            continue
        if isinstance(node, ast.Import):
            assert {(alias.name, 0) for alias in node.names} <= found, (name, node.lineno)
        else:
            assert (node.module or "", node.level) in found, (name, node.lineno)


def test_modules_are_found_where_python_would_find_them(tmp_path):
    root = _project(tmp_path, {"mlserve/__init__.py": SHIM, "mlserve/aoti.py": AOTI, "scripts/run.py": CONSUMER})
    consumer = str(root / "scripts/run.py")
    assert module_file(consumer, "mlserve") == str(root / "mlserve/__init__.py")
    assert module_file(consumer, "mlserve.aoti") == str(root / "mlserve/aoti.py")
    assert module_file(str(root / "mlserve/__init__.py"), "aoti", level=1) == str(root / "mlserve/aoti.py")
    assert module_file(consumer, "torch._export") is None, "installed packages are never looked for"
    assert module_file(consumer, "os") is None
    assert imported_files(consumer, CONSUMER) == [str(root / "mlserve/__init__.py")]


def test_installed_modules_are_never_the_projects(tmp_path):
    """A run over an installed package's folder (torch's, in a virtual environment): the modules beside it in
    `site-packages` are installed ones, and torch's own sources import none of the project's."""
    site = tmp_path / "venv/lib/python3.11/site-packages"
    root = _project(
        site,
        {
            "typing_extensions.py": "import os\n",
            "sympy/__init__.py": "",
            "torch/_dynamo/utils.py": "import typing_extensions\nimport sympy\n",
            "tools/run.py": "import typing_extensions\n",
        },
    )
    assert module_file(str(root / "torch/_dynamo/utils.py"), "typing_extensions") is None
    assert module_file(str(root / "torch/_dynamo/utils.py"), "sympy") is None
    assert module_file(str(root / "tools/run.py"), "typing_extensions") is None


def test_a_re_exported_name_is_found_at_its_use_whichever_files_the_run_is_given(cli, tmp_path):
    root = _project(
        tmp_path,
        {"mlserve/__init__.py": SHIM, "mlserve/aoti.py": AOTI, "scripts/run.py": CONSUMER.replace("torch.randn", "x")},
    )
    # The consumer names the API only through the shim's names; a word of the screen (`.so"`) has it read.
    whole = _found(cli, root, ".")
    alone = _found(cli, root, "scripts/run.py")
    mine = [item for item in whole if item[0] == "scripts/run.py"]
    assert alone == mine
    assert ("scripts/run.py", 11, "AOTI002", "display-only") in mine


def test_a_name_a_project_module_binds_to_its_own_function_is_not_the_api(cli, tmp_path):
    wrapper = "import torch\n\n\ndef aot_load(path, device):\n    return torch._inductor.aoti_load_package(path)\n"
    root = _project(
        tmp_path,
        {"tools/aoti.py": wrapper, "serve.py": 'from tools.aoti import aot_load\n\nm = aot_load("m.pt2", "cpu")\n'},
    )
    assert [item for item in _found(cli, root, ".") if item[0] == "serve.py"] == []


def test_the_fix_leaves_a_call_through_another_module_to_a_human(cli, tmp_path):
    consumer = "from tools.ns import te\n\nrunner = te.aot_load('m.so', 'cpu')\n"
    root = _project(tmp_path, {"tools/ns.py": "import torch._export as te\n", "serve.py": consumer})
    result = cli("--isolated", "--fix", "--unsafe-fixes", ".", cwd=root)
    assert (root / "serve.py").read_text() == consumer
    assert "by way of another module of the project" in result.stdout
    assert result.returncode == 1


def test_a_cached_finding_goes_when_the_module_it_follows_changes(cli, tmp_path):
    consumer = "from tools.ns import te\n\nrunner = te.aot_load('m.so', 'cpu')\n"
    root = _project(tmp_path, {"tools/ns.py": "import torch._export as te\n", "serve.py": consumer})
    cache = ("--cache-dir", str(tmp_path / "cache"))
    old = os.stat(root / "tools/ns.py").st_mtime - 10
    for path in root.rglob("*.py"):
        os.utime(path, (old, old))  # past the racy window: both runs may keep what they read
    assert [code for _, _, code, _ in _found(cli, root, *cache, ".")] == ["AOTI002"]
    (root / "tools/ns.py").write_text("import mylib.loaders as te\n")
    os.utime(root / "tools/ns.py", (time.time() - 5, time.time() - 5))
    assert _found(cli, root, *cache, ".") == [], "the consumer's entry depends on the module it follows"
