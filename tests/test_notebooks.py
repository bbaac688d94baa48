"""Notebooks as users meet them: code cells linted with IPython syntax in them, locations per cell, --fix
writing back only the changed cells, broken JSON reported per file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoti_lint.read.notebook import NotebookSource, python_text

COMPILE_CALL = "so = torch._export.aot_compile(m, (x,))"


def code(source, **extra) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source, **extra}


def notebook(*cells, language="python") -> dict:
    return {
        "cells": list(cells),
        "metadata": {"language_info": {"name": language}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def write_notebook(path: Path, document: dict, indent: int = 1) -> bytes:
    # nbformat's own layout: indent 1, non-ASCII kept, a final newline.
    data = (json.dumps(document, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")
    path.write_bytes(data)
    return data


MAGICS = notebook(
    {"cell_type": "markdown", "metadata": {}, "source": ["`torch._export.aot_compile` in prose is not code\n"]},
    code(["%matplotlib inline\n", "import torch\n", "!pip install --quiet torch\n", "torch.compile?"]),
    code(["for i in range(2):\n", "    %time f(i)\n", "    files = !ls\n", COMPILE_CALL]),
    code(["%%bash\n", "echo torch._export.aot_compile\n"]),
    code(["%%time\n", "%pip install a \\\n", "    b\n", "r = torch._export.aot_load('a.so', 'cpu')\n"]),
)


def test_code_cells_are_linted_through_magics_with_cell_locations(cli, tmp_path):
    write_notebook(tmp_path / "nb.ipynb", MAGICS)
    result = cli("nb.ipynb", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert [line.split(" `")[0] for line in result.stdout.splitlines()[:2]] == [
        "nb.ipynb:cell 3:4:6: AOTI001 [*]",
        "nb.ipynb:cell 5:4:5: AOTI002",
    ]


def test_directories_include_notebooks(cli, tmp_path):
    (tmp_path / "sub").mkdir()
    write_notebook(tmp_path / "sub" / "nb.ipynb", MAGICS)
    result = cli("--output-format", "json", cwd=tmp_path)
    assert {(row["cell"], row["code"]) for row in json.loads(result.stdout)} == {(3, "AOTI001"), (5, "AOTI002")}


def test_magics_become_pass_statements_on_the_same_rows():
    source = "x = 1\n    !ls \\\n  -la\ntorch.compile??\n%%capture not first\n# a comment?\ny = f(x)  # why?\n"
    assert python_text(source) == (
        "x = 1\n    pass  # !ls \\\n    pass  # -la\npass  # torch.compile??\npass  # %%capture not first\n"
        "# a comment?\ny = f(x)  # why?\n"
    )
    assert python_text("%%writefile a.py\nimport torch\n") is None
    assert python_text("%%timeit\nf()\n") == "pass  # %%timeit\nf()\n"


def test_noqa_and_syntax_errors_are_per_cell(cli, tmp_path):
    document = notebook(
        code([COMPILE_CALL.replace("so =", "import torch\nso =") + "  # noqa: AOTI001"]),
        code(["import torch\n", "def broken(:\n"]),
    )
    write_notebook(tmp_path / "nb.ipynb", document)
    result = cli("nb.ipynb", cwd=tmp_path)
    assert result.stdout.splitlines()[0].startswith("nb.ipynb:cell 2:2:")
    assert "AOTI000" in result.stdout
    assert "AOTI001" not in result.stdout


def test_other_languages_are_skipped(cli, tmp_path):
    write_notebook(tmp_path / "r.ipynb", notebook(code(["import torch\n", COMPILE_CALL]), language="R"))
    result = cli("r.ipynb", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "All checks passed!\n")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"cells": [', "invalid notebook JSON: Expecting value (line 1, column 12)"),
        ('{"metadata": {}}', "invalid notebook: no `cells` list"),
        ('{"cells": [{"cell_type": "code", "source": 3}]}', "cell 1: `source` must be a string or a list of strings"),
    ],
)
def test_malformed_notebook_is_a_per_file_error(cli, tmp_path, content, message):
    (tmp_path / "bad.ipynb").write_text(content, encoding="utf-8")
    (tmp_path / "a.py").write_text("import torch\n" + COMPILE_CALL + "\n", encoding="utf-8")
    result = cli(".", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == f"error: bad.ipynb: {message}\n"
    assert result.stdout.startswith("a.py:2:6: AOTI001")


NEW_COMPILE = "torch._inductor.aoti_compile_and_package(torch.export.export({}, (x,)))"


def _fix_case() -> dict:
    return notebook(
        {"cell_type": "markdown", "metadata": {}, "source": ["torch._export.aot_compile in prose stays"]},
        code(["%matplotlib inline\n", "import torch\n", "y = 1"], execution_count=1),
        code(
            [
                "for i in range(2):\n",
                "    !echo {i}\n",
                "    so = torch._export.aot_compile(m, (x,))  # café\n",
                "torch.compile?",
            ],
            outputs=[{"output_type": "stream", "name": "stdout", "text": ["é\n"]}],
        ),
        code("so = torch._export.aot_compile(model, (x,))"),
    )


def _fixed(document: dict) -> dict:
    document["cells"][2]["source"][2] = f"    so = {NEW_COMPILE.format('m')}  # café\n"
    document["cells"][3]["source"] = f"so = {NEW_COMPILE.format('model')}"
    return document


@pytest.mark.parametrize("indent", [1, 2])
def test_fix_rewrites_only_changed_cells_keeping_the_json_layout(cli, tmp_path, indent):
    document = _fix_case()
    write_notebook(tmp_path / "nb.ipynb", document, indent=indent)
    result = cli("--fix", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Found 2 errors (2 fixed, 0 remaining).\n"
    expected = (json.dumps(_fixed(document), indent=indent, ensure_ascii=False) + "\n").encode("utf-8")
    assert (tmp_path / "nb.ipynb").read_bytes() == expected


def test_fix_keeps_ascii_escapes_and_a_missing_final_newline(cli, tmp_path):
    document = _fix_case()
    data = json.dumps(document, indent=1).encode("ascii")  # `\u00e9` escapes, no final newline
    (tmp_path / "nb.ipynb").write_bytes(data)
    assert cli("--fix", "nb.ipynb", cwd=tmp_path).returncode == 0
    assert (tmp_path / "nb.ipynb").read_bytes() == json.dumps(_fixed(document), indent=1).encode("ascii")


def test_fix_across_cells_rewrites_the_import_in_its_own_cell(cli, tmp_path):
    document = notebook(
        code(["from torch._export import aot_load\n", "import os"]),
        code(["%cd /tmp\n", 'runner = aot_load("model.pt2", "cpu")\n']),
    )
    write_notebook(tmp_path / "nb.ipynb", document)
    rows = json.loads(cli("--output-format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    # Each edit counts rows from the start of its own cell: the import is row 1 of cell 1.
    assert [(edit["location"], edit["end_location"]) for edit in rows[0]["fix"]["edits"]] == [
        ({"row": 1, "column": 1}, {"row": 2, "column": 1}),
        ({"row": 2, "column": 1}, {"row": 3, "column": 1}),
    ]
    result = cli("--fix", "--unsafe-fixes", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    document["cells"][0]["source"] = ["import torch\n", "import os"]
    document["cells"][1]["source"] = ["%cd /tmp\n", 'runner = torch._inductor.aoti_load_package("model.pt2")\n']
    assert json.loads((tmp_path / "nb.ipynb").read_text(encoding="utf-8")) == document


def test_diff_shows_cells_and_writes_nothing(cli, tmp_path):
    data = write_notebook(tmp_path / "nb.ipynb", _fix_case())
    result = cli("--diff", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines()[2:] == [
        "@@ -5,7 +5,7 @@",
        " # %% cell 3",
        " for i in range(2):",
        "     !echo {i}",
        "-    so = torch._export.aot_compile(m, (x,))  # café",
        f"+    so = {NEW_COMPILE.format('m')}  # café",
        " torch.compile?",
        " # %% cell 4",
        "-so = torch._export.aot_compile(model, (x,))",
        f"+so = {NEW_COMPILE.format('model')}",
    ]
    assert (tmp_path / "nb.ipynb").read_bytes() == data


def test_findings_and_fix_edits_are_cell_relative(cli, tmp_path):
    write_notebook(tmp_path / "nb.ipynb", _fix_case())
    rows = json.loads(cli("--output-format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    assert [(row["cell"], row["location"], row["fix"]["edits"][0]["location"]) for row in rows] == [
        (3, {"row": 3, "column": 10}, {"row": 3, "column": 1}),
        (4, {"row": 1, "column": 6}, {"row": 1, "column": 1}),
    ]


def test_a_fix_across_a_cell_boundary_is_refused():
    data = (json.dumps(notebook(code("a = 1\n"), code("b = 2\n")), indent=1) + "\n").encode()
    source = NotebookSource.from_bytes(Path("nb.ipynb"), "nb.ipynb", data)
    assert source.text == "a = 1\n# aoti-lint: notebook cell 2\nb = 2\n"
    with pytest.raises(ValueError, match="cell boundary"):
        source.with_text("a = 1\nb = 2\n")


def test_fixed_text_that_grows_a_cell_goes_back_to_that_cell():
    """A fix that adds an import at the top (as the migration codemod does) lands in the first code cell."""
    document = notebook(code(["%load_ext autoreload\n", "import torch"]), code("so = torch._export.aot_compile(m)"))
    data = (json.dumps(document, indent=1) + "\n").encode()
    source = NotebookSource.from_bytes(Path("nb.ipynb"), "nb.ipynb", data)
    assert source.text == (
        "pass  # %load_ext autoreload\nimport torch\n# aoti-lint: notebook cell 2\nso = torch._export.aot_compile(m)\n"
    )
    fixed = source.with_text(
        "pass  # %load_ext autoreload\nimport torch\nimport torch._inductor\n"
        "# aoti-lint: notebook cell 2\nso = aoti_compile_and_package(m)\nprint(so)\n"
    )
    document["cells"][0]["source"] = ["%load_ext autoreload\n", "import torch\n", "import torch._inductor"]
    document["cells"][1]["source"] = "so = aoti_compile_and_package(m)\nprint(so)"
    assert fixed.data == (json.dumps(document, indent=1) + "\n").encode()
    assert fixed.with_text(fixed.text).data == fixed.data


def test_debug_switches_in_cells_are_found(cli, tmp_path):
    document = notebook(
        code(["%env TORCH_LOGS=+dynamo\n", "import os\n", 'os.environ["AOTI_RUNTIME_CHECK_INPUTS"] = "1"\n'])
    )
    write_notebook(tmp_path / "nb.ipynb", document)
    result = cli("--output-format", "pylint", "nb.ipynb", cwd=tmp_path)
    assert result.stdout.startswith("nb.ipynb:cell 1:3: [AOTI201] debug switch `AOTI_RUNTIME_CHECK_INPUTS` is on")
