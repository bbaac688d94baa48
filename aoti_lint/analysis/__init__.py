"""Static analyses shared by rules; each imports libcst lazily, inside its functions."""
