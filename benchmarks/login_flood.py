"""Failed logins flooding a served app while a labeler saves (a benchmark, not a test).

Starts `annotator demo` (a fresh SQLite database in a temporary folder, or --db) on a free
localhost port, opens Debian's Chromium through Playwright (async API, one browser) and drives
real browser sessions: --tabs login tabs, each submitting the login form about --rate times a
second under a new random name and a wrong password, for --seconds; meanwhile the demo labeler
`aoi`, logged in in a tab of her own on the Label page, saves one claim after another with the
key 1 (a second after each claim appears) and each save's latency is measured (the key press until "Saved support on claim X." (or the next
claim) is on screen, at most --save-timeout seconds). /_stcore/health is asked once a second. When the flood
stops, the app must recover by itself: the time until a new tab logs in as `ren` is measured
(at most 120 s). The server is stopped at the end. All traffic goes to 127.0.0.1.

Real browser sessions, rather than threads calling authenticate: the failure this measures (a
login holding SQLite's write lock while it hashes, Streamlit sessions piling up on the pool,
tracebacks rendered) lives in the served app's own threads, engine and pool, which only
sessions of that app exercise.

Prints the logins submitted, the save latencies (n, p50, p95, max), the saves that failed and
what the page said, the tracebacks shown in any tab, the health checks that failed, the server
log's tracebacks and pool timeouts ("QueuePool limit"), and the time to recover.

Run: `python benchmarks/login_flood.py [--tabs 3] [--rate 1] [--seconds 40] [--db URL] [--log FILE]`
(the `annotator` served is the one on PYTHONPATH; needs playwright and /usr/bin/chromium).

Measured on SQLite (2 cores shared with other people's tests, load average 11-19; python 3.11,
streamlit 1.67, SQLite 3.40, argon2-cffi 25.1 at t=3, 64 MiB, p=4: a check took 0.25 s of CPU,
0.75-0.9 s of wall time), defaults (3 tabs x 1 login/s, 40 s). "Before" is commit 6a2570c (the
login held SQLite's write lock through the Argon2 check; pool 5 + 10, 30 s pool timeout), run
alternately with "after" (check outside any transaction in low-priority checker threads; pool
20 + 10, 10 s timeout, a pool timeout shown as "busy, try again"):
                 logins  saves  save p50  save max   failed saves              server tracebacks         health fails  recovered
  before, run 1    71      2    4.16 s    4.96 s     1 (no answer in 60 s)     ~12 pool timeouts         2 of 37       33.5 s
  before, run 2    67      4    2.25 s    4.79 s     1 (no answer in 60 s)     15 DatabaseBusyError,     7 of 32       19.6 s
                                                                               2 pool timeouts
  before, run 3    51      3    2.53 s    4.45 s     1 ("database is busy"     10 DatabaseBusyError      3 of 37        9.6 s
                                                       after 41.4 s)
  after, run 1     43      7    1.26 s   15.80 s     0                         0                         6 of 33       11.6 s
  after, run 2     66      8    1.50 s   21.93 s     0                         0                         5 of 34       14.0 s
  after, run 3     38      5    2.90 s   14.28 s     0                         0                         8 of 32        7.0 s
  after, run 4     51      6    4.67 s   18.44 s     0                         0                         6 of 33       13.7 s
On a quiet machine (load average about 1), defaults, before and after run one after the other:
  before           90      4    1.72 s   33.43 s     0                         3 DatabaseBusyError       0 of 40        8.8 s
  after            96     16    0.90 s    1.83 s     0 (p95 1.70 s)            0                         0 of 40        9.2 s
Without the flood (1 tab, one login every 10 s, 30 s, load average 12): 12 saves, p50 0.76 s,
max 2.02 s, no failed health check. "Recovered" includes loading the login page in a new
browser context (3.6-5.4 s without the flood). Before, a save waited behind the logins for the
write lock and failed (or never answered) and tracebacks were logged; after, every save landed,
but a save can still take 14-22 s and some health checks (2 s timeout) fail: the whole machine
had 8-10 runnable processes a core, and the Argon2 checks' CPU (0.25 s each, ~1.6 logins/s)
comes out of the same 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from playwright.async_api import Page, async_playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HEALTH_TIMEOUT = 60
RECOVERY_TIMEOUT = 120
READ_SECONDS = 1.0
"""The labeler looks at each claim this long before pressing 1 (more than keyguard.QUIET_MS)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def healthy(base: str, timeout: float = 2) -> bool:
    try:
        return urllib.request.urlopen(f"{base}/_stcore/health", timeout=timeout).read() == b"ok"
    except OSError:
        return False


