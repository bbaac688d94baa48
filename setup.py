"""The one part of the build that pyproject.toml cannot declare: the optional compiled scanner.

``optional=True``: where no C compiler or Python headers are found, the install goes on without it and
``aoti_lint.screen.token_scan`` uses its pure-Python equivalent (same results, slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("aoti_lint.screen._token_scan", ["aoti_lint/screen/_token_scan.c"], optional=True),
    ]
)
