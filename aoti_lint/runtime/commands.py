"""The ``validate`` and ``explain`` subcommands."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aoti_lint.runtime.escape import printable
from aoti_lint.usage import Parser

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def validate_command(argv: list[str]) -> int:
    from aoti_lint.runtime.validate import DEFAULT_TIMEOUT, NATIVE_CODE_WARNING, validate
    from aoti_lint.runtime.validation_report import render_junit, render_summary, render_text

    parser = Parser(
        prog="aoti-lint validate",
        description=(
            "Prove an AOTInductor package on this machine: read it, check this host against it, run it and compare "
            "with the exported program. WARNING: this loads the package's compiled .so and runs its native code "
            "(in child processes); validate only packages you trust."
        ),
        epilog="Exit status: 0 every package valid, 1 some package invalid, 2 usage error, or a package that "
        "could not be validated (unreadable, or no torch here). "
        "Running needs torch: pip install torch==2.13.0 (or '.[validate]' in a checkout of aoti-lint).",
    )
    parser.add_argument(
        "packages", type=Path, nargs="+", metavar="PACKAGE", help="the .pt2 written by aoti_compile_and_package"
    )
    parser.add_argument(
        "--inputs",
        type=Path,
        metavar="FILE",
        help="inputs saved with torch.save: tensor, tuple, list, dict or (args, kwargs)",
    )
    parser.add_argument(
        "--reference",
        type=Path,
        metavar="EP.pt2",
        help="the program saved with torch.export.save: example inputs and expected outputs",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="OLD.so",
        help="the legacy .so (torch._export.aot_compile) production serves: run it (torch._export.aot_load) on the "
        "same inputs and compare the package's outputs with its outputs",
    )
    parser.add_argument(
        "--device-index", type=int, default=-1, help="device index to load on (default -1: the default device)"
    )
    parser.add_argument(
        "--rtol", type=float, help="relative tolerance (with --atol; default: by dtype, as torch.testing.assert_close)"
    )
    parser.add_argument("--atol", type=float, help="absolute tolerance (with --rtol)")
    parser.add_argument(
        "--edges", action="store_true", help="also run at the min/max (and 0/1 where allowed) of each dynamic dimension"
    )
    parser.add_argument(
        "--diagnose",
        action="store_true",
        help="on a CUDA failure, rerun with CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1 "
        "(every run already has AOTI_RUNTIME_CHECK_INPUTS=1)",
    )
    parser.add_argument(
        "--no-run", action="store_true", help="only read the package (no torch needed, nothing executed)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"per child process (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument("--output-format", choices=("text", "json", "junit"), default="text")
    args = parser.parse_args(argv)
    if args.baseline is not None and len(args.packages) > 1:
        parser.error("--baseline compares one package with the legacy .so: give one package")
    if (args.rtol is None) != (args.atol is None):
        parser.error("--rtol and --atol go together")
    if args.edges and args.reference is None:
        parser.error("--edges needs --reference (the dynamic ranges come from the exported program)")
    if not args.no_run:
        print(f"aoti-lint validate: {NATIVE_CODE_WARNING}", file=sys.stderr)
    reports = []
    for package in args.packages:
        try:
            report = validate(
                package,
                inputs=args.inputs,
                reference=args.reference,
                baseline=args.baseline,
                device_index=args.device_index,
                rtol=args.rtol,
                atol=args.atol,
                edges=args.edges,
                diagnose=args.diagnose,
                run=not args.no_run,
                timeout=args.timeout,
            )
        except ValueError as exc:
            print(f"error: {printable(str(exc))}", file=sys.stderr)
            return EXIT_USAGE
        if report.error:
            # One line naming the file; the other packages are still validated.
            where = "" if report.error.startswith(str(package)) else f"{package}: "
            print(printable(f"error: {where}{report.error}"), file=sys.stderr)
        reports.append(report)
        if args.output_format == "text":
            sys.stdout.write(render_text(report))
    if args.output_format == "json":
        data = (
            reports[0].to_dict()
            if len(reports) == 1
            else {
                "valid": all(r.valid for r in reports),
                "packages": [r.to_dict() for r in reports],
            }
        )
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    elif args.output_format == "junit":
        sys.stdout.write(render_junit(reports))
    elif len(reports) > 1:
        sys.stdout.write("\n" + render_summary(reports))
    if any(r.error for r in reports):
        return EXIT_USAGE
    return EXIT_OK if all(r.valid for r in reports) else EXIT_FAILED


def explain_command(argv: list[str]) -> int:
    from aoti_lint.runtime.explain import match_text, render

    parser = Parser(
        prog="aoti-lint explain",
        description="Explain an AOTInductor error: match an error message or a whole log against the known failures.",
        epilog="Exit status: 0 something matched, 1 nothing matched, 2 usage error.",
    )
    parser.add_argument("file", nargs="?", help="a log or error text; - (or nothing, from a pipe) reads stdin")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    if args.file is None:
        if sys.stdin is None or sys.stdin.isatty():
            # Nothing piped in: waiting for a terminal to type a log is never what was meant.
            parser.print_usage(sys.stderr)
            print(
                "aoti-lint explain: give a log file, or pipe one in (`... 2>&1 | aoti-lint explain`)", file=sys.stderr
            )
            return EXIT_USAGE
        args.file = "-"
    if args.file == "-":
        text, source = sys.stdin.read(), "<stdin>"
    else:
        try:
            text = Path(args.file).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            print(printable(f"error: {args.file}: {exc.strerror or exc}"), file=sys.stderr)
            return EXIT_USAGE
        source = args.file
    matches = match_text(text)
    sys.stdout.write(render(matches, source, args.output_format))
    return EXIT_OK if matches else EXIT_FAILED
