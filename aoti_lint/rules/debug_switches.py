"""AOTI201 / AOTI202: debug switches (environment variables, Inductor config keys) left on."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aoti_lint.diagnostics import Applicability, Edit, Finding, Fix, Position
from aoti_lint.knowledge.debug_switches import (
    CONFIG_DICT_KEYWORDS,
    DEBUG_CONDITION_MARKER,
    INDUCTOR_CONFIG,
    SUBPROCESS_FUNCTIONS,
    SWITCHES_BY_CONFIG_KEY,
    SWITCHES_BY_ENV_VAR,
    DebugSwitch,
    message,
)
from aoti_lint.lazy import cst
from aoti_lint.rules.base import Invalid, PythonRule, TextRule, Valid
from aoti_lint.source import PYTHON_KINDS

if TYPE_CHECKING:
    from aoti_lint.scanners import EnvSetting
    from aoti_lint.source import SourceFile

_UNKNOWN = object()
ENVIRON = "os.environ"
_LINE_END = re.compile(r"\r\n?|\n")
_IMPORTS_OS = re.compile(r"^[ \t]*(?:import[ \t]+os\b|from[ \t]+os[ \t]+import\b)", re.MULTILINE)
# A callee whose qualified name is one of these ends in the same name (an attribute's qualified name ends in
# the attribute), unless it is a name bound by `import ... as`: tested before libcst resolves any name.
_ENVIRON_METHODS = frozenset({"setdefault", "update"})
_PATCH = INDUCTOR_CONFIG + ".patch"
_DICT_KEYWORDS = frozenset(CONFIG_DICT_KEYWORDS.values())
_COMPILERS = frozenset(name.rsplit(".", 1)[-1] for name in CONFIG_DICT_KEYWORDS)
_SUBPROCESS_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in SUBPROCESS_FUNCTIONS)


# Between a key and its value: blanks, line continuations, comments. A comment runs to the end of its line
# (one way to match it: `# ####` must not backtrack through every split).
_GAP = rb"(?:\s|\\\r?\n|#[^\n]*(?![^\n]))*"
# The start of a literal that may be "on": True, a number other than 0, a string (parenthesised or not).
_ON_VALUE = rb"(?:\(" + _GAP + rb")*(?:True\b|(?!0\b)[0-9]|[rRuU]?[\"'])"
# `a.key = b = True`: the value comes after another target of the same assignment.
_CHAINED = rb"[^\n=]*[^=!<>\n]=(?!=)"
_STRING_VALUE = rb"(?:\(" + _GAP + rb")*[rRuU]?[\"']"


def _quoted_key_pattern(keys: bytes, value: bytes) -> bytes:
    """A key in quotes set by a dict entry (``"K": V``), two positional arguments (``f("K", V)``) or a
    subscript assignment (``d["K"] = ...``, whatever the value: it may be chained)."""
    return rb"[\"'](?:" + keys + rb")[\"']" + _GAP + rb"(?:\]" + _GAP + rb"=(?!=)|[:,]" + _GAP + value + rb")"


@dataclass(frozen=True)
class _KeyForms:
    """How code that sets one config key to a literal that may be on spells it: its last name written
    (``.debug = True``) or passed as a keyword (``patch(debug=1)``), or the whole key in quotes
    (``{"trace.enabled": True}``, ``patch("debug", "1")``, ``options["debug"] = ...``); a dotted key also
    spells its other parts (in an import or an attribute chain)."""

    parts: tuple[bytes, ...]
    key: bytes
    # Regular expressions, compiled (and cached by `re`) on first use: importing the rules stays cheap.
    quoted: bytes
    written: bytes

    @classmethod
    def of(cls, key: str) -> _KeyForms:
        parts = tuple(part.encode() for part in key.split("."))
        quoted = _quoted_key_pattern(re.escape(key.encode()), _ON_VALUE)
        written = re.escape(parts[-1]) + rb"[\s)]*=(?!=)" + _GAP + rb"(?:" + _ON_VALUE + b"|" + _CHAINED + b")"
        return cls(parts, key.encode(), quoted, written)

    def in_bytes(self, data: bytes) -> bool:
        if not all(part in data for part in self.parts):
            return False
        if self.key in data and re.search(self.quoted, data):
            return True
        # The last name as a word: `config.debug =`, `patch(debug=`, not `is_debug =`.
        return any(
            match.start() == 0 or not _is_word_byte(data[match.start() - 1])
            for match in re.finditer(self.written, data)
        )


def _is_word_byte(byte: int) -> bool:
    return byte == 95 or 48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122 or byte >= 128


# AOTI201 in Python: a switch's name in quotes with a string value (`environ["K"] = ...`, `{"K": "1"}`,
# `setdefault("K", "1")`), or as a keyword with a string value (`update(K="1")`, `dict(os.environ, K="1")`).
_ENV_NAMES = b"|".join(re.escape(name.encode()) for name in SWITCHES_BY_ENV_VAR)
# A read with a default (`os.environ.get("K", "0")`, `os.getenv("K", "1")`) is matched as such and passed over:
# an attribute named `get` never resolves to `setdefault` or `putenv`.
_ENV_SETTING = (
    rb"(?P<read>\.(?:get|getenv)\("
    + _GAP
    + rb")?"
    + _quoted_key_pattern(_ENV_NAMES, _STRING_VALUE)
    + rb"|[(,]"
    + _GAP
    + rb"(?:"
    + _ENV_NAMES
    + rb")"
    + _GAP
    + rb"="
    + _GAP
    + _STRING_VALUE
).decode()


# A key is set through torch._inductor.config (assignment, patch: both spell `_inductor`), or in a dict passed
# as `inductor_configs=` or as `options=` to a compile function.
_CONFIG_CONTEXTS = ((b"_inductor",), (b"inductor_configs",), (b"compile", b"options"))
_KEY_FORMS = tuple(_KeyForms.of(key) for key in SWITCHES_BY_CONFIG_KEY)
_SWITCHES_BY_LAST_NAME: dict[str, list[DebugSwitch]] = {}
for _key, _switch in SWITCHES_BY_CONFIG_KEY.items():
    _SWITCHES_BY_LAST_NAME.setdefault(_key.rsplit(".", 1)[-1], []).append(_switch)


def _literal(node: Any) -> Any:
    """The value of a literal string, number, bool or None; ``_UNKNOWN`` for anything else."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else _UNKNOWN
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    return _UNKNOWN


