"""login delay: users.locked_until

Revision ID: 0002
Revises: 0001
"""

from alembic import op
import sqlalchemy as sa
import annotator.models


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.add_column(sa.Column('locked_until', annotator.models.UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.drop_column('locked_until')
