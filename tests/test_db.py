"""The database layer: URL choice, SQLite settings, migrations that match the models."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

import annotator.models  # noqa: F401 - registers the tables
from annotator.db import init_db, make_engine, resolve_url


def test_the_url_comes_from_the_argument_then_the_environment_then_the_default(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert resolve_url(None) == "sqlite:///data/annotator.db"
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:p@h/db")
    assert resolve_url(None) == "postgresql+psycopg://u:p@h/db"
    assert resolve_url("sqlite:///x.db") == "sqlite:///x.db"


def test_sqlite_runs_in_wal_mode_with_foreign_keys_and_a_busy_timeout(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'nested' / 'a.db'}")
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000


def test_the_migrations_create_exactly_the_tables_of_the_models(any_db_url):
    engine = init_db(any_db_url)
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), SQLModel.metadata)
    engine.dispose()
    assert differences == []


def test_init_twice_is_harmless(sqlite_url):
    init_db(sqlite_url).dispose()
    engine = init_db(sqlite_url)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() == "0001"
