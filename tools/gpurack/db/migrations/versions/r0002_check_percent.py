"""Keep a measured check's share of its limit: check_results.percent.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("check_results") as batch:
        batch.add_column(sa.Column("percent", sa.Float))


def downgrade() -> None:
    # Batch mode: older SQLite cannot DROP COLUMN, so Alembic rebuilds the table there.
    with op.batch_alter_table("check_results") as batch:
        batch.drop_column("percent")
