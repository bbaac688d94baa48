"""The child process of ``aoti-lint validate``: the only code of aoti-lint that imports torch and runs a package.

Run as a script (``python child.py REQUEST.json``) by the parent with the same interpreter, so that a segfault,
abort or hang in the package's native code ends this process, never the tool. Self-contained on purpose: it
imports nothing from aoti_lint. It writes its state to the result file after every step (atomically), so the
parent knows what was running when the process died.

Modes: ``probe`` reports what this host offers (torch build, devices, CPU ISA); ``run`` loads the package, feeds
inputs (a file saved with ``torch.save``, or a reference program's example inputs and, with ``edges``, inputs at
the edges of its dynamic dimensions, or inputs generated from the package's input checks), compares with the
reference run eagerly (or with the baseline's outputs) and looks for NaN/Inf; ``baseline`` runs the legacy ``.so``
(``torch._export.aot_load``) on the same inputs and saves them with its outputs for the ``run`` child. Inputs the
package's input checks (read by the parent from its wrapper) refuse are recorded and never fed to native code.
"""

from __future__ import annotations

import faulthandler
import json
import os
import platform
import sys
import traceback
from typing import Any

# Run as a script, this folder is not on sys.path under `python -P` (PYTHONSAFEPATH): the sibling is found by path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import child_inputs  # the child's own helper module, not an aoti_lint import


class State:
    def __init__(self, path: str) -> None:
        self.path = path
        self.data: dict = {"current": "starting", "cases": []}

    def save(self, **changes) -> None:
        self.data.update(changes)
        partial = self.path + ".partial"
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump(self.data, handle)
        os.replace(partial, self.path)


def main(argv: list[str]) -> int:
    faulthandler.enable()
    with open(argv[1], encoding="utf-8") as handle:
        request = json.load(handle)
    state = State(request["result"])
    state.save(current="importing torch")
    try:
        import torch  # noqa: F401
    except Exception as exc:
        state.save(current="done", torch_error=f"{type(exc).__name__}: {exc}")
        return 0
    if request["mode"] == "probe":
        state.save(current="done", host=probe(request["device_type"]))
        return 0
    try:
        if request["mode"] == "baseline":
            run_baseline(request, state)
        else:
            run(request, state)
    except Exception as exc:
        traceback.print_exc()
        # "current" stays: it names the step that failed.
        state.save(error=f"{type(exc).__name__}: {exc}")
        return 1
    state.save(current="done")
    return 0


def probe(device_type: str) -> dict:
    import torch

    host: dict[str, Any] = {
        "torch": torch.__version__,
        "cuda_build": torch.version.cuda,
        "hip_build": torch.version.hip,
        "platform": sys.platform,
        "machine": platform.machine(),
        "cpu_isa_flags": _cpu_isa_flags(),
        "device_type": device_type,
        "device_module": False,
        "device_available": device_type == "cpu",
        "device_count": 1 if device_type == "cpu" else 0,
        "compute_capabilities": [],
    }
    if device_type == "cpu":
        return host
    module = getattr(torch, device_type, None)
    if module is None or not hasattr(module, "is_available"):
        return host
    host["device_module"] = True
    try:
        host["device_available"] = bool(module.is_available())
        host["device_count"] = int(module.device_count()) if host["device_available"] else 0
        if device_type == "cuda" and host["device_available"]:
            host["compute_capabilities"] = [_cuda_capability(i) for i in range(host["device_count"])]
    except Exception as exc:
        host["device_error"] = f"{type(exc).__name__}: {exc}"
    return host


def _cuda_capability(index: int) -> str:
    # The same form as AOTI_COMPUTE_CAPABILITY (torch/_dynamo/device_interface.py get_compute_capability).
    import torch

    if torch.version.hip is None:
        major, minor = torch.cuda.get_device_capability(index)
        return str(major * 10 + minor)
    return torch.cuda.get_device_properties(index).gcnArchName.split(":", 1)[0]


