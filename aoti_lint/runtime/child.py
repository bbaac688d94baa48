"""The child process of ``aoti-lint validate``: the only code of aoti-lint that imports torch and runs a package.

Run as a script (``python child.py REQUEST.json``) by the parent with the same interpreter, so that a segfault,
abort or hang in the package's native code ends this process, never the tool. Self-contained on purpose: it
imports nothing from aoti_lint. It writes its state to the result file after every step (atomically), so the
parent knows what was running when the process died.

Modes: ``probe`` reports what this host offers (torch build, devices, CPU ISA); ``run`` loads the package, feeds
inputs (a file saved with ``torch.save``, or a reference program's example inputs and, with ``edges``, inputs at
the edges of its dynamic dimensions), compares with the reference run eagerly and looks for NaN/Inf.
"""

from __future__ import annotations

import faulthandler
import json
import math
import os
import platform
import sys
import traceback

# Edge inputs larger than this many elements per tensor are skipped (a declared max can be huge).
EDGE_NUMEL_LIMIT = 50_000_000


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

    host = {
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
    names = _user_input_names(reference)
    if len(names) != len(specs):
        # The program's inputs do not map one-to-one onto the package's: no names rather than wrong ones.
        names = []
    kept = []
    for name, args, kwargs in cases:
        problems = _input_problems(args, kwargs, specs, names)
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


def _user_input_names(reference) -> list[str]:
    if reference is None:
        return []
    from torch.export.graph_signature import InputKind

    return [s.arg.name for s in reference.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]


def _input_problems(args, kwargs, specs: list[dict], names: list[str]) -> list[dict]:
    """What differs between the given tensors and the package's input checks (torch's own check order)."""
    import torch
    from torch.utils._pytree import tree_leaves

    # Keyword inputs are reordered by the package's in_spec; only positional inputs map one-to-one here.
    leaves = tree_leaves(args)
    if kwargs or not all(isinstance(leaf, torch.Tensor) for leaf in leaves):
        return []
    if len(leaves) != len(specs):
        return [
            {
                "message": f"{len(leaves)} input tensor(s) given, the package was compiled for {len(specs)}",
                "known": "",
                "fix": "Pass the inputs the program was exported with (same number, same order).",
            }
        ]
    problems = []
    for spec, tensor in zip(specs, leaves, strict=True):
        index = spec["index"]
        label = f"input {index}" + (f" (`{names[index]}`)" if index < len(names) else "")
        dtype = str(tensor.dtype).rsplit(".", 1)[-1]
        if spec.get("dtype") and dtype != spec["dtype"]:
            problems.append(
                {
                    "message": f"{label} is {dtype}, the package was compiled for {spec['dtype']}",
                    "known": "input-dtype",
                    "fix": f"Convert the input (`x.to(torch.{spec['dtype']})`), or export and compile with {dtype}.",
                }
            )
        sizes = {int(dim): size for dim, size in spec.get("sizes", {}).items()}
        if sizes and tensor.dim() <= max(sizes):
            problems.append(
                {
                    "message": f"{label} has {tensor.dim()} dimension(s) {list(tensor.shape)}, the package was "
                    f"compiled for at least {max(sizes) + 1}",
                    "known": "",
                    "fix": "Feed inputs of the rank the program was exported with.",
                }
            )
            continue
        for dim, size in sorted(sizes.items()):
            got = int(tensor.shape[dim])
            if isinstance(size, int):
                if got != size:
                    problems.append(
                        {
                            "message": f"{label} dim {dim} is {got}, the package was compiled for {size} "
                            "(a static dimension)",
                            "known": "input-dim-value",
                            "fix": f"Feed size {size} at dim {dim}, or export with a Dim for it (dynamic_shapes) "
                            "and recompile.",
                        }
                    )
                continue
            lower, upper = size
            if (lower is not None and got < lower) or (upper is not None and got > upper):
                shown = f"{'' if lower is None else lower}..{'' if upper is None else upper}"
                problems.append(
                    {
                        "message": f"{label} dim {dim} is {got}, outside the package's range {shown} "
                        "(a dynamic dimension)",
                        "known": "input-dim-range",
                        "fix": "Keep the size within the range, or export with a Dim(min=..., max=...) that "
                        "covers it and recompile (sizes 0 and 1 are specialized by export: a Dim(min=1) "
                        "compiles as >= 2).",
                    }
                )
    return problems


def generated_inputs(specs: list[dict], seed: int):
    """Inputs built from the package's input checks (floating: randn with a fixed seed; others: zeros)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    tensors = []
    for spec in specs:
        sizes = {int(dim): size for dim, size in spec.get("sizes", {}).items()}
        if not spec.get("dtype") or not hasattr(torch, spec["dtype"]) or sorted(sizes) != list(range(len(sizes))):
            return None
        shape = []
        for _, size in sorted(sizes.items()):
            if isinstance(size, int):
                shape.append(size)
            else:
                lower, upper = size
                value = max(2, lower or 0)
                shape.append(min(value, upper) if upper is not None else value)
        dtype = getattr(torch, spec["dtype"])
        if dtype.is_floating_point or dtype.is_complex:
            tensors.append(torch.randn(shape, generator=generator).to(dtype))
        else:
            tensors.append(torch.zeros(shape, dtype=dtype))
    return tuple(tensors)


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
        args = generated_inputs(request["input_specs"], request.get("seed", 0))
        if args is None:
            state.save(
                input_error="the package's input checks do not give every input's dtype and shape: pass --inputs"
            )
            return None
        cases = [(f"inputs generated from the package's input checks (seed {request.get('seed', 0)})", args, {})]
    else:
        return []
    if request.get("edges") and reference is not None:
        edges, note = _edge_cases(reference, cases[0][1], cases[0][2])
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


def _edge_cases(reference, args, kwargs):
    """Inputs at the edges of each dynamic dimension's range (min, max, and 0/1 where the range allows them)."""
    import sympy
    import torch
    from torch.export.graph_signature import InputKind
    from torch.utils._pytree import tree_flatten, tree_unflatten

    leaves, spec = tree_flatten((args, kwargs))
    user_inputs = [s.arg.name for s in reference.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]
    placeholders = {node.name: node for node in reference.graph.nodes if node.op == "placeholder"}
    if len(user_inputs) != len(leaves):
        return [], "edges skipped: the example inputs do not map one-to-one onto the program's inputs"
    symbolic = []  # (leaf index, dim, sympy expression)
    example_values = {}
    for position, (leaf, name) in enumerate(zip(leaves, user_inputs, strict=True)):
        fake = placeholders[name].meta.get("val")
        if not isinstance(leaf, torch.Tensor) or not isinstance(fake, torch.Tensor):
            continue
        for dim, size in enumerate(fake.shape):
            if isinstance(size, torch.SymInt):
                expr = size.node.expr
                symbolic.append((position, dim, expr))
                if isinstance(expr, sympy.Symbol):
                    example_values[expr] = int(leaf.shape[dim])
    if not symbolic:
        return [], "edges skipped: the program has no dynamic dimensions"
    # torch.export.save keeps no Dim names (torch 2.13: they live only in the exporting process's ShapeEnv), so a
    # dimension is named by where the user sees it: the input's name and the dim.
    where = {}
    for position, dim, expr in symbolic:
        where.setdefault(expr, f"{user_inputs[position]}.shape[{dim}]")
    cases = []
    skipped = []
    for symbol, example in sorted(example_values.items(), key=lambda item: str(item[0])):
        ranges = reference.range_constraints.get(symbol)
        if ranges is None:
            continue
        lower, upper = ranges.lower, ranges.upper
        candidates = {}
        if _finite(lower):
            candidates[int(lower)] = "min"
        if _finite(upper):
            candidates.setdefault(int(upper), "max")
        for small in (0, 1):
            if (not _finite(lower) or lower <= small) and (not _finite(upper) or small <= upper):
                candidates.setdefault(small, str(small))
        for value, label in sorted(candidates.items()):
            if value == example:
                continue
            assignment = {**example_values, symbol: value}
            new_leaves = list(leaves)
            for position, dim, expr in symbolic:
                size = expr.subs(assignment)
                if not size.is_number:
                    break
                new_leaves[position] = _resized(new_leaves[position], dim, int(size))
            else:
                if max((t.numel() for t in new_leaves if isinstance(t, torch.Tensor)), default=0) > EDGE_NUMEL_LIMIT:
                    skipped.append(f"{where[symbol]}={value}")
                    continue
                new_args, new_kwargs = tree_unflatten(new_leaves, spec)
                cases.append((f"edge {where[symbol]}={value} ({label})", tuple(new_args), dict(new_kwargs)))
    note = f"edges skipped as too large: {', '.join(skipped)}" if skipped else ""
    return cases, note


def _finite(bound) -> bool:
    try:
        return math.isfinite(float(bound))
    except (TypeError, ValueError, OverflowError):
        return False


def _resized(tensor, dim: int, size: int):
    """The tensor cut or tiled along dim to size, keeping its values (index inputs stay valid)."""
    import torch

    current = tensor.shape[dim]
    if size <= current:
        return tensor.narrow(dim, 0, size).contiguous()
    if current == 0:
        shape = list(tensor.shape)
        shape[dim] = size
        return torch.zeros(shape, dtype=tensor.dtype, device=tensor.device)
    repeats = -(-size // current)
    return torch.cat([tensor] * repeats, dim).narrow(dim, 0, size).contiguous()


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
