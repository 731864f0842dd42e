"""How fast the Label page answers on a large database (a benchmark, not a test).

Builds (once, kept in --work) a SQLite database of 100,000 claims with 197,500 labels: labelers
`bench-a` and `bench-b` labeled every claim but the last 2,500, which are assigned to `bench-c`
and `bench-d`; `bench-d` labeled them, `bench-c` has them all to label. Then, as `bench-c`:

1. **Server side, ours vs the floor.** The Label page run through Streamlit's AppTest: press
   Support, which saves the label and renders the next claim, timed per press. The floor is
   the same page and the same presses with every database call replaced by the answer it gave in
   the run before (the services the page calls are recorded, then replayed): the framework's own
   cost of the page. Rounds of real and floor presses alternate, so both see the same machine.
   Target: ours within 1.3x the floor (medians).
2. **The "next claim" query**: `labeling.next_claim_for` inside an open session, median of 200.
   Target: under 5 ms.
3. **In a real browser**: `annotator serve` on the same database, headless Chromium through
   Playwright, bench-c on the Label page: the time from a click on Support until the next claim's
   heading shows, median of 50 (needs Debian's chromium).

Run: `python benchmarks/label_page.py [--work DIR] [--presses 60] [--clicks 50] [--no-browser]`.
Each run labels presses + clicks of bench-c's 2,500 claims; remove DIR to start again.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline import CLAIMS_PER_CASE, write_cases  # noqa: E402

import streamlit as st  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

import annotator.ui.components as ui  # noqa: E402
from annotator.db import init_db, session_scope  # noqa: E402
from annotator.services import drafts, guidelines, labeling  # noqa: E402
import annotator.ui.guideline  # noqa: E402,F401 - loaded before the recorder patches its imported names
from annotator.services.access import OPERATOR  # noqa: E402
from annotator.services.imports import import_cases, import_labels  # noqa: E402
from annotator.services.labeling import assign_cases, first_cases  # noqa: E402
from annotator.services.lookup import get_dataset  # noqa: E402
from annotator.services.users import add_user, get_user  # noqa: E402
from annotator.vocabulary import LABELS  # noqa: E402

CLAIMS = 100_000
OWN = 2_500  # the claims of bench-c and bench-d, at the end
PASSWORD = "bench-c-password"
APP = Path(__file__).resolve().parents[1] / "annotator" / "ui" / "app.py"
CURRENT = "label.claim_pk"  # the Label page's session key of the claim it shows
RECORDED_MODULES = (labeling, drafts, guidelines)  # the services the Label page calls; replayed for the floor


def build(work: Path) -> str:
    """The benchmark database in `work` (built when missing); returns its URL."""
    url = f"sqlite:///{work / 'label-page.db'}"
    if (work / "label-page.db").exists():
        return url
    started = time.perf_counter()
    engine = init_db(url)
    cases, labels, own = work / "cases.jsonl", work / "labels.csv", work / "own.csv"
    random.seed(0)
    write_cases(cases, CLAIMS)
    _write_labels(labels, own)
    with session_scope(engine) as session:
        import_cases(session, OPERATOR, cases, fmt="jsonl", dataset="bench")
    with session_scope(engine) as session:
        import_labels(session, OPERATOR, labels, dataset="bench")
        add_user(session, OPERATOR, "bench-c", ["labeler"], PASSWORD)
        add_user(session, OPERATOR, "bench-d", ["labeler"], "bench-d-password")
        all_cases = first_cases(session, CLAIMS // CLAIMS_PER_CASE, get_dataset(session, "bench").id)
        assign_cases(session, OPERATOR, all_cases[-(OWN // CLAIMS_PER_CASE):], ["bench-c", "bench-d"])
    with session_scope(engine) as session:
        import_labels(session, OPERATOR, own, dataset="bench")
    engine.dispose()
    print(f"built {url} in {time.perf_counter() - started:.0f} s")
    return url


def _write_labels(labels: Path, own: Path) -> None:
    rng = random.Random(1)
    n_cases, own_cases = CLAIMS // CLAIMS_PER_CASE, OWN // CLAIMS_PER_CASE
    with labels.open("w", encoding="utf-8") as out, own.open("w", encoding="utf-8") as mine:
        out.write("claim_id,labeler,label\n")
        mine.write("claim_id,labeler,label\n")
        for c in range(n_cases):
            for j in range(CLAIMS_PER_CASE):
                if c < n_cases - own_cases:
                    out.write(f"c-{c}-{j},bench-a,{rng.choice(LABELS)}\nc-{c}-{j},bench-b,{rng.choice(LABELS)}\n")
                else:
                    mine.write(f"c-{c}-{j},bench-d,{rng.choice(LABELS)}\n")


# ---------------------------------------------------------------- the floor: record, then replay


class Recorder:
    """Wraps every function of RECORDED_MODULES whose first parameter is a session. Recording, each
    call runs and its answer is queued under (function, arguments but the session); replaying,
    the call returns the next queued answer without touching the database. ui.db/read_db and the
    logged-in user are replaced too while replaying."""

    def __init__(self) -> None:
        self.answers: dict[tuple, deque] = defaultdict(deque)
        self.replaying = False
        self.user: Any = None
        self._undo: list[tuple[Any, str, Any]] = []

    def install(self) -> None:
        wrapped = {}
        for module in RECORDED_MODULES:
            for name, function in list(vars(module).items()):
                code = getattr(function, "__code__", None)
                if code is not None and function.__module__ == module.__name__ and code.co_varnames[:1] == ("session",):
                    wrapped[function] = self._wrap(name, function)
                    self._patch(module, name, wrapped[function])
        for module in [m for name, m in sys.modules.items() if name.startswith("annotator.ui.")]:
            for name, value in list(vars(module).items()):  # names the pages' helpers imported
                if callable(value) and value in wrapped:
                    self._patch(module, name, wrapped[value])
        for name in ("db", "read_db"):
            self._patch(ui, name, self._no_db(getattr(ui, name)))
        for name in ("current_user", "require_page", "session_user"):
            self._patch(ui, name, self._user(getattr(ui, name)))

    def uninstall(self) -> None:
        for owner, name, original in reversed(self._undo):
            setattr(owner, name, original)

    def _patch(self, owner: Any, name: str, replacement: Any) -> None:
        self._undo.append((owner, name, getattr(owner, name)))
        setattr(owner, name, replacement)

    def _wrap(self, name: str, function: Any) -> Any:
        @functools.wraps(function)
        def wrapper(session: Any, *args: Any, **kwargs: Any) -> Any:
            key = (name, _key(args), _key(tuple(sorted(kwargs.items()))))
            if self.replaying:
                answers = self.answers[key]
                answer = answers.popleft()
                answers.append(answer)  # cycle: a replay may ask once more than the recording did
                return answer
            answer = function(session, *args, **kwargs)
            self.answers[key].append(answer)
            return answer
        return wrapper

    def _no_db(self, original: Any) -> Any:
        def opened() -> Any:
            return contextlib.nullcontext(None) if self.replaying else original()
        return opened

    def _user(self, original: Any) -> Any:
        def user(*args: Any) -> Any:
            if self.replaying:
                return self.user
            self.user = original(*args)
            return self.user
        return user


def _key(values: Any) -> Any:
    if isinstance(values, (list, tuple)):
        return tuple(_key(value) for value in values)
    if values is None or isinstance(values, (int, str, float, bool)):
        return values
    return type(values).__name__


# ---------------------------------------------------------------- 1. server side


def shown_claim(at: AppTest) -> str:
    """The claim id in the Label page's "Claim X" heading."""
    for header in at.header:
        match = re.fullmatch(r"Claim (\S+)", header.value)
        if match:
            return match.group(1)
    raise RuntimeError("the Label page shows no claim: " + " | ".join(m.value for m in at.markdown)[:500])


