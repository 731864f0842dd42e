"""`annotator backup`: a consistent copy of the SQLite database while others write to it.

Source of the behaviour checked: SQLite, "Using the SQLite Online Backup API",
https://www.sqlite.org/backup.html (a commit by another connection restarts the copy).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from sqlmodel import select

import annotator.backup as backup_module
from annotator.backup import backup_database, pg_dump_hint
from annotator.db import init_db, make_engine, session_scope
from annotator.errors import BackupTargetError, BackupUnsupportedError, DatabaseUnavailableError
from annotator.models import Claim
from annotator.services.labeling import save_label
from annotator.services.users import get_user
from tests.factories import pilot
from tests.test_cli import run

REPO = Path(__file__).resolve().parents[1]


def table_counts(path: Path) -> dict[str, int]:
    """Rows per table of the SQLite file at `path`."""
    connection = sqlite3.connect(path)
    try:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {table: connection.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] for table in tables}
    finally:
        connection.close()


def integrity(path: Path) -> list[str]:
    connection = sqlite3.connect(path)
    try:
        return [row[0] for row in connection.execute("PRAGMA integrity_check")]
    finally:
        connection.close()


def claim_pks(engine) -> list[int]:  # noqa: ANN001
    with session_scope(engine) as session:
        return list(session.exec(select(Claim.id).order_by(Claim.id)))


def label(engine, labeler: str, claim_pk: int, value: str = "support") -> None:  # noqa: ANN001
    """Save one label through the service layer, in its own transaction."""
    with session_scope(engine) as session:
        save_label(session, get_user(session, labeler), claim_pk, value)


@pytest.fixture
def project(tmp_path: Path):
    """A migrated SQLite database with 120 cases (240 claims) assigned to alice and bob, 30 of
    them labeled by alice; yields (path, engine)."""
    path = tmp_path / "annotator.db"
    engine = init_db(f"sqlite:///{path}")
    with session_scope(engine) as session:
        pilot(session, n_cases=120)
    for claim_pk in claim_pks(engine)[:30]:
        label(engine, "alice", claim_pk, "contradict")
    yield path, engine
    engine.dispose()


def leftovers(folder: Path) -> list[str]:
    """Temporary files a backup could leave in `folder` (the database's own -wal/-shm aside)."""
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("annotator.db")
                  and p.name.endswith((".tmp", "-wal", "-shm", "-journal")))


# --- a copy of a quiet database ----------------------------------------------------------------