def _string(node: Any) -> str | None:
    value = _literal(node)
    return value if isinstance(value, str) else None


def _single_entry(call: Any) -> bool:
    """The call sets exactly one key: ``f(K=V)`` or ``f({K: V})``."""
    if len(call.args) != 1 or call.args[0].star:
        return False
    arg = call.args[0]
    return arg.keyword is not None or (isinstance(arg.value, cst.Dict) and len(arg.value.elements) == 1)


def _remove_fix(name: str, edits: Sequence[Edit]) -> Fix | None:
    return Fix(Applicability.UNSAFE, f"Remove `{name}`", tuple(edits)) if edits else None


class _PythonSwitches(PythonRule):
    """Shared Python plumbing: where statements and elements are, how to remove them, debug conditions."""

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self._debug_conditions: list[bool] = []
        self._blocks: list[Any] = []
        self._line: Any = None

    def visit_If(self, node: Any) -> None:
        test = self.context.module.code_for_node(node.test)
        self._debug_conditions.append(DEBUG_CONDITION_MARKER in test.lower())

    def leave_If(self, node: Any) -> None:
        self._debug_conditions.pop()

    def visit_Module(self, node: Any) -> None:
        self._blocks.append(node)

    def visit_IndentedBlock(self, node: Any) -> None:
        self._blocks.append(node)

    def leave_IndentedBlock(self, node: Any) -> None:
        self._blocks.pop()

    def visit_SimpleStatementLine(self, node: Any) -> None:
        self._line = node

    def visit_SimpleStatementSuite(self, node: Any) -> None:
        self._line = node

    @property
    def deliberate(self) -> bool:
        """Inside an `if` whose condition mentions debug: switched on on purpose."""
        return any(self._debug_conditions)

    def _position(self, node: Any, end: bool = False) -> Position:
        code_range = self.context.positions()[node]
        point = code_range.end if end else code_range.start
        return Position(point.line, point.column + 1)

    def remove_statement(self, statement: Any) -> tuple[Edit, ...]:
        """Remove a small statement of the current line, leaving valid code (`pass` in an emptied block)."""
        line = self._line
        if line is None or not any(small is statement for small in line.body):
            return ()
        body = list(line.body)
        if len(body) > 1:
            index = next(i for i, small in enumerate(body) if small is statement)
            if index + 1 < len(body):
                return (Edit("", self._position(statement), self._position(body[index + 1])),)
            return (Edit("", self._position(body[index - 1], end=True), self._position(statement, end=True)),)
        block = self._blocks[-1] if self._blocks else None
        if isinstance(line, cst.SimpleStatementLine) and (
            isinstance(block, cst.Module) or (block is not None and len(block.body) > 1)
        ):
            first, last = self._position(line).row, self._position(line, end=True).row
            first, last = self._with_blank_lines(first, last, opens_block=block.body[0] is line)
            start, end = Position(first, 1), Position(last + 1, 1)
            # Empty edits at both ends: removals whose ranges meet (neighbouring statements) then overlap and go
            # in separate rounds, so each one's blank lines are counted on the text the other left.
            edits = [Edit("", start, end), Edit("", start, start), Edit("", end, end)]
            if isinstance(block, cst.IndentedBlock):
                # An empty edit at the block's header: two removals from one block overlap there, so they
                # are applied in separate rounds and the last statement left becomes `pass`, never nothing.
                anchor = self._position(block.header)
                edits.append(Edit("", anchor, anchor))
            return tuple(edits)
        return (Edit("pass", self._position(statement), self._position(statement, end=True)),)

    def _lines(self) -> list[str]:
        # Rows as the edits count them (a lone "\r" ends a line too, see aoti_lint.edits).
        return self.context.memo("debug-switch-lines", lambda: _LINE_END.split(self.context.module.code))

    def _with_blank_lines(self, first: int, last: int, opens_block: bool) -> tuple[int, int]:
        """The rows to remove with statement rows ``first..last`` so that no run of blank lines is left: the
        blank lines around it merge into the longer of the two, none opens a block, none ends the file."""
        lines = self._lines()
        real = len(lines) - (1 if lines and lines[-1] == "" else 0)  # the "" after a final newline is no line

        def blank(row: int) -> bool:
            return 1 <= row <= real and not lines[row - 1].strip()

        before = after = 0
        while blank(first - before - 1):
            before += 1
        while blank(last + after + 1):
            after += 1
        if last + after >= real:
            return first - before, last + after
        if opens_block:
            return first, last + after
        return first, last + min(before, after)

    def remove_element(self, elements: Sequence[Any], element: Any) -> tuple[Edit, ...]:
        """Remove a dict element or a call argument, and the comma that goes with it."""
        index = next(i for i, item in enumerate(elements) if item is element)

        def span(item: Any) -> tuple[Position, Position]:
            first = getattr(item, "key", None) or getattr(item, "keyword", None) or item.value
            if getattr(item, "star", "") or isinstance(item, cst.StarredDictElement):
                first = item
            return self._position(first), self._position(item.value, end=True)

        start, end = span(element)
        if index + 1 < len(elements):
            return (Edit("", start, span(elements[index + 1])[0]),)
        if index > 0:
            return (Edit("", span(elements[index - 1])[1], end),)
        if isinstance(element.comma, cst.Comma):
            end = self._position(element.comma, end=True)
        return (Edit("", start, end),)

    def statement_of(self, expression: Any) -> Any:
        """The small statement that is exactly ``expression`` (a call used as a statement), or None."""
        line = self._line
        if line is None:
            return None
        return next(
            (s for s in line.body if isinstance(s, cst.Expr) and s.value is expression),
            None,
        )


