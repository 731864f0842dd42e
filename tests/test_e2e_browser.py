"""The whole path in a real browser: `annotator demo` served on localhost, Debian's Chromium driven
by Playwright. Two labelers label the same claim differently with the keyboard, the adjudicator
decides, an admin creates an only-final release, verifies it and downloads its files (checked
against the manifest hash recorded at creation); the language switch in the sidebar and a browser
that asks for Japanese. Screenshots of each step go to test-artifacts/ (ignored by git);
tests/test_accessibility_browser.py screenshots every page of each role there too."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from annotator.ui.i18n import t, use_language
from tests.conftest import BACKENDS, REPO, fresh_postgres_database, annotator_in

ARTIFACTS = REPO / "test-artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path() -> str:
    """Debian's Chromium; skipped without one (CI installs it and must not skip)."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        message = "no chromium on PATH (Debian: apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser tests: " + message)
        pytest.skip(message)
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def running_app(work: Path, env: dict[str, str], args: list[str]) -> Iterator[str]:
    """`annotator ARGS --port P` (demo or serve) started in `work` on a free port, its output in
    work/server.log; yields its base URL once /_stcore/health answers, and stops it afterwards."""
    port = free_port()
    with (work / "server.log").open("w") as log:
        server = subprocess.Popen([sys.executable, "-m", "annotator", *args, "--port", str(port)],
                                  cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if urllib.request.urlopen(f"{base}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)
        else:
            server.terminate()
            pytest.fail(f"`annotator {args[0]}` did not answer /_stcore/health within 60 s: "
                        + (work / "server.log").read_text())
        try:
            yield base
        finally:
            os.killpg(server.pid, 15)
            server.wait(timeout=20)


DB_URL_FILE = "db-url"
"""The file in a served app's folder that names its database (db_url)."""


def served_demo(work: Path, url: str) -> Iterator[str]:
    """`annotator demo` on a free port over the fresh database `url`, run in `work` (which
    remembers the URL: db_url); yields its base URL."""
    (work / DB_URL_FILE).write_text(url, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    with running_app(work, env, ["demo", "--db", url]) as base:
        yield base


def db_url(work: Path) -> str:
    """The database URL of the app served in `work`: its SQLite file demo.db unless the fixture
    named another (a PostgreSQL database)."""
    named = work / DB_URL_FILE
    return named.read_text(encoding="utf-8") if named.exists() else f"sqlite:///{work / 'demo.db'}"


def query(work: Path, sql: str, **params: object) -> list[tuple]:
    """The rows of `sql` (named parameters; none for an UPDATE) run and committed in the database
    of the app served in `work`, beside the server as a person's SQL client would (one
    connection, closed at once)."""
    engine = create_engine(db_url(work), poolclass=NullPool)
    try:
        with engine.begin() as connection:
            result = connection.execute(text(sql), params)
            return [tuple(row) for row in result] if result.returns_rows else []
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory):
    """`annotator demo` on a free port with a fresh SQLite database; yields its base URL and folder."""
    work = tmp_path_factory.mktemp("demo")
    yield from ((base, work) for base in served_demo(work, f"sqlite:///{work / 'demo.db'}"))


@pytest.fixture(scope="module", params=BACKENDS)
def journey_server(request, tmp_path_factory):
    """The demo served over SQLite (demo_server, shared with this module's other tests) and over a
    fresh PostgreSQL database of its own (created for this module and dropped after it): the
    journeys that label, adjudicate and release run on both. Yields base URL and folder."""
    if request.param == "sqlite":
        yield request.getfixturevalue("demo_server")
        return
    work = tmp_path_factory.mktemp("demo-postgresql")
    with fresh_postgres_database() as url:
        yield from ((base, work) for base in served_demo(work, url))


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    executable = chromium_path()
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()


def log_in(browser, base: str, name: str, password: str, to: str | None = None):  # noqa: ANN001, ANN201 - Playwright objects
    """A fresh browser context (no shared session) logged in as `name`, on the page `to` (its
    title in the navigation) or on Home, where every login starts."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(base)
    log_in_here(page, name, password, to)
    return context, page


def go_to(page, title: str) -> None:  # noqa: ANN001
    """Open a page by its link in the navigation, as a person does (a typed address would start a
    new browser session); nothing when the login already opened it (the address named it)."""
    settled(page)
    if page.get_by_role("heading", name=title, exact=True).count() == 0:
        page.locator("[data-testid=stSidebarNavLink]", has_text=title).first.click()
    page.get_by_role("heading", name=title).first.wait_for(timeout=20_000)
    settled(page)


def shot(page, name: str) -> None:  # noqa: ANN001
    """The whole page, once Streamlit has settled, in ARTIFACTS/`name`.png. Streamlit scrolls its
    main area (and the sidebar) inside the window, so the document never grows and `full_page`
    alone would stop at the window's bottom: the window is made as tall as they are for the shot,
    then set back."""
    settled(page)
    ARTIFACTS.mkdir(exist_ok=True)
    size = page.viewport_size
    tallest = page.evaluate("() => Math.max(0, ...Array.from(document.querySelectorAll("
                            "'[data-testid=stMain], [data-testid=stSidebarContent]'), e => e.scrollHeight))")
    page.set_viewport_size({"width": size["width"], "height": min(max(tallest, size["height"]), 16_000)})
    try:
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    finally:
        page.set_viewport_size(size)


def press_label(page, key: str, claim_id: str, next_claim_id: str) -> None:  # noqa: ANN001
    """Press a label's keyboard shortcut on claim `claim_id` and wait until the next claim shows."""
    page.get_by_text(f"Claim {claim_id}").first.wait_for(timeout=20_000)
    page.get_by_text("Keys 1, 2, 3 save").wait_for(timeout=20_000)  # rendered after the buttons that hold the keys
    value = {"1": "support", "2": "contradict", "3": "insufficient"}[key]
    button = page.get_by_role("button", name=re.compile(rf"^{value}\b")).first
    button.wait_for(timeout=20_000)
    assert button.is_enabled()
    page.evaluate("document.activeElement && document.activeElement.blur()")  # shortcuts do not fire in a text box
    page.keyboard.press(key)
    page.get_by_text(f"Claim {next_claim_id}").first.wait_for(timeout=20_000)


def test_a_claim_goes_from_unlabeled_to_a_verified_release_in_the_browser(journey_server, browser):
    base, work = journey_server
    aoi_context, aoi = log_in(browser, base, "aoi", "aoi-demo-pass", to="Label")
    shot(aoi, "01-label-aoi")
    aoi.get_by_label("Rationale").fill("MARKER-first-rationale")
    press_label(aoi, "1", "demo-01-c1", "demo-01-c2")
    shot(aoi, "02-label-aoi-saved")
    aoi_context.close()

    ren_context, ren = log_in(browser, base, "ren", "ren-demo-pass", to="Label")
    ren.get_by_text("Claim demo-01-c1").first.wait_for(timeout=20_000)
    ren.get_by_text("Evidence passages").wait_for(timeout=20_000)
    before = ren.locator("[data-testid=stMain]").inner_text()
    assert "Claim 1 of 48 in your queue: demo-01-c1" in before and "Hold this case" in before
    assert "MARKER-first-rationale" not in ren.content() and "aoi" not in before and "Your label" not in before
    press_label(ren, "2", "demo-01-c1", "demo-01-c2")
    ren_context.close()

    mika_context, mika = log_in(browser, base, "mika", "mika-demo-pass", to="Adjudicate")
    mika.get_by_text("Claims waiting for a decision: 1").wait_for(timeout=20_000)
    mika.get_by_text("MARKER-first-rationale").wait_for(timeout=20_000)
    mika.get_by_text("Keys 1, 2, 3 decide").wait_for(timeout=20_000)  # the last line of the page
    page_text = mika.locator("[data-testid=stMain]").inner_text()
    assert "Labeler 1" in page_text and "Labeler 2" in page_text and "MARKER-first-rationale" in page_text
    assert "aoi" not in page_text and "ren" not in page_text
    shot(mika, "03-adjudicate")
    mika.get_by_label("Rationale (required)").fill("MARKER-decision-rationale")
    mika.get_by_role("button", name="contradict").first.click()
    mika.get_by_text("Decided contradict on claim demo-01-c1.").wait_for(timeout=20_000)
    mika_context.close()

    admin_context, admin = log_in(browser, base, "admin", "admin-demo-pass")
    admin.get_by_role("link", name="Releases").click()
    admin.get_by_label("Release name").fill("gold-v1")
    admin.get_by_text("Only final claims (agreed and adjudicated)").click()
    admin.get_by_role("button", name="Create release").click()
    released = 1 + len(pilot_claims())  # demo-01-c1 and the pilot round's claims (all final)
    admin.get_by_text(f"Release gold-v1 created with {released} claims").wait_for(timeout=30_000)
    shown_sha = whole_code_block(admin)  # the manifest's SHA-256 under the message, read before verify reruns the page
    admin.get_by_role("button", name="Verify files against the manifest").click()
    admin.get_by_text("Release gold-v1: every file matches its manifest.").wait_for(timeout=20_000)
    shot(admin, "04-release-verified")
    downloaded = download_release_files(admin, work / "downloaded" / "gold-v1")
    admin_context.close()

    folder = work / "data" / "releases" / "gold-v1"
    assert sorted(downloaded) == sorted(path.name for path in folder.iterdir())  # every file is offered
    ((recorded,),) = query(work, "SELECT manifest_sha256 FROM goldrelease WHERE name = 'gold-v1'")
    assert shown_sha == recorded
    assert hashlib.sha256(downloaded["manifest.json"].read_bytes()).hexdigest() == recorded
    verify = subprocess.run([sys.executable, "-m", "annotator", "release", "verify", str(downloaded["manifest.json"].parent),
                             "--manifest-sha256", shown_sha, "--db", db_url(work)],  # the hash as the page shows it
                            cwd=work, capture_output=True, text=True, check=False)
    assert verify.returncode == 0 and "matches its manifest" in verify.stdout, verify.stdout + verify.stderr
    gold = {record["claim_id"]: record for record in map(json.loads, downloaded["gold.jsonl"].read_text(encoding="utf-8").splitlines())}
    assert len(gold) == released and (gold["demo-01-c1"]["gold_label"], gold["demo-01-c1"]["resolution"]) == ("contradict", "adjudicated")
    assert gold["demo-01-c1"]["adjudication"]["rationale"] == "MARKER-decision-rationale"  # released with its reason


def whole_code_block(page) -> str:  # noqa: ANN001
    """The text of the page's one code block, after checking that all of it is inside the window
    (no character past the block's or the window's right edge) and that it has a copy button."""
    expect = pytest.importorskip("playwright.sync_api").expect
    block = page.get_by_test_id("stCode")
    expect(block).to_have_count(1)
    code = block.locator("code")
    box, width = code.bounding_box(), page.viewport_size["width"]
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (box, width)
    assert code.evaluate("element => element.scrollWidth <= element.clientWidth + 1"), "the code block scrolls sideways"
    block.hover()
    expect(block.get_by_role("button")).to_have_count(1)  # Streamlit's copy button
    return code.inner_text().strip()


def pilot_claims() -> list[str]:
    """The claim ids of the demo's pilot round, released by the demo as gold-v0."""
    from annotator.services.demo import DEMO_PILOT

    return [claim["claim_id"] for line in DEMO_PILOT.read_text(encoding="utf-8").splitlines() for claim in json.loads(line)["claims"]]


def download_release_files(page, into: Path) -> dict[str, Path]:  # noqa: ANN001
    """Click every download button of the release shown on the Releases page, as a person would,
    and keep what the browser received in `into`; {file name: downloaded file}."""
    into.mkdir(parents=True)
    buttons = page.locator("[data-testid=stDownloadButton] button")
    buttons.first.wait_for(timeout=20_000)
    files: dict[str, Path] = {}
    for n in range(buttons.count()):
        with page.expect_download(timeout=20_000) as download:
            buttons.nth(n).click()
        name = download.value.suggested_filename
        download.value.save_as(into / name)
        files[name] = into / name
    return files


def test_a_page_address_opened_logged_out_shows_the_login_then_that_page(demo_server, browser):
    base, _ = demo_server
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        page.goto(f"{base}/agreement")
        page.get_by_label("Password", exact=True).wait_for(timeout=20_000)
        assert "not found" not in page.inner_text("body").lower()
        page.get_by_label("User name", exact=True).fill("admin")
        page.get_by_label("Password", exact=True).fill("admin-demo-pass")
        page.get_by_role("button", name="Log in").click()
        page.get_by_text("Logged in as admin").wait_for(timeout=20_000)
        assert page.url.endswith("/agreement")
        page.get_by_role("heading", name="Agreement").first.wait_for(timeout=20_000)
    finally:
        context.close()


def test_a_page_address_the_roles_do_not_open_says_so_and_links_to_the_users_page(demo_server, browser):
    base, _ = demo_server
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        page.goto(f"{base}/admin")
        page.get_by_label("User name", exact=True).fill("aoi")
        page.get_by_label("Password", exact=True).fill("aoi-demo-pass")
        page.get_by_role("button", name="Log in").click()
        page.get_by_text("This page is not open to aoi's roles.").wait_for(timeout=20_000)
        body = page.inner_text("body")
        assert "not found" not in body.lower() and "Assign cases" not in body and "Claim history" not in body
        assert page.get_by_role("link", name="Admin").count() == 0  # not in the navigation either
        page.get_by_role("link", name="Go to Home").click()
        page.get_by_role("heading", name="Home").first.wait_for(timeout=20_000)  # where every login starts
    finally:
        context.close()


def reload_seeing_dialogs(page, logged_in: bool = True) -> list[str]:  # noqa: ANN001
    """Reload the page, accepting any dialog, until it shows the user logged in again (a reload
    keeps the login: its cookie), or, not `logged_in`, the login page (a browser without the
    cookie: forget_login); the types of the dialogs shown."""
    shown: list[str] = []

    def accept(dialog) -> None:  # noqa: ANN001
        shown.append(dialog.type)
        dialog.accept()

    page.on("dialog", accept)
    page.reload()
    if logged_in:
        page.get_by_text("Logged in as").wait_for(timeout=20_000)
    else:
        page.get_by_label("Password", exact=True).wait_for(timeout=20_000)
    page.remove_listener("dialog", accept)
    return shown


def forget_login(page) -> None:  # noqa: ANN001
    """Drop the browser's login cookie: its next reload shows the login page, as another browser
    would, or this one after the login expired."""
    page.context.clear_cookies(name="annotator_session")


def log_in_here(page, name: str, password: str, to: str | None = None) -> None:  # noqa: ANN001
    """Log in on the login form shown in this page (a reload leaves one), then open the page `to`."""
    page.get_by_label("User name", exact=True).fill(name)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Log in").click()
    page.get_by_text(f"Logged in as {name}").wait_for(timeout=20_000)
    if to is not None:
        go_to(page, to)


def wait_for_draft(work: Path, rationale: str) -> None:
    """Until the demo database holds a draft with this rationale (the server received the text)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if query(work, "SELECT 1 FROM draft WHERE rationale = :rationale", rationale=rationale):
            return
        time.sleep(0.2)
    pytest.fail(f"no draft with the rationale {rationale!r} within 20 s")


def type_rationale(page, text: str) -> None:  # noqa: ANN001
    """Type into the rationale from an empty box (a draft left by another test may fill it)."""
    page.get_by_text("Keys 1, 2, 3 save").wait_for(timeout=20_000)
    box = page.get_by_label("Rationale")
    box.click()
    page.keyboard.press("ControlOrMeta+A")
    page.keyboard.press("Delete")
    page.keyboard.type(text)


def discard_draft(page) -> None:  # noqa: ANN001
    page.get_by_role("button", name="Discard draft").click()
    page.get_by_text("Draft discarded.").wait_for(timeout=20_000)


def test_a_rationale_typed_and_not_yet_sent_makes_the_browser_ask_before_a_reload(demo_server, browser):
    base, _ = demo_server
    context, page = log_in(browser, base, "aoi", "aoi-demo-pass", to="Label")
    try:
        type_rationale(page, "MARKER-not-sent")  # no blur, no Ctrl+Enter, reloaded within the autosave delay
        assert reload_seeing_dialogs(page) == ["beforeunload"]
    finally:
        context.close()


def test_a_rationale_being_typed_is_sent_unasked_and_is_back_after_a_reload(demo_server, browser):
    base, work = demo_server
    context, page = log_in(browser, base, "aoi", "aoi-demo-pass", to="Label")
    try:
        type_rationale(page, "MARKER-typed-then-paused")
        wait_for_draft(work, "MARKER-typed-then-paused")
        assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Rationale"  # never blurred
        assert reload_seeing_dialogs(page) == []  # still logged in, on the Label page
        page.get_by_text(re.compile(r"Restored your unsaved draft from")).wait_for(timeout=20_000)
        expect = pytest.importorskip("playwright.sync_api").expect
        expect(page.get_by_label("Rationale")).to_have_value("MARKER-typed-then-paused", timeout=20_000)
        discard_draft(page)
    finally:
        context.close()


def test_a_rationale_sent_by_leaving_its_box_reloads_without_asking(demo_server, browser):
    base, work = demo_server
    context, page = log_in(browser, base, "aoi", "aoi-demo-pass", to="Label")
    try:
        type_rationale(page, "MARKER-blurred")
        page.keyboard.press("Tab")
        wait_for_draft(work, "MARKER-blurred")
        assert reload_seeing_dialogs(page) == []
        discard_draft(page)
    finally:
        context.close()


def test_a_hold_note_no_draft_keeps_makes_the_browser_ask_before_a_reload_even_once_sent(demo_server, browser):
    base, _ = demo_server
    context, page = log_in(browser, base, "aoi", "aoi-demo-pass", to="Label")
    try:
        page.get_by_text("Hold this case").click()
        page.get_by_label("Note (optional)").fill("MARKER-hold-note")
        page.keyboard.press("Tab")  # sent, but nothing keeps it across a reload
        assert reload_seeing_dialogs(page) == ["beforeunload"]
    finally:
        context.close()


@pytest.fixture(scope="module")
def release_server(tmp_path_factory):
    """`annotator serve` on a free port over a demo database that already holds the release
    gold-r1 (one claim aoi and ren agree on), made with the command line; yields the base URL
    and the release folder. Its own server, so the other tests' counts stay as they are."""
    work = tmp_path_factory.mktemp("release")
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    db = ["--db", str(work / "demo.db")]
    (work / "labels.csv").write_text("claim_id,labeler,label\ndemo-01-c1,aoi,support\ndemo-01-c1,ren,support\n", encoding="utf-8")
    for args in (["demo", "--no-serve"], ["labels", "import", "labels.csv"],
                 ["release", "create", "gold-r1", "--only-final", "--bootstrap", "0"]):
        assert annotator_in(work, *args, *db).returncode == 0, args  # set-up in this process: no interpreter start each
    with running_app(work, env, ["serve", *db]) as base:
        yield base, work / "data" / "releases" / "gold-r1"


def http_get(url: str) -> tuple[int, bytes]:
    """Status and body of a plain GET: no cookies, no browser, as from a copied address."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, b""


def test_a_downloaded_release_file_stops_being_served_once_the_admin_logs_out(release_server, browser):
    base, folder = release_server
    context, page = log_in(browser, base, "admin", "admin-demo-pass")
    try:
        page.get_by_role("link", name="Releases").click()
        button = page.get_by_role("button", name=re.compile(r"gold\.jsonl"))
        button.wait_for(timeout=20_000)
        with page.expect_download(timeout=20_000) as download:
            button.click()
        url = download.value.url
        assert re.fullmatch(re.escape(base) + r"/media/[0-9a-f]{32}\.\w+", url)
        assert http_get(url) == (200, (folder / "gold.jsonl").read_bytes())  # the address alone serves it

        page.get_by_role("button", name="Log out").click()
        page.get_by_label("Password", exact=True).wait_for(timeout=20_000)
        deadline = time.monotonic() + 10
        while (status := http_get(url)[0]) != 404 and time.monotonic() < deadline:
            time.sleep(0.25)
        assert status == 404
    finally:
        context.close()


def test_an_admin_uploads_checks_and_imports_a_case_file_in_the_browser(demo_server, browser):
    base, work = demo_server
    data = (REPO / "tests" / "data" / "import_native.jsonl").read_bytes()  # 2 cases, 3 claims, 2 passages
    read = "Read pilot-cases.jsonl as UTF-8 (jsonl) into dataset 'e2e-upload': 2 cases, 3 claims, 2 passages"
    context, page = log_in(browser, base, "admin", "admin-demo-pass")
    try:
        page.get_by_role("link", name="Import").click()
        page.get_by_role("heading", name="Import").first.wait_for(timeout=20_000)
        page.locator("[data-testid=stFileUploader] input[type=file]").set_input_files(
            {"name": "pilot-cases.jsonl", "mimeType": "application/octet-stream", "buffer": data})
        page.get_by_text("pilot-cases.jsonl").first.wait_for(timeout=20_000)
        page.get_by_label("Dataset (--dataset)", exact=True).fill("e2e-upload")
        page.keyboard.press("Tab")
        page.get_by_role("button", name="Check").click()
        page.get_by_text("Check of pilot-cases.jsonl: nothing was written").wait_for(timeout=20_000)
        page.get_by_text(read).wait_for(timeout=20_000)
        page.get_by_text("Preview: the first 3 rows of the file").wait_for(timeout=20_000)
        assert "claims 3 0 0" in " ".join(page.locator("[data-testid=stTable]").first.inner_text().split())
        shot(page, "05-import-checked")
        assert query(work, "SELECT count(*) FROM dataset WHERE name = 'e2e-upload'") == [(0,)]
        page.get_by_role("button", name="Import").click()
        page.get_by_text("Imported pilot-cases.jsonl.").wait_for(timeout=20_000)
        page.get_by_text(read).wait_for(timeout=20_000)
        assert "claims 3 0 0" in " ".join(page.locator("[data-testid=stTable]").first.inner_text().split())
        shot(page, "06-import-done")
        assert query(work, "SELECT count(*) FROM claim JOIN dataset ON dataset.id = claim.dataset_id "
                           "WHERE dataset.name = 'e2e-upload'") == [(3,)]
    finally:
        context.close()


CUT_LABELS = """() => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stWidgetLabel], '
    + '[data-testid=stMain] [data-testid=stCheckbox] label')]
    .flatMap(label => [label, ...label.querySelectorAll('*')])
    .filter(el => el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflow !== 'visible'
            && el.innerText.trim() !== '')
    .map(el => el.innerText.trim())"""
"""The texts of the main area's widget labels that are cut at their box's edge (an ellipsis or a clip)."""


@pytest.mark.parametrize("language", ["en", "ja"])
def test_no_option_label_of_the_import_page_is_cut_on_a_1366x768_laptop_screen(demo_server, browser, language):
    base, _ = demo_server
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="ja-JP" if language == "ja" else "en-US")
    page = context.new_page()
    try:
        page.goto(base)
        page.get_by_label(tr(language, "login.name"), exact=True).fill("admin")
        page.get_by_label(tr(language, "login.password"), exact=True).fill("admin-demo-pass")
        page.get_by_role("button", name=tr(language, "login.submit"), exact=True).click()
        page.get_by_role("link", name=tr(language, "page.imports")).click()
        page.get_by_text(tr(language, "imports.update_help")).wait_for(timeout=20_000)
        settled(page)
        for label in ("imports.update", "imports.partial"):
            page.get_by_text(tr(language, label), exact=True).wait_for(timeout=20_000)
        assert page.evaluate(CUT_LABELS) == []
    finally:
        context.close()


# --- keyboard-first labeling -----------------------------------------------------------------------

POSITION = re.compile(r"Claim (\d+) of (\d+) in your queue: (\S+)")


def on_label_page(page) -> tuple[int, str]:  # noqa: ANN001
    """Go to the Label page if the login opened another one; the position and id of the claim shown
    once its keys are on the page (the last cite button is drawn after the label buttons)."""
    go_to(page, "Label")  # at once when the login opened it, else by its link: no wait for a page that is not coming
    where = page.get_by_text(POSITION).first
    where.wait_for(timeout=20_000)
    page.get_by_text("Keys 1, 2, 3 save").wait_for(timeout=20_000)
    page.get_by_role("button", name=re.compile(r"^(Cite|Uncite) passage 1\b")).wait_for(timeout=20_000)
    settled(page)
    n, _, claim_id = POSITION.search(where.inner_text()).groups()
    return int(n), claim_id


def wait_for_position(page, n: int) -> str:  # noqa: ANN001
    """Until the page shows the claim at position `n` of the queue, and has finished drawing it; its id."""
    where = page.get_by_text(re.compile(rf"Claim {n} of \d+ in your queue: ")).first
    where.wait_for(timeout=20_000)
    settled(page)
    return POSITION.search(where.inner_text()).group(3)


def settled(page) -> None:  # noqa: ANN001
    """Until the app's script run has ended and no element of the previous run is left on screen
    (Streamlit keeps those, marked stale, until the new run replaces them)."""
    page.locator("[data-testid=stApp][data-test-script-state=notRunning]").wait_for(timeout=20_000)
    page.wait_for_function("() => !document.querySelector('[data-stale=true]')", timeout=20_000)


def stored_label(work: Path, labeler: str, claim_id: str) -> tuple[str, list[str]] | None:
    """(value, cited passage ids) of a labeler's label, None when there is none."""
    rows = query(work, 'SELECT label.value, label.passage_ids FROM label JOIN claim ON claim.id = label.claim_pk '
                       'JOIN "user" ON "user".id = label.labeler_pk WHERE claim.claim_id = :claim_id AND "user".name = :name',
                 claim_id=claim_id, name=labeler)
    if not rows:
        return None
    value, passage_ids = rows[0]
    return value, json.loads(passage_ids) if isinstance(passage_ids, str) else passage_ids  # JSON text on SQLite


