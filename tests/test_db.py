"""The database layer: URL choice, SQLite settings, migrations that match the models."""

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text
from sqlmodel import SQLModel

import annotator.models  # noqa: F401 - registers the tables
from annotator.db import init_db, make_engine, resolve_url
from annotator.errors import DatabaseUnavailableError


def test_the_url_comes_from_the_argument_then_the_environment_then_the_default(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert resolve_url(None) == "sqlite:///data/annotator.db"
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:p@h/db")
    assert resolve_url(None) == "postgresql+psycopg://u:p@h/db"
    assert resolve_url("sqlite:///x.db") == "sqlite:///x.db"


def test_sqlite_runs_in_wal_mode_with_foreign_keys_and_a_busy_timeout(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'a.db'}")
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


def _head() -> str:
    from alembic.script import ScriptDirectory

    from annotator.db import alembic_config

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def test_init_twice_is_harmless(sqlite_url):
    init_db(sqlite_url).dispose()
    engine = init_db(sqlite_url)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() == _head() != "0001"


def test_a_database_of_the_first_schema_is_upgraded_keeping_its_users(any_db_url):
    from alembic import command

    from annotator.db import alembic_config

    command.upgrade(alembic_config(any_db_url), "0001")
    engine = make_engine(any_db_url)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO \"user\" (name, roles, active, failed_logins, created_at) "
            "VALUES ('old', 'labeler', true, 2, '2026-01-01 00:00:00')")
    engine.dispose()
    engine = init_db(any_db_url)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT name FROM \"user\"").scalar() == "old"
        row = connection.exec_driver_sql("SELECT name, failed_logins, locked_until FROM login_throttle").one()
        assert tuple(row) == ("old", 2, None)  # the login delay moved from the user to the typed name
        assert connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() == _head()


def test_assignments_made_before_the_queue_order_columns_get_their_case_s_dataset_and_position(any_db_url):
    from alembic import command

    from annotator.db import alembic_config, session_scope
    from annotator.services.labeling import assigned_claims
    from annotator.services.users import get_user
    command.upgrade(alembic_config(any_db_url), "0006")
    engine = make_engine(any_db_url)
    with engine.begin() as connection:  # three cases made out of their queue order, each with one claim
        connection.exec_driver_sql(
            "INSERT INTO \"user\" (name, roles, active, created_at) VALUES ('alice', 'labeler', true, '2026-01-01')")
        connection.exec_driver_sql(
            "INSERT INTO dataset (name, source_format, created_at) VALUES ('old', 'jsonl', '2026-01-01')")
        for case_id, position in (("late", 7), ("early", 2), ("middle", 5)):
            connection.exec_driver_sql(
                "INSERT INTO \"case\" (dataset_id, case_id, position, question, answer, slice, split, created_at, "
                f"updated_at) VALUES (1, '{case_id}', {position}, '', '', '', '', '2026-01-01', '2026-01-01')")
            connection.exec_driver_sql(
                "INSERT INTO claim (dataset_id, case_pk, claim_id, position, text, created_at, updated_at) SELECT 1, id, "
                f"'{case_id}-c1', 0, '', '2026-01-01', '2026-01-01' FROM \"case\" WHERE case_id = '{case_id}'")
            connection.exec_driver_sql(
                "INSERT INTO assignment (case_pk, labeler_pk, created_at) SELECT id, 1, '2026-01-01' "
                f"FROM \"case\" WHERE case_id = '{case_id}'")
    engine.dispose()
    engine = init_db(any_db_url)
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT c.case_id, a.dataset_id, a.case_position FROM assignment a JOIN \"case\" c ON c.id = a.case_pk "
            "ORDER BY c.case_id").all()
        assert [tuple(row) for row in rows] == [("early", 1, 2), ("late", 1, 7), ("middle", 1, 5)]
    with session_scope(engine) as session:
        queue = assigned_claims(session, get_user(session, "alice"))
        claim_ids = {pk: claim_id for pk, claim_id in session.exec(text("SELECT id, claim_id FROM claim")).all()}
        assert [claim_ids[pk] for pk in queue] == ["early-c1", "middle-c1", "late-c1"]


@pytest.mark.parametrize("url, words", [
    ("garbage://url", "cannot use the database URL garbage://url"),
    ("mysql://x@localhost/db", "cannot use the database URL"),
    ("postgresql+psycopg://postgres@127.0.0.1:1/x", "cannot open the database"),
    ("/nonexistent-folder-for-annotator/x.db", "does not exist"),
])
def test_a_bad_database_url_is_a_clear_error(url, words):
    with pytest.raises(DatabaseUnavailableError) as refused:
        init_db(url)
    assert words in str(refused.value) and "DATABASE_URL" in str(refused.value)


def test_a_folder_or_a_non_database_file_is_refused(tmp_path):
    with pytest.raises(DatabaseUnavailableError, match="is a folder"):
        init_db(str(tmp_path))
    junk = tmp_path / "notes.txt"
    junk.write_text("hello", encoding="utf-8")
    with pytest.raises(DatabaseUnavailableError, match="cannot open the database"):
        init_db(str(junk))


