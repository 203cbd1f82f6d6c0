"""Two fabric runs -> drift: where each NIC was seen cabled."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gpurack.drift.model import Drift, DriftKind


class SeenLink(Protocol):
    """Where a fabric run saw one NIC (a `gpurack.records.LinkRecord`); `switch` None: on no port."""

    @property
    def nic(self) -> str: ...

    @property
    def switch(self) -> str | None: ...

    @property
    def port(self) -> str | None: ...


def _where(link: SeenLink | None) -> str | None:
    """`switch port` of a NIC seen on a switch; None when not seen or not listed."""
    if link is None or link.switch is None:
        return None
    return " ".join(p for p in (link.switch, link.port) if p)


def _leaves(links: Sequence[SeenLink]) -> str:
    """The switches a node's NICs were seen on, sorted: the leaf level of its topology labels."""
    return ", ".join(sorted({link.switch for link in links if link.switch is not None}))


def diff_links(before: Sequence[SeenLink], after: Sequence[SeenLink]) -> list[Drift]:
    """NICs matched by name between two fabric runs: moved, no longer seen, newly seen; then,
    when the node is seen on other switches than before, the node itself: it moved."""
    old = {link.nic: _where(link) for link in before}
    new = {link.nic: _where(link) for link in after}
    out: list[Drift] = []
    for nic in dict.fromkeys([*new, *old]):
        was, now = old.get(nic), new.get(nic)
        if was == now:
            continue
        if now is None:
            kind: DriftKind = "link_lost"
            sentence = f"{nic} is no longer seen on a switch (was {was})"
        elif was is None:
            kind, sentence = "link_found", f"{nic} is now seen on {now}"
        else:
            kind, sentence = "link_moved", f"{nic} moved from {was} to {now}"
        out.append(Drift(kind, f"link:{nic}", was, now, sentence))
    was_on, now_on = _leaves(before), _leaves(after)
    if was_on and now_on and was_on != now_on:
        sentence = f"the node moved: seen on {now_on}, was on {was_on} (its leaf label follows)"
        out.append(Drift("leaves_changed", "leaves", was_on, now_on, sentence))
    return out
