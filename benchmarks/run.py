"""aoti-lint's speed next to grep (the floor), ruff, TorchFix and Fixit, on the same trees in one run.

    python benchmarks/run.py            # full run with the peers, writes benchmarks/RESULTS.md (all of it)
    python benchmarks/run.py --quick    # aoti-lint and grep only, one run each, a 2,000-file monorepo
                                        # (a few minutes; no profile); writes benchmarks/.peers/RESULTS-quick.md

Run it with the interpreter of aoti-lint's own environment (the one with torch, whose sources are tree (a)).
The peers are installed by this script into benchmarks/.peers/ (gitignored); they are not test dependencies.
Trees are copied or generated into a temporary directory outside any git repository and outside any
default-excluded folder name, so that every tool sees the same files and no .gitignore hides them. Every
command is a fresh process, as users and pre-commit run it.

Every timed aoti-lint run is checked: it must report each finding planted in its tree (one of every kind the
product reports and fixes, each in a folder of its own: a fixable `.so` load with the compile that writes it, an
`aot_compile` with an `output_path`, an environment debug switch, an Inductor debug config key), and say (``-v``)
that it checked as many files as the tree holds; a run that does not is an error, not a figure. The
`--fix --unsafe-fixes` row runs on a fresh copy of the tree each time, and must have fixed the planted load and
reported or fixed every other plant.
Section (d) times one big file of each kind that was once quadratic, at two sizes; each run must report all of its
findings.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import platform
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PEERS = HERE / ".peers"
RESULTS = HERE / "RESULTS.md"
PEER_PACKAGES = ["torchfix", "fixit", "ruff==0.17.6"]
# Users' interpreters write and reuse bytecode; an environment that forbids it would time the compiler.
CLEAN_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


@dataclass
class Measure:
    label: str
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # user + system seconds, the process tree's
    peak_kb: int = 0
    over_bound: float | None = None  # set when a run was killed at this many seconds
    note: str = ""

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times and self.over_bound is None else None

    def shown(self) -> str:
        if self.over_bound is not None:
            return f"> {self.over_bound:.0f} s"
        if self.median is None:
            return self.note or "n/a"
        return _seconds(self.median)


def _seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


Check = Callable[[str, str], str | None]


def timed_run(
    command: list[str], cwd: Path, bound: float, env: dict | None = None, check: Check | None = None
) -> tuple[float | None, float, int]:
    """Wall time, CPU time and peak RSS (KiB, the largest process of the tree) of one run.

    The wall time is None when the run went past ``bound``. CPU time counts the children the command waited
    for (a pool's workers); on a loaded machine it is steadier than the wall time. ``check`` gets the run's
    stdout and stderr and returns why they are wrong, or None.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=cwd, stdout=out, stderr=err, env={**CLEAN_ENV, **(env or {})}, start_new_session=True
        )
        deadline = start + bound
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                elapsed = time.perf_counter() - start
                process.returncode = os.waitstatus_to_exitcode(status)
                break
            if time.perf_counter() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                return None, 0.0, 0
            time.sleep(0.002)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if process.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} exited {process.returncode}: {stderr[-2000:]}")
    problem = check(stdout, stderr) if check else None
    if problem:
        raise RuntimeError(f"{' '.join(command)} (in {cwd}): {problem}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def measure(
    label: str,
    command: list[str],
    cwd: Path,
    runs: int,
    bound: float,
    env: dict | None = None,
    check: Check | None = None,
    before: Callable[[], None] | None = None,
) -> Measure:
    """``before``: untimed work before each run (an edit of the tree)."""
    result = Measure(label)
    index = 0
    while index < runs:
        if before is not None:
            before()
        elapsed, cpu, peak = timed_run(command, cwd, bound, env, check)
        if elapsed is None:
            result.over_bound = bound
            break
        result.times.append(elapsed)
        result.cpu.append(cpu)
        result.peak_kb = max(result.peak_kb, peak)
        # A slow command is measured fewer times, so the whole run stays bounded.
        if index == 0 and elapsed * runs > 4 * bound:
            break
        if index == 0 and elapsed > 10:
            runs = min(runs, 3)
        index += 1
    cpu = f"cpu {_seconds(statistics.median(result.cpu))}, " if result.cpu else ""
    print(f"  {label:<44} {result.shown():>10}  ({cpu}n={len(result.times)}, peak {result.peak_kb // 1024} MiB)")
    return result


def lint_check(files: int, planted: tuple[Plant, ...], fixed_in: Path | None = None) -> Check:
    """What every aoti-lint run of a tree must show: each planted finding, and all the tree's files checked.
    ``fixed_in``: the copy a fixing run wrote, where a plant counts when it was fixed instead of reported, and the
    fixable load must have been fixed."""

    def check(stdout: str, stderr: str) -> str | None:
        lines = stdout.splitlines()
        for plant in planted:
            reported = any(line.startswith(plant.path + ":") and plant.code in line for line in lines)
            fixed = fixed_in is not None and (fixed_in / plant.path).read_text() != plant.text
            if fixed_in is not None and plant.fixable and not fixed:
                return f"the fixable finding planted in {plant.path} was not fixed"
            if not (reported or fixed):
                return f"the {plant.code} finding planted in {plant.path} was not reported"
        counted = re.findall(r"^debug: Checked (\d+) files?$", stderr, re.M)
        if counted != [str(files)]:
            return f"checked {counted or 'an unknown number of'} files, the tree holds {files}"
        return None

    return check


# ---------------------------------------------------------------------------------------------- the peers


def install_peers() -> dict[str, str]:
    """A virtual environment of its own for the peers (TorchFix pins its own libcst and torch-free deps)."""
    venv = PEERS / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    missing = [name for name in ("torchfix", "fixit", "ruff") if not (venv / "bin" / name).exists()]
    if missing:
        print(f"installing peers into {venv} ...")
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PEER_PACKAGES], check=False)
    (PEERS / ".gitignore").write_text("*\n")
    versions = {}
    for name in ("torchfix", "fixit", "ruff", "libcst"):
        shown = subprocess.run(
            [str(python), "-m", "pip", "show", name], capture_output=True, text=True, check=False
        ).stdout
        match = re.search(r"^Version: (.+)$", shown, re.M)
        versions[name] = match.group(1) if match else "not installed"
    return versions


