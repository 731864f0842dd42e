"""login throttle per typed name: the login delay moves from user to login_throttle

Revision ID: 0004
Revises: 0003
"""

from datetime import UTC, datetime

from alembic import op
import sqlalchemy as sa
import sqlmodel
import annotator.models


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('login_throttle',
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('failed_logins', sa.Integer(), nullable=False),
    sa.Column('locked_until', annotator.models.UTCDateTime(), nullable=True),
    sa.Column('last_failed_at', annotator.models.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('name')
    )
    op.create_index(op.f('ix_login_throttle_last_failed_at'), 'login_throttle', ['last_failed_at'], unique=False)
    now = datetime.now(UTC).replace(tzinfo=None)  # stored as naive UTC, as UTCDateTime stores it
    op.execute(sa.text(
        'INSERT INTO login_throttle (name, failed_logins, locked_until, last_failed_at) '
        'SELECT name, failed_logins, locked_until, :now FROM "user" '
        'WHERE failed_logins > 0 OR locked_until IS NOT NULL').bindparams(now=now))
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.drop_column('locked_until')
        batch_op.drop_column('failed_logins')


def downgrade() -> None:
    with op.batch_alter_table('user', schema=None) as batch_op:
        batch_op.add_column(sa.Column('failed_logins', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('locked_until', annotator.models.UTCDateTime(), nullable=True))
    op.execute(
        'UPDATE "user" SET failed_logins = (SELECT t.failed_logins FROM login_throttle t WHERE t.name = "user".name), '
        'locked_until = (SELECT t.locked_until FROM login_throttle t WHERE t.name = "user".name) '
        'WHERE name IN (SELECT name FROM login_throttle)')
    op.drop_index(op.f('ix_login_throttle_last_failed_at'), table_name='login_throttle')
    op.drop_table('login_throttle')
