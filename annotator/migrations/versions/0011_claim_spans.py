"""claim spans: where a claim is in its case's answer (start and end, in code points), None when
not known (every claim imported before, and claims of formats that do not say)

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('claim', schema=None) as batch_op:
        batch_op.add_column(sa.Column('span_start', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('span_end', sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('claim', schema=None) as batch_op:
        batch_op.drop_column('span_end')
        batch_op.drop_column('span_start')
