"""queue order: each assignment carries its case's dataset and position, indexed with the labeler;
passages indexed by document

A labeler's queue (their assigned cases' claims, in case order, then claim order) is read from
ix_assignment_queue and ix_claim_case_order in order, instead of sorting every assigned claim. ix_passage_document finds
the other versions of a shown passage's document in its dataset.

Revision ID: 0007
Revises: 0006
"""

from alembic import op
import sqlalchemy as sa


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('assignment', schema=None) as batch_op:
        batch_op.add_column(sa.Column('dataset_id', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('case_position', sa.Integer(), nullable=False, server_default='0'))
    assignment = sa.table('assignment', sa.column('case_pk'), sa.column('dataset_id'), sa.column('case_position'))
    case = sa.table('case', sa.column('id'), sa.column('dataset_id'), sa.column('position'))
    of_case = case.c.id == assignment.c.case_pk
    op.execute(assignment.update().values(
        dataset_id=sa.select(case.c.dataset_id).where(of_case).scalar_subquery(),
        case_position=sa.select(case.c.position).where(of_case).scalar_subquery(),
    ))
    with op.batch_alter_table('assignment', schema=None) as batch_op:
        batch_op.alter_column('dataset_id', server_default=None)
        batch_op.alter_column('case_position', server_default=None)
        batch_op.create_index('ix_assignment_queue', ['labeler_pk', 'dataset_id', 'case_position', 'case_pk'], unique=True)
    with op.batch_alter_table('claim', schema=None) as batch_op:
        batch_op.create_index('ix_claim_case_order', ['case_pk', 'position', 'id'], unique=False)
    with op.batch_alter_table('passage', schema=None) as batch_op:
        batch_op.create_index('ix_passage_document', ['dataset_id', 'doc_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('passage', schema=None) as batch_op:
        batch_op.drop_index('ix_passage_document')
    with op.batch_alter_table('claim', schema=None) as batch_op:
        batch_op.drop_index('ix_claim_case_order')
    with op.batch_alter_table('assignment', schema=None) as batch_op:
        batch_op.drop_index('ix_assignment_queue')
        batch_op.drop_column('case_position')
        batch_op.drop_column('dataset_id')
