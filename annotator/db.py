"""Database engines and sessions. No engine exists at import time.

The database is chosen by an explicit URL (`--db`), else the `DATABASE_URL` environment
variable, else a SQLite file under `data/` in the current folder. SQLite runs in WAL mode with a
busy timeout and foreign keys on; PostgreSQL is reached with `postgresql+psycopg://...`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlmodel import Session, create_engine

DEFAULT_SQLITE_PATH = Path("data") / "annotator.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000


def resolve_url(url: str | None = None) -> str:
    """The database URL to use: `url`, else `DATABASE_URL`, else the default SQLite file.

    A bare `postgresql://` URL is given the psycopg (v3) driver.
    """
    chosen = url or os.environ.get("DATABASE_URL") or f"sqlite:///{DEFAULT_SQLITE_PATH}"
    if chosen.startswith("postgresql://") or chosen.startswith("postgres://"):
        chosen = "postgresql+psycopg://" + chosen.split("://", 1)[1]
    return chosen


def _configure_sqlite(dbapi_connection, _record) -> None:  # noqa: ANN001 - DB-API objects
    dbapi_connection.isolation_level = None  # SQLAlchemy's "begin" event below issues BEGIN
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def make_engine(url: str | None = None) -> Engine:
    """Create an engine for `url` (see `resolve_url`); SQLite files get their folder created."""
    resolved = resolve_url(url)
    if resolved.startswith("sqlite"):
        path = resolved.split(":///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            resolved,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
        )
        event.listen(engine, "connect", _configure_sqlite)
        # SQLite's own BEGIN is deferred; take the write lock at BEGIN to avoid upgrade deadlocks.
        event.listen(engine, "begin", lambda conn: conn.exec_driver_sql("BEGIN IMMEDIATE"))
        return engine
    return create_engine(resolved, pool_pre_ping=True)


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """A session whose work is one transaction: committed on success, rolled back on error."""
    with Session(engine, expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise



ANALYZED_TABLES = ("case", "claim", "passage", "claimpassage", "label", "adjudication", "assignment", "hold", "user")


def refresh_statistics(session: Session) -> None:
    """After a bulk write, refresh PostgreSQL's planner statistics of the workflow tables.

    PostgreSQL plans queue queries from table statistics; right after thousands of rows land
    (and where autovacuum is off or has not run yet) stale statistics give plans hundreds of
    times slower. ANALYZE runs inside the caller's transaction. SQLite needs nothing here.
    """
    if session.get_bind().dialect.name == "postgresql":
        for table in ANALYZED_TABLES:
            session.exec(text(f'ANALYZE "{table}"'))


def alembic_config(url: str | None = None):  # noqa: ANN201 - alembic.config.Config
    """The Alembic configuration for the package's migrations, aimed at `url`."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    config.set_main_option("sqlalchemy.url", resolve_url(url))
    return config


def init_db(url: str | None = None) -> Engine:
    """Create or migrate the database at `url` to the newest schema; returns its engine."""
    from alembic import command

    engine = make_engine(url)
    config = alembic_config(url)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
    return engine