def first_passage_id(page) -> str:  # noqa: ANN001
    """The passage id in the first card's "id · document · version" line."""
    line = page.get_by_text(re.compile(r"^\S+ · document ")).first.inner_text()
    return line.split(" · ")[0]


def shift_digit(page, n: int) -> None:  # noqa: ANN001
    """Shift and a digit key as a US keyboard sends them (key "!" for Digit1, keyCode 49)."""
    page.keyboard.down("Shift")
    page.keyboard.press(f"Digit{n}")
    page.keyboard.up("Shift")


def test_a_claim_is_labeled_with_the_keyboard_only_and_the_next_claim_opens_with_a_toast(journey_server, browser):
    base, work = journey_server
    context, page = log_in(browser, base, "ren", "ren-demo-pass")
    expect = pytest.importorskip("playwright.sync_api").expect
    try:
        n, claim_id = on_label_page(page)
        page.evaluate("document.activeElement && document.activeElement.blur()")  # nothing focused: no click
        page.keyboard.press("j")  # next claim, and back
        wait_for_position(page, n + 1)
        page.keyboard.press("k")
        assert wait_for_position(page, n) == claim_id
        on_label_page(page)
        cited = first_passage_id(page)
        shift_digit(page, 1)  # cite passage 1
        expect(page.get_by_role("button", name=re.compile(r"^Uncite passage 1\b"))).to_be_visible(timeout=20_000)
        expect(page.get_by_role("checkbox", name="Cite this passage").first).to_be_checked()
        shot(page, "07-keyboard-cited")
        page.keyboard.press("2")  # contradict: saved, and the next claim opens
        page.locator("[data-testid=stToast]").get_by_text(f"Saved contradict on claim {claim_id}.").wait_for(timeout=20_000)
        next_id = wait_for_position(page, n + 1)
        assert next_id != claim_id
        shot(page, "08-keyboard-saved-next-claim")
        assert stored_label(work, "ren", claim_id) == ("contradict", [cited])
    finally:
        context.close()