@contextmanager
def served_demo(work: Path, db: str | None):
    """`annotator demo --port P` in `work` (output in work/server.log); yields its base URL."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    log = (work / "server.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "annotator", "demo", "--db", db or str(work / "demo.db"),
                               "--port", str(port)],
                              cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + HEALTH_TIMEOUT
        while not healthy(base):
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit(f"the demo did not start: {(work / 'server.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield base
    finally:
        os.killpg(server.pid, 15)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait()
        log.close()


async def settled(page: Page, timeout: float = 30_000) -> None:
    await page.locator("[data-testid=stApp][data-test-script-state=notRunning]").wait_for(timeout=timeout)


async def log_in(page: Page, base: str, name: str, password: str, timeout: float = 30_000) -> None:
    await page.goto(base, timeout=timeout)
    await page.get_by_label("User name", exact=True).fill(name, timeout=timeout)
    await page.get_by_label("Password", exact=True).fill(password, timeout=timeout)
    await page.get_by_role("button", name="Log in").click(timeout=timeout)
    await page.get_by_text(f"Logged in as {name}").wait_for(timeout=timeout)


async def tracebacks_on(page: Page) -> int:
    return await page.locator("[data-testid=stException]").count()


async def flood_tab(browser, base: str, rate: float, until: float, stats: dict) -> None:  # noqa: ANN001
    """Submit the login form under new random names about `rate` times a second until `until`."""
    context = await browser.new_context()
    page = await context.new_page()
    try:
        await page.goto(base, timeout=30_000)
        while time.monotonic() < until:
            started = time.monotonic()
            try:
                if await tracebacks_on(page):  # a traceback replaced the form: count it, start again
                    stats["tracebacks_seen"] += 1
                    await page.goto(base, timeout=20_000)
                await page.get_by_label("User name", exact=True).fill(f"flood-{secrets.token_hex(4)}", timeout=20_000)
                await page.get_by_label("Password", exact=True).fill("not-the-password", timeout=20_000)
                await page.get_by_role("button", name="Log in").click(timeout=20_000)
                stats["submitted"] += 1
            except Exception as error:  # noqa: BLE001 - a tab that cannot submit counts and tries again
                stats["tab_errors"] += 1
                stats.setdefault("tab_error_kinds", set()).add(type(error).__name__)
            await asyncio.sleep(max(0.0, 1 / rate - (time.monotonic() - started)))
    finally:
        await context.close()


async def labeler_tab(browser, base: str):  # noqa: ANN001, ANN201
    """aoi logged in, on the Label page (before the flood starts)."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    await log_in(page, base, "aoi", "aoi-demo-pass", timeout=60_000)
    await page.locator("[data-testid=stSidebarNavLink]", has_text="Label").first.click()
    await page.get_by_text("Keys 1, 2, 3 save").wait_for(timeout=60_000)
    return context, page


async def _shown_claim(page: Page, timeout: float = 1_000) -> str | None:
    """The claim id of the Label page's "Claim N of M in your queue: ID" line (None: not shown)."""
    line = page.get_by_text(re.compile(r"^Claim \d+ of \d+ in your queue: \S+$")).first
    try:
        return (await line.inner_text(timeout=timeout)).rsplit(": ", 1)[1].strip()
    except Exception:  # noqa: BLE001 - not on screen (yet)
        return None


async def _main_text(page: Page) -> str:
    """The first lines of the page's main area and whether its script runs, for a report."""
    try:
        state = await page.locator("[data-testid=stApp]").get_attribute("data-test-script-state", timeout=2_000)
        text = " | ".join((await page.locator("[data-testid=stMain]").inner_text(timeout=2_000)).split("\n")[:6])
        return f"[{state}] {text[:300]}"
    except Exception as error:  # noqa: BLE001 - nothing readable
        return f"({type(error).__name__})"


async def labeler(page: Page, until: float, save_timeout: float, result: dict) -> None:
    """aoi saves `support` on one claim after another (key 1) until `until`; each save's latency."""
    while time.monotonic() < until:
        try:
            await settled(page, save_timeout * 1000)
            await page.get_by_text("Keys 1, 2, 3 save").wait_for(timeout=save_timeout * 1000)
            claim_id = await _shown_claim(page, 5_000)
        except Exception as error:  # noqa: BLE001 - the page did not come back: reported
            result["errors"].append(f"Label page not shown: {type(error).__name__}")
            break
        if claim_id is None:
            result["errors"].append("the queue ended (every claim saved): the labeler stopped")
            break
        await asyncio.sleep(READ_SECONDS)  # the key guard drops a press within its quiet time after a move
        await page.evaluate("document.activeElement && document.activeElement.blur()")
        started = time.monotonic()
        await page.keyboard.press("1")
        saved = page.get_by_text(f"Saved support on claim {claim_id}.")
        failed = page.locator("[data-testid=stException], [data-testid=stAlertContentError]")
        deadline = started + save_timeout
        while time.monotonic() < deadline:
            if await saved.count() or await _shown_claim(page) not in (claim_id, None):
                result["latencies"].append(time.monotonic() - started)
                break
            if await failed.count():
                text = (await failed.first.inner_text()).strip().splitlines()
                result["errors"].append(f"after {time.monotonic() - started:.1f} s: {text[0][:120] if text else '?'}")
                await asyncio.sleep(1)
                break
            await asyncio.sleep(0.05)
        else:
            shown = await _main_text(page)
            result["errors"].append(f"no answer within {save_timeout:.0f} s on claim {claim_id}; the page shows: {shown}")


