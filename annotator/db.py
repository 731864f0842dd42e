"""Database engines and sessions. No engine exists at import time.

The database is chosen by an explicit URL (`--db`), else the `DATABASE_URL` environment
variable, else a SQLite file under `data/` in the current folder. SQLite runs in WAL mode with a
busy timeout and foreign keys on; PostgreSQL is reached with `postgresql+psycopg://...`.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import event, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlmodel import Session, create_engine

from annotator.filemodes import create_private_file, make_private_folders
from annotator.messages import Message, msg, seconds
from annotator.errors import (ConnectionsBusyError, DatabaseBusyError, DatabaseReadOnlyError, DatabaseUnavailableError,
                              DiskFullError)

DEFAULT_SQLITE_PATH = Path("data") / "annotator.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000
POOL_SIZE, POOL_MAX_OVERFLOW = 20, 10
"""Connections an engine keeps, and how many more it opens at a peak (SQLite and PostgreSQL)."""
POOL_TIMEOUT_SECONDS = 10
"""How long a session waits for a free connection before ConnectionsBusyError ("busy, try again")."""


def resolve_url(url: str | None = None) -> str:
    """The database URL to use: `url`, else `DATABASE_URL`, else the default SQLite file.

    A plain path (no `scheme://`) names a SQLite file; a bare `postgresql://` URL is given the
    psycopg (v3) driver.
    """
    if url is not None and not url.strip():
        raise DatabaseUnavailableError("--db is empty; give a SQLite file path or a database URL")
    chosen = url or os.environ.get("DATABASE_URL") or f"sqlite:///{DEFAULT_SQLITE_PATH}"
    if "://" not in chosen:  # a plain path names a SQLite file
        chosen = f"sqlite:///{chosen}"
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


READ_ONLY = "annotator_read_only"
"""The execution option that marks a read_scope's connection."""


