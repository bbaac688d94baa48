"""Docs that can be followed as written: every fenced block of README.md and docs/*.md carries a marker, the
HTML comment `<!-- docs-test: KIND OPTIONS -->` on the line before its fence, and each block is run as its kind
says, in a temporary copy of examples/ (a git repository, as users' projects are).

Kinds:
- `shell`: each command line runs; `exit=0,1` the statuses allowed, `cwd=DIR`, `skip=CMD` leaves out
  `aoti-lint CMD ...` lines. `pip install` is not run, but what it installs must exist here; the README's test
  commands are compared with .ci/run and with pyproject's markers.
- `console`: `$ command` lines, each followed by exactly the output it prints; `exit=N`, `cwd=DIR`.
- `config` (a `[tool.aoti-lint]` table aoti-lint must accept), `ruff-config`, `github-workflow`, `gitlab-ci`,
  `pre-commit NAME`, `efm`, `ale`, `flycheck`: see their tests below.
- `no-run REASON`: needs compiled packages, or is not a command.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import CLI_CACHE_DIR, REPO

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
MARKER = re.compile(r"^<!-- docs-test: (?P<kind>[\w-]+)(?P<options>.*?) -->$")
FENCE = re.compile(r"^(?P<fence>```+)(?P<info>.*)$")
PIP_INSTALL = re.compile(r"^(?:python3? -m )?pip install (?P<specs>.+)$")
PROJECT_URL = "https://github.com/aoti-lint/aoti-lint"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    kind: str
    options: str
    info: str
    body: str

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"

    def option(self, name: str, default: str = "") -> str:
        found = re.search(rf"\b{name}=(\S+)", self.options)
        return found.group(1) if found else default


def _blocks(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    blocks, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        closing = next(i for i in range(index + 1, len(lines)) if lines[i].startswith(opening["fence"]))
        marker = MARKER.match(lines[index - 1]) if index else None
        kind, options = (marker["kind"], marker["options"].strip()) if marker else ("", "")
        body = "\n".join(lines[index + 1 : closing]) + "\n"
        blocks.append(Block(path, index + 1, kind, options, opening["info"].strip(), body))
        index = closing + 1
    return blocks


BLOCKS = [block for path in DOCS for block in _blocks(path)]


def blocks_of(kind: str) -> list[Block]:
    return [block for block in BLOCKS if block.kind == kind]


def the_block(kind: str, options: str = "") -> Block:
    (block,) = [block for block in blocks_of(kind) if block.options == options]
    return block


def test_every_block_is_marked():
    unmarked = [block.id for block in BLOCKS if not block.kind]
    assert unmarked == [], "mark each fenced block with <!-- docs-test: KIND --> (see this file's docstring)"
    known = {"shell", "console", "config", "ruff-config", "github-workflow", "gitlab-ci", "pre-commit", "efm"}
    known |= {"ale", "flycheck", "no-run"}
    assert {block.kind for block in BLOCKS} <= known
    assert all(block.options for block in blocks_of("no-run")), "say why a block is not run"


# -- the sandbox: a copy of examples/, as a user's checkout ---------------------------------------------------


@pytest.fixture
def sandbox(tmp_path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(REPO / "examples", root / "examples", ignore=shutil.ignore_patterns(".aoti_lint_cache"))
    # README's usage lines name `src/` and a crash log.
    shutil.copytree(root / "examples" / "legacy_project", root / "src")
    (root / "crash.log").write_text("RuntimeError: Incorrect device passed to aoti_runner_cpu\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def _env() -> dict[str, str]:
    """This tree's aoti-lint first on PATH, as after `pip install`; no format or cache settings leaking in."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AOTI_LINT_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["AOTI_LINT_CACHE_DIR"] = str(CLI_CACHE_DIR)
    return env


def _sh(command: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=_env(), input=stdin, capture_output=True, text=True, timeout=300
    )


