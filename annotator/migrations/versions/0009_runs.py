"""runs: a RAG system's runs over a dataset's cases (name, dataset, meta, note, creator, source
file, counts) and what each did with each case (retrieved, behaviour, answer, cited, claims)

Revision ID: 0009
Revises: 0008
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel
import annotator.models


revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    text = sqlmodel.sql.sqltypes.AutoString()
    op.create_table('run',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', text, nullable=False),
    sa.Column('dataset_pk', sa.Integer(), nullable=False),
    sa.Column('meta', sa.JSON(), nullable=True),
    sa.Column('note', text, nullable=False),
    sa.Column('creator', text, nullable=False),
    sa.Column('source_name', text, nullable=False),
    sa.Column('source_sha256', text, nullable=False),
    sa.Column('n_cases', sa.Integer(), nullable=False),
    sa.Column('n_unknown_retrieved', sa.Integer(), nullable=False),
    sa.Column('created_at', annotator.models.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['dataset_pk'], ['dataset.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_index(op.f('ix_run_dataset_pk'), 'run', ['dataset_pk'], unique=False)
    op.create_table('runcase',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_pk', sa.Integer(), nullable=False),
    sa.Column('case_pk', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('line', sa.Integer(), nullable=False),
    sa.Column('retrieved', sa.JSON(), nullable=True),
    sa.Column('behavior', text, nullable=False),
    sa.Column('answer', text, nullable=True),
    sa.Column('cited', sa.JSON(), nullable=True),
    sa.Column('claims', sa.JSON(), nullable=True),
    sa.ForeignKeyConstraint(['case_pk'], ['case.id'], ),
    sa.ForeignKeyConstraint(['run_pk'], ['run.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('run_pk', 'case_pk')
    )
    op.create_index(op.f('ix_runcase_run_pk'), 'runcase', ['run_pk'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_runcase_run_pk'), table_name='runcase')
    op.drop_table('runcase')
    op.drop_index(op.f('ix_run_dataset_pk'), table_name='run')
    op.drop_table('run')
