"""Shared fixtures: fresh databases on SQLite and (where reachable) PostgreSQL, paths to the
test data and to the public data the project does not carry (fetched by `annotator data fetch`),
and small helpers to seed users and data."""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import NamedTuple

import pytest
from argon2 import PasswordHasher
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine
from sqlmodel import Session
from typer.testing import CliRunner

from annotator.db import init_db, make_engine

REPO = Path(__file__).resolve().parents[1]
TEST_DATA = Path(__file__).parent / "data"
DEMO = REPO / "data" / "demo.jsonl"
AGREEMENT_CASES = TEST_DATA / "agreement_cases.json"
"""Published worked examples of the agreement coefficients, each with its source
(tests/data/agreement_cases.md)."""


def data_places(name: str) -> tuple[Path, ...]:
    """Where the tests look for the public data file `name` that the project does not carry, in
    order: where `annotator data fetch` puts it when run in the project folder (data/external/),
    then $ANNOTATOR_SHARED/data/, then the folder `shared/data/` beside the project."""
    from annotator.fetch import DEFAULT_FOLDER

    places = [REPO / DEFAULT_FOLDER / name]
    if os.environ.get("ANNOTATOR_SHARED"):
        places.append(Path(os.environ["ANNOTATOR_SHARED"]) / "data" / name)
    places.append(REPO.parent / "shared" / "data" / name)
    return tuple(places)


def _first_present(places: tuple[Path, ...]) -> Path:
    return next((place for place in places if place.exists()), places[0])


CLIMATE_FEVER_PLACES = data_places("climate-fever.jsonl")
CLIMATE_FEVER = _first_present(CLIMATE_FEVER_PLACES)
"""CLIMATE-FEVER (Diggelmann et al. 2020, arXiv:2012.00614): the first of CLIMATE_FEVER_PLACES
that exists, else the first (where `annotator data fetch climate-fever` puts it)."""

FETCH_COMMANDS = {CLIMATE_FEVER: "annotator data fetch climate-fever"}
"""The command that puts each public data file where the tests look first."""

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


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """A new, empty PostgreSQL database (skipped or, in CI, failed without a server: require_postgres);
    yields its URL and drops it afterwards, whoever is still connected."""
    require_postgres()
    name = f"annotator_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def postgres_url():
    """A fresh, empty PostgreSQL database, dropped after the test."""
    with fresh_postgres_database() as url:
        yield url


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


def migrated_engine(url: str, request) -> Engine:  # noqa: ANN001 - a pytest FixtureRequest
    """The engine of a fresh, migrated, empty database at `url`: a SQLite file that does not exist
    yet, copied from the run's template, or a PostgreSQL database made by `postgres_url`,
    migrated (a copy from a template database costs PostgreSQL as much as the migration)."""
    if url.startswith("sqlite"):
        shutil.copyfile(request.getfixturevalue("migrated_sqlite_template"), url.split(":///", 1)[1])
        return make_engine(url)
    return init_db(url)


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


BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
"""The params of a fixture that runs its tests once on each database."""


