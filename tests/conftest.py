"""Shared fixtures: fresh databases on SQLite and (where reachable) PostgreSQL, paths to the
shared real data, and small helpers to seed users and data."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine

from annotator.db import init_db, make_engine

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ANNOTATOR_SHARED", REPO.parent / "shared"))
"""The shared data (CLIMATE-FEVER, published agreement cases): `../shared/` beside the project, or
ANNOTATOR_SHARED."""
CLIMATE_FEVER = SHARED / "data" / "climate-fever.jsonl"
AGREEMENT_CASES = SHARED / "reference" / "agreement_cases.json"
DEMO = REPO / "data" / "demo.jsonl"
TEST_DATA = Path(__file__).parent / "data"

POSTGRES_ADMIN_URL = os.environ.get("ANNOTATOR_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")


def _postgres_reachable() -> str | None:
    try:
        engine = create_engine(POSTGRES_ADMIN_URL, connect_args={"connect_timeout": 3})
        with engine.connect():
            pass
        engine.dispose()
        return None
    except Exception as error:  # noqa: BLE001 - any failure to connect means "not here"
        return f"{type(error).__name__}: {str(error).splitlines()[0]}"


_PG_PROBLEM = _postgres_reachable()


def require_postgres() -> None:
    """Skip with a clear message when no PostgreSQL server is reachable; in CI, fail instead."""
    if _PG_PROBLEM is None:
        return
    message = f"no PostgreSQL server at {POSTGRES_ADMIN_URL} ({_PG_PROBLEM}); set ANNOTATOR_TEST_POSTGRES or start one"
    if os.environ.get("CI"):
        pytest.fail("CI must run the PostgreSQL tests: " + message)
    pytest.skip(message)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'annotator.db'}"


@pytest.fixture
def postgres_url():
    """A fresh, empty PostgreSQL database, dropped after the test."""
    require_postgres()
    name = f"annotator_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    yield url
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def any_db_url(request):
    """A fresh database URL on each backend: the test runs once on SQLite, once on PostgreSQL."""
    if request.param == "sqlite":
        return request.getfixturevalue("sqlite_url")
    return request.getfixturevalue("postgres_url")


@pytest.fixture(scope="session")
def migrated_sqlite_template(tmp_path_factory) -> Path:
    """A SQLite file migrated once per test run: a test's fresh database is a copy of it (about
    5 ms, where migrating anew takes about 100 ms)."""
    path = tmp_path_factory.mktemp("template") / "annotator.db"
    init_db(f"sqlite:///{path}").dispose()  # the last connection's close checkpoints the WAL into the file
    return path


@pytest.fixture(scope="session")
def migrated_postgres_template():
    """A PostgreSQL database migrated once per test run, the template of each test's fresh one."""
    require_postgres()
    name = f"annotator_template_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    init_db(POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + "/" + name).dispose()
    yield name
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def migrated_engine(url: str, request) -> Engine:  # noqa: ANN001 - a pytest FixtureRequest
    """The engine of a fresh, migrated, empty database at `url` (a SQLite file that does not exist
    yet, or a PostgreSQL database made by `postgres_url`), copied from the run's template."""
    if url.startswith("sqlite"):
        shutil.copyfile(request.getfixturevalue("migrated_sqlite_template"), url.split(":///", 1)[1])
        return make_engine(url)
    template = request.getfixturevalue("migrated_postgres_template")
    name = url.rsplit("/", 1)[1]
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE "{name}"'))
        connection.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{template}"'))
    admin.dispose()
    return make_engine(url)


@pytest.fixture
def engine(sqlite_url, request):
    """A migrated, empty SQLite database's engine."""
    engine = migrated_engine(sqlite_url, request)
    yield engine
    engine.dispose()


@pytest.fixture
def any_engine(any_db_url, request):
    """A migrated, empty database's engine, on SQLite and on PostgreSQL."""
    engine = migrated_engine(any_db_url, request)
    yield engine
    engine.dispose()


def need(path: Path) -> Path:
    """Skip the test with a clear message when a shared data file is missing (fail in CI)."""
    if not path.exists():
        message = f"{path} is not here: put shared/ beside the project or set ANNOTATOR_SHARED"
        if os.environ.get("CI"):
            pytest.fail("CI must run the tests on the shared data: " + message)
        pytest.skip(message)
    return path


def label_button(at, value: str):  # noqa: ANN001, ANN201 - an AppTest and its Button
    """The Label page's button that saves `value` on the claim shown (its key names the claim:
    keyguard.button_key)."""
    return _claim_button(at, "label.button.", value)


def decision_button(at, value: str):  # noqa: ANN001, ANN201 - an AppTest and its Button
    """The Adjudicate page's button that decides `value` on the claim shown."""
    return _claim_button(at, "adjudicate.button.", value)


def _claim_button(at, prefix: str, value: str):  # noqa: ANN001, ANN202
    found = [button for button in at.button if button.key and button.key.startswith(f"{prefix}{value}.")]
    assert len(found) == 1, f"expected one {prefix}{value} button, found keys {[b.key for b in found]}"
    return found[0]


CHEAP_HASHER = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
"""Argon2id at its smallest cost: the in-process tests hash four seeded users each, which at the
production cost (about 0.25 s a hash here) was most of their time. Servers and command lines the
tests start as subprocesses keep the production cost; test_users pins it."""


@pytest.fixture(autouse=True, scope="session")
def production_hasher():
    """The production PasswordHasher, set aside while every in-process test hashes with
    CHEAP_HASHER (what a test of the production parameters asks for)."""
    from annotator.services import users

    production = users._hasher
    users._hasher = CHEAP_HASHER
    users._stand_in_hash.cache_clear()
    yield production
    users._hasher = production
    users._stand_in_hash.cache_clear()
