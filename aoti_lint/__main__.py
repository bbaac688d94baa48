import sys

from aoti_lint.cli import main

if __name__ == "__main__":
    sys.exit(main())
