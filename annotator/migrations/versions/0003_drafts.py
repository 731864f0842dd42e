"""drafts: a labeler's unsaved input per claim

Revision ID: 0003
Revises: 0002
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel
import annotator.models


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('draft',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('labeler_pk', sa.Integer(), nullable=False),
    sa.Column('claim_pk', sa.Integer(), nullable=False),
    sa.Column('value', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('passage_ids', sa.JSON(), nullable=True),
    sa.Column('rationale', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('severity', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('updated_at', annotator.models.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['claim_pk'], ['claim.id'], ),
    sa.ForeignKeyConstraint(['labeler_pk'], ['user.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('labeler_pk', 'claim_pk')
    )


def downgrade() -> None:
    op.drop_table('draft')
