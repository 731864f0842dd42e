"""Alembic environment: migrates the database whose engine or URL the caller passes in."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

import annotator.models  # noqa: F401  (registers the tables)
from annotator.db import make_engine

config = context.config
target_metadata = SQLModel.metadata


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(config.get_main_option("sqlalchemy.url"))
    with engine.connect() as connection:
        _run(connection)
    engine.dispose()


def _run(connection) -> None:  # noqa: ANN001
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported; pass a database URL")
run_migrations_online()
