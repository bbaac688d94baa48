"""Speed machinery: the cache, the process pool and the second prefilter stage keep the output identical."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from aoti_lint.diagnostics import Applicability
from aoti_lint.run import cache as cache_module
from aoti_lint.run.file_context import FileContext
from aoti_lint.run.lint import lint_paths
from aoti_lint.settings.config import Settings
from aoti_lint.settings.run_options import Execution, FixOptions
from tests.conftest import REPO
from tests.helpers import lint_text

OLD_COMPILE = "import torch\n\nso = torch._export.aot_compile(model, (x,))\n"
OLD_LOAD = "import torch\n\nrunner = torch._export.aot_load('m.so', 'cpu')\n"
MENTIONS_ONLY = '"""Was torch._export.aot_compile; see aot_load."""\n# torch._export.aot_compile(m, args)\nx = 1\n'


def project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def run(root: Path, execution: Execution, settings: Settings | None = None, fix: FixOptions | None = None):
    settings = settings or Settings(root=root).with_enabled()
    return lint_paths([root], settings, root, fix, execution)


def shown(result) -> list[tuple[str, int, int, str, str]]:
    return [(f.path, f.start.row, f.start.column, f.code, f.message) for f in result.findings]


def entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("*.json"))


def tamper(cache_dir: Path, message: str) -> None:
    """Rewrite every entry's messages: a run that prints them read the cache."""
    for entry in entries(cache_dir):
        data = json.loads(entry.read_text())
        for finding in data["findings"]:
            finding["message"] = message
        entry.write_text(json.dumps(data))


@pytest.fixture
def tree(tmp_path):
    return project(tmp_path / "src", {"a.py": OLD_COMPILE, "b.py": OLD_LOAD, "clean.py": "import torch\n"})


def test_cache_hit_miss_and_invalidation(tree, tmp_path, monkeypatch):
    cache_dir = tmp_path / "cache"
    execution = Execution(cache_dir=cache_dir)
    fresh = shown(run(tree, execution))
    assert [code for *_, code, _ in fresh] == ["AOTI001", "AOTI002"]
    # Only files passing the prefilter are cached.
    assert len(entries(cache_dir)) == 2
    assert (cache_dir / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (cache_dir / "CACHEDIR.TAG").exists()

    tamper(cache_dir, "from the cache")
    assert {message for *_, message in shown(run(tree, execution))} == {"from the cache"}
    assert shown(run(tree, Execution())) == fresh, "no cache: nothing read"

    # Changed content, changed settings, another version: misses.
    (tree / "a.py").write_text(OLD_COMPILE + "# edited\n")
    after_edit = shown(run(tree, execution))
    assert after_edit[0][4] != "from the cache" and after_edit[1][4] == "from the cache"
    target = replace(Settings(root=tree), target_torch=(2, 7)).with_enabled()
    assert "from the cache" not in {message for *_, message in shown(run(tree, execution, target))}
    monkeypatch.setattr(cache_module, "__version__", "999.0")
    assert shown(run(tree, execution)) == fresh


def test_per_file_ignores_are_part_of_the_key(tree, tmp_path):
    cache_dir = tmp_path / "cache"
    run(tree, Execution(cache_dir=cache_dir))
    settings = replace(Settings(root=tree), per_file_ignores=(("a.py", ("AOTI001",)),)).with_enabled()
    assert [code for *_, code, _ in shown(run(tree, Execution(cache_dir=cache_dir), settings))] == ["AOTI002"]


def test_no_cache_flag_writes_nothing(cli, tree):
    default_location = {"AOTI_LINT_CACHE_DIR": ""}
    assert cli("--no-cache", "--isolated", ".", cwd=tree, env=default_location).returncode == 1
    assert not (tree / ".aoti_lint_cache").exists()
    assert cli("--isolated", ".", cwd=tree, env=default_location).returncode == 1
    assert len(entries(tree / ".aoti_lint_cache")) == 2


def test_cache_dir_from_environment(cli, tree, tmp_path):
    elsewhere = tmp_path / "elsewhere" / "cache"
    assert cli("--isolated", ".", cwd=tree, env={"AOTI_LINT_CACHE_DIR": str(elsewhere)}).returncode == 1
    assert len(entries(elsewhere)) == 2 and not (tree / ".aoti_lint_cache").exists()


# Stress: five processes at once (each imports libcst): the full suite only.
@pytest.mark.slow
def test_concurrent_runs_share_the_cache_safely(tree):
    expected = subprocess.run(
        [sys.executable, "-m", "aoti_lint", "--isolated", "--no-cache", "."], cwd=tree, capture_output=True, text=True
    ).stdout
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "aoti_lint", "--isolated", "."], cwd=tree, stdout=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    outputs = [process.communicate(timeout=120)[0] for process in runs]
    assert outputs == [expected] * 4
    cache_dir = tree / ".aoti_lint_cache"
    assert all(json.loads(entry.read_text()) for entry in entries(cache_dir))
    assert not [name for name in os.listdir(cache_dir) if name.endswith(".tmp")]


