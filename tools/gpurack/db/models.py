"""The inventory database's tables as SQLAlchemy models (the schema itself lives in migrations/)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

from gpurack.db.damage import Damaged


class _Tolerant:
    """A column type whose stored value, when it cannot be decoded, reads as `Damaged` instead of
    raising in the middle of a query: the reader then names the row (gpurack.db.rows)."""

    def result_processor(self, dialect: Dialect, coltype: object) -> Callable[[Any], Any] | None:
        inner = super().result_processor(dialect, coltype)  # type: ignore[misc]
        if inner is None:
            return None

        def process(value: Any) -> Any:
            try:
                return inner(value)
            except (ValueError, TypeError, OverflowError) as exc:
                return Damaged(value, str(exc))

        return process


class _Json(_Tolerant, TypeDecorator[Any]):
    """JSON text; a value that does not parse reads as `Damaged`."""

    impl = JSON()
    cache_ok = True


# JSONB on PostgreSQL (indexable, compact), JSON text elsewhere.
JsonType = _Json().with_variant(JSONB(), "postgresql")


class UTCDateTime(_Tolerant, TypeDecorator[datetime]):
    """Timezone-aware UTC timestamps on every backend (SQLite drops the offset); a stored text
    that is not a time reads as `Damaged`."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if not isinstance(value, datetime):
            return value
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class Node(Base):
    __tablename__ = "nodes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    host: Mapped[str] = mapped_column(String(255), unique=True)
    pool: Mapped[str | None] = mapped_column(String(255))
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime())
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime())
    k8s_node_name: Mapped[str | None] = mapped_column(String(255))

    snapshots: Mapped[list[Snapshot]] = relationship(back_populates="node", passive_deletes=True)


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    started: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    finished: Mapped[datetime | None] = mapped_column(UTCDateTime())
    kind: Mapped[str] = mapped_column(String(16))
    source: Mapped[str] = mapped_column(Text)
    playbook: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(32))

    snapshots: Mapped[list[Snapshot]] = relationship(back_populates="run", passive_deletes=True)