def test_keys_typed_in_the_rationale_box_stay_text_and_save_nothing(demo_server, browser):
    base, work = demo_server
    context, page = log_in(browser, base, "aoi", "aoi-demo-pass")
    expect = pytest.importorskip("playwright.sync_api").expect
    try:
        n, claim_id = on_label_page(page)
        before = stored_label(work, "aoi", claim_id)
        type_rationale(page, "1")
        for key in ("2", "3", "j", "k"):
            page.keyboard.press(key)
        shift_digit(page, 1)
        wait_for_draft(work, "123jk!")  # the autosave sent it (the box kept its focus): the page ran again
        expect(page.get_by_label("Rationale")).to_have_value("123jk!")
        assert page.get_by_text(re.compile(r"^Saved \w+ on claim")).count() == 0
        assert wait_for_position(page, n) == claim_id
        expect(page.get_by_role("checkbox", name="Cite this passage").first).not_to_be_checked()
        assert stored_label(work, "aoi", claim_id) == before
        discard_draft(page)
    finally:
        context.close()


# --- one screen per claim ----------------------------------------------------------------------------

SCREENS = [({"width": 1366, "height": 768}, "en"), ({"width": 1366, "height": 768}, "ja"),
           ({"width": 1920, "height": 1080}, "en"), ({"width": 1920, "height": 1080}, "ja")]
