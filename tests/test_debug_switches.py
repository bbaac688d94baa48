"""AOTI201 / AOTI202: the switch table, file kinds, the fixture tree, and --fix end to end through the CLI."""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aoti_lint.diagnostics import Applicability, Edit, Fix, Position
from aoti_lint.knowledge.debug_switches import DEBUG_SWITCHES, SWITCHES_BY_CONFIG_KEY, SWITCHES_BY_ENV_VAR
from aoti_lint.read.source import SourceFile, file_kind
from aoti_lint.rules.debug_env_var import DebugEnvVar
from aoti_lint.rules.debug_inductor_config import DebugInductorConfig
from aoti_lint.run.engine import check_source
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.fixing import fix_source, process_source
from aoti_lint.scanners import yaml as yaml_scanner
from aoti_lint.settings.run_options import FixOptions
from tests.conftest import FIXTURES, REPO
from tests.helpers import by_code, expected_by_code, lint_text

SELECT = ("--isolated", "--select", "AOTI201,AOTI202")
TREE = FIXTURES / "rules" / "AOTI201" / "debug_switches"
FIXED_TREE = FIXTURES / "rules" / "AOTI201" / "debug_switches_fixed"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


# The table


@pytest.mark.parametrize(
    ("name", "value", "on"),
    [
        ("CUDA_LAUNCH_BLOCKING", "1", True),
        ("CUDA_LAUNCH_BLOCKING", "0", False),
        ("CUDA_LAUNCH_BLOCKING", "", False),
        ("CUDA_LAUNCH_BLOCKING", "False", False),
        ("CUDA_LAUNCH_BLOCKING", "off", False),
        ("TORCH_LOGS", "+inductor,output_code", True),
        ("TORCH_LOGS", "graph_breaks", True),
        ("TORCH_LOGS", "-dynamo", False),
        ("TORCH_LOGS", "-dynamo, -inductor", False),
        ("TORCH_LOGS", "", False),
        ("TORCHINDUCTOR_NAN_ASSERTS", "1", True),
        ("TORCHINDUCTOR_NAN_ASSERTS", "true", False),  # torch compares with "1"
        ("PYTORCH_NO_CUDA_MEMORY_CACHING", "1", True),
        ("PYTORCH_NO_CUDA_MEMORY_CACHING", "yes", False),  # c10::utils::check_env: "1" only
        ("TORCH_SHOW_CPP_STACKTRACES", "true", False),
        ("AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER", "3", True),
        ("AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER", "0", False),
        ("AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT", "triton_poi_fused_0", True),
    ],
)
def test_on_values(name, value, on):
    assert SWITCHES_BY_ENV_VAR[name].is_on_value(value) is on


def test_config_values_are_judged_as_python_values():
    nan_asserts = SWITCHES_BY_CONFIG_KEY["nan_asserts"]
    assert nan_asserts.is_on_value(True)
    assert not nan_asserts.is_on_value(False)
    assert not nan_asserts.is_on_value(None)
    printer = SWITCHES_BY_CONFIG_KEY["aot_inductor.debug_intermediate_value_printer"]
    assert printer.is_on_value("2")
    assert not printer.is_on_value("0")


def test_table_covers_the_issue_and_nothing_that_is_not_debugging():
    env_vars = {s.env_var for s in DEBUG_SWITCHES if s.env_var}
    config_keys = {s.config_key for s in DEBUG_SWITCHES if s.config_key}
    assert len(env_vars) == 14
    assert {"AOTI_RUNTIME_CHECK_INPUTS", "CUDA_LAUNCH_BLOCKING", "TORCH_LOGS", "TORCH_USE_CUDA_DSA"} <= env_vars
    assert {"nan_asserts", "trace.enabled", "aot_inductor.debug_compile", "triton.debug_sync_kernel"} <= config_keys
    for name in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TORCHINDUCTOR_COMPILE_THREADS"):
        assert name not in env_vars
    assert not {key for key in config_keys if "autotune" in key or "cache" in key or "threads" in key}


# File kinds


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("train.sh", "shell"),
        ("run.bash", "shell"),
        ("Dockerfile", "dockerfile"),
        ("Dockerfile.gpu", "dockerfile"),
        ("serve.dockerfile", "dockerfile"),
        ("Containerfile", "dockerfile"),
        ("ci.yml", "yaml"),
        ("compose.yaml", "yaml"),
        (".env", "env"),
        ("prod.env", "env"),
        ("README.md", None),
        ("setup.cfg", None),
    ],
)
def test_file_kind_by_name(name, kind):
    assert file_kind(Path(name)) == kind