def open_label_page(url: str) -> AppTest:
    os.environ["DATABASE_URL"] = url
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.text_input(key="login.name").input("bench-c")
    at.text_input(key="login.password").input(PASSWORD)
    at.form_submit_button[0].click().run()
    if not at.header or not any(h.value.startswith("Claim ") for h in at.header):
        at.switch_page("views/label.py").run()
    return at


def label_button(at: AppTest, value: str):  # noqa: ANN201 - an AppTest Button
    """The Label page's button that saves `value` on the claim shown (its key names the claim)."""
    return next(b for b in at.button if b.key and b.key.startswith(f"label.button.{value}."))


def press(at: AppTest) -> float:
    """Press Support on the shown claim; seconds until the next claim is rendered."""
    before = shown_claim(at)
    started = time.perf_counter()
    label_button(at, "support").click().run()
    seconds = time.perf_counter() - started
    if at.exception:
        raise RuntimeError(str(at.exception))
    if shown_claim(at) == before:
        raise RuntimeError(f"the page stayed on {before}")
    return seconds


def server_side(url: str, presses: int, rounds: int = 3) -> tuple[list[float], list[float]]:
    """(ours, floor) seconds per press, over `rounds` alternating rounds of presses // rounds."""
    ui.DOUBLE_CLICK_SECONDS = 0.0  # presses come faster than a person's
    recorder = Recorder()
    recorder.install()
    ours: list[float] = []
    floor: list[float] = []
    try:
        at = open_label_page(url)
        for _ in range(3):  # warm up: imports, caches, the first query plans
            press(at)
        per_round = max(presses // rounds, 1)
        for _ in range(rounds):
            recorder.answers.clear()
            start = at.session_state[CURRENT]
            _show(at, start)  # recorded too: the floor's round starts by rendering this claim
            ours += [press(at) for _ in range(per_round)]
            after = at.session_state[CURRENT]
            recorder.replaying = True
            _show(at, start)
            floor += [press(at) for _ in range(per_round)]
            recorder.replaying = False
            _show(at, after)
    finally:
        recorder.uninstall()
    return ours, floor


def _show(at: AppTest, claim_pk: int) -> None:
    """Open the claim `claim_pk` on the page (the floor replays the claims just labeled)."""
    at.session_state[CURRENT] = claim_pk
    at.run()


# ---------------------------------------------------------------- 2. the next-claim query


def next_claim_query(url: str, n: int = 200) -> list[float]:
    engine = init_db(url)
    seconds = []
    with session_scope(engine) as session:
        user = get_user(session, "bench-c")
        labeling.next_claim_for(session, user)
        for _ in range(n):
            started = time.perf_counter()
            labeling.next_claim_for(session, user)
            seconds.append(time.perf_counter() - started)
    engine.dispose()
    return seconds


# ---------------------------------------------------------------- 3. in a real browser


def in_browser(url: str, work: Path, clicks: int) -> list[float]:
    """Click-to-next-claim seconds in headless Chromium against `annotator serve`."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no chromium on PATH (Debian: apt-get install chromium); or pass --no-browser")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = (work / "serve.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "annotator", "serve", "--db", url, "--port", str(port)],
                              cwd=work, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(base)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, headless=True,
                                                 args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(base)
            page.get_by_label("User name", exact=True).fill("bench-c")
            page.get_by_label("Password", exact=True).fill(PASSWORD)
            page.get_by_role("button", name="Log in").click()
            page.get_by_text("Logged in as bench-c").wait_for(timeout=60_000)
            page.locator("[data-testid=stSidebarNavLink]", has_text="Label").first.click()  # a reload would log out
            heading = page.get_by_role("heading", name=re.compile(r"^Claim c-"))
            heading.first.wait_for(timeout=60_000)
            seconds = []
            for _ in range(clicks + 3):
                before = heading.first.inner_text()
                button = page.get_by_role("button", name=re.compile(r"^support\b", re.IGNORECASE)).first
                time.sleep(0.7)  # the page refuses a press within 0.6 s of a move (a double click)
                started = time.perf_counter()
                button.click()
                page.wait_for_function(
                    "before => [...document.querySelectorAll('h2')].some(h => /^Claim c-/.test(h.innerText) && h.innerText !== before)",
                    arg=before, timeout=60_000)
                seconds.append(time.perf_counter() - started)
            browser.close()
        return seconds[3:]
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=20)
        log.close()


def _wait_for(base: str) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{base}/_stcore/health", timeout=2).read() == b"ok":
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"annotator serve did not answer at {base}")


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    return (f"median {statistics.median(ordered) * 1000:7.2f} ms, p95 {ordered[int(0.95 * len(ordered)) - 1] * 1000:7.2f} ms"
            f" (n={len(ordered)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None, help="folder for the database (kept and reused)")
    parser.add_argument("--presses", type=int, default=60, help="label presses through AppTest (ours; the floor repeats them)")
    parser.add_argument("--clicks", type=int, default=50, help="clicks in the browser")
    parser.add_argument("--no-browser", action="store_true", help="skip the browser measurement")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="annotator-label-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    url = build(work)
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    ours, floor = server_side(url, args.presses)
    print(f"{'label + next claim, ours':<34} {_ms(ours)}")
    print(f"{'same page, no database (floor)':<34} {_ms(floor)}")
    print(f"{'ratio ours / floor (medians)':<34} {statistics.median(ours) / statistics.median(floor):.2f} (target <= 1.3)")
    print(f"{'next-claim query':<34} {_ms(next_claim_query(url))} (target median < 5 ms)")
    if not args.no_browser:
        print(f"{'browser click to next claim':<34} {_ms(in_browser(url, work, args.clicks))}")
    print(f"load average after: {os.getloadavg()[0]:.1f}; work folder: {work}")


if __name__ == "__main__":
    main()