"""A laptop window and a desktop one, each in both languages."""
SCREEN_IDS = [f"{size['width']}x{size['height']}-{language}" for size, language in SCREENS]
LOCALES = {"en": "en-US", "ja": "ja-JP"}
DISPUTED = 8
"""Claims aoi and ren label differently in screen_server, for mika to decide one by one."""


@pytest.fixture(scope="module", params=BACKENDS)
def screen_server(request, tmp_path_factory):
    """`annotator serve` over a demo database of its own, on SQLite and on PostgreSQL, where aoi and
    ren disagree on the first DISPUTED claims of the demo: the one-screen checks label and decide
    there, so the other tests' queues and counts stay as they are. Yields base URL and folder."""
    from annotator.services.demo import DEMO_FILE

    work = tmp_path_factory.mktemp(f"screen-{request.param}")
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    claim_ids = [claim["claim_id"] for line in DEMO_FILE.read_text(encoding="utf-8").splitlines()
                 for claim in json.loads(line)["claims"]][:DISPUTED]
    rows = [f"{claim_id},{name},{value},{name} read it so" for claim_id in claim_ids
            for name, value in (("aoi", "support"), ("ren", "insufficient"))]
    (work / "labels.csv").write_text("claim_id,labeler,label,rationale\n" + "\n".join(rows) + "\n", encoding="utf-8")
    with (nullcontext(f"sqlite:///{work / 'demo.db'}") if request.param == "sqlite" else fresh_postgres_database()) as url:
        (work / DB_URL_FILE).write_text(url, encoding="utf-8")
        for args in (["demo", "--no-serve"], ["labels", "import", "labels.csv"]):
            assert annotator_in(work, *args, "--db", url).returncode == 0, args
        with running_app(work, env, ["serve", "--db", url]) as base:
            yield base, work


