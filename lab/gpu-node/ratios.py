"""The standard tier's figures in the pod beside the same run on the host, as pod/host ratios.

Both sides are `gpurack validate --local --tier standard --json` output (the pod's comes back
as its log, so the JSON object is cut out of it). Prints one line per measured result.

    python3 ratios.py HOST.json POD.log
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _document(text: str) -> dict[str, Any]:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise SystemExit("no JSON document in the output")
    doc: dict[str, Any] = json.loads(text[start : end + 1])
    return doc


def _measured(doc: dict[str, Any]) -> dict[str, tuple[float, str, str]]:
    out = {}
    for result in doc.get("results", []):
        value = result.get("measured")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and result.get("tier") != "quick":
            key = f"{result['id']} {result.get('component', '')}".strip()
            out[key] = (float(value), str(result.get("unit") or ""), str(result.get("verdict")))
    return out


def main(host_path: str, pod_path: str) -> int:
    host = _document(Path(host_path).read_text(encoding="utf-8", errors="replace"))
    pod = _document(Path(pod_path).read_text(encoding="utf-8", errors="replace"))
    h, p = _measured(host), _measured(pod)
    verdicts = [str((doc.get("summary") or {}).get("verdict")) for doc in (host, pod)]
    print(f"verdict: host {verdicts[0]}, pod {verdicts[1]}")
    print(f"{'result':<44} {'host':>12} {'pod':>12} {'pod/host':>9}")
    for key in sorted(h.keys() | p.keys()):
        hv, pv = h.get(key), p.get(key)
        ratio = f"{pv[0] / hv[0]:.3f}" if hv and pv and hv[0] else "-"
        unit = (hv or pv or (0.0, "", ""))[1]
        shown = [f"{v[0]:.4g}" if v else "-" for v in (hv, pv)]
        print(f"{key:<44} {shown[0]:>12} {shown[1]:>12} {ratio:>9} {unit}")
    return 0 if h and p else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
