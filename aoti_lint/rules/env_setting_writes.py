"""AOTI201's reading of a Python module: where it switches a debug environment variable on (``os.environ`` written,
``putenv``, ``setdefault``, ``update``, a dict a variable holds, ``env=`` of a ``subprocess`` call), and what removes
each setting."""

from __future__ import annotations

import ast

from aoti_lint.knowledge.debug_switches import SUBPROCESS_FUNCTIONS, SWITCHES_BY_ENV_VAR, DebugSwitch, message
from aoti_lint.model.name_index import string
from aoti_lint.rules.base import AstModule
from aoti_lint.rules.debug_switches import PythonSwitchReading, Removal, sets_one_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ENVIRON = "os.environ"
# The methods of `os.environ` that set a variable (`putenv` and `subprocess`'s `env=` are calls of functions).
_ENVIRON_METHODS = frozenset({"setdefault", "update"})


class EnvSettingWrites(PythonSwitchReading):
    """AOTI201 in one Python module: which settings switch a debug variable on, what ``os.environ`` and
    ``subprocess`` are from the semantic model, the dicts a variable holds from its one binding."""

    def __init__(self, rule: Any, module: AstModule) -> None:
        super().__init__(rule, module)
        self._named_dicts: set[int] = set()

    node_types = (ast.Assign, ast.Call)

    def read(self, node: ast.AST) -> None:
        if type(node) is ast.Assign:
            self._assignment(node)
        else:
            self._call(node)  # type: ignore[arg-type]

    # What sets a variable

    def _assignment(self, node: ast.Assign) -> None:
        for target in node.targets:
            if type(target) is not ast.Subscript or string(target.slice) not in SWITCHES_BY_ENV_VAR:
                continue
            if self._is_environ(target.value):
                whole = self.statement_removal(node) if len(node.targets) == 1 else None
                self._report_setting(target.slice, node.value, whole)

    def _call(self, node: ast.Call) -> None:
        func = node.func
        if type(func) is ast.Attribute and func.attr in _ENVIRON_METHODS:
            if (_may_set(node) or _updates_from_variable(node)) and self._is_environ(func.value):
                self._environ_method(node, func.attr)
            return
        env = next((keyword for keyword in node.keywords if keyword.arg == "env"), None)
        if env is None and not _may_set(node):
            return
        names = self.model.qualified_names(func)
        if "os.putenv" in names:
            self._key_value_call(node)
        elif env is not None and names & SUBPROCESS_FUNCTIONS:
            self._env_mapping(env)

    def _key_value_call(self, node: ast.Call) -> None:
        """``setdefault(K, V)`` / ``putenv(K, V)``: removable when the call is a statement of its own."""
        if len(node.args) != 2 or node.keywords or any(type(arg) is ast.Starred for arg in node.args):
            return
        self._report_setting(node.args[0], node.args[1], self.call_statement_removal(node))

    def _environ_method(self, node: ast.Call, method: str) -> None:
        if method == "setdefault":
            self._key_value_call(node)
            return
        # An update of one variable goes whole: `os.environ.update()` would be left doing nothing. Inside an
        # expression it cannot go: no fix.
        goes_whole = sets_one_key(node)
        whole = self.call_statement_removal(node) if goes_whole else None
        for keyword in node.keywords:
            if keyword.arg is not None:
                self._report_keyword(keyword, whole if goes_whole else self.element_removal(keyword))
        for arg in node.args:
            if type(arg) is ast.Dict:
                self._dict_entries(arg, whole, goes_whole)
            elif type(arg) is ast.Name:
                self._named_dict(arg)

    def _dict_entries(self, mapping: ast.Dict, whole: Removal | None = None, goes_whole: bool = False) -> None:
        """Each entry's setting; its fix removes the entry, or ``whole`` where the entry cannot go alone
        (``goes_whole``: None, then there is no fix)."""
        for key, value in zip(mapping.keys, mapping.values, strict=True):
            if key is not None:
                self._report_setting(key, value, whole if goes_whole else self.element_removal(key))

    def _named_dict(self, name: ast.Name) -> None:
        """A variable holding a dict display, assigned once where it is read (`os.environ.update(PRESET)`,
        `env=env`): its entries, reported once however many calls take it. Anything else is not known."""
        mapping = self.model.single_value(name)
        if type(mapping) is ast.Dict and id(mapping) not in self._named_dicts:
            self._named_dicts.add(id(mapping))
            self._dict_entries(mapping)

    def _env_mapping(self, env: ast.keyword) -> None:
        """``env={...}``, ``env={**os.environ, K: V}``, ``env=dict(os.environ, K=V)``, or a variable holding a
        dict display."""
        value = env.value
        if type(value) is ast.Name:
            self._named_dict(value)
        elif type(value) is ast.Dict:
            inherited = [v for k, v in zip(value.keys, value.values, strict=True) if k is None and self._is_environ(v)]
            whole = self._whole_env(env, len(value.keys), inherited)
            self._dict_entries(value, whole, whole is not None)
        elif type(value) is ast.Call and "builtins.dict" in self.model.qualified_names(value.func):
            inherited = [arg for arg in value.args if type(arg) is not ast.Starred and self._is_environ(arg)]
            whole = self._whole_env(env, len(value.args) + len(value.keywords), inherited)
            for keyword in value.keywords:
                if keyword.arg is not None:
                    self._report_keyword(keyword, whole or self.element_removal(keyword))

    def _whole_env(self, env: ast.keyword, items: int, inherited: list[ast.expr]) -> Removal | None:
        """Removing the `env=` argument, when its one setting goes and only ``os.environ`` would be left:
        ``env={**os.environ}`` is what the child inherits anyway."""
        if items != 2 or len(inherited) != 1:
            return None
        return self.element_removal(env)

    def _is_environ(self, node: ast.expr) -> bool:
        if ENVIRON in self.model.qualified_names(node):
            return True
        # `env = os.environ`, then `env[K] = V`: a name whose one binding reaching the read holds `os.environ`
        value = self.model.single_value(node) if type(node) is ast.Name else None
        return value is not None and ENVIRON in self.model.qualified_names(value)

    # Findings

    def _report_setting(self, key: ast.expr, value: ast.expr, removal: Removal | None) -> None:
        name = string(key)
        switch = SWITCHES_BY_ENV_VAR.get(name or "")
        if switch is not None and name is not None:
            self._report(key, name, switch, string(value), removal)

    def _report_keyword(self, keyword: ast.keyword, removal: Removal | None) -> None:
        name = keyword.arg or ""
        switch = SWITCHES_BY_ENV_VAR.get(name)
        if switch is not None:
            self._report(keyword, name, switch, string(keyword.value), removal, width=len(name))

    def _report(
        self,
        node: Any,
        name: str,
        switch: DebugSwitch,
        value: str | None,
        removal: Removal | None,
        width: int | None = None,
    ) -> None:
        if value is not None and not self.deliberate and switch.is_on_value(value):
            self.report(node, name, message(switch, name), removal, width)


def _may_set(node: ast.Call) -> bool:
    """The call's arguments could name a switch: a switch as keyword (``update(K=V)``), a dict
    (``update({K: V})``), or a switch as first of two positional arguments (``setdefault``, ``putenv``)."""
    positional = [arg for arg in node.args if type(arg) is not ast.Starred]
    if len(positional) == 2 and string(positional[0]) in SWITCHES_BY_ENV_VAR:
        return True
    return any(keyword.arg in SWITCHES_BY_ENV_VAR for keyword in node.keywords) or any(
        type(arg) is ast.Dict for arg in positional
    )


def _updates_from_variable(node: ast.Call) -> bool:
    """`environ.update(NAME)`."""
    return (
        node.func.attr == "update"  # type: ignore[attr-defined]
        and len(node.args) == 1
        and not node.keywords
        and type(node.args[0]) is ast.Name
    )