def log_in_on_screen(browser, base: str, name: str, size: dict, language: str, page_key: str):  # noqa: ANN001, ANN201
    """A fresh context with the window `size` whose browser asks for `language`; logged in as
    `name` on the page `page_key` ("label", "adjudicate"), in that language."""
    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport=size, locale=LOCALES[language])
    page = context.new_page()
    page.goto(base)
    page.get_by_label(tr(language, "login.name"), exact=True).fill(name)
    page.get_by_label(tr(language, "login.password"), exact=True).fill(f"{name}-demo-pass")
    page.get_by_role("button", name=tr(language, "login.submit"), exact=True).click()
    page.get_by_role("heading", name=tr(language, "page.home")).first.wait_for(timeout=20_000)
    go_to(page, tr(language, f"page.{page_key}"))
    return context, page


def shown_claim_pk(page) -> str:  # noqa: ANN001
    """The claim the page shows, as its one-screen marker names it (ui/layout.py)."""
    return page.locator("[data-annotator-claim-screen]").get_attribute("data-claim")


def main_scroll_top(page) -> float:  # noqa: ANN001
    return page.evaluate("document.querySelector('[data-testid=stMain]').scrollTop")


def scroll_to_bottom(page) -> None:  # noqa: ANN001
    """Scroll the main area (Streamlit's scrolling part) as far down as it goes, as a reader does.
    In a laptop window the page is longer than the window (the passages go on below), so that the
    scroll back to the top after a press proves something; a desktop window may hold it all."""
    page.evaluate("(() => { const main = document.querySelector('[data-testid=stMain]');"
                  " main.scrollTo(0, main.scrollHeight); })()")
    assert main_scroll_top(page) > 0 or page.viewport_size["height"] > 768