def _check_install(specs: str) -> None:
    """`pip install X` is not run (it would fetch from PyPI); X must work from this repository: a path holding it (with
    its extras), its git URL pinned to a tag or commit, or a pin of one of its own dependencies (torch of the
    `validate` extra). Never its bare name or a version: aoti-lint is on no package registry."""
    extras = PYPROJECT["project"]["optional-dependencies"]
    pins = {dependency for group in extras.values() for dependency in group if "==" in dependency}
    for spec in shlex.split(specs):
        if spec in ("-e", "-q", "--quiet") or spec in pins:
            continue
        found = re.fullmatch(r"(?P<target>[^\[]+)(?:\[(?P<extras>[\w,-]+)\])?", spec)
        assert found, spec
        target = found["target"]
        assert set(filter(None, (found["extras"] or "").split(","))) <= set(extras), spec
        if target.startswith("aoti-lint @ ") or target.startswith("git+"):
            assert re.search(rf"git\+{re.escape(PROJECT_URL)}@\S+$", target), spec
        else:
            assert target != PYPROJECT["project"]["name"], f"{spec}: aoti-lint is on no package registry"
            assert (REPO / target / "pyproject.toml").is_file(), spec


# Every `pip install` the docs show, in a block of any kind or in the text: its arguments, quoted or not, up to a
# comment, a closing backtick or the line's end.
PIP_INSTALL_ANYWHERE = re.compile(r"pip install ((?:'[^'\n]*'|\"[^\"\n]*\"|[^`\n#'\"])+)")


def test_every_install_the_docs_show_works_from_this_repository():
    for path in [*DOCS, REPO / "CONTRIBUTING.md"]:
        text = path.read_text()
        assert not re.search(r"aoti-lint==", text), f"{path.name}: aoti-lint is on no package registry"
        for found in PIP_INSTALL_ANYWHERE.finditer(text):
            _check_install(found[1].split(" && ")[0].strip())


def _check_test_command(line: str, segment: str) -> None:
    """The README's test commands: the full one is what .ci/run runs; the fast one names declared markers."""
    declared = {marker.split(":")[0] for marker in PYPROJECT["tool"]["pytest"]["ini_options"]["markers"]}
    options = shlex.split(segment)[3:]
    if "-m" in options:
        expression = options[options.index("-m") + 1]
        assert set(re.findall(r"\w+", expression)) - {"not", "and", "or"} <= declared, expression
    else:
        assert line in (REPO / ".ci" / "run").read_text().splitlines(), line


def _commands(body: str) -> list[str]:
    """Command lines, without their trailing `# comment`s."""
    lines = [re.split(r"\s+#\s", line)[0].strip() for line in body.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


@pytest.mark.parametrize("block", blocks_of("shell"), ids=lambda block: block.id)
def test_shell_block(block, sandbox):
    allowed = {int(status) for status in block.option("exit", "0").split(",")}
    skip = block.option("skip")
    for line in _commands(block.body):
        if skip and line.startswith(f"aoti-lint {skip} "):
            continue
        for segment in (part.strip() for part in line.split("&&")):
            if installed := PIP_INSTALL.match(segment):
                _check_install(installed["specs"])
            elif segment.startswith("python3 -m pytest"):
                _check_test_command(line, segment)
            else:
                result = _sh(segment, cwd=sandbox / block.option("cwd", "."))
                assert result.returncode in allowed, f"{segment}\n{result.stdout}{result.stderr}"
                assert "Traceback" not in result.stderr and "bash:" not in result.stderr, result.stderr


@pytest.mark.parametrize("block", blocks_of("console"), ids=lambda block: block.id)
def test_console_block(block, sandbox):
    expected_status = int(block.option("exit", "0"))
    runs = re.split(r"^\$ ", block.body, flags=re.MULTILINE)[1:]
    assert runs, "a console block starts with `$ command`"
    for run in runs:
        command, _, shown = run.partition("\n")
        result = _sh(command, cwd=sandbox / block.option("cwd", "."))
        assert result.returncode == expected_status, result.stdout + result.stderr
        assert result.stdout == shown, f"$ {command}"


@pytest.mark.parametrize("block", blocks_of("config"), ids=lambda block: block.id)
def test_config_block_is_accepted(block, sandbox):
    project = sandbox / "examples" / "legacy_project"
    (project / "pyproject.toml").write_text(block.body)
    result = _sh("aoti-lint --quiet .", cwd=project)
    assert result.returncode == 1 and result.stderr == "", result.stderr  # the example's findings, no error


def test_ruff_config_keeps_ruff_from_calling_our_noqa_invalid(tmp_path):
    (block,) = blocks_of("ruff-config")
    (tmp_path / "pyproject.toml").write_text(block.body)
    (tmp_path / "a.py").write_text("import torch\n\nso = torch._export.aot_compile(m, (x,))  # noqa: AOTI001\n")
    without = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--select", "RUF100,RUF102", "a.py"],
                             cwd=tmp_path, capture_output=True, text=True)  # fmt: skip
    assert without.returncode == 1 and "RUF102" in without.stdout  # the block is needed...
    configured = subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "RUF100,RUF102", "a.py"],
                                cwd=tmp_path, capture_output=True, text=True)  # fmt: skip
    assert configured.returncode == 0, configured.stdout  # ...and enough


