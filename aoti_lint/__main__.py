from aoti_lint.entry_point import entry

if __name__ == "__main__":
    entry()