def outside_the_window(page, parts: dict) -> list[str]:  # noqa: ANN001
    """The names of `parts` ({name: (locator, visible pixels, or None for the whole box)}) whose
    bounding box is not inside the window: each in full, or its top `visible` pixels for a part that
    may go on below the window's bottom (a passage)."""
    size, off = page.viewport_size, []
    for name, (locator, visible) in parts.items():
        box = locator.bounding_box()
        bottom = None if box is None else box["y"] + (box["height"] if visible is None else min(visible, box["height"]))
        if box is None or box["x"] < 0 or box["y"] < 0 or box["x"] + box["width"] > size["width"] or bottom > size["height"]:
            off.append(f"{name}: {box}")
    return off


def claim_text_of(work: Path, claim_pk: str) -> tuple[str, str]:
    """(text, first passage id) of the claim `claim_pk`."""
    ((claim_text, passage_id),) = query(
        work, "SELECT claim.text, passage.passage_id FROM claim JOIN claimpassage ON claimpassage.claim_pk = claim.id "
              "JOIN passage ON passage.id = claimpassage.passage_pk WHERE claim.id = :pk AND claimpassage.position = 0",
        pk=int(claim_pk))
    return claim_text, passage_id


def one_screen_parts(page, work: Path, buttons: str) -> dict:  # noqa: ANN001
    """What must be in the window: the claim's text, its first passage (its top 120 pixels: its
    title, ids and first lines), the rationale box, and the buttons whose keys start with `buttons`."""
    claim_text, passage_id = claim_text_of(work, shown_claim_pk(page))
    parts = {"claim": (page.locator("[data-testid=stMain] [data-testid=stText]", has_text=claim_text).first, None),
             "first passage": (page.locator("[data-testid=stVerticalBlockBorderWrapper], [data-testid=stVerticalBlock]")
                               .filter(has=page.get_by_text(re.compile(rf"^{re.escape(passage_id)} · "), exact=False))
                               .last, 120),
             "rationale": (page.locator("[data-testid=stMain] textarea").first, None)}
    found = page.locator(f"[class*='{buttons}'] button")
    assert found.count() == 3
    parts |= {f"button {n + 1}": (found.nth(n), None) for n in range(3)}
    return parts


def press_on(page, key: str) -> str:  # noqa: ANN001
    """Press `key` with nothing focused and wait until the page has drawn another claim; its pk."""
    before = shown_claim_pk(page)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press(key)
    page.wait_for_function("(before) => document.querySelector('[data-annotator-claim-screen]')?.dataset.claim !== before",
                           arg=before, timeout=20_000)
    settled(page)
    return shown_claim_pk(page)


@pytest.mark.parametrize(("size", "language"), SCREENS, ids=SCREEN_IDS)
def test_the_label_page_shows_claim_passage_rationale_and_buttons_without_scrolling_and_each_claim_from_the_top(
        screen_server, browser, size, language):
    base, work = screen_server
    context, page = log_in_on_screen(browser, base, "aoi", size, language, "label")
    try:
        settled(page)
        assert main_scroll_top(page) == 0
        assert outside_the_window(page, one_screen_parts(page, work, "st-key-label-button-")) == []
        page.screenshot(path=str(ARTIFACTS / f"13-label-{size['width']}x{size['height']}-{language}.png"))
        page.locator("[data-testid=stMain] textarea").first.click()
        page.keyboard.press("Tab")  # from the rationale to the first label button, nothing in between
        assert page.evaluate("document.activeElement.closest('[class*=st-key-label-button-support-]') !== null")
        scroll_to_bottom(page)
        first = shown_claim_pk(page)
        assert press_on(page, "3") != first  # saved insufficient: the next claim opens
        assert main_scroll_top(page) == 0
        assert outside_the_window(page, one_screen_parts(page, work, "st-key-label-button-")) == []
        scroll_to_bottom(page)
        press_on(page, "j")  # the next claim by its key, unsaved
        assert main_scroll_top(page) == 0
        assert outside_the_window(page, one_screen_parts(page, work, "st-key-label-button-")) == []
    finally:
        context.close()