def _action_inputs() -> set[str]:
    return set(yaml.safe_load((REPO / "action.yml").read_text())["inputs"])


@pytest.mark.parametrize("block", blocks_of("github-workflow"), ids=lambda block: block.id)
def test_github_workflow_block(block, sandbox):
    workflow = yaml.safe_load(block.body)
    assert workflow["name"] and workflow[True]  # `on:` is YAML 1.1's true
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            uses = step.get("uses", "")
            if uses.startswith("aoti-lint/aoti-lint@"):
                assert set(step.get("with", {})) <= _action_inputs(), step
            if "run" in step:
                _run_ci_lines(step["run"], sandbox)


def _run_ci_lines(script: str, cwd: Path) -> None:
    for line in _commands(script):
        if installed := PIP_INSTALL.match(line):
            _check_install(installed["specs"])
            continue
        result = _sh(line, cwd=cwd)
        assert result.returncode in (0, 1), f"{line}\n{result.stderr}"
        assert result.stderr == "", result.stderr


def test_gitlab_block(sandbox):
    (block,) = blocks_of("gitlab-ci")
    job = yaml.safe_load(block.body)["aoti-lint"]
    _run_ci_lines("\n".join(job["script"]), sandbox)
    (report,) = job["artifacts"]["reports"]["codequality"].split()
    assert (sandbox / report).is_file()


# -- editors ----------------------------------------------------------------------------------------------------


def _errorformat_regex(errorformat: str) -> re.Pattern:
    """The few errorformat items the recipes use (Vim's `:help errorformat`), as a regex."""
    items = {"%.%#": ".*", "%l": r"(?P<line>\d+)", "%c": r"(?P<col>\d+)", "%m": "(?P<message>.+)", "%f": "(?P<f>.+?)"}
    return re.compile("".join(items.get(part, re.escape(part)) for part in re.split(r"(%\.%#|%\w)", errorformat)))


def _editor_argvs(file: str) -> dict[str, list[str]]:
    efm = yaml.safe_load(the_block("efm").body)["tools"]["aoti-lint"]
    ale = re.search(r"'command': '([^']+)'", the_block("ale").body)[1]
    flycheck = re.search(r":command \(([^)]*)\)", the_block("flycheck").body)[1]
    flycheck_argv = [f'"{file}"' if word == "source-original" else word for word in flycheck.split()]
    return {
        "efm": shlex.split(efm["lint-command"].replace("${INPUT}", file)),
        "ale": shlex.split(ale.replace("%s", file)),
        "flycheck": [word.strip('"') for word in flycheck_argv],
    }


def test_editor_recipes_run_one_command_line(tmp_path):
    argvs = _editor_argvs(str(tmp_path / "serve.py"))
    assert argvs["efm"] == argvs["ale"] == argvs["flycheck"]
    assert argvs["efm"][-1] == "-"


def test_efm_recipe_parses_what_the_command_prints(sandbox):
    efm = yaml.safe_load(the_block("efm").body)["tools"]["aoti-lint"]
    assert efm["lint-stdin"] is True and efm["lint-ignore-exit-code"] is True
    (pattern,) = (_errorformat_regex(f) for f in efm["lint-formats"])
    project = sandbox / "examples" / "legacy_project"
    source = project / "export_model.py"
    argv = _editor_argvs(str(source))["efm"]  # an editor passes the absolute path
    result = subprocess.run(argv, cwd=project, input=source.read_text(), capture_output=True, text=True, env=_env())
    assert result.returncode == 1, result.stderr
    parsed = [pattern.fullmatch(line) for line in result.stdout.splitlines()]
    assert all(parsed) and len(parsed) == 2, result.stdout
    lines = source.read_text().splitlines()
    for match in parsed:
        code = match["message"].split()[0]
        name = {"AOTI001": "aot_compile", "AOTI002": "aot_load"}[code]
        assert lines[int(match["line"]) - 1][int(match["col"]) - 1 :].startswith(f"torch._export.{name}")
    clean = subprocess.run(argv, cwd=project, input="import torch\n", capture_output=True, text=True, env=_env())
    assert (clean.returncode, clean.stdout) == (0, "")