class Snapshot(Base):
    """What one node looked like in one run."""

    __tablename__ = "snapshots"
    __table_args__ = (
        UniqueConstraint("run_id", "node_id", name="uq_snapshots_run_node"),
        Index("ix_snapshots_node_run", "node_id", "run_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    node_id: Mapped[int] = mapped_column(ForeignKey("nodes.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(Text)
    facts: Mapped[dict[str, Any]] = mapped_column(JsonType)
    labels: Mapped[dict[str, Any]] = mapped_column(JsonType)
    kernel: Mapped[str | None] = mapped_column(String(255))
    driver: Mapped[str | None] = mapped_column(String(64))
    cuda: Mapped[str | None] = mapped_column(String(32))
    verdict: Mapped[str | None] = mapped_column(String(8))

    node: Mapped[Node] = relationship(back_populates="snapshots")
    run: Mapped[Run] = relationship(back_populates="snapshots")
    gpus: Mapped[list[Gpu]] = relationship(order_by="Gpu.id", passive_deletes=True)
    nics: Mapped[list[Nic]] = relationship(order_by="Nic.id", passive_deletes=True)
    disks: Mapped[list[Disk]] = relationship(order_by="Disk.id", passive_deletes=True)
    checks: Mapped[list[CheckResult]] = relationship(order_by="CheckResult.id", passive_deletes=True)


class Gpu(Base):
    __tablename__ = "gpus"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id", ondelete="CASCADE"), index=True)
    gpu_index: Mapped[int | None] = mapped_column(Integer)
    bus_id: Mapped[str | None] = mapped_column(String(32))
    uuid: Mapped[str | None] = mapped_column(String(64), index=True)
    serial: Mapped[str | None] = mapped_column(String(64), index=True)
    name: Mapped[str | None] = mapped_column(String(255))
    vbios: Mapped[str | None] = mapped_column(String(64))
    memory_mib: Mapped[int | None] = mapped_column(Integer)
    pcie_gen_current: Mapped[int | None] = mapped_column(Integer)
    pcie_gen_max: Mapped[int | None] = mapped_column(Integer)
    pcie_width_current: Mapped[int | None] = mapped_column(Integer)
    pcie_width_max: Mapped[int | None] = mapped_column(Integer)


class Nic(Base):
    __tablename__ = "nics"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id", ondelete="CASCADE"), index=True)
    device: Mapped[str] = mapped_column(String(64))
    port: Mapped[int | None] = mapped_column(Integer)
    guid: Mapped[str | None] = mapped_column(String(64), index=True)
    fw: Mapped[str | None] = mapped_column(String(64))
    rate_gbps: Mapped[float | None] = mapped_column(Float)
    state: Mapped[str | None] = mapped_column(String(32))
    phys_state: Mapped[str | None] = mapped_column(String(32))
    link_layer: Mapped[str | None] = mapped_column(String(32))


class Disk(Base):
    __tablename__ = "disks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    serial: Mapped[str | None] = mapped_column(String(128), index=True)
    model: Mapped[str | None] = mapped_column(String(255))
    firmware: Mapped[str | None] = mapped_column(String(64))
    size_bytes: Mapped[int | None] = mapped_column(BigInteger)


class CheckResult(Base):
    __tablename__ = "check_results"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id", ondelete="CASCADE"), index=True)
    check_id: Mapped[str] = mapped_column(String(128), index=True)
    title: Mapped[str | None] = mapped_column(Text)
    tier: Mapped[str | None] = mapped_column(String(32))
    component: Mapped[str | None] = mapped_column(String(128))
    verdict: Mapped[str] = mapped_column(String(8))
    measured: Mapped[Any] = mapped_column(JsonType, nullable=True)
    expected: Mapped[Any] = mapped_column(JsonType, nullable=True)
    unit: Mapped[str | None] = mapped_column(String(32))
    reason: Mapped[str | None] = mapped_column(Text)
    remediation: Mapped[str | None] = mapped_column(Text)
    evidence: Mapped[Any] = mapped_column(JsonType, nullable=True)
    limit_source: Mapped[str | None] = mapped_column(Text)
    percent: Mapped[float | None] = mapped_column(Float)  # measured share of the limit (measured checks)


class SwitchLink(Base):
    """Where one fabric run saw one NIC of one node cabled; `switch` and `port` None: on no port."""

    __tablename__ = "switch_links"
    __table_args__ = (
        UniqueConstraint("run_id", "node_id", "nic", name="uq_switch_links_run_node_nic"),
        Index("ix_switch_links_node_run", "node_id", "run_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    node_id: Mapped[int] = mapped_column(ForeignKey("nodes.id", ondelete="CASCADE"))
    nic: Mapped[str] = mapped_column(String(64))
    switch: Mapped[str | None] = mapped_column(String(255))
    port: Mapped[str | None] = mapped_column(String(64))
    neighbor: Mapped[str | None] = mapped_column(Text)  # the port's LLDP neighbour, as the switch says it


class AcceptanceRun(Base):
    """One acceptance run: its job, the GPUs it held from admission to its end, and its cost."""

    __tablename__ = "acceptance_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), unique=True)
    name: Mapped[str] = mapped_column(String(63))
    team: Mapped[str] = mapped_column(String(63), index=True)
    queue: Mapped[str] = mapped_column(String(253))
    pool: Mapped[str] = mapped_column(String(63))
    pods: Mapped[int] = mapped_column(Integer)
    gpus: Mapped[int] = mapped_column(Integer)
    started: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    finished: Mapped[datetime] = mapped_column(UTCDateTime())
    outcome: Mapped[str] = mapped_column(String(16))
    units: Mapped[float] = mapped_column(Float)
    verdict: Mapped[str] = mapped_column(String(8))
    queue_wait_s: Mapped[float | None] = mapped_column(Float)
    cost_total: Mapped[float | None] = mapped_column(Float)
    cost_per_unit: Mapped[float | None] = mapped_column(Float)
    currency: Mapped[str] = mapped_column(String(8))

    steps: Mapped[list[AcceptanceStep]] = relationship(
        order_by="AcceptanceStep.position", passive_deletes=True
    )


class AcceptanceStep(Base):
    """One of an acceptance run's seven rows, in the one result shape."""

    __tablename__ = "acceptance_steps"
    __table_args__ = (
        UniqueConstraint("acceptance_run_id", "position", name="uq_acceptance_steps_run_position"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    acceptance_run_id: Mapped[int] = mapped_column(ForeignKey("acceptance_runs.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    result: Mapped[dict[str, Any]] = mapped_column(JsonType)
    check_id: Mapped[str] = mapped_column(String(128))
    verdict: Mapped[str] = mapped_column(String(8))


class RunResult(Base):
    """One result of a run about the cluster rather than a node (`gpurack conformance`), in the
    one result shape, in the run's order."""

    __tablename__ = "run_results"
    __table_args__ = (UniqueConstraint("run_id", "position", name="uq_run_results_run_position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    check_id: Mapped[str] = mapped_column(String(128))
    verdict: Mapped[str] = mapped_column(String(8))
    result: Mapped[dict[str, Any]] = mapped_column(JsonType)


class NodePatch(Base):
    """What one patch run did to one node: its outcome, the steps' times, kernel and driver before
    and after, and the validation gate's verdict (the node's last `gpurack_patch` fact)."""

    __tablename__ = "node_patches"
    __table_args__ = (
        UniqueConstraint("run_id", "node_id", name="uq_node_patches_run_node"),
        Index("ix_node_patches_node_run", "node_id", "run_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    node_id: Mapped[int] = mapped_column(ForeignKey("nodes.id", ondelete="CASCADE"))
    outcome: Mapped[str | None] = mapped_column(String(16))
    # Text, not String(n): what a host reported is stored whole on PostgreSQL too.
    k8s_node: Mapped[str | None] = mapped_column(Text)
    reason: Mapped[str | None] = mapped_column(Text)
    drain_s: Mapped[float | None] = mapped_column(Float)
    update_s: Mapped[float | None] = mapped_column(Float)
    reboot_s: Mapped[float | None] = mapped_column(Float)
    validation_s: Mapped[float | None] = mapped_column(Float)
    kernel_before: Mapped[str | None] = mapped_column(Text)
    kernel_after: Mapped[str | None] = mapped_column(Text)
    driver_before: Mapped[str | None] = mapped_column(Text)
    driver_after: Mapped[str | None] = mapped_column(Text)
    rebooted: Mapped[bool | None] = mapped_column(Boolean)
    validation: Mapped[str | None] = mapped_column(String(8))
    maintenance_run: Mapped[str | None] = mapped_column(Text)
