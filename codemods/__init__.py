"""libcst codemods that migrate code off the deprecated AOTInductor API.

Installed as ``aoti_lint.codemods``; usable through ``aoti-lint --fix`` or
``python -m libcst.tool codemod aoti_lint.codemods.migrate_aoti.MigrateAotiCommand PATH``.
"""
