"""judge runs: each run's dataset, note, creator and source file (name, SHA-256); each judge
label's confidence and rationale

Revision ID: 0008
Revises: 0007
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    text = sqlmodel.sql.sqltypes.AutoString()
    with op.batch_alter_table('judgerun', schema=None) as batch_op:
        batch_op.add_column(sa.Column('dataset_pk', sa.Integer(), nullable=True))
        for name in ('note', 'creator', 'source_name', 'source_sha256'):
            batch_op.add_column(sa.Column(name, text, nullable=False, server_default=''))
        batch_op.create_foreign_key('fk_judgerun_dataset_pk_dataset', 'dataset', ['dataset_pk'], ['id'])
        batch_op.create_index('ix_judgerun_dataset_pk', ['dataset_pk'], unique=False)
    with op.batch_alter_table('judgelabel', schema=None) as batch_op:
        batch_op.add_column(sa.Column('confidence', sa.Float(), nullable=True))
        batch_op.add_column(sa.Column('rationale', text, nullable=False, server_default=''))
    with op.batch_alter_table('judgerun', schema=None) as batch_op:
        for name in ('note', 'creator', 'source_name', 'source_sha256'):
            batch_op.alter_column(name, server_default=None)
    with op.batch_alter_table('judgelabel', schema=None) as batch_op:
        batch_op.alter_column('rationale', server_default=None)


def downgrade() -> None:
    with op.batch_alter_table('judgelabel', schema=None) as batch_op:
        batch_op.drop_column('rationale')
        batch_op.drop_column('confidence')
    with op.batch_alter_table('judgerun', schema=None) as batch_op:
        batch_op.drop_index('ix_judgerun_dataset_pk')
        batch_op.drop_constraint('fk_judgerun_dataset_pk_dataset', type_='foreignkey')
        for name in ('source_sha256', 'source_name', 'creator', 'note'):
            batch_op.drop_column(name)
        batch_op.drop_column('dataset_pk')
