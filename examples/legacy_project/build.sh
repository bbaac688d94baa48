#!/usr/bin/env bash
# Left over from a debugging session.
export CUDA_LAUNCH_BLOCKING=1
TORCHINDUCTOR_NAN_ASSERTS=1 python export_model.py