class DebugEnvVar(_PythonSwitches, TextRule):
    """
    ## What it does
    Finds debug environment variables set to an "on" value wherever a project sets them: in Python
    (`os.environ[K] = V`, `os.environ.setdefault`, `os.environ.update`, `os.putenv`, an `env=` mapping passed
    to `subprocess`), shell scripts (`export K=V`, `K=V cmd`, `env K=V cmd`), Dockerfiles (`ENV`, and the
    shell of `RUN`), YAML (`env:` / `environment:` / `variables:` mappings in map, list and Kubernetes
    `name`/`value` forms, `run:` scripts, `echo "K=V" >> $GITHUB_ENV`) and `.env` files.

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
    prefix (the command stays), the `ENV` pair (the other pairs stay), the YAML entry, the `.env` line.
    In Python it leaves nothing behind that a person would delete by hand: an `env=` left holding only
    `**os.environ` (or `dict(os.environ)`) goes, since the child inherits that anyway; an
    `os.environ.update(...)` left empty goes (inside an expression, where it cannot, there is no fix);
    `import os` / `from os import environ` go once nothing uses them; the blank lines around a removed
    statement merge instead of piling up.
    It is unsafe: the switch may be wanted where it is, e.g. in a job that exists to debug.
    Add `# noqa: AOTI201` at the end of the line to keep one on purpose.

    ## References
    - [AOTInductor debugging guide](https://docs.pytorch.org/docs/stable/torch.compiler_aot_inductor_debugging_guide.html)
    - [CUDA environment variables](https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars)
    - [torch._inductor.config](https://github.com/pytorch/pytorch/blob/main/torch/_inductor/config.py)
    """

    code = "AOTI201"
    name = "debug-env-var"
    summary = "A debug environment variable is switched on"
    fix_availability = "sometimes"
    file_kinds = PYTHON_KINDS | {"shell", "dockerfile", "yaml", "env"}
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
        return any(match["read"] is None for match in re.finditer(_ENV_SETTING, text))

    @classmethod
    def tidy_after_fix(cls, text: str) -> str:
        """`import os` / `from os import environ` that the removed settings were the last users of."""
        if not _IMPORTS_OS.search(text):  # also keeps shell, YAML and .env files away from the Python parser
            return text
        from aoti_lint.unused_imports import drop_unused

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
                    _remove_fix(setting.name, setting.removal),
                )
            )
        return findings

    @staticmethod
    def _scanner(kind: str) -> Callable[[str], Iterator[EnvSetting]]:
        from aoti_lint.scanners import dockerfile, dotenv, shell, yaml

        return {"shell": shell.scan, "dockerfile": dockerfile.scan, "yaml": yaml.scan, "env": dotenv.scan}[kind]

    @staticmethod
    def _reportable(switch: DebugSwitch, setting: EnvSetting) -> bool:
        return setting.value is not None and switch.is_on_value(setting.value) and not setting.under_debug_condition

    def _report_setting(self, key_node: Any, value_node: Any, edits: Sequence[Edit]) -> None:
        name = _string(key_node) or ""
        switch = SWITCHES_BY_ENV_VAR.get(name)
        value = _string(value_node)
        if switch is None or value is None or self.deliberate or not switch.is_on_value(value):
            return
        self.report(key_node, message(switch, name), fix=_remove_fix(name, edits))

    def _report_keyword(self, arg: Any, edits: Sequence[Edit]) -> None:
        name = arg.keyword.value
        switch = SWITCHES_BY_ENV_VAR.get(name)
        value = _string(arg.value)
        if switch is None or value is None or self.deliberate or not switch.is_on_value(value):
            return
        self.report(arg.keyword, message(switch, name), fix=_remove_fix(name, edits))

    def _is_environ(self, node: Any) -> bool:
        return ENVIRON in self.qualified_names(node)

    def visit_Assign(self, node: Any) -> None:
        for target in node.targets:
            subscript = target.target
            if not isinstance(subscript, cst.Subscript):
                continue
            if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
                continue
            # The key first: resolving `environ` resolves every name of the module.
            if _string(subscript.slice[0].slice.value) not in SWITCHES_BY_ENV_VAR or not self._is_environ(
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
        if len(positional) == 2 and _string(positional[0].value) in SWITCHES_BY_ENV_VAR:
            return True
        return any(
            (arg.keyword is not None and arg.keyword.value in SWITCHES_BY_ENV_VAR)
            or (arg.keyword is None and isinstance(arg.value, cst.Dict))
            for arg in node.args
        )

    def visit_Call(self, node: Any) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _ENVIRON_METHODS:
            if self._may_set(node) and self._is_environ(func.value):
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
        if _single_entry(node):
            statement = self.statement_of(node)
            whole = self.remove_statement(statement) if statement is not None else ()
        for arg in node.args:
            if arg.keyword is not None:
                self._report_keyword(arg, whole if whole is not None else self.remove_element(node.args, arg))
            elif not arg.star and isinstance(arg.value, cst.Dict):
                self._dict_entries(arg.value, whole)

    def _dict_entries(self, mapping: Any, whole: Sequence[Edit] | None = None) -> None:
        for element in mapping.elements:
            if isinstance(element, cst.DictElement):
                edits = whole if whole is not None else self.remove_element(mapping.elements, element)
                self._report_setting(element.key, element.value, edits)

    def _env_mapping(self, value: Any) -> None:
        """``env={...}``, ``env={**os.environ, K: V}``, ``env=dict(os.environ, K=V)``."""
        if isinstance(value, cst.Dict):
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
    ]


