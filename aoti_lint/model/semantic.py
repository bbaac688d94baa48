"""The one reading of what a module's names mean: scopes, bindings in order, imports as qualified names.

As ruff's ``SemanticModel`` and pyflakes' checker, on the standard library's ``ast``: one traversal in evaluation
order binds what each node introduces and resolves every read of a name to the bindings that may reach it.
Module and class bodies are visited in statement order; function and lambda bodies afterwards, so that they see
the bindings their enclosing scopes end with (as at call time). A binding replaces the earlier ones of its scope
only where it runs whenever they ran (the same branch or one around theirs): after ``try: import a as x`` /
``except ImportError: x = None`` both reach a read, after ``x = 1`` / ``x = 2`` only the second does.

What a read names (``qualified_names``): an import's module path plus the attributes read off it
(``torch._export.aot_load``; relative imports keep their dots, ``.aoti.compile``), a builtin as ``builtins.X``,
anything the module binds otherwise by where it is bound (``<module>.CONFIG``, ``Runner.path``,
``main.<locals>.so``: a module's variable is never mistaken for an import's path). A
name bound by no scope is a builtin or nothing. Callees name a call, values a subscript (``f(x)`` is read as ``f``).
Everything is answered from the tree alone: the linter never imports the code it reads.
"""

from __future__ import annotations

import ast
import builtins
import functools
from collections.abc import Iterable

from aoti_lint.model.binder import Binder
from aoti_lint.model.bindings import ASSIGNMENT, IMPORT, IMPORTS, Binding, Scope, is_none, joined


def last_parts(*tables: Iterable[str]) -> frozenset[str]:
    """The last parts of qualified names (``aoti_load_package`` of ``torch._inductor.aoti_load_package``): what
    a callee must be spelled with to have one of them (``SemanticModel.may_name``)."""
    return frozenset(name.rsplit(".", 1)[-1] for table in tables for name in table)


