"""Record where each server NIC is cabled: switch_links, one row per node NIC per fabric run.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "switch_links",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("node_id", sa.Integer, sa.ForeignKey("nodes.id", ondelete="CASCADE"), nullable=False),
        sa.Column("nic", sa.String(64), nullable=False),
        sa.Column("switch", sa.String(255)),
        sa.Column("port", sa.String(64)),
        sa.Column("neighbor", sa.Text),
        sa.UniqueConstraint("run_id", "node_id", "nic", name="uq_switch_links_run_node_nic"),
        sa.Index("ix_switch_links_node_run", "node_id", "run_id"),
    )


def downgrade() -> None:
    op.drop_table("switch_links")
