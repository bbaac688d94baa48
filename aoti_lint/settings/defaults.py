"""The settings' defaults that matter before any configuration is read: where a configuration file may be, what
no run reads unless told, and where the cache is. Plain data: ``aoti_lint.entry_point`` reads it without importing
``config``."""

# The names a configuration file may have, in the order one directory is searched (as ruff: its own file first).
CONFIG_FILES = ("aoti-lint.toml", ".aoti-lint.toml", "pyproject.toml")

# The suffixes of the files read as Python (``source.file_kind``); the entry point checks that they parse.
PYTHON_SUFFIXES = (".py", ".pyi")

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

# The cache directory: at the project root unless the environment names one; what marks it as a cache.
CACHE_DIR_NAME = ".aoti_lint_cache"
CACHE_DIR_ENV = "AOTI_LINT_CACHE_DIR"
CACHE_GITIGNORE = b"# Created by aoti-lint automatically.\n*\n"
CACHEDIR_TAG = b"Signature: 8a477f597d28d172789f06886806bc55\n# This is a cache directory created by aoti-lint.\n"
# A file whose mtime or ctime is this recent may change again within the same timestamp tick: its stat is not taken
# for its content yet (``stamps``, ``pyproject_verdicts``). FAT counts mtimes in 2 s steps, HFS+ in 1 s; Linux
# filesystems in clock ticks of a few milliseconds.
RACY_SECONDS = 2
# The output format, where no option or setting names one.
OUTPUT_FORMAT_ENV = "AOTI_LINT_OUTPUT_FORMAT"
