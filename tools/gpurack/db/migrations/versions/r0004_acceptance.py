"""Record acceptance runs: acceptance_runs (the job, its GPUs' allocation, its cost) and
acceptance_steps (its seven rows, each the whole result as JSON beside its id and verdict).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

# As r0001: a migration keeps its own column types, not the models' (they may change later).
_JSON = sa.JSON().with_variant(JSONB(), "postgresql")
_TS = sa.DateTime(timezone=True)

revision = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "acceptance_runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, unique=True
        ),
        sa.Column("name", sa.String(63), nullable=False),
        sa.Column("team", sa.String(63), nullable=False, index=True),
        sa.Column("queue", sa.String(253), nullable=False),
        sa.Column("pool", sa.String(63), nullable=False),
        sa.Column("pods", sa.Integer, nullable=False),
        sa.Column("gpus", sa.Integer, nullable=False),
        sa.Column("started", _TS, nullable=False, index=True),
        sa.Column("finished", _TS, nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("units", sa.Float, nullable=False),
        sa.Column("verdict", sa.String(8), nullable=False),
        sa.Column("queue_wait_s", sa.Float),
        sa.Column("cost_total", sa.Float),
        sa.Column("cost_per_unit", sa.Float),
        sa.Column("currency", sa.String(8), nullable=False),
    )
    op.create_table(
        "acceptance_steps",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "acceptance_run_id",
            sa.Integer,
            sa.ForeignKey("acceptance_runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("result", _JSON, nullable=False),
        sa.Column("check_id", sa.String(128), nullable=False),
        sa.Column("verdict", sa.String(8), nullable=False),
        sa.UniqueConstraint("acceptance_run_id", "position", name="uq_acceptance_steps_run_position"),
    )


def downgrade() -> None:
    op.drop_table("acceptance_steps")
    op.drop_table("acceptance_runs")
