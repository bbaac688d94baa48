"""Facts across files: device and artifact flows, the project pass, the migration planned per artifact flow,
and `aoti-lint flows`."""