def peer_commands(target: str) -> dict[str, list[str]]:
    bin_dir = PEERS / "venv" / "bin"
    return {
        "ruff check --select ALL --no-cache": [
            str(bin_dir / "ruff"),
            "check",
            "--isolated",
            "--select",
            "ALL",
            "--no-cache",
            "--exit-zero",
            "-q",
            target,
        ],
        "torchfix --select ALL": [str(bin_dir / "torchfix"), "--select", "ALL", target],
        "fixit lint": [str(bin_dir / "fixit"), "lint", target],
    }


# ---------------------------------------------------------------------------------------------- the trees


def trigger_tokens() -> list[str]:
    from aoti_lint.rules import ALL_RULES

    return sorted({token.decode() for rule in ALL_RULES for group in rule.triggers for token in group})


def copy_torch(work: Path) -> Path | None:
    spec = importlib.util.find_spec("torch")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    source = Path(next(iter(spec.submodule_search_locations)))
    target = work / "torch_tree" / "torch"

    def not_python(directory: str, names: list[str]) -> list[str]:
        return [n for n in names if not os.path.isdir(os.path.join(directory, n)) and not n.endswith((".py", ".pyi"))]

    shutil.copytree(source, target, ignore=not_python)
    return target.parent


PLAIN = '''"""{doc}"""

from __future__ import annotations

import logging

import torch
from torch import nn

log = logging.getLogger(__name__)


class {cls}(nn.Module):
    """A small block: {doc}"""

    def __init__(self, width: int = {width}) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(torch.relu(self.proj(x)) + x)


def {func}(batch: int, width: int = {width}) -> torch.Tensor:
    model = {cls}(width).eval()
    with torch.no_grad():
        out = model(torch.randn(batch, width))
    log.info("%s: %s", "{func}", tuple(out.shape))
    return out
'''

AOTI_FORMS = [
    "import torch\n\n\ndef build(model, x):\n    so = torch._export.aot_compile(model, (x,))\n"
    "    return torch._export.aot_load(so, 'cpu')\n",
    "from torch._export import aot_compile, aot_load\n\n\ndef build(model, x):\n"
    "    return aot_load(aot_compile(model, (x,)), 'cuda')\n",
    "import torch._export as te\n\n\ndef build(model, x):\n    return te.aot_compile(model, (x,), options={})\n",
]

DEBUG_FORMS = [
    'import os\n\nos.environ["TORCHINDUCTOR_NAN_ASSERTS"] = "1"\nos.environ["TORCH_LOGS"] = "+dynamo,output_code"\n',
    "import torch._inductor.config as cfg\n\ncfg.aot_inductor.debug_compile = True\ncfg.debug = True\n",
    'import os\n\nos.environ.setdefault("TORCH_COMPILE_DEBUG", "1")\n'
    'os.environ["AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER"] = "2"\n',
]


def generate_monorepo(root: Path, files: int, seed: int) -> Path:
    """``files`` modules, 50 to a package; 1% use the deprecated AOTI APIs, 1% set debug switches."""
    rng = random.Random(seed)
    words = ["encoder", "decoder", "router", "mixer", "fusion", "ranker", "tower", "adapter", "head", "stem"]
    for index in range(files):
        package = root / f"svc_{index // 2000:02d}" / f"pkg_{index // 50:04d}"
        package.mkdir(parents=True, exist_ok=True)
        word = rng.choice(words)
        text = PLAIN.format(
            doc=f"The {word} of service {index // 2000}, variant {rng.randrange(10**6)}.",
            cls=f"{word.title()}{index}",
            func=f"run_{word}_{index}",
            width=rng.choice([64, 128, 256, 512]),
        )
        roll = rng.random()
        if roll < 0.01:
            text += "\n\n" + rng.choice(AOTI_FORMS)
        elif roll < 0.02:
            text = rng.choice(DEBUG_FORMS) + "\n" + text
        (package / f"mod_{index:05d}.py").write_text(text)
    return root


# ---------------------------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class Plant:
    path: str  # as aoti-lint displays it, relative to the tree
    code: str
    text: str
    fixable: bool = False


@dataclass
class Tree:
    name: str
    path: Path
    files: int
    mbytes: float
    planted: tuple[Plant, ...] = ()
    measures: dict[str, Measure] = field(default_factory=dict)


FIXING = "aoti-lint --fix --unsafe-fixes, cold, default jobs"
# One finding of every kind the product reports and fixes, each in a folder of its own: the flow planner, the
# device-flow summary and each debug-switch reading must all find theirs in every timed run.
PLANTS = (
    # A load is migrated only with the compile that writes its artifact: the fixable load is planted with it.
    (
        "load/serve.py",
        "AOTI002",
        "import torch\n\n\ndef serve(model, x):\n    so_path = torch._export.aot_compile(model, (x,))\n"
        "    return torch._export.aot_load(so_path, 'cpu')\n",
        True,
    ),
    (
        "export/export.py",
        "AOTI001",
        "import torch\n\n\ndef build(model, x):\n    return torch._export.aot_compile(\n"
        "        model, (x,), options={'aot_inductor.output_path': '/srv/models/encoder.so'}\n    )\n",
        False,
    ),
    ("env/debug_env.py", "AOTI201", "import os\n\nos.environ['TORCHINDUCTOR_NAN_ASSERTS'] = '1'\n", False),
    ("config/inductor.py", "AOTI202", "import torch._inductor.config as cfg\n\ncfg.trace.enabled = True\n", False),
)


def plant(root: Path, folder: str) -> tuple[Plant, ...]:
    """Write the planted findings under ``folder`` (deep in the tree), each in a folder of its own."""
    planted = []
    for relative, code, text, fixable in PLANTS:
        path = f"{folder}/{relative}"
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
        planted.append(Plant(path, code, text, fixable))
    return tuple(planted)


def tree_stats(path: Path) -> tuple[int, float]:
    """The files aoti-lint reads in the tree (by its own file kinds) and their size."""
    from aoti_lint.read.source import file_kind

    count = size = 0
    for directory, _, names in os.walk(path):
        for name in names:
            if file_kind(Path(directory, name)) is not None:
                count += 1
                size += os.path.getsize(os.path.join(directory, name))
    return count, size / 1e6


