"""``python -m syncllint``."""

from syncllint.cli import main

if __name__ == "__main__":
    main()
