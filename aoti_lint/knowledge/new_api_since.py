"""Since when torch has the new AOTInductor API (no import: the entry point's parser reads it)."""

# Public since 2.6; the oldest torch that has both new functions (`aoti_compile_and_package`, `aoti_load_package`).
NEW_API_SINCE = (2, 6)