def out_of_racy_window(root: Path) -> None:
    """Wait until every file of the tree (or the file) ``root`` is older than the cache's racy window
    (``aoti_lint.run.file_stats``), as the files of a checkout are: a run that fills the cache stamps only those, and a
    warm run reads the others."""
    from aoti_lint.run.file_stats import RACY_SECONDS

    files = [root] if root.is_file() else (Path(d, n) for d, _, names in os.walk(root) for n in names)
    newest = max((os.stat(path).st_ctime for path in files), default=0)
    time.sleep(max(0.0, newest + RACY_SECONDS + 0.1 - time.time()))


def compiled_scanner(python: str) -> bool:
    """Whether the aoti-lint of that interpreter has its C extension (for ``token_scan``)."""
    probe = "import aoti_lint.screen._token_scan"
    found = subprocess.run([python, "-c", probe], capture_output=True, check=False)
    return found.returncode == 0


def aoti_lint_command(python: str = sys.executable) -> list[str]:
    script = Path(python).with_name("aoti-lint")
    return [str(script)] if script.exists() else [python, "-m", "aoti_lint"]


def bench_tree(
    tree: Tree, runs: int, bound: float, peers: bool, cache_root: Path, torchfix_bound: float, python: str
) -> None:
    print(f"\n{tree.name}: {tree.files} files, {tree.mbytes:.1f} MB")
    target = "."
    grep = ["grep", "-rlE", "|".join(map(re.escape, trigger_tokens())), "--include=*.py", "--include=*.pyi", target]
    subprocess.run(grep, cwd=tree.path, stdout=subprocess.DEVNULL, check=False)  # warm the page cache
    add = tree.measures.__setitem__
    add("grep", measure("grep -rlE (trigger tokens)", grep, tree.path, runs, bound))
    lint = [*aoti_lint_command(python), "--isolated", "-q", "-v", "--exit-zero"]
    check = lint_check(tree.files, tree.planted)
    fixing_copy = cache_root.parent / "fixing-copy"
    cache = cache_root / tree.name.replace(" ", "_")
    for jobs, jobs_label in ((["--jobs", "1"], "--jobs 1"), ([], "default jobs")):
        cold = [*lint, "--no-cache", *jobs, target]
        add(
            f"aoti-lint cold, {jobs_label}",
            measure(f"aoti-lint cold (--no-cache), {jobs_label}", cold, tree.path, runs, bound, check=check),
        )
        warm = [*lint, "--cache-dir", str(cache), *jobs, target]
        out_of_racy_window(tree.path)
        timed_run(warm, tree.path, bound * 4, check=check)  # fills the cache
        add(
            f"aoti-lint warm, {jobs_label}",
            measure(f"aoti-lint warm (cache filled), {jobs_label}", warm, tree.path, runs, bound, check=check),
        )
    if compiled_scanner(python):
        # As installed where no C compiler was found: stage one and the text stages' lexer in Python.
        add(
            "aoti-lint cold, default jobs, no C extension",
            measure(
                "aoti-lint cold, default jobs, no C extension",
                [*lint, "--no-cache", target],
                tree.path,
                runs,
                bound,
                env={"AOTI_LINT_NO_EXTENSIONS": "1"},
                check=check,
            ),
        )

    # The fix planner's cost: a fixing run, on a fresh copy of the tree each time (the copy is not timed).
    def fresh_copy() -> None:
        shutil.rmtree(fixing_copy, ignore_errors=True)
        shutil.copytree(tree.path, fixing_copy, symlinks=True)

    fresh_copy()
    add(
        FIXING,
        measure(
            "aoti-lint --fix --unsafe-fixes (a copy), cold",
            [*lint, "--no-cache", "--fix", "--unsafe-fixes", target],
            fixing_copy,
            runs,
            bound,
            check=lint_check(tree.files, tree.planted, fixed_in=fixing_copy),
            before=fresh_copy,
        ),
    )
    shutil.rmtree(fixing_copy, ignore_errors=True)
    # A file changed since the last run (a planted one, its finding kept): the run memo cannot answer, so this
    # is the file-by-file path (stamps, entries, the changed file linted) and the memo written anew.
    edits = iter(range(1_000_000))
    planted = tree.path / tree.planted[0].path
    original = planted.read_bytes()

    def edit() -> None:
        with open(planted, "a") as handle:
            handle.write(f"# edit {next(edits)}\n")
        out_of_racy_window(planted)

    try:
        add(
            "aoti-lint warm, one file edited",
            measure("aoti-lint warm, one file edited", warm, tree.path, runs, bound, check=check, before=edit),
        )
    finally:
        planted.write_bytes(original)  # the peers, and later runs, time the tree as it was
    if peers:
        # ruff, TorchFix and Fixit lint every file they read; they are timed as they are, unchecked.
        for label, command in peer_commands(target).items():
            peer_bound = torchfix_bound if label.startswith("torchfix") else bound
            add(label, measure(label, command, tree.path, runs, peer_bound))


def regular_install(work: Path) -> Path | None:
    """A fresh venv with aoti-lint installed from this repository as users install it (`pip install .`, not
    editable); its interpreter, or None when pip cannot build it here. The development venv's editable install
    imports its path finder (and pathlib) at every interpreter start, `python -c pass` included: about 9 ms that
    a regular install does not pay, which would flatter a ratio to `python -c pass`."""
    venv = work / "regular-install"
    base = getattr(sys, "_base_executable", sys.executable)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    try:
        subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", str(REPO)],
            check=True,
            capture_output=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"  no regular install ({exc}): the one-file rows run in this interpreter's environment only")
        return None
    return python


def single_file_runs(runs: int) -> int:
    """Runs of each one-file command: a run takes a tenth of a second, and on a shared machine its median needs more
    of them than a tree's to hold still (six runs gave 4.7x of `python -c pass` one day and 7.0x the next, for
    nearly the same code)."""
    return max(runs * 5, 5)


