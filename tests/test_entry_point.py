"""The entry point's answer for files that cannot hold a finding (``aoti_lint.entry_point``): it must print and exit
exactly as the full command does, settle the cases it claims, and hand the rest over."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aoti_lint.entry_point import SCREEN, settle
from aoti_lint.rules import ALL_RULES
from aoti_lint.rules.base import ProjectRule, Rule, tokens_match
from tests.helpers import run_main

CLEAN = '"""Plain code."""\n\n\ndef add(a, b):\n    return a + b\n'
HIT = "import torch\n\nso = torch._export.aot_compile(model, (x,))\n"


def test_the_screen_covers_every_group_of_every_rule():
    """Bytes without a whole group of ``SCREEN`` hold no whole group of any rule: each rule's group holds one."""
    for rule in ALL_RULES:
        groups = list(rule.triggers)
        if issubclass(rule, ProjectRule):
            groups += rule.summary_triggers
        for group in groups:
            assert any(all(any(word in token for token in group) for word in screen) for screen in SCREEN), (
                rule.code,
                group,
            )


def test_a_rule_with_its_own_first_stage_needs_its_groups():
    """A rule whose ``could_match`` is its own still needs a whole group of its ``triggers``: on every example."""
    own = [rule for rule in ALL_RULES if rule.could_match.__func__ is not Rule.could_match.__func__]
    assert own
    for rule in own:
        for example in (example for other in ALL_RULES for example in [*other.VALID, *other.INVALID]):
            data = example.source.encode()
            assert not rule.could_match(data) or tokens_match(rule.triggers, data), (rule.code, example.source)
    for rule in ALL_RULES:
        if issubclass(rule, ProjectRule):
            assert rule.wants_summary.__func__ is ProjectRule.wants_summary.__func__, rule.code


def test_a_rule_with_its_own_first_stage_is_screened_by_tokens_of_all_its_groups():
    """Its screen tokens (``Rule.screen_tokens``) each lie in a token of some group, and every group holds one: bytes
    holding a whole group, which its own test needs, hold one of them."""
    own = [rule for rule in ALL_RULES if rule.could_match.__func__ is not Rule.could_match.__func__]
    for rule in own:
        assert rule.screen_tokens, rule.code
        for group in rule.triggers:
            assert any(screen in token for screen in rule.screen_tokens for token in group), (rule.code, group)


def test_the_benchmark_clean_file_mentions_aoti_and_is_settled(tmp_path):
    """A word that is only an anchor of the rules' first stage (`AOT`) is no finding's: such a file is settled."""
    (tmp_path / "clean.py").write_text('"""No AOTI here."""\nimport torch\n\nx = torch.compile(f)\n')
    assert _same(["-v", "clean.py"], tmp_path) == ("All checks passed!\n", "debug: Checked 1 file\n", 0)


def _full_and_fast(argv: list[str], cwd: Path) -> tuple[tuple[int, str, str], tuple[str, str, int] | None]:
    env = {key: value for key, value in os.environ.items() if key != "AOTI_LINT_OUTPUT_FORMAT"}
    fast = settle(argv, str(cwd), env)
    full = run_main(*argv, cwd=cwd)
    return (full.returncode, full.stdout, full.stderr), fast


def _same(argv: list[str], cwd: Path) -> tuple[str, str, int] | None:
    full, fast = _full_and_fast(argv, cwd)
    if fast is not None:
        out, err, code = fast
        assert (code, out, err) == full, argv
    return fast


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git" / "info").mkdir(parents=True)
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "build").mkdir()
    (root / "src" / "clean.py").write_text(CLEAN)
    (root / "src" / "pkg" / "other.py").write_text(CLEAN.replace("add", "sub"))
    (root / "src" / "pkg" / "gen_x.py").write_text(CLEAN)
    (root / "build" / "out.py").write_text(CLEAN)
    (root / "src" / "hit.py").write_text(HIT)
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n\n[tool.ruff]\nline-length = 100\n')
    (root / ".gitignore").write_text("# generated\n*.py[cod]\n__pycache__/\ngen_*.py\n/dist\ndocs/_build/\n")
    return root