@pytest.mark.parametrize(("size", "language"), SCREENS, ids=SCREEN_IDS)
def test_the_adjudicate_page_shows_claim_passage_rationale_and_decisions_without_scrolling_and_each_from_the_top(
        screen_server, browser, size, language):
    base, work = screen_server
    context, page = log_in_on_screen(browser, base, "mika", size, language, "adjudicate")
    try:
        settled(page)
        assert main_scroll_top(page) == 0
        assert outside_the_window(page, one_screen_parts(page, work, "st-key-adjudicate-button-")) == []
        page.screenshot(path=str(ARTIFACTS / f"14-adjudicate-{size['width']}x{size['height']}-{language}.png"))
        page.locator("[data-testid=stMain] textarea").first.fill("MARKER-decided-on-one-screen")
        page.keyboard.press("Tab")  # the rationale is sent; the focus goes to the first decision button
        assert page.evaluate("document.activeElement.closest('[class*=st-key-adjudicate-button-support-]') !== null")
        settled(page)
        scroll_to_bottom(page)
        decided = shown_claim_pk(page)
        assert press_on(page, "2") != decided
        assert query(work, "SELECT value, rationale FROM adjudication WHERE claim_pk = :pk", pk=int(decided)) == [
            ("contradict", "MARKER-decided-on-one-screen")]
        assert main_scroll_top(page) == 0
        assert outside_the_window(page, one_screen_parts(page, work, "st-key-adjudicate-button-")) == []
    finally:
        context.close()


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_claims_link_copied_from_its_popover_opens_that_claim_in_a_new_tab(screen_server, browser, language):
    base, work = screen_server
    context, page = log_in_on_screen(browser, base, "aoi", {"width": 1366, "height": 768}, language, "label")
    try:
        settled(page)
        press_on(page, "j")  # not the first claim of the queue: the new tab would open that one anyway
        shown = shown_claim_pk(page)
        ((claim_id, dataset),) = query(work, "SELECT claim.claim_id, dataset.name FROM claim JOIN dataset "
                                             "ON dataset.id = claim.dataset_id WHERE claim.id = :pk", pk=int(shown))
        page.locator("[data-testid=stPopover] button").filter(has_text=tr(language, "claim.link")).click()
        link = page.locator("[data-testid=stPopoverBody] [data-testid=stCode] code").inner_text().strip()
        assert link == f"{base}/?claim={quote(claim_id)}&dataset={quote(dataset)}"
        tab = context.new_page()
        tab.goto(link)
        tab.locator("[data-annotator-claim-screen]").wait_for(state="attached", timeout=20_000)
        settled(tab)
        assert shown_claim_pk(tab) == shown
    finally:
        context.close()


def test_r_puts_the_cursor_in_the_rationale_box_and_tab_from_it_reaches_the_label_buttons(screen_server, browser):
    base, work = screen_server
    context, page = log_in_on_screen(browser, base, "aoi", {"width": 1366, "height": 768}, "en", "label")
    try:
        settled(page)
        page.evaluate("document.activeElement && document.activeElement.blur()")
        page.keyboard.press("r")
        assert page.evaluate("document.activeElement.tagName") == "TEXTAREA"
        assert page.evaluate("document.activeElement.closest('[class*=st-key-label-rationale-]') !== null")
        assert page.evaluate("document.activeElement.value") == ""  # the key typed nothing
        page.keyboard.type("read it so")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.closest('[class*=st-key-label-button-support-]') !== null")
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Shift+Tab")  # back through the rationale to the severity box above it
        assert page.evaluate("document.activeElement.closest('[class*=st-key-label-severity-]') !== null")
    finally:
        context.close()


def test_the_guideline_opens_wide_and_the_page_s_keys_do_nothing_under_it(screen_server, browser):
    base, work = screen_server
    context, page = log_in_on_screen(browser, base, "ren", {"width": 1366, "height": 768}, "ja", "label")
    try:
        settled(page)
        claim = shown_claim_pk(page)
        labels_before = query(work, 'SELECT count(*) FROM label')
        page.locator("[data-testid=stSidebar] [data-testid=stExpander] summary").first.click()
        sidebar_table = page.locator("[data-testid=stSidebar] table").first
        sidebar_table.wait_for(timeout=20_000)
        page.get_by_role("button", name=tr("ja", "guideline.open_wide")).click()
        dialog = page.get_by_role("dialog")
        dialog.locator("table").first.wait_for(timeout=20_000)
        wide, narrow = dialog.locator("table").first.bounding_box()["width"], sidebar_table.bounding_box()["width"]
        assert wide > 2.5 * narrow and wide > 600, (wide, narrow)  # the sidebar's table is ~200 pixels wide
        page.screenshot(path=str(ARTIFACTS / "15-guideline-wide-ja.png"))
        for key in ("1", "2", "j"):  # a label key or a move under the dialog would act on the claim unseen
            page.keyboard.press(key)
        time.sleep(1.5)
        settled(page)
        assert query(work, 'SELECT count(*) FROM label') == labels_before and shown_claim_pk(page) == claim
        page.keyboard.press("Escape")
        dialog.wait_for(state="detached", timeout=20_000)
    finally:
        context.close()


# --- runs ------------------------------------------------------------------------------------------


def test_an_admin_opens_runs_and_reads_the_blocked_decision_and_why(journey_server, browser):
    """The demo's candidate run against its baseline on gold-v0: Compare says BLOCKED first, with
    the blocker's case and passage, on the holdout split; the Report tab shows the blocker before
    its figures."""
    base, _ = journey_server
    context, page = log_in(browser, base, "admin", "admin-demo-pass", to="Runs")
    try:
        main = "[data-testid=stMain]"
        choose(page, "Gold release", "gold-v0", within=main)  # another journey may have made a newer release
        settled(page)
        page.get_by_role("tab", name="Compare").click()
        decision = page.locator("[data-testid=stAlert]", has_text="Decision: BLOCKED")
        decision.wait_for(timeout=30_000)
        text = decision.inner_text()
        assert "The candidate has a blocker: it may not ship" in text
        assert "1 blocker: case demo-32 retrieved forbidden passage p-remote-5-v1" in text
        shown = page.locator(main).inner_text()
        assert "Decided on the holdout split" in shown
        assert shown.index("Decision: BLOCKED") < shown.index("Fixed (1)") < shown.index("Regressed (1)")
        shot(page, "12-runs-compare")
        page.get_by_role("tab", name="Report").click()
        page.get_by_text("Blockers: 1. Each stops the change whatever the averages say.").first.wait_for(timeout=20_000)
        shown = page.locator(main).inner_text()
        assert shown.index("Blockers: 1.") < shown.index("Figures")
        assert "case demo-32 retrieved forbidden passage p-remote-5-v1" in shown
    finally:
        context.close()


