"""AOTI201 debug-env-var: a debug environment variable switched on, in Python, shell, Dockerfiles, YAML and
``.env`` files."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from aoti_lint.diagnostics import Finding
from aoti_lint.knowledge.debug_switches import (
    SWITCHES_BY_ENV_VAR,
    DebugSwitch,
    message,
)
from aoti_lint.knowledge.references import AOTI_DEBUGGING_GUIDE, CUDA_ENV_VARS, INDUCTOR_CONFIG_SOURCE
from aoti_lint.lazy import LazyPattern
from aoti_lint.read.source import PYTHON_KINDS
from aoti_lint.rules.base import AstModule, AstReader, AstRule, Invalid, TextRule, Valid
from aoti_lint.rules.debug_switches import (
    GAP,
    STRING_VALUE,
    follows_callee,
    opens_call,
    quoted_setting_pattern,
    remove_fix,
)
from aoti_lint.rules.env_setting_writes import EnvSettingWrites

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.read.source import SourceFile
    from aoti_lint.scanners import EnvSetting

_IMPORTS_OS = LazyPattern(r"^[ \t]*(?:import[ \t]+os\b|from[ \t]+os[ \t]+import\b)", re.MULTILINE)


# AOTI201 in Python: a switch's name in quotes with a string value (`environ["K"] = ...`, `{"K": "1"}`,
# `setdefault("K", "1")`), or as a keyword with a string value (`update(K="1")`, `dict(os.environ, K="1")`).
_ENV_NAMES = b"|".join(re.escape(name.encode()) for name in SWITCHES_BY_ENV_VAR)
# A read with a default (`os.environ.get("K", "0")`, `os.getenv("K", "1")`) is matched as such and passed over:
# an attribute named `get` never resolves to `setdefault` or `putenv`. The groups tell the forms apart: a
# subscript assignment (of a string, or chained) and a dict entry settle it; a key and a value only as a call's two
# arguments (``could_match_python``), a keyword only in a call.
_ENV_SETTING = (
    rb"(?P<read>\.(?:get|getenv)\("
    + GAP
    + rb")?"
    + quoted_setting_pattern(_ENV_NAMES, STRING_VALUE)
    + rb"|(?P<keyword>[(,])"
    + GAP
    + rb"(?:"
    + _ENV_NAMES
    + rb")"
    + GAP
    + rb"="
    + GAP
    + STRING_VALUE
).decode()

# What every match of _ENV_SETTING holds from a name on: its closing quote and what sets it (`] =`, or `:`/`,` and
# a string: a key), or `=` and a string (a keyword). _ENV_SETTING starts with an optional group and a class of
# quotes, which `re` tries at every position of a text; ``_settings`` tries it only where a match may start
# before a name that one of these follows (the names found at C speed).
_AFTER_KEY = LazyPattern((rb"[\"']" + GAP + rb"(?:\]" + GAP + rb"=(?!=)|[:,]" + GAP + STRING_VALUE + rb")").decode())
_AFTER_NAME = LazyPattern((GAP + rb"=" + GAP + STRING_VALUE).decode())
_SETTING = LazyPattern(_ENV_SETTING)
# A line that _ENV_SETTING's gaps may cross whole: blanks, a comment, a line continuation.
_GAP_LINE = LazyPattern(r"\s*(?:#.*|\\\r?)?")


def _sets(text: str, match: re.Match[str]) -> bool:
    """Whether a match of ``_ENV_SETTING`` may set its name as the code stage reads settings: not a read; a key and a
    value as a call's two arguments (``f("K", "1")``, not a tuple's items); a keyword in a call (not `(K="1"` in a
    docstring)."""
    if match["read"] is not None:
        return False
    if match["settled"] or match["entry"] or match["keyword"] == ",":
        return True
    data = text.encode()
    at = match.start() if text.isascii() else len(text[: match.start()].encode())
    return follows_callee(data, at) if match["keyword"] else opens_call(data, at)


def _settings(text: str) -> Iterator[re.Match[str]]:
    """The matches of ``_ENV_SETTING`` in ``text``, as ``re.finditer`` gives them: every match holds a name that
    ``_AFTER_KEY`` or ``_AFTER_NAME`` follows, and starts at most a few lines before it (``_earliest_start``); only
    those stretches are tried, each position once."""
    stretches = []
    for name in SWITCHES_BY_ENV_VAR:
        at = text.find(name)
        while at != -1:
            end = at + len(name)
            if (at and text[at - 1] in "\"'" and _AFTER_KEY.match(text, end)) or _AFTER_NAME.match(text, end):
                stretches.append((_earliest_start(text, at), at))
            at = text.find(name, at + 1)
    stretches.sort()
    tried = 0  # every position before it either failed or lies in a match found
    for low, high in stretches:
        at = max(low, tried)
        while at < high:
            match = _SETTING.match(text, at)
            if match is None:
                at += 1
            else:
                yield match
                at = match.end()
        tried = max(tried, at)


def _earliest_start(text: str, at: int) -> int:
    """Where a match of ``_ENV_SETTING`` holding the name at ``at`` may start at the earliest: on the name's line
    when something other than blanks (and its quote) precedes the name there, the prefix of the match; else on the
    closest line before that its gaps cannot cross whole."""
    start = text.rfind("\n", 0, at) + 1
    head = text[start:at]
    if head[-1:] in ('"', "'"):
        head = head[:-1]
    if head and not head.isspace():
        return start
    while start > 0:
        end = start - 1
        start = text.rfind("\n", 0, end) + 1
        if not _GAP_LINE.fullmatch(text, start, end):
            return start
    return 0


class DebugEnvVar(AstRule, TextRule):
    """
    ## What it does
    Finds debug environment variables set to an "on" value wherever a project sets them: in Python
    (`os.environ[K] = V`, `os.environ.setdefault`, `os.environ.update`, `os.putenv`, an `env=` mapping passed
    to `subprocess`; the dict given to `update` or `env=` may be a variable assigned a dict display once, in
    the module or the function), shell scripts (`export K=V`, `K=V cmd`, `env K=V cmd`), Dockerfiles (`ENV`, and the
    shell of `RUN`), YAML (`env:` / `environment:` / `variables:` mappings in map, list and Kubernetes
    `name`/`value` forms, `run:` scripts, `echo "K=V" >> $GITHUB_ENV`), `.env` files and Makefiles (`export K=V`,
    and each recipe line as shell).

    The switches are those of the AOTInductor debugging guide: `AOTI_RUNTIME_CHECK_INPUTS`,
    `TORCHINDUCTOR_NAN_ASSERTS`, `TORCHINDUCTOR_RUNTIME_TRITON_NAN_ASSERTS`, `CUDA_LAUNCH_BLOCKING`,
    `PYTORCH_NO_CUDA_MEMORY_CACHING`, `AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER`,
    `AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT`, `AOT_INDUCTOR_DEBUG_COMPILE`, `TORCHINDUCTOR_DEBUG_COMPILE`,
    `TORCH_COMPILE_DEBUG`, `DUMP_AOTI_MINIFIER`, `TORCH_LOGS`, `TORCH_SHOW_CPP_STACKTRACES` and
    `TORCH_USE_CUDA_DSA`. Off values (`0`, `""`, `false`, `off`), values torch does not read as on (the
    switches it compares with `"1"`, e.g. `TORCHINDUCTOR_NAN_ASSERTS=true`), `TORCH_LOGS` values that only
    turn logging down (`-dynamo`), values that are not literals (`$DEBUG`, `${{ inputs.x }}`), reads, comments and
    settings inside an `if` whose condition mentions "debug" are not reported. Cache locations, compile
    threads and autotuning are not debug switches and are never reported.

    ## Why is this bad?
    These switches exist to hunt a crash, and each has a price. Some are baked into the AOTI package when
    it is compiled (NaN asserts, the intermediate value printer, debug compile): a build script that
    leaves one on ships a slow package, and unsetting the variable at run time does not help; the package
    must be rebuilt. Others are read at run time (`CUDA_LAUNCH_BLOCKING` makes every kernel launch
    synchronous, `PYTORCH_NO_CUDA_MEMORY_CACHING` sends every allocation to the driver) and slow every run
    of the process that inherits them. The message names the switch, its cost and when it acts.

    ## Known problems
    The non-Python files are read line by line, not parsed, and only what is certain is reported: a bare
    shell assignment (`K=V` without `export`), heredoc bodies, YAML flow collections (`env: {K: V}`),
    anchors, folded (`>`) `run:` scalars and multi-line values are not read. Docker does not allow a
    trailing comment on an `ENV` line: to keep one on purpose there, use a file-level
    `# aoti-lint: noqa: AOTI201` or `per-file-ignores`. `TORCH_USE_CUDA_DSA` only acts when PyTorch itself
    is built from source.

    ## Fix safety
    The fix removes the setting: the Python statement or dict entry, the `export` line, the inline
    prefix (the command stays), the `ENV` pair (the other pairs stay), the YAML entry, the `.env` line, the
    Makefile's `export` line.
    In Python it leaves nothing behind that a person would delete by hand: an `env=` left holding only
    `**os.environ` (or `dict(os.environ)`) goes, since the child inherits that anyway; an
    `os.environ.update(...)` left empty goes (inside an expression, where it cannot, there is no fix);
    `import os` / `from os import environ` go once nothing uses them; the blank lines around a removed
    statement merge instead of piling up.
    It is unsafe: the switch may be wanted where it is, e.g. in a job that exists to debug.
    There is no fix in a file that is a debugging tool on purpose: one under a `tools/`, `debug/` or
    `debugging/` folder (`scripts/debug/` too), or whose name has the word `debug`, `minify`, `minifier`,
    `repro` or `reproducer` (`run_debug.sh`, `minify_graph.py`); the finding stays. To silence such files,
    use per-file-ignores (docs/configuration.md, "Debugging tools").
    Add `# noqa: AOTI201` at the end of the line to keep one on purpose.
    """

    code = "AOTI201"
    name = "debug-env-var"
    references = (AOTI_DEBUGGING_GUIDE, CUDA_ENV_VARS, INDUCTOR_CONFIG_SOURCE)
    summary = "A debug environment variable is switched on"
    fix_availability = "sometimes"
    file_kinds = PYTHON_KINDS | {"shell", "dockerfile", "yaml", "env", "makefile"}
    triggers = tuple((name.encode(),) for name in SWITCHES_BY_ENV_VAR)

    @classmethod
    def could_match_code(cls, code: Any) -> bool:
        # In Python a switch is set by a literal name with a literal "on" value: `environ[K] = V`,
        # `setdefault(K, V)` / `putenv(K, V)`, `update(K=V)` / `update({K: V})`, `env={K: V}` /
        # `env=dict(os.environ, K=V)`: each is a literal setting. Reads (`os.environ.get(K)`) are not.
        for key, value in code.literal_settings:
            switch = SWITCHES_BY_ENV_VAR.get(key)
            if switch is not None and isinstance(value, str) and switch.is_on_value(value):
                return True
        return False

    @classmethod
    def could_match_python(cls, text: str) -> bool:
        return any(_sets(text, match) for match in _settings(text))

    @classmethod
    def reader(cls, module: AstModule) -> AstReader:
        return EnvSettingWrites(cls, module)

    @classmethod
    def tidy_after_fix(cls, text: str) -> str:
        """`import os` / `from os import environ` that the removed settings were the last users of."""
        if not _IMPORTS_OS.search(text):  # also keeps shell, YAML and .env files away from the Python parser
            return text
        from aoti_lint.fixes.unused_imports import drop_unused

        return drop_unused(text, lambda module, name, _: module == "os" and name in (None, "environ", "putenv"))

    @classmethod
    def check(cls, source: SourceFile) -> list[Finding]:
        findings = []
        for setting in cls._scanner(source.kind)(source.text):
            switch = SWITCHES_BY_ENV_VAR.get(setting.name)
            if switch is None or not cls._reportable(switch, setting):
                continue
            findings.append(
                cls.finding(
                    source,
                    setting.start,
                    setting.end,
                    message(switch, setting.name),
                    remove_fix(setting.name, setting.removal, source.display_path),
                )
            )
        return findings

    @staticmethod
    def _scanner(kind: str) -> Callable[[str], Iterator[EnvSetting]]:
        from aoti_lint.scanners import dockerfile, dotenv, makefile, shell, yaml

        scanners = {"shell": shell.scan, "dockerfile": dockerfile.scan, "yaml": yaml.scan, "env": dotenv.scan}
        return {**scanners, "makefile": makefile.scan}[kind]

    @staticmethod
    def _reportable(switch: DebugSwitch, setting: EnvSetting) -> bool:
        return setting.value is not None and switch.is_on_value(setting.value) and not setting.under_debug_condition

    VALID = [
        Valid(
            """
            import os
            env = dict(os.environ)
            env["CUDA_LAUNCH_BLOCKING"] = "1"
            child_env = os.environ.copy()
            child_env["CUDA_LAUNCH_BLOCKING"] = "0"
            """
        ),
        Valid(
            """
            import os

            blocking = os.environ.get("CUDA_LAUNCH_BLOCKING", "0")
            os.environ["CUDA_LAUNCH_BLOCKING"] = "0"
            os.environ["TORCH_LOGS"] = "-dynamo"
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = "/tmp/inductor"
            os.environ["TORCHINDUCTOR_NAN_ASSERTS"] = flag
            # os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
            """
        ),
        Valid(
            """
            import os

            if args.debug:
                os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
            if os.environ.get("DEBUG_CUDA") == "1":
                os.environ.update({"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"})
            """
        ),
        Valid(
            """
            env = {"CUDA_LAUNCH_BLOCKING": "1"}
            environ = {}
            environ["CUDA_LAUNCH_BLOCKING"] = "1"
            """
        ),
        Valid(
            """
            #!/bin/bash
            # export CUDA_LAUNCH_BLOCKING=1
            export CUDA_LAUNCH_BLOCKING=0
            export TORCHINDUCTOR_CACHE_DIR=/tmp/cache
            if [ -n "$DEBUG" ]; then
              export CUDA_LAUNCH_BLOCKING=1
            fi
            CUDA_LAUNCH_BLOCKING=$BLOCKING python train.py
            """,
            filename="train.sh",
        ),
        Valid(
            """
            FROM python:3.11
            ENV TORCH_LOGS=-dynamo TORCHINDUCTOR_COMPILE_THREADS=8
            """,
            filename="Dockerfile",
        ),
        Valid(
            """
            jobs:
              debug:
                if: ${{ inputs.debug }}
                env:
                  CUDA_LAUNCH_BLOCKING: 1
            """,
            filename="ci.yml",
        ),
        Valid("CUDA_LAUNCH_BLOCKING=0\nTORCH_LOGS=\n", filename="app.env"),
        Valid(
            """
            import os
            import subprocess

            env = dict(os.environ)
            if fast:
                env = {"CUDA_LAUNCH_BLOCKING": "1"}
            subprocess.run(cmd, env=env)
            os.environ.update(SETTINGS)
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import os

            os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
            model = load(os.environ["MODEL_PATH"])
            """,
            line=3,
            column=12,
            message_contains="slows every run",
            fixed="""
            import os

            model = load(os.environ["MODEL_PATH"])
            """,
        ),
        Invalid(
            """
            from os import environ

            environ.setdefault("TORCHINDUCTOR_NAN_ASSERTS", "1")
            """,
            line=3,
            column=20,
            message_contains="rebuild the package without it",
        ),
        Invalid(
            """
            import os

            os.environ.update({"TORCH_LOGS": "+inductor,output_code"}, TORCH_SHOW_CPP_STACKTRACES="1")
            """,
            count=2,
        ),
        Invalid(
            """
            import os
            import subprocess

            subprocess.run(cmd, env={**os.environ, "CUDA_LAUNCH_BLOCKING": "1"})
            subprocess.check_call(cmd, env=dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1"))
            os.putenv("AOT_INDUCTOR_DEBUG_COMPILE", "1")
            """,
            count=3,
        ),
        Invalid(
            """
            import os
            import subprocess

            DEBUG_ENV = {"CUDA_LAUNCH_BLOCKING": "1", "TORCH_SHOW_CPP_STACKTRACES": "1"}
            os.environ.update(DEBUG_ENV)

            def launch(cmd):
                env = {**os.environ, "TORCHINDUCTOR_NAN_ASSERTS": "1"}
                subprocess.Popen(cmd, env=env)
                subprocess.run(cmd, env=env)
            """,
            count=3,
            fixed="""
            import os
            import subprocess

            DEBUG_ENV = {}
            os.environ.update(DEBUG_ENV)

            def launch(cmd):
                env = {**os.environ}
                subprocess.Popen(cmd, env=env)
                subprocess.run(cmd, env=env)
            """,
        ),
        Invalid(
            """
            #!/bin/bash
            export CUDA_LAUNCH_BLOCKING=1
            CUDA_LAUNCH_BLOCKING=1 TORCH_USE_CUDA_DSA=1 python train.py
            """,
            filename="train.sh",
            line=2,
            column=8,
            count=3,
            fixed="""
            #!/bin/bash
            python train.py
            """,
        ),
        Invalid(
            """
            FROM python:3.11
            ENV PATH=/opt/bin:$PATH CUDA_LAUNCH_BLOCKING=1
            """,
            filename="Dockerfile",
            line=2,
            column=25,
            fixed="""
            FROM python:3.11
            ENV PATH=/opt/bin:$PATH
            """,
        ),
        Invalid(
            """
            services:
              serve:
                environment:
                  - PYTORCH_NO_CUDA_MEMORY_CACHING=1
            """,
            filename="compose.yaml",
            line=4,
            column=9,
        ),
        Invalid("export TORCH_LOGS=+dynamo\n", filename="app.env", line=1, column=8),
        Invalid(
            """
            import os
            env = os.environ
            env["CUDA_LAUNCH_BLOCKING"] = "1"
            env.setdefault("TORCH_LOGS", "+inductor")
            """,
            line=3,
            count=2,
            message_contains="CUDA_LAUNCH_BLOCKING",
        ),
    ]
