"""What --fix promises whatever a rule's fix does: never a broken file, never a write when nothing changed."""

from __future__ import annotations

from aoti_lint.cli import main
from aoti_lint.codemods import migration
from aoti_lint.diagnostics import Applicability, Edit, Fix, Position
from aoti_lint.run import engine, fix_edits

SOURCE = "import torch\n\nso = torch._export.aot_compile(model, (x,))\n"


def test_a_fix_that_breaks_the_file_is_not_written(tmp_path, monkeypatch, capsys):
    target = tmp_path / "a.py"
    target.write_text(SOURCE)
    other = tmp_path / "b.py"
    other.write_text(SOURCE)
    real_edits = fix_edits.add_migration_edits

    def broken_fix(source, context, findings, notes):
        parsed = real_edits(source, context, findings, notes)
        if source.display_path == "a.py":
            for finding in findings:
                # Deletes the closing parenthesis: the result does not parse.
                finding.fix = Fix(Applicability.SAFE, "break it", (Edit("", Position(3, 43), Position(3, 44)),))
        return parsed

    monkeypatch.setattr(engine, "add_migration_edits", broken_fix)
    # The deprecated calls of a run are fixed per artifact flow, in one pass per file: break that pass too.
    real_migrate = migration.migrate_flows

    def broken_migration(text, flow, groups, target_torch, **options):
        if flow.path == "a.py":
            return text.replace("(x,))", "(x,)"), 1
        return real_migrate(text, flow, groups, target_torch, **options)

    monkeypatch.setattr(migration, "migrate_flows", broken_migration)
    monkeypatch.chdir(tmp_path)
    assert main(["--isolated", "--fix", "."]) == 2
    _, err = capsys.readouterr()
    assert "a.py: fixes would break the file ('(' was never closed); nothing written" in err
    assert target.read_text() == SOURCE
    assert "aoti_compile_and_package" in other.read_text()


STAYING_PRODUCER = {
    "paths.py": 'ARTIFACT = "/srv/models/model.so"\n',
    "export.py": "import torch\n\nfrom paths import ARTIFACT\n\n\ndef build(model, x):\n"
    "    ep = torch.export.export(model, (x,))\n"
    '    return torch._inductor.aot_compile(ep.module(), (x,), options={"aot_inductor.output_path": ARTIFACT})\n',
    "serve.py": 'import torch\n\nfrom paths import ARTIFACT\n\nrunner = torch._export.aot_load(ARTIFACT, "cpu")\n',
}


def test_a_load_of_a_so_that_a_staying_compile_writes_is_not_migrated(tmp_path, capsys):
    """torch._inductor.aot_compile is not deprecated and goes on writing its `.so`: the load of that artifact
    keeps aot_load (its flow is blocked, and the message names the producer), and its path constant stays."""
    for name, text in STAYING_PRODUCER.items():
        (tmp_path / name).write_text(text)
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["--isolated", "--no-cache", "--fix", "--unsafe-fixes", "."]) == 1
    finally:
        os.chdir(cwd)
    for name, text in STAYING_PRODUCER.items():
        assert (tmp_path / name).read_text() == text, name
    assert "export.py:8 (producer): a compile no fix migrates goes on writing this `.so`" in capsys.readouterr().out
