"""`gpurack conformance` for people: each requirement, its level and status, and each test's verdict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpurack.render.table import Styled, table
from gpurack.render.verdicts import style_of

STATUS_STYLE = {
    "Implemented": "green",
    "Partially Implemented": "yellow",
    "Not Implemented": "bold red",
    "N/A": "dim",
}


def conformance_report(found: Mapping[str, Any]) -> None:
    """The requirements with their status, then the tests with their verdicts and reasons."""
    table(
        f"AI conformance {found['name']} (Kubernetes {found['kubernetes_version'] or 'unknown'})",
        ("requirement", "level", "status", "notes"),
        (
            (r["id"], r["level"], Styled(r["status"], STATUS_STYLE.get(r["status"], "")), r["notes"])
            for r in found["requirements"]
        ),
    )
    table(
        "tests",
        ("verdict", "test", "reason"),
        (
            (Styled(r["verdict"].upper(), style_of(r["verdict"])), r["id"], r["reason"])
            for r in found["results"]
        ),
    )
