"""`python -m gpurack_trainer`: exit 0 done, 2 bad arguments or inputs, 1 any other failure."""

from __future__ import annotations

import sys
import traceback

from gpurack_trainer.args import dist_from_env, parse
from gpurack_trainer.errors import TrainerError
from gpurack_trainer.events import emit, log


def main(argv: list[str] | None = None) -> int:
    try:
        opts = parse(sys.argv[1:] if argv is None else argv)
        d = dist_from_env()
        from gpurack_trainer.train import run  # noqa: PLC0415 - argument errors need no torch

        fields = run(opts, d)
    except TrainerError as exc:
        log(f"error: {exc}")
        emit("error", message=str(exc))
        return exc.code
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        log(f"failed: {type(exc).__name__}: {exc}")
        emit("error", message=f"{type(exc).__name__}: {exc}")
        return 1
    if d.rank == 0:
        emit("done", **fields)
    return 0


if __name__ == "__main__":
    sys.exit(main())
