"""Serve a prebuilt artifact."""

from torch._export import aot_load


def load(path, device="cuda"):
    return aot_load(path, device)
