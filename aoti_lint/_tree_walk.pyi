import ast
from collections.abc import Callable

def walk(
    root: ast.AST,
    base: type[ast.AST],
    fields_of: dict[type, tuple[str, ...]],
    child_fields: Callable[[type[ast.AST]], tuple[str, ...]],
    skip: tuple[type[ast.AST], ...] | None,
    /,
) -> list[ast.AST]: ...
def children(
    node: ast.AST,
    base: type[ast.AST],
    fields_of: dict[type, tuple[str, ...]],
    child_fields: Callable[[type[ast.AST]], tuple[str, ...]],
    /,
) -> list[ast.AST]: ...
