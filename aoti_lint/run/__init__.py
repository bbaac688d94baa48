"""Running the rules: one text (engine), many files (runner, pool), a whole run (lint), the cache and its memo."""
