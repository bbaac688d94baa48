"""The one traversal of a module's ``ast`` tree for the ``AstRule``s, as ruff's checker: each rule's reader is called
for the node types it declares (``AstReader.node_types``), in source order, every node's parent known before it is
visited (``AstModule.parents``); then each reader gives its findings."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from aoti_lint.diagnostics import Finding
from aoti_lint.model.syntax_tree import children

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast

    from aoti_lint.rules.base import AstModule, AstRule


def check_module(rules: Iterable[type[AstRule]], module: AstModule) -> list[Finding]:
    """The findings of ``rules`` in the module, in the order of their places."""
    readers = [rule.reader(module) for rule in rules]
    visits: dict[type[ast.AST], list[Callable[[ast.AST], None]]] = {}
    for reader in readers:
        for node_type in reader.node_types:
            visits.setdefault(node_type, []).append(reader.visit)
    if visits:
        parents = module.parents
        stack: list[ast.AST] = [module.tree]
        pop, push = stack.pop, stack.extend
        while stack:
            node = pop()
            for visit in visits.get(type(node), ()):
                visit(node)
            below = children(node)
            for child in below:
                parents[child] = node
            push(reversed(below))
    found = [finding for reader in readers for finding in reader.findings()]
    return sorted(found, key=lambda finding: (finding.start, finding.end))
