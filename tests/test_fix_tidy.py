"""Fixes leave code as a person would (no empty containers, unused imports, blank-line runs), and --diff says
what it would fix and what --unsafe-fixes would add. Through the CLI."""

from __future__ import annotations

import textwrap

UNSAFE_ONLY = 'import torch\n\ncompiled = torch.compile(model, options={"trace.enabled": True})\n'
SAFE_AND_UNSAFE = UNSAFE_ONLY + "so = torch._export.aot_compile(model, (x,))\n"


def test_diff_with_only_unsafe_fixes_says_how_many_are_hidden(cli, tmp_path):
    (tmp_path / "m.py").write_text(UNSAFE_ONLY)
    result = cli("--isolated", "--diff", "m.py", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == "No errors would be fixed (1 fix available with `--unsafe-fixes`).\n"
    assert (tmp_path / "m.py").read_text() == UNSAFE_ONLY
    # What `check` says about the same file, in its words.
    assert (
        "1 hidden fix can be enabled with the `--fix --unsafe-fixes` option."
        in cli("--isolated", "m.py", cwd=tmp_path).stdout
    )


def test_diff_with_safe_and_unsafe_fixes(cli, tmp_path):
    (tmp_path / "m.py").write_text(SAFE_AND_UNSAFE)
    result = cli("--isolated", "--diff", "m.py", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("--- a/m.py\n+++ b/m.py\n")
    assert result.stderr == "Would fix 1 error (1 additional fix available with `--unsafe-fixes`).\n"
    shown = cli("--isolated", "--diff", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert shown.stderr == "Would fix 2 errors.\n"
    assert cli("--isolated", "--diff", "--quiet", "m.py", cwd=tmp_path).stderr == ""


def fix(cli, tmp_path, code: str, name: str = "m.py") -> str:
    target = tmp_path / name
    target.write_text(textwrap.dedent(code).lstrip("\n"))
    result = cli("--isolated", "--fix", "--unsafe-fixes", "--select", "AOTI201,AOTI202", name, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return target.read_text()


def test_no_empty_config_dict_is_left(cli, tmp_path):
    fixed = fix(
        cli,
        tmp_path,
        """
        import torch

        compiled = torch.compile(model, options={"trace.enabled": True})
        torch._inductor.aoti_compile_and_package(ep, inductor_configs={"debug": True, "nan_asserts": True})
        torch._inductor.aoti_compile_and_package(ep, inductor_configs={"debug": True, "max_autotune": True})
        """,
    )
    assert fixed == (
        "import torch\n\n"
        "compiled = torch.compile(model)\n"
        "torch._inductor.aoti_compile_and_package(ep)\n"
        'torch._inductor.aoti_compile_and_package(ep, inductor_configs={"max_autotune": True})\n'
    )


def test_no_env_that_only_copies_the_environment(cli, tmp_path):
    fixed = fix(
        cli,
        tmp_path,
        """
        import os
        import subprocess

        subprocess.run(cmd, env={**os.environ, "CUDA_LAUNCH_BLOCKING": "1", "TORCH_LOGS": "+dynamo"})
        subprocess.run(cmd, env=dict(os.environ, CUDA_LAUNCH_BLOCKING="1"), check=True)
        subprocess.run(cmd, env={"TORCH_LOGS": "+dynamo", **os.environ})
        subprocess.run(cmd, env={**os.environ, "CUDA_LAUNCH_BLOCKING": "1", "HOME": "/tmp"})
        subprocess.run(cmd, env={"CUDA_LAUNCH_BLOCKING": "1"})
        """,
    )
    assert fixed == (
        "import os\nimport subprocess\n\n"
        "subprocess.run(cmd)\n"
        "subprocess.run(cmd, check=True)\n"
        "subprocess.run(cmd)\n"
        'subprocess.run(cmd, env={**os.environ, "HOME": "/tmp"})\n'
        # An environment of exactly one variable stays one of none: dropping `env=` would hand the child ours.
        "subprocess.run(cmd, env={})\n"
    )


def test_a_patch_emptied_takes_its_decorator_or_with_along(cli, tmp_path):
    fixed = fix(
        cli,
        tmp_path,
        """
        import torch
        from torch._inductor import config


        @config.patch(debug_index_asserts=True, nan_asserts=True)
        def build(ep):
            with config.patch({"triton.debug_sync_kernel": True}):
                # compile it
                path = torch._inductor.aoti_compile_and_package(ep)

                print(path)
            with config.patch("debug", True): torch._inductor.aoti_compile_and_package(ep)
            with config.patch(debug=True, max_autotune=True):
                return torch._inductor.aoti_compile_and_package(ep)
        """,
    )
    assert fixed == (
        "import torch\nfrom torch._inductor import config\n\n\n"
        "def build(ep):\n"
        "    # compile it\n"
        "    path = torch._inductor.aoti_compile_and_package(ep)\n"
        "\n"
        "    print(path)\n"
        "    torch._inductor.aoti_compile_and_package(ep)\n"
        "    with config.patch(max_autotune=True):\n"
        "        return torch._inductor.aoti_compile_and_package(ep)\n"
    )


def test_no_fix_where_the_emptied_call_cannot_go(cli, tmp_path):
    code = textwrap.dedent(
        '''\
        import os
        from torch._inductor import config

        with config.patch(debug=True) as patched:
            run()
        with config.patch(debug=True):
            doc = """a string
        over lines"""
        patcher = (config.patch(nan_asserts=True), 1)
        done = os.environ.update({"CUDA_LAUNCH_BLOCKING": "1"}) or True
        '''
    )
    (tmp_path / "m.py").write_text(code)
    result = cli("--isolated", "--fix", "--unsafe-fixes", "--select", "AOTI201,AOTI202", "m.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "Found 4 errors." in result.stdout
    assert (tmp_path / "m.py").read_text() == code


def test_imports_left_unused_by_the_fix_go(cli, tmp_path):
    fixed = fix(
        cli,
        tmp_path,
        """
        import os
        import torch._inductor.config
        import torch._inductor.config as cfg
        from torch._inductor import config

        os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
        cfg.nan_asserts = True
        config.debug = True
        torch._inductor.config.trace.enabled = True
        """,
    )
    # A bare `import torch._inductor.config` also binds `torch`: it stays.
    assert fixed == "import torch._inductor.config\n"
    fixed = fix(
        cli,
        tmp_path,
        """
        import os
        from torch._inductor import config as inductor_config

        os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
        inductor_config.debug = True
        inductor_config.max_autotune = True
        print(os.getcwd())
        """,
    )
    assert fixed == (
        "import os\nfrom torch._inductor import config as inductor_config\n\n"
        "inductor_config.max_autotune = True\nprint(os.getcwd())\n"
    )


def test_removed_statements_leave_no_run_of_blank_lines(cli, tmp_path):
    fixed = fix(
        cli,
        tmp_path,
        """
        import os

        os.environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"


        def build():
            os.environ["CUDA_LAUNCH_BLOCKING"] = "1"

            return 1


        os.environ["TORCH_LOGS"] = "+dynamo"
        os.environ["TORCH_SHOW_CPP_STACKTRACES"] = "1"
        os.environ["TORCH_USE_CUDA_DSA"] = "1"


        def serve():
            x = 1

            os.environ["CUDA_LAUNCH_BLOCKING"] = "1"

            return x + len(os.sep)

        os.environ["CUDA_LAUNCH_BLOCKING"] = "1"

        """,
    )
    assert fixed == (
        "import os\n\n\ndef build():\n    return 1\n\n\ndef serve():\n    x = 1\n\n    return x + len(os.sep)\n"
    )


def test_removing_the_old_import_opens_no_block_with_a_blank_line(cli, tmp_path):
    target = tmp_path / "m.py"
    target.write_text(
        textwrap.dedent(
            """\
            import torch


            def serve(path):
                import torch._export

                return torch._export.aot_load("serve.pt2", "cpu")


            class Server:
                def load(self, path):
                    from torch._export import aot_load

                    return aot_load("load.pt2", "cpu")
            """
        )
    )
    result = cli("--isolated", "--fix", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.read_text() == (
        "import torch\n\n\n"
        "def serve(path):\n"
        '    return torch._inductor.aoti_load_package("serve.pt2")\n\n\n'
        "class Server:\n"
        "    def load(self, path):\n"
        '        return torch._inductor.aoti_load_package("load.pt2")\n'
    )


def test_unwrapped_with_keeps_windows_line_ends(cli, tmp_path):
    code = "from torch._inductor import config\r\n\r\nwith config.patch(debug=True):\r\n    build()\r\n"
    (tmp_path / "m.py").write_bytes(code.encode())
    result = cli("--isolated", "--fix", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "m.py").read_bytes() == b"build()\r\n"


def test_tidy_fixes_are_idempotent(cli, tmp_path):
    code = """
        import os
        import subprocess
        from torch._inductor import config

        subprocess.run(cmd, env={**os.environ, "CUDA_LAUNCH_BLOCKING": "1"})
        with config.patch(debug=True):
            build()
        """
    fixed = fix(cli, tmp_path, code)
    assert fixed == "import subprocess\n\nsubprocess.run(cmd)\nbuild()\n"
    again = cli("--isolated", "--diff", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, "")


def test_an_import_the_fixed_code_still_spells_stays():
    """An import goes only when the name it binds is spelled nowhere else, in the code or in a string (`__all__`,
    a string annotation): a name still spelled keeps its import, even where only a local of that name reads it."""
    from aoti_lint.fixes.unused_imports import drop_unused

    wanted = lambda module, name, _: module == "os"  # noqa: E731
    still_used = "import os\n\n" + "".join(f"def f{i}():\n    return os.getcwd()\n\n\n" for i in range(300))
    assert drop_unused(still_used, wanted) == still_used
    shadowed = "import os\n\n\ndef f(os):\n    return os\n"
    assert drop_unused(shadowed, wanted) == shadowed
    exported = 'from os import environ\n\n__all__ = ["environ"]\n'
    assert drop_unused(exported, wanted) == exported
    assert drop_unused("import os\nimport sys\n\nprint(sys.argv)\n", wanted) == "import sys\n\nprint(sys.argv)\n"
    assert drop_unused("import sys, os\n\nprint(sys.argv)\n", wanted) == "import sys\n\nprint(sys.argv)\n"
    assert drop_unused("from os import (\n    getcwd,\n    environ,\n)\n\ngetcwd()\n", wanted) == (
        "from os import (\n    getcwd,\n)\n\ngetcwd()\n"
    )
    assert drop_unused("if x:\n    import os\nelse:\n    pass\n", wanted) == "if x:\n    pass\nelse:\n    pass\n"
