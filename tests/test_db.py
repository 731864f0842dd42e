"""The database layer: URL choice, SQLite settings, migrations that match the models."""

from pathlib import Path

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


def test_the_revisions_read_from_the_scripts_are_alembics():
    from alembic.script import ScriptDirectory

    from annotator.db import _known_revisions, alembic_config, head_revisions

    scripts = ScriptDirectory.from_config(alembic_config())
    assert head_revisions() == set(scripts.get_heads()) == {_head()}
    assert _known_revisions() == {script.revision for script in scripts.walk_revisions()}
    assert len(_known_revisions()) >= 10


def test_a_database_at_the_newest_schema_opens_without_alembic(tmp_path):
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'a.db'}"
    init_db(url).dispose()
    code = ("import sys\n"
            "from annotator.db import init_db\n"
            f"init_db({url!r}, create=False).dispose()\n"
            "print(sorted(name for name in sys.modules if name.split('.')[0] == 'alembic'))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


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


def test_the_login_session_migration_adds_its_tables_to_a_database_in_use_and_downgrades_without_them(any_db_url):
    from alembic import command
    from sqlalchemy import inspect

    from annotator.db import alembic_config, session_scope
    from annotator.services import login_sessions
    from annotator.services.access import OPERATOR
    from annotator.services.users import get_user

    command.upgrade(alembic_config(any_db_url), "0009")
    engine = make_engine(any_db_url)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO \"user\" (name, roles, active, created_at) VALUES ('alice', 'labeler', true, '2026-01-01')")
    engine.dispose()
    engine = init_db(any_db_url)
    with session_scope(engine) as session:  # the new tables work on the upgraded database
        started = login_sessions.start_session(session, get_user(session, "alice"))
        token = login_sessions.redeem_ticket(session, started.ticket).token
        login_sessions.set_session_settings(session, OPERATOR, idle_hours=2)
    with session_scope(engine) as session:
        assert login_sessions.resume(session, token).user_name == "alice"
    engine.dispose()
    command.downgrade(alembic_config(any_db_url), "0009")
    engine = make_engine(any_db_url)
    with engine.connect() as connection:
        tables = set(inspect(connection).get_table_names())
        assert "login_session" not in tables and "setting" not in tables
        assert connection.exec_driver_sql("SELECT name FROM \"user\"").scalar() == "alice"
    engine.dispose()
    init_db(any_db_url).dispose()  # and up again


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


# ------------------------------------------------------------------------------ a full disk

DISK_FULL = "the disk is full; nothing was saved. Free space and try again"


def _fill_up(engine) -> None:  # noqa: ANN001 - an Engine
    """Make the database full: SQLite may not grow by a page (PRAGMA max_page_count, per
    connection); PostgreSQL answers the next statement with disk_full (SQLSTATE 53100)."""
    from sqlalchemy import event

    if engine.dialect.name == "sqlite":
        engine.dispose()
        event.listen(engine, "connect", lambda connection, _record: connection.execute("PRAGMA max_page_count=1"))
    else:
        event.listen(engine, "before_cursor_execute", _answer_disk_full, retval=True)


def _answer_disk_full(connection, cursor, statement, parameters, context, executemany):  # noqa: ANN001, ANN202
    if statement.lstrip().upper().startswith("INSERT"):
        return "DO $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END $$", {}
    return statement, parameters


def test_a_full_disk_is_one_clear_error_and_nothing_of_the_transaction_lands(any_engine):
    from sqlmodel import select

    from annotator.db import session_scope
    from annotator.errors import DiskFullError
    from annotator.models import User

    _fill_up(any_engine)
    with pytest.raises(DiskFullError) as caught, session_scope(any_engine) as session:
        for n in range(200):
            session.add(User(name=f"user-{n}-" + "x" * 2000, roles="labeler"))
            session.flush()
    assert str(caught.value) == DISK_FULL and caught.value.key == "msg.db.disk_full"
    with session_scope(any_engine) as session:
        assert session.exec(select(User)).all() == []


def test_enospc_from_a_file_written_in_a_transaction_is_the_same_error(engine):
    import errno

    from annotator.db import session_scope
    from annotator.errors import DiskFullError

    with pytest.raises(DiskFullError, match="^the disk is full; nothing was saved"), session_scope(engine):
        raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(PermissionError), session_scope(engine):  # any other OSError is left as it is
        raise PermissionError(errno.EACCES, "Permission denied")


# ------------------------------------------------------------------------- a read-only database


