"""Rule fixtures, by code: each file ``tests/fixtures/rules/<CODE>/X.py`` (or ``.cpp``) is linted with every rule
and its findings compared, code by code, with ``X.py.<CODE>.expected``; the prefilter is checked on them all."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from aoti_lint.entry_point import could_hold_a_finding
from aoti_lint.model.name_index import code_index
from aoti_lint.read.source import PYTHON_KINDS, file_kind
from aoti_lint.rules import ALL_RULES, RULES_BY_CODE, PythonRule
from aoti_lint.rules.base import ProjectRule, tokens_match
from tests.conftest import FIXTURES
from tests.helpers import by_code, expected_by_code, lint_text, reported

LINT_FIXTURES = sorted(p for p in (FIXTURES / "rules").glob("AOTI*/*") if p.is_file() and file_kind(p) is not None)


@pytest.mark.parametrize("path", LINT_FIXTURES, ids=[f"{p.parent.name}/{p.name}" for p in LINT_FIXTURES])
def test_fixture_output(cli, path: Path, tmp_path: Path):
    expected = expected_by_code(path)
    assert path.parent.name in expected, "a fixture has expectations for the code it is filed under"
    # Linted alone, as a project of its own: a run reads its project's other files for the flows' sake (the
    # expectation files beside it name the same artifacts).
    shutil.copyfile(path, tmp_path / path.name)
    result = cli(path.name, "--quiet", "--isolated", cwd=tmp_path)
    assert by_code(result.stdout) == reported(expected)
    assert result.returncode == (1 if reported(expected) else 0), result.stderr


def _all_linted_fixtures() -> list[Path]:
    """Every fixture aoti-lint reads: Python, and the shell, Dockerfile, YAML and .env files."""
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file() and file_kind(p) is not None)


# Shapes that a byte or text stage could miss if it were sloppy: aliases, comments and line breaks between a
# key and its value, chained assignments, parenthesised targets. Each with the codes the full analysis reports.
_FAKE = 'import torch\n\n@torch.library.register_fake("a::b")\ndef k(x):\n'
TRICKY_FORMS = {
    # The kernels' ast stage: `range` under another name still loops; an `impl` keyed in its Library counts.
    "range-alias-in-fake-kernel": (
        "import torch\nfrom builtins import range as upto\n\n\n@torch.library.register_fake('ns::op')\n"
        "def op_fake(x):\n    for _ in upto(x.shape[0]):\n        pass\n    return x.new_empty(x.shape)\n",
        ["AOTI302"],
    ),
    "zip-loop-in-fake-kernel": (
        "import torch\n\n\n@torch.library.register_fake('ns::op')\n"
        "def op_fake(xs, n):\n    for a, b in zip(xs, n):\n        pass\n    return xs[0].new_empty(xs[0].shape)\n",
        [],
    ),
    "library-keyed-impl": (
        "import torch\n\nlib = torch.library.Library('ns', 'IMPL', 'Meta')\n\n\ndef rows_meta(x):\n"
        "    if x.shape[0] == 4:\n        return x\n    return x.new_empty(x.shape)\n\n\n"
        "lib.impl('rows', rows_meta)\n",
        ["AOTI302"],
    ),
    "environ-alias": ('from os import environ as E\nE["CUDA_LAUNCH_BLOCKING"] = "1"\n', ["AOTI201"]),
    "putenv-alias": ('from os import putenv as set_env\nset_env("TORCH_USE_CUDA_DSA", "1")\n', ["AOTI201"]),
    "subprocess-alias": ('import subprocess as sp\nsp.run(cmd, env={"CUDA_LAUNCH_BLOCKING": "1"})\n', ["AOTI201"]),
    "chained-subscript": (
        'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = os.environ["OTHER"] = "1"\n',
        ["AOTI201"],
    ),
    "comment-between": (
        'import os\nos.environ.update({\n    "TORCH_LOGS":  # why\n        "+dynamo",\n})\n',
        ["AOTI201"],
    ),
    "parenthesised-value": (
        'import os\nos.environ.setdefault(\n    "CUDA_LAUNCH_BLOCKING",\n    (\n        "1"\n    ),\n)\n',
        ["AOTI201"],
    ),
    "keyword-spaces": ('import os\nos.environ.update(TORCH_SHOW_CPP_STACKTRACES = "1")\n', ["AOTI201"]),
    "env-dict-call": (
        'import os, subprocess\nsubprocess.Popen(cmd, env=dict(os.environ, CUDA_LAUNCH_BLOCKING="1"))\n',
        ["AOTI201"],
    ),
    "crlf-continuation": ('import os\r\nos.environ["CUDA_LAUNCH_BLOCKING"] = \\\r\n    "1"\r\n', ["AOTI201"]),
    "config-chained": ("import torch._inductor.config as cfg\ncfg.debug = other = True\n", ["AOTI202"]),
    "config-parenthesised-target": ("from torch._inductor import config\n(config.nan_asserts) = True\n", ["AOTI202"]),
    "config-alias-trace": ("from torch._inductor.config import trace as T\nT.enabled = 1\n", ["AOTI202"]),
    "patch-alias": (
        "from torch._inductor.config import patch as p\n\n@p(debug_index_asserts=True)\ndef f():\n    pass\n",
        ["AOTI202"],
    ),
    "patch-positional": ('import torch\nwith torch._inductor.config.patch("debug", "1"):\n    pass\n', ["AOTI202"]),
    "compile-alias-dict": (
        "from torch._inductor import aoti_compile_and_package as build\nopts = {}\n"
        'opts["triton.debug_sync_kernel"] = (True)\nbuild(ep, inductor_configs=opts)\n',
        ["AOTI202"],
    ),
    "torch-compile-options": (
        'import torch\nm = torch.compile(model, options={\n    "trace.enabled":  # on purpose?\n    True})\n',
        ["AOTI202"],
    ),
    "relative-config-silent": ("from . import config\nconfig.debug = True\n", []),
    # libcst names a call through a module alias or a subscript after it: the ast stage must keep them (review).
    "patch-module-alias": ("import torch._inductor.config.patch as p\np(nan_asserts=True)\n", ["AOTI202"]),
    "patch-subscript": ("import torch._inductor.config as cfg\ncfg.patch[0](nan_asserts=True)\n", ["AOTI202"]),
    "off-values-silent": (
        'import os\nimport torch._inductor.config as cfg\nos.environ["CUDA_LAUNCH_BLOCKING"] = "0"\n'
        "cfg.debug = False\ncfg.nan_asserts = None\n",
        [],
    ),
    # `device=` goes to the loaded model's call, not to the loader (libcst names a call after its callee).
    "load-of-a-call": ('import torch\ntorch._inductor.aoti_load_package("m.pt2")(x, device="cuda")\n', []),
    "aot-load-alias": ('from torch._export import aot_load as old\nold("model.pt2", "cpu")\n', ["AOTI002", "AOTI003"]),
    # Fake/meta kernels under every registration and spelling the ast stage (kernel_prefilter) must keep.
    "fake-alias-int": (
        'from torch.library import register_fake as rf\n\n@rf("a::b")\ndef k(x):\n'
        "    return x.new_empty(int(x.shape[0]))\n",
        ["AOTI301"],
    ),
    "fake-call-keyword-local-size": (
        "import torch\n\ndef k(x):\n    n = x.size(0)\n    if n > 8:\n        return x\n    return x.clone()\n\n"
        'torch.library.register_fake("a::b", func=k)\n',
        ["AOTI302"],
    ),
    "fake-lambda-int": (
        'import torch\ntorch.library.register_fake("a::b", lambda x: x.new_empty(int(x.shape[0])))\n',
        ["AOTI301"],
    ),
    "fake-math-module-alias": (
        'import math as m\nimport torch\n\n@torch.library.register_fake("a::b")\ndef k(x):\n'
        "    return x.new_empty(m.floor(x.numel() / 2))\n",
        ["AOTI301"],
    ),
    "fake-math-function-alias": (
        'from math import ceil as up\nimport torch\n\n@torch.library.impl_abstract("a::b")\ndef k(x):\n'
        "    return x.new_empty(up(x.size(0) / 2))\n",
        ["AOTI301", "AOTI303"],
    ),
    "meta-library-impl-range": (
        'import torch\nlib = torch.library.Library("a", "FRAGMENT")\n\ndef k(x):\n    for i in range(x.shape[0]):\n'
        '        pass\n    return x\n\nlib.impl("b", k, "Meta")\n',
        ["AOTI302"],
    ),
    "fake-one-line-raise": (
        _FAKE + '    if (x.shape[0]\n        > 8\n    ): raise ValueError("x")\n    return x\n',
        ["AOTI302"],
    ),
    "fake-indented-raise-silent": (
        _FAKE + '    if x.shape[0] > 8:\n        raise ValueError("x")\n    return x\n',
        [],
    ),
    "fake-chained-ifexp": (
        _FAKE + "    return x if 0 < x.shape[0] * 2 <= -64 else x.t()\n",
        ["AOTI302"],
    ),
    "fake-custom-op-data": (
        'import torch\n\n@torch.library.custom_op("a::b", mutates_args=())\ndef op(x: torch.Tensor) -> torch.Tensor:\n'
        "    return x\n\ndef k(x):\n    return x.new_empty((x > 0).sum().item())\n\nop.register_fake(k)\n",
        ["AOTI301"],
    ),
    "fake-comprehension-range-silent-in-helper": (
        _FAKE + "    def helper():\n        return [i for i in range(x.shape[0])]\n    return x\n",
        [],
    ),
    "fake-comprehension-range": (
        _FAKE + "    return x.new_empty(len([i for i in range(1, x.size(1))]))\n",
        ["AOTI302"],
    ),
    # AOTI201's text stage: a name and a value as a call's first arguments after a comment, a keyword after one.
    "putenv-after-comment": (
        'import os\n\nos.putenv(  # for the repro\n    "CUDA_LAUNCH_BLOCKING", "1")\n',
        ["AOTI201"],
    ),
    "environ-update-keyword-after-comment": (
        'import os\n\nos.environ.update(\n    # debugging\n    CUDA_LAUNCH_BLOCKING="1")\n',
        ["AOTI201"],
    ),
    # AOTI202's bytes test: a key as a call's first argument after a comment, a keyword after a comment line.
    "config-patch-key-after-comment": (
        'import torch._inductor.config as config\n\nwith config.patch(  # why\n    "debug", True):\n    pass\n',
        ["AOTI202"],
    ),
    "config-patch-keyword-after-comment": (
        "import torch._inductor.config as config\n\nwith config.patch(\n    # traced\n    debug=True,\n):\n    pass\n",
        ["AOTI202"],
    ),
    # AOTI001's text stage: the parent attribute behind parentheses, comments with brackets in an import's
    # parentheses, a continued import line, the parent imported under another name.
    "aot-compile-parenthesized-parent": (
        "import torch\n\nso = (torch._export  # the old API\n).aot_compile(m, (x,))\n",
        ["AOTI001"],
    ),
    "aot-compile-import-with-comments": (
        "from torch._export import (  # see export()\n    aot_compile,  # (old)\n)\n\nso = aot_compile(m, (x,))\n",
        ["AOTI001"],
    ),
    "aot-compile-continued-import": (
        "from torch import \\\n    _export as te  # (see)\n\nso = te.aot_compile(m, (x,))\n",
        ["AOTI001"],
    ),
    "fake-builtins-int": (
        'import builtins\nimport torch\n\n@torch.library.register_fake("a::b")\ndef k(x):\n'
        "    return x.new_empty(builtins.int(x.stride(0)))\n",
        ["AOTI301"],
    ),
}


def _sources(sweep: str):
    """``every``: every fixture, example and tricky form; ``sample``: each rule's first INVALID example and the
    tricky forms."""
    if sweep == "every":
        for path in _all_linted_fixtures():
            # The full path: extension-less scripts are recognised by their shebang.
            yield path.name, str(path), path.read_bytes().decode("utf-8", "replace")
    for rule in ALL_RULES:
        examples = rule.INVALID + rule.VALID if sweep == "every" else rule.INVALID[:1]
        for index, example in enumerate(examples):
            yield f"{rule.code}-example-{index}", example.filename, example.source
    for name, (text, _) in TRICKY_FORMS.items():
        yield name, "tricky.py", text


def _passes_every_stage(rule, filename: str, text: str) -> bool:
    """Whether ``rule`` passes each prefilter stage on ``text``: bytes, then (Python) text and ast index; for a
    project rule, the stages that decide whether the file is summarised too. A Python file that passes the screen
    and imports modules of the project passes stage one with their bytes beside its own, and no later stage
    (``prefilter.with_imported_modules``)."""
    data = text.encode("utf-8")
    kind = file_kind(Path(filename)) or "python"
    if kind in PYTHON_KINDS and issubclass(rule, PythonRule | ProjectRule) and could_hold_a_finding(data):
        from aoti_lint.read.project_modules import followed_imports, with_imports

        followed = followed_imports(filename, text)
        if followed and rule.could_match(with_imports(data, followed)):
            return True
    if not rule.could_match(data):
        return False
    # What the entry point's screen needs (aoti_lint.entry_point): a whole group of the rule's, one of its own.
    assert tokens_match(rule.triggers, data), (rule.code, filename)
    assert could_hold_a_finding(data), (rule.code, filename)
    if kind not in PYTHON_KINDS or not issubclass(rule, PythonRule | ProjectRule):
        return True
    index = code_index(text)
    if issubclass(rule, ProjectRule):
        return (
            rule.wants_summary(data)
            and rule.wants_summary_python(text)
            and (index is None or rule.wants_summary_code(index))
        )
    return rule.could_match_python(text) and (index is None or rule.could_match_code(index))


def _fix_shown(fix) -> object:
    return None if fix is None else (fix.applicability, fix.message, fix.has_edits)


def test_tricky_forms_report_what_they_should():
    for name, (text, codes) in TRICKY_FORMS.items():
        assert sorted(f.code for f in lint_text(text, "tricky.py", prefilter=False).findings) == codes, name


# The whole sweep lints every fixture and example twice (minutes of CPU on a small machine): the full suite only.
# The sample, one example of each rule and the tricky forms, is the fast suite's share.
@pytest.mark.parametrize("sweep", ["sample", pytest.param("every", marks=pytest.mark.slow)])
def test_prefilter_is_sound(sweep):
    """Run every rule on every fixture and example without the prefilter: each finding's rule must pass every
    stage (bytes, text, ast), and the prefiltered run must report the very same findings."""
    checked = 0
    rules_seen = set()
    for name, filename, text in _sources(sweep):
        unfiltered = lint_text(text, filename, prefilter=False)
        for finding in unfiltered.findings:
            if finding.code == "AOTI000":
                continue
            rule = RULES_BY_CODE[finding.code]
            assert _passes_every_stage(rule, filename, text), (name, finding)
            checked += 1
            rules_seen.add(rule.code)
        filtered = lint_text(text, filename)
        # As a run that shows no edits reads it: some rules are read from `ast` alone (AstRule).
        without_edits = lint_text(text, filename, build_edits=False)

        def shown(result):
            return sorted(
                (f.code, f.start.row, f.start.column, f.end.row, f.end.column, f.message, _fix_shown(f.fix))
                for f in result.findings
                if f.code != "AOTI000"
            )

        assert shown(filtered) == shown(unfiltered) == shown(without_edits), name
    assert checked > (40 if sweep == "every" else len(ALL_RULES))
    assert rules_seen == {rule.code for rule in ALL_RULES} - {"AOTI000"}  # AOTI000 is left out above
