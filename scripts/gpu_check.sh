#!/usr/bin/env bash
# The CUDA-only checks of aoti-lint (tests marked `cuda`), in one run, for a machine with a CUDA GPU.
# Needs a CUDA build of torch 2.13 and a C++ compiler in the Python environment used (PYTHON, default python3),
# with aoti-lint installed from this checkout: pip install -e '.[test]'. Covers validate on a CUDA package (host
# check, input checks, edges) and the migration check `validate new.pt2 --baseline old.so` on CUDA (the legacy .so
# loaded with torch._export.aot_load(path, "cuda")). Takes about 3-4 minutes (three small compiles, then validate
# runs in child processes); stops after 400 s.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
"$PYTHON" - <<'PY'
import sys
import torch
if not torch.cuda.is_available():
    sys.exit(f"torch {torch.__version__} sees no CUDA device: nothing to check here")
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}")
PY
exec timeout 400 "$PYTHON" -m pytest -q -p no:cacheprovider -m cuda -rs tests/