def _read_only_sqlite(monkeypatch) -> None:  # noqa: ANN001
    """Connections SQLite opens from now on refuse writes (PRAGMA query_only), as a read-only
    file or folder does for a user without the rights (the tests run as root, where chmod does not)."""
    import annotator.db as annotator_db

    configure = annotator_db._configure_sqlite

    def read_only(connection, record):  # noqa: ANN001, ANN202
        configure(connection, record)
        connection.execute("PRAGMA query_only=1")

    monkeypatch.setattr(annotator_db, "_configure_sqlite", read_only)


def test_a_read_only_sqlite_database_says_it_cannot_be_written_not_how_to_write_a_url(sqlite_url, monkeypatch, tmp_path):
    from annotator.errors import DatabaseReadOnlyError

    init_db(sqlite_url).dispose()
    _read_only_sqlite(monkeypatch)
    with pytest.raises(DatabaseReadOnlyError) as caught:
        init_db(sqlite_url, create=False)
    path = tmp_path / "annotator.db"
    assert str(caught.value) == (
        f"the database {path} cannot be written: SQLite opened it read-only; nothing was saved. Let the user who runs "
        f"annotator write the file and its folder {tmp_path} (SQLite also writes annotator.db-wal and annotator.db-shm "
        "there), or give another --db / DATABASE_URL")
    assert "URL" not in str(caught.value).replace("DATABASE_URL", "")


@pytest.mark.parametrize("kind, words", [("file", "the file is read-only (permissions {mode} of {path})"),
                                         ("folder", "its folder is read-only (permissions {mode} of {path})")])
def test_a_read_only_sqlite_file_or_folder_is_named_with_its_permissions(sqlite_url, monkeypatch, tmp_path, kind, words):
    import os

    import annotator.db as annotator_db
    from annotator.db import session_scope
    from annotator.errors import DatabaseReadOnlyError
    from annotator.models import User

    engine = init_db(sqlite_url)
    engine.dispose()
    target = tmp_path / "annotator.db" if kind == "file" else tmp_path
    real_access = os.access
    monkeypatch.setattr(annotator_db.os, "access", lambda path, mode: False if Path(path) == target else real_access(path, mode))
    _read_only_sqlite(monkeypatch)
    engine = annotator_db.make_engine(sqlite_url)
    with pytest.raises(DatabaseReadOnlyError) as caught, session_scope(engine) as session:
        session.add(User(name="aoi", roles="labeler"))
    engine.dispose()
    assert words.format(mode=f"{target.stat().st_mode & 0o777:o}", path=target) in str(caught.value)


def test_a_read_only_postgresql_role_or_transaction_says_the_database_cannot_be_written(postgres_url):
    import uuid

    from sqlalchemy import create_engine

    from annotator.db import session_scope
    from annotator.errors import DatabaseReadOnlyError
    from annotator.models import User

    init_db(postgres_url).dispose()
    role = f"annotator_reader_{uuid.uuid4().hex[:8]}"
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE ROLE "{role}" LOGIN'))
        connection.execute(text(f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{role}"'))
    reader_url = postgres_url.replace("://postgres@", f"://{role}@")
    try:
        engine = init_db(reader_url, create=False)  # reading is allowed
        with pytest.raises(DatabaseReadOnlyError) as caught, session_scope(engine) as session:
            session.add(User(name="aoi", roles="labeler"))
        engine.dispose()
        assert str(caught.value).startswith(f"the database {postgres_url.replace('://postgres@', f'://{role}@')} "
                                            'cannot be written: permission denied for table user; nothing was saved.')
        with admin.connect() as connection:
            connection.execute(text(f'GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "{role}"'))
            connection.execute(text(f'ALTER ROLE "{role}" SET default_transaction_read_only = on'))
        engine = init_db(reader_url, create=False)
        with pytest.raises(DatabaseReadOnlyError, match="cannot be written: cannot execute INSERT in a read-only "
                                                        "transaction; nothing was saved"), session_scope(engine) as session:
            session.add(User(name="aoi", roles="labeler"))
        engine.dispose()
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP OWNED BY "{role}"'))
            connection.execute(text(f'DROP ROLE "{role}"'))
        admin.dispose()


# ------------------------------------------------------------------------------- file modes


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_a_new_sqlite_database_its_wal_shm_and_the_data_folder_are_private_to_their_owner(tmp_path, monkeypatch, umask):
    import os
    import stat

    from annotator.db import session_scope
    from annotator.models import User

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    previous = os.umask(umask)
    try:
        engine = init_db(None)  # the default file, data/annotator.db, in a data/ folder made for it
        with session_scope(engine) as session:
            session.add(User(name="aoi", roles="labeler"))
        modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in (tmp_path / "data").iterdir()}
        engine.dispose()
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700
    assert modes == {"annotator.db": 0o600, "annotator.db-wal": 0o600, "annotator.db-shm": 0o600}


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