# --- languages -------------------------------------------------------------------------------------


def tr(language: str, key: str, /, **fields: object) -> str:
    """The catalog's string for `key` in `language` ("en" or "ja"), as the page shows it."""
    with use_language(language):
        return t(key, **fields)


def choose(page, label: str, option: str, within: str = "[data-testid=stSidebar]") -> None:  # noqa: ANN001
    """Pick `option` in the select (a Streamlit selectbox) named `label` in the part `within` of the
    page (its options open in a popover of the page)."""
    page.locator(within).get_by_role("combobox", name=label, exact=True).click()
    page.get_by_role("option", name=option, exact=True).click()


def navigation(page) -> list[str]:  # noqa: ANN001
    """The titles of the pages in the sidebar's navigation, top to bottom (each link's last line:
    the icon's ligature name comes first)."""
    return [link.split("\n")[-1].strip() for link in page.locator("[data-testid=stSidebarNavLink]").all_inner_texts()]


def stored_locale(work: Path, name: str) -> str | None:
    return query(work, 'SELECT locale FROM "user" WHERE name = :name', name=name)[0][0]


ADMIN_PAGES = ("home", "adjudicate", "agreement", "releases", "judges", "runs", "admin", "imports", "claims")
"""The pages the demo's admin (roles admin and adjudicator) opens, in the navigation's order."""


def test_the_language_chosen_in_the_sidebar_applies_at_once_and_stays_with_the_account(demo_server, browser):
    base, work = demo_server
    expect = pytest.importorskip("playwright.sync_api").expect
    context, page = log_in(browser, base, "admin", "admin-demo-pass")
    try:
        settled(page)  # the login form's own language select is gone
        assert navigation(page) == [tr("en", f"page.{key}") for key in ADMIN_PAGES]
        choose(page, tr("en", "language.label"), tr("en", "language.ja"))
        page.get_by_role("heading", name=tr("ja", "page.home")).first.wait_for(timeout=20_000)
        settled(page)
        assert navigation(page) == [tr("ja", f"page.{key}") for key in ADMIN_PAGES]
        expect(page.get_by_role("heading", name=tr("ja", "home.admin"))).to_be_visible()
        expect(page.get_by_role("button", name=tr("ja", "app.logout"))).to_be_visible()
        expect(page.get_by_role("combobox", name=tr("ja", "language.label"))).to_have_value(tr("ja", "language.ja"))
        expect(page.locator("html")).to_have_attribute("lang", "ja")  # a screen reader reads it as Japanese
        assert stored_locale(work, "admin") == "ja"
        go_to(page, tr("ja", "page.releases"))
        expect(page.get_by_role("button", name=tr("ja", "releases.create_button"))).to_be_visible()
        expect(page.get_by_label(tr("ja", "releases.name"), exact=True)).to_be_visible()
        main = page.locator("[data-testid=stMain]").inner_text()
        assert tr("en", "releases.create_button") not in main and tr("en", "releases.create") not in main
        shot(page, "09-releases-japanese")

        page.get_by_role("button", name=tr("ja", "app.logout")).click()
        page.get_by_label("Password", exact=True).wait_for(timeout=20_000)  # the login page follows the browser
        page.get_by_label("User name", exact=True).fill("admin")
        page.get_by_label("Password", exact=True).fill("admin-demo-pass")
        page.get_by_role("button", name="Log in").click()
        page.get_by_role("heading", name=tr("ja", "page.releases")).first.wait_for(timeout=20_000)  # kept for the account
        settled(page)
        assert navigation(page) == [tr("ja", f"page.{key}") for key in ADMIN_PAGES]
        expect(page.get_by_role("button", name=tr("ja", "releases.create_button"))).to_be_visible()

        choose(page, tr("ja", "language.label"), tr("ja", "language.en"))
        page.get_by_role("heading", name=tr("en", "page.releases")).first.wait_for(timeout=20_000)
        settled(page)
        assert navigation(page) == [tr("en", f"page.{key}") for key in ADMIN_PAGES]
        expect(page.get_by_role("button", name=tr("en", "releases.create_button"))).to_be_visible()
        expect(page.locator("html")).to_have_attribute("lang", "en")
        assert stored_locale(work, "admin") == "en"
    finally:
        context.close()
        query(work, 'UPDATE "user" SET locale = NULL WHERE name = :name', name="admin")  # back to "follow the browser"


def test_a_browser_that_asks_for_japanese_gets_the_login_page_and_the_app_in_japanese(demo_server, browser):
    base, _ = demo_server
    expect = pytest.importorskip("playwright.sync_api").expect
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
    page = context.new_page()
    try:
        page.goto(base)
        page.get_by_label(tr("ja", "login.password"), exact=True).wait_for(timeout=20_000)
        settled(page)
        expect(page.get_by_role("heading", name=tr("ja", "app.title"))).to_be_visible()
        expect(page.get_by_role("button", name=tr("ja", "login.submit"), exact=True)).to_be_visible()
        expect(page.get_by_role("combobox", name=tr("ja", "language.label"))).to_have_value(
            tr("ja", "language.browser", language=tr("ja", "language.ja")))
        body = page.inner_text("body")
        assert tr("en", "login.name") not in body and tr("en", "login.password") not in body
        shot(page, "10-login-japanese-browser")

        page.get_by_label(tr("ja", "login.name"), exact=True).fill("mika")
        page.get_by_label(tr("ja", "login.password"), exact=True).fill("mika-demo-pass")
        page.get_by_role("button", name=tr("ja", "login.submit"), exact=True).click()
        page.get_by_role("heading", name=tr("ja", "page.home")).first.wait_for(timeout=20_000)
        settled(page)
        assert navigation(page) == [tr("ja", "page.home"), tr("ja", "page.adjudicate")]
        expect(page.get_by_role("heading", name=tr("ja", "home.adjudicator"))).to_be_visible()
        expect(page.get_by_role("combobox", name=tr("ja", "language.label"))).to_have_value(
            tr("ja", "language.browser", language=tr("ja", "language.ja")))
        shot(page, "11-home-japanese-browser")
    finally:
        context.close()
