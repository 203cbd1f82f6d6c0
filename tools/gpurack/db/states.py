"""Read the comparable state of snapshots back as plain columns (no ORM objects: diff speed).

Every row is checked as it is read (gpurack.db.damage): a damaged one raises DamagedRowError.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from gpurack import hoststate
from gpurack.db.damage import check_values
from gpurack.db.models import CheckResult, Disk, Gpu, Nic, Snapshot
from gpurack.hoststate import DiskState, GpuState, HostState, NicState

T = TypeVar("T")
# SQLite allows 32766 bound parameters per statement; stay far below for IN (...) lists.
CHUNK = 500

_GPU_COLUMNS = (
    Gpu.gpu_index,
    Gpu.bus_id,
    Gpu.uuid,
    Gpu.serial,
    Gpu.name,
    Gpu.vbios,
    Gpu.memory_mib,
    Gpu.pcie_gen_current,
    Gpu.pcie_gen_max,
    Gpu.pcie_width_current,
    Gpu.pcie_width_max,
)
_NIC_COLUMNS = (
    Nic.device,
    Nic.port,
    Nic.guid,
    Nic.fw,
    Nic.rate_gbps,
    Nic.state,
    Nic.phys_state,
    Nic.link_layer,
)
_DISK_COLUMNS = (Disk.name, Disk.serial, Disk.model, Disk.firmware, Disk.size_bytes)
_CHECK_COLUMNS = (CheckResult.check_id, CheckResult.component, CheckResult.verdict, CheckResult.reason)

Head = tuple[str | None, str | None, str | None, dict[str, Any]]


def chunks(items: Sequence[T]) -> Iterator[Sequence[T]]:
    """`items` in slices of at most CHUNK, for IN (...) lists."""
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


def load_states(session: Session, snapshot_ids: Sequence[int]) -> dict[int, HostState]:
    """The comparable state of each snapshot, by snapshot id."""
    heads: dict[int, Head] = {}
    gpus: dict[int, list[GpuState]] = defaultdict(list)
    nics: dict[int, list[NicState]] = defaultdict(list)
    disks: dict[int, list[DiskState]] = defaultdict(list)
    checks: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for chunk in chunks(snapshot_ids):
        heads.update(_heads(session, chunk))
        for sid, values in _children(session, Gpu, _GPU_COLUMNS, chunk):
            gpus[sid].append(GpuState(*values))
        for sid, values in _children(session, Nic, _NIC_COLUMNS, chunk):
            nics[sid].append(NicState(*values))
        for sid, values in _children(session, Disk, _DISK_COLUMNS, chunk):
            disks[sid].append(DiskState(*values))
        for sid, (check_id, component, verdict, reason) in _children(
            session, CheckResult, _CHECK_COLUMNS, chunk
        ):
            checks[sid].append({"id": check_id, "component": component, "verdict": verdict, "reason": reason})
    return {
        sid: HostState(
            kernel=kernel,
            driver=driver,
            cuda=cuda,
            gpus=tuple(gpus[sid]),
            nics=tuple(nics[sid]),
            disks=tuple(disks[sid]),
            checks=hoststate.checks_from_results(checks[sid]),
            labels=tuple(sorted((str(k), str(v)) for k, v in labels.items())),
        )
        for sid, (kernel, driver, cuda, labels) in heads.items()
    }


def _heads(session: Session, chunk: Sequence[int]) -> Iterator[tuple[int, Head]]:
    """Kernel, driver, CUDA and labels of each snapshot in `chunk`."""
    query = select(Snapshot.id, Snapshot.kernel, Snapshot.driver, Snapshot.cuda, Snapshot.labels).where(
        Snapshot.id.in_(chunk)
    )
    for sid, kernel, driver, cuda, labels in session.execute(query):
        fields = {"kernel": kernel, "driver": driver, "cuda": cuda, "labels": labels}
        check_values(Snapshot.__table__, sid, fields)
        yield sid, (kernel, driver, cuda, labels or {})


def _children(
    session: Session, model: Any, columns: Sequence[Any], chunk: Sequence[int]
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """(snapshot id, the given columns) of each child row of the snapshots in `chunk`, in insert order."""
    query = (
        select(model.id, model.snapshot_id, *columns).where(model.snapshot_id.in_(chunk)).order_by(model.id)
    )
    for row in session.execute(query):
        values: tuple[Any, ...] = tuple(row)
        check_values(model.__table__, values[0], {c.key: v for c, v in zip(columns, values[2:], strict=True)})
        yield values[1], values[2:]