@pytest.mark.parametrize("pages_per_step", [256, 3])
def test_a_backup_holds_every_row_of_every_table_and_passes_the_integrity_check(project, tmp_path, pages_per_step):
    path, engine = project
    engine.dispose()  # nothing writing: the copy must equal the database table by table
    out = tmp_path / "backups" / "copy.db"
    out.parent.mkdir()
    done = backup_database(out, str(path), pages_per_step=pages_per_step)
    assert integrity(out) == ["ok"]
    assert table_counts(out) == table_counts(path)
    assert (done.claims, done.labels, done.integrity) == (240, 30, "ok")
    assert done.size_bytes == out.stat().st_size
    assert done.restarts == 0
    pages = sqlite3.connect(path).execute("PRAGMA page_count").fetchone()[0]
    assert done.steps == -(-pages // pages_per_step)  # ceil: 3 pages a step takes many steps
    assert leftovers(out.parent) == []


def test_the_copy_is_an_annotator_database_the_cli_reads(project, tmp_path):
    path, engine = project
    engine.dispose()
    copy = tmp_path / "copy.db"
    done = run("backup", str(copy), db=str(path), cwd=tmp_path)
    assert f"written to {copy}" in done.stdout
    assert "240 claims and 30 labels" in done.stdout and "integrity_check ok" in done.stdout
    assert f"{copy.stat().st_size:,} bytes" in done.stdout and " s (" in done.stdout
    original = json.loads(run("status", "--json", db=str(path), cwd=tmp_path).stdout)
    copied = json.loads(run("status", "--json", db=str(copy), cwd=tmp_path).stdout)
    assert copied == original and copied["labels"] == 30
    assert sqlite3.connect(copy).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# --- a copy of a database being written to ---------------------------------------------------


def assert_labels_and_events_match(copy: Path) -> int:
    """Every label in the copy has the audit event written in its transaction, and every label
    event points at a label in the copy; returns the number of labels."""
    connection = sqlite3.connect(copy)
    try:
        labels = {row[0] for row in connection.execute("SELECT id FROM label")}
        events = {row[0] for row in connection.execute(
            "SELECT entity_pk FROM labelevent WHERE entity = 'label' AND action = 'create'")}
        orphans = connection.execute(
            "SELECT count(*) FROM label WHERE NOT EXISTS (SELECT 1 FROM labelevent e WHERE e.entity = 'label' "
            "AND e.entity_pk = label.id AND e.claim_pk = label.claim_pk)").fetchone()[0]
    finally:
        connection.close()
    assert orphans == 0
    assert labels == events
    return len(labels)


def test_a_backup_while_labels_are_saved_is_a_consistent_snapshot(project, tmp_path):
    path, engine = project
    writer_engine = make_engine(f"sqlite:///{path}")
    claims = claim_pks(engine)[30:]
    committed = [30]  # labels committed so far, updated after each commit
    started, stop = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def write() -> None:
        try:
            for claim_pk in claims:
                for labeler in ("alice", "bob"):
                    if stop.is_set():
                        return
                    label(writer_engine, labeler, claim_pk)
                    committed[0] += 1
                    if committed[0] >= 40:
                        started.set()
        except BaseException as error:  # noqa: BLE001 - handed to the test thread below
            failures.append(error)
            started.set()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert started.wait(60)
        before = committed[0]
        done = backup_database(tmp_path / "copy.db", str(path), pages_per_step=2, step_sleep=0.002)
        after = committed[0]
    finally:
        stop.set()
        writer.join(60)
        writer_engine.dispose()
    assert failures == []
    assert after > before  # labels really landed while the copy was taken
    assert integrity(tmp_path / "copy.db") == ["ok"]
    n_labels = assert_labels_and_events_match(tmp_path / "copy.db")
    assert before <= n_labels <= after and n_labels == done.labels


def test_commits_between_steps_restart_the_copy_which_then_finishes_in_one_snapshot(project, tmp_path):
    path, engine = project
    writer_engine = make_engine(f"sqlite:///{path}")
    claims = iter(claim_pks(engine)[30:])
    written = []

    def commit_a_label(remaining: int, total: int) -> None:  # after every step: another connection writes
        label(writer_engine, "bob", next(claims))
        written.append(remaining)

    try:
        done = backup_database(tmp_path / "copy.db", str(path), pages_per_step=4, step_sleep=0,
                               max_restarts=2, progress=commit_a_label)
    finally:
        writer_engine.dispose()
    assert done.restarts == 3  # one more than allowed, then the one-step copy
    assert written[-1] == 0  # the last step was the one-step copy: all pages at once
    # every label committed before the final step is in the copy; the one committed after it is not
    assert done.labels == 30 + len(written) - 1
    assert assert_labels_and_events_match(tmp_path / "copy.db") == done.labels
    assert integrity(tmp_path / "copy.db") == ["ok"]


# --- refusals ----------------------------------------------------------------------------------


def test_an_existing_file_is_refused_without_force_and_left_untouched(project, tmp_path):
    path, engine = project
    engine.dispose()
    existing = tmp_path / "copy.db"
    existing.write_bytes(b"last week's backup")
    refused = run("backup", str(existing), db=str(path), cwd=tmp_path, ok=False)
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == [f"Error: {existing} exists already; choose a new file name, or give --force to replace it"]
    assert existing.read_bytes() == b"last week's backup"
    assert leftovers(tmp_path) == []
    replaced = backup_database(existing, str(path), force=True)
    assert replaced.labels == 30 and integrity(existing) == ["ok"]


def test_a_postgresql_url_is_refused_with_the_pg_dump_command_and_no_traceback(tmp_path):
    refused = run("backup", str(tmp_path / "x.dump"), db="postgresql://ann:s3cret@db.example:5433/annotations",
                  cwd=tmp_path, ok=False)
    assert refused.returncode == 1
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in refused.stderr
    assert f"pg_dump --format=custom --file={tmp_path / 'x.dump'} --host=db.example --port=5433 --username=ann annotations" in lines[0]
    assert "s3cret" not in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_another_database_url_is_refused_as_not_sqlite(tmp_path):
    with pytest.raises(BackupUnsupportedError, match="not a SQLite database; `annotator backup` copies SQLite files only"):
        backup_database(tmp_path / "x.db", "mysql://u@h/db")
    assert list(tmp_path.iterdir()) == []


def test_the_pg_dump_hint_quotes_a_path_with_spaces_and_leaves_out_missing_parts():
    assert pg_dump_hint("postgresql+psycopg:///annot", "my backups/a.dump") == "pg_dump --format=custom '--file=my backups/a.dump' annot"


def test_a_missing_database_is_refused_and_not_created(tmp_path):
    missing = tmp_path / "anotator.db"  # a typing mistake
    refused = run("backup", str(tmp_path / "copy.db"), db=str(missing), cwd=tmp_path, ok=False)
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == [
        f"Error: no database at {missing}: nothing to back up. Check --db / DATABASE_URL and the folder you are in "
        "(this command never creates a database)"]
    assert list(tmp_path.iterdir()) == []


def test_the_default_database_is_not_created_either(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    refused = subprocess.run([sys.executable, "-m", "annotator", "backup", "copy.db"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1 and "no database at data/annotator.db" in refused.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_is_not_an_annotator_database_is_refused(tmp_path):
    (tmp_path / "notes.db").write_text("not a database at all, just text " * 200)
    with pytest.raises(DatabaseUnavailableError, match="cannot read .*notes.db as a SQLite database"):
        backup_database(tmp_path / "copy.db", str(tmp_path / "notes.db"))
    other = sqlite3.connect(tmp_path / "other.db")
    other.execute("CREATE TABLE t (x)")
    other.close()
    with pytest.raises(DatabaseUnavailableError, match="not an annotator database"):
        backup_database(tmp_path / "copy.db", str(tmp_path / "other.db"))
    assert not (tmp_path / "copy.db").exists() and leftovers(tmp_path) == []


def test_the_database_itself_and_its_wal_file_are_refused_as_the_target(project, tmp_path):
    path, engine = project
    before = table_counts(path)
    (tmp_path / "link.db").symlink_to(path)
    for target in (path, tmp_path / "link.db", tmp_path / "." / "annotator.db", Path(f"{path}-wal")):
        with pytest.raises(BackupTargetError, match="is the database"):
            backup_database(target, str(path), force=True)
    assert table_counts(path) == before and integrity(path) == ["ok"]


def test_a_missing_folder_a_folder_and_a_stale_wal_beside_the_target_are_refused(project, tmp_path):
    path, engine = project
    with pytest.raises(BackupTargetError, match=r"the folder .*nowhere does not exist; create it first"):
        backup_database(tmp_path / "nowhere" / "copy.db", str(path))
    with pytest.raises(BackupTargetError, match=r"is a folder; name a file"):
        backup_database(tmp_path, str(path), force=True)
    Path(f"{tmp_path / 'copy.db'}-wal").write_bytes(b"old frames")
    with pytest.raises(BackupTargetError, match=r"copy.db-wal exist beside"):
        backup_database(tmp_path / "copy.db", str(path))
    assert not (tmp_path / "copy.db").exists()


def test_an_unwritable_folder_is_refused_with_what_to_do(project, tmp_path, monkeypatch):
    path, engine = project

    def refuse(**_kwargs):  # noqa: ANN202 - what mkstemp does in a folder without write permission
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(backup_module.tempfile, "mkstemp", refuse)
    with pytest.raises(BackupTargetError, match=r"cannot write in the folder .*: Permission denied; choose another folder"):
        backup_database(tmp_path / "copy.db", str(path))
    assert not (tmp_path / "copy.db").exists()


# --- an interrupted backup ---------------------------------------------------------------------


def test_an_interrupted_backup_leaves_the_old_file_and_no_temporary_file(project, tmp_path):
    path, engine = project
    existing = tmp_path / "copy.db"
    existing.write_bytes(b"yesterday")

    def interrupt(remaining: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        backup_database(existing, str(path), force=True, pages_per_step=2, progress=interrupt)
    assert existing.read_bytes() == b"yesterday"
    assert leftovers(tmp_path) == []


def test_a_killed_backup_never_leaves_a_half_file_at_the_path(project, tmp_path):
    path, engine = project
    engine.dispose()
    target = tmp_path / "copy.db"
    script = textwrap.dedent(f"""
        import os, signal
        from annotator.backup import backup_database

        def die(remaining, total):
            if remaining < total - 4:  # a few pages are in the temporary file
                os.kill(os.getpid(), signal.SIGKILL)

        backup_database({str(target)!r}, {str(path)!r}, pages_per_step=2, progress=die)
    """)
    killed = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert killed.returncode == -9, killed.stderr
    assert not target.exists()
    assert [name for name in leftovers(tmp_path) if name.startswith(".copy.db.")]  # the temporary file, hidden


def test_a_backup_is_private_to_its_owner_whatever_the_databases_mode(project, tmp_path):
    import os
    import stat

    path, engine = project
    engine.dispose()
    os.chmod(path, 0o644)  # a database made before files were private
    done = backup_database(tmp_path / "copy.db", str(path))
    assert stat.S_IMODE(done.path.stat().st_mode) == 0o600
