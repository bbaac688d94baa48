"""The settings' defaults that matter before any configuration is read: where a configuration file may be, and
what no run reads unless told. Plain data: ``aoti_lint.fast_path`` reads it without importing ``config``."""

# The names a configuration file may have, in the order one directory is searched (as ruff: its own file first).
CONFIG_FILES = ("aoti-lint.toml", ".aoti-lint.toml", "pyproject.toml")

# ruff's default excludes, and this tool's cache: what no walk enters (a path named on the command line is read).
DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".aoti_lint_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "__pycache__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)