def bench_single_files(work: Path, runs: int, bound: float, peers: bool, regular: Path | None) -> Tree:
    """One file at a time, as pre-commit runs a hook on a small commit: process start included. Measured in a
    regular install (see ``regular_install``), and in this development environment for comparison."""
    root = work / "single"
    root.mkdir()
    (root / "clean.py").write_text(PLAIN.format(doc="No AOTI here.", cls="Block", func="run", width=64))
    (root / "hit.py").write_text(PLAIN.format(doc="Old AOTI.", cls="Block", func="run", width=64) + AOTI_FORMS[0])
    tree = Tree("one file (pre-commit)", root, 2, 0.0)
    print("\none file, as pre-commit runs it (PRE_COMMIT=1, process start included)")
    add = tree.measures.__setitem__
    env = {"PRE_COMMIT": "1"}
    hit = lint_check(1, (Plant("hit.py", "AOTI001", ""),))

    def clean(stdout: str, stderr: str) -> str | None:
        return None if stdout == "" and "debug: Checked 1 file" in stderr.splitlines() else "clean.py not checked"

    # As the hook runs (`entry: aoti-lint --force-exclude`): in a repository whose pyproject.toml configures other
    # tools and whose .gitignore is the common Python one, so the settings and the ignore files are read.
    hook_repo = work / "hook-repo"
    (hook_repo / ".git").mkdir(parents=True)
    (hook_repo / "src").mkdir()
    (hook_repo / "src" / "clean.py").write_text((root / "clean.py").read_text())
    (hook_repo / "pyproject.toml").write_text(HOOK_PYPROJECT)
    (hook_repo / ".gitignore").write_text(HOOK_GITIGNORE)
    setups = [("", sys.executable, aoti_lint_command())]
    if regular is not None:
        setups.insert(0, (REGULAR, str(regular), [str(regular.with_name("aoti-lint"))]))
    for suffix, python, command in setups:
        add("python -c pass" + suffix, measure("python -c pass" + suffix, [python, "-c", "pass"], root, runs, bound))
        lint = [*command, "-q", "-v", "--exit-zero"]
        timed_run([*lint, "--no-cache", "hit.py"], root, bound, env, hit)  # writes the bytecode of every module used
        add(
            "aoti-lint, no AOTI token" + suffix,
            measure("aoti-lint clean.py" + suffix, [*lint, "clean.py"], root, runs, bound, env, clean),
        )
        add(
            "aoti-lint, findings, cold" + suffix,
            measure(
                "aoti-lint hit.py --no-cache" + suffix, [*lint, "--no-cache", "hit.py"], root, runs, bound, env, hit
            ),
        )
        # The hook runs on every commit of a repository whose pyproject.toml is not new: the first run keeps its
        # verdict (``aoti_lint.run.pyproject_verdicts``), and the timed runs are the later ones.
        out_of_racy_window(hook_repo / "pyproject.toml")
        timed_run([*lint, "--force-exclude", "src/clean.py"], hook_repo, bound, env, clean)
        add(
            "aoti-lint, no AOTI token, as the hook runs it" + suffix,
            measure(
                "aoti-lint --force-exclude src/clean.py, in a repository" + suffix,
                [*lint, "--force-exclude", "src/clean.py"],
                hook_repo,
                runs,
                bound,
                env,
                clean,
            ),
        )
        out_of_racy_window(root)
        timed_run([*lint, "hit.py"], root, bound, env, hit)
        add(
            "aoti-lint, findings, warm" + suffix,
            measure("aoti-lint hit.py (cached)" + suffix, [*lint, "hit.py"], root, runs, bound, env, hit),
        )
        shutil.rmtree(root / ".aoti_lint_cache", ignore_errors=True)  # the next setup starts cold too
    if peers:
        for label, command in peer_commands("hit.py").items():
            add(f"{label}, findings", measure(f"{label} hit.py", command, root, runs, bound))
    return tree


HOOK_PYPROJECT = """[project]
name = "service"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["torch"]

[tool.ruff]
line-length = 100

[tool.pytest.ini_options]
testpaths = ["tests"]
"""
# The start of GitHub's Python .gitignore template.
HOOK_GITIGNORE = """# Byte-compiled / optimized / DLL files
__pycache__/
*.py[cod]
*$py.class
*.so
.Python
build/
develop-eggs/
dist/
downloads/
eggs/
.eggs/
lib/
lib64/
parts/
sdist/
var/
wheels/
share/python-wheels/
*.egg-info/
.installed.cfg
*.egg
MANIFEST
htmlcov/
.tox/
.nox/
.coverage
.coverage.*
.cache
nosetests.xml
coverage.xml
*.cover
*.py,cover
.hypothesis/
.pytest_cache/
docs/_build/
.ipynb_checkpoints
.env
.venv
env/
venv/
ENV/
.mypy_cache/
/site
"""


# One big file of each kind users feed aoti-lint, at two sizes: twice the size should cost twice the time. Each was
# quadratic once (a module's fixes, a workflow's jobs, a script binding one name again and again); tests count the
# work, these rows show the time. (kind, file name, one unit of it, units, what a run must print for n units.)
FLOW_UNIT = (
    "def build_{i}(model, x):\n    so = torch._export.aot_compile(model, (x,))\n"
    "    return torch._export.aot_load(so, 'cpu')\n\n\n"
)
JOB_UNIT = (
    '  job{i}:\n    env:\n      CUDA_LAUNCH_BLOCKING: "1"\n    steps:\n      - run: TORCH_COMPILE_DEBUG=1 pytest\n'
)
REBOUND_UNIT = "import torch\nso = torch._export.aot_compile(m{i}, (x,))\nrunner = torch._export.aot_load(so, 'cpu')\n"
BIG_FILES = [
    ("a module of {n} compile-and-load flows, `--diff`", "flows.py", "import torch\n\n\n", FLOW_UNIT, 150,
     ["--diff"], "Would fix {2n} errors"),
    ("a workflow of {n} jobs", "ci.yml", "jobs:\n", JOB_UNIT, 3000, [], "Found {2n} errors"),
    ("a script binding `so` and importing torch {n} times", "script.py", "", REBOUND_UNIT, 500, [],
     "Found {2n} errors"),
]  # fmt: skip


