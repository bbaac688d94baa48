"""Writing fixes: text edits, imports a fix left unused, `--add-noqa`, and safe writes of users' files."""