def test_ale_recipe_names_the_buffer_as_seen_from_its_directory(sandbox):
    """ALE resolves the file name of each line against the buffer's directory, where the recipe runs aoti-lint."""
    block = the_block("ale").body
    assert "'cwd': '%s:h'" in block
    source = sandbox / "examples" / "legacy_project" / "serve.py"
    argv = _editor_argvs(str(source))["ale"]
    result = subprocess.run(
        argv, cwd=source.parent, input=source.read_text(), capture_output=True, text=True, env=_env()
    )
    assert result.returncode == 1, result.stderr
    # ALE's unix handler: `file:line:col: text`
    names = [re.match(r"([^:]+):(\d+):(\d+): ", line)[1] for line in result.stdout.splitlines()]
    assert names and all((source.parent / name).resolve() == source.resolve() for name in names)


def test_fix_from_the_editor_prints_the_fixed_buffer(sandbox):
    project = sandbox / "examples" / "legacy_project"
    source = (project / "export_model.py").read_text()
    result = _sh("aoti-lint check --fix --quiet --stdin-filename export_model.py -", cwd=project, stdin=source)
    assert result.returncode == 0, result.stderr
    assert "aoti_compile_and_package(" in result.stdout and "torch._export" not in result.stdout
    assert (project / "export_model.py").read_text() == source
    compile(result.stdout, "export_model.py", "exec")


# -- pre-commit: the three configurations of docs/pre-commit.md, as printed ---------------------------------


def test_local_recipes_match_the_manifest():
    (manifest,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    for name in ("local-python", "local-system"):
        (hook,) = yaml.safe_load(the_block("pre-commit", name).body)["repos"][0]["hooks"]
        for key in ("id", "name", "entry", "types_or", "files", "require_serial"):
            assert hook[key] == manifest[key], (name, key)


FINDING = "import torch\n\nso = torch._export.aot_compile(model, (x,))\n"


def _pre_commit_project(root: Path, config: str) -> Path:
    root.mkdir()
    (root / "a.py").write_text(FINDING)
    (root / "clean.py").write_text("import torch\n")
    (root / ".pre-commit-config.yaml").write_text(config)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    return root


def _pre_commit(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**_env(), "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    command = [sys.executable, "-m", "pre_commit", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _assert_hook_fails_on_the_finding(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(r"^aoti-lint\.+Failed$", result.stdout, re.MULTILINE), result.stdout
    assert [line.split(" ")[:2] for line in result.stdout.splitlines() if ": AOTI" in line] == [
        ["a.py:3:6:", "AOTI001"]
    ]


def test_local_system_recipe(tmp_path):
    """`language: system` runs the aoti-lint on PATH: nothing is installed, so this one is fast."""
    project = _pre_commit_project(tmp_path / "p", the_block("pre-commit", "local-system").body)
    result = _pre_commit("run", "--all-files", cwd=project, home=tmp_path / "home")
    _assert_hook_fails_on_the_finding(result)


@pytest.fixture(scope="session")
def head_clone(tmp_path_factory) -> tuple[Path, str]:
    """A clone of this repository at HEAD: what pre-commit or pip would fetch from GitHub."""
    clone = tmp_path_factory.mktemp("clone") / "aoti-lint"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True)
    return clone, head.stdout.strip()


def test_remote_recipe_after_autoupdate(tmp_path, head_clone, pre_commit_home):
    clone, head = head_clone
    config = the_block("pre-commit", "remote").body.replace(PROJECT_URL, str(clone))
    project = _pre_commit_project(tmp_path / "p", config)
    updated = _pre_commit("autoupdate", "--repo", str(clone), cwd=project, home=pre_commit_home)
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert f"rev: {head}" in (project / ".pre-commit-config.yaml").read_text()  # no tag yet: the newest commit
    _assert_hook_fails_on_the_finding(_pre_commit("run", "--all-files", cwd=project, home=pre_commit_home))


def test_local_python_recipe_pinned_to_a_commit(tmp_path, head_clone, pre_commit_home):
    clone, head = head_clone
    config = the_block("pre-commit", "local-python").body
    config = config.replace(PROJECT_URL, f"file://{clone}").replace("<commit-sha>", head)
    project = _pre_commit_project(tmp_path / "p", config)
    _assert_hook_fails_on_the_finding(_pre_commit("run", "--all-files", cwd=project, home=pre_commit_home))
