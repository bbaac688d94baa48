import sys

from aoti_lint.fast_path import main

if __name__ == "__main__":
    sys.exit(main())