async def health_monitor(base: str, until: float, stats: dict) -> None:
    while time.monotonic() < until:
        started = time.monotonic()
        ok = await asyncio.to_thread(healthy, base, 2)
        stats["checks"] += 1
        stats["failed"] += 0 if ok else 1
        await asyncio.sleep(max(0.0, 1 - (time.monotonic() - started)))


async def recovery(browser, base: str) -> float | None:  # noqa: ANN001
    """Seconds from the end of the flood until a new tab logs in as ren (None: not within RECOVERY_TIMEOUT)."""
    started = time.monotonic()
    while time.monotonic() - started < RECOVERY_TIMEOUT:
        context = await browser.new_context()
        try:
            await log_in(await context.new_page(), base, "ren", "ren-demo-pass", timeout=20_000)
            return time.monotonic() - started
        except Exception:  # noqa: BLE001 - not yet: try again
            await asyncio.sleep(2)
        finally:
            await context.close()
    return None


async def run(base: str, args: argparse.Namespace) -> dict:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            flood = {"submitted": 0, "tab_errors": 0, "tracebacks_seen": 0}
            saves = {"latencies": [], "errors": []}
            health = {"checks": 0, "failed": 0}
            labeler_context, labeler_page = await labeler_tab(browser, base)
            until = time.monotonic() + args.seconds
            await asyncio.gather(
                labeler(labeler_page, until, args.save_timeout, saves),
                health_monitor(base, until, health),
                *(flood_tab(browser, base, args.rate, until, flood) for _ in range(args.tabs)),
            )
            recovered = await recovery(browser, base)
            await labeler_context.close()
        finally:
            await browser.close()
    return {"flood": flood, "saves": saves, "health": health, "recovered": recovered}


def report(result: dict, log_text: str, args: argparse.Namespace) -> None:
    flood, saves, health = result["flood"], result["saves"], result["health"]
    latencies = sorted(saves["latencies"])
    print(f"login flood: {args.tabs} tabs x {args.rate:g}/s for {args.seconds} s: {flood['submitted']} failed logins "
          f"submitted ({flood['tab_errors']} submissions a tab could not make"
          + (f": {', '.join(sorted(flood['tab_error_kinds']))})" if flood['tab_errors'] else ")"))
    if latencies:
        p95 = latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))]
        print(f"labeler saves: {len(latencies)} saved, latency p50 {statistics.median(latencies):.2f} s, "
              f"p95 {p95:.2f} s, max {latencies[-1]:.2f} s")
    else:
        print("labeler saves: none saved")
    print(f"labeler save errors: {len(saves['errors'])}")
    for error in saves["errors"][:10]:
        print(f"  {error}")
    print(f"tracebacks shown in the login tabs: {flood['tracebacks_seen']}")
    print(f"health checks failed: {health['failed']} of {health['checks']}")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", log_text)  # Streamlit's tracebacks are coloured
    raised = Counter(match.group(1) for match in re.finditer(r"^\s*(\w+(?:Error|Exception)): ", plain, re.MULTILINE))
    print(f"server log: {sum(raised.values())} app errors with a traceback"
          + "".join(f", {n} {name}" for name, n in raised.most_common())
          + f"; {len(re.findall(r'TimeoutError: QueuePool limit', plain))} pool timeouts (QueuePool limit)")
    recovered = result["recovered"]
    print("after the flood: " + (f"a new login worked after {recovered:.1f} s" if recovered is not None
                                 else f"no login worked within {RECOVERY_TIMEOUT} s"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tabs", type=int, default=3, help="login tabs flooding (default 3)")
    parser.add_argument("--rate", type=float, default=1.0, help="logins a second per tab (default 1)")
    parser.add_argument("--seconds", type=int, default=40, help="how long the flood lasts (default 40, at most 300)")
    parser.add_argument("--save-timeout", type=float, default=60.0, help="longest wait for one save (default 60 s)")
    parser.add_argument("--db", help="database URL or SQLite path (default: a fresh SQLite file)")
    parser.add_argument("--log", type=Path, help="keep a copy of the server's log in this file")
    args = parser.parse_args()
    if not (1 <= args.tabs <= 20 and 0 < args.rate <= 10 and 1 <= args.seconds <= 300):
        parser.error("--tabs 1..20, --rate up to 10, --seconds 1..300")
    with tempfile.TemporaryDirectory(prefix="login-flood-") as folder:
        work = Path(folder)
        with served_demo(work, args.db) as base:
            result = asyncio.run(run(base, args))
        log_text = (work / "server.log").read_text(errors="replace")
        if args.log:
            args.log.write_text(log_text)
        report(result, log_text, args)


if __name__ == "__main__":
    main()
