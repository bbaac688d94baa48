"""The lint core's layers, read from the modules' own imports: no import cycle anywhere in aoti_lint/ and
codemods/, and each module of the data flow imports only what lies below it (CONTRIBUTING.md, "Layers")."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# codemods/ is installed as aoti_lint.codemods (pyproject.toml).
PACKAGES = {"aoti_lint": ROOT / "aoti_lint", "aoti_lint.codemods": ROOT / "codemods"}

# The lint core as data flows through it, bottom first: a module may import those before it, never one after.
CORE = (
    "aoti_lint.settings.run_options",
    "aoti_lint.diagnostics",
    "aoti_lint.read.source",
    "aoti_lint.model.name_index",
    "aoti_lint.rules.base",
    "aoti_lint.run.file_context",
    "aoti_lint.run.prefilter",
    "aoti_lint.model.parse",
    "aoti_lint.model.suppressions",
    "aoti_lint.run.engine",
    "aoti_lint.run.fixing",
    "aoti_lint.run.disk",
    "aoti_lint.run.ruleset",
    "aoti_lint.run.cache",
    "aoti_lint.run.runner",
    "aoti_lint.run.project_pass",
    "aoti_lint.run.lint",
    "aoti_lint.show_flows",
    "aoti_lint.cli",
)


def module_files() -> dict[str, Path]:
    modules = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _type_checking_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports anywhere in its body, functions included (a lazy import is an edge
    all the same); imports under ``if TYPE_CHECKING:`` are left out, as they never run, and so are those of a
    module-level ``__getattr__`` that keeps an old import path working. ``from p import m``
    counts as an import of the module ``p.m`` when there is one."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if node is tree and isinstance(child, ast.FunctionDef) and child.name == "__getattr__":
                continue  # a module's __getattr__ (PEP 562) re-exports a name under an old path: an alias, not a use
            if _type_checking_only(child):
                for item in child.orelse:  # type: ignore[attr-defined]
                    visit_node(item)
                continue
            visit_node(child)

    def visit_node(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target:
                    found.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                if f"{source}.{alias.name}" in modules:
                    found.add(f"{source}.{alias.name}")
                elif source in modules:
                    found.add(source)
        visit(node)

    tree = ast.parse(path.read_text(encoding="utf-8"))
    visit(tree)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(found)


def test_the_import_graph_sees_lazy_imports_and_skips_type_checking_ones():
    graph = import_graph()
    # Function-level imports are edges: the runner imports the cache only when a run has one.
    assert "aoti_lint.run.cache" in graph["aoti_lint.run.runner"]
    # The cycle finder finds a cycle when there is one.
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    # `if TYPE_CHECKING:` imports never run: rules/base names CodeIndex only for the type checker.
    assert "aoti_lint.model.name_index" not in graph["aoti_lint.rules.base"]
    # migrate_aoti.MigrateAotiCommand, the documented libcst.tool path, is the command over the migration, which
    # never imports it back.
    assert "aoti_lint.codemods.migrate_aoti" not in graph["aoti_lint.codemods.migration"]
    assert "aoti_lint.codemods.migration" in graph["aoti_lint.codemods.migrate_aoti"]


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_core_imports_only_what_lies_below():
    graph = import_graph()
    assert set(CORE) <= set(graph)
    upward = [
        f"{module} imports {target}"
        for position, module in enumerate(CORE)
        for target in sorted(graph[module] & set(CORE[position + 1 :]))
    ]
    assert upward == []


def folder_of(module: str) -> str | None:
    """The folder of ``aoti_lint/`` a module lives in (codemods/ counts as one); None for the top-level modules,
    the commands above every folder."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and module_files()[module].name == "__init__.py"):
        return parts[1]
    return None


def test_the_folders_import_downwards_only():
    """The folders are layers (CONTRIBUTING.md, "The lint core's layers"): no two import each other, even through
    others."""
    folders: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        source = folder_of(module)
        if source is None:
            continue
        folders.setdefault(source, set()).update(
            target for target in map(folder_of, targets) if target is not None and target != source
        )
    assert cycles(folders) == []
    assert {"read", "settings", "screen", "model", "rules", "flows", "fixes", "run", "report"} <= set(folders)


def test_libcst_is_the_fix_layers_alone():
    """Every rule reads Python from ``ast``: libcst, which writes fixes, is imported only by the codemods and the fix
    layer (``aoti_lint/fixes/``, and ``aoti_lint/run/fix_*.py``, which builds fixes' edits)."""
    found = []
    for path in module_files().values():
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(("codemods/", "aoti_lint/fixes/")) or path.name.startswith("fix"):
            continue
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("libcst."):
                names = [node.value]
            found += [f"{relative}: {name}" for name in names if name.split(".")[0] == "libcst"]
    assert found == []
