"""``python -m defrag``: the command line of defrag.cli (also the ``defrag`` console script)."""
import sys

from .utils.startup import loading

# (a Ctrl-C while the commands load: one line and exit status 130, as in main)
with loading():
    from .cli import main

if __name__ == "__main__":
    sys.exit(main())