SETTLED = [
    ["src/clean.py"],
    ["check", "src/clean.py"],
    ["-q", "src/clean.py"],
    ["-v", "src/clean.py", "src/pkg/other.py"],
    ["src/clean.py", "src/clean.py", "src/../src/clean.py"],
    ["--fix", "--exit-zero", "src/clean.py"],
    ["--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", "src/clean.py"],
    ["--no-cache", "src/clean.py"],
    ["--force-exclude", "-v", "src/clean.py", "src/pkg/gen_x.py", "build/out.py"],
    ["--force-exclude", "src/pkg/gen_x.py"],
    ["--force-exclude", "-v", "build/out.py"],
    ["--force-exclude", "--no-respect-gitignore", "-v", "src/pkg/gen_x.py"],
    ["--force-exclude", "--no-force-exclude", "build/out.py"],
    # Excluded before it is read: its word does not matter.
    ["--force-exclude", "src/clean.py", "build/hit.py"],
    # What argparse reads as the same options: an abbreviation, the end of the options, flags joined.
    ["--qui", "src/clean.py"],
    ["--", "src/clean.py"],
    ["-qv", "src/clean.py"],
]


@pytest.mark.parametrize("argv", SETTLED, ids=[" ".join(a) for a in SETTLED])
def test_settled_runs_print_what_the_full_run_prints(project, argv):
    (project / "build" / "hit.py").write_text(HIT)
    assert _same(argv, project) is not None


HANDED_OVER = [
    ["src/hit.py"],
    # argparse takes the paths as one run: another after an option that follows them is a usage error.
    ["src/clean.py", "-q", "src/pkg/other.py"],
    ["check", "src/clean.py", "-v", "src/pkg/other.py"],
    ["src/clean.py", "src/hit.py"],
    ["src"],
    ["--output-format", "json", "src/clean.py"],
    ["--statistics", "src/clean.py"],
    ["--select", "AOTI001", "src/clean.py"],
    ["--exit-zero", "--exit-non-zero-on-fix", "src/clean.py"],
    ["src/missing.py"],
    ["-"],
    [],
    ["rules"],
    ["--exit", "src/clean.py"],
    ["--help"],
    ["--version", "src/clean.py"],
]


@pytest.mark.parametrize("argv", HANDED_OVER, ids=[" ".join(a) or "(none)" for a in HANDED_OVER])
def test_other_runs_go_to_the_full_command(project, argv):
    env = dict(os.environ)
    assert settle(argv, str(project), env) is None


def test_a_pyproject_nested_deeply_is_left_to_the_full_run(project):
    """tomllib recurses per level, and the full run parses deeper in its stack: near the limit only it fails
    (found in review). Such a document is handed over, and the full run says what is wrong."""
    (project / "pyproject.toml").write_text("x = " + "[" * 495 + "]" * 495 + "\n")
    assert settle(["src/clean.py"], str(project), {}) is None
    assert "nested too deeply" in run_main("src/clean.py", cwd=project).stderr


def test_configuration_and_environment_hand_the_run_over(project):
    assert settle(["src/clean.py"], str(project), {}) is not None
    assert settle(["src/clean.py"], str(project), {"AOTI_LINT_OUTPUT_FORMAT": "json"}) is None
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.aoti-lint]\nselect = ["AOTI0"]\n')
    assert settle(["src/clean.py"], str(project), {}) is None
    pyproject.write_text("[tool\nbroken")
    assert settle(["src/clean.py"], str(project), {}) is None
    assert run_main("src/clean.py", cwd=project).returncode == 2  # which is why
    pyproject.unlink()
    (project / "src" / "aoti-lint.toml").write_text("")
    assert settle(["clean.py"], str(project / "src"), {}) is None
    assert settle(["src/clean.py"], str(project), {}) is not None
    (project / "src" / "nb.ipynb").write_text("{}")
    assert settle(["src/nb.ipynb"], str(project), {}) is None
    os.symlink(project / "src" / "clean.py", project / "link.py")
    assert settle(["link.py"], str(project), {}) is None
    (project / ".gitignore").write_text("!keep.py\nsrc/[!c]*.py\n")  # read by pathspec, as the full run reads it
    assert _same(["--force-exclude", "src/clean.py"], project) is not None
    assert settle(["src/clean.py"], str(project), {}) is not None  # ignore files matter only to --force-exclude