def test_symlink_planted_at_cache_dir_is_not_followed(tree, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    cache_dir = tmp_path / "cache"
    cache_dir.symlink_to(victim)
    assert [code for *_, code, _ in shown(run(tree, Execution(cache_dir=cache_dir)))] == ["AOTI001", "AOTI002"]
    assert list(victim.iterdir()) == []


def test_symlink_planted_at_an_entry_is_neither_read_nor_written_through(tree, tmp_path):
    cache_dir = tmp_path / "cache"
    fresh = shown(run(tree, Execution(cache_dir=cache_dir)))
    tamper(cache_dir, "planted")
    planted = tmp_path / "planted.json"
    entry = entries(cache_dir)[0]
    planted.write_bytes(entry.read_bytes())
    for each in entries(cache_dir):
        each.unlink()
    entry.symlink_to(planted)
    assert shown(run(tree, Execution(cache_dir=cache_dir))) == fresh
    assert "planted" in planted.read_text(), "the run wrote through the symlink"
    assert not entry.is_symlink(), "the entry was replaced, not followed"


def test_fixes_are_never_taken_from_the_cache(tree, tmp_path):
    cache_dir = tmp_path / "cache"
    run(tree, Execution(cache_dir=cache_dir))
    for entry in entries(cache_dir):
        data = json.loads(entry.read_text())
        for finding in data["findings"]:
            finding["fix"] = {"applicability": "safe", "message": "evil", "edits": [["import os\n", 1, 1, 1, 1]]}
        entry.write_text(json.dumps(data))
    uncached = tmp_path / "uncached"
    shutil.copytree(tree, uncached)
    run(uncached, Execution(cache_dir=None), fix=FixOptions(apply=True))
    run(tree, Execution(cache_dir=cache_dir), fix=FixOptions(apply=True))
    # The fixes applied are the ones computed afresh, never the planted ones.
    for path in sorted(uncached.rglob("*.py")):
        fixed = (tree / path.relative_to(uncached)).read_text()
        assert fixed == path.read_text()
        assert "import os" not in fixed


def test_jobs_two_gives_the_output_of_jobs_one(tmp_path):
    files = {f"pkg{i}/m{i}.py": (OLD_COMPILE if i % 2 else OLD_LOAD) * (i + 1) for i in range(6)}
    files["broken.py"] = "import torch._export\ndef f(:\n    torch._export.aot_load\n"
    files["mentions.py"] = MENTIONS_ONLY
    tree = project(tmp_path, files)
    serial = run(tree, Execution(jobs=1))
    cache_dir = tmp_path.parent / f"{tmp_path.name}-cache"
    pooled = run(tree, Execution(jobs=2, pool_min_seconds=0, cache_dir=cache_dir))
    assert shown(pooled) == shown(serial) and len(serial.findings) == 22
    # Each worker's outcome was stored under its own file's key.
    assert shown(run(tree, Execution(jobs=1, cache_dir=cache_dir))) == shown(serial)
    assert pooled.files_checked == serial.files_checked == 8
    # Findings that crossed a process boundary lost their libcst payload: the pool really ran.
    assert all(f.data is None for f in pooled.findings)
    assert any(f.data is not None for f in serial.findings)


def test_a_pooled_run_leaves_the_later_prefilter_stages_to_the_workers(tmp_path):
    from aoti_lint.model.name_index import code_index

    files = {"hit.py": OLD_COMPILE, "mentions.py": MENTIONS_ONLY, "prose.py": '"""aot_compile, _export."""\n'}
    tree = project(tmp_path, files)
    before = code_index.cache_info().misses
    pooled = run(tree, Execution(jobs=2, pool_min_seconds=0))
    assert code_index.cache_info().misses == before  # this process built no ast index: the workers did
    serial = run(tree, Execution(jobs=1))
    assert code_index.cache_info().misses > before
    assert shown(pooled) == shown(serial) and pooled.findings


def test_workers_start_with_the_later_stages_modules_imported(tmp_path):
    """They are imported before the workers fork, not once per worker: a worker of a fresh process finds them
    loaded before it has linted anything."""
    (tmp_path / "probe.py").write_text(
        "import sys\n\n\ndef loaded(names):\n    return [n in sys.modules for n in names]\n"
    )
    script = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import probe\n"
        "from aoti_lint.run import work_items, worker_pool\n"
        "names = work_items.LATER_STAGE_MODULES\n"
        "print(all(name in sys.modules for name in names))\n"
        "pool = worker_pool.Pool(1, worker_pool.Interrupts())\n"
        "print(all(pool.executor.submit(probe.loaded, names).result(timeout=60)))\n"
        "pool.close()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert result.stdout.split() == ["False", "True"], result.stderr


def test_the_passes_of_a_run_share_one_pool(tmp_path, monkeypatch):
    """The plan re-does files in a second pass: its files go to the workers the first pass started (any pass
    does, whatever its own work, once workers run)."""
    from aoti_lint.run import runner, worker_pool

    tree = tmp_path / "pipeline"
    shutil.copytree(PIPELINE, tree)
    started = []
    original = worker_pool.Pool.__init__
    monkeypatch.setattr(worker_pool.Pool, "__init__", lambda self, *a: started.append(1) or original(self, *a))
    redone = []
    run_files = runner.run_files
    monkeypatch.setattr(
        runner,
        "run_files",
        lambda candidates, *a, **k: redone.append(len(candidates)) or run_files(candidates, *a, **k),
    )
    pooled = run(tree, Execution(jobs=2, pool_min_seconds=0))
    assert len(redone) > 1, "no second pass: the case does not test what it says"
    assert started == [1]
    assert shown(pooled) == shown(run(tree, Execution(jobs=1))) and all(f.data is None for f in pooled.findings)


def test_big_files_held_back_go_first_to_workers_that_small_files_started(tmp_path, monkeypatch):
    """A big file's later stages wait for the workers; when small files start them, it goes to them at once,
    largest first, not after the whole tree is read."""
    from aoti_lint.run import worker_pool

    files = {"a_big.py": OLD_COMPILE + "# padding\n" * 3_500, **{f"b{i}.py": OLD_LOAD for i in range(10)}}
    tree = project(tmp_path, files)
    submitted: list[str] = []
    original = worker_pool.Pool.submit
    monkeypatch.setattr(
        worker_pool.Pool,
        "submit",
        lambda self, index, item, fix: submitted.append(item.source.display_path) or original(self, index, item, fix),
    )
    # Two small files' libcst work (0.03 s each) start the workers.
    pooled = run(tree, Execution(jobs=2, pool_min_seconds=0.05))
    # The first pass's files (the plan's second pass follows in the same workers).
    assert sorted(submitted[: len(files)]) == sorted(files) and submitted[0] == "a_big.py", submitted
    assert shown(pooled) == shown(run(tree, Execution(jobs=1)))


def test_work_done_here_on_files_past_stage_one_starts_the_workers_for_the_rest(tmp_path, monkeypatch):
    """Files read from ast alone bring no libcst work to start the workers with: once this process has spent its
    share of the threshold on them, the workers start and take the files still to come."""
    from aoti_lint.run import runner, worker_pool
    from benchmarks.run import AOTI_FORMS, PLAIN

    helper = PLAIN.format(doc="x", cls="Block", func="run", width=64) + "\n\n" + AOTI_FORMS[0]
    tree = project(tmp_path, {f"m{i:02d}.py": helper for i in range(12)})
    here: list[str] = []
    original = runner.lint_file
    monkeypatch.setattr(runner, "lint_file", lambda source, *a: here.append(source.path.name) or original(source, *a))
    submitted: list[str] = []
    submit = worker_pool.Pool.submit
    monkeypatch.setattr(
        worker_pool.Pool,
        "submit",
        lambda self, index, item, fix: submitted.append(item.source.path.name) or submit(self, index, item, fix),
    )
    check = FixOptions(edits=False)  # a run that shows no fix edits, as the concise output
    pooled = run(tree, Execution(jobs=2, pool_min_seconds=1e-6), fix=check)
    # The first file was done here, before any worker ran; the workers took every file after it.
    assert here == ["m00.py"] and submitted == [f"m{i:02d}.py" for i in range(1, 12)], (here, submitted)
    assert shown(pooled) == shown(run(tree, Execution(jobs=1), fix=check)) and len(pooled.findings) == 24


def chunked_tree(root: Path) -> Path:
    """Enough files for the workers to read them in chunks, with every kind of outcome among them: findings, a mention
    only, an undecodable file and a syntax error (both AOTI000), a notebook, and a FIFO named like a module."""
    from aoti_lint.run.work_items import CHUNK_FILES, PACE_FILES

    files = {f"pkg{i // 50}/m{i:04d}.py": "import torch\nprint(torch.ones(1))\n" for i in range(CHUNK_FILES * 3)}
    files.update({"pkg0/hit.py": OLD_COMPILE, "pkg5/load.py": OLD_LOAD, "pkg6/mentions.py": MENTIONS_ONLY})
    files["pkg3/broken.py"] = "import torch._export\ndef f(:\n    torch._export.aot_load\n"
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": OLD_LOAD}
    files["pkg4/notebook.ipynb"] = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    project(root, files)
    (root / "pkg2" / "latin.py").write_bytes(b"x = '\xe9'\nimport torch._export\n")
    os.mkfifo(root / "pkg7" / "pipe.py") if hasattr(os, "mkfifo") else None
    assert len(files) > PACE_FILES + CHUNK_FILES * 2
    return root


def pool_traffic(monkeypatch) -> tuple[list[list[str]], list[str]]:
    """What the run sends to its workers, as it sends it: the paths of each chunk, and the name of each file sent
    alone (its later stages left to a worker)."""
    from aoti_lint.run import worker_pool

    chunks: list[list[str]] = []
    alone: list[str] = []
    screen, submit = worker_pool.Pool.screen, worker_pool.Pool.submit
    monkeypatch.setattr(
        worker_pool.Pool,
        "screen",
        lambda self, chunk, *a: chunks.append([c.where for _, c in chunk]) or screen(self, chunk, *a),
    )
    monkeypatch.setattr(
        worker_pool.Pool,
        "submit",
        lambda self, i, item, *a: alone.append(item.source.path.name) or submit(self, i, item, *a),
    )
    return chunks, alone


def test_a_large_tree_is_read_by_the_workers_in_chunks_with_the_output_of_one_job(tmp_path, reads, monkeypatch):
    from collections import Counter

    from aoti_lint.run import runner
    from aoti_lint.run.file_context import FileContext

    tree = chunked_tree(tmp_path / "tree")
    # Stage one's answer travels with a file: this process asks about no passing file's bytes twice (their texts
    # differ), whoever read them.
    asked: Counter[bytes] = Counter()
    ask = FileContext.reads

    def reads_counted(self: FileContext, data: bytes, present: list[bool] | None = None) -> bool:
        passed = ask(self, data, present)
        asked.update([data] if passed else [])
        return passed

    monkeypatch.setattr(FileContext, "reads", reads_counted)
    sent, alone = pool_traffic(monkeypatch)
    pooled = run(tree, Execution(jobs=2, pool_min_seconds=0))
    chunks = [len(chunk) for chunk in sent]
    # A file a worker read and passed through stage one is linted there: only the notebook and files read here are
    # sent to a worker one at a time.
    assert set(alone) <= {*reads, "notebook.ipynb"}, alone
    # Past the files read here to judge the pace, each file was read once: by a worker, in a full chunk but the last,
    # or here, a chunk at a time while every worker had one in hand.
    assert chunks and chunks[:-1] == [runner.CHUNK_FILES] * (len(chunks) - 1)
    assert sum(chunks) + len(reads) == pooled.files_checked + len(pooled.errors), (chunks, len(reads))
    assert (len(reads) - runner.PACE_FILES) % runner.CHUNK_FILES == 0
    assert asked and max(asked.values()) == 1, [data for data, count in asked.items() if count > 1]
    serial = run(tree, Execution(jobs=1))
    assert shown(pooled) == shown(serial) and {f.code for f in serial.findings} == {"AOTI000", "AOTI001", "AOTI002"}
    assert [(e.path, e.message) for e in pooled.errors] == [(e.path, e.message) for e in serial.errors]
    assert [Path(e.path).name for e in serial.errors] == ["pipe.py"] * hasattr(os, "mkfifo")
    assert pooled.files_checked == serial.files_checked


def test_files_read_in_chunks_are_stamped_for_the_next_run(tmp_path, reads, later):
    """A cold run whose workers read the files records each one's stat: the next run opens none of them."""
    tree = chunked_tree(tmp_path / "tree")
    cache_dir = tmp_path / "cache"
    cold = run(tree, Execution(jobs=2, pool_min_seconds=0, cache_dir=cache_dir))
    assert len(reads) < cold.files_checked / 2, "the workers read most files"
    forget_the_runs(cache_dir)  # the stamps, not the run's memo, answer
    reads.clear()
    warm = run(tree, Execution(jobs=1, cache_dir=cache_dir))
    assert shown(warm) == shown(cold) and warm.findings
    # Only a file that could not be read has no stamp, and is tried again.
    assert reads == ["pipe.py"] * hasattr(os, "mkfifo")


def crashing_screen(chunk, ruleset, cwd, stamped, later=None):
    """A worker that dies on the chunk holding ``load.py`` (a native crash, the OOM killer); the run's own process
    reads such a chunk unharmed."""
    import multiprocessing

    from aoti_lint.run import worker_process

    if multiprocessing.parent_process() is not None and any(c.where.endswith("load.py") for _, c in chunk):
        os._exit(1)
    return worker_process.screen_chunk(chunk, ruleset, cwd, stamped, later)


def test_a_chunk_whose_worker_dies_is_read_here(tmp_path, monkeypatch):
    from aoti_lint.run import worker_pool

    tree = chunked_tree(tmp_path / "tree")
    monkeypatch.setattr(worker_pool, "screen_chunk", crashing_screen)
    pools: list[int] = []
    original = worker_pool.Pool.__init__
    monkeypatch.setattr(worker_pool.Pool, "__init__", lambda self, *a: pools.append(1) or original(self, *a))
    pooled = run(tree, Execution(jobs=2, pool_min_seconds=0))
    assert len(pools) > 1, "the pool did not break: the case does not test what it says"
    serial = run(tree, Execution(jobs=1))
    assert shown(pooled) == shown(serial) and any(f.path.endswith("load.py") for f in pooled.findings)
    assert pooled.files_checked == serial.files_checked


def test_a_file_that_raises_in_a_chunk_costs_that_file_alone(tmp_path, monkeypatch):
    """A bug of ours met in the later stages a worker runs on a chunk's file is that file's internal error; the
    chunk's other files keep their findings."""
    from aoti_lint.rules import module_flow

    tree = chunked_tree(tmp_path / "tree")
    real_read = module_flow.read_flow

    def explode(path, *args):
        if path.name == "load.py":
            raise RuntimeError("boom")
        return real_read(path, *args)

    monkeypatch.setattr(module_flow, "read_flow", explode)  # before the workers fork: theirs too
    chunks, alone = pool_traffic(monkeypatch)
    pooled = run(tree, Execution(jobs=2, pool_min_seconds=0))
    assert any(where.endswith("load.py") for chunk in chunks for where in chunk), "load.py was read here"
    assert "load.py" not in alone, "the chunk failed whole, and its files went one by one"
    assert [(Path(e.path).name, e.message) for e in pooled.errors if "boom" in e.message] == [
        ("load.py", "internal error while linting: RuntimeError: boom")
    ]
    assert any(f.path.endswith("hit.py") for f in pooled.findings)
    assert not any(f.path.endswith("load.py") for f in pooled.findings)


def test_pre_commit_runs_serially(tree, monkeypatch):
    monkeypatch.setenv("PRE_COMMIT", "1")
    result = run(tree, Execution(jobs=None, pool_min_seconds=0))
    assert all(f.data is not None for f in result.findings)


def test_token_free_and_mention_only_files_start_no_pool_and_no_libcst(tmp_path):
    files = {f"m{i}.py": "import torch\nprint(torch.ones(1))\n" for i in range(20)}
    project(tmp_path, {**files, "doc.py": MENTIONS_ONLY})
    code = (
        "import sys\nfrom aoti_lint.cli import main\n"
        "rc = main(['--quiet', '--jobs', '2', '.'])\n"
        "assert 'libcst' not in sys.modules, 'libcst imported'\n"
        "assert 'concurrent.futures.process' not in sys.modules, 'pool started'\n"
        "print(rc)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert result.stdout.strip().endswith("0"), result.stderr


def test_a_check_run_with_findings_parses_nothing_with_libcst(tmp_path):
    """libcst builds fixes' edits only: a run that only reports, findings with fixes included, never imports it."""
    project(
        tmp_path,
        {
            "a.py": OLD_COMPILE,
            "b.py": OLD_LOAD,
            "env.py": 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
            # A compile whose files `package_aoti` packs.
            "c.py": "import torch\n\n"
            "files = torch._export.aot_compile(m, (x,), options={'aot_inductor.package': True})\n",
        },
    )
    code = (
        "import sys\nfrom aoti_lint.cli import main\n"
        "rc = main(['--quiet', '--no-cache', '.'])\n"
        "assert 'libcst' not in sys.modules, 'libcst imported'\n"
        "print(rc)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert result.stdout.strip().endswith("1"), result.stderr


def test_second_stage_skips_names_mentioned_only_in_strings_and_comments():
    assert not lint_text(MENTIONS_ONLY).parsed
    assert lint_text(OLD_COMPILE).parsed
    # ast cannot parse it: libcst still runs and reports the syntax error.
    assert [f.code for f in lint_text("import torch._export\ndef f(:\n    aot_compile\n").findings] == ["AOTI000"]


def test_jobs_must_be_positive(cli):
    result = cli("--jobs", "0", ".")
    assert result.returncode == 2 and "positive integer" in result.stderr


@pytest.mark.parametrize("extra", [[], ["gen/", "*.pyi", "/top.py", "a/**/b"], ["!keep", "keep/inner"]])
def test_fast_exclude_matcher_agrees_with_pathspec(extra):
    import random

    import pathspec

    from aoti_lint.read.ignores import fast_matcher
    from aoti_lint.settings.config import DEFAULT_EXCLUDE

    spec = pathspec.GitIgnoreSpec.from_lines([*DEFAULT_EXCLUDE, *extra])
    matches = fast_matcher(spec)
    parts = ["a", "b", "gen", "build", ".venv", "x.py", "y.pyi", "top.py", "node_modules", "keep", "dist2", ".git"]
    rng = random.Random(8)
    for _ in range(3000):
        path = "/".join(rng.choice(parts) for _ in range(rng.randint(1, 4)))
        for entry in (path, path + "/"):
            assert matches(entry) == spec.match_file(entry), entry


def test_plain_name_excludes_match_as_pathspec_matches_them(tmp_path):
    """ruff's default excludes are plain names: matched by path component, without pathspec
    (``read.ignores.Ignores``)."""
    import random

    import pathspec

    from aoti_lint.read.files import ignores_of
    from aoti_lint.settings.config import DEFAULT_EXCLUDE

    spec = pathspec.GitIgnoreSpec.from_lines(DEFAULT_EXCLUDE)
    ignores = ignores_of(Settings(root=tmp_path))
    parts = ["a", "src", "build", ".venv", "x.py", "venv2", "dist", "site-packages", ".git", "builds", "b.build"]
    rng = random.Random(3)
    for _ in range(3000):
        rel = "/".join(rng.choice(parts) for _ in range(rng.randint(1, 4)))
        for is_dir in (False, True):
            expected = spec.match_file(rel + "/" if is_dir else rel)
            assert ignores.excluded(tmp_path / rel, is_dir) == expected, (rel, is_dir)


def test_a_walk_with_the_default_excludes_imports_no_pathspec(tmp_path):
    project(tmp_path, {"a/x.py": "x = 1\n", "build/y.py": "y = 1\n", "a/.venv/z.py": "z = 1\n"})
    script = (
        "import sys; from pathlib import Path; from aoti_lint.settings.config import Settings; "
        "from aoti_lint.read.files import "
        f"discover; root = Path({str(tmp_path)!r}); found = [c.path.name for c in discover([root], "
        "Settings(root=root))]; print(found, 'pathspec' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "['x.py'] False"


@pytest.mark.parametrize(
    "exclude", [None, ("build", ".venv", "gen.py"), ("build/", "*.pyi", "/top.py", "a/**/b", "!keep", "keep/inner")]
)
@pytest.mark.parametrize("gitignore", ["", "*.pyi\n!keep.pyi\nsub/\n", "/top.py\n**/deep/\n"])
def test_the_walk_matches_per_directory_as_it_matched_per_entry(tmp_path, monkeypatch, exclude, gitignore):
    """The walk's per-directory matcher (``Ignores.in_directory``), and its reading of a directory that only plain
    names exclude (``_walk_plain``), against the per-entry matcher they stand for."""
    import random

    from aoti_lint.read import files

    rng = random.Random(f"{exclude}{gitignore}")
    names = ["a", "b", "build", ".venv", "sub", "deep", "keep", "top.py", "gen.py", "x.py", "y.pyi", "keep.pyi"]
    root = tmp_path / "root"
    for _ in range(300):
        parts = [rng.choice(names[:7]) for _ in range(rng.randint(0, 3))]
        path = root.joinpath(*parts, rng.choice(names[7:]))
        if any(parent.is_file() for parent in path.parents):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    (root / ".git").mkdir(exist_ok=True)
    (root / ".gitignore").write_text(gitignore)
    (root / "a").mkdir(exist_ok=True)
    (root / "a" / ".gitignore").write_text("b\n")
    # Ignore files below directories that only plain names exclude (``files._walk_plain`` hands them back).
    (root / "sub" / "keep").mkdir(parents=True, exist_ok=True)
    (root / "sub" / "keep" / ".gitignore").write_text("x.py\n")
    (root / "b" / "deep").mkdir(parents=True, exist_ok=True)
    (root / "b" / "deep" / ".ignore").write_text("*.py\n")
    (root / "b" / "deep" / "x.py").write_text("x = 1\n")
    settings = Settings(root=root) if exclude is None else replace(Settings(root=root), exclude=exclude)
    named = [[root], [root / "build"], [root / "a", root / "a" / "x.py"], [tmp_path]]

    def walked(paths):
        return [(str(item.path), getattr(item, "kind", None)) for item in files.discover(paths, settings)]

    fast = [walked([path for path in paths if path.exists()]) for paths in named]
    from aoti_lint.read.ignores import Ignores

    monkeypatch.setattr(Ignores, "in_directory", lambda self, *args: None)
    assert fast == [walked([path for path in paths if path.exists()]) for paths in named]
    assert len(fast[0]) > 20


def test_a_check_run_builds_no_migration_edits_and_a_run_that_prints_them_does(tree, tmp_path, monkeypatch):
    from aoti_lint.codemods import migration

    built = []
    original = migration.migrate
    monkeypatch.setattr(migration, "migrate", lambda *a, **k: built.append(1) or original(*a, **k))
    cache_dir = tmp_path / "cache"
    checked = run(tree, Execution(cache_dir=cache_dir), fix=FixOptions(edits=False))
    assert not built, "a check run that prints no edits built them"
    assert checked.findings[0].fixable, "a deferred fix is still a fix"
    deferred = [f for f in checked.findings if f.fix.applicability is not Applicability.DISPLAY_ONLY]
    assert deferred and all(f.fix.deferred and not f.fix.edits for f in deferred)
    # A run that prints edits (json, sarif) does not take the deferred ones from the cache: it builds them.
    printed = run(tree, Execution(cache_dir=cache_dir), fix=FixOptions(edits=True))
    assert len(built) == len(deferred)
    assert all(f.fix.edits for f in printed.findings if f.fix.applicability is not Applicability.DISPLAY_ONLY)
    assert shown(printed) == shown(checked)


PIPELINE = REPO / "tests" / "fixtures" / "pipelines" / "paths_module"


def test_a_warm_run_reads_no_file_again_not_even_those_the_plan_changes(tmp_path, monkeypatch):
    from aoti_lint.run import runner

    tree = tmp_path / "src"
    shutil.copytree(PIPELINE, tree)
    execution = Execution(cache_dir=tmp_path / "cache")
    linted = []
    original = runner.lint_file
    monkeypatch.setattr(runner, "lint_file", lambda source, *a: linted.append(source.path) or original(source, *a))
    cold = run(tree, execution)
    planned = len(linted)
    assert any("serve.py" in f.path and "not fixed automatically" not in f.message for f in cold.findings)
    linted.clear()
    warm = run(tree, execution)
    assert not linted, f"a warm run linted {linted} again ({planned} lint passes cold)"
    assert shown(warm) == shown(cold)


# ---- stamps: a warm run stats the files it settled before, and opens none of them ----------------------------


def move_the_runs_clock_on(monkeypatch) -> None:
    """Runs that start past the racy window (``stamps.RACY_SECONDS``) of every file written so far, as a run on a
    checkout does: ctime cannot be set back, so the runs' clock is moved on instead."""
    from types import SimpleNamespace

    from aoti_lint.run import runner, unchanged_run

    clock = SimpleNamespace(time_ns=lambda: time.time_ns() + 3_000_000_000)
    monkeypatch.setattr(runner, "time", clock)
    monkeypatch.setattr(unchanged_run, "time", clock)


@pytest.fixture
def later(monkeypatch):
    move_the_runs_clock_on(monkeypatch)


@pytest.fixture
def reads(monkeypatch):
    """The names of the files the runner opens in this process: a file read whole (``read_stamped``), or only for
    stage one as a chunk of files is read (``screen_chunk``)."""
    from aoti_lint.read import file_bytes as reading
    from aoti_lint.run import runner

    opened: list[str] = []
    original = runner.read_stamped
    monkeypatch.setattr(
        runner, "read_stamped", lambda candidate, cwd: opened.append(candidate.path.name) or original(candidate, cwd)
    )
    read_bytes = reading.read_regular_file_stat
    monkeypatch.setattr(
        reading, "read_regular_file_stat", lambda path: opened.append(os.path.basename(path)) or read_bytes(path)
    )
    return opened


def forget_the_runs(cache_dir: Path) -> None:
    """Remove the memos of whole runs (``aoti_lint.run.unchanged_run``): the next run recalls file by file."""
    for memo in cache_dir.glob(f"*{cache_module.MEMO_SUFFIX}"):
        memo.unlink()


def stamped_tree(root: Path) -> Path:
    tree = project(root, {"a.py": OLD_COMPILE, "b.py": OLD_LOAD, "clean.py": "import torch\n", "doc.py": MENTIONS_ONLY})
    shutil.copytree(PIPELINE, tree / "pipeline")
    return tree


def test_a_warm_run_opens_no_file_whose_stamp_is_unchanged(tmp_path, reads, later):
    tree = stamped_tree(tmp_path / "src")
    execution = Execution(cache_dir=tmp_path / "cache")
    cold = run(tree, execution)
    assert sorted(set(reads)) == sorted(path.name for path in tree.rglob("*.py"))
    assert len(list((tmp_path / "cache").glob("*.stamps"))) == 1
    forget_the_runs(tmp_path / "cache")  # the stamps, not the run's memo, answer
    reads.clear()
    warm = run(tree, execution)
    assert reads == [], "a warm run opened files whose stamps were unchanged"
    assert shown(warm) == shown(cold) and warm.files_checked == cold.files_checked
    assert shown(run(tree, Execution())) == shown(cold), "the same findings as a run without a cache"


def test_an_edit_that_keeps_the_size_and_the_mtime_is_still_seen(tmp_path, reads, later):
    tree = stamped_tree(tmp_path / "src")
    execution = Execution(cache_dir=tmp_path / "cache")
    assert [code for path, *_, code, _ in shown(run(tree, execution)) if path == "a.py"] == ["AOTI001"]
    target = tree / "a.py"
    before = target.stat()
    # Same size, mtime put back (as `cp -p` or `rsync -t` would): only the ctime tells.
    target.write_text(OLD_COMPILE.replace("aot_compile", "aot_compilf"))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size and target.stat().st_mtime_ns == before.st_mtime_ns
    reads.clear()
    after = run(tree, execution)
    assert reads == ["a.py"]
    assert [code for path, *_, code, _ in shown(after) if path == "a.py"] == []


@pytest.mark.parametrize("old", ["mtime", "ctime"])
def test_a_file_changed_within_the_racy_window_is_read_until_it_is_older(tmp_path, reads, monkeypatch, old):
    """On a filesystem with one-second timestamps, two same-size edits within a second that put the mtime back
    leave both times as they were: only a stamp older than the window is trusted, by its mtime and its ctime."""
    tree = stamped_tree(tmp_path / "src")
    past = time.time() - 3600
    for path in tree.rglob("*"):
        os.utime(path, (past, past))  # mtimes out of the window, ctimes (now) in it
    if old == "ctime":  # mtimes in the window (a tool may set them ahead), ctimes out of it
        future = time.time() + 3600
        os.utime(tree / "a.py", (future, future))
        move_the_runs_clock_on(monkeypatch)
    execution = Execution(cache_dir=tmp_path / "cache")
    run(tree, execution)
    reads.clear()
    run(tree, execution)
    if old == "mtime":
        assert sorted(set(reads)) == sorted(path.name for path in tree.rglob("*.py")), "a young ctime was trusted"
    else:
        assert reads == ["a.py"], "a young mtime was trusted"


def test_a_symlink_repointed_under_other_per_file_ignores_is_read_again(tmp_path, reads, later):
    root = tmp_path / "project"
    project(root, {"vendor/x.py": 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'})
    (root / "src").symlink_to("vendor")
    settings = replace(Settings(root=root), per_file_ignores=(("vendor/*", ("AOTI201",)),)).with_enabled()
    execution = Execution(cache_dir=tmp_path / "cache")

    def codes():
        return [f.code for f in lint_paths([root / "src" / "x.py"], settings, root, None, execution).findings]

    assert codes() == [] and codes() == []  # ignored: its resolved path is under vendor/
    (root / "vendor").rename(root / "lib")
    (root / "src").unlink()
    (root / "src").symlink_to("lib")  # same file, same stamp; other rules
    assert codes() == ["AOTI201"]


def test_a_file_name_that_is_not_utf8_is_cached(tmp_path, later):
    tree = tmp_path / "src"
    tree.mkdir()
    name = os.fsdecode(b"\xff\xfe.py")
    (tree / name).write_text(OLD_COMPILE)
    execution = Execution(cache_dir=tmp_path / "cache")
    cold = shown(run(tree, execution))
    assert [code for *_, code, _ in cold] == ["AOTI001"]
    assert shown(run(tree, execution)) == cold
    forget_the_runs(tmp_path / "cache")
    assert shown(run(tree, execution)) == cold


def test_a_corrupt_or_foreign_stamps_file_is_no_stamps(tmp_path, reads, later):
    tree = stamped_tree(tmp_path / "src")
    execution = Execution(cache_dir=tmp_path / "cache")
    cold = shown(run(tree, execution))
    (stamps_file,) = (tmp_path / "cache").glob("*.stamps")
    document = json.loads(stamps_file.read_text())
    # An entry for each file claiming it clean, but with a stamp that is not its own; then shapes that are none.
    for path, entry in document["files"].items():
        size, mtime, ctime, inode, device, rules, _ = entry.split(":")
        document["files"][path] = f"{size}:{mtime}:{ctime}:{int(inode) + 1}:{device}:{rules}:"
    document["files"]["/nowhere.py"] = {"not": "a stamp"}
    # The same entries with their own stamps, in the layout of the first format: another format is not read.
    first_format = json.dumps({"format": 1, "files": json.loads(stamps_file.read_text())["files"]})
    for planted in (json.dumps(document), first_format, "{", '{"format": 2, "files": []}', "[1]", "[" * 100_000):
        stamps_file.write_text(planted)
        forget_the_runs(tmp_path / "cache")  # the stamps alone, not the run's memo, answer this run
        reads.clear()
        assert shown(run(tree, execution)) == cold
        assert sorted(set(reads)) == sorted(path.name for path in tree.rglob("*.py"))
        run(tree, execution)  # rewrites the stamps for the next case


def test_other_settings_keep_other_stamps(tmp_path, reads, later):
    tree = stamped_tree(tmp_path / "src")
    execution = Execution(cache_dir=tmp_path / "cache")
    run(tree, execution)
    ignoring = replace(Settings(root=tree), per_file_ignores=(("a.py", ("AOTI001",)),)).with_enabled()
    reads.clear()
    assert [code for path, *_, code, _ in shown(run(tree, execution, ignoring)) if path == "a.py"] == []
    assert reads, "settings that change findings used the stamps of others"
    assert len(list((tmp_path / "cache").glob("*.stamps"))) == 2


# ---- the memo of a whole run: a warm run over unchanged files reports what the last one found ----------------


@pytest.fixture
def entry_loads(monkeypatch):
    """How many per-file entries the cache loads."""
    loads: list[str] = []
    original = cache_module.Cache.load
    monkeypatch.setattr(
        cache_module.Cache, "load", lambda self, key, path: loads.append(path) or original(self, key, path)
    )
    return loads


def test_a_warm_run_over_unchanged_files_reads_no_file_and_loads_no_entry(tmp_path, reads, entry_loads, later):
    tree = stamped_tree(tmp_path / "src")
    execution = Execution(cache_dir=tmp_path / "cache")
    cold = run(tree, execution)
    assert len(list((tmp_path / "cache").glob("*.run"))) == 1
    reads.clear(), entry_loads.clear()
    warm = run(tree, execution)
    assert reads == [] and entry_loads == [], "the memo answers alone"
    assert shown(warm) == shown(cold) and warm.files_checked == cold.files_checked
    assert [f.fix for f in warm.findings] == [f.fix for f in cold.findings]
    # Without the memo the stamps answer, and load the entries of the files with findings or project data.
    forget_the_runs(tmp_path / "cache")
    assert shown(run(tree, execution)) == shown(cold) and reads == [] and entry_loads


def test_the_memo_is_not_used_once_any_file_or_the_file_set_changes(tmp_path, reads, later):
    tree = stamped_tree(tmp_path / "src")
    execution = Execution(cache_dir=tmp_path / "cache")
    run(tree, execution)
    # An edit that keeps the size and the mtime: the ctime tells.
    target = tree / "a.py"
    before = target.stat()
    target.write_text(OLD_COMPILE.replace("aot_compile", "aot_compilf"))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    reads.clear()
    assert [code for path, *_, code, _ in shown(run(tree, execution)) if path == "a.py"] == []
    assert reads == ["a.py"]
    # A new file, then a file gone: each run reports the tree as it is.
    (tree / "new.py").write_text(OLD_LOAD)
    assert "new.py" in {path for path, *_ in shown(run(tree, execution))}
    (tree / "new.py").unlink()
    (tree / "b.py").unlink()
    after = shown(run(tree, execution))
    assert {path for path, *_ in after} & {"new.py", "b.py"} == set()
    assert after == shown(run(tree, Execution())), "the same findings as a run without a cache"


def test_a_run_within_the_racy_window_keeps_no_memo(tmp_path):
    tree = stamped_tree(tmp_path / "src")  # just written: every file is younger than the racy window
    execution = Execution(cache_dir=tmp_path / "cache")
    run(tree, execution)
    assert list((tmp_path / "cache").glob("*.run")) == []


def test_the_memo_is_kept_per_directory_and_output(tmp_path, later):
    tree = stamped_tree(tmp_path / "src")
    execution = Execution(cache_dir=tmp_path / "cache")
    settings = Settings(root=tree).with_enabled()

    def paths(cwd: Path) -> set[str]:
        return {f.path for f in lint_paths([tree], settings, cwd, None, execution).findings}

    # A run that prints no edits leaves its fixes unbuilt; a run that prints them (json, sarif) does not take
    # its memo: it builds them.
    without_edits = run(tree, execution, fix=FixOptions(edits=False))
    assert any(f.fix is not None and f.fix.deferred for f in without_edits.findings)
    assert shown(run(tree, execution, fix=FixOptions(edits=False))) == shown(without_edits)
    for _ in range(2):
        with_edits = run(tree, execution, fix=FixOptions(edits=True))
        assert not any(f.fix is not None and f.fix.deferred for f in with_edits.findings)
        assert shown(with_edits) == shown(without_edits)
    # Display paths are relative to the working directory: each directory has its own memo.
    assert paths(tree) == paths(tree) and "a.py" in paths(tree)
    assert "src/a.py" in paths(tmp_path) and paths(tmp_path) == paths(tmp_path)
    # (src, no edits), (src, edits: the runs above and `paths(tree)`), (tmp_path, edits).
    assert len(list((tmp_path / "cache").glob("*.run"))) == 3


def test_a_run_with_an_error_keeps_no_memo(tmp_path, later):
    tree = stamped_tree(tmp_path / "src")
    os.mkfifo(tree / "pipe.py")  # reported as not a regular file, never waited on
    execution = Execution(cache_dir=tmp_path / "cache")
    for _ in range(2):
        assert [error.path for error in run(tree, execution).errors] == ["pipe.py"]
    assert list((tmp_path / "cache").glob("*.run")) == []


def test_a_corrupt_or_planted_memo_is_no_memo(tmp_path, entry_loads, later):
    tree = stamped_tree(tmp_path / "src")
    execution = Execution(cache_dir=tmp_path / "cache")
    first = run(tree, execution)
    cold = shown(first)

    def answered_file_by_file() -> bool:
        entry_loads.clear()
        result = run(tree, execution)
        return shown(result) == cold and result.files_checked == first.files_checked and bool(entry_loads)

    (memo,) = (tmp_path / "cache").glob("*.run")
    header, _, body = memo.read_bytes().partition(b"\n")
    document = json.loads(body)
    planted = [
        header + b"\n" + json.dumps({**document, "findings": [{**document["findings"][0], "code": "X999"}]}).encode(),
        header + b"\n" + json.dumps({**document, "files_checked": -1}).encode(),
        header + b"\n" + json.dumps({**document, "findings": [{**document["findings"][0], "path": 1}]}).encode(),
        header + b"\n{",
        header + b"\n" + b"[" * 100_000,
        header.replace(b"memo 1", b"memo 0") + b"\n" + body,  # another format
        header[:-5] + b"xxxxx\n" + body,  # another digest
    ]
    for data in planted:
        memo.write_bytes(data)
        assert answered_file_by_file(), data[:200]
    # The memo as written answers (the cases above test what they say).
    memo.write_bytes(header + b"\n" + body)
    assert not answered_file_by_file()
    # A symlink planted at the memo's name is not followed.
    memo.unlink()
    elsewhere = tmp_path / "elsewhere.run"
    elsewhere.write_bytes(header + b"\n" + body.replace(b"deprecated", b"planted"))
    memo.symlink_to(elsewhere)
    assert answered_file_by_file()


def test_a_files_resolved_directory_is_its_resolved_parent(tmp_path, monkeypatch):
    """``Cache.resolved_directory`` (each directory resolved once, keyed by the text up to the last separator) gives
    ``Path(where).resolve().parent`` for every spelling of a path: relative, at the root of the working directory,
    with `.`, `..` or a doubled separator, through a directory symlink, and a file symlink (its target's)."""
    from aoti_lint.run.cache import Cache

    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    for name in ("pkg/a.py", "pkg/sub/b.py", "top.py"):
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / "linked").symlink_to(tmp_path / "pkg")
    (tmp_path / "pkg" / "alias.py").symlink_to(tmp_path / "pkg" / "sub" / "b.py")
    monkeypatch.chdir(tmp_path)
    spellings = ["top.py", "./top.py", "pkg/a.py", "pkg//a.py", "pkg/sub/../a.py", "pkg/sub/b.py", "linked/a.py"]
    spellings += ["linked/sub/b.py", "pkg/alias.py", str(tmp_path / "pkg" / "a.py"), str(tmp_path) + "//top.py"]
    cache = Cache(tmp_path / "cache", Settings(root=tmp_path))
    for _ in range(2):  # the second time from what the first resolved
        for where in spellings:
            assert cache.resolved_directory(where) == str(Path(where).resolve().parent), where
            assert cache.resolved_directory(where, os.path.islink(where)) == str(Path(where).resolve().parent), where


def test_the_memo_key_covers_each_files_resolved_directory(tmp_path):
    """A link re-pointed at hard links of the same files leaves every stat as it was; each file's resolved
    directory, which its summary holds (flows link a load to the compiles of its directory), is another."""
    from aoti_lint.read.files import Candidate, discover
    from aoti_lint.run import unchanged_run
    from aoti_lint.run.cache import Cache
    from aoti_lint.run.ruleset import RuleSet

    releases = tmp_path / "releases"
    project(releases / "v1", {"a.py": OLD_COMPILE, "b.py": OLD_LOAD})
    (releases / "v2").mkdir()
    for name in ("a.py", "b.py"):
        os.link(releases / "v1" / name, releases / "v2" / name)
    settings = Settings(root=tmp_path).with_enabled()
    ruleset = RuleSet(settings)

    def key(path: Path) -> unchanged_run.RunKey:
        candidates = [item for item in discover([path], settings) if isinstance(item, Candidate)]
        # A cache per run, as each run opens one (it resolves each directory once).
        found = unchanged_run.run_key(Cache(tmp_path / "cache", settings), candidates, ruleset, tmp_path, FixOptions())
        assert found is not None and candidates
        return found

    for link, target in ((tmp_path / "current", "v1"), (tmp_path / "a.py", "v1/a.py")):
        link.symlink_to(releases / target)
        before = key(link)
        link.unlink()
        link.symlink_to(releases / target.replace("v1", "v2"))
        after = key(link)
        assert sorted(before.stats.values()) == sorted(after.stats.values()), "the same files, the same stats"
        assert before.digest != after.digest


def test_the_anchored_screen_passes_exactly_the_files_holding_a_token():
    """The first look at the bytes scans for a few anchors, then for the tokens under the anchor found: a file
    passes if and only if it holds one of the tokens, each alone, next to its anchor's other tokens or not."""
    from aoti_lint.rules import ALL_RULES
    from aoti_lint.rules.base import SCREEN_ANCHORS, ProjectRule
    from aoti_lint.run.file_context import _screen, anchored_tokens

    context = FileContext.of(ALL_RULES)
    screen = _screen(context.rules, context.project_rules)
    # The tokens: the longest of each trigger group of the rules matching on their groups alone, and the screen
    # tokens of those with a test of their own.
    screened = [rule for rule in context.rules if rule.screen_tokens]
    tokens = {
        max(group, key=len)
        for rule in (*context.rules, *context.project_rules)
        if rule not in screen.rules and rule not in screen.project_rules and rule not in screened
        for group in (rule.summary_triggers if issubclass(rule, ProjectRule) else rule.triggers)
    } | {token for rule in screened for token in rule.screen_tokens}
    assert screened and not set(screened) & set(screen.rules)
    assert tokens
    assert len(screen.anchored) < len(tokens) / 2  # the point of it: fewer scans than tokens
    for token in tokens:
        assert screen.tokens_in(b"x = " + token + b"\n"), token
        # The token cut short keeps its anchor but no token: it does not pass (unless a shorter token is left).
        cut = token[:-1]
        assert screen.tokens_in(cut) == any(other in cut for other in tokens), token
    assert not screen.tokens_in(b" ".join(SCREEN_ANCHORS).replace(b"Meta", b"Met"))
    # A token holding no anchor is its own anchor; one that is an anchor needs no second look.
    assert anchored_tokens([b"aot_load", b"xyz", b"aot"]) == ((b"aot", ()), (b"xyz", ()))
    assert anchored_tokens([b"aot_load", b"xyz"]) == ((b"aot", (b"aot_load",)), (b"xyz", ()))


def test_a_token_is_held_exactly_when_the_bytes_hold_it_whatever_its_anchor_says():
    """``holds`` answers ``token in data``: a token whose anchor is absent is absent, without a search."""
    import random

    from aoti_lint.rules import ALL_RULES
    from aoti_lint.rules.base import SCREEN_ANCHORS, holds

    tokens = {token for rule in ALL_RULES for group in rule.triggers for token in group}
    pieces = [*tokens, *SCREEN_ANCHORS, b"ao", b"t", b"AO", b"ME", b"ta", b".s", b"o", b" ", b"_"]
    generated = random.Random(3)
    for _ in range(3000):
        data = b"".join(generated.choice(pieces) for _ in range(generated.randint(0, 6)))
        for token in generated.sample(sorted(tokens), 12):
            assert holds(data, token) == (token in data), (data, token)
    assert any(anchor in token and anchor != token for token in tokens for anchor in SCREEN_ANCHORS)


def test_the_memo_key_covers_what_the_per_file_ignores_switch_off(tmp_path, later):
    """A link re-pointed at a hard link of its file keeps every stat and directory: only the per-file-ignores,
    which match the path the link resolves to, tell the two runs apart."""
    (tmp_path / "src" / "a").mkdir(parents=True)
    (tmp_path / "src" / "a" / "x.py").write_text(OLD_LOAD)
    os.link(tmp_path / "src" / "a" / "x.py", tmp_path / "src" / "a" / "y.py")
    (tmp_path / "src" / "link.py").symlink_to("a/x.py")
    settings = replace(Settings(root=tmp_path), per_file_ignores=(("src/a/x.py", ("AOTI002",)),)).with_enabled()
    execution = Execution(cache_dir=tmp_path / "cache")

    def codes() -> list[str]:
        return [
            f.code for f in lint_paths([tmp_path / "src" / "link.py"], settings, tmp_path, None, execution).findings
        ]

    assert codes() == codes() == []
    assert list((tmp_path / "cache").glob("*.run"))
    (tmp_path / "src" / "link.py").unlink()
    (tmp_path / "src" / "link.py").symlink_to("a/y.py")
    assert codes() == ["AOTI002"]


def test_rules_given_instead_of_the_registrys_are_part_of_the_memo_key(tmp_path):
    from aoti_lint.rules import ALL_RULES
    from aoti_lint.run.ruleset import RuleSet

    settings = Settings(root=tmp_path).with_enabled()
    keys = {RuleSet(settings, rules).rules_key("a.py", "python") for rules in (None, ALL_RULES, ALL_RULES[:3])}
    assert len(keys) == 3


def test_the_rule_codes_are_the_registrys():
    from aoti_lint.rule_manifest import RULE_CODES
    from aoti_lint.rules import ALL_RULES

    assert tuple(rule.code for rule in ALL_RULES) == RULE_CODES


RULE_MODULES_PROBE = """
import sys, time
from types import SimpleNamespace

from aoti_lint.run import unchanged_run

# Past the racy window of the files just written, as a run on a checkout is (see move_the_runs_clock_on): the
# first run keeps its memo.
unchanged_run.time = SimpleNamespace(time_ns=lambda: time.time_ns() + 3_000_000_000)
from aoti_lint.cli import main

code = main(["--isolated", "--cache-dir", "cache", "-q", "--exit-zero", "src"])
heavy = ("aoti_lint.rules.deprecated_reference", "aoti_lint.run.engine", "aoti_lint.run.runner")
print(code, *(name in sys.modules for name in heavy), "libcst" in sys.modules)
"""


def test_a_run_the_memo_answers_loads_no_rule_engine_or_pool(tmp_path):
    """The rules, the engine and the worker pool are imported on first use: a warm run over unchanged files needs
    only the rules' codes (a sixth of the start-up of a pre-commit hook on one clean file)."""
    stamped_tree(tmp_path / "src")
    probe = [sys.executable, "-c", RULE_MODULES_PROBE]
    runs = [subprocess.run(probe, cwd=tmp_path, capture_output=True, text=True, timeout=120) for _ in range(2)]
    last_lines = [result.stdout.splitlines()[-1].split() for result in runs]
    assert last_lines == [["0", "True", "True", "True", "False"], ["0", "False", "False", "False", "False"]], runs
    assert list((tmp_path / "cache").glob("*.run"))


NOQA_TEXTS = [
    'x = 1  # noqa\ny = "# noqa: AOTI001"  # NOQA: AOTI002, AOTI201\n',
    'a = ("s"  # noqa: AOTI001\n     "t")\nb = """\n# noqa\n"""  # noqa: AOTI003\n',
    'f"{x:#x} # noqa"  # noqa:AOTI202\r\nz = 1 \\\n  # noqa\n',
    "# aoti-lint: noqa: AOTI101\nx = 1\r# noqa # noqa: AOTI002\r",
    "# aoti-lint: noqa\n",
    "def f():\n    pass\n    # noqa: AOTI001\n# trailing\n\x0c# noqa\n",
    "x = [\n    1,  # noqa: AOTI001\n    # noqa: AOTI002\n]\n",
]


def test_noqa_comments_read_beside_the_ast_index_are_the_tokenizers():
    """``indexed_suppressions`` (a `#` outside the string literals whose value holds one opens a comment) gives
    what tokenizing the text gives: on the fixtures, and on generated lines mixing strings, f-strings, bytes,
    implicit concatenations, continuations and comments."""
    import random
    import textwrap

    from aoti_lint.model import suppressions
    from aoti_lint.model.name_index import code_index
    from aoti_lint.model.suppressions import indexed_suppressions, python_suppressions

    texts = [textwrap.dedent(text) for text in NOQA_TEXTS]
    texts += [path.read_text() for path in sorted((REPO / "tests" / "fixtures").rglob("*.py"))]
    pieces = ["x = ", "'# noqa'", '"a#b"', "b'#'", 'f"{x:#x}"', "f'{y!r} # noqa'", "f'{\"#\"}'", '"""\n# noqa\n"""',
              "('s'  # noqa: AOTI001\n 't')", "  # noqa", "  # NOQA:AOTI002", "# aoti-lint: noqa: AOTI101", " \\\n",
              "\n", "\r\n", "\r", "noqa", "1", ", ", "(", ")", "'''#\n'''", 'rb"\\#"', "\"'#' noqa\""]  # fmt: skip
    generated = random.Random(11)
    for _ in range(3000):
        texts.append("".join(generated.choice(pieces) for _ in range(generated.randint(1, 12))))
    compared = with_noqa = tokenized = 0
    laid_out = suppressions._laid_out_suppressions
    for text in texts:
        index = code_index(text)
        if index is None:
            continue  # ast cannot parse it: never read this way
        expected = python_suppressions(text)
        assert indexed_suppressions(text, index.hash_strings) == expected, text
        # Where a noqa lies in a literal spanning rows, the strings' places read the comments (or give up).
        assert laid_out(text) in (None, expected), text
        compared += 1
        with_noqa += bool(expected.lines or expected.file_all or expected.file_codes)
        tokenized += laid_out(text) is None
    assert compared > 600 and with_noqa > 300, (compared, with_noqa)
    assert tokenized < compared / 4, "the strings' places could rarely be read: the case tests little"
    # Where the tokenizer gives up on a text ast reads (a last line of a backslash and CRLF, found by review), its
    # fallback takes a `#` only after whitespace: the index reads the comment as Python does.
    text = "x#noqa\r\n\\\r\n"
    index = code_index(text)
    assert index is not None and python_suppressions(text).lines == {}
    assert indexed_suppressions(text, index.hash_strings).lines == {1: None}


@pytest.mark.slow
def test_noqa_comments_read_from_the_strings_places_are_the_tokenizers_on_torchs_sources():
    """Every module of the installed torch holding a `noqa` that ``ast`` parses (about 400; the linter never imports
    them): where the strings' places can be read, the comments read from them are the tokenizer's."""
    import ast
    import importlib.util

    from aoti_lint.model.suppressions import _laid_out_suppressions, python_suppressions

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    compared = 0
    for path in sorted(Path(next(iter(spec.submodule_search_locations))).rglob("*.py")):
        text = path.read_bytes().decode("utf-8", "replace")
        if "noqa" not in text.lower():
            continue
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        laid_out = _laid_out_suppressions(text)
        assert laid_out in (None, python_suppressions(text)), path
        compared += laid_out is not None
    assert compared > 300, f"{compared} modules: torch's sources are not where they were"


def test_noqa_comments_are_read_only_where_one_may_apply(monkeypatch):
    """A file's comments are read (with the tokenizer: a `# noqa` in a string is none) only when a noqa may suppress
    a finding: on its row, or file-level; torch's sources hold `# noqa` in most large files."""
    from aoti_lint.model import suppressions

    calls: list[int] = []
    original = suppressions.python_suppressions
    monkeypatch.setattr(suppressions, "python_suppressions", lambda text: calls.append(1) or original(text))
    head = "import os\nimport sys  # noqa: F401\r"
    cases = {
        head + 'os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n': (["AOTI201"], 0),
        head + 'os.environ["CUDA_LAUNCH_BLOCKING"] = "1"  # noqa\n': ([], 1),
        head + 'os.environ["CUDA_LAUNCH_BLOCKING"] = "1"; s = "# noqa"\n': (["AOTI201"], 1),
        "# aoti-lint: noqa: AOTI201\n" + head + 'os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n': ([], 1),
        head + 'os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n# noqa\n': (["AOTI201"], 0),
    }
    for text, (codes, tokenized) in cases.items():
        calls.clear()
        for edits in (False, True):  # fixes' edits left to build, then built
            assert [f.code for f in lint_text(text, build_edits=edits).findings] == codes, text
        assert len(calls) == 2 * tokenized, text


def _fragments_text(generated, pieces: list, size: int):
    return pieces[0][:0].join(generated.choice(pieces) for _ in range(generated.randint(0, size)))


def test_the_summary_text_test_finds_what_one_alternation_finds():
    """The device-flow rules' text stage searches one literal-led pattern at a time (an alternation first is
    tried at every position): it must answer as the single pattern it replaces, `\\b` included."""
    import random
    import re

    from aoti_lint.knowledge.device_flow import ARTIFACT_SUFFIXES, SUMMARY_IDENTIFIERS
    from aoti_lint.rules.device_flow import _summary_matches

    def _mentions_summary_text(text: str) -> bool:
        return next(_summary_matches(text), None) is not None

    names = "|".join(sorted(SUMMARY_IDENTIFIERS))
    suffixes = "|".join(re.escape(suffix) for suffix in ARTIFACT_SUFFIXES)
    combined = re.compile(
        rf"\b(?:{names})(?:\s|\\)*\("
        rf"|\bimport\b(?:[^\n;]|\\\n)*?\b(?:{names})\b"
        rf"|\bimport\s*\([^)]*\b(?:{names})\b"
        rf"|(?:{suffixes})[\"']"
    )
    pieces = [*SUMMARY_IDENTIFIERS, *ARTIFACT_SUFFIXES, "import", "from", "(", ")", " ", "\\\n", "\n", ";", "_",
              "x", "é", "aoti_", "my", '"', "'", ",", "."]  # fmt: skip
    generated = random.Random(5)
    found = 0
    for _ in range(20000):
        text = _fragments_text(generated, pieces, 8)
        expected = combined.search(text) is not None
        found += expected
        assert _mentions_summary_text(text) == expected, text
    assert 500 < found < 19500  # both answers were tested often
    # A name inside a longer word first, then one of its own: the search goes on past the first.
    for text in ["my_aot_load(x); aot_load(p)", "éaot_load(x)\nimport aot_load", "x_aot_compile(1) or aot_compile(m)"]:
        assert combined.search(text) and _mentions_summary_text(text), text
    assert not _mentions_summary_text("my_aot_load(x); éimport aot_load")


def test_the_summary_text_test_leaves_a_definition_of_an_api_name():
    """torch defines the names it exports (`def load_package(`, `def aot_compile(`): no call, no summary; a call
    after such a definition still counts, as does every other form."""
    from aoti_lint.rules.device_flow import DeviceFlowRule
    from tests.helpers import lint_text

    for text in ("def load_package(path):\n    pass\n", "class X:\n    async def aot_compile(self):\n        pass\n"):
        assert not DeviceFlowRule.wants_summary_python(text), text
        assert DeviceFlowRule.wants_summary(text.encode()), text  # the bytes alone let it through
    for text in (
        "def load_package(path):\n    return torch._inductor.package.load_package(path)\n",
        "undef aot_compile(m)\n",
        "def f(): aot_load(p, 'cpu')\n",
        "from torch._export import aot_load\n",
        'PATH = "m.pt2"\n',
    ):
        assert DeviceFlowRule.wants_summary_python(text), text
    # A definition shadows the API in its module: nothing to summarise, as the full analysis finds.
    text = "import torch\n\n\ndef aot_load(path, device):\n    return path\n\n\naot_load('m.so', 'cuda')\n"
    assert DeviceFlowRule.wants_summary_python(text)  # the call is a call
    assert not lint_text(text, select=("AOTI101", "AOTI102", "AOTI103"), prefilter=False).findings


# AOTI003's findings, each with its call spelled another way: the text stage passes every one.
AOTI003_SPELLINGS = [
    'torch._inductor.aoti_load_package("m.pt2", device="cuda")',
    'from torch._inductor import aoti_load_package as load\nload("m.pt2", device="cuda")',
    'from torch._inductor import (\n    aoti_load_package,\n)\naoti_load_package("m.pt2", device="cuda")',
    '(torch._inductor.aoti_load_package)("m.pt2", device="cuda")',
    'torch._inductor.aoti_load_package \\\n    ("m.pt2", device="cuda")',
    'torch._inductor.aoti_load_package(  # the package\n    "m.pt2", device="cuda")',
    'torch.compile(m, options={"aot_inductor.debug_intermediate_value_printer": 2})',
    "torch.compile(m, options={'aot_inductor.' 'debug_intermediate_value_printer': 2})",
    'torch._inductor.package.load_package("m.so")',
]


@pytest.mark.parametrize("spelling", AOTI003_SPELLINGS)
def test_aoti003s_text_stage_passes_every_spelling_of_a_call(spelling):
    from aoti_lint.rules.aoti_api_misuse import AotiApiMisuse
    from tests.helpers import lint_text

    text = f"import torch\nimport torch._inductor.package\n\n{spelling}\n"
    assert [f.code for f in lint_text(text, select=("AOTI003",), prefilter=False).findings] == ["AOTI003"]
    assert AotiApiMisuse.could_match(text.encode()) and AotiApiMisuse.could_match_python(text)


def test_aoti003s_text_stage_leaves_mentions_definitions_and_reads_of_the_api():
    """As torch's own sources hold them: in docstrings and messages, defined, read as attributes."""
    from aoti_lint.rules.aoti_api_misuse import AotiApiMisuse

    for text in (
        '"""Load it with ``torch._inductor.aoti_load_package``."""',
        'raise ValueError("please call `torch._inductor.aoti_compile_and_package`.")',
        "def load_package(path, name):\n    return path",
        "class Loader:\n    async def load_package(self, path):\n        pass",
        "level = config.aot_inductor.debug_intermediate_value_printer",
        "def _aoti_compile_and_package_inner(ep):\n    return _aoti_compile_and_package_inner(ep)",
        "x = my_load_package(p)",
    ):
        assert AotiApiMisuse.could_match(text.encode()), text  # the bytes alone let it through
        assert not AotiApiMisuse.could_match_python(text), text


def test_aoti003s_code_stage_leaves_a_relative_import_of_an_api_name():
    """torch's `_inductor/package/__init__.py` re-exports `load_package` by a relative import, which never names
    the API; the same import with a call still reaches libcst (the call may be of an absolute name too)."""
    from aoti_lint.model.name_index import code_index
    from aoti_lint.rules.aoti_api_misuse import AotiApiMisuse
    from tests.helpers import lint_text

    text = "from .package import AOTICompiledModel, load_package, package_aoti\n"
    assert AotiApiMisuse.could_match_python(text) and not AotiApiMisuse.could_match_code(code_index(text))
    called = text + 'load_package("m.so")\n'
    assert not lint_text(called, "pkg/__init__.py", select=("AOTI003",), prefilter=False).findings
    assert AotiApiMisuse.could_match_code(code_index(called))
    absolute = "from torch._inductor.package import load_package\n"
    assert AotiApiMisuse.could_match_code(code_index(absolute))


def test_a_quoted_config_key_is_found_where_the_whole_pattern_finds_it():
    """AOTI202's bytes test matches a quoted key's pattern only at the key's occurrences, after a quote, and the
    written form's where its last name occurs: it must answer as ``re.search`` of the quoted pattern over the whole
    bytes and ``re.finditer`` of the written one."""
    import random
    import re

    from aoti_lint.rules.base import tokens_match
    from aoti_lint.rules.debug_inductor_config import _DOT, _DOT_OR_ARGUMENT, _KEY_FORMS
    from aoti_lint.rules.debug_switches import is_word_byte, may_follow, opens_call

    def expected(forms, data: bytes) -> bool:
        if not tokens_match((forms.parts,), data):
            return False
        pattern = re.compile(forms.quoted)
        for start in range(len(data)):
            match = pattern.match(data, start)
            if match and (match.group("settled") or match.group("entry") or opens_call(data, start)):
                return True
        # A dotted key's last name counts only as an attribute, a key's as an attribute or a keyword (tested in
        # test_debug_switches).
        return any(
            (m.start() == 0 or not is_word_byte(data[m.start() - 1]))
            and may_follow(data, m.start(), _DOT if len(forms.parts) > 1 else _DOT_OR_ARGUMENT)
            for m in re.finditer(forms.written, data)
        )

    # One written form inside another's match, which ``finditer`` does not try again.
    (debug,) = [forms for forms in _KEY_FORMS if forms.key == b"debug"]
    for data in (b"import torch._inductor\nxdebug = a.debug = True\n", b"_inductor\nx = c.debug = y.debug = 1\n"):
        assert debug.in_bytes(data) == expected(debug, data), data
    punctuation = [b'"', b"'", b":", b",", b"]", b"=", b"==", b" ", b"True", b"1", b"#", b"\n", b"_", b"x", b".", b"("]
    generated = random.Random(7)
    found = 0
    for _ in range(20000):
        forms = generated.choice(_KEY_FORMS)
        pieces = [forms.key, *forms.parts, b'"' + forms.key + b'"', b"'" + forms.key, *punctuation]
        data = _fragments_text(generated, pieces, 9)
        answer = expected(forms, data)
        found += answer
        assert forms.in_bytes(data) == answer, (forms.key, data)
    assert found > 100  # the quoted and the written forms both found, and missed


def test_the_env_var_text_test_answers_as_its_pattern_alone():
    """AOTI201's text stage tries its pattern only in the stretches before a name where a match may start
    (``_settings``): it must find the matches ``re.finditer`` finds, and answer as the pattern alone."""
    import random
    import re

    from aoti_lint.knowledge.debug_switches import SWITCHES_BY_ENV_VAR
    from aoti_lint.rules.debug_env_var import _ENV_SETTING, DebugEnvVar, _sets, _settings

    names = sorted(SWITCHES_BY_ENV_VAR)
    pieces = ['"', "'", "]", "=", "==", ":", ",", "(", ".get(", ".getenv(", " ", "\\\n", "# c\n", '"1"', "'0'", "x",
              "environ[", "setdefault(", "update(", "\n", "\n  \n", "  # c ( \n", "\r\n", "\x0b"]  # fmt: skip
    # Matches that start lines before their name: across blank lines, comments and line continuations.
    across_lines = [
        'f(\n    TORCH_LOGS="1")',
        'os.environ.get(  # c\n\n    "TORCH_LOGS", "1")',
        'os.environ.update(\n  # note\n\n  TORCH_LOGS="1")',
        'os.environ.getenv(\\\n "TORCH_LOGS", "1")',
        'print(1, \\\r\n  # c\n  TORCH_COMPILE_DEBUG = "1")',
    ]
    for text in across_lines:
        assert [m.span() for m in _settings(text)] == [m.span() for m in re.finditer(_ENV_SETTING, text)], text
        assert re.search(_ENV_SETTING, text).start() < text.rfind("\n"), text
    generated = random.Random(13)
    found = 0
    for _ in range(20000):
        chosen = [generated.choice(names) for _ in range(2)]
        quoted = [quote + name + quote for name in chosen for quote in "\"'"]
        text = _fragments_text(generated, [*chosen, *quoted, ': "1"', '= "1"', "] = ", *pieces], 10)
        matches = list(re.finditer(_ENV_SETTING, text))
        assert [m.span() for m in _settings(text)] == [m.span() for m in matches], text
        expected = any(_sets(text, match) for match in matches)
        found += expected
        assert DebugEnvVar.could_match_python(text) == expected, text
    assert 500 < found < 19500


def test_a_path_outside_the_working_directory_is_shown_as_relpath_shows_it():
    """``display_path`` runs relpath once per directory, not per file: the same answer on generated paths and roots,
    `..`, `.`, empty parts and a root's own parents among them."""
    import random

    from aoti_lint.read.source import display_path

    parts = ["a", "b", "c.py", "..", ".", "", "x"]
    generated = random.Random(1)

    def path() -> str:
        return "/" + "/".join(generated.choice(parts) for _ in range(generated.randint(0, 5)))

    paths = {path() for _ in range(600)} | {"/", "/a", "/a/b", "/a/b/c.py", "/x/a/b.py"}
    roots = {path() for _ in range(60)} | {"/", "/a/b", "/a/b/", "//a/b", "/x"}
    for root in map(Path, roots):
        inside = os.path.join(str(root), "")
        for text in paths:
            expected = text[len(inside) :] if text.startswith(inside) else os.path.relpath(text, root)
            assert display_path(text, root) == expected, (text, root)


def test_stage_one_over_many_files_at_once_answers_as_over_each():
    """``FileContext.reads_many`` looks for the screen's words in several files' bytes joined: a word at a file's
    edges, a NUL byte in a file, an empty file and a word split across two files must not change any answer."""
    import random

    from aoti_lint.rules import ALL_RULES
    from aoti_lint.rules.base import ProjectRule
    from aoti_lint.run.file_context import FileContext

    python = [rule for rule in ALL_RULES if "python" in rule.file_kinds]
    context = FileContext(
        tuple(rule for rule in python if not issubclass(rule, ProjectRule)),
        tuple(rule for rule in python if issubclass(rule, ProjectRule)),
    )
    words = [b"aot_load", b"_export", b"TORCH_LOGS", b'"1"', b"os.environ[", b"] = ", b".so'", b"aot", b"_load"]
    words += [b"register_fake", b"\0", b"", b"x", b"\n", b"inductor", b"options", b"compile(", b"'meta'", b"impl("]
    generated = random.Random(4)
    found = 0
    for _ in range(3000):
        datas = [b"".join(generated.choices(words, k=generated.randint(0, 6))) for _ in range(generated.randint(1, 9))]
        expected = [context.reads(data) for data in datas]
        found += sum(expected)
        assert context.reads_many(datas) == expected, datas
    assert found > 1000


def test_a_relative_root_is_read_from_the_working_directory_of_each_call(tmp_path, monkeypatch):
    from aoti_lint.read.source import display_path

    (tmp_path / "a").mkdir()
    (tmp_path / "b" / "c").mkdir(parents=True)
    outside = str(tmp_path / "x" / "y.py")
    for here in (tmp_path / "a", tmp_path / "b" / "c"):
        monkeypatch.chdir(here)
        assert display_path(outside, Path("sub")) == os.path.relpath(outside, "sub")


# Modules that name some `.so` in f-strings (joined literals, doubled braces, escapes), as torch's build and cache
# helpers do, and a module of unrelated code: read from `ast` for the plan, never by libcst.
UNRELATED_SO_MENTIONS = {
    "cache/codecache.py": 'def load(name):\n    if not name.endswith(".so"):\n'
    '        raise RuntimeError(f"Only support loading a .so file for now. "\n'
    '                           f"Got {name}")\n',
    "cache/autoschedule.py": 'def lib(name):\n    return f"libautoschedule_{name.lower()}.so"\n',
    "backends/run_cpu.py": 'def find(kind, item):\n    if item.endswith(".so"):\n'
    '        return f"lib{{1}}.so in {kind}" "\\n"\n',
    "models/big.py": "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(200)),
}


@pytest.mark.parametrize("fix", [FixOptions(), FixOptions(apply=True, unsafe=True, write=False)], ids=["check", "diff"])
def test_one_planted_fixable_load_parses_no_module_outside_its_flow(tmp_path, monkeypatch, fix):
    from aoti_lint.fixes import parse

    parsed: list[str] = []
    original = parse.parse_module
    monkeypatch.setattr(
        parse, "parse_module", lambda source, text: parsed.append(source.display_path) or original(source, text)
    )
    root = project(tmp_path, {**UNRELATED_SO_MENTIONS, "serve/serve.py": OLD_LOAD})
    result = run(root, Execution(jobs=1), fix=fix)
    assert [finding.code for finding in result.findings] in (["AOTI002"], [])
    assert set(parsed) <= {"serve/serve.py"}, parsed


def test_a_large_module_the_ast_readings_settle_is_checked_like_a_small_one(tmp_path, monkeypatch):
    """Past libcst's size limit only what libcst must read is focused or refused: a large module naming a `.so`
    only in strings (torch's codecache.py) is summarised from `ast`, with no error and no libcst parse."""
    from aoti_lint.fixes import parse

    parsed: list[str] = []
    original = parse.parse_module
    monkeypatch.setattr(parse, "parse_module", lambda s, t: parsed.append(s.display_path) or original(s, t))
    body = "".join(f"def f{i}(name):\n    return name.endswith('.so') and {i}\n\n\n" for i in range(6_000))
    assert len(body) > parse.MAX_LIBCST_BYTES
    root = project(tmp_path, {"cache/codecache.py": body, "serve/serve.py": OLD_LOAD})
    result = run(root, Execution(jobs=1))
    assert [finding.code for finding in result.findings] == ["AOTI002"]
    assert result.errors == []
    assert set(parsed) <= {"serve/serve.py"}, parsed


def test_the_rest_of_the_project_is_read_for_its_flows_alone(tmp_path, monkeypatch):
    """A run given one file reads the project's other files only for what the migration plan and the project
    rules take from them: a module holding debug switches and kernels but no call of the API is not parsed."""
    from aoti_lint.fixes import parse
    from aoti_lint.rules import checker

    parsed: list[str] = []
    original_parse, original_check = parse.parse_module, checker.check_module
    monkeypatch.setattr(parse, "parse_module", lambda s, t: parsed.append(s.display_path) or original_parse(s, t))

    def check_module(rules, module):
        parsed.append(module.path)
        return original_check(rules, module)

    monkeypatch.setattr(checker, "check_module", check_module)
    switches = (
        "import os\nimport torch\n\n"
        'os.environ["TORCHINDUCTOR_NAN_ASSERTS"] = "1"\n'
        "torch._inductor.config.trace.enabled = True\n"
        "\n\n@torch.library.register_fake('ns::op')\ndef _(x):\n    return x.new_empty(int(x.shape[0]))\n"
    )
    root = project(tmp_path, {"debug/settings.py": switches, "serve/serve.py": OLD_LOAD})
    settings = Settings(root=root).with_enabled()
    whole = lint_paths([root], settings, root, None, Execution(jobs=1))
    assert {finding.path for finding in whole.findings} == {"debug/settings.py", "serve/serve.py"}
    parsed.clear()
    one = lint_paths([root / "serve" / "serve.py"], settings, root, None, Execution(jobs=1))
    assert [finding.code for finding in one.findings] == ["AOTI002"]
    assert "debug/settings.py" not in parsed, parsed
