"""What a name imported from a module of the project stands for: the names that module binds it to, followed from
module to module (re-exports, aliases, star imports, compat modules), as astroid follows them, lazily.

``from mlserve import compile_model`` names ``mlserve.compile_model``; ``mlserve/__init__.py`` binds
``compile_model`` by ``from .aoti import aot_compile as compile_model``, and ``mlserve/aoti.py`` binds
``aot_compile`` by ``from torch._export import aot_compile``: the name is ``torch._export.aot_compile``. A name
the module binds otherwise (a def, a class, an assignment) stays the importer's; a module the project does not
hold (torch, the standard library) is not looked into; a name not found stays as it is. The modules are found by
``aoti_lint.read.project_modules`` and read by the semantic model, each once per process and file version.
"""

from __future__ import annotations

import ast

from aoti_lint.model.bindings import IMPORTS
from aoti_lint.model.semantic import SemanticModel
from aoti_lint.model.syntax_tree import parse_text
from aoti_lint.read.project_modules import module_file, once_per_version

# How many modules one name is followed through: a cycle, or a chain longer than any real one, stops there.
MAX_HOPS = 8

# path -> ((size, mtime), its model, or None where it does not parse)
_models: dict[str, tuple[tuple[int, int], SemanticModel | None]] = {}
# Every module read for the file being checked: its findings depend on them (``run.fixing`` clears it per file).
consulted: set[str] = set()


def module_model(path: str) -> SemanticModel | None:
    """The model of the project module at ``path`` (its tree: ``.tree``), read once per file version; the file being
    checked depends on it."""
    consulted.add(path)
    return once_per_version(_models, path, lambda data: _modelled(data, path))


def _modelled(data: bytes, path: str) -> SemanticModel | None:
    tree = parse_text(data)
    if isinstance(tree, BaseException):
        return None
    model = SemanticModel(tree)
    place(model, path)  # its own imports from the project are followed too (`ENV = environ` of `from x import`)
    return model


def place(model: SemanticModel, path: str) -> None:
    """Tell a module's model which file it is: the names it imports from the project's modules are followed."""
    model.path = path
    model.follow = lambda qualified: canonical(path, qualified)


# The names being followed: one met again while it is (a cycle of aliases between modules) is not known.
_busy: set[tuple[str, str]] = set()


def canonical(importer: str, qualified: str, hops: int = 0) -> set[str] | None:
    """The names ``qualified`` (as the semantic model of ``importer`` gives an imported name: relative ones with
    their dots) stands for once followed into the project's modules; None when its module is none of them."""
    level = len(qualified) - len(qualified.lstrip("."))
    parts = qualified[level:].split(".")
    # The longest leading part that is a module of the project; the rest is read off it.
    for size in range(len(parts), -1 if level else 0, -1):
        path = module_file(importer, ".".join(parts[:size]), level)
        if path is not None:
            break
    else:
        return None
    rest = parts[size:]
    if not rest:
        return {qualified} if not level else None
    key = (path, ".".join(rest))
    if hops >= MAX_HOPS or key in _busy:
        return None
    model = module_model(path)
    if model is None:
        return None
    _busy.add(key)
    try:
        return _bound_in(model, path, qualified, rest, hops)
    finally:
        _busy.discard(key)


def _bound_in(model: SemanticModel, path: str, qualified: str, rest: list[str], hops: int) -> set[str] | None:
    """What ``rest`` names in the module at ``path`` (``canonical``)."""
    name, tail = rest[0], rest[1:]
    bindings = model.module.live.get(name)
    if not bindings:  # bound by nothing but star imports, maybe: the last of them whose module binds it
        for star in reversed(model.module.star_imports):
            joined = ".".join(rest)
            found = canonical(path, f"{star}{joined}" if star.endswith(".") else f"{star}.{joined}", hops + 1)
            if found is not None:
                return found
        return None
    names: set[str] = set()
    for binding in bindings:
        value = binding.value
        if binding.kind not in IMPORTS:
            if isinstance(value, ast.Name | ast.Attribute):  # an alias: `load_so = _legacy_load`, `ENV = os.environ`
                names |= {".".join([found, *tail]) for found in model.qualified_names(value)}
            else:
                names.add(qualified)  # the module's own: named as the importer names it
            continue
        target = ".".join([binding.qualified_name, *tail])
        followed = canonical(path, target, hops + 1)
        if followed is not None:
            names |= followed
        elif not target.startswith("."):
            names.add(target)
        else:
            return None  # a relative name the project does not hold: not known
    return names


def defined_in(importer: str, qualified: str) -> tuple[str, str] | None:
    """The project file that binds what ``qualified`` names (a name of the importer's model, followed into the
    project: ``canonical``) once, and by no import nor star import, and the name it binds there; None otherwise."""
    if qualified.startswith("."):
        return None
    module, _, name = qualified.rpartition(".")
    path = module_file(importer, module) if module else None
    model = module_model(path) if path is not None else None
    if model is None or model.module.star_imports:
        return None
    bindings = model.module.bindings.get(name, ())
    if len(bindings) != 1 or bindings[0].kind in IMPORTS:
        return None
    return path, name  # type: ignore[return-value]  # path is a str where model is not None
