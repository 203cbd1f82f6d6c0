"""Initial inventory schema: nodes, runs, snapshots and their GPUs, NICs, disks, check results.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")
_TS = sa.DateTime(timezone=True)


def _snapshot_fk() -> sa.Column[int]:
    return sa.Column(
        "snapshot_id",
        sa.Integer,
        sa.ForeignKey("snapshots.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    )


def upgrade() -> None:
    _nodes_and_runs()
    _snapshots()
    _hardware()
    _check_results()


def _nodes_and_runs() -> None:
    """The hosts and the gpurack invocations that saw them."""
    op.create_table(
        "nodes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("host", sa.String(255), nullable=False, unique=True),
        sa.Column("pool", sa.String(255)),
        sa.Column("first_seen", _TS, nullable=False),
        sa.Column("last_seen", _TS, nullable=False),
        sa.Column("k8s_node_name", sa.String(255)),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("started", _TS, nullable=False, index=True),
        sa.Column("finished", _TS),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("playbook", sa.Text),
        sa.Column("status", sa.String(32), nullable=False),
    )


def _snapshots() -> None:
    """What one node looked like in one run."""
    op.create_table(
        "snapshots",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True
        ),
        sa.Column("node_id", sa.Integer, sa.ForeignKey("nodes.id", ondelete="CASCADE"), nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("facts", _JSON, nullable=False),
        sa.Column("labels", _JSON, nullable=False),
        sa.Column("kernel", sa.String(255)),
        sa.Column("driver", sa.String(64)),
        sa.Column("cuda", sa.String(32)),
        sa.Column("verdict", sa.String(8)),
        sa.UniqueConstraint("run_id", "node_id", name="uq_snapshots_run_node"),
        sa.Index("ix_snapshots_node_run", "node_id", "run_id"),
    )


def _hardware() -> None:
    """A snapshot's GPUs, RDMA ports and NVMe disks."""
    op.create_table(
        "gpus",
        sa.Column("id", sa.Integer, primary_key=True),
        _snapshot_fk(),
        sa.Column("gpu_index", sa.Integer),
        sa.Column("bus_id", sa.String(32)),
        sa.Column("uuid", sa.String(64), index=True),
        sa.Column("serial", sa.String(64), index=True),
        sa.Column("name", sa.String(255)),
        sa.Column("vbios", sa.String(64)),
        sa.Column("memory_mib", sa.Integer),
        sa.Column("pcie_gen_current", sa.Integer),
        sa.Column("pcie_gen_max", sa.Integer),
        sa.Column("pcie_width_current", sa.Integer),
        sa.Column("pcie_width_max", sa.Integer),
    )
    op.create_table(
        "nics",
        sa.Column("id", sa.Integer, primary_key=True),
        _snapshot_fk(),
        sa.Column("device", sa.String(64), nullable=False),
        sa.Column("port", sa.Integer),
        sa.Column("guid", sa.String(64), index=True),
        sa.Column("fw", sa.String(64)),
        sa.Column("rate_gbps", sa.Float),
        sa.Column("state", sa.String(32)),
        sa.Column("phys_state", sa.String(32)),
        sa.Column("link_layer", sa.String(32)),
    )
    op.create_table(
        "disks",
        sa.Column("id", sa.Integer, primary_key=True),
        _snapshot_fk(),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("serial", sa.String(128), index=True),
        sa.Column("model", sa.String(255)),
        sa.Column("firmware", sa.String(64)),
        sa.Column("size_bytes", sa.BigInteger),
    )


def _check_results() -> None:
    """A snapshot's check results."""
    op.create_table(
        "check_results",
        sa.Column("id", sa.Integer, primary_key=True),
        _snapshot_fk(),
        sa.Column("check_id", sa.String(128), nullable=False, index=True),
        sa.Column("title", sa.Text),
        sa.Column("tier", sa.String(32)),
        sa.Column("component", sa.String(128)),
        sa.Column("verdict", sa.String(8), nullable=False),
        sa.Column("measured", _JSON),
        sa.Column("expected", _JSON),
        sa.Column("unit", sa.String(32)),
        sa.Column("reason", sa.Text),
        sa.Column("remediation", sa.Text),
        sa.Column("evidence", _JSON),
        sa.Column("limit_source", sa.Text),
    )


def downgrade() -> None:
    for table in ("check_results", "disks", "nics", "gpus", "snapshots", "runs", "nodes"):
        op.drop_table(table)
