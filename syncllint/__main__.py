"""``python -m syncllint``."""

import os
import sys

# `python -m` puts the working directory first on sys.path, so a linted project's `json.py` or
# `typing.py` would shadow the standard library and run when syncllint imports it. syncllint
# itself is already imported at this point; drop the entry before anything else is imported.
_cwd = os.getcwd()
sys.path[:] = [p for p in sys.path if p not in ("", ".", _cwd)]

from syncllint.cli import main

if __name__ == "__main__":
    main()
