"""``python -m defrag``: the command line of defrag.cli (also the ``defrag`` console script)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