def bench_big_files(work: Path, runs: int, bound: float, python: str) -> Tree:
    """Each kind of big file at n and 2n units, cold (``--no-cache``), serially."""
    root = work / "big"
    root.mkdir()
    tree = Tree("one big file, at two sizes", root, 0, 0.0)
    print("\none big file, at two sizes")
    for label, name, head, unit, units, options, expected in BIG_FILES:
        for n in (units, 2 * units):
            directory = root / f"{name}-{n}"
            directory.mkdir()
            (directory / name).write_text(head + "".join(unit.format(i=i) for i in range(n)))
            want = expected.replace("{2n}", str(2 * n))

            def check(stdout: str, stderr: str, want: str = want) -> str | None:
                return None if want in stdout + stderr else f"the run did not print {want!r}"

            command = [*aoti_lint_command(python), "--no-cache", "--jobs", "1", "--exit-zero", *options, name]
            tree.measures[label.format(n=f"{n:,}")] = measure(label.format(n=n), command, directory, runs, bound,
                                                              check=check)  # fmt: skip
    return tree


def scaling(tree: Tree) -> list[str]:
    """The big files' table: each size's time, and the larger's over the smaller's."""
    lines = ["| file | median wall | median CPU | runs | peak RSS | time vs half the size |", "|" + " --- |" * 6]
    measures = list(tree.measures.items())
    for index, (label, item) in enumerate(measures):
        cpu = _seconds(statistics.median(item.cpu)) if item.cpu else ""
        growth = ratio(item, measures[index - 1][1]) if index % 2 else ""
        lines.append(
            f"| {label} | {item.shown()} | {cpu} | {len(item.times)} | {item.peak_kb / 1024:.0f} MiB | {growth} |"
        )
    return lines


# The label suffix of the one-file rows measured in the regular install; the targets are read on those.
REGULAR = " (regular install)"


def profile_cold(tree: Tree, work: Path, fix: bool = False) -> str:
    """cProfile of a cold serial run: the functions with the most time of their own; for a fixing run (on a copy of
    the tree), also aoti-lint's own functions with the most time in all they call."""
    import pstats

    out = work / ("fix.prof" if fix else "cold.prof")
    where_run = tree.path
    extra: list[str] = []
    if fix:
        where_run = work / "profile-copy"
        shutil.rmtree(where_run, ignore_errors=True)
        shutil.copytree(tree.path, where_run, symlinks=True)
        extra = ["--fix", "--unsafe-fixes"]
    command = [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "aoti_lint", "--isolated", "-q", "--no-cache"]
    subprocess.run(
        [*command, *extra, "--jobs", "1", "--exit-zero", "."], cwd=where_run, stdout=subprocess.DEVNULL, check=True
    )
    stats = pstats.Stats(str(out))
    total = stats.total_tt

    def where(filename: str, line: int, name: str) -> str:
        return f"`{name}` ({filename.split('site-packages/')[-1].split(str(REPO) + '/')[-1]}:{line})"

    lines = [f"Total {total:.2f} s under cProfile (which slows pure-Python code about 1.5x).", ""]
    lines += ["| own time | calls | function |", "| ---: | ---: | --- |"]
    for (filename, line, name), (_, calls, own, _cumulative, _) in sorted(
        stats.stats.items(), key=lambda item: -item[1][2]
    )[:15]:
        lines.append(f"| {own:.2f} s | {calls} | {where(filename, line, name)} |")
    if fix:
        ours = [
            item
            for item in stats.stats.items()
            if "/aoti_lint/" in item[0][0]
            and item[0][2] not in ("<module>", "<listcomp>", "<lambda>")
            # the command's own frames, above every stage
            and not item[0][0].endswith(tuple(f"/{name}.py" for name in ("cli", "lint", "runner", "disk", "fast_path")))
        ]
        lines += ["", "| cumulative time | calls | aoti-lint's function |", "| ---: | ---: | --- |"]
        for (filename, line, name), (_, calls, _own, cumulative, _) in sorted(ours, key=lambda item: -item[1][3])[:15]:
            lines.append(f"| {cumulative:.2f} s | {calls} | {where(filename, line, name)} |")
        shutil.rmtree(where_run, ignore_errors=True)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- the report


