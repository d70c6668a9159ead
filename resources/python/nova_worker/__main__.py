"""Entry point: `python -m nova_worker [--once [--preload[=compile|intake]]]` (server.py)."""

import sys
import time

_began = time.monotonic()  # before any import: a standby's "import" time starts here

if __name__ == "__main__":
    from .server import main
    sys.exit(main(began=_began))