class SemanticModel(Binder):
    """The scopes and bindings of one module (``Binder``), and what they answer: the bindings each read of a name may
    reach, what it names, the reads of each binding."""

    def bindings_of(self, name: ast.AST) -> tuple[Binding, ...] | None:
        """The bindings a read may reach (empty when none: a builtin, or unbound), or the binding a store makes;
        None when unknown (a star import may bind it) or the node is no name the model saw."""
        binding = self._binds.get(id(name))
        if binding is not None:
            return (binding,)
        return self._reads.get(id(name))

    def binding_made_by(self, node: ast.AST) -> Binding | None:
        """The binding a Name stored to, an import alias, a def, a class or an argument makes."""
        return self._binds.get(id(node))

    def scope_of(self, name: ast.Name) -> Scope | None:
        """The scope a name is read or stored in."""
        return self._scope_of_name.get(id(name))

    def qualified_names(self, node: ast.AST, *, across_modules: bool = True) -> set[str]:
        """What a name or an attribute chain on one names: the qualified names of every binding that may reach its
        first name, with the attributes after it. A call is named by its callee and a subscript by its value,
        within a chain too: ``Path(p).parent`` is ``pathlib.Path.parent``, how the value readings tell a path's
        methods."""
        parts = []
        while True:
            kind = type(node)
            if kind is ast.Attribute:
                parts.append(node.attr)  # type: ignore[attr-defined]
                node = node.value  # type: ignore[attr-defined]
            elif kind is ast.Call:
                node = node.func  # type: ignore[attr-defined]
            elif kind is ast.Subscript:
                node = node.value  # type: ignore[attr-defined]
            else:
                break
        if type(node) is not ast.Name:
            return set()
        return self.names_of(node, parts[::-1], across_modules=across_modules)

    def names_of(self, head: ast.AST, tail: list[str], *, across_modules: bool = True) -> set[str]:
        """The qualified names of ``head.tail[0].tail[1]...``, ``head`` a name (or an argument, a def, a class). A
        name imported from a module of the project is what that module binds it to (``project_names``), once the
        model knows its file's ``path``; ``across_modules=False``: as this module alone names it."""
        bindings = self.bindings_of(head)
        if bindings is None and across_modules and self.follow is not None:
            # Bound by nothing but star imports: the last of them whose module binds it.
            name = ".".join([getattr(head, "id", ""), *tail])
            for star in reversed(self.module.star_imports):
                found = self.follow(f"{star}{name}" if star.endswith(".") else f"{star}.{name}")
                if found is not None:
                    return found
        if not bindings:  # unbound here, or bound by nothing the model can see
            name = getattr(head, "id", "")
            return {".".join(["builtins", name, *tail])} if hasattr(builtins, name) else set()
        if tail:  # `torch = None` in an `except ImportError:`: None has no attributes to read
            bindings = tuple(b for b in bindings if not is_none(b.value))
        names: set[str] = set()
        for binding in bindings:
            name = joined(binding, tail)
            if across_modules and self.follow is not None and binding.kind in IMPORTS:
                followed = self.follow(name)
                if followed is not None:
                    names |= followed
                    continue
            names.add(name)
        return names

    def may_name(self, node: ast.AST, short_names: frozenset[str] | set[str]) -> bool:
        """Whether the node's qualified names can end in one of ``short_names``: a test of its spelling, to make
        before asking for its names. A call is named by its callee, a subscript by its value; a name keeps its own
        unless an ``as`` import renamed it."""
        while isinstance(node, ast.Call | ast.Subscript):
            node = node.func if isinstance(node, ast.Call) else node.value
        if type(node) is ast.Attribute:
            return node.attr in short_names
        return type(node) is ast.Name and self.may_be_named(node.id, short_names)

    def may_be_named(self, name: str, short_names: frozenset[str] | set[str]) -> bool:
        """Whether a name read can have a qualified name ending in one of ``short_names``: it is one, or an import
        renamed it, or (once the model knows its file) it is imported from a module the project may hold."""
        return (
            name in short_names or name in self.import_aliases or (self.path is not None and name in self.from_imported)
        )

    def only_binding(self, read: ast.AST) -> Binding | None:
        """The one binding a read may reach, or None (none, several, or unknown)."""
        found = self.bindings_of(read)
        return found[0] if found is not None and len(found) == 1 else None

    def single_value(self, read: ast.AST) -> ast.expr | None:
        """The value of the variable read at ``read`` when one plain assignment to it alone reaches the read
        (``x = V`` or ``x: T = V``, ``x`` its one target)."""
        binding = self.only_binding(read)
        if binding is None or binding.kind != ASSIGNMENT:
            return None
        statement = binding.statement
        if type(statement) is ast.Assign and statement.targets == [binding.node]:
            return statement.value
        if type(statement) is ast.AnnAssign and statement.target is binding.node:
            return statement.value
        return None

    def references(self, binding: Binding) -> list[ast.Name] | None:
        """Every read of the binding when it is the only binding each of them may reach, else None."""
        if any(len(self._reads.get(id(read)) or ()) != 1 for read in binding.references):
            return None
        return list(binding.references)

    def may_be_import(self, read: ast.AST) -> bool:
        """Whether an import may be what a read reaches (or it is not known)."""
        found = self.bindings_of(read)
        return not found or any(binding.kind in IMPORTS for binding in found)

    def binds_only_a_module(self, name: str, module: str) -> bool:
        """Whether every binding of ``name``, in every scope, is a plain import of ``module`` (``import torch``,
        ``import torch.fx``), and no star import may bind it."""
        bindings = [binding for scope in self.scopes for binding in scope.bindings.get(name, ())]
        if any(scope.star_imports for scope in self.scopes):
            return False
        return all(
            binding.kind == IMPORT
            and (
                binding.node.name.partition(".")[0] == module  # type: ignore[attr-defined]
                if binding.node.asname is None  # type: ignore[attr-defined]
                else binding.node.name == module  # type: ignore[attr-defined]
            )
            for binding in bindings
        )


@functools.lru_cache(maxsize=2)
def model_of(tree: ast.Module) -> SemanticModel:
    """The model of a tree, built once however many readers ask (the tree of one text is shared: ``parse``)."""
    return SemanticModel(tree)
