"""The one traversal of a module for the AstRules (``aoti_lint.rules.checker``): each node is walked once whatever
the number of rules, and each rule's reader sees only the node types it declares."""

from __future__ import annotations

import ast
import textwrap

from aoti_lint.model.name_index import code_index
from aoti_lint.model.syntax_tree import walk
from aoti_lint.rules import ALL_RULES
from aoti_lint.rules import checker as checker_module
from aoti_lint.rules.base import AstModule, AstReader, AstRule

TEXT = textwrap.dedent(
    """
    import os
    import torch

    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    torch._inductor.config.debug = True


    @torch.library.impl_abstract("mylib::twice")
    def _(x):
        return x.new_empty(int(x.shape[0]) * 2)


    torch._inductor.aoti_load_package("model.so", device="cuda")
    """
)
AST_RULES = [rule for rule in ALL_RULES if issubclass(rule, AstRule)]


def _module() -> AstModule:
    index = code_index(TEXT)
    assert index is not None and index.tree is not None
    return AstModule(index, "m.py")


def test_every_node_is_walked_once_for_all_the_rules(monkeypatch):
    walked: list[ast.AST] = []
    children = checker_module.children
    monkeypatch.setattr(checker_module, "children", lambda node: walked.append(node) or children(node))
    module = _module()
    found = checker_module.check_module(AST_RULES, module)
    assert len(walked) == len(list(walk(module.tree)))
    assert {finding.code for finding in found} >= {"AOTI003", "AOTI201", "AOTI202", "AOTI301", "AOTI303"}


def test_a_reader_sees_only_the_node_types_it_declares():
    seen: list[type] = []

    class Calls(AstReader):
        node_types = (ast.Call,)

        def visit(self, node: ast.AST) -> None:
            seen.append(type(node))

    class CallsOnly(AstRule):
        code = "AOTI999"

        @classmethod
        def reader(cls, module: AstModule) -> AstReader:
            return Calls(cls, module)

    checker_module.check_module([CallsOnly], _module())
    assert seen and set(seen) == {ast.Call}
