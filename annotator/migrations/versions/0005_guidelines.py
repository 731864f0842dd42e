"""guidelines: published versions of the labeling guideline

Revision ID: 0005
Revises: 0004
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel
import annotator.models


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('guideline',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('version', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('markdown', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('sha256', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('published_at', annotator.models.UTCDateTime(), nullable=False),
    sa.Column('published_by', sa.Integer(), nullable=False),
    sa.CheckConstraint("version <> ''", name='ck_guideline_version_not_empty'),
    sa.ForeignKeyConstraint(['published_by'], ['user.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_guideline_version'), 'guideline', ['version'], unique=True)


def downgrade() -> None:
    op.drop_index(op.f('ix_guideline_version'), table_name='guideline')
    op.drop_table('guideline')
