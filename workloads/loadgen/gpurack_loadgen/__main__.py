"""`python -m gpurack_loadgen --url URL --model NAME --concurrency C [--requests N] [--seconds T]`:
load the model server's embeddings endpoint, then print one JSON line of figures on stdout.

Exit 0: the run completed, failures or not (they are in the line: the caller judges), also when
SIGTERM ended it early (`stopped_by: signal`: a caller's way to end a load of unknown length); 2: bad
arguments, nothing at the URL, or no good answer within --wait-ready; 130: interrupted. stdout
carries only that line: anything locust or gevent prints goes to stderr.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any

from gpurack_loadgen.errors import LoadgenError
from gpurack_loadgen.settings import Settings, check_reachable, parse


def _measure(settings: Settings) -> dict[str, Any]:
    # Imported here, not above: it imports locust, whose gevent patches the whole process; the
    # arguments and the URL are checked first, and `--help` stays fast.
    from gpurack_loadgen.load import measure  # noqa: PLC0415

    return measure(settings)


def main(argv: list[str] | None = None) -> int:
    try:
        settings = parse(sys.argv[1:] if argv is None else argv)
        if settings.wait_ready == 0:
            check_reachable(settings)
        with contextlib.redirect_stdout(sys.stderr):
            line = _measure(settings)
    except LoadgenError as exc:
        sys.stderr.write(f"gpurack_loadgen: {exc}\n")
        return exc.code
    except KeyboardInterrupt:
        sys.stderr.write("gpurack_loadgen: interrupted\n")
        return 130
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