class DebugInductorConfig(_PythonSwitches):
    """
    ## What it does
    Finds debug keys of `torch._inductor.config` switched on in Python: assignments under any import form
    (`torch._inductor.config.nan_asserts = True`, `from torch._inductor import config`,
    `import torch._inductor.config as cfg`, nested keys such as `config.aot_inductor.debug_compile`),
    `config.patch(...)` with a keyword, a dict or a key and a value (as a call, decorator or context
    manager), and keys of the dict passed as `inductor_configs=` to `aoti_compile_and_package` or as
    `options=` to `torch._export.aot_compile`, `torch._inductor.aot_compile` and `torch.compile`, including
    a dict built in a variable of the same scope.

    The keys are `nan_asserts`, `runtime_triton_nan_asserts`, `debug`, `debug_index_asserts`,
    `trace.enabled`, `aot_inductor.debug_compile`, `aot_inductor.debug_intermediate_value_printer`,
    `aot_inductor.filtered_kernel_names`, `aot_inductor.dump_aoti_minifier`, `triton.debug_sync_graph` and
    `triton.debug_sync_kernel`. Off values (`False`, `None`, `0`, `"0"`), values that are not literals and
    settings inside an `if` whose condition mentions "debug" are not reported.

    ## Why is this bad?
    Every one of these keys is read when the model is compiled and is baked into what Inductor generates:
    NaN checks with a sync after each kernel, a synchronisation after every launch, a value printer around
    each kernel, an unoptimised library with debug symbols. A compile script that leaves one on ships a slow
    package; the package must be rebuilt without it.

    ## Fix safety
    The fix removes the assignment statement, the `patch` argument or the dict entry. The last key of a
    container takes it along: `options={...}` / `inductor_configs={...}` go (an empty dict means what no
    argument means), a `config.patch` left empty goes with its decorator, its statement, or its `with` (the
    body moves one indent out). Where the emptied call cannot go (`with ... as name`, inside an expression,
    a body with a multi-line string) there is no fix. An import of `torch._inductor.config` under a name of
    its own goes once nothing uses it. It is unsafe: the key may be wanted there, e.g. in a script that
    exists to debug. Add `# noqa: AOTI202` to keep it.

    ## References
    - [AOTInductor debugging guide](https://docs.pytorch.org/docs/stable/torch.compiler_aot_inductor_debugging_guide.html)
    - [torch._inductor.config](https://github.com/pytorch/pytorch/blob/main/torch/_inductor/config.py)
    """

    code = "AOTI202"
    name = "debug-inductor-config"
    summary = "A debug key of `torch._inductor.config` is switched on"
    fix_availability = "sometimes"
    # Necessary tokens; could_match below also wants one of the key's forms (see _KeyForms).
    triggers = tuple((*forms.parts, *context) for forms in _KEY_FORMS for context in _CONFIG_CONTEXTS)

    @classmethod
    def could_match(cls, data: bytes) -> bool:
        # "debug", "enabled" and "compile" are in most files' bytes; a key's forms (see _KeyForms) are not.
        return any(all(token in data for token in context) for context in _CONFIG_CONTEXTS) and any(
            forms.in_bytes(data) for forms in _KEY_FORMS
        )

    @classmethod
    def could_match_code(cls, code: Any) -> bool:
        # `root.x.key = V` resolves to the config only when `root` is bound by an absolute import; a key in a
        # literal setting (dict entry, keyword, `patch(K, V)`, `d[K] = V`) counts when something can take it:
        # a `patch`, or a compile function given `inductor_configs=` / `options=`.
        for root, attr, value in code.attribute_writes:
            switches = _SWITCHES_BY_LAST_NAME.get(attr, ())
            if root in code.import_bound and any(switch.is_on_value(value) for switch in switches):
                return True
        reached = code.called | {name for _, name in code.imported_names}
        compilers = {name.rsplit(".", 1)[-1] for name in CONFIG_DICT_KEYWORDS}
        passes_dict = bool(code.keywords & set(CONFIG_DICT_KEYWORDS.values())) and bool(reached & compilers)
        if not (passes_dict or "patch" in reached):
            return False
        for key, value in code.literal_settings:
            switch = SWITCHES_BY_CONFIG_KEY.get(key)
            if switch is not None and switch.is_on_value(value):  # type: ignore[arg-type]
                return True
        return False

    @classmethod
    def tidy_after_fix(cls, text: str) -> str:
        """`torch._inductor.config` imported under a name of its own that the removed keys were the last users
        of (a bare `import torch._inductor.config` also binds `torch`, and stays)."""
        from aoti_lint.unused_imports import drop_unused

        return drop_unused(
            text,
            lambda module, name, alias: (
                (module == INDUCTOR_CONFIG and name is None and alias is not None)
                or (module == INDUCTOR_CONFIG.rsplit(".", 1)[0] and name == "config")
            ),
        )

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self._scopes: list[_Scope] = [_Scope()]
        self._decorator: Any = None

    def _report_key(self, node: Any, key: str, value_node: Any, edits: Sequence[Edit], deliberate: bool) -> None:
        switch = SWITCHES_BY_CONFIG_KEY.get(key)
        value = _literal(value_node)
        if switch is None or value is _UNKNOWN or deliberate or not switch.is_on_value(value):
            return
        self.report(node, message(switch, f"{INDUCTOR_CONFIG}.{key}"), fix=_remove_fix(key, edits))

    def _config_key(self, node: Any) -> str | None:
        prefix = INDUCTOR_CONFIG + "."
        return next((name[len(prefix) :] for name in self.qualified_names(node) if name.startswith(prefix)), None)

    # Scopes: a dict built in a variable is reported where the variable reaches a compile call.

    def visit_FunctionDef(self, node: Any) -> None:
        self._scopes.append(_Scope())

    def leave_FunctionDef(self, node: Any) -> None:
        self._close_scope()

    def visit_ClassDef(self, node: Any) -> None:
        self._scopes.append(_Scope())

    def leave_ClassDef(self, node: Any) -> None:
        self._close_scope()

    def leave_Module(self, node: Any) -> None:
        self._close_scope()

    def _close_scope(self) -> None:
        scope = self._scopes.pop()
        for name, all_deliberate in scope.uses.items():
            assigned = scope.assignments.get(name, [])
            if not assigned or any(mapping is None for mapping in assigned):
                continue
            for entry in scope.entries.get(name, []):
                key_node, key, value_node, edits, deliberate = entry
                self._report_key(key_node, key, value_node, edits, deliberate or all_deliberate)

    def visit_Assign(self, node: Any) -> None:
        scope = self._scopes[-1]
        for target in node.targets:
            target = target.target
            if isinstance(target, cst.Name):
                mapping = node.value if isinstance(node.value, cst.Dict) and len(node.targets) == 1 else None
                scope.assignments.setdefault(target.value, []).append(mapping)
                if mapping is not None:
                    scope.entries.setdefault(target.value, []).extend(self._entries(mapping))
            elif isinstance(target, cst.Attribute) and target.attr.value in _SWITCHES_BY_LAST_NAME:
                key = self._config_key(target)
                if key is not None:
                    edits = self.remove_statement(node) if len(node.targets) == 1 else ()
                    self._report_key(target, key, node.value, edits, self.deliberate)
            elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and len(node.targets) == 1:
                index = target.slice[0].slice if len(target.slice) == 1 else None
                key = _string(index.value) if isinstance(index, cst.Index) else None
                if key is not None:
                    entry = (index.value, key, node.value, self.remove_statement(node), self.deliberate)
                    scope.entries.setdefault(target.value.value, []).append(entry)

    def _entries(self, mapping: Any) -> Iterator[tuple[Any, str, Any, tuple[Edit, ...], bool]]:
        for element in mapping.elements:
            key = _string(element.key) if isinstance(element, cst.DictElement) else None
            if key is not None:
                yield element.key, key, element.value, self.remove_element(mapping.elements, element), self.deliberate

    @staticmethod
    def _may_patch(node: Any) -> bool:
        """The arguments could set a key as ``_patch`` reads them: a key as keyword, a dict, or a key and a
        value."""
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if len(positional) == 2 and _string(positional[0].value) is not None:
            return True
        return any(
            (arg.keyword is not None and arg.keyword.value in SWITCHES_BY_CONFIG_KEY)
            or (arg.keyword is None and isinstance(arg.value, cst.Dict))
            for arg in node.args
        )

    def visit_Call(self, node: Any) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "update":
            # An attribute named `update` never resolves to `patch` (attributes are named by their last part).
            self._dict_update(node)
        # Names are resolved only for a call that could take a config dict or patch a key.
        takes_dict = any(arg.keyword is not None and arg.keyword.value in _DICT_KEYWORDS for arg in node.args)
        context = self.context
        if not (takes_dict and context.may_resolve_to(node.func, _COMPILERS)) and not (
            self._may_patch(node) and context.may_resolve_to(node.func, {"patch"})
        ):
            return
        names = self.qualified_names(node.func)
        if _PATCH in names:
            self._patch(node)
            return
        keyword = next((CONFIG_DICT_KEYWORDS[name] for name in names if name in CONFIG_DICT_KEYWORDS), None)
        arg = next((a for a in node.args if a.keyword is not None and a.keyword.value == keyword), None)
        if arg is None:
            return
        if isinstance(arg.value, cst.Dict):
            for entry in self._argument_entries(node.args, arg):
                self._report_key(*entry)
        elif isinstance(arg.value, cst.Name):
            uses = self._scopes[-1].uses
            uses[arg.value.value] = uses.get(arg.value.value, True) and self.deliberate

    def _argument_entries(
        self, args: Sequence[Any], arg: Any
    ) -> Iterator[tuple[Any, str, Any, tuple[Edit, ...], bool]]:
        """The entries of a literal `options=` / `inductor_configs=` dict; its last entry takes the argument
        with it (`options={}` would be left, and it means what no argument means)."""
        entries = self._entries(arg.value)
        if len(arg.value.elements) != 1:
            return entries
        whole = self.remove_element(args, arg)
        return ((key_node, key, value, whole, deliberate) for key_node, key, value, _, deliberate in entries)

    def _dict_update(self, node: Any) -> None:
        """``options.update({...})`` on a variable: more entries of the dict it holds."""
        target = node.func.value
        if isinstance(target, cst.Name) and len(node.args) == 1 and isinstance(node.args[0].value, cst.Dict):
            entries = list(self._entries(node.args[0].value))
            if _single_entry(node):  # `options.update({})` would be left doing nothing: the statement goes, or no fix
                statement = self.statement_of(node)
                whole = self.remove_statement(statement) if statement is not None else ()
                entries = [(key_node, key, value, whole, deliberate) for key_node, key, value, _, deliberate in entries]
            self._scopes[-1].entries.setdefault(target.value, []).extend(entries)

    def visit_Decorator(self, node: Any) -> None:
        self._decorator = node

    def leave_Decorator(self, node: Any) -> None:
        self._decorator = None

    def _patch(self, node: Any) -> None:
        args = node.args
        positional = [arg for arg in args if arg.keyword is None and not arg.star]
        pair = len(positional) == 2 and len(args) == 2
        # The last key of a patch takes the patch with it (`config.patch()` would be left doing nothing): the
        # decorator, the `with` (its body dedented), the statement; where none of these can go, no fix.
        whole = self._whole_patch(node) if pair or _single_entry(node) else None
        if pair:
            key = _string(positional[0].value)
            if key is not None:
                self._report_key(positional[0].value, key, positional[1].value, whole or (), self.deliberate)
            return
        for arg in args:
            if arg.keyword is not None:
                edits = whole if whole is not None else self.remove_element(args, arg)
                self._report_key(arg.keyword, arg.keyword.value, arg.value, edits, self.deliberate)
            elif not arg.star and isinstance(arg.value, cst.Dict):
                for key_node, key, value, edits, deliberate in self._entries(arg.value):
                    self._report_key(key_node, key, value, whole if whole is not None else edits, deliberate)

    def _whole_patch(self, node: Any) -> tuple[Edit, ...]:
        decorator = self._decorator
        if decorator is not None and decorator.decorator is node:
            first, last = self._position(decorator).row, self._position(decorator, end=True).row
            return (Edit("", Position(first, 1), Position(last + 1, 1)),)
        statement = self.statement_of(node)
        if statement is not None:
            return self.remove_statement(statement)
        facts = self.context.facts()
        item = facts.parent(node)
        block = facts.parent(item) if isinstance(item, cst.WithItem) and item.asname is None else None
        if isinstance(block, cst.With) and len(block.items) == 1 and block.asynchronous is None:
            return self._unwrap_with(block)
        return ()

    def _unwrap_with(self, node: Any) -> tuple[Edit, ...]:
        """``with config.patch(k=v):`` and its body become the body, one indent level out; no edit when the
        body holds a line that dedenting could change (a multi-line string, a backslash continuation)."""
        body = node.body
        start = self._position(node)
        if isinstance(body, cst.SimpleStatementSuite):
            return (Edit("", start, self._position(body.body[0])),)
        lines = self._lines()
        indent = lines[start.row - 1][: start.column - 1]
        header_row = self._position(body.header).row
        end_row = self._position(node, end=True).row
        inner = lines[header_row:end_row]
        first = next((line for line in inner if line.strip()), None)
        if indent.strip() or first is None or not first.startswith(indent):
            return ()
        deeper = first[: len(first) - len(first.lstrip())]
        if len(deeper) <= len(indent):
            return ()
        dedented = []
        for line in inner:
            if not line.strip():
                dedented.append("")
            elif not line.startswith(deeper) or line.rstrip().endswith("\\") or '"""' in line or "'''" in line:
                return ()
            else:
                dedented.append(indent + line[len(deeper) :])
        newline = "\r\n" if "\r\n" in self.context.module.code else "\n"
        return (Edit(newline.join(dedented) + newline, Position(start.row, 1), Position(end_row + 1, 1)),)

    VALID = [
        Valid(
            """
            from torch._inductor import config

            config.nan_asserts = False
            config.aot_inductor.debug_intermediate_value_printer = "0"
            config.max_autotune = True
            config.compile_threads = 8
            config.debug = flag
            print(config.debug)
            """
        ),
        Valid(
            """
            import torch

            if args.debug:
                torch._inductor.config.trace.enabled = True
            torch._inductor.aoti_compile_and_package(ep, inductor_configs={"max_autotune": True})
            """
        ),
        Valid(
            """
            class Config:
                debug = True

            options = {"nan_asserts": True}
            run(options=options)
            """
        ),
    ]
    INVALID = [
        Invalid(
            """
            import torch._inductor.config as cfg

            cfg.nan_asserts = True
            cfg.max_autotune = True
            compile_model()
            """,
            line=3,
            column=1,
            message_contains="rebuild the package without it",
            fixed="""
            import torch._inductor.config as cfg

            cfg.max_autotune = True
            compile_model()
            """,
        ),
        Invalid(
            """
            from torch._inductor import config

            config.aot_inductor.debug_compile = True
            """,
            line=3,
        ),
        Invalid(
            """
            import torch

            @torch._inductor.config.patch(debug_index_asserts=True)
            def build(ep):
                with torch._inductor.config.patch({"triton.debug_sync_kernel": True}):
                    return torch._inductor.aoti_compile_and_package(ep)
            """,
            count=2,
        ),
        Invalid(
            """
            import torch

            options = {"max_autotune": True}
            options["aot_inductor.debug_intermediate_value_printer"] = "3"
            torch._inductor.aoti_compile_and_package(ep, inductor_configs=options)
            """,
            line=4,
            column=9,
        ),
        Invalid(
            """
            import torch

            compiled = torch.compile(model, options={"trace.enabled": True})
            """,
            line=3,
            column=42,
        ),
    ]


@dataclass
class _Scope:
    # Every value assigned to each name in the scope: the Dict node, or None for anything else.
    assignments: dict[str, list[Any]] = field(default_factory=dict)
    # Entries put in the dict a name holds: (key node, key, value node, removal edits, deliberate).
    entries: dict[str, list[tuple[Any, str, Any, tuple[Edit, ...], bool]]] = field(default_factory=dict)
    # Names passed as a compile call's config dict, and whether every such call is deliberate.
    uses: dict[str, bool] = field(default_factory=dict)