@pytest.fixture(scope="module", params=BACKENDS)
def module_db_url(request, tmp_path_factory):
    """A fresh database URL per test module and backend (SQLite, then PostgreSQL), for set-ups
    too costly to repeat per test: the module's tests share it, so they must not depend on each
    other's writes."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('module-db') / 'annotator.db'}"
        return
    with fresh_postgres_database() as url:
        yield url


ON_BOTH = pytest.mark.parametrize("engine", BACKENDS, indirect=True)
"""Runs a test whose `engine` fixture reads request.param (seeded_url) on SQLite and on PostgreSQL;
without it the fixture gives SQLite."""


@pytest.fixture(scope="module")
def postgres_templates():
    """seed -> the URL of a PostgreSQL database migrated and seeded by seed(session), built once
    per test module and dropped after it: tests copy it (CREATE DATABASE ... TEMPLATE, about a
    second) instead of migrating and seeding a database each."""
    with ExitStack() as stack:
        made: dict[Callable, str] = {}

        def template(seed: Callable) -> str:
            if seed not in made:
                url = stack.enter_context(fresh_postgres_database())
                engine = init_db(url)
                with Session(engine) as session:
                    seed(session)
                    session.commit()
                engine.dispose()  # a template database must have no connection while it is copied
                made[seed] = url
            return made[seed]

        yield template


def seeded_url(request, sqlite_url: str, seed: Callable) -> str:  # noqa: ANN001 - a FixtureRequest
    """For a page fixture: the URL of a migrated database holding what seed(session) writes:
    `sqlite_url`, built now, or, when ON_BOTH gives the fixture the param "postgresql", a fresh
    copy of the module's PostgreSQL template for `seed` (postgres_templates), dropped after the test."""
    if getattr(request, "param", "sqlite") == "sqlite":
        engine = migrated_engine(sqlite_url, request)
        with Session(engine) as session:
            seed(session)
            session.commit()
        engine.dispose()
        return sqlite_url
    template = request.getfixturevalue("postgres_templates")(seed)
    name = f"annotator_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{template.rsplit("/", 1)[1]}"'))

    def drop() -> None:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    request.addfinalizer(drop)
    return POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + "/" + name


def no_seed(session) -> None:  # noqa: ANN001 - a Session
    """seeded_url's seed for an empty database."""


def need(path: Path) -> Path:
    """`path`, a public data file the project does not carry (CLIMATE_FEVER); when it is missing
    the test is skipped with the command that fetches it, and failed instead in CI."""
    if not path.exists():
        places = CLIMATE_FEVER_PLACES if path == CLIMATE_FEVER else (path,)
        fetch = FETCH_COMMANDS.get(path)
        message = (f"{path.name} is not here (looked in {', '.join(str(place.parent) for place in places)}): "
                   + (f"run `{fetch}` in the project folder, or " if fetch else "")
                   + "set ANNOTATOR_SHARED to a folder whose data/ holds it")
        if os.environ.get("CI"):
            pytest.fail("CI must run the tests on the real data: " + message)
        pytest.skip(message)
    return path


def need_module(name: str, package: str, install: str | None = None):  # noqa: ANN201 - the module
    """The module `name` of the test extra, imported; the test is skipped with the install
    command when it is missing, and failed instead in CI (where the test extra installs it).

    install: how to install it, when not `pip install PACKAGE` (e.g. a package installed without
    its pins)."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        how = install or f"install the test extra (pip install {package})"
        message = f"{name} is not importable ({error}); {how}"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the {name} cross-check: " + message)
        pytest.skip(message)


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


class Ran(NamedTuple):
    """What `annotator` gave: exit status, standard output, standard error."""

    code: int
    out: str
    err: str


def annotator(*args: str, input: str | None = None) -> Ran:  # noqa: A002 - CliRunner's name
    """`annotator ARGS` in this process, through the console entry point (`cli.main`: an
    AnnotatorError becomes `Error: ...` on standard error and exit status 1), its output caught
    by typer's CliRunner."""
    from annotator import cli as annotator_cli

    argv = sys.argv
    with CliRunner().isolation(input=input) as (out, err, *_):
        sys.argv = ["annotator", *args]
        try:
            annotator_cli.main()
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        finally:
            sys.argv = argv
        return Ran(code, out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8"))


def annotator_in(cwd: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess:  # noqa: A002
    """`annotator ARGS` as `annotator` (above) runs it, in this process, but in the folder `cwd`
    (relative paths are read there) and without DATABASE_URL, as a CompletedProcess (returncode,
    stdout, stderr) like the subprocess it stands in for: the same exit statuses and streams,
    without a new interpreter's start (about a second) per command. A test of what needs a real
    process (a closed pipe, a signal, the environment) runs one instead."""
    saved = os.environ.pop("DATABASE_URL", None)
    try:
        with contextlib.chdir(cwd):
            ran = annotator(*args, input=input)
    finally:
        if saved is not None:
            os.environ["DATABASE_URL"] = saved
    return subprocess.CompletedProcess(["annotator", *args], ran.code, ran.out, ran.err)
