"""A consistent copy of the SQLite database, taken while the app runs.

SQLite's online backup API copies the database page by page through a read transaction, so the
copy is a snapshot of committed data, never a file caught half-way through a write (which a
plain `cp` of a database in WAL mode can be: the newest commits live in the `-wal` file).
PostgreSQL has its own tool for this, `pg_dump`; this module only says how to call it.

Source: SQLite, "Using the SQLite Online Backup API", https://www.sqlite.org/backup.html, and
the C reference of sqlite3_backup_init/step/finish, https://www.sqlite.org/c3ref/backup_finish.html
(Python: `sqlite3.Connection.backup`).
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from annotator.db import SQLITE_BUSY_TIMEOUT_MS, display_url, resolve_url
from annotator.durable import sync_folder
from annotator.filemodes import PRIVATE_FILE, private_mode
from annotator.errors import BackupFailedError, BackupTargetError, BackupUnsupportedError, DatabaseUnavailableError

PAGES_PER_STEP = 256
"""Pages copied per backup step (256 pages of 4 KiB = 1 MiB); the source is unlocked between steps."""
STEP_SLEEP_SECONDS = 0.005
"""Pause between steps, so that writers get the database between two reads."""
MAX_RESTARTS = 3
"""A commit by another connection between two steps restarts the copy from its first page (the
API's rule). After this many restarts the rest is copied in one step: one read transaction,
which in WAL mode (the app's mode) does not block writers either. Without this bound a busy app
could restart a large copy forever."""
SIDE_FILES = ("-wal", "-shm", "-journal")
"""SQLite's companion files of a database file `X`: `X-wal`, `X-shm`, `X-journal`."""


@dataclass(frozen=True)
class BackupResult:
    """What a backup wrote, counted in the copy itself."""

    path: Path                # the backup file, in place
    source: str               # the database URL, without password
    size_bytes: int
    claims: int               # rows of `claim` in the copy
    labels: int               # rows of `label` in the copy
    seconds: float            # wall time from the start of the copy to the rename
    steps: int                # backup steps taken (all passes)
    restarts: int             # passes restarted because another connection committed
    integrity: str            # PRAGMA integrity_check of the copy: "ok"


def backup_database(
    path: Path | str,
    db: str | None = None,
    *,
    force: bool = False,
    pages_per_step: int = PAGES_PER_STEP,
    step_sleep: float = STEP_SLEEP_SECONDS,
    max_restarts: int = MAX_RESTARTS,
    progress: Callable[[int, int], None] | None = None,
) -> BackupResult:
    """Copy the SQLite database `db` to the file `path`, consistently, while others write to it.

    path: the backup file to create; its folder must exist and be writable. It is written under a
        temporary name in that folder (`.NAME.*.tmp`), checked, and renamed into place, so `path`
        never holds a partial copy, even if the process is killed.
    db: `--db` as given (URL or plain path); None: DATABASE_URL, else the default file
        (`annotator.db.resolve_url`). Like every command but init/demo/import, a database that
        does not exist is refused, never created. The database is read as it is: no migration
        runs first (a backup taken before an upgrade must hold the old schema).
    force: replace an existing file at `path` (atomically).
    pages_per_step, step_sleep, max_restarts: pacing of the copy (see the module constants).
    progress: called after each step with (pages remaining, pages in total).
    Returns a BackupResult whose counts are read from the copy after PRAGMA integrity_check
    passed on it. The copy holds every row committed before its final step began; nothing
    committed later. It is a WAL-mode annotator database (`annotator status --db PATH` reads it).
    Raises BackupUnsupportedError for a PostgreSQL (or other non-SQLite) URL, with the pg_dump
    command to use; DatabaseUnavailableError when the database file does not exist, is an
    in-memory database, or is not an annotator SQLite database; BackupTargetError when `path`
    exists (without force), is the database or one of its side files, is a folder, its folder is
    missing or not writable, or a stale `-wal`/`-shm` file sits beside it; BackupFailedError when
    SQLite fails during the copy (disk full, I/O error, a damaged database) or the copy fails
    PRAGMA integrity_check. On any error `path` is left as it was (absent, or the old file) and
    the temporary file is removed; only a killed process leaves its hidden `.NAME.*.tmp` behind.
    Source: https://www.sqlite.org/backup.html (example 2, "online backup of a running database").
    """
    source = _sqlite_source(db, path)
    target = _check_target(Path(path), source, force)
    started = time.perf_counter()
    fd, tmp_name = _make_temp(target)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        steps, restarts = _copy(source, tmp, target, pages_per_step, step_sleep, max_restarts, progress)
        integrity, claims, labels = _check_copy(tmp)
        os.chmod(tmp, stat.S_IMODE(source.stat().st_mode) & private_mode(PRIVATE_FILE))  # never wider than the database
        _fsync(tmp)
        _move_into_place(tmp, target, force)
    except BaseException:
        _remove_with_side_files(tmp)
        raise
    try:
        sync_folder(target.parent)
    except OSError as error:
        raise BackupFailedError(f"the backup {target} was written, but its folder could not be synced to disk "
                                f"({error.strerror}); check the disk, then take the backup again") from error
    return BackupResult(
        path=target, source=display_url(resolve_url(db)), size_bytes=target.stat().st_size,
        claims=claims, labels=labels, seconds=time.perf_counter() - started,
        steps=steps, restarts=restarts, integrity=integrity,
    )


def pg_dump_hint(url: str, path: Path | str) -> str:
    """The pg_dump command that backs up the PostgreSQL database `url` to `path` (custom format,
    for pg_restore), built from the URL's parts, never with its password."""
    parsed = make_url(url)
    command = ["pg_dump", "--format=custom", f"--file={path}"]
    if parsed.host:
        command.append(f"--host={parsed.host}")
    if parsed.port:
        command.append(f"--port={parsed.port}")
    if parsed.username:
        command.append(f"--username={parsed.username}")
    command.append(parsed.database or "DBNAME")
    return shlex.join(command)


# --- the source --------------------------------------------------------------------------------


def _sqlite_source(db: str | None, path: Path | str) -> Path:
    resolved = resolve_url(db)
    try:
        parsed = make_url(resolved)
    except ArgumentError as error:
        raise DatabaseUnavailableError(f"cannot use the database URL {display_url(resolved)}: {error}") from None
    if parsed.get_backend_name() == "postgresql":
        raise BackupUnsupportedError(
            f"{display_url(resolved)} is a PostgreSQL database; `annotator backup` copies SQLite files only. "
            f"Use PostgreSQL's own tool: {pg_dump_hint(resolved, path)} "
            "(restore with pg_restore; the password comes from PGPASSWORD or ~/.pgpass)")
    if parsed.get_backend_name() != "sqlite":
        raise BackupUnsupportedError(
            f"{display_url(resolved)} is not a SQLite database; `annotator backup` copies SQLite files only, "
            "use the database's own backup tool")
    if not parsed.database or parsed.database == ":memory:":
        raise DatabaseUnavailableError("an in-memory database has no file to back up; give --db a SQLite file path")
    source = Path(parsed.database)
    if source.is_dir():
        raise DatabaseUnavailableError(f"{source} is a folder, not a database file; give --db the database file")
    if not source.is_file():
        raise DatabaseUnavailableError(
            f"no database at {source}: nothing to back up. Check --db / DATABASE_URL and the folder you are in "
            "(this command never creates a database)")
    return source.resolve()


def _connect_source(source: Path) -> sqlite3.Connection:
    # mode=rw: never create the file (it could have been removed since the check).
    connection = sqlite3.connect(f"{source.as_uri()}?mode=rw", uri=True, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000)
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as error:
        connection.close()
        raise DatabaseUnavailableError(f"cannot read {source} as a SQLite database: {error}; check --db") from None
    if not {"alembic_version", "claim", "label"} <= tables:
        connection.close()
        raise DatabaseUnavailableError(
            f"{source} is a SQLite file but not an annotator database (no claim/label tables); check --db")
    return connection


# --- the target --------------------------------------------------------------------------------


def _check_target(target: Path, source: Path, force: bool) -> Path:
    absolute = Path(os.path.abspath(target))
    folder = absolute.parent
    if not folder.is_dir():
        raise BackupTargetError(f"the folder {folder} does not exist; create it first or choose another path")
    resolved = absolute.resolve()
    guarded = {source: "the database itself", **{Path(f"{source}{s}"): f"the database's {s} file" for s in SIDE_FILES}}
    if resolved in guarded or (resolved.exists() and _same_file(resolved, source)):
        raise BackupTargetError(f"{target} is {guarded.get(resolved, 'the database itself')}; "
                                "write the backup to another file")
    if absolute.is_dir():
        raise BackupTargetError(f"{target} is a folder; name a file, such as {target / 'annotator-backup.db'}")
    if absolute.exists() and not force:
        raise BackupTargetError(f"{target} exists already; choose a new file name, or give --force to replace it")
    stale = [f"{absolute.name}{s}" for s in ("-wal", "-shm") if Path(f"{absolute}{s}").exists()]
    if stale:
        raise BackupTargetError(
            f"{' and '.join(stale)} exist beside {target}: a program has that file open or did not close it cleanly, "
            "and SQLite would mix them into the new copy; close it (or remove them) first, or choose another path")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise BackupTargetError(f"the folder {folder} is not writable by this user; choose another folder or fix its permissions")
    return absolute


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _make_temp(target: Path) -> tuple[int, str]:
    try:
        return tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as error:
        raise BackupTargetError(f"cannot write in the folder {target.parent}: {error.strerror or error}; "
                                "choose another folder or fix its permissions") from None


def _move_into_place(tmp: Path, target: Path, force: bool) -> None:
    try:
        if force:
            os.replace(tmp, target)
            return
        try:  # a hard link fails if the name was taken meanwhile: no overwrite, even in a race
            os.link(tmp, target)
        except FileExistsError:
            raise BackupTargetError(f"{target} was created by someone else during the backup; "
                                    "choose a new file name, or give --force to replace it") from None
        except OSError:  # a file system without hard links
            if target.exists():
                raise BackupTargetError(f"{target} exists already; choose a new file name, or give --force to replace it") from None
            os.replace(tmp, target)
            return
        tmp.unlink()
    except OSError as error:
        raise BackupTargetError(f"cannot put the backup at {target}: {error.strerror or error}") from None


def _remove_side_files(path: Path) -> None:
    for suffix in SIDE_FILES:
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _remove_with_side_files(path: Path) -> None:
    path.unlink(missing_ok=True)
    _remove_side_files(path)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --- the copy ------------------------------------------------------------------------------------


class _TooManyRestarts(Exception):
    """Internal: the stepped copy kept restarting; finish in one step."""


def _copy(source: Path, tmp: Path, target: Path, pages_per_step: int, step_sleep: float, max_restarts: int,
          progress: Callable[[int, int], None] | None) -> tuple[int, int]:
    """Run the backup from `source` into the empty file `tmp`; returns (steps, restarts)."""
    counts = {"steps": 0, "restarts": 0, "remaining": None}

    def after_step(status: int, remaining: int, total: int) -> None:
        counts["steps"] += 1
        if status in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return  # no progress this step; Connection.backup sleeps and tries again
        previous = counts["remaining"]
        if previous is not None and remaining > max(previous - pages_per_step, 0):
            counts["restarts"] += 1  # another connection committed: the API started over from page 1
        counts["remaining"] = remaining
        if progress is not None:
            progress(remaining, total)
        if counts["restarts"] > max_restarts and remaining > 0:
            raise _TooManyRestarts
        if remaining > 0 and step_sleep > 0:
            time.sleep(step_sleep)  # no lock on the source is held between steps

    src = _connect_source(source)
    try:
        try:
            _run_backup(src, tmp, pages_per_step, after_step)
        except _TooManyRestarts:
            counts["remaining"] = None  # the aborted pass was rolled back in tmp; start it afresh
            _remove_side_files(tmp)
            os.truncate(tmp, 0)
            _run_backup(src, tmp, -1, after_step)  # one step: one read transaction, a snapshot
    except sqlite3.Error as error:
        raise BackupFailedError(f"the copy of {source} failed: {error}; nothing was written to {target}. "
                                "Check the free space of its folder, and `PRAGMA integrity_check` of the database") from None
    finally:
        src.close()
    return counts["steps"], counts["restarts"]


def _run_backup(src: sqlite3.Connection, tmp: Path, pages: int, after_step: Callable[[int, int, int], None]) -> None:
    dst = sqlite3.connect(tmp)
    try:
        src.backup(dst, pages=pages, progress=after_step, sleep=STEP_SLEEP_SECONDS)
    finally:
        dst.close()


def _check_copy(tmp: Path) -> tuple[str, int, int]:
    """PRAGMA integrity_check of the copy, then its claim and label counts."""
    connection = sqlite3.connect(tmp)
    try:
        problems = [row[0] for row in connection.execute("PRAGMA integrity_check")]
        if problems != ["ok"]:
            raise BackupFailedError(f"the copy failed PRAGMA integrity_check ({'; '.join(problems[:3])}); "
                                    "nothing was written. Run `PRAGMA integrity_check` on the database itself")
        claims = connection.execute("SELECT count(*) FROM claim").fetchone()[0]
        labels = connection.execute("SELECT count(*) FROM label").fetchone()[0]
    finally:
        connection.close()
    return "ok", claims, labels