def _cpu_isa_flags() -> list[str] | None:
    """x86 ISA flags as AOTI_CPU_ISA spells them (lower case), from the CPU itself; None where unknown."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    try:
        from torch._inductor.cpu_vec_isa import x86_isa_checker

        return list(x86_isa_checker())
    except Exception:
        return None


def run(request: dict, state: State) -> None:
    import torch
    from torch.utils._pytree import tree_map

    reference = None
    if request.get("reference"):
        state.save(current="loading the reference program")
        reference = torch.export.load(request["reference"])
    state.save(current="preparing inputs")
    baseline = None
    if request.get("baseline_file"):
        # The baseline child ran the old .so on these cases: the same inputs, its outputs to compare with.
        baseline = torch.load(request["baseline_file"], weights_only=True)
        cases = [(name, tuple(args), dict(kwargs)) for name, args, kwargs in baseline["cases"]]
    else:
        cases = _cases(request, reference, state)
        if cases is None:
            return
        cases = _checked(cases, request, reference, state)
    if not cases:
        return

    state.save(current="loading the package")
    import torch._inductor

    index = request["device_index"]
    model = torch._inductor.aoti_load_package(request["package"], device_index=index)
    state.save(loaded=True)
    device = _device(request)

    def to_device(value):
        return value.detach().to(device).clone() if isinstance(value, torch.Tensor) else value

    expected_module = reference.module() if reference is not None else None
    reference_device = _reference_device(reference)

    def to_reference_device(value):
        value = value.detach().clone() if isinstance(value, torch.Tensor) else value
        return value.to(reference_device) if isinstance(value, torch.Tensor) and reference_device else value

    for number, (name, args, kwargs) in enumerate(cases):
        result = _case_result(state, name, args, kwargs)
        state.save(current=f"running the package on {name}")
        try:
            # The compiled model steals its input tensors: give it copies.
            output = model(*tree_map(to_device, args), **tree_map(to_device, kwargs))
        except Exception as exc:
            result.update(status="error", message=f"{type(exc).__name__}: {exc}")
            traceback.print_exc()
            state.save()
            continue
        nonfinite = _nonfinite(output)
        if baseline is not None:
            old_output = baseline["outputs"][number]
            result["differences"] = _differences(output, old_output)
            mismatch = _compare(output, old_output, request.get("rtol"), request.get("atol"))
            if mismatch:
                result.update(status="baseline mismatch", message=mismatch)
        expected = None
        if expected_module is not None:
            state.save(current=f"running the reference program on {name}")
            try:
                expected = expected_module(
                    *tree_map(to_reference_device, args), **tree_map(to_reference_device, kwargs)
                )
            except Exception as exc:
                # Typically the program's own input guards: the package accepted inputs its program rejects.
                result.update(status="error", message=f"the reference program failed: {type(exc).__name__}: {exc}")
                traceback.print_exc()
                state.save()
                continue
            mismatch = _compare(output, expected, request.get("rtol"), request.get("atol"))
            if mismatch:
                result.update(status="mismatch", message=mismatch)
        if nonfinite:
            reference_nonfinite = _nonfinite(expected) if expected is not None else []
            result["nonfinite"] = nonfinite
            result["reference_nonfinite"] = reference_nonfinite
            if result["status"] == "ok":
                result.update(status="nonfinite", message="; ".join(nonfinite))
        state.save()


def _device(request: dict):
    import torch

    index = request["device_index"]
    return torch.device(request["device_type"]) if index < 0 else torch.device(request["device_type"], index)


def _case_result(state: State, name: str, args, kwargs) -> dict:
    result = {"name": name, "shapes": _shapes((args, kwargs)), "status": "ok", "message": ""}
    state.data["cases"].append(result)
    return result


def run_baseline(request: dict, state: State) -> None:
    """Run the legacy .so (torch._export.aot_load) on the cases, and save cases and outputs for the package run."""
    import torch
    from torch.utils._pytree import tree_map

    reference = None
    if request.get("reference"):
        state.save(current="loading the reference program")
        reference = torch.export.load(request["reference"])
    state.save(current="preparing inputs")
    cases = _cases(request, reference, state)
    if cases is None:
        return
    cases = _checked(cases, request, reference, state)
    if not cases:
        return
    state.save(current="loading the baseline .so")
    device = _device(request)
    # The deprecated API logs its deprecation banner here (logging, not warnings): expected, not an error.
    model = torch._export.aot_load(request["baseline"], str(device))
    state.save(loaded=True)

    def to_device(value):
        return value.detach().to(device).clone() if isinstance(value, torch.Tensor) else value

    def to_cpu(value):
        return value.detach().cpu() if isinstance(value, torch.Tensor) else value

    kept, outputs = [], []
    for name, args, kwargs in cases:
        result = _case_result(state, name, args, kwargs)
        state.save(current=f"running the baseline on {name}")
        try:
            output = model(*tree_map(to_device, args), **tree_map(to_device, kwargs))
        except Exception as exc:
            result.update(status="error", message=f"{type(exc).__name__}: {exc}")
            traceback.print_exc()
            state.save()
            continue
        kept.append((name, tree_map(to_cpu, args), tree_map(to_cpu, kwargs)))
        outputs.append(tree_map(to_cpu, output))
        state.save()
    state.save(current="saving the baseline outputs")
    torch.save({"cases": kept, "outputs": outputs}, request["baseline_file"])


def _checked(cases, request: dict, reference, state: State):
    """The cases the package's input checks accept; the others are recorded, with what differs, and not run.

    A given or example input the package refuses is an error ("refused"); an edge the reference allows but the
    package refuses (export compiles Dim(min=1) as >= 2) is skipped ("skipped").
    """
    specs = request.get("input_specs") or []
    if not specs:
        return cases
    names = child_inputs.user_input_names(reference)
    if len(names) != len(specs):
        # The program's inputs do not map one-to-one onto the package's: no names rather than wrong ones.
        names = []
    kept = []
    for name, args, kwargs in cases:
        problems = child_inputs.input_problems(args, kwargs, specs, names)
        if not problems:
            kept.append((name, args, kwargs))
            continue
        status = "skipped" if name.startswith("edge ") else "refused"
        state.data["cases"].append(
            {
                "name": name,
                "shapes": _shapes((args, kwargs)),
                "status": status,
                "message": "; ".join(p["message"] for p in problems),
                "problems": problems,
            }
        )
        state.save()
    return kept


def _reference_device(reference):
    """The device the reference program was exported on (that of its example inputs), or None when unknown."""
    import torch
    from torch.utils._pytree import tree_leaves

    if reference is None or reference.example_inputs is None:
        return None
    return next((t.device for t in tree_leaves(reference.example_inputs) if isinstance(t, torch.Tensor)), None)


def _cases(request: dict, reference, state: State):
    """(name, args, kwargs) triples to run; None (with the reason saved) when there is nothing valid to run."""
    import torch

    if request.get("inputs"):
        loaded = torch.load(request["inputs"], weights_only=True)
        args, kwargs = _as_args_kwargs(loaded)
        if args is None:
            state.save(input_error=f"{request['inputs']}: expected a tensor, tuple, list, dict or (args, kwargs)")
            return None
        cases = [("the given inputs", args, kwargs)]
    elif reference is not None:
        if reference.example_inputs is None:
            state.save(input_error=f"{request['reference']}: the program has no example inputs; pass --inputs")
            return None
        args, kwargs = reference.example_inputs
        cases = [("the example inputs", tuple(args), dict(kwargs))]
    elif request.get("input_specs"):
        args = child_inputs.generated_inputs(request["input_specs"], request.get("seed", 0))
        if args is None:
            state.save(
                input_error="the package's input checks do not give every input's dtype and shape: pass --inputs"
            )
            return None
        cases = [(f"inputs generated from the package's input checks (seed {request.get('seed', 0)})", args, {})]
    else:
        return []
    if request.get("edges") and reference is not None:
        edges, note = child_inputs.edge_cases(reference, cases[0][1], cases[0][2])
        state.save(edges_note=note)
        cases.extend(edges)
    return cases


def _as_args_kwargs(value):
    import torch

    if isinstance(value, torch.Tensor):
        return (value,), {}
    if isinstance(value, dict):
        return (), dict(value)
    if isinstance(value, (tuple, list)):
        if len(value) == 2 and isinstance(value[0], (tuple, list)) and isinstance(value[1], dict):
            return tuple(value[0]), dict(value[1])
        return tuple(value), {}
    return None, None


def _shapes(value) -> list:
    import torch
    from torch.utils._pytree import tree_leaves

    return [list(t.shape) for t in tree_leaves(value) if isinstance(t, torch.Tensor)]


def _nonfinite(value) -> list[str]:
    import torch
    from torch.utils._pytree import tree_leaves

    found = []
    for position, tensor in enumerate(tree_leaves(value)):
        if isinstance(tensor, torch.Tensor) and (tensor.is_floating_point() or tensor.is_complex()):
            nans = int(torch.isnan(tensor).sum())
            infs = int(torch.isinf(tensor).sum())
            if nans or infs:
                found.append(f"output {position}: {nans} NaN, {infs} Inf")
    return found


def _differences(actual, expected) -> list[dict]:
    """Per output: the largest absolute and relative difference, where both sides are tensors of one shape
    (NaN/Inf are reported apart and left out here)."""
    import torch
    from torch.utils._pytree import tree_leaves

    found = []
    for position, (new, old) in enumerate(zip(tree_leaves(actual), tree_leaves(expected), strict=False)):
        if not isinstance(new, torch.Tensor) or not isinstance(old, torch.Tensor) or new.shape != old.shape:
            continue
        new, old = new.detach().cpu().double(), old.detach().cpu().double()
        finite = torch.isfinite(new) & torch.isfinite(old)
        delta = (new - old).abs().where(finite, torch.zeros_like(new))
        # Relative to the baseline where it is non-zero (assert_close's relative difference is inf at a zero).
        relative = (delta / old.abs()).where(old != 0, torch.zeros_like(old))
        found.append(
            {
                "output": position,
                "shape": list(new.shape),
                "max_abs": float(delta.max()) if delta.numel() else 0.0,
                "max_rel": float(relative.max()) if relative.numel() else 0.0,
            }
        )
    return found


def _compare(actual, expected, rtol, atol) -> str:
    import torch
    from torch.utils._pytree import tree_map

    def to_cpu(value):
        return value.detach().cpu() if isinstance(value, torch.Tensor) else value

    try:
        # NaN/Inf are reported on their own; here only the numbers are compared.
        torch.testing.assert_close(
            tree_map(to_cpu, actual), tree_map(to_cpu, expected), rtol=rtol, atol=atol, equal_nan=True
        )
    except AssertionError as exc:
        return str(exc).strip()
    return ""


if __name__ == "__main__":
    sys.exit(main(sys.argv))
