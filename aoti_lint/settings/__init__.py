"""The run's settings: configuration files, defaults, the target torch, rule selection and run options."""
