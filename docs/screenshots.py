"""Take the README's screenshots of the real app (headless Chromium through Playwright).

Seeds the demo into a new SQLite database in a temporary folder, imports labels for the first
five cases (aoi and ren, disagreeing on a few claims) so that every page has something to show,
serves the app with `annotator serve`, and saves one PNG per page into docs/screenshots/:
the login, each role's Home, the Label and Adjudicate pages (English and Japanese, each in a
1920x1080 and a 1366x768 window, as much as the window shows), Agreement,
Releases, Admin and Import, and the Runs page against the demo's gold-v0 (its Compare tab: the
candidate run rag-v4-rerank against the baseline rag-v3, blocked; its Report tab with the blocked
case opened); then releases the final claims (those five cases' and the demo's pilot round's) and
shoots the Judges page (the demo's judge run against that release, English and Japanese).
Run: `python docs/screenshots.py` (needs Debian's chromium).
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "screenshots"
VIEWPORT = {"width": 1400, "height": 1000}


def main() -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no chromium on PATH (Debian: apt-get install chromium)")
    work = Path(tempfile.mkdtemp(prefix="annotator-shots-"))
    db = ["--db", str(work / "demo.db")]
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    run = [sys.executable, "-m", "annotator"]
    subprocess.run([*run, "demo", "--no-serve", *db], cwd=work, env=env, check=True, capture_output=True)
    (work / "labels.csv").write_text(_labels(), encoding="utf-8")
    subprocess.run([*run, "labels", "import", "labels.csv", *db], cwd=work, env=env, check=True, capture_output=True)
    port = _free_port()
    with (work / "serve.log").open("w") as log:
        server = subprocess.Popen([*run, "serve", *db, "--port", str(port)], cwd=work, env=env, stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_for(base)
        OUT.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
            _take(browser, base)
            _take_runs(browser, base)
            subprocess.run([*run, "release", "create", "demo-v1", "--only-final", "--bootstrap", "0", *db], cwd=work,
                           env=env, check=True, capture_output=True)
            _take_judges(browser, base)
            browser.close()
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=20)
    print(f"saved {len(list(OUT.glob('*.png')))} screenshots in {OUT.relative_to(REPO)}")


RATIONALES = {"support": "パッセージ 1 がそのまま述べている。", "contradict": "パッセージの期限と食い違う。",
              "insufficient": "どのパッセージにも書かれていない。"}
"""A labeler's rationale for each label (what the Adjudicate page shows beside the two labels)."""


def _labels() -> str:
    """aoi's and ren's labels on the claims of demo-01 to demo-05, with a rationale; they disagree
    on every fourth."""
    rng = random.Random(7)
    rows = ["claim_id,labeler,label,rationale"]
    claims = [f"demo-0{case}-c{claim}" for case in range(1, 6) for claim in (1, 2)]
    for n, claim_id in enumerate(claims):
        first = rng.choice(("support", "support", "contradict", "insufficient"))
        second = first if n % 4 else ("contradict" if first != "contradict" else "support")
        rows += [f"{claim_id},aoi,{first},{RATIONALES[first]}", f"{claim_id},ren,{second},{RATIONALES[second]}"]
    return "\n".join(rows) + "\n"


def _take(browser, base: str) -> None:  # noqa: ANN001 - a Playwright Browser
    page = _new_page(browser, base)
    _shot(page, "01-login")
    _log_in(page, "ren", "ren-demo-pass")
    _shot(page, "02-home-labeler")
    page.context.close()
    _take_claim_pages(browser, base)

    page = _new_page(browser, base)
    _log_in(page, "admin", "admin-demo-pass")
    _shot(page, "06-home-admin")
    for number, title in ((7, "Agreement"), (8, "Releases"), (9, "Admin"), (10, "Import")):
        _go(page, title)
        _shot(page, f"{number:02d}-{title.lower()}")
    page.context.close()


CLAIM_SCREENS = {"": {"width": 1920, "height": 1080}, "-1366x768": {"width": 1366, "height": 768}}
"""The windows the Label and Adjudicate pages are shown in (file name suffix: window): a desktop
and a laptop. Each shot is the window as it opens, not the whole page: what is seen without scrolling."""
CLAIM_PAGES = (("03-label", "ren", "en-US", "Home", "Label"), ("04-label-japanese", "ren", "ja-JP", "ホーム", "ラベル付け"),
               ("05-adjudicate", "mika", "en-US", "Home", "Adjudicate"),
               ("05-adjudicate-japanese", "mika", "ja-JP", "ホーム", "裁定"))
"""(file name, user, browser language, Home's title, the page's title in that language)."""


