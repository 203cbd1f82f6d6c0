"""Record what each patch run did to each node: node_patches, one row per node per run.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "node_patches",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("node_id", sa.Integer, sa.ForeignKey("nodes.id", ondelete="CASCADE"), nullable=False),
        sa.Column("outcome", sa.String(16)),
        sa.Column("k8s_node", sa.Text),
        sa.Column("reason", sa.Text),
        sa.Column("drain_s", sa.Float),
        sa.Column("update_s", sa.Float),
        sa.Column("reboot_s", sa.Float),
        sa.Column("validation_s", sa.Float),
        sa.Column("kernel_before", sa.Text),
        sa.Column("kernel_after", sa.Text),
        sa.Column("driver_before", sa.Text),
        sa.Column("driver_after", sa.Text),
        sa.Column("rebooted", sa.Boolean),
        sa.Column("validation", sa.String(8)),
        sa.Column("maintenance_run", sa.Text),
        sa.UniqueConstraint("run_id", "node_id", name="uq_node_patches_run_node"),
        sa.Index("ix_node_patches_node_run", "node_id", "run_id"),
    )


def downgrade() -> None:
    op.drop_table("node_patches")
