"""AOTI201 debug-env-var: a debug environment variable switched on, in Python, shell, Dockerfiles, YAML and
``.env`` files."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from aoti_lint.diagnostics import Edit, Finding
from aoti_lint.knowledge.debug_switches import (
    SUBPROCESS_FUNCTIONS,
    SWITCHES_BY_ENV_VAR,
    DebugSwitch,
    message,
)
from aoti_lint.knowledge.references import AOTI_DEBUGGING_GUIDE, CUDA_ENV_VARS, INDUCTOR_CONFIG_SOURCE
from aoti_lint.lazy import LazyPattern, cst
from aoti_lint.read.source import PYTHON_KINDS
from aoti_lint.rules.ast_reading import AstReading
from aoti_lint.rules.base import Invalid, TextRule, Valid
from aoti_lint.rules.debug_switches import (
    GAP,
    STRING_VALUE,
    PythonSwitchRule,
    follows_callee,
    opens_call,
    quoted_setting_pattern,
    remove_fix,
    sets_one_key,
    string_literal,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.read.source import SourceFile
    from aoti_lint.scanners import EnvSetting

ENVIRON = "os.environ"
_IMPORTS_OS = LazyPattern(r"^[ \t]*(?:import[ \t]+os\b|from[ \t]+os[ \t]+import\b)", re.MULTILINE)
# A callee whose qualified name is one of these ends in the same name (an attribute's qualified name ends in
# the attribute), unless it is a name bound by `import ... as`: tested before libcst resolves any name.
_ENVIRON_METHODS = frozenset({"setdefault", "update"})
_SUBPROCESS_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in SUBPROCESS_FUNCTIONS)


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


class DebugEnvVar(PythonSwitchRule, TextRule):
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
    def check_ast(cls, code: Any, path: str) -> list[Finding] | None:
        # The common forms only (`os.environ[K] = V`, `os.environ.setdefault(K, V)`, outside any `if`), see
        # _AstSettings; libcst reads any other.
        return _AstSettings(cls, code, path).findings()

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

    def _report_setting(self, key_node: Any, value_node: Any, edits: Sequence[Edit]) -> None:
        name = string_literal(key_node) or ""
        switch = SWITCHES_BY_ENV_VAR.get(name)
        value = string_literal(value_node)
        if switch is None or value is None or self.deliberate or not switch.is_on_value(value):
            return
        self.report(key_node, message(switch, name), fix=remove_fix(name, edits, self.context.source.display_path))

    def _report_keyword(self, arg: Any, edits: Sequence[Edit]) -> None:
        name = arg.keyword.value
        switch = SWITCHES_BY_ENV_VAR.get(name)
        value = string_literal(arg.value)
        if switch is None or value is None or self.deliberate or not switch.is_on_value(value):
            return
        self.report(arg.keyword, message(switch, name), fix=remove_fix(name, edits, self.context.source.display_path))

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self._named_dicts: set[int] = set()

    def _is_environ(self, node: Any) -> bool:
        if ENVIRON in self.qualified_names(node):
            return True
        # `env = os.environ`, then `env[K] = V`: a name whose one binding reaching the read holds `os.environ`
        if isinstance(node, cst.Name) and node.value in self._environ_aliases():
            value = self.context.facts().single_value(node)
            return value is not None and ENVIRON in self.qualified_names(value)
        return False

    def _environ_aliases(self) -> frozenset[str]:
        """The names some `name = <x>.environ` (or `= environ`) binds: the only ones ``_is_environ`` follows."""

        def aliases() -> frozenset[str]:
            found = set()
            for assign in self.context.facts().nodes(cst.Assign):
                value = assign.value
                spelled = value.attr.value if isinstance(value, cst.Attribute) else getattr(value, "value", None)
                if spelled == "environ" and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
                    found.add(assign.targets[0].target.value)
            return frozenset(found)

        return self.context.memo("environ-aliases", aliases)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            subscript = target.target
            if not isinstance(subscript, cst.Subscript):
                continue
            if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
                continue
            # The key first: resolving `environ` resolves every name of the module.
            if string_literal(subscript.slice[0].slice.value) not in SWITCHES_BY_ENV_VAR or not self._is_environ(
                subscript.value
            ):
                continue
            edits = self.remove_statement(node) if len(node.targets) == 1 else ()
            self._report_setting(subscript.slice[0].slice.value, node.value, edits)

    @staticmethod
    def _may_set(node: Any) -> bool:
        """The call's arguments could name a switch: a switch as keyword (``update(K=V)``), a dict
        (``update({K: V})``), or a switch as first of two positional arguments (``setdefault``, ``putenv``)."""
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if len(positional) == 2 and string_literal(positional[0].value) in SWITCHES_BY_ENV_VAR:
            return True
        return any(
            (arg.keyword is not None and arg.keyword.value in SWITCHES_BY_ENV_VAR)
            or (arg.keyword is None and isinstance(arg.value, cst.Dict))
            for arg in node.args
        )

    def _updates_from_variable(self, node: Any) -> bool:
        """`environ.update(NAME)`: the spelling only, as `_may_set` (most `.update(x)` calls are of other dicts)."""
        args = node.args
        return (
            node.func.attr.value == "update"
            and len(args) == 1
            and args[0].keyword is None
            and not args[0].star
            and isinstance(args[0].value, cst.Name)
            and self.context.may_resolve_to(node.func.value, {"environ"})
        )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _ENVIRON_METHODS:
            if (self._may_set(node) or self._updates_from_variable(node)) and self._is_environ(func.value):
                self._environ_method(node, func.attr.value)
            return
        has_env = any(arg.keyword is not None and arg.keyword.value == "env" for arg in node.args)
        may_putenv = self._may_set(node) and self.context.may_resolve_to(func, {"putenv"})
        if not may_putenv and not (has_env and self.context.may_resolve_to(func, _SUBPROCESS_NAMES)):
            return
        names = self.qualified_names(func)
        if "os.putenv" in names:
            self._key_value_call(node)
        elif names & SUBPROCESS_FUNCTIONS:
            env = next((arg for arg in node.args if arg.keyword is not None and arg.keyword.value == "env"), None)
            if env is not None:
                self._env_mapping(env.value)

    def _key_value_call(self, node: Any) -> None:
        """``setdefault(K, V)`` / ``putenv(K, V)``: removable when the call is a statement of its own."""
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if len(positional) != 2 or len(node.args) != 2:
            return
        statement = self.statement_of(node)
        edits = self.remove_statement(statement) if statement is not None else ()
        self._report_setting(positional[0].value, positional[1].value, edits)

    def _environ_method(self, node: Any, method: str) -> None:
        if method == "setdefault":
            self._key_value_call(node)
            return
        # An update of one variable goes whole: `os.environ.update()` would be left doing nothing. Inside an
        # expression it cannot go: no fix.
        whole: tuple[Edit, ...] | None = None
        if sets_one_key(node):
            statement = self.statement_of(node)
            whole = self.remove_statement(statement) if statement is not None else ()
        for arg in node.args:
            if arg.keyword is not None:
                self._report_keyword(arg, whole if whole is not None else self.remove_element(node.args, arg))
            elif not arg.star and isinstance(arg.value, cst.Dict):
                self._dict_entries(arg.value, whole)
            elif not arg.star and isinstance(arg.value, cst.Name):
                self._named_dict(arg.value)

    def _dict_entries(self, mapping: Any, whole: Sequence[Edit] | None = None) -> None:
        for element in mapping.elements:
            if isinstance(element, cst.DictElement):
                edits = whole if whole is not None else self.remove_element(mapping.elements, element)
                self._report_setting(element.key, element.value, edits)

    def _named_dict(self, name: Any) -> None:
        """A variable holding a dict display, assigned once where it is read (`os.environ.update(PRESET)`,
        `env=env`): its entries, reported once however many calls take it. Anything else is not known."""
        mapping = self.context.facts().single_value(name)
        if isinstance(mapping, cst.Dict) and id(mapping) not in self._named_dicts:
            self._named_dicts.add(id(mapping))
            self._dict_entries(mapping)

    def _env_mapping(self, value: Any) -> None:
        """``env={...}``, ``env={**os.environ, K: V}``, ``env=dict(os.environ, K=V)``, or a variable holding a
        dict display."""
        if isinstance(value, cst.Name):
            self._named_dict(value)
        elif isinstance(value, cst.Dict):
            self._dict_entries(value, self._whole_env(value, value.elements))
        elif isinstance(value, cst.Call) and "builtins.dict" in self.qualified_names(value.func):
            whole = self._whole_env(value, value.args)
            for arg in value.args:
                if arg.keyword is not None:
                    self._report_keyword(arg, whole if whole is not None else self.remove_element(value.args, arg))

    def _whole_env(self, mapping: Any, items: Sequence[Any]) -> tuple[Edit, ...] | None:
        """Removing the `env=` argument, when its one setting goes and only ``os.environ`` would be left:
        ``env={**os.environ}`` is what the child inherits anyway."""
        inherited = [
            item
            for item in items
            if (isinstance(item, cst.StarredDictElement) or (isinstance(item, cst.Arg) and not item.star))
            and getattr(item, "keyword", None) is None
            and self._is_environ(item.value)
        ]
        if len(items) != 2 or len(inherited) != 1:
            return None
        facts = self.context.facts()
        arg, call = facts.parent(mapping), None
        if isinstance(arg, cst.Arg):
            call = facts.parent(arg)
        if not isinstance(call, cst.Call) or not any(a is arg for a in call.args):
            return None
        return self.remove_element(call.args, arg)

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


class _AstSettings(AstReading):
    """AOTI201 in Python read from ``ast``, for the forms whose report libcst's traversal settles alone: a
    switch's name as the key of ``environ[K] = V`` (one target: the statement goes; more: no fix) or of
    ``environ.setdefault(K, V)`` (a statement of its own: it goes; in an expression: no fix), in a module, class
    or function body outside any ``if`` (whose condition may make it deliberate). What ``environ`` is comes from
    the semantic model (``aoti_lint.model.semantic``), the very answer the rule's ``qualified_names`` gives libcst's
    traversal. A switch's name read (``environ[K]`` loaded, ``x.get(K)``) is
    passed over as libcst passes over it. Any other place a switch's name takes (a dict key, a keyword, another
    call) leaves the file to libcst: ``findings`` is then None. So do what the two readings would tell apart: a
    form feed before the key on its line
    (libcst's columns start after it), a call in a compound statement's header, and a tree deeper than libcst's
    traversal goes (``AstReading``). ``tests/test_debug_switches.py`` compares both readings."""

    # Calls whose own arguments libcst's visit never reports: not an environ method, no `putenv`, no `env=`.
    _SETTING_METHODS = frozenset({"setdefault", "update", "putenv"})

    def findings(self) -> list[Finding] | None:
        import ast

        nodes = self.nodes()
        if nodes is None:
            return None
        candidates: list[Any] = []
        for node in nodes:
            kind = type(node)
            if kind is ast.Constant:
                if type(node.value) is str and node.value in SWITCHES_BY_ENV_VAR:
                    candidates.append(node)
            elif kind is ast.keyword and node.arg in SWITCHES_BY_ENV_VAR:
                return None
        if not candidates:
            return []
        if not self.read_imports():
            return None
        if any(_binds_environ(node) for node in nodes):
            return None  # `env = os.environ`: libcst's traversal follows the name (``DebugEnvVar._is_environ``)
        found = []
        for constant in candidates:
            verdict = self._setting(constant)
            if verdict is None:
                return None
            if isinstance(verdict, Finding):
                found.append(verdict)
        return found

    def _is_environ(self, node: Any) -> bool | None:
        """Whether the node is ``os.environ`` as libcst resolves it; None where ``ast`` cannot tell."""
        names = self.qualified_names(node)
        return None if names is None else ENVIRON in names

    def _setting(self, key: Any) -> Finding | bool | None:
        """The finding at a switch's name; False where libcst reports none; None where it is not known here."""
        import ast

        parent: Any = self.parents.get(key)
        kind = type(parent)
        if kind is ast.Subscript and parent.slice is key:
            if type(parent.ctx) is ast.Load:
                return False  # a read: only targets of an assignment are settings
            statement = self.parents.get(parent)
            if type(statement) is not ast.Assign or parent not in statement.targets:
                return None
            environ = self._is_environ(parent.value)
            if not environ:
                return environ  # another object than `os.environ`: no report; or not known here
            if not self.outside_compound_statements(statement):
                return None
            return self._report(key, statement.value, len(statement.targets) == 1)
        if kind is not ast.Call or key not in parent.args:
            return None
        func = parent.func
        if type(func) is not ast.Attribute:
            return None
        if func.attr not in self._SETTING_METHODS and not any(k.arg == "env" for k in parent.keywords):
            return False  # `os.environ.get(K)`, `os.getenv(K, "1")`: libcst's visit of the call stops there
        if func.attr != "setdefault" or not self.ascii(func) or parent.keywords:
            return None
        environ = self._is_environ(func.value)
        if not environ:
            return environ  # `x.setdefault(K, V)` on another object: no report; or not known here
        if len(parent.args) != 2 or parent.args[0] is not key:
            return None
        if any(type(arg) is ast.Starred for arg in parent.args):
            return None
        statement = self.statement_of(parent)
        # In a compound statement's header (an `if` test, a decorator, a default) libcst's state differs.
        if type(statement) not in (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return):
            return None
        if not self.outside_compound_statements(statement):
            return None
        return self._report(key, parent.args[1], type(statement) is ast.Expr and statement.value is parent)

    def _report(self, key: Any, value: Any, removable: bool) -> Finding | bool | None:
        import ast

        name = key.value
        switch = SWITCHES_BY_ENV_VAR[name]
        if not (type(value) is ast.Constant and type(value.value) is str and switch.is_on_value(value.value)):
            return False
        return self.finding(
            key, message(switch, name), remove_fix(name, (), self.path, deferred=True) if removable else None
        )


def _binds_environ(node: Any) -> bool:
    """Whether ``node`` is `name = <x>.environ` (or `name = environ`)."""
    import ast

    if type(node) is not ast.Assign or len(node.targets) != 1 or type(node.targets[0]) is not ast.Name:
        return False
    value = node.value
    return (type(value) is ast.Attribute and value.attr == "environ") or (
        type(value) is ast.Name and value.id == "environ"
    )
