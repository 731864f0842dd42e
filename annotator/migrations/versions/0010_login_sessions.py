"""login sessions: one row per login in a browser (user, hashes of its token and one-time ticket,
created, last seen, absolute expiry, revoked when and why); settings: values an admin sets by name

Revision ID: 0010
Revises: 0009
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel
import annotator.models


revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    text = sqlmodel.sql.sqltypes.AutoString()
    op.create_table('login_session',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_pk', sa.Integer(), nullable=False),
    sa.Column('token_sha256', text, nullable=True),
    sa.Column('ticket_sha256', text, nullable=True),
    sa.Column('ticket_expires_at', annotator.models.UTCDateTime(), nullable=True),
    sa.Column('created_at', annotator.models.UTCDateTime(), nullable=False),
    sa.Column('last_seen_at', annotator.models.UTCDateTime(), nullable=False),
    sa.Column('expires_at', annotator.models.UTCDateTime(), nullable=False),
    sa.Column('revoked_at', annotator.models.UTCDateTime(), nullable=True),
    sa.Column('revoked_reason', text, nullable=True),
    sa.ForeignKeyConstraint(['user_pk'], ['user.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('ticket_sha256'),
    sa.UniqueConstraint('token_sha256')
    )
    op.create_index(op.f('ix_login_session_expires_at'), 'login_session', ['expires_at'], unique=False)
    op.create_index(op.f('ix_login_session_user_pk'), 'login_session', ['user_pk'], unique=False)
    op.create_table('setting',
    sa.Column('name', text, nullable=False),
    sa.Column('value', sa.JSON(), nullable=False),
    sa.Column('updated_at', annotator.models.UTCDateTime(), nullable=False),
    sa.Column('updated_by_pk', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['updated_by_pk'], ['user.id'], ),
    sa.PrimaryKeyConstraint('name')
    )


def downgrade() -> None:
    op.drop_table('setting')
    op.drop_index(op.f('ix_login_session_user_pk'), table_name='login_session')
    op.drop_index(op.f('ix_login_session_expires_at'), table_name='login_session')
    op.drop_table('login_session')
