"""Inputs for the child process of ``aoti-lint validate`` (``child.py``): generated from the package's input
checks, at the edges of the exported program's dynamic dimensions, and compared with the input checks before
they reach native code. Imported by ``child.py`` as a sibling script module; imports nothing from aoti_lint.
"""

from __future__ import annotations

import math
from typing import Any

# Edge inputs larger than this many elements per tensor are skipped (a declared max can be huge).
EDGE_NUMEL_LIMIT = 50_000_000


def user_input_names(reference) -> list[str]:
    if reference is None:
        return []
    from torch.export.graph_signature import InputKind

    return [s.arg.name for s in reference.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]


def input_problems(args, kwargs, specs: list[dict], names: list[str]) -> list[dict]:
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


def edge_cases(reference, args, kwargs):
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
    symbolic: list[tuple[int, int, Any]] = []  # (leaf index, dim, sympy expression)
    example_values: dict[object, int] = {}
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
    where: dict[object, str] = {}
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
        if finite(lower):
            candidates[int(lower)] = "min"
        if finite(upper):
            candidates.setdefault(int(upper), "max")
        for small in (0, 1):
            if (not finite(lower) or lower <= small) and (not finite(upper) or small <= upper):
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
                new_leaves[position] = resized(new_leaves[position], dim, int(size))
            else:
                if max((t.numel() for t in new_leaves if isinstance(t, torch.Tensor)), default=0) > EDGE_NUMEL_LIMIT:
                    skipped.append(f"{where[symbol]}={value}")
                    continue
                new_args, new_kwargs = tree_unflatten(new_leaves, spec)
                cases.append((f"edge {where[symbol]}={value} ({label})", tuple(new_args), dict(new_kwargs)))
    note = f"edges skipped as too large: {', '.join(skipped)}" if skipped else ""
    return cases, note


def finite(bound) -> bool:
    try:
        return math.isfinite(float(bound))
    except (TypeError, ValueError, OverflowError):
        return False


def resized(tensor, dim: int, size: int):
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