@pytest.mark.parametrize(
    ("first_line", "kind"),
    [
        ("#!/bin/sh", "shell"),
        ("#!/bin/bash -e", "shell"),
        ("#!/usr/bin/env bash", "shell"),
        ("#!/usr/bin/env -S bash -eu", "shell"),
        ("#!/usr/bin/env python3", None),
        ("#!/bin/zsh", None),
        ("export CUDA_LAUNCH_BLOCKING=1", None),
    ],
)
def test_file_kind_by_shebang(tmp_path, first_line, kind):
    path = tmp_path / "launch"
    path.write_text(first_line + "\nexport CUDA_LAUNCH_BLOCKING=1\n")
    assert file_kind(path) == kind


# The fixture tree: every form, with the traps that must stay silent


def test_fixture_tree_output(cli):
    """One run over the tree: discovery of every kind, findings, positions, messages, trailing noqa."""
    result = cli(*SELECT, "--quiet", ".", cwd=TREE)
    assert by_code(result.stdout) == expected_by_code(TREE)
    assert result.returncode == 1, result.stderr
    reported = {line.split(":")[0] for line in result.stdout.splitlines()}
    assert reported == {
        ".env", "Dockerfile", "Makefile", "build_package.py", "ci.yml", "compose.yaml", "k8s.yaml", "launch",
        "serve.env", "train.sh",
    }  # fmt: skip


