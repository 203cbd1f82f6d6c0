"""`python -m gpurack_serving [RUNTIME ARGS...]`: the model from the node's cache, then the runtime.

Exit 2: bad settings or model; 3: the cache is full of models running servers hold; 1: other.
On success it does not return: the process becomes the runtime.
"""

from __future__ import annotations

import os
import sys

from gpurack_serving.errors import ServingError
from gpurack_serving.launch import launch


def main(argv: list[str] | None = None) -> int:
    try:
        launch(os.environ, sys.argv[1:] if argv is None else argv)
    except ServingError as exc:
        sys.stderr.write(f"gpurack_serving: {exc}\n")
        return exc.code
    return 0  # only when the exec is replaced in a test


if __name__ == "__main__":
    sys.exit(main())
