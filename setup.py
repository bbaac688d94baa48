"""The one part of the build that pyproject.toml cannot declare: the optional compiled scanners.

``optional=True``: where no C compiler or Python headers are found, the install goes on without them and
``aoti_lint.token_scan`` and ``aoti_lint.pyast`` use their pure-Python equivalents (same results, slower on large
trees).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("aoti_lint._token_scan", ["aoti_lint/_token_scan.c"], optional=True),
        Extension("aoti_lint._tree_walk", ["aoti_lint/_tree_walk.c"], optional=True),
    ]
)