def _copy_tree(tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(TREE, target)
    for path in [*target.glob("expected.*.txt"), target / "notes", target / "README.md"]:
        path.unlink()
    return target


def _assert_valid(root: Path) -> None:
    for path in root.rglob("*"):
        kind = file_kind(path)
        if kind == "python":
            ast.parse(path.read_text())
        elif kind == "shell" and shutil.which("bash"):
            checked = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
            assert checked.returncode == 0, (path.name, checked.stderr)
        elif kind == "yaml":
            try:
                import yaml
            except ImportError:  # no PyYAML in this environment: the scanner must still read it
                list(yaml_scanner.scan(path.read_text()))
            else:
                assert isinstance(yaml.safe_load(path.read_text()), dict), path.name


def test_unsafe_fixes_end_to_end(cli, tmp_path):
    project = _copy_tree(tmp_path)
    assert cli(*SELECT, "--fix", ".", cwd=project).returncode == 1  # unsafe fixes need --unsafe-fixes
    result = cli(*SELECT, "--fix", "--unsafe-fixes", ".", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    reported = sum(len(text.splitlines()) for text in expected_by_code(TREE).values())
    assert f"{reported} fixed, 0 remaining" in result.stdout
    for expected in sorted(FIXED_TREE.iterdir()):
        assert (project / expected.name).read_text() == expected.read_text(), expected.name
    _assert_valid(project)
    again = cli(*SELECT, ".", cwd=project)
    assert (again.returncode, again.stdout) == (0, "All checks passed!\n")


def test_safe_fix_run_changes_nothing(cli, tmp_path):
    project = _copy_tree(tmp_path)
    result = cli(*SELECT, "--fix", ".", cwd=project)
    assert result.returncode == 1
    for original in TREE.iterdir():
        if (project / original.name).exists():
            assert (project / original.name).read_bytes() == original.read_bytes(), original.name


def test_fixes_never_leave_an_empty_body(cli, tmp_path):
    """Two removals from one block are applied in separate rounds; the last one leaves a placeholder."""
    write(
        tmp_path,
        {
            "build.py": """
                import os

                if cuda:
                    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
                    os.environ["TORCH_LOGS"] = "+dynamo"
                """,
            "run.sh": """
                if [ -f model.pt2 ]; then
                  export CUDA_LAUNCH_BLOCKING=1
                  export TORCH_LOGS=+dynamo
                fi
                """,
            "ci.yml": """
                jobs:
                  test:
                    env:
                      CUDA_LAUNCH_BLOCKING: 1
                      TORCH_LOGS: +dynamo
                    steps:
                      - run: pytest
                """,
            "Dockerfile": """
                FROM python:3.11
                ENV CUDA_LAUNCH_BLOCKING=1 \\
                    TORCH_LOGS=+dynamo
                """,
        },
    )
    result = cli(*SELECT, "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    # `import os` went with the last statement that used it.
    assert (tmp_path / "build.py").read_text() == "if cuda:\n    pass\n"
    assert (tmp_path / "run.sh").read_text() == "if [ -f model.pt2 ]; then\n  :\nfi\n"
    assert "    env: {}\n" in (tmp_path / "ci.yml").read_text()
    assert (tmp_path / "Dockerfile").read_text() == "FROM python:3.11\n"
    _assert_valid(tmp_path)


def test_findings_in_other_file_kinds_use_every_output_format(cli, tmp_path):
    write(tmp_path, {"ci.yml": "env:\n  CUDA_LAUNCH_BLOCKING: 1\n  PIP_CACHE_DIR: /tmp/pip\n"})
    result = cli(*SELECT, "--output-format", "json", cwd=tmp_path)
    (item,) = json.loads(result.stdout)
    assert item["code"] == "AOTI201"
    assert item["location"] == {"row": 2, "column": 3}
    assert item["fix"]["applicability"] == "unsafe"
    assert result.returncode == 1


def test_undecodable_text_file_is_one_error_and_the_run_goes_on(cli, tmp_path):
    (tmp_path / "bad.sh").write_bytes(b"export CUDA_LAUNCH_BLOCKING=1 # \xff\n")
    write(tmp_path, {"good.sh": "export CUDA_LAUNCH_BLOCKING=1\n"})
    result = cli(*SELECT, ".", cwd=tmp_path)
    assert "good.sh:1:8: AOTI201" in result.stdout
    assert [line for line in result.stderr.splitlines() if "bad.sh" in line], result.stderr
    assert "Traceback" not in result.stderr


def test_text_files_never_import_libcst(tmp_path):
    write(
        tmp_path,
        {"ci.yml": "env:\n  CUDA_LAUNCH_BLOCKING: 1\n", "run.sh": "export TORCH_LOGS=+dynamo\n", "a.py": "x = 1\n"},
    )
    code = (
        "import sys\nfrom aoti_lint.cli import main\n"
        "rc = main(['--quiet', '--isolated', '.'])\nassert 'libcst' not in sys.modules, 'libcst imported'\nprint(rc)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert result.stdout.strip().endswith("1"), result.stderr


@pytest.mark.parametrize("rule", [DebugEnvVar, DebugInductorConfig], ids=lambda rule: rule.code)
def test_examples_fixed_text(rule):
    for example in rule.INVALID:
        if example.fixed_source is None:
            continue
        kind = file_kind(Path(example.filename)) or "python"
        source = SourceFile(Path(example.filename), example.filename, kind, example.source.encode())
        context = FileContext.of([rule])
        fixed, count, _ = fix_source(source, context, check_source(source, context), unsafe=True)
        assert count >= 1
        assert fixed.text == example.fixed_source


def test_crlf_and_bom_files_keep_their_line_endings(cli, tmp_path):
    (tmp_path / "Dockerfile").write_bytes(
        b"FROM x\r\nENV A=1 \\\r\n    CUDA_LAUNCH_BLOCKING=1\r\nRUN TORCH_LOGS=+dynamo \\\r\n  python x.py\r\n"
    )
    (tmp_path / ".env").write_bytes(b"\xef\xbb\xbfCUDA_LAUNCH_BLOCKING=1\r\nB=2\r\n")
    result = cli(*SELECT, "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "Dockerfile").read_bytes() == b"FROM x\r\nENV A=1\r\nRUN python x.py\r\n"
    assert (tmp_path / ".env").read_bytes() == b"\xef\xbb\xbfB=2\r\n"


def test_rows_count_newlines_only():
    """A form feed or a Unicode line separator in a comment must not shift the rows of what follows."""
    for scan, text in (
        (yaml_scanner.scan, "# a\x0cb\u2028c\nenv:\n  CUDA_LAUNCH_BLOCKING: 1\n"),
        (DebugEnvVar._scanner("dockerfile"), "# a\x0cb\nFROM x\nENV CUDA_LAUNCH_BLOCKING=1\n"),
        (DebugEnvVar._scanner("env"), "# a\x0cb\nCUDA_LAUNCH_BLOCKING=1\n"),
    ):
        (setting,) = scan(text)
        assert setting.start.row == text.count("\n")


def test_a_fix_that_breaks_python_is_not_written_even_without_aoti000(tmp_path):
    """The engine re-parses fixed Python whatever the selection (`--select AOTI201` leaves AOTI000 out)."""

    class BreaksTheFile(DebugEnvVar):
        @classmethod
        def reader(cls, module):
            reader, broken = (
                super().reader(module),
                Fix(Applicability.UNSAFE, "break", (Edit("(", Position(1, 1), Position(1, 1)),)),
            )
            found = reader.findings
            reader.findings = lambda: [dataclasses.replace(finding, fix=broken) for finding in found()]
            return reader

    path = tmp_path / "a.py"
    path.write_text('import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n')
    source = SourceFile(path, "a.py", "python", path.read_bytes())
    outcome = process_source(source, FileContext.of([BreaksTheFile]), FixOptions(apply=True, unsafe=True))
    (error,) = outcome.errors
    assert error.message.startswith("fixes would break the file ("), error.message
    assert path.read_text() == 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'


_READ_CONFIG = """
import json, sys
from torch._inductor import config
keys = json.loads(sys.argv[1])
values = {}
for key in keys:
    node = config
    for part in key.split("."):
        node = getattr(node, part)
    values[key] = node
print(json.dumps(values))
"""


def _inductor_configs(keys: list[str], envs: list[dict[str, str]]) -> list[dict[str, object]]:
    """Read torch's own config values, in one fresh process per ``env`` (set before torch is imported); the
    processes run side by side."""
    clean = {k: v for k, v in os.environ.items() if k not in SWITCHES_BY_ENV_VAR}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _READ_CONFIG, json.dumps(keys)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**clean, **env},
            cwd=REPO,
        )
        for env in envs
    ]
    values = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr
        values.append(json.loads(stdout.splitlines()[-1]))
    return values


# A dotted key's last name set as an attribute, however the attribute is spelled; the same name as a keyword.
DOTTED_KEY_WRITES = [
    "torch._inductor.config.trace.enabled = True",
    "torch._inductor.config.trace . enabled = True",
    "torch._inductor.config.trace.\\\n    enabled = True",
    "(torch._inductor.config.trace.\n    enabled) = True",
    "(torch._inductor.config.trace.  # the trace\n    enabled) = True",
    "(torch._inductor.config.trace.\r\n    enabled) = True",
]


@pytest.mark.parametrize("write", DOTTED_KEY_WRITES)
def test_stage_one_passes_every_spelling_of_a_dotted_keys_attribute(write):
    text = f"import torch._inductor.config\n\n{write}\n"
    found = lint_text(text, select=("AOTI202",), prefilter=False).findings
    assert [f.code for f in found] == ["AOTI202"]
    assert DebugInductorConfig.could_match(text.encode())


def test_a_dotted_keys_last_name_as_a_keyword_is_no_setting_of_it():
    """`flags(enabled=True)` is in most of torch's files; only `trace.enabled` as an attribute sets the key."""
    for call in ("flags(enabled=True)", "flags(\n    enabled=True)", "flags(x,\n    enabled = 1)"):
        text = f"import torch._inductor\nimport torch\n\nwith torch.backends.cudnn.{call}:\n    pass\n"
        assert not lint_text(text, select=("AOTI202",), prefilter=False).findings
        assert not DebugInductorConfig.could_match(text.encode()), call
    # The single-part key `debug` is set by a keyword of a patch.
    text = "import torch._inductor.config\n\n@torch._inductor.config.patch(debug=True)\ndef f():\n    pass\n"
    assert [f.code for f in lint_text(text, select=("AOTI202",), prefilter=False).findings] == ["AOTI202"]
    assert DebugInductorConfig.could_match(text.encode())


@pytest.mark.torch
def test_table_agrees_with_torch_inductor_config():
    """Every config key exists in torch 2.13, and an env var of the table sets its key exactly for the values
    the table calls on (`TORCHINDUCTOR_NAN_ASSERTS=true` does not; `=1` does)."""
    paired = [s for s in DEBUG_SWITCHES if s.env_var and s.config_key]
    keys = sorted(SWITCHES_BY_CONFIG_KEY)
    on_value = {s.env_var: "3" if "PRINTER" in s.env_var else "1" for s in paired}
    # TORCH_COMPILE_DEBUG=true makes `import torch._inductor.config` itself fail (int("true")).
    spelled = [s for s in paired if s.env_var != "TORCH_COMPILE_DEBUG"]
    defaults, switched, spelled_out = _inductor_configs(keys, [{}, on_value, {s.env_var: "true" for s in spelled}])
    for switch in paired:
        key = switch.config_key
        assert not switch.is_on_value(defaults[key]), key
        assert switch.is_on_value(switched[key]), key
    for switch in spelled:
        assert switch.is_on_value("true") == switch.is_on_value(spelled_out[switch.config_key]), switch.env_var


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_discovery_never_opens_a_named_pipe(cli, tmp_path):
    os.mkfifo(tmp_path / "pipe")
    write(tmp_path, {"run.sh": "export CUDA_LAUNCH_BLOCKING=1\n"})
    result = cli(*SELECT, ".", cwd=tmp_path)
    assert result.stdout.startswith("run.sh:1:8: AOTI201"), result.stderr


# AOTI201 and AOTI202 in Python are read from ast and the semantic model alone: a run that shows no edits never
# parses the file with libcst, and reports what a run that builds the fixes' edits reports.

ON = 'os.environ["TORCH_USE_CUDA_DSA"] = "1"\n'  # an on setting: the file passes every prefilter stage
AST_ANSWERED = [
    'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    'import os\n\nos.environ.setdefault("TORCH_COMPILE_DEBUG", "1")\n',
    'import os\n\nos.environ["TORCH_LOGS"] = "+dynamo,output_code"\nx = os.environ["CUDA_LAUNCH_BLOCKING"]\n',
    'import os as o\n\no.environ["CUDA_LAUNCH_BLOCKING"] = "1"  # noqa: AOTI201\n',
    'from os import environ\n\nenviron["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    'from os import environ as env\n\nenv.setdefault("CUDA_LAUNCH_BLOCKING", "1")\n',
    'import os.path\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    'import os\n\na = os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',  # two targets: no fix
    'import os\n\nflag = os.environ.setdefault("CUDA_LAUNCH_BLOCKING", "1")\n',  # in an expression: no fix
    'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "0"\nos.environ["TORCH_LOGS"] = ""\n' + ON,  # off: nothing
    'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = flag\nos.environ["CUDA_LAUNCH_BLOCKING"] = 1\n' + ON,
    'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"; x = 1\n',
    'import os\n\nos.environ["CUDA_" "LAUNCH_BLOCKING"] = ("1")\n' + ON,
    'import os\n\nv = os.environ.get("CUDA_LAUNCH_BLOCKING", "1")\nw = os.getenv("TORCH_LOGS")\n' + ON,
    'import os\n\nclass T:\n    def setUp(self):\n        """é"""\n'
    '        os.environ["TORCH_SHOW_CPP_STACKTRACES"] = "1"\n',
    'import os\n\nasync def f():\n    s = "ünïcödé"; os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    'import os\n\ndef f():\n    os.environ["CUDA_LAUNCH_BLOCKING"] = (\n        "1"\n    )\n',
    # The module's own bindings (aoti_lint.model.semantic): an import in a `try` binds at module
    # level; a dict of the module is no environ, so its settings are none.
    'try:\n    import os\nexcept ImportError:\n    pass\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    'import os\n\nsettings = {}\nsettings["CUDA_LAUNCH_BLOCKING"] = "1"\n' + ON,
    # A function's own import, read after it in the function's body (``aoti_lint.model.semantic``).
    'def f():\n    import os\n    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    # The semantic model's answers: a name bound again or as a parameter, a read in a nested function or before
    # its import, a star import, a walrus in a test, a name in another Unicode spelling (Python's NFKC form).
    'import os\n\nos = fake\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    'import os\n\ndef f(os):\n    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    'def f():\n    import os\n\n    def g():\n        os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    'def f():\n    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n    import os\n',
    'from os import *\n\nenviron["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    'import os\n\nif (os := fake):\n    pass\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    'environ["CUDA_LAUNCH_BLOCKING"] = "1"\nfrom os import environ\n',
    'import os\n\uff4f\uff53.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n' + ON,
    'import os\nos.\uff45nviron["CUDA_LAUNCH_BLOCKING"] = "1"\n' + ON,
]
AST_ANSWERED += [
    'import os\n\nif debug:\n    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    'import os\n\nif ready:\n    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    'import os\n\nfor _ in range(2):\n    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    'import os\n\nos.environ.update({"CUDA_LAUNCH_BLOCKING": "1"})\n',
    'import os\n\nos.environ.update(CUDA_LAUNCH_BLOCKING="1")\n',
    'import os, subprocess\n\nsubprocess.run(cmd, env={**os.environ, "CUDA_LAUNCH_BLOCKING": "1"})\n',
    'import os\n\nos.putenv("CUDA_LAUNCH_BLOCKING", "1")\n',
    'import os\n\nos.environ[f"CUDA_LAUNCH_BLOCKING"] = "1"\nprint("CUDA_LAUNCH_BLOCKING")\n' + ON,
    'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"]: str = "1"\n' + ON,
    # Found by a differential fuzzer when libcst read these forms: a call in an `if` test, a form feed before the
    # key, a name in another Unicode spelling, a tree deeper than libcst's traversal goes.
    'import os\nif os.environ.setdefault("TORCH_COMPILE_DEBUG", "1"):\n    pass\n',
    'import os\n\x0cos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
    'import os\nos.environ.\uff53etdefault("CUDA_LAUNCH_BLOCKING", "1")\n' + ON,
    'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\nx = ' + "+".join(["1"] * 600) + "\n",
]


# AOTI202 is read from ast alone too: every text is answered there.

CONFIG_ON = "import torch._inductor.config as cfg\ncfg.nan_asserts = True\n"
CONFIG_AST_ANSWERED = [
    CONFIG_ON,
    "import torch._inductor.config as cfg\n\ncfg.aot_inductor.debug_compile = True\ncfg.debug = 1\n",
    "from torch._inductor import config\n\nconfig.trace.enabled = '1'  # noqa: AOTI202\n",
    "import torch\n\ntorch._inductor.config.debug = True; x = 1\n",
    "import torch._inductor.config\n\ndef f():\n    torch._inductor.config.nan_asserts = True\n",
    "from torch._inductor import config as c\n\nclass T:\n    def setUp(self):\n        c.debug = True\n",
    "import torch._inductor.config as cfg\n\na = cfg.debug = True\n",  # two targets: no fix
    "import torch._inductor.config as cfg\n\ncfg.debug = False\ncfg.trace.enabled = flag\n" + CONFIG_ON,  # off
    "import torch._inductor.config as cfg\n\ncfg.max_autotune = True\nx.debug = True\n" + CONFIG_ON,
    "import torch._dynamo.config as cfg\n\ncfg.debug = True\nimport torch._inductor.config\n",  # not inductor
    "import torch._inductor.config as cfg\n\ncfg.debug += 1\ncfg.nan_asserts: bool = True\n" + CONFIG_ON,
    # Bound to the config and to another module (a fallback import): the config's key.
    "try:\n    import torch._inductor.config as cfg\nexcept ImportError:\n    import other as cfg\ncfg.debug = True\n",
    # A function's own import, read after it in the function's body (``aoti_lint.model.semantic``).
    "def f():\n    import torch._inductor.config as cfg\n    cfg.debug = True\n",
    "import torch._inductor.config as cfg\n\ndef f(cfg):\n    cfg.debug = True\n",
    "def f():\n    import torch._inductor.config as cfg\n\n    def g():\n        cfg.debug = True\n",
    "from torch._inductor.config import *\nimport torch._inductor.config as cfg\ncfg.debug = True\n",
    "import torch._inductor.config as cfg\n\nif debug:\n    cfg.debug = True\n",
    "import torch._inductor.config as cfg\n\nwith ctx:\n    cfg.debug = True\n",
    "import torch._inductor.config as cfg\n\ncfg.patch(debug=True)\n" + CONFIG_ON,
    "import torch._inductor.config as cfg\n\ntorch.compile(m, options={'debug': True})\n" + CONFIG_ON,
    "import torch._inductor.config as cfg\n\n(cfg).debug = True\n",
    "import torch._inductor.config as cfg\n\ncfg.aot_inductor .debug_compile = True\n",
    "import torch._inductor.config as cfg\n\x0ccfg.debug = True\n",
    "import torch._inductor.config as \uff43fg\n\uff43fg.debug = True\n",
    "import torch._inductor.config as cfg\ncfg.debug = True\nx = " + "+".join(["1"] * 600) + "\n",
    # Found in review: a `patch` named through a subscript or a module alias; texts libcst reads otherwise than
    # Python (a line holding only a backslash, a continuation ending the file, a parenthesised annotated target,
    # `\N{...}` in an f-string: reported, the fix unavailable); a tree deeper than libcst's traversal goes.
    CONFIG_ON + "cfg.patch[0](nan_asserts=True)\n",
    "import torch._inductor.config as cfg\nimport torch._inductor.config.patch as p\ncfg.debug = True\np(debug=1)\n",
    "import torch._inductor.config as cfg\n\\\ncfg.debug = True\n",
    "import torch._inductor.config as cfg\ncfg.nan_asserts = True\\\r\n",
    CONFIG_ON + "(x): int = 1\n",
    CONFIG_ON + "x = f'{x:\\N{DIGIT ONE}}'\n",
    CONFIG_ON + "x = " + "a[" * 60 + "0" + "]" * 60 + "\n",
]
READINGS = [(DebugEnvVar, text) for text in AST_ANSWERED] + [
    (DebugInductorConfig, text) for text in CONFIG_AST_ANSWERED
]


def _reading(rule, text: str, edits: bool) -> list[tuple]:
    source = SourceFile(Path("m.py"), "m.py", "python", text.encode())
    result = check_source(source, FileContext.of([rule]), build_edits=edits)
    fixes = [None if f.fix is None else (f.fix.applicability, f.fix.message, f.fix.has_edits) for f in result.findings]
    return sorted(
        (f.code, f.message, f.start.row, f.start.column, f.end.row, f.end.column, str(fix), f.noqa_row)
        for f, fix in zip(result.findings, fixes, strict=True)
    )


@pytest.mark.parametrize(("rule", "text"), READINGS, ids=[f"{r.code}-{i}" for i, (r, _) in enumerate(READINGS)])
def test_python_is_read_once_and_the_findings_do_not_depend_on_building_edits(rule, text, monkeypatch):
    from aoti_lint.fixes import parse
    from aoti_lint.run import engine
    from aoti_lint.run.prefilter import prefiltered

    source = SourceFile(Path("m.py"), "m.py", "python", text.encode())
    context = FileContext.of([rule])
    wanted = prefiltered(source, context)
    assert wanted, "every case passes the prefilter"
    answered = engine.ast_answer(source, context, wanted) is not None
    assert answered
    parsed: list[str] = []
    original = parse.parse_module
    monkeypatch.setattr(parse, "parse_module", lambda src, txt: parsed.append(src.display_path) or original(src, txt))
    fast = _reading(rule, text, edits=False)
    assert bool(parsed) != answered, "a file the ast reading answers is never parsed with libcst"
    built = _reading(rule, text, edits=True)  # its fixes' edits built with libcst
    if "(unavailable: " in str(built):
        # A text libcst cannot read or rewrite: the same findings; only the run that builds the edits learns the
        # fix's fate.
        assert [finding[:-2] for finding in fast] == [finding[:-2] for finding in built]
    else:
        assert fast == built
    if text in (ON, CONFIG_ON):
        assert fast, "the case reports"


def test_a_cached_ast_answer_is_read_again_by_libcst_for_a_format_that_shows_edits(cli, tmp_path):
    write(tmp_path, {"m.py": 'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'})
    first = cli(*SELECT, "--cache-dir", "c", ".", cwd=tmp_path)
    assert "m.py:3:12: AOTI201" in first.stdout
    shown = json.loads(cli(*SELECT, "--cache-dir", "c", "--output-format", "json", ".", cwd=tmp_path).stdout)
    assert [item["fix"]["edits"] != [] for item in shown] == [True]


@pytest.mark.parametrize(
    ("rule", "count", "seed"),
    [
        (DebugEnvVar, 400, 1),
        (DebugInductorConfig, 400, 1),
        pytest.param(DebugEnvVar, 6000, 7, marks=pytest.mark.slow),
        pytest.param(DebugInductorConfig, 6000, 7, marks=pytest.mark.slow),
    ],
    ids=["AOTI201", "AOTI202", "AOTI201-full", "AOTI202-full"],
)
def test_findings_do_not_depend_on_building_edits_on_generated_settings(rule, count, seed):
    """For every generated text, what a run that shows no edits reports (read from ast alone) is what a run that
    builds the fixes' edits with libcst reports, with the rule alone and with every rule."""
    from aoti_lint.rules import ALL_RULES
    from aoti_lint.run import engine
    from aoti_lint.run.prefilter import prefiltered
    from tests.ast_reading_texts import config_texts, texts

    generated = texts(count, seed) if rule is DebugEnvVar else config_texts(count, seed)

    def shown(result) -> tuple[list, list]:
        findings = sorted(
            (f.code, f.message, f.start.row, f.start.column, f.end.row, f.end.column, f.noqa_row, str(_fix(f.fix)))
            for f in result.findings
        )
        return findings, sorted(error.message for error in result.errors)

    answered = 0
    for text in generated:
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for context in (FileContext.of([rule]), FileContext.of(ALL_RULES)):
            source = SourceFile(Path("m.py"), "m.py", "python", text.encode())
            wanted = prefiltered(source, context)
            answered += bool(wanted) and engine.ast_answer(source, context, wanted) is not None
            fast = check_source(source, context, build_edits=False)
            assert shown(fast) == shown(check_source(source, context, build_edits=True)), text
    assert answered > count / 10, "the sweep must reach the ast reading"


def _fix(fix) -> object:
    return None if fix is None else (fix.applicability, fix.message, fix.has_edits)


def test_the_yaml_scan_looks_at_each_mapping_once_however_many_jobs(monkeypatch):
    """Whether a step is under an `if:` that mentions debug is asked of every mapping above it; the jobs of a
    workflow are siblings, and asking each job's steps about all of them was quadratic in the jobs (8,000 jobs: 6 s).
    Counted as the siblings looked at, for twice the jobs."""
    looked: list[int] = []
    original = yaml_scanner.Node.siblings

    def siblings(node):
        found = original(node)
        looked.append(len(found))
        return found

    monkeypatch.setattr(yaml_scanner.Node, "siblings", siblings)
    job = '  job{i}:\n    env:\n      CUDA_LAUNCH_BLOCKING: "1"\n'
    job += "    steps:\n      - run: TORCH_COMPILE_DEBUG=1 pytest\n"
    counts = []
    for jobs in (200, 400):
        looked.clear()
        found = list(yaml_scanner.scan("jobs:\n" + "".join(job.format(i=i) for i in range(jobs))))
        assert len(found) == 2 * jobs
        counts.append(sum(looked))
    assert counts[1] <= 2 * counts[0] + 10, counts


DEBUGGING_TOOLS = {
    "tools/minify_graph.py": "import torch._inductor.config as cfg\n\ncfg.trace.enabled = True\n",
    "scripts/debug/run.sh": "export CUDA_LAUNCH_BLOCKING=1\npython serve.py\n",
    "run_debug.sh": "export TORCHINDUCTOR_NAN_ASSERTS=1\npython serve.py\n",
    "repro.py": 'import os\n\nos.environ["AOTI_RUNTIME_CHECK_INPUTS"] = "1"\n',
}


@pytest.mark.parametrize("output", ["concise", "json"])
def test_a_debugging_tool_keeps_its_switches_reported_and_unfixed(cli, tmp_path, output):
    """AOTI201/AOTI202 report the switches of a file that is a debugging tool on purpose (by its folder or its
    name), but offer no fix there: --fix --unsafe-fixes leaves it as it is; the same switch elsewhere is fixed."""
    for name, text in DEBUGGING_TOOLS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "serve.py").write_text(DEBUGGING_TOOLS["repro.py"])
    checked = cli("--isolated", "--no-cache", "--output-format", output, ".", cwd=tmp_path)
    assert checked.returncode == 1
    if output == "json":
        findings = json.loads(checked.stdout)
        assert {(f["filename"].split(str(tmp_path) + os.sep)[-1], f["fix"] is None) for f in findings} == {
            *((name, True) for name in DEBUGGING_TOOLS),
            ("serve.py", False),
        }
        return
    fixed = cli("--isolated", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert fixed.returncode == 1
    for name, text in DEBUGGING_TOOLS.items():
        assert (tmp_path / name).read_text() == text, name
        assert name in fixed.stdout
    assert "AOTI_RUNTIME_CHECK_INPUTS" not in (tmp_path / "serve.py").read_text()


@pytest.mark.parametrize(
    ("path", "tool"),
    [
        ("tools/x.py", True),
        ("a/debug/b.sh", True),
        ("scripts/debug/run.sh", True),
        ("run_debug.sh", True),
        ("minify_graph.py", True),
        ("ci/repro-1234.yaml", True),
        ("src/serve.py", False),
        ("debugger.py", False),
        ("reproducible.py", False),
        ("tools.py", False),
        ("deploy/.env", False),
    ],
)
def test_what_counts_as_a_debugging_tool(path, tool):
    from aoti_lint.rules.debug_switches import is_debugging_tool

    assert is_debugging_tool(path) is tool