def _begin_sqlite(connection) -> None:  # noqa: ANN001 - a Connection
    read_only = connection.get_execution_options().get(READ_ONLY)
    connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def display_url(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url.split("@")[-1] if "@" in url else url


def _check_sqlite_path(resolved: str) -> None:
    """The default file's folder is created; a folder named by the user must exist already (a
    typing mistake must not quietly create an empty database elsewhere). A new database file is
    created private to its owner (annotator.filemodes), and so are the default folder and SQLite's
    -wal and -shm files beside it."""
    path = make_url(resolved).database  # None for "sqlite://", an in-memory database
    if not path or path == ":memory:":
        return
    target = Path(path)
    if target.is_dir():
        raise DatabaseUnavailableError(f"{path} is a folder, not a database file; name a file such as {target / 'annotator.db'}")
    if target == DEFAULT_SQLITE_PATH:
        make_private_folders(target.parent)
    elif not target.parent.is_dir():
        raise DatabaseUnavailableError(f"the folder {target.parent} of the database {path} does not exist; create it first or fix --db / DATABASE_URL")
    if not target.exists():
        try:  # before SQLite creates it 0644: its -wal and -shm files take its mode
            create_private_file(target)
        except OSError:
            pass  # SQLite's own open reports what is wrong (a read-only folder ...)


def make_engine(url: str | None = None) -> Engine:
    """Create an engine for `url` (see `resolve_url`). Raises DatabaseUnavailableError for a
    malformed URL, an unknown driver, or a SQLite file in a folder that does not exist."""
    resolved = resolve_url(url)
    try:
        return _make_engine(resolved)
    except (ArgumentError, NoSuchModuleError, ImportError) as error:
        raise DatabaseUnavailableError(f"cannot use the database URL {display_url(resolved)}: {error}. {URL_HELP}") from None


URL_HELP = ("Give --db or DATABASE_URL as a SQLite file path (data/annotator.db) or URL (sqlite:///path/to/file.db), "
            "or a PostgreSQL URL (postgresql+psycopg://user:password@host:5432/dbname)")


def _make_engine(resolved: str) -> Engine:
    if resolved.startswith("sqlite"):
        _check_sqlite_path(resolved)
        # The pool is as large as PostgreSQL's: a connection is only a file handle, and SQLite's
        # write lock, not the pool, makes writers take turns. With SQLAlchemy's default (5 + 10)
        # a burst of page runs waited for a connection and failed with a pool timeout.
        in_memory = make_url(resolved).database in (None, "", ":memory:")  # one connection (SingletonThreadPool): no pool to size
        pool = {} if in_memory else {"pool_size": POOL_SIZE, "max_overflow": POOL_MAX_OVERFLOW, "pool_timeout": POOL_TIMEOUT_SECONDS}
        engine = create_engine(
            resolved,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            **pool,
        )
        event.listen(engine, "connect", _configure_sqlite)
        # SQLite's own BEGIN is deferred; take the write lock at BEGIN to avoid upgrade deadlocks,
        # except in a read_scope, which only reads (WAL lets it read beside a writer).
        event.listen(engine, "begin", _begin_sqlite)
        return engine
    # Room for 16+ sessions at once (one per app user working): the default 5 + 10 left one of 16
    # writers waiting for a connection for seconds.
    return create_engine(resolved, pool_pre_ping=True, pool_size=POOL_SIZE, max_overflow=POOL_MAX_OVERFLOW,
                         pool_timeout=POOL_TIMEOUT_SECONDS)


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """A session whose work is one transaction: committed on success, rolled back on error.

    Raises DatabaseBusyError (nothing was written) when SQLite stays locked by another writer
    past its busy timeout, instead of the driver's "database is locked"; ConnectionsBusyError
    (nothing was written) when no connection of the pool came free within POOL_TIMEOUT_SECONDS,
    instead of SQLAlchemy's "QueuePool limit ... reached"; DiskFullError (nothing was written)
    when the disk is full (`is_disk_full`); DatabaseReadOnlyError (nothing was written) when the
    database cannot be written (`read_only_error`).
    """
    with Session(engine, expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except DBAPIError as error:
            session.rollback()
            if isinstance(error, OperationalError) and "database is locked" in str(error.orig):
                raise DatabaseBusyError.of("msg.database_busy") from None
            if is_disk_full(error):
                raise DiskFullError.of("msg.db.disk_full") from None
            refused = read_only_error(error, engine.url.render_as_string(hide_password=False))
            if refused is not None:
                raise refused from None
            raise
        except OSError as error:  # a file written inside the transaction
            session.rollback()
            if is_disk_full(error):
                raise DiskFullError.of("msg.db.disk_full") from None
            raise
        except PoolTimeoutError:
            session.rollback()
            raise _connections_busy() from None
        except BaseException:
            session.rollback()
            raise


def _connections_busy() -> ConnectionsBusyError:
    return ConnectionsBusyError.of("msg.database_connections_busy", wait=seconds(POOL_TIMEOUT_SECONDS))


_SQLITE_FULL = 13
"""SQLite's result code "database or disk is full" (https://www.sqlite.org/rescode.html#full)."""
_POSTGRES_DISK_FULL = "53100"
"""PostgreSQL's SQLSTATE disk_full (https://www.postgresql.org/docs/current/errcodes-appendix.html)."""


def is_disk_full(error: BaseException) -> bool:
    """Whether `error` says the disk is full: an OSError ENOSPC, SQLite's SQLITE_FULL ("database
    or disk is full", also when PRAGMA max_page_count is reached) or PostgreSQL's DiskFull
    (SQLSTATE 53100), raw from the driver or wrapped by SQLAlchemy; also an error raised while
    handling one (SQLite rolls the whole transaction back on SQLITE_FULL, so a ROLLBACK TO
    SAVEPOINT after it fails with "no such savepoint")."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        orig = getattr(error, "orig", None) or error
        if isinstance(orig, OSError) and orig.errno == errno.ENOSPC:
            return True
        if getattr(orig, "sqlite_errorcode", None) == _SQLITE_FULL or getattr(orig, "sqlstate", None) == _POSTGRES_DISK_FULL:
            return True
        error = error.__cause__ or error.__context__
    return False


_SQLITE_READONLY, _SQLITE_CANTOPEN = 8, 14
"""SQLite's primary result codes "attempt to write a readonly database" and "unable to open
database file" (extended codes keep them in their low byte)."""
_POSTGRES_READ_ONLY = {"25006", "42501"}
"""PostgreSQL's SQLSTATEs read_only_sql_transaction (a read-only role, transaction or standby)
and insufficient_privilege (no INSERT, UPDATE or CREATE right)."""


def read_only_error(error: DBAPIError, url: str) -> DatabaseReadOnlyError | None:
    """The error to raise when `error` (from the database at `url`) says the database cannot be
    written, naming why: for SQLite the permissions of the file or of its folder (SQLite also
    writes FILE-wal and FILE-shm there), else that it was opened read-only; for PostgreSQL the
    server's reason (a read-only role, transaction or standby server, a missing privilege).
    None when `error` is about something else."""
    orig = error.orig
    if url.startswith("sqlite"):
        code = (getattr(orig, "sqlite_errorcode", None) or 0) & 0xFF
        path = Path(url.split(":///", 1)[-1])
        if code == _SQLITE_READONLY or (code == _SQLITE_CANTOPEN and _sqlite_not_writable(path) is not None):
            return DatabaseReadOnlyError.of("msg.db.read_only_sqlite", path=str(path), folder=str(path.parent),
                                            name=path.name, reason=_sqlite_not_writable(path) or msg("msg.db.read_only.opened"))
        return None
    if getattr(orig, "sqlstate", None) in _POSTGRES_READ_ONLY:
        reason = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
        return DatabaseReadOnlyError.of("msg.db.read_only_postgres", url=display_url(url), reason=reason)
    return None


def _sqlite_not_writable(path: Path) -> Message | None:
    """Why the SQLite file at `path` cannot be written by this process (its permissions or its
    folder's), None when both allow writing."""
    for kind, target in (("file", path), ("folder", path.parent)):
        if target.exists() and not os.access(target, os.W_OK):
            return msg(f"msg.db.read_only.{kind}", path=str(target), mode=f"{target.stat().st_mode & 0o777:o}")
    return None


@contextmanager
def read_scope(engine: Engine) -> Iterator[Session]:
    """A session for reading only (reports, counts): on SQLite its transaction does not take the
    write lock, so a long report never makes labelers wait; it is rolled back at the end, so a
    write in it is lost. Use session_scope for anything that writes.
    Raises ConnectionsBusyError as session_scope does."""
    with Session(engine.execution_options(**{READ_ONLY: True}), expire_on_commit=False) as session:
        try:
            yield session
        except PoolTimeoutError:
            raise _connections_busy() from None
        finally:
            session.rollback()


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


_VERSIONS = "SELECT version_num FROM alembic_version"


def _schema_of(connection) -> tuple[list[str], list[str]]:  # noqa: ANN001 - a Connection
    """(table names, schema revisions recorded in alembic_version) of an open database."""
    from sqlalchemy import inspect

    tables = inspect(connection).get_table_names()
    versions = [row[0] for row in connection.exec_driver_sql(_VERSIONS)] if "alembic_version" in tables else []
    return tables, versions


def _sqlite_schema(path: str) -> tuple[list[str], list[str]] | None:
    """_schema_of a SQLite file, read without writing to it; None when it is not a database
    (opening it then names that problem)."""
    import sqlite3

    try:
        with closing(sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True)) as connection:
            tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            versions = [row[0] for row in connection.execute(_VERSIONS)] if "alembic_version" in tables else []
            return tables, versions
    except sqlite3.DatabaseError:
        return None


MIGRATIONS = Path(__file__).parent / "migrations" / "versions"


def _revisions() -> dict[str, tuple[str, ...]]:
    """Revision -> the revisions it follows (down_revision), of every migration script, read from
    the scripts' text as Alembic reads them, without importing Alembic (which takes longer than
    most commands' own work)."""
    import ast

    out = {}
    for script in MIGRATIONS.glob("*.py"):
        found = {}
        for node in ast.parse(script.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name) and target.id in ("revision", "down_revision"):
                        found[target.id] = ast.literal_eval(node.value)
        if "revision" in found:
            down = found.get("down_revision")
            out[found["revision"]] = () if down is None else (down,) if isinstance(down, str) else tuple(down)
    return out


def _known_revisions() -> set[str]:
    return set(_revisions())


def head_revisions() -> set[str]:
    """The newest schema revisions (Alembic's heads): those no other migration follows."""
    revisions = _revisions()
    followed = {down for downs in revisions.values() for down in downs}
    return set(revisions) - followed


def _require_annotator_tables(schema: tuple[list[str], list[str]], resolved: str) -> None:
    """DatabaseUnavailableError unless the database already holds annotator's tables at a schema
    revision this annotator knows, so that a command that must not create a database never turns
    an empty or foreign database into one (another Alembic application's database included)."""
    tables, versions = schema
    if "alembic_version" in tables and versions and set(versions) <= _known_revisions():
        return
    if "alembic_version" in tables:
        raise DatabaseUnavailableError(
            f"{display_url(resolved)} is not an annotator database this version knows (schema revision "
            f"{', '.join(versions) or 'none'}): another application's, or one made by a newer annotator. "
            "Check --db / DATABASE_URL, or upgrade annotator")
    what = f"holds other tables ({', '.join(sorted(tables)[:3])}{', ...' if len(tables) > 3 else ''})" if tables else "is empty"
    raise DatabaseUnavailableError(
        f"{display_url(resolved)} is not an annotator database: it {what}. Check --db / DATABASE_URL, "
        "or make it one with `annotator init`")


def init_db(url: str | None = None, *, create: bool = True) -> Engine:
    """Create or migrate the database at `url` to the newest schema; returns its engine.

    create: False refuses a SQLite file that does not exist yet, and any database (SQLite or
        PostgreSQL) that does not already hold annotator's tables: commands that only read or
        add to a database must not quietly make one where a path was mistyped. An annotator
        database of an older schema is still migrated.
    Raises DatabaseUnavailableError when the database cannot be opened or reached,
    DatabaseReadOnlyError (a DatabaseUnavailableError) when it cannot be written (see
    `read_only_error`), DiskFullError when the disk is full.
    """
    resolved = resolve_url(url)
    if not create and resolved.startswith("sqlite"):
        path = resolved.split(":///", 1)[-1]
        if path in ("", ":memory:"):
            raise DatabaseUnavailableError("an in-memory database holds no project: give a database file or URL")
        if not Path(path).exists():
            raise DatabaseUnavailableError(
                f"no database at {path}: create one with `annotator init --db {path}` (or `annotator demo`), "
                "or check the folder you are in and --db / DATABASE_URL")
        schema = _sqlite_schema(path) if Path(path).is_file() else None
        if schema is not None:
            _require_annotator_tables(schema, resolved)  # read-only: nothing is written before this check
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            schema = _schema_of(connection)
            if not create and not resolved.startswith("sqlite"):
                _require_annotator_tables(schema, resolved)
            if set(schema[1]) != head_revisions():  # at the newest schema there is nothing to migrate
                _upgrade(connection, url, resolved)
    except DBAPIError as error:
        engine.dispose()
        if is_disk_full(error):
            raise DiskFullError.of("msg.db.disk_full") from None
        refused = read_only_error(error, resolved)
        if refused is not None:
            raise refused from None
        reason = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
        raise DatabaseUnavailableError(f"cannot open the database {display_url(resolve_url(url))}: {reason}. {URL_HELP}") from None
    except DatabaseUnavailableError:
        engine.dispose()
        raise
    return engine


def _upgrade(connection, url: str | None, resolved: str) -> None:  # noqa: ANN001 - a Connection
    """Migrate the database of `connection` to the newest schema with Alembic. Raises
    DatabaseUnavailableError for a schema revision this annotator does not know."""
    from alembic import command
    from alembic.util.exc import CommandError

    config = alembic_config(url)
    config.attributes["connection"] = connection
    try:
        command.upgrade(config, "head")
    except CommandError as error:
        raise DatabaseUnavailableError(
            f"{display_url(resolved)} is not an annotator database this version knows ({error}): another "
            "application's, or one made by a newer annotator. Check --db / DATABASE_URL, or upgrade annotator") from None