def test_an_ignore_file_above_the_repository_is_not_read(tmp_path):
    (tmp_path / ".gitignore").write_text("*.py\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "a.py").write_text(CLEAN)
    assert _same(["--force-exclude", "-v", "a.py"], repo) == ("All checks passed!\n", "debug: Checked 1 file\n", 0)
    (repo / "sub").mkdir()
    (repo / "sub" / ".gitignore").write_text("a.py\n")
    (repo / "sub" / "a.py").write_text(CLEAN)
    (repo / "sub" / "b.py").write_text(CLEAN)
    assert _same(["--force-exclude", "-v", "sub/a.py", "sub/b.py"], repo) is not None


def test_the_command_answers_a_clean_file_without_loading_the_linter(tmp_path):
    """The installed command settles a clean file with the check's parser and the settings' defaults: no rule, no
    engine, no libcst, no reading of the code."""
    (tmp_path / "clean.py").write_text(CLEAN)
    probe = (
        "import sys; sys.argv = ['aoti-lint', '-v', 'clean.py']\n"
        "before = set(sys.modules)\n"
        "from aoti_lint.entry_point import main\n"
        "code = main()\n"
        "print(sorted(m for m in set(sys.modules) - before if m.startswith(('aoti_lint', 'libcst'))), code)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    loaded = (
        "['aoti_lint', 'aoti_lint.arguments', 'aoti_lint.entry_point', 'aoti_lint.knowledge', "
        "'aoti_lint.knowledge.new_api_since', 'aoti_lint.read', 'aoti_lint.read.file_bytes', "
        "'aoti_lint.read.path_text', 'aoti_lint.rule_manifest', 'aoti_lint.settings', 'aoti_lint.settings.defaults', "
        "'aoti_lint.settings.output_formats', 'aoti_lint.settings.target_torch', 'aoti_lint.usage'] 0"
    )
    assert result.stdout.splitlines()[-1] == loaded
    assert result.stderr == "debug: Checked 1 file\n"
    # A file with a finding goes to the full run.
    (tmp_path / "hit.py").write_text(HIT)
    result = subprocess.run(
        [sys.executable, "-m", "aoti_lint", "hit.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1 and "AOTI001" in result.stdout


@pytest.mark.parametrize(
    "argv",
    [["--exit"], ["a.py", "-q", "b.py"], ["-"], ["rules"], ["--select", "X", "a.py"], ["-h"], ["--vers"]],
    ids=" ".join,
)
def test_any_other_command_line_is_the_full_runs(argv, capsys):
    """An ambiguous abbreviation, a path after a flag that follows paths, stdin, another command, an option that
    changes the output, help: the full run's to parse (or refuse); the entry point prints nothing of its own."""
    from aoti_lint.arguments import plain_check

    assert plain_check(argv) is None
    assert capsys.readouterr() == ("", "")


def test_a_plain_check_of_a_file_with_findings_prints_what_the_full_run_prints_without_typing(tmp_path):
    """The package names ``typing`` under ``if TYPE_CHECKING:`` alone."""
    (tmp_path / "hit.py").write_text(HIT)
    (tmp_path / "clean.py").write_text(CLEAN)
    probe = (
        "import sys; sys.argv = ['aoti-lint', *sys.argv[1:]]\n"
        "from aoti_lint.entry_point import main\n"
        "code = main()\n"
        "sys.stdout.flush()\n"
        "print('typing' in sys.modules, code, file=sys.stderr)\n"
    )
    for argv in (["hit.py", "clean.py"], ["-q", "--no-cache", "hit.py"], ["hit.py", "--exit-zero", "-v"]):
        fast = subprocess.run(
            [sys.executable, "-c", probe, *argv], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        full = run_main(*argv, cwd=tmp_path)
        *err, last = fast.stderr.splitlines(keepends=True)
        assert last == f"False {full.returncode}\n", fast.stderr
        assert (fast.stdout, "".join(err)) == (full.stdout, full.stderr)
        assert "AOTI001" in fast.stdout
    # A usage error is argparse's own, printed by the parser built for it.
    argv = ["--exit-zero", "--exit-non-zero-on-fix", "hit.py"]
    fast = subprocess.run([sys.executable, "-c", probe, *argv], cwd=tmp_path, capture_output=True, text=True)
    assert fast.returncode == 2 and "cannot be used together" in fast.stderr


_VERDICT_PROBE = (
    "import sys; sys.argv = ['aoti-lint', *sys.argv[1:]]\n"
    "from aoti_lint.entry_point import main\n"
    "code = main()\n"
    "sys.stdout.flush()\n"
    "print('tomllib' in sys.modules or 'tomli' in sys.modules, 'aoti_lint.cli' in sys.modules, code, file=sys.stderr)\n"
)


def _hook_run(repo: Path, *argv: str) -> tuple[str, str, str]:
    """stdout, stderr without the probe's line, and the probe's line: whether a TOML parser and the full run were
    imported, and the exit code."""
    env = {
        key: value for key, value in os.environ.items() if key not in ("AOTI_LINT_CACHE_DIR", "AOTI_LINT_OUTPUT_FORMAT")
    }
    result = subprocess.run(
        [sys.executable, "-c", _VERDICT_PROBE, *argv], cwd=repo, capture_output=True, text=True, env=env, timeout=60
    )
    *err, last = result.stderr.splitlines(keepends=True)
    return result.stdout, "".join(err), last.strip()


def _hook_repo(tmp_path: Path, pyproject: str) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "src" / "clean.py").write_text(CLEAN)
    (repo / "pyproject.toml").write_text(pyproject)
    _out_of_racy_window(repo / "pyproject.toml")
    return repo


def _out_of_racy_window(path: Path) -> None:
    """Until the file's mtime and ctime are older than the racy window, as a checkout's files are."""
    import time

    from aoti_lint.settings.defaults import RACY_SECONDS

    info = os.stat(path)
    time.sleep(max(0.0, max(info.st_mtime, info.st_ctime) + RACY_SECONDS + 0.1 - time.time()))


def test_a_pyproject_once_parsed_is_not_parsed_again_while_its_stat_holds(tmp_path):
    """The hook's common run: the verdict on pyproject.toml is kept in the cache directory with its stat."""
    repo = _hook_repo(tmp_path, '[project]\nname = "service"\n\n[tool.ruff]\nline-length = 100\n')
    argv = ("--force-exclude", "src/clean.py")
    first = _hook_run(repo, *argv)
    assert first == ("All checks passed!\n", "", "True False 0")
    kept = repo / ".aoti_lint_cache" / "pyproject.verdicts"
    assert kept.is_file() and (repo / ".aoti_lint_cache" / "CACHEDIR.TAG").is_file()
    assert _hook_run(repo, *argv) == ("All checks passed!\n", "", "False False 0")
    # The file changed (its stat with it): parsed again; settings of aoti-lint there send the run to the full one.
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[tool.aoti-lint]\nselect = ["AOTI201"]\n')
    assert _hook_run(repo, *argv)[2] == "True True 0"
    # TOML that does not parse: the full run says so, as it would have without the kept verdict.
    pyproject.write_text('[project\nname = "service"\n')
    _, stderr, last = _hook_run(repo, *argv)
    assert last == "True True 2" and "pyproject.toml" in stderr


def test_no_verdict_is_kept_without_a_cache_for_a_file_just_written_or_through_a_link(tmp_path):
    repo = _hook_repo(tmp_path, "[tool.black]\nline-length = 100\n")
    assert _hook_run(repo, "--no-cache", "src/clean.py")[2] == "True False 0"
    assert not (repo / ".aoti_lint_cache").exists()
    os.utime(repo / "pyproject.toml")  # now: its mtime may not tell a change within the same tick
    assert _hook_run(repo, "src/clean.py")[2] == "True False 0"
    assert not (repo / ".aoti_lint_cache" / "pyproject.verdicts").exists()
    # A link planted at the kept file's name is not read, even one to a file that would hold the verdict.
    _out_of_racy_window(repo / "pyproject.toml")
    assert _hook_run(repo, "src/clean.py")[2] == "True False 0"
    kept = repo / ".aoti_lint_cache" / "pyproject.verdicts"
    elsewhere = tmp_path / "elsewhere"
    kept.rename(elsewhere)
    elsewhere.write_bytes(elsewhere.read_bytes() + b"written before\n")
    kept.symlink_to(elsewhere)
    assert _hook_run(repo, "src/clean.py")[2] == "True False 0"
    # The link was replaced by a rename, its target never written through.
    assert not kept.is_symlink() and elsewhere.read_bytes().endswith(b"written before\n")


def test_a_run_on_one_file_imports_pathlib_without_urllib_parse(tmp_path):
    """``pathlib`` imports ``urllib.parse`` (and ``ipaddress``) for ``Path.as_uri`` alone; the command loads it
    without them (``_import_pathlib``), and ``as_uri`` and ``urllib.parse`` still work. Run without ``site``: an
    editable install imports ``pathlib`` at every interpreter start."""
    (tmp_path / "hit.py").write_text(HIT)
    probe = (
        "import sys; sys.argv = ['aoti-lint', '--no-cache', 'hit.py']\n"
        "assert 'pathlib' not in sys.modules\n"
        "from aoti_lint.entry_point import main\n"
        "code = main()\n"
        "print('urllib.parse' in sys.modules, 'ipaddress' in sys.modules, code)\n"
        "import pathlib\n"
        "print(pathlib.Path('/a b').as_uri(), 'urllib.parse' in sys.modules)\n"
        "from urllib.parse import quote\n"
        "print(quote('a b'), sys.modules['urllib.parse'].quote is quote)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    result = subprocess.run(
        [sys.executable, "-S", "-c", probe], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120
    )
    assert "AOTI001" in result.stdout, result.stderr
    assert result.stdout.splitlines()[-3:] == ["False False 1", "file:///a%20b True", "a%20b True"], result.stdout