def _take_claim_pages(browser, base: str) -> None:  # noqa: ANN001 - a Playwright Browser
    """The Label and Adjudicate pages in each of CLAIM_SCREENS, in English and Japanese."""
    for suffix, size in CLAIM_SCREENS.items():
        for name, user, locale, home, title in CLAIM_PAGES:
            page = _new_page(browser, base, locale=locale, viewport=size)
            _log_in(page, user, f"{user}-demo-pass", home=home)
            _go(page, title)
            _shot(page, name + suffix, whole=False)
            page.context.close()


def _take_judges(browser, base: str) -> None:  # noqa: ANN001 - a Playwright Browser
    """The Judges page once a release exists: in English, then in Japanese."""
    for name, locale, home, title in (("11-judges", "en-US", "Home", "Judges"),
                                      ("12-judges-japanese", "ja-JP", "ホーム", "判定器")):
        page = _new_page(browser, base, locale=locale)
        _log_in(page, "admin", "admin-demo-pass", home=home)
        _go(page, title)
        _shot(page, name)
        page.context.close()


def _take_runs(browser, base: str) -> None:  # noqa: ANN001 - a Playwright Browser
    """The Runs page against the demo's gold-v0 (the release the README's commands name, the
    only one yet): the Compare tab with its blocked decision, then the Report tab with the blocked
    case opened."""
    page = _new_page(browser, base)
    _log_in(page, "admin", "admin-demo-pass")
    _go(page, "Runs")
    page.get_by_role("tab", name="Compare").click()
    page.locator("[data-testid=stAlert]", has_text="Decision: BLOCKED").wait_for(timeout=60_000)
    _settled(page)
    _shot(page, "13-runs-compare")
    page.get_by_role("tab", name="Report").click()
    _choose(page, "Open a case", "demo-32")
    page.get_by_role("heading", name="Case demo-32").wait_for(timeout=60_000)
    _settled(page)
    _shot(page, "14-runs-report")
    page.context.close()


def _choose(page: Page, label: str, option: str) -> None:
    """Pick `option` in the page's select (a Streamlit selectbox) named `label`."""
    box = page.locator("[data-testid=stMain]").get_by_role("combobox", name=label, exact=True).first
    choice = page.get_by_role("option", name=option, exact=True)
    for attempt in range(3):  # a click right after a tab switch may not open the list
        box.click()
        try:
            choice.wait_for(timeout=5_000)
            break
        except PlaywrightTimeoutError:
            if attempt == 2:
                raise
    choice.click()
    _settled(page)


def _new_page(browser, base: str, locale: str = "en-US", viewport: dict | None = None) -> Page:  # noqa: ANN001
    page = browser.new_context(viewport=viewport or VIEWPORT, locale=locale).new_page()
    page.goto(base)
    page.locator("input[type=password]").wait_for(timeout=60_000)
    return page


def _log_in(page: Page, name: str, password: str, home: str = "Home") -> None:
    page.locator("[data-testid=stTextInput] input").first.fill(name)
    page.locator("input[type=password]").fill(password)
    page.keyboard.press("Enter")
    page.get_by_role("heading", name=home).first.wait_for(timeout=60_000)
    _settled(page)


def _go(page: Page, title: str) -> None:
    """Open a page by its navigation link (a typed address would log out)."""
    page.locator("[data-testid=stSidebarNavLink]", has_text=title).first.click()
    page.get_by_role("heading", name=title).first.wait_for(timeout=60_000)
    _settled(page)


def _settled(page: Page) -> None:
    page.locator("[data-testid=stApp][data-test-script-state=notRunning]").wait_for(timeout=60_000)
    page.wait_for_function("() => !document.querySelector('[data-stale=true]')", timeout=60_000)
    time.sleep(1.0)  # charts and fonts finish drawing


def _shot(page: Page, name: str, whole: bool = True) -> None:
    """The whole page in OUT/`name`.png (`whole`), or the window as it is. Streamlit scrolls its
    main area (and the sidebar) inside the window, so the document never grows and `full_page`
    alone would stop at the window's bottom: the window is made as tall as they are for the shot,
    then set back (as the browser tests' `shot` does)."""
    if not whole:
        page.screenshot(path=str(OUT / f"{name}.png"))
        print(f"  {name}.png")
        return
    size = page.viewport_size
    tallest = page.evaluate("() => Math.max(0, ...Array.from(document.querySelectorAll("
                            "'[data-testid=stMain], [data-testid=stSidebarContent]'), e => e.scrollHeight))")
    page.set_viewport_size({"width": size["width"], "height": min(max(tallest, size["height"]), 16_000)})
    try:
        time.sleep(0.5)  # charts redraw for the new window
        page.screenshot(path=str(OUT / f"{name}.png"), full_page=True)
    finally:
        page.set_viewport_size(size)
    print(f"  {name}.png")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(base: str) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{base}/_stcore/health", timeout=2).read() == b"ok":
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"annotator serve did not answer at {base}")


if __name__ == "__main__":
    main()
