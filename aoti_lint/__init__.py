"""aoti-lint: find and fix AOTInductor pitfalls before they crash in production."""

__version__ = "0.1.0"
