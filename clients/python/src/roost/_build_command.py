"""The `roost-build` console script: roost.batch._build's main, or, without
pyarrow (the package installed without its [batch] extra), a message saying
how to get it instead of an ImportError's traceback."""

from __future__ import annotations

import sys
from typing import List, Optional

EX_UNAVAILABLE = 69  # sysexits.h


def main(argv: Optional[List[str]] = None) -> int:
    try:
        from roost.batch._build import main as build_main
    except ImportError as e:
        print(f"roost-build: {e}; it needs the package's [batch] extra "
              "(pyarrow): pip install './clients/python[batch]'", file=sys.stderr)
        return EX_UNAVAILABLE
    return build_main(argv)


if __name__ == "__main__":
    sys.exit(main())