def test_a_plain_path_names_a_sqlite_file(tmp_path):
    assert resolve_url(str(tmp_path / "a.db")) == f"sqlite:///{tmp_path / 'a.db'}"
    init_db(str(tmp_path / "a.db")).dispose()
    assert (tmp_path / "a.db").exists()


@pytest.mark.parametrize("content", ["empty", "foreign"])
def test_a_command_that_must_not_create_refuses_an_empty_or_foreign_sqlite_file_unchanged(tmp_path, content):
    import sqlite3

    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        if content == "foreign":
            connection.execute("CREATE TABLE foo (x INTEGER)")
    before = path.read_bytes()
    with pytest.raises(DatabaseUnavailableError, match="not an annotator database"):
        init_db(f"sqlite:///{path}", create=False)
    assert path.read_bytes() == before


@pytest.mark.postgres
def test_an_empty_postgresql_database_is_refused_unless_created(postgres_url):
    with pytest.raises(DatabaseUnavailableError, match="annotator init"):
        init_db(postgres_url, create=False)
    init_db(postgres_url, create=True).dispose()
    init_db(postgres_url, create=False).dispose()


@pytest.mark.parametrize("versions", [[], ["abc123"]])
def test_another_alembic_application_s_database_is_refused_unchanged(tmp_path, versions):
    import sqlite3

    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE widgets (x INTEGER)")
        connection.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
        connection.executemany("INSERT INTO alembic_version VALUES (?)", [(v,) for v in versions])
    before = path.read_bytes()
    with pytest.raises(DatabaseUnavailableError, match="not an annotator database"):
        init_db(f"sqlite:///{path}", create=False)
    assert path.read_bytes() == before
    if versions:  # an unknown revision is refused even by a command that may create a database
        with pytest.raises(DatabaseUnavailableError, match="newer annotator"):
            init_db(f"sqlite:///{path}", create=True)


def test_an_in_memory_database_is_no_project():
    with pytest.raises(DatabaseUnavailableError, match="in-memory"):
        init_db("sqlite:///:memory:", create=False)


def test_a_locked_sqlite_database_is_a_clear_error_and_nothing_is_written(sqlite_url):
    import sqlite3

    from sqlmodel import select

    from annotator.db import session_scope
    from annotator.errors import DatabaseBusyError
    from annotator.models import Dataset

    engine = init_db(sqlite_url)
    engine.dispose()
    engine = make_engine(sqlite_url)
    with engine.connect() as connection:
        connection.exec_driver_sql("PRAGMA busy_timeout = 1")
    blocker = sqlite3.connect(sqlite_url.split(":///", 1)[1], isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        with pytest.raises(DatabaseBusyError, match="Try again"):
            with session_scope(engine) as session:
                session.connection().exec_driver_sql("PRAGMA busy_timeout = 1")
                session.add(Dataset(name="x", source_format="test"))
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    with session_scope(engine) as session:
        assert session.exec(select(Dataset)).all() == []


def test_a_read_scope_does_not_block_a_writer(sqlite_url):
    from sqlmodel import select

    from annotator.db import read_scope, session_scope
    from annotator.models import Dataset

    engine = init_db(sqlite_url)
    with read_scope(engine) as reader:
        assert reader.exec(select(Dataset)).all() == []  # the read transaction is open
        with session_scope(engine) as writer:  # would wait for the busy timeout behind BEGIN IMMEDIATE
            writer.add(Dataset(name="written-meanwhile", source_format="test"))
    with read_scope(engine) as reader:
        assert [d.name for d in reader.exec(select(Dataset))] == ["written-meanwhile"]


BUSY = "the app is busy: every database connection stayed in use for 1 second; nothing was saved. Try again in a moment"


def test_a_session_that_waits_too_long_for_a_connection_is_told_the_app_is_busy_and_the_next_one_works(any_db_url, monkeypatch):
    import annotator.db as db
    from annotator.errors import ConnectionsBusyError

    init_db(any_db_url).dispose()
    monkeypatch.setattr(db, "POOL_SIZE", 1)
    monkeypatch.setattr(db, "POOL_MAX_OVERFLOW", 0)
    monkeypatch.setattr(db, "POOL_TIMEOUT_SECONDS", 1)
    engine = make_engine(any_db_url)
    try:
        with engine.connect():  # the pool's only connection stays in use
            for scope in (db.session_scope, db.read_scope):
                with pytest.raises(ConnectionsBusyError) as busy, scope(engine) as session:
                    session.exec(text("SELECT 1"))
                assert str(busy.value) == BUSY and busy.value.key == "msg.database_connections_busy"
        with db.session_scope(engine) as session:  # the connection came back: the app goes on by itself
            assert session.exec(text("SELECT 1")).one() == (1,)
    finally:
        engine.dispose()