def machine(versions: dict[str, str]) -> list[str]:
    from importlib import metadata

    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.processor() or "?",
    )
    memory = next(
        (line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal")),
        "0",
    )

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    return [
        f"- CPU: {cpu}, {os.cpu_count()} cores (nproc); memory {int(memory) / 2**20:.1f} GiB",
        f"- {platform.platform()}; Python {platform.python_version()}",
        f"- aoti-lint {version('aoti-lint')}, libcst {version('libcst')}, torch {version('torch')} (tree a); "
        f"peers: ruff {versions.get('ruff', '?')}, TorchFix {versions.get('torchfix', '?')}, "
        f"Fixit {versions.get('fixit', '?')} (libcst {versions.get('libcst', '?')} in their environment)",
        f"- aoti-lint runs from {versions.get('install', '?')} in every row but the one-file rows marked as in the "
        "development venv; stage one's scanner and the lexer of the text stages: "
        + (
            "the C extension `aoti_lint.screen._token_scan`"
            if versions.get("scanner")
            else "Python (no C extension built)"
        ),
        f"- load average at start / end: {' / '.join(versions.get('load', []))}",
    ]


def ratio(a: Measure | None, b: Measure | None) -> str:
    if a is None or b is None or a.median is None:
        return "n/a"
    if b.over_bound is not None:
        return f"> {b.over_bound / a.median:.0f}x faster"
    if b.median is None:
        return "n/a"
    value = a.median / b.median
    if value >= 1:
        return f"{value:.1f}x"
    # A little under 1 (the hook's run as fast as the interpreter's start, within the noise) stays a ratio.
    return f"{value:.2f}x" if value >= 0.1 else f"1/{1 / value:.0f}"


def spread(item: Measure) -> str:
    """The fastest and the slowest of the runs: on a shared machine their median hides how far apart they were."""
    if len(item.times) < 2 or item.over_bound is not None:
        return ""
    return f"{_seconds(min(item.times))} to {_seconds(max(item.times))}"


def table(tree: Tree, floor: str) -> list[str]:
    base = tree.measures.get(floor)
    peers = [m for label, m in tree.measures.items() if label.startswith(("ruff", "torchfix", "fixit"))]
    header = f"| command | median wall | wall range | median CPU | runs | peak RSS | vs {floor} |" + "".join(
        f" vs {p.label.split()[0]} |" for p in peers
    )
    lines = [header, "|" + " --- |" * (7 + len(peers))]
    for label, item in tree.measures.items():
        cpu = _seconds(statistics.median(item.cpu)) if item.cpu else ""
        # A row of the regular install is compared with the same interpreter's start there.
        own = tree.measures.get(floor + REGULAR, base) if label.endswith(REGULAR) else base
        peak = f"{item.peak_kb / 1024:.0f} MiB"
        cells = [label, item.shown(), spread(item), cpu, str(len(item.times)), peak, ratio(item, own)]
        if label.startswith("aoti-lint"):
            cells += [ratio(item, peer) for peer in peers]
        else:
            cells += [""] * len(peers)
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def verdict(measure: Measure | None, reference: Measure | None, factor: float, faster: bool = False) -> str:
    if measure is None or reference is None or measure.median is None:
        return "not measured"
    if faster:  # measure must be `factor` times faster than reference
        if reference.over_bound is not None:
            got = reference.over_bound / measure.median
            return f"met (> {got:.0f}x)" if got >= factor else f"unknown (> {got:.0f}x; peer stopped at the bound)"
        if reference.median is None:
            return "not measured"
        got = reference.median / measure.median
        return f"met ({got:.0f}x)" if got >= factor else f"missed: {got:.1f}x faster, target {factor:.0f}x"
    if reference.median is None:
        return "not measured"
    got = measure.median / reference.median
    return (
        f"met ({got:.1f}x)" if got <= factor else f"missed: {got:.1f}x, target {factor:.0f}x ({got / factor:.1f}x over)"
    )


def edited(measures: dict[str, Measure]) -> str:
    return ratio(measures.get("aoti-lint warm, one file edited"), measures.get("grep"))


# What the profiles at the end show of the targets this design misses, printed when one is missed.
MISSED = [
    "Why a target is missed, as the profiles at the end show: a check of tree (a) spends its time in CPython's own "
    "`compile` (the `ast` parse of the thirty modules a rule still wants after the byte and text stages, which is "
    "most of its cost: torch's largest among them, which name a `.so` in strings and are read, as every module is, "
    "by the one flow reading for the migration plan; its other calls parse kernel snippets and literals), in "
    "importing aoti-lint's own modules (`exec`), in walking the parsed trees, and in reading and screening the "
    "tree's 49 MB; a fixing run parses, rewrites and checks again with libcst each file it fixes, so its cost grows "
    "with the files fixed (tree (b) holds some 400 files with findings), not with the tree. A cold run of one file "
    "with findings (c) spends most of its time importing aoti-lint's modules: of some 75 ms in the process, about "
    "30 ms go to `dataclasses` building the 68 classes of the findings, flow summaries and values the rules and the "
    "migration plan use; the warm run, which reads the file's findings from the cache, skips most.",
    "",
]


def targets(trees: dict[str, Tree]) -> list[str]:
    lines = []
    torch_tree, mono, single = trees.get("a"), trees.get("b"), trees.get("c")
    if torch_tree:
        m = torch_tree.measures
        cold = m["aoti-lint cold, default jobs"]
        cpu = statistics.median(m["aoti-lint cold, --jobs 1"].cpu) if m["aoti-lint cold, --jobs 1"].cpu else None
        colds = [item for label, item in m.items() if label.startswith("aoti-lint cold") and item.times]
        peak = max(item.peak_kb for item in colds) / 1024 if colds else None
        lines += [
            f"- (a) cold within 10x of grep: {verdict(cold, m['grep'], 10)}",
            "- (a) cold, --jobs 1, at most 8 s of CPU: "
            + ("not measured" if cpu is None else f"{'met' if cpu <= 8 else 'missed'} ({cpu:.1f} s)"),
            "- (a) cold, peak memory at most 100 MiB: "
            + ("not measured" if peak is None else f"{'met' if peak <= 100 else 'missed'} ({peak:.0f} MiB)"),
            f"- (a) cold 100x faster than TorchFix: {verdict(cold, m.get('torchfix --select ALL'), 100, faster=True)}",
            f"- (a) warm within 3x of grep: {verdict(m['aoti-lint warm, default jobs'], m['grep'], 3)} "
            f"(not a target: with one file edited since the last run, {edited(m)})",
            f"- (a) --fix --unsafe-fixes (on a copy) within 20x of grep: {verdict(m[FIXING], m['grep'], 20)}",
        ]
    if mono:
        m = mono.measures
        colds = [item for label, item in m.items() if label.startswith("aoti-lint cold") and item.times]
        peak = max(item.peak_kb for item in colds) / 1024 if colds else None
        lines += [
            f"- (b) cold within 10x of grep: {verdict(m['aoti-lint cold, default jobs'], m['grep'], 10)}",
            "- (b) cold, peak memory at most 100 MiB: "
            + ("not measured" if peak is None else f"{'met' if peak <= 100 else 'missed'} ({peak:.0f} MiB)"),
            f"- (b) warm within 3x of grep: {verdict(m['aoti-lint warm, default jobs'], m['grep'], 3)} "
            f"(not a target: with one file edited since the last run, {edited(m)})",
            f"- (b) --fix --unsafe-fixes (on a copy) within 20x of grep: {verdict(m[FIXING], m['grep'], 20)}",
        ]
    small = trees.get("b/4")
    if mono and small:
        for kind in ("cold", "warm"):
            big, little = (
                mono.measures[f"aoti-lint {kind}, default jobs"],
                small.measures[f"aoti-lint {kind}, default jobs"],
            )
            if big.median and little.median:
                lines.append(
                    f"- (b) {kind}: {small.files} -> {mono.files} files ({mono.files / small.files:.0f}x): time "
                    f"{big.median / little.median:.1f}x, peak RSS {little.peak_kb // 1024} -> {big.peak_kb // 1024} MiB"
                )
    if single:
        m = single.measures
        # As users run it: in a regular install where there is one (see regular_install).
        where = REGULAR if "python -c pass" + REGULAR in m else ""
        setting = "in a regular install" if where else "in the development venv (no regular install here)"
        start = m["python -c pass" + where]
        lines += [
            f"- (c) one file without AOTI token within 3x of `python -c pass`, {setting}: "
            f"{verdict(m['aoti-lint, no AOTI token' + where], m['python -c pass' + where], 3)}",
            "- (c) the same as the hook runs it (`--force-exclude`, in a repository with a pyproject.toml and a "
            ".gitignore, whose verdict an earlier run kept): "
            f"{verdict(m['aoti-lint, no AOTI token, as the hook runs it' + where], start, 3)}",
            f"- (c) one file with findings within 5x of `python -c pass`, {setting}: "
            f"{verdict(m['aoti-lint, findings, cold' + where], m['python -c pass' + where], 5)} cold, "
            f"{verdict(m['aoti-lint, findings, warm' + where], m['python -c pass' + where], 5)} cached",
        ]
        if where:
            lines.append(
                "- (c) the same in the development venv (editable install: every start, `python -c pass` too, "
                f"imports its path finder): {verdict(m['aoti-lint, no AOTI token'], m['python -c pass'], 3)} "
                f"without AOTI token, {verdict(m['aoti-lint, findings, cold'], m['python -c pass'], 5)} with "
                "findings, cold"
            )
    return lines


def stage_counts(key: str, tree: Tree) -> list[str]:
    """How many files (and MB) each prefilter stage lets through, counted in this process with aoti-lint's own
    stages; then those of them that libcst parses in a run that shows no fix edits (as the timed runs): none, since
    every rule and the flow summary read Python from ast (``AstRule``, ``rules/module_flow.py``)."""
    from aoti_lint.read.files import Candidate, discover
    from aoti_lint.read.source import PYTHON_KINDS
    from aoti_lint.rules.base import PythonRule
    from aoti_lint.run.ast_answer import needs_libcst
    from aoti_lint.run.disk import read_source
    from aoti_lint.run.prefilter import prefiltered, refine, refine_summaries
    from aoti_lint.run.ruleset import RuleSet
    from aoti_lint.settings.config import Settings

    ruleset = RuleSet(Settings(root=tree.path).with_enabled())
    counts = {"read": [0, 0], "bytes (stage one)": [0, 0], "text": [0, 0], "ast": [0, 0], "libcst": [0, 0]}
    for candidate in discover([tree.path], ruleset.settings):
        if not isinstance(candidate, Candidate):
            continue
        source = read_source(candidate, tree.path)
        if not hasattr(source, "prefilter_data"):
            continue
        size = len(source.data)

        def add(stage: str, size: int = size) -> None:
            counts[stage][0] += 1
            counts[stage][1] += size

        add("read")
        rules = [rule for rule in ruleset.for_file(source.path, source.kind) if rule.could_match(source.prefilter_data)]
        summaries = [rule for rule in ruleset.project_rules(source.kind) if rule.wants_summary(source.prefilter_data)]
        if not rules and not summaries:
            continue
        add("bytes (stage one)")
        if source.kind not in PYTHON_KINDS:
            add("text")
            add("ast")
            continue  # text rules: no libcst
        text = source.text
        python = [rule for rule in rules if issubclass(rule, PythonRule)]
        if [r for r in python if r.could_match_python(text)] or [r for r in summaries if r.wants_summary_python(text)]:
            add("text")
        if refine(text, python) or refine_summaries(text, summaries):
            add("ast")
            context = ruleset.context(source.path, source.kind)
            wanted = prefiltered(source, context)
            if wanted and needs_libcst(source, context, wanted, build_edits=False):
                add("libcst")
    cells = ", ".join(f"{stage} {n} ({size / 1e6:.1f} MB)" for stage, (n, size) in counts.items())
    return [f"- ({key}) files read / passing each stage: {cells}"]


def write_results(
    trees: dict[str, Tree],
    versions: dict[str, str],
    work_done: list[str],
    profile: str,
    fix_profile: str,
    args: argparse.Namespace,
) -> None:
    """The whole file, from this run's figures only: nothing is kept from an earlier run."""
    lines = [
        "# aoti-lint benchmark results",
        "",
        f"Written by `python benchmarks/run.py{' --quick' if args.quick else ''}` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: medians of up to {args.runs} runs "
        f"({single_file_runs(args.runs)} for the one-file rows), each a fresh "
        f"process; a command past {args.bound:.0f} s is stopped and shown as `> bound`. Peak RSS is that of the "
        "largest process of the command's tree (os.wait4). CPU is user + system time of the command and the "
        "children it waited for: on a shared machine it is steadier than the wall time, and the wall range (the "
        "fastest and the slowest run) shows how far apart the runs were. Every aoti-lint run was checked: it "
        "reported each finding planted in its tree (a fixable `.so` load with its compile, an `aot_compile` with an "
        "`output_path`, an "
        "environment debug switch, an Inductor debug config key, each in a folder of its own; the fixing run fixed "
        "the load) and checked every file the tree holds.",
        "",
        "## Machine",
        *machine(versions),
        "",
        "## Targets",
        *(goals := targets(trees)),
        "",
        *(MISSED if any(": missed" in line for line in goals) else []),
    ]
    for key, tree in trees.items():
        if key == "d":
            lines += [f"## ({key}) {tree.name}", "", *scaling(tree), ""]
            continue
        floor = "python -c pass" if key == "c" else "grep"
        lines += [f"## ({key}) {tree.name}: {tree.files} files, {tree.mbytes:.1f} MB", "", *table(tree, floor), ""]
        if key == "c" and "python -c pass" + REGULAR in tree.measures:
            lines += [
                "The rows marked (regular install) run in a fresh venv into which `pip install .` installed aoti-lint "
                "as users get it; their ratios are to `python -c pass` in that venv. The other rows run in the "
                "development venv, whose editable install imports its path finder (and pathlib) at every start, "
                "`python -c pass` included: it adds about 9 ms to both sides and flatters the ratio.",
                "",
            ]
    lines += [
        "## Where the work goes",
        "",
        "A file is parsed only once it passes every prefilter stage: its bytes (`Rule.could_match`), "
        "for Python its text (`could_match_python`), then one `ast` parse (`could_match_code`); see "
        "`aoti_lint/run/prefilter.py`. The text stage of the fake-kernel rules (AOTI301/AOTI302) parses only the "
        "top-level statements that can hold a kernel, told apart by a lexer of the strings "
        "(`aoti_lint/rules/kernel_regions.py`): torch's kernel modules are large and hold few kernels. Once parsed, "
        "a rule's question of what a name resolves to, and what value it holds, is answered by the module's "
        "semantic model, built in one traversal of its `ast` tree (`aoti_lint/model/semantic.py`); libcst's own "
        "scope analysis never runs. A name imported from another module of the project is followed into it "
        "(`aoti_lint/model/project_names.py`), each module read once per process. Node positions come from one "
        "code generation that counts characters "
        "(`aoti_lint/fixes/node_positions.py`), for the fixes libcst writes. Every rule reads Python from `ast` "
        "alone (the `AstRule`s in one traversal of the tree: `aoti_lint/rules/checker.py`; AOTI001/AOTI002 with "
        "the device-flow summary in one reading: `aoti_lint/rules/module_flow.py`); libcst parses a file only to "
        "build the edits of a fix of a deprecated call, never in a run that shows no fix edits, as the timed runs. "
        "A warm run opens no file whose stat (size, mtime, ctime, inode) is the one the cache recorded with its "
        "verdict (`aoti_lint/run/file_stats.py`, as ruff does): it stats the files, "
        "loads the entries of those with findings or project data, and counts every file as checked. When "
        "every file's stamp is the one an earlier run over the same files recorded, that run's memo answers "
        "alone (`aoti_lint/run/unchanged_run.py`), without importing the rules, the engine or the worker pool: the "
        "unchanged warm rows; the rows with one file edited go file by file. The one clean file is answered "
        "before any of that, by the entry point (`aoti_lint/entry_point.py`): named files that hold none of the "
        "words any rule needs, with the default settings (a pyproject.toml without aoti-lint settings is parsed "
        "once, its verdict then kept in the cache directory while its stat holds, "
        "`aoti_lint/run/pyproject_verdicts.py`; "
        "a file `--force-exclude` leaves out is left out by the full run's own reading, `aoti_lint/read/ignores.py`), "
        "are read after the check's own parser (argparse) read the command line, and get the output the full run "
        "would print; no module imports `typing` at run time. A fix shown or "
        "applied alone migrates its whole flow in the module; its edits are built call by call "
        "(`codemods/site_edits.py`), not by generating the module again per flow, so a module's fixes cost time "
        "linear in its calls: section (d). With more "
        "than one job, files go to the workers as soon as there is enough work for them, "
        "while the tree is still being read, and one set of workers serves every pass of a run "
        "(`aoti_lint/run/runner.py`); they are forked with the modules of the later stages imported. A run ends "
        "without the interpreter's teardown once its output is flushed (`entry_point.entry`). The classes "
        "are the standard library's dataclasses.",
        "",
        *work_done,
        "",
        "### Profile of a cold serial run on tree (a)",
        "",
        profile,
        "",
        "### Profile of a serial `--fix --unsafe-fixes` run on a copy of tree (a)",
        "",
        fix_profile,
        "",
    ]
    output = PEERS / "RESULTS-quick.md" if args.quick else RESULTS
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(lines))
    print(f"\nwrote {output}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="aoti-lint and grep only: one run, a small monorepo")
    parser.add_argument("--runs", type=int, help="runs per command (default 5; 1 with --quick)")
    parser.add_argument("--bound", type=float, help="seconds before a run is stopped (default 100; 300 with --quick)")
    parser.add_argument("--torchfix-bound", type=float, default=240.0, help="bound for TorchFix on tree (a)")
    parser.add_argument("--files", type=int, help="files in the generated monorepo (default 20000)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--no-peers", action="store_true", help="skip ruff, TorchFix and Fixit")
    args = parser.parse_args()
    args.runs = args.runs or (1 if args.quick else 5)
    args.bound = args.bound or (300.0 if args.quick else 100.0)
    args.files = args.files or (2000 if args.quick else 20000)
    peers = not (args.quick or args.no_peers)
    sys.path.insert(0, str(REPO))
    versions = install_peers() if peers else {}
    versions["load"] = [" ".join(f"{x:.2f}" for x in os.getloadavg())]
    work = Path(tempfile.mkdtemp(prefix="aoti-lint-bench-"))
    trees: dict[str, Tree] = {}
    try:
        torch_root = copy_torch(work)
        if torch_root is None:
            print("torch is not installed in this interpreter: tree (a) skipped")
        else:
            planted = plant(torch_root, "torch/utils/planted")
            trees["a"] = Tree("the installed torch package's sources", torch_root, *tree_stats(torch_root), planted)
        mono = generate_monorepo(work / "monorepo", args.files, args.seed)
        planted = plant(mono, "svc_00/planted")
        trees["b"] = Tree(f"generated monorepo (seed {args.seed})", mono, *tree_stats(mono), planted)
        if not args.quick:
            small = generate_monorepo(work / "monorepo_quarter", args.files // 4, args.seed)
            planted = plant(small, "svc_00/planted")
            trees["b/4"] = Tree("the same monorepo, a quarter of the files", small, *tree_stats(small), planted)
        # aoti-lint as users install it (not the development venv's editable install, whose path finder every
        # interpreter start imports), where pip can build it here.
        regular = regular_install(work)
        python = str(regular) if regular is not None else sys.executable
        versions["install"] = "a regular install (`pip install .`)" if regular is not None else "the development venv"
        versions["scanner"] = "yes" if compiled_scanner(python) else ""
        for key, tree in trees.items():
            # The quarter tree only shows how aoti-lint scales; the peers are compared on the full one.
            # TorchFix gets a longer bound on the torch tree: target (a) is stated against its time there.
            torchfix_bound = args.torchfix_bound if key == "a" else args.bound
            bench_tree(tree, args.runs, args.bound, peers and key != "b/4", work / "caches", torchfix_bound, python)
        trees["c"] = bench_single_files(work, single_file_runs(args.runs), args.bound, peers, regular)
        if not args.quick:
            trees["d"] = bench_big_files(work, args.runs, args.bound, python)
        profiled = "a" in trees and not args.quick
        profile = profile_cold(trees["a"], work) if profiled else "(not profiled in this run)"
        fix_profile = profile_cold(trees["a"], work, fix=True) if profiled else "(not profiled in this run)"
        work_done = [line for key, tree in trees.items() if key not in ("c", "d") for line in stage_counts(key, tree)]
        versions["load"].append(" ".join(f"{x:.2f}" for x in os.getloadavg()))
        write_results(trees, versions, work_done, profile, fix_profile, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
