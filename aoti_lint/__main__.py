from aoti_lint.fast_path import entry

if __name__ == "__main__":
    entry()
