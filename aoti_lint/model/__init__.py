"""The reading of one module: its syntax tree, the names it binds and resolves, its facts, kernels and noqa."""
