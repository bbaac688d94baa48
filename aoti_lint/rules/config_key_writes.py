"""AOTI202's reading of a Python module: where it switches a key of ``torch._inductor.config`` on (an assignment to
the config module, ``config.patch`` as a call, a context manager or a decorator, a dict that reaches a compile call as
its ``inductor_configs=`` / ``options=``), and what removes each setting."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from aoti_lint.diagnostics import Edit, Position
from aoti_lint.knowledge.debug_switches import (
    CONFIG_DICT_KEYWORDS,
    INDUCTOR_CONFIG,
    SWITCHES_BY_CONFIG_KEY,
    DebugSwitch,
    message,
)
from aoti_lint.model.name_index import NOT_A_LITERAL, literal, string
from aoti_lint.rules.base import AstModule
from aoti_lint.rules.debug_switches import PythonSwitchReading, Removal, sets_one_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    # What a dict a reading found sets: (the node reported, the key, its value, what removes it, deliberate).
    _Entry = tuple[Any, str, ast.expr, Removal | None, bool]

_PATCH = INDUCTOR_CONFIG + ".patch"
_DICT_KEYWORDS = frozenset(CONFIG_DICT_KEYWORDS.values())
# A name the new API gives its config dict: a dict bound to a variable, an attribute or a dataclass field of this
# name is one (reported without following it to a compile call).
NAMED_FOR_THE_API = "inductor_configs"
# The switches by the last name of their key (`enabled` for `trace.enabled`): what an attribute written may set.
SWITCHES_BY_LAST_NAME: dict[str, list[DebugSwitch]] = {}
for _key, _switch in SWITCHES_BY_CONFIG_KEY.items():
    SWITCHES_BY_LAST_NAME.setdefault(_key.rsplit(".", 1)[-1], []).append(_switch)


@dataclass
class _Scope:
    """What one module, class or function body does with dict variables: a dict built in a variable is reported
    where the variable reaches a compile call of the same body."""

    # Whether each value assigned to a name is a dict (a display, or a call of `dict`).
    assignments: dict[str, list[bool]] = field(default_factory=dict)
    # Entries put in the dict a name holds.
    entries: dict[str, list[_Entry]] = field(default_factory=dict)
    # Names passed as a compile call's config dict, and whether every such call is deliberate.
    uses: dict[str, bool] = field(default_factory=dict)


class ConfigKeyWrites(PythonSwitchReading):
    """AOTI202 in one Python module: which keys the config module gets (assignments, ``patch``), which dicts reach
    a compile call as its config, from the semantic model's names and the one binding of a variable."""

    def __init__(self, rule: Any, module: AstModule) -> None:
        super().__init__(rule, module)
        self._scopes: dict[ast.AST, _Scope] = {}

    node_types = (ast.Assign, ast.AnnAssign, ast.Call)

    def read(self, node: ast.AST) -> None:
        kind = type(node)
        if kind is ast.Assign:
            self._assignment(node)  # type: ignore[arg-type]
        elif kind is ast.AnnAssign:
            self._annotated_assignment(node)  # type: ignore[arg-type]
        elif kind is ast.Call:
            self._call(node)  # type: ignore[arg-type]

    @property
    def _scope(self) -> _Scope:
        found = self._scopes.get(self.scope)
        if found is None:
            found = self._scopes[self.scope] = _Scope()
        return found

    def finish(self) -> None:
        for scope in self._scopes.values():
            for name, all_deliberate in scope.uses.items():
                assigned = scope.assignments.get(name, [])
                if not assigned or not all(assigned):
                    continue
                for where, key, value, removal, deliberate in scope.entries.get(name, []):
                    self._report(where, key, value, removal, deliberate or all_deliberate)

    # Assignments

    def _assignment(self, node: ast.Assign) -> None:
        scope = self._scope
        alone = len(node.targets) == 1
        for target in node.targets:
            kind = type(target)
            if kind is ast.Name:
                mapping = node.value if alone and self._is_mapping(node.value) else None
                scope.assignments.setdefault(target.id, []).append(mapping is not None)  # type: ignore[attr-defined]
                if mapping is not None and target.id == NAMED_FOR_THE_API:  # type: ignore[attr-defined]
                    self._report_all(self._entries(mapping))
                elif mapping is not None:
                    scope.entries.setdefault(target.id, []).extend(self._entries(mapping))  # type: ignore[attr-defined]
            elif kind is ast.Attribute and target.attr in SWITCHES_BY_LAST_NAME:  # type: ignore[attr-defined]
                key = self._config_key(target)
                if key is not None:
                    removal = self.statement_removal(node) if alone else None
                    self._report(target, key, node.value, removal, self.deliberate)
            elif kind is ast.Subscript and type(target.value) is ast.Name and alone:  # type: ignore[attr-defined]
                key = string(target.slice)  # type: ignore[attr-defined]
                if key is not None:
                    entry = (target.slice, key, node.value, self.statement_removal(node), self.deliberate)  # type: ignore[attr-defined]
                    scope.entries.setdefault(target.value.id, []).append(entry)  # type: ignore[attr-defined]

    def _annotated_assignment(self, node: ast.AnnAssign) -> None:
        """``inductor_configs: dict = {...}``, or a dataclass field ``= field(default_factory=lambda: {...})``."""
        target, value = node.target, node.value
        if type(target) is not ast.Name or target.id != NAMED_FOR_THE_API or value is None:
            return
        if type(value) is ast.Call and "dataclasses.field" in self.model.qualified_names(value.func):
            factory = next((k.value for k in value.keywords if k.arg == "default_factory"), None)
            value = factory.body if type(factory) is ast.Lambda else None
        if value is not None and self._is_mapping(value):
            self._report_all(self._entries(value))

    def _config_key(self, node: ast.expr, depth: int = 0) -> str | None:
        """The config key ``node`` names (`trace.enabled`), or "" for the config module itself; None for anything
        else. A name assigned an attribute of the config or the config (`cfg = torch._inductor.config`, then
        `c = cfg.trace`) is followed to the value its one binding gives it."""
        names = self.model.qualified_names(node)
        if INDUCTOR_CONFIG in names:
            return ""
        prefix = INDUCTOR_CONFIG + "."
        key = min((name[len(prefix) :] for name in names if name.startswith(prefix)), default=None)
        if key is not None or depth > 4:
            return key
        parts: list[str] = []
        root = node
        while type(root) is ast.Attribute:
            parts.append(root.attr)
            root = root.value
        value = self.model.single_value(root) if type(root) is ast.Name else None
        base = self._config_key(value, depth + 1) if type(value) is ast.Attribute else None
        if base is None:
            return None
        return ".".join([base, *reversed(parts)] if base else reversed(parts)) or None

    # Dicts

    def _is_mapping(self, node: ast.expr) -> bool:
        """A dict display, or a call of the builtin `dict` (whose keywords are keys: `dict(BASE, debug=True)`)."""
        if type(node) is ast.Dict:
            return True
        return (
            type(node) is ast.Call
            and type(node.func) is ast.Name
            and node.func.id == "dict"
            and "builtins.dict" in self.model.qualified_names(node.func)
        )

    def _entries(self, mapping: ast.expr) -> list[_Entry]:
        """The literal keys a dict display or a `dict(...)` call sets, those of a `**{...}` inside it too."""
        deliberate = self.deliberate
        if type(mapping) is ast.Call:
            found: list[_Entry] = []
            for arg in mapping.args:
                if type(arg) is ast.Dict:
                    found += self._entries(arg)
            for keyword in mapping.keywords:
                if keyword.arg is not None:
                    found.append((keyword, keyword.arg, keyword.value, self.element_removal(keyword), deliberate))
            return found
        found = []
        for key, value in zip(mapping.keys, mapping.values, strict=True):  # type: ignore[attr-defined]
            if key is None:
                if type(value) is ast.Dict:
                    inner = self._entries(value)
                    # `**{}` would be left: the whole entry goes
                    found += _removed_by(inner, self.element_removal(value)) if len(value.keys) == 1 else inner
                continue
            name = string(key)
            if name is not None:
                found.append((key, name, value, self.element_removal(key), deliberate))
        return found

    def _dict_update(self, node: ast.Call) -> None:
        """``options.update({...})`` on a variable: more entries of the dict it holds."""
        target = node.func.value  # type: ignore[attr-defined]
        if type(target) is not ast.Name or len(node.args) != 1 or node.keywords or type(node.args[0]) is not ast.Dict:
            return
        entries = self._entries(node.args[0])
        if sets_one_key(node):  # `options.update({})` would be left doing nothing: the statement goes, or no fix
            entries = _removed_by(entries, self.call_statement_removal(node))
        self._scope.entries.setdefault(target.id, []).extend(entries)

    # Calls: compile functions given a config dict, `patch`

    def _call(self, node: ast.Call) -> None:
        func = node.func
        if type(func) is ast.Attribute and func.attr == "update":
            self._dict_update(node)
        takes_dict = any(keyword.arg in _DICT_KEYWORDS for keyword in node.keywords)
        if not (takes_dict or _may_patch(node)):
            return
        names = self.model.qualified_names(func)
        # `patch = torch._inductor.config.patch`, then `@patch(debug=True)`: the name holds the function
        if _PATCH in names or (type(func) is ast.Name and self._config_key(func) == "patch"):
            self._patch(node)
            return
        wanted = next((CONFIG_DICT_KEYWORDS[name] for name in sorted(names) if name in CONFIG_DICT_KEYWORDS), None)
        keyword = next((k for k in node.keywords if k.arg is not None and k.arg == wanted), None)
        if keyword is None:
            return
        value = keyword.value
        if self._is_mapping(value):
            entries = self._entries(value)
            # The last entry takes the argument with it: `options={}` means what no argument means.
            if type(value) is ast.Dict and len(value.keys) == 1:
                entries = _removed_by(entries, self.element_removal(keyword))
            self._report_all(entries)
        elif type(value) is ast.Name:
            uses = self._scope.uses
            uses[value.id] = uses.get(value.id, True) and self.deliberate

    def _patch(self, node: ast.Call) -> None:
        positional = [arg for arg in node.args if type(arg) is not ast.Starred]
        pair = len(positional) == 2 and len(node.args) + len(node.keywords) == 2
        # The last key of a patch takes the patch with it (`config.patch()` would be left doing nothing): the
        # decorator, the `with` (its body dedented), the statement; where none of these can go, no fix.
        goes_whole = pair or sets_one_key(node)
        whole = self._whole_patch(node) if goes_whole else None
        if pair:
            key = string(positional[0])
            if key is not None:
                self._report(positional[0], key, positional[1], whole, self.deliberate)
            return
        entries: list[_Entry] = []
        for arg in positional:
            if type(arg) is ast.Dict:
                entries += self._entries(arg)
        for keyword in node.keywords:
            if keyword.arg is not None:
                entries.append((keyword, keyword.arg, keyword.value, self.element_removal(keyword), self.deliberate))
        self._report_all(_removed_by(entries, whole) if goes_whole else entries)

    def _whole_patch(self, node: ast.Call) -> Removal | None:
        parent = self.parents.get(node)
        edits: tuple[Edit, ...] = ()
        if isinstance(parent, _DECORATED) and any(decorator is node for decorator in parent.decorator_list):
            last = node.end_lineno or node.lineno
            edits = (Edit("", Position(node.lineno, 1), Position(last + 1, 1)),)
        elif type(parent) is ast.Expr:
            return self.statement_removal(parent)
        elif type(parent) is ast.withitem and parent.optional_vars is None:
            block = self.parents.get(parent)
            if type(block) is ast.With and len(block.items) == 1:
                edits = self._unwrap_with(block)
        return (lambda: edits) if edits else None

    def _unwrap_with(self, node: ast.With) -> tuple[Edit, ...]:
        """``with config.patch(k=v):`` and its body become the body, one indent level out; no edit when the
        body holds a line that dedenting could change (a multi-line string, a backslash continuation)."""
        start = self.start(node)
        first_statement = self.start(node.body[0])
        lines = _LINE_END.split(self.text)
        if lines[first_statement.row - 1][: first_statement.column - 1].strip():  # `with patch(k=v): body`
            return (Edit("", start, first_statement),)
        indent = lines[start.row - 1][: start.column - 1]
        end_row = node.end_lineno or start.row
        inner = lines[self._colon_row(node) : end_row]
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
        newline = "\r\n" if "\r\n" in self.text else "\n"
        return (Edit(newline.join(dedented) + newline, Position(start.row, 1), Position(end_row + 1, 1)),)

    def _colon_row(self, node: ast.With) -> int:
        """The row of the colon ending a `with` statement's header: after its last item, only closing brackets,
        blanks, line continuations and comments come before it."""
        item = node.items[-1].context_expr
        row = item.end_lineno or node.lineno
        column = self.module.end(item).column - 1
        while row <= len(self.lines):
            line = self.lines[row - 1]
            while column < len(line) and line[column] not in ":#":
                column += 1
            if column < len(line) and line[column] == ":":
                return row
            row, column = row + 1, 0
        return row

    # Findings

    def _report_all(self, entries: list[_Entry]) -> None:
        for entry in entries:
            self._report(*entry)

    def _report(self, where: Any, key: str, value: ast.expr, removal: Removal | None, deliberate: bool) -> None:
        switch = SWITCHES_BY_CONFIG_KEY.get(key)
        if switch is None or deliberate:
            return
        on = literal(value)
        if on is NOT_A_LITERAL or not switch.is_on_value(on):  # type: ignore[arg-type]
            return
        width = len(key) if type(where) is ast.keyword else None
        self.report(where, key, message(switch, f"{INDUCTOR_CONFIG}.{key}"), removal, width)


_DECORATED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_LINE_END = re.compile(r"\r\n?|\n")  # rows as the edits count them (a lone "\r" ends a line too)


def _removed_by(entries: list[_Entry], removal: Removal | None) -> list[_Entry]:
    """The entries, each removed with what removes them all (the container they leave empty)."""
    return [(where, key, value, removal, deliberate) for where, key, value, _, deliberate in entries]


def _may_patch(node: ast.Call) -> bool:
    """The arguments could set a key as ``_patch`` reads them: a key as keyword, a dict, or a key and a value."""
    positional = [arg for arg in node.args if type(arg) is not ast.Starred]
    if len(positional) == 2 and string(positional[0]) is not None:
        return True
    return any(keyword.arg in SWITCHES_BY_CONFIG_KEY for keyword in node.keywords) or any(
        type(arg) is ast.Dict for arg in positional
    )
