#!/usr/bin/python3
"""gpurack lab shim: replay a hardware tool's output from the container's capture profile.

Installed as /usr/local/bin/{nvidia-smi,ibstat,lspci,nvme} in lab containers only. It
answers exactly the command lines in /opt/gpurack-lab/manifest.json (made by `gpurack lab
up` from the capture command table) with the recorded output and exit code; anything else
fails like a real tool given arguments it does not know: a message on stderr, exit 2.
Standalone (stdlib, Python 3.9+ with postponed annotations) because it runs inside the container.
"""

from __future__ import annotations

import json
import os
import sys

MANIFEST = os.environ.get("GPURACK_LAB_MANIFEST", "/opt/gpurack-lab/manifest.json")
RC_BAD_ARGS = 2


def main(argv: list[str]) -> int:
    tool = os.path.basename(argv[0])
    try:
        with open(MANIFEST, encoding="utf-8") as handle:
            manifest = json.load(handle)
    except OSError as exc:
        sys.stderr.write(f"{tool}: gpurack lab shim: cannot read {MANIFEST}: {exc.strerror}\n")
        return RC_BAD_ARGS
    table = manifest.get("tools", {}).get(tool)
    if table is None:
        sys.stderr.write(f"{tool}: command not found (not part of this lab profile)\n")
        return 127
    args = " ".join(argv[1:])
    filename = table.get(args)
    if filename is None:
        known = "; ".join("'" + " ".join(filter(None, (tool, a))) + "'" for a in sorted(table)) or "none"
        sys.stderr.write(
            f"{tool}: gpurack lab shim: '{' '.join([tool, *argv[1:]])}' is not recorded in this "
            f"lab profile (replays: {known})\n"
        )
        return RC_BAD_ARGS
    path = os.path.join(manifest["profile"], filename)
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines(keepends=True)
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) < 2 or not lines[0].startswith("# $ ") or not lines[-1].startswith("# rc="):
        sys.stderr.write(f"{tool}: gpurack lab shim: {path} is not a capture file\n")
        return RC_BAD_ARGS
    rc = int(lines[-1][len("# rc=") :])
    body = "".join(lines[1:-1])
    (sys.stdout if rc == 0 else sys.stderr).write(body)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
