"""AOTI202 debug-inductor-config: a debug ``torch._inductor.config`` key switched on (assignment,
``config.patch``, ``inductor_configs=``/``options=``)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from aoti_lint.diagnostics import Edit, Finding, Position
from aoti_lint.knowledge.debug_switches import (
    CONFIG_DICT_KEYWORDS,
    INDUCTOR_CONFIG,
    SWITCHES_BY_CONFIG_KEY,
    DebugSwitch,
    message,
)
from aoti_lint.knowledge.references import AOTI_DEBUGGING_GUIDE, INDUCTOR_CONFIG_SOURCE
from aoti_lint.lazy import cst
from aoti_lint.rules.ast_reading import AstReading
from aoti_lint.rules.base import Invalid, Valid, holds, tokens_match
from aoti_lint.rules.debug_switches import (
    CHAINED,
    GAP,
    ON_VALUE,
    UNKNOWN,
    PythonSwitchRule,
    is_word_byte,
    literal_value,
    may_follow,
    opens_call,
    quoted_setting_pattern,
    remove_fix,
    sets_one_key,
    string_literal,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# A callee whose qualified name is one of these ends in the same name (an attribute's qualified name ends in
# the attribute), unless it is a name bound by `import ... as`: tested before libcst resolves any name.
_PATCH = INDUCTOR_CONFIG + ".patch"
_DICT_KEYWORDS = frozenset(CONFIG_DICT_KEYWORDS.values())
_COMPILERS = frozenset(name.rsplit(".", 1)[-1] for name in CONFIG_DICT_KEYWORDS)


@dataclass(frozen=True)
class _KeyForms:
    """How code that sets one config key to a literal that may be on spells it: its last name written after a
    `.` (``.debug = True``) or passed as a keyword (``patch(debug=1)``), or the whole key in quotes (a dict entry
    ``{"trace.enabled": True}``, a call's first of two arguments ``patch("debug", "1")``, a subscript assignment
    ``options["debug"] = 1``); a dotted key also spells its other parts (in an import or an attribute chain)."""

    parts: tuple[bytes, ...]
    key: bytes
    # Regular expressions, compiled (and cached by `re`) on first use: importing the rules stays cheap.
    quoted: bytes
    written: bytes

    @classmethod
    def of(cls, key: str) -> _KeyForms:
        parts = tuple(part.encode() for part in key.split("."))
        quoted = quoted_setting_pattern(re.escape(key.encode()), ON_VALUE)
        written = re.escape(parts[-1]) + rb"[\s)]*=(?!=)" + GAP + rb"(?:" + ON_VALUE + b"|" + CHAINED + b")"
        return cls(parts, key.encode(), quoted, written)

    def in_bytes(self, data: bytes) -> bool:
        if not tokens_match((self.parts,), data):
            return False
        # One pass over the occurrences of the key's last name (a `find` each, at C speed) for both forms; `re`
        # would search each on its own. The quoted key's pattern starts with a quote, which
        # `re` would try at every quote of the file.
        key, name = self.key, self.parts[-1]
        ahead = len(key) - len(name)  # the bytes of a dotted key before its last name
        # The last name as a word: `config.debug =`, `patch(debug=`, not `is_debug =` nor `debug = True` (a name of
        # the module). A dotted key is set so only as an attribute (`config.trace.enabled = True`), never by a keyword
        # (`flags(enabled=True)`, in most files).
        follows = _DOT if len(self.parts) > 1 else _DOT_OR_ARGUMENT
        quoted = written = None
        resume = 0  # as ``finditer``: no match of the written form starts inside the one before
        at = data.find(name)
        while at != -1:
            start = at - ahead
            if start >= 1 and data[start - 1] in _QUOTES and data.startswith(key, start):
                quoted = quoted or re.compile(self.quoted)
                match = quoted.match(data, start - 1)
                # Two positional arguments: the key is a call's first (not a tuple's, nor `f(a, "k", v)`'s).
                if match and (match.group("settled") or match.group("entry") or opens_call(data, start - 1)):
                    return True
            if at >= resume:
                written = written or re.compile(self.written)
                match = written.match(data, at)
                if match:
                    resume = match.end()
                    if (at == 0 or not is_word_byte(data[at - 1])) and may_follow(data, at, follows):
                        return True
            at = data.find(name, at + 1)
        return False


_DOT = frozenset(b".")
_DOT_OR_ARGUMENT = frozenset(b".(,")  # an attribute, or a keyword argument


# A key is set through torch._inductor.config (assignment, patch: both spell `_inductor`), or in a dict passed
# as `inductor_configs=` or as `options=` to a compile function.
_QUOTES = b"\"'"
_CONFIG_CONTEXTS = ((b"_inductor",), (b"inductor_configs",), (b"compile", b"options"))
# A name the new API gives its config dict: a dict bound to a variable, an attribute or a dataclass field of this
# name is one (reported without following it to a compile call).
_NAMED_FOR_THE_API = "inductor_configs"
# What the first two contexts share: a file without it (most) costs one scan for both, not two.
_INDUCTOR = b"inductor"
_KEY_FORMS = tuple(_KeyForms.of(key) for key in SWITCHES_BY_CONFIG_KEY)
_SWITCHES_BY_LAST_NAME: dict[str, list[DebugSwitch]] = {}
for _key, _switch in SWITCHES_BY_CONFIG_KEY.items():
    _SWITCHES_BY_LAST_NAME.setdefault(_key.rsplit(".", 1)[-1], []).append(_switch)


class DebugInductorConfig(PythonSwitchRule):
    """
    ## What it does
    Finds debug keys of `torch._inductor.config` switched on in Python: assignments under any import form
    (`torch._inductor.config.nan_asserts = True`, `from torch._inductor import config`,
    `import torch._inductor.config as cfg`, nested keys such as `config.aot_inductor.debug_compile`),
    `config.patch(...)` with a keyword, a dict or a key and a value (as a call, decorator or context
    manager), and keys of the dict passed as `inductor_configs=` to `aoti_compile_and_package` or as
    `options=` to `torch._export.aot_compile`, `torch._inductor.aot_compile` and `torch.compile`, including
    a dict built in a variable of the same scope; the dict may be a display (its `**{...}` entries too) or a
    call of `dict` (its keywords, and the keys set afterwards in `options = dict(BASE)`). A dict bound to a name
    the new API gives its config dict, `inductor_configs` (a variable, or a dataclass field whose
    `default_factory` returns it), is one wherever it goes; a `patch` reached through a name bound to it
    (`patch = torch._inductor.config.patch`) is `config.patch`.

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
    exists to debug.
    There is no fix in a file that is a debugging tool on purpose: one under a `tools/`, `debug/` or
    `debugging/` folder (`scripts/debug/` too), or whose name has the word `debug`, `minify`, `minifier`,
    `repro` or `reproducer` (`run_debug.sh`, `minify_graph.py`); the finding stays. To silence such files,
    use per-file-ignores (docs/configuration.md, "Debugging tools").
    Add `# noqa: AOTI202` to keep it.
    """

    code = "AOTI202"
    name = "debug-inductor-config"
    references = (AOTI_DEBUGGING_GUIDE, INDUCTOR_CONFIG_SOURCE)
    summary = "A debug key of `torch._inductor.config` is switched on"
    fix_availability = "sometimes"
    # Necessary tokens; could_match below also wants one of the key's forms (see _KeyForms).
    triggers = tuple((*forms.parts, *context) for forms in _KEY_FORMS for context in _CONFIG_CONTEXTS)
    # Each context holds one: most files hold neither, and the screen settles them without the test below.
    screen_tokens = (_INDUCTOR, b"options")

    @classmethod
    def could_match(cls, data: bytes) -> bool:
        # "debug", "enabled" and "compile" are in most files' bytes; a key's forms (see _KeyForms) are not.
        in_context = tokens_match(_CONFIG_CONTEXTS if holds(data, _INDUCTOR) else _CONFIG_CONTEXTS[2:], data)
        return in_context and any(forms.in_bytes(data) for forms in _KEY_FORMS)

    @classmethod
    def could_match_code(cls, code: Any) -> bool:
        # `root.x.key = V` resolves to the config only when `root` is bound by an absolute import; a key in a
        # literal setting (dict entry, keyword, `patch(K, V)`, `d[K] = V`) counts when something can take it:
        # a `patch`, or a compile function given `inductor_configs=` / `options=`.
        for root, attr, value in code.attribute_writes:
            switches = _SWITCHES_BY_LAST_NAME.get(attr, ())
            if not any(switch.is_on_value(value) for switch in switches):
                continue
            # `cfg = torch._inductor.config`, `c = cfg.trace`: a name bound to an attribute, which the reading follows
            if root in code.import_bound or _binds_an_attribute(root, code.text):
                return True
        reached = code.reached
        compilers = {name.rsplit(".", 1)[-1] for name in CONFIG_DICT_KEYWORDS}
        passes_dict = bool(code.keywords & set(CONFIG_DICT_KEYWORDS.values())) and bool(reached & compilers)
        if not (passes_dict or "patch" in reached or _NAMED_FOR_THE_API in code.identifiers):
            return False
        for key, value in code.literal_settings:
            switch = SWITCHES_BY_CONFIG_KEY.get(key)
            if switch is not None and switch.is_on_value(value):
                return True
        return False

    @classmethod
    def check_ast(cls, code: Any, path: str) -> list[Finding] | None:
        # Assignments to a key (`config.debug = True`) only, in a file where nothing can take a config dict or
        # patch a key (see _AstConfigWrites); libcst reads any other.
        return _AstConfigWrites(cls, code, path).findings()

    @classmethod
    def tidy_after_fix(cls, text: str) -> str:
        """`torch._inductor.config` imported under a name of its own that the removed keys were the last users
        of (a bare `import torch._inductor.config` also binds `torch`, and stays)."""
        from aoti_lint.fixes.unused_imports import drop_unused

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
        value = literal_value(value_node)
        if switch is None or value is UNKNOWN or deliberate or not switch.is_on_value(value):
            return
        self.report(
            node,
            message(switch, f"{INDUCTOR_CONFIG}.{key}"),
            fix=remove_fix(key, edits, self.context.source.display_path),
        )

    def _config_key(self, node: Any, depth: int = 0) -> str | None:
        """The config key ``node`` names (`trace.enabled`), or "" for the config module itself; None for anything
        else. A name bound once to the config or a part of it (`cfg = torch._inductor.config`, then
        `c = cfg.trace`) is followed to the value it holds where it is read."""
        names = self.qualified_names(node)
        if INDUCTOR_CONFIG in names:
            return ""
        prefix = INDUCTOR_CONFIG + "."
        key = next((name[len(prefix) :] for name in names if name.startswith(prefix)), None)
        if key is not None or depth > 4:
            return key
        parts: list[str] = []
        root = node
        while isinstance(root, cst.Attribute):
            parts.append(root.attr.value)
            root = root.value
        if not isinstance(root, cst.Name) or root.value not in self._attribute_aliases():
            return None
        value = self.context.facts().single_value(root)
        base = self._config_key(value, depth + 1) if value is not None else None
        if base is None:
            return None
        return ".".join([base, *reversed(parts)] if base else reversed(parts)) or None

    def _attribute_aliases(self) -> frozenset[str]:
        """The names some `name = a.b` binds: the only ones ``_config_key`` follows."""

        def aliases() -> frozenset[str]:
            return frozenset(
                assign.targets[0].target.value
                for assign in self.context.facts().nodes(cst.Assign)
                if isinstance(assign.value, cst.Attribute)
                and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)
            )

        return self.context.memo("attribute-aliases", aliases)

    # Scopes: a dict built in a variable is reported where the variable reaches a compile call.

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(_Scope())

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._close_scope()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.append(_Scope())

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._close_scope()

    def leave_Module(self, node: cst.Module) -> None:
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

    def visit_Assign(self, node: cst.Assign) -> None:
        scope = self._scopes[-1]
        for assign_target in node.targets:
            target = assign_target.target
            if isinstance(target, cst.Name):
                mapping = node.value if self._is_mapping(node.value) and len(node.targets) == 1 else None
                scope.assignments.setdefault(target.value, []).append(mapping)
                if mapping is not None and target.value == _NAMED_FOR_THE_API:
                    for entry in self._entries(mapping):
                        self._report_key(*entry)
                elif mapping is not None:
                    scope.entries.setdefault(target.value, []).extend(self._entries(mapping))
            elif isinstance(target, cst.Attribute) and target.attr.value in _SWITCHES_BY_LAST_NAME:
                key = self._config_key(target)
                if key is not None:
                    edits = self.remove_statement(node) if len(node.targets) == 1 else ()
                    self._report_key(target, key, node.value, edits, self.deliberate)
            elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and len(node.targets) == 1:
                index = target.slice[0].slice if len(target.slice) == 1 else None
                if not isinstance(index, cst.Index):
                    continue
                key = string_literal(index.value)
                if key is not None:
                    entry = (index.value, key, node.value, self.remove_statement(node), self.deliberate)
                    scope.entries.setdefault(target.value.value, []).append(entry)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        """``inductor_configs: dict = {...}``, or a dataclass field ``= field(default_factory=lambda: {...})``."""
        target, value = node.target, node.value
        if not isinstance(target, cst.Name) or target.value != _NAMED_FOR_THE_API or value is None:
            return
        if isinstance(value, cst.Call) and "dataclasses.field" in self.qualified_names(value.func):
            factory = next(
                (a.value for a in value.args if a.keyword is not None and a.keyword.value == "default_factory"), None
            )
            value = factory.body if isinstance(factory, cst.Lambda) else None
        if value is not None and self._is_mapping(value):
            for entry in self._entries(value):
                self._report_key(*entry)

    def _is_mapping(self, node: Any) -> bool:
        """A dict display, or a call of the builtin `dict` (whose keywords are keys: `dict(BASE, debug=True)`)."""
        if isinstance(node, cst.Dict):
            return True
        return (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == "dict"
            and "builtins.dict" in self.qualified_names(node.func)
        )

    def _entries(self, mapping: Any) -> Iterator[tuple[Any, str, Any, tuple[Edit, ...], bool]]:
        """The literal keys a dict display or a `dict(...)` call sets, those of a `**{...}` inside it too."""
        if isinstance(mapping, cst.Call):
            for arg in mapping.args:
                if arg.keyword is not None:
                    edits = self.remove_element(mapping.args, arg)
                    yield arg.keyword, arg.keyword.value, arg.value, edits, self.deliberate
                elif not arg.star and isinstance(arg.value, cst.Dict):
                    yield from self._entries(arg.value)
            return
        for element in mapping.elements:
            if isinstance(element, cst.StarredDictElement) and isinstance(element.value, cst.Dict):
                inner = list(self._entries(element.value))
                if len(element.value.elements) == 1:  # `**{}` would be left: the whole element goes
                    whole = self.remove_element(mapping.elements, element)
                    inner = [(key_node, key, value, whole, deliberate) for key_node, key, value, _, deliberate in inner]
                yield from inner
                continue
            key = string_literal(element.key) if isinstance(element, cst.DictElement) else None
            if key is not None:
                yield element.key, key, element.value, self.remove_element(mapping.elements, element), self.deliberate

    @staticmethod
    def _may_patch(node: Any) -> bool:
        """The arguments could set a key as ``_patch`` reads them: a key as keyword, a dict, or a key and a
        value."""
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if len(positional) == 2 and string_literal(positional[0].value) is not None:
            return True
        return any(
            (arg.keyword is not None and arg.keyword.value in SWITCHES_BY_CONFIG_KEY)
            or (arg.keyword is None and isinstance(arg.value, cst.Dict))
            for arg in node.args
        )

    def visit_Call(self, node: cst.Call) -> None:
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
        # `patch = torch._inductor.config.patch`, then `@patch(debug=True)`: the name holds the function
        if _PATCH in names or (isinstance(node.func, cst.Name) and self._config_key(node.func) == "patch"):
            self._patch(node)
            return
        keyword = next((CONFIG_DICT_KEYWORDS[name] for name in names if name in CONFIG_DICT_KEYWORDS), None)
        arg = next((a for a in node.args if a.keyword is not None and a.keyword.value == keyword), None)
        if arg is None:
            return
        if self._is_mapping(arg.value):
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
        if isinstance(arg.value, cst.Call) or len(arg.value.elements) != 1:
            return entries
        whole = self.remove_element(args, arg)
        return ((key_node, key, value, whole, deliberate) for key_node, key, value, _, deliberate in entries)

    def _dict_update(self, node: Any) -> None:
        """``options.update({...})`` on a variable: more entries of the dict it holds."""
        target = node.func.value
        if isinstance(target, cst.Name) and len(node.args) == 1 and isinstance(node.args[0].value, cst.Dict):
            entries = list(self._entries(node.args[0].value))
            if sets_one_key(node):  # `options.update({})` would be left doing nothing: the statement goes, or no fix
                statement = self.statement_of(node)
                whole = self.remove_statement(statement) if statement is not None else ()
                entries = [(key_node, key, value, whole, deliberate) for key_node, key, value, _, deliberate in entries]
            self._scopes[-1].entries.setdefault(target.value, []).extend(entries)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        self._decorator = node

    def leave_Decorator(self, node: cst.Decorator) -> None:
        self._decorator = None

    def _patch(self, node: Any) -> None:
        args = node.args
        positional = [arg for arg in args if arg.keyword is None and not arg.star]
        pair = len(positional) == 2 and len(args) == 2
        # The last key of a patch takes the patch with it (`config.patch()` would be left doing nothing): the
        # decorator, the `with` (its body dedented), the statement; where none of these can go, no fix.
        whole = self._whole_patch(node) if pair or sets_one_key(node) else None
        if pair:
            key = string_literal(positional[0].value)
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
        newline = "\r\n" if "\r\n" in self.context.text else "\n"
        return (Edit(newline.join(dedented) + newline, Position(start.row, 1), Position(end_row + 1, 1)),)

    VALID = [
        Valid(
            """
            import torch
            cfg = torch._inductor.config
            cfg.max_autotune = True
            tracer = profiler.trace
            tracer.enabled = True
            """
        ),
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
        Valid(
            """
            import torch

            dict = lambda **kwargs: {}
            options = dict(BASE, nan_asserts=True)
            options["debug"] = flag
            torch._inductor.aoti_compile_and_package(ep, inductor_configs=options)
            torch._inductor.aoti_compile_and_package(ep, inductor_configs=dict(trace={"enabled": True}))
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
            from dataclasses import dataclass, field


            @dataclass
            class ExportConfig:
                inductor_configs: dict = field(default_factory=lambda: {"max_autotune": True, "trace.enabled": True})
            """,
            line=6,
            column=83,
            fixed="""
            from dataclasses import dataclass, field


            @dataclass
            class ExportConfig:
                inductor_configs: dict = field(default_factory=lambda: {"max_autotune": True})
            """,
        ),
        Invalid(
            """
            import torch

            patch = torch._inductor.config.patch


            @patch(nan_asserts=True)
            def export(model, inputs):
                return torch._inductor.aoti_compile_and_package(torch.export.export(model, inputs))
            """,
            line=6,
            column=8,
            fixed="""
            import torch

            patch = torch._inductor.config.patch


            def export(model, inputs):
                return torch._inductor.aoti_compile_and_package(torch.export.export(model, inputs))
            """,
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

            BASE = {"max_autotune": True}
            options = dict(BASE)
            options["debug_index_asserts"] = True
            torch._inductor.aoti_compile_and_package(ep, inductor_configs=options)
            torch._inductor.aoti_compile_and_package(ep, inductor_configs=dict(max_autotune=True, nan_asserts=True))
            torch._inductor.aoti_compile_and_package(ep, inductor_configs={**BASE, **{"trace.enabled": True}})
            """,
            count=3,
            fixed="""
            import torch

            BASE = {"max_autotune": True}
            options = dict(BASE)
            torch._inductor.aoti_compile_and_package(ep, inductor_configs=options)
            torch._inductor.aoti_compile_and_package(ep, inductor_configs=dict(max_autotune=True))
            torch._inductor.aoti_compile_and_package(ep, inductor_configs={**BASE})
            """,
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
        Invalid(
            """
            import torch
            cfg = torch._inductor.config
            c = cfg.trace
            c.enabled = True
            """,
            line=4,
            message_contains="torch._inductor.config.trace.enabled",
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


class _AstConfigWrites(AstReading):
    """AOTI202 read from ``ast`` for files whose only possible reports are assignments to a key through
    ``torch._inductor.config`` (``cfg.aot_inductor.debug_compile = True``, ``a = config.debug = 1``): no call in
    the file passes ``inductor_configs=`` / ``options=`` (which may take a dict of keys, or a name holding one)
    and no callee may be ``patch`` (by its last name or an imported one), the very test of ``could_match_code``;
    otherwise ``findings`` is None and libcst reads the file. A key assigned with one target is reported with the
    fix that removes the statement (its edits deferred), with more targets without a fix, as libcst's traversal
    reports it. It is read from ``ast`` only in a module, class or function body outside any ``if`` (whose
    condition may make it deliberate), with the target spelled as a plain dotted name whose root the module's own
    statements bind (``AstReading.qualified_names``), and the same holds for the rest as for AOTI201's reading
    (``debug_env_var._AstSettings``). ``tests/test_debug_switches.py`` compares both readings."""

    def findings(self) -> list[Finding] | None:
        import ast

        code = self.code
        reached = code.reached
        if code.keywords & _DICT_KEYWORDS or "patch" in reached or _NAMED_FOR_THE_API in code.identifiers:
            return None
        nodes = self.nodes()
        if nodes is None:
            return None
        candidates = [
            (node, target)
            for node in nodes
            if type(node) is ast.Assign
            for target in node.targets
            if type(target) is ast.Attribute and target.attr in _SWITCHES_BY_LAST_NAME
        ]
        if not candidates:
            return []
        if not self.read_imports():
            return None
        aliases = {
            node.targets[0].id
            for node in nodes
            if type(node) is ast.Assign
            and len(node.targets) == 1
            and type(node.targets[0]) is ast.Name
            and type(node.value) is ast.Attribute
        }
        if any(_root_name(target) in aliases for _, target in candidates):
            return None  # `c = cfg.trace`, then `c.enabled = True`: libcst's reading follows the name
        found = []
        for statement, target in candidates:
            verdict = self._write(statement, target)
            if verdict is None:
                return None
            if isinstance(verdict, Finding):
                found.append(verdict)
        return found

    def _write(self, statement: Any, target: Any) -> Finding | bool | None:
        """The finding at an assigned key; False where libcst reports none; None where it is not known here."""
        from aoti_lint.model.name_index import NOT_A_LITERAL, literal
        from aoti_lint.model.syntax_tree import source_segment

        names = self.qualified_names(target)
        if names is None:
            return None
        prefix = INDUCTOR_CONFIG + "."
        keys = {name[len(prefix) :] for name in names if name.startswith(prefix)}
        if not keys:
            return False  # not the config: libcst resolves it to no key either
        if len(keys) > 1:
            return None  # libcst takes the first of its set: which one is not known here
        (key,) = keys
        switch = SWITCHES_BY_CONFIG_KEY.get(key)
        value = literal(statement.value)
        if switch is None or value is NOT_A_LITERAL:
            return False  # not a debug key, or a value that is not a literal
        # libcst's range of a target in parentheses or split over lines is not the one `ast` gives.
        spelled = source_segment(self.lines, target)
        if not (spelled.isascii() and spelled.replace(".", "").replace("_", "").isalnum()):
            return None
        if not self.outside_compound_statements(statement):
            return None
        if not switch.is_on_value(value):  # type: ignore[arg-type]  # a literal: checked above
            return False
        fix = remove_fix(key, (), self.path, deferred=True) if len(statement.targets) == 1 else None
        return self.finding(target, message(switch, f"{INDUCTOR_CONFIG}.{key}"), fix)


def _root_name(node: Any) -> str | None:
    """The name an attribute chain starts from (`c` in `c.trace.enabled`)."""
    import ast

    while type(node) is ast.Attribute:
        node = node.value
    return node.id if type(node) is ast.Name else None


def _binds_an_attribute(name: str, text: str) -> bool:
    """Whether a line of ``text`` is `name = a.b` (the statement the reading follows a name through)."""
    import re

    pattern = rf"(?m)^[ \t]*{re.escape(name)}[ \t]*=[ \t]*[A-Za-z_][\w.]*\.[A-Za-z_]\w*[ \t]*(?:#.*)?$"
    return re.search(pattern, text) is not None
