"""A labeling team's week in the browser, measured: two labelers label 100 claims, an adjudicator
decides the disputes, with the keyboard only (a benchmark that prints figures, not a test).

What it does. It builds a fresh database in --work (SQLite unless --db names an empty one): 100
claims made from the demo's cases (data/demo.jsonl, then data/demo-pilot.jsonl, then the demo's
cases again under new ids, until --claims claims), seeded as `annotator demo` seeds its users and
guideline (services/demo.py `seed_demo`), every case assigned to the labelers aoi and ren; mika
adjudicates. It serves the app (`annotator serve`) on a free port (or --port) and drives Debian's
Chromium (/usr/bin/chromium, headless, through Playwright) at 1366x768, one labeler after the
other, then the adjudicator. Each person labels every claim of their queue as a person with the
keyboard would, and nothing else:

- a labeler reads the claim, cites its first passage (Shift+1), and, unless the label is
  support, puts the focus in the rationale box (with its key, R, where the page has one, else by
  pressing Tab until the box has the focus), types a one-line rationale, presses
  Tab on (for contradict, Shift+Tab back to the severity box above the rationale first, the
  severity "other" typed, Enter) until the focus is out of every text box, then presses the label's key (1, 2, 3);
- the adjudicator reads the claim, puts the focus in the rationale box (as above), types a
  one-line rationale, Tabs out as above (severity "other" for contradict) and presses the
  decision's key.

The labels: aoi gives each claim the label its case's metadata intends (`intended_labels`); ren
the same except on a seeded share of the claims (--disagree, default 0.15), where ren picks one
of the other two; the adjudicator decides each dispute for the intended label.

What it prints (median, p95 and mean over the claims; per labeler, all labels, and the decisions):

- **waiting on the app per claim**: from the key press that saves until the next claim is
  rendered (the page's claim marker names the next claim, Streamlit's run has ended and no
  element of the previous run is left, and the claim's label buttons are drawn), and the whole
  time per claim spent waiting (that, plus the runs of the app after the cite key, after leaving
  the rationale box and after picking a severity, each from its key until that run has ended).
  Reading time is not in it: the script waits 0.8 s after a claim is rendered before its label
  key (the page ignores a label key within 0.6 s of a new claim: ui/keyguard.py), and that pause
  is not counted;
- **scrolls needed**: each time an element the person needs next (in reading order: the case's
  question on the first claim of a case, the claim, its first passage, the rationale box when
  they type in it, the label buttons) is not in the window, the script counts one scroll and
  scrolls it into view (as little as needed); the claim, the rationale box and the buttons must be
  wholly inside, the question and the passage partly; the top strip that Streamlit's header covers
  is not inside. A question folded away (not drawn) is skipped. Counted per element and per claim;
  scrolling is not counted as key presses;
- **key presses per label**: every key the script pressed from the claim's rendering to its save
  (Shift+1 counts one; each Tab, Enter and label key one), and apart from those the characters typed
  (rationale, severity name). A Tab walk starts where the focus is (a save leaves it where it
  was when that element is still on the page, else at the page's start); one that does not reach
  its box within --max-tabs presses gives up, and the script focuses the box (counted as "not
  reached by Tab").

Elements are found by their text and role (the claim's and the passage's text from the database,
the catalog's labels for the boxes, the buttons' keys `label.button.<value>.<claim_pk>` and
`adjudicate.button.<value>.<claim_pk>`, the key guard's claim marker), never by position, so the
script measures a changed layout as it is.

Run: `python benchmarks/labeling_day.py [--claims 100] [--work DIR] [--db URL] [--port N]
[--language en|ja] [--json FILE] [--headed]`. It needs Playwright (the test extra) and Chromium
(Debian: apt-get install chromium). Each run builds its database anew: --work must not hold one.
--json writes every claim's figures, to compare two runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlmodel import select  # noqa: E402

from annotator.db import init_db, session_scope  # noqa: E402
from annotator.models import Case, Claim, ClaimPassage, Passage  # noqa: E402
from annotator.services.access import OPERATOR  # noqa: E402
from annotator.services.demo import DEMO_DATASET, DEMO_FILE, DEMO_PILOT, DEMO_USERS, seed_demo  # noqa: E402
from annotator.services.labeling import assign_cases, first_unassigned_cases  # noqa: E402
from annotator.services.lookup import get_dataset  # noqa: E402
from annotator.ui.i18n import t, use_language  # noqa: E402
from annotator.vocabulary import LABELS  # noqa: E402

VIEWPORT = {"width": 1366, "height": 768}
LABELERS = ("aoi", "ren")
ADJUDICATOR = "mika"
PASSWORDS = {user.name: user.password for user in DEMO_USERS}
READ_SECONDS = 0.8
"""The pause after a claim is rendered before its label key (not counted as waiting): the page
ignores a label key within 0.6 s of a new claim (keyguard.QUIET_MS, components.DOUBLE_CLICK_SECONDS)."""
SEVERITY = "other"
RATIONALE = {"contradict": "passage 1 says otherwise", "insufficient": "the passages do not say"}
DECISION_RATIONALE = "passage 1 decides it"
TIMEOUT_MS = 60_000
KEY_OF = {value: str(n) for n, value in enumerate(LABELS, start=1)}

# --- the data -----------------------------------------------------------------------------------


def week_cases(n_claims: int) -> list[dict]:
    """Cases of the demo's files (demo, pilot, then the demo again under new ids) holding exactly
    `n_claims` claims: whole cases, the last one cut to the claims needed."""
    sources = [[json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
               for path in (DEMO_FILE, DEMO_PILOT)]
    out: list[dict] = []
    total, round_ = 0, 0
    while total < n_claims:
        for case in sources[round_ % 2]:
            if total >= n_claims:
                break
            case = json.loads(json.dumps(case))  # a copy
            if round_ >= 2:  # the same content again: new case and claim ids, the passages as they are
                suffix = f"-r{round_ // 2 + 1}"
                case["case_id"] += suffix
                intended = case.get("metadata", {}).get("intended_labels", {})
                for claim in case["claims"]:
                    old = claim["claim_id"]
                    claim["claim_id"] = old + suffix
                    if old in intended:
                        intended[claim["claim_id"]] = intended.pop(old)
            case["claims"] = case["claims"][:n_claims - total]
            total += len(case["claims"])
            out.append(case)
        round_ += 1
    return out


@dataclass(frozen=True)
class ClaimData:
    """What the script reads and types for one claim."""
    pk: int
    claim_id: str
    case_pk: int
    question: str
    text: str
    first_passage: str
    intended: str


def build(work: Path, url: str, n_claims: int, disagree: float, seed: int) -> tuple[dict[int, ClaimData], dict[str, dict[int, str]]]:
    """Seed the database `url` (empty) with the week's cases, the demo users and guideline, every
    case assigned to both labelers. Returns {claim_pk: ClaimData} and {labeler: {claim_pk: label}}."""
    cases = week_cases(n_claims)
    path = work / "week.jsonl"
    path.write_text("".join(json.dumps(case, ensure_ascii=False) + "\n" for case in cases), encoding="utf-8")
    intended = {claim["claim_id"]: case.get("metadata", {}).get("intended_labels", {}).get(claim["claim_id"], "support")
                for case in cases for claim in case["claims"]}
    engine = init_db(url)
    with session_scope(engine) as session:
        if seed_demo(session, demo_file=path, judge_file=None, pilot_file=None, release_dir=work / "releases", runs=()) is None:
            raise SystemExit(f"{url} holds the demo dataset already: give an empty database (or a new --work)")
    with session_scope(engine) as session:
        dataset = get_dataset(session, DEMO_DATASET)
        rest = first_unassigned_cases(session, len(cases), dataset.id)
        if rest:
            assign_cases(session, OPERATOR, rest, list(LABELERS))
        claims: dict[int, ClaimData] = {}
        questions = dict(session.exec(select(Case.id, Case.question).where(Case.dataset_id == dataset.id)).all())
        for claim in session.exec(select(Claim).where(Claim.dataset_id == dataset.id)):
            first = session.exec(select(Passage.text).join(ClaimPassage, ClaimPassage.passage_pk == Passage.id)
                                 .where(ClaimPassage.claim_pk == claim.id).order_by(ClaimPassage.position)).first()
            claims[claim.id] = ClaimData(claim.id, claim.claim_id, claim.case_pk, questions[claim.case_pk], claim.text,
                                         first or "", intended[claim.claim_id])
    engine.dispose()
    rng = random.Random(seed)
    labels: dict[str, dict[int, str]] = {name: {} for name in LABELERS}
    for pk in sorted(claims):
        value = claims[pk].intended
        labels[LABELERS[0]][pk] = value
        labels[LABELERS[1]][pk] = rng.choice([v for v in LABELS if v != value]) if rng.random() < disagree else value
    return claims, labels


# --- the browser --------------------------------------------------------------------------------

# The element the person needs next: JS given [kind, text]. kind "text": the leaf-most element of
# the main area whose whole text is `text` (outside any <mark>: an answer may mark the claim in
# it); "label": the form field labelled `text`; "keys": the containers of the buttons whose key
# class starts with `text`. Returns how it lies in the window: null when not on the page, else
# {inside: wholly inside, partly: some of it inside}; the strip the header covers is outside.
WHERE = """([kind, text]) => {
  const main = document.querySelector('[data-testid=stMain]') || document.body;
  const norm = (s) => (s || '').replace(/\\s+/g, ' ').trim();
  let boxes = [];
  if (kind === 'text') {
    const want = norm(text);
    const all = [...main.querySelectorAll('*')].filter(e => !e.closest('mark') && norm(e.innerText) === want);
    const leaves = all.filter(e => ![...e.children].some(c => all.includes(c)));
    if (leaves.length) boxes = [leaves[0]];
  } else if (kind === 'label') {
    const found = [...main.querySelectorAll('textarea, input')].filter(e => e.getAttribute('aria-label') === text);
    if (found.length) boxes = [found[0]];
  } else {
    boxes = [...main.querySelectorAll('[class*="' + text + '"]')].filter(e => [...e.classList].some(c => c.startsWith(text)));
  }
  boxes = boxes.filter(e => e.getClientRects().length);
  if (!boxes.length) return null;
  const rects = boxes.map(e => e.getBoundingClientRect());
  const header = document.querySelector('[data-testid=stHeader]');
  const top = header ? Math.max(0, header.getBoundingClientRect().bottom) : 0;
  const bottom = window.innerHeight, right = window.innerWidth;
  const r = {top: Math.min(...rects.map(x => x.top)), bottom: Math.max(...rects.map(x => x.bottom)),
             left: Math.min(...rects.map(x => x.left)), right: Math.max(...rects.map(x => x.right))};
  return {inside: r.top >= top - 1 && r.bottom <= bottom + 1 && r.left >= -1 && r.right <= right + 1,
          partly: r.bottom > top && r.top < bottom && r.right > 0 && r.left < right};
}"""

SCROLL_TO = WHERE.replace("return {inside:", "boxes[boxes.length - 1].scrollIntoView({block: 'nearest', inline: 'nearest', behavior: 'instant'}); "
                          "boxes[0].scrollIntoView({block: 'nearest', inline: 'nearest', behavior: 'instant'}); return {inside:")

SETTLED = """() => !!document.querySelector('[data-testid=stApp][data-test-script-state=notRunning]')
  && !document.querySelector('[data-stale=true]')"""

RUN_COUNTER = """(() => {
  window.__finished = 0;
  let running = false;
  new MutationObserver((changes) => {
    for (const change of changes) {
      if (change.target.dataset?.testid !== 'stApp') continue;
      const now = change.target.dataset.testScriptState === 'running';
      if (running && !now) window.__finished++;
      running = now;
    }
  }).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-test-script-state']});
})();"""
"""Counts the app's script runs that the browser saw end (window.__finished). A key that makes the
app run is pressed only while no run is going on, so the first run to end after it is its own
(Streamlit folds a run asked for while one is going on into that one)."""

RAN = """(before) => window.__finished > before && """ + SETTLED[6:]

NO_RUN_SECONDS = 5.0
"""How long a key that should make the app run is given to start one; a key that made none (the
box held that value already) is counted in "no run seen", its wait not counted."""

MARKER = "() => document.querySelector('[data-annotator-key-guard]')?.dataset.claim ?? null"

IS_TEXT = """() => { const el = document.activeElement;
  return el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement ||
    (el instanceof HTMLInputElement && !['checkbox', 'radio', 'button', 'submit'].includes(el.type)) ||
    (el instanceof HTMLElement && el.isContentEditable); }"""

FOCUSED_LABEL = "() => document.activeElement?.getAttribute('aria-label') ?? null"


@dataclass
class Claimed:
    """The figures of one label or decision."""
    who: str
    claim_id: str
    value: str
    save_wait: float = 0.0  # seconds from the saving key to the next claim rendered
    wait: float = 0.0  # every wait on the app for this claim, save_wait included
    keys: int = 0
    typed: int = 0
    tabs_to_rationale: int | None = None  # None: no rationale typed
    not_reached_by_tab: bool = False
    no_run_seen: int = 0  # keys that should have made the app run and made none
    scrolls: dict[str, int] = field(default_factory=dict)


class Person:
    """One browser tab, logged in as one person, with its counters for the claim at hand."""

    def __init__(self, browser: Any, base: str, name: str, language: str, max_tabs: int, work: Path) -> None:
        self.name, self.language, self.max_tabs, self.work = name, language, max_tabs, work
        self.context = browser.new_context(viewport=VIEWPORT, locale="ja-JP" if language == "ja" else "en-US")
        self.context.add_init_script(RUN_COUNTER)
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.page.goto(base)
        self.current: Claimed | None = None

    def tr(self, key: str, **fields: object) -> str:
        with use_language(self.language):
            return t(key, **fields)

    # -- set-up, not measured: log in and open a page with the keyboard
    def log_in(self, page_key: str) -> None:
        page = self.page
        page.get_by_label(self.tr("login.name"), exact=True).focus()
        page.keyboard.type(self.name)
        page.keyboard.press("Tab")
        page.keyboard.type(PASSWORDS[self.name])
        page.keyboard.press("Enter")
        link = page.locator("[data-testid=stSidebarNavLink]", has_text=self.tr(page_key)).first
        link.wait_for()
        page.wait_for_function(SETTLED, polling="raf")
        link.focus()
        page.keyboard.press("Enter")
        page.get_by_role("heading", name=self.tr(page_key)).first.wait_for()
        page.wait_for_function(SETTLED, polling="raf")

    def close(self) -> None:
        self.context.close()

    def failure(self, problem: str) -> RuntimeError:
        """The error of a step that could not be done, with a screenshot of the page beside the log."""
        shot = self.work / f"failed-{self.name}.png"
        self.page.screenshot(path=str(shot), full_page=True)
        return RuntimeError(f"{self.name}: {problem} (the page: {shot})")

    # -- keys, counted; a key that makes the app run is waited for, and the wait counted
    def idle(self) -> None:
        """Wait until no run of the app is going on (counted as waiting on the app)."""
        started = time.perf_counter()
        self.page.wait_for_function(SETTLED, polling="raf")
        self.current.wait += time.perf_counter() - started

    def press_and_wait(self, press: Any, what: str) -> None:
        """`press()` (keys) once the app is idle, then wait for the run it makes to end."""
        self.idle()
        before, started = self.page.evaluate("() => window.__finished"), time.perf_counter()
        press()
        try:
            self.page.wait_for_function(RAN, arg=before, polling="raf", timeout=NO_RUN_SECONDS * 1000)
        except Exception as error:  # noqa: BLE001 - Playwright's TimeoutError: no run started
            if "Timeout" not in type(error).__name__:
                raise
            self.current.no_run_seen += 1
            return
        self.current.wait += time.perf_counter() - started

    def key(self, key: str, runs: bool = False) -> None:
        """Press `key`; with `runs`, wait for the app's run it makes (counted as waiting)."""
        def press() -> None:
            self.page.keyboard.press(key)
            self.current.keys += 1
        if runs:
            self.press_and_wait(press, key)
        else:
            press()

    def shift_digit(self, n: int) -> None:
        """Shift and a digit as a US keyboard sends them (key "!" for Digit1): one press, which
        makes the app run (the cite button's key)."""
        def press() -> None:
            self.page.keyboard.down("Shift")
            self.page.keyboard.press(f"Digit{n}")
            self.page.keyboard.up("Shift")
            self.current.keys += 1
        self.press_and_wait(press, f"Shift+{n}")

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)
        self.current.typed += len(text)

    def shown_pk(self) -> int | None:
        value = self.page.evaluate(MARKER)
        return None if value is None else int(value)

    # -- what the person looks at, in reading order
    def look_at(self, what: str, kind: str, text: str, partly: bool = False, shown: bool = True) -> None:
        """Count a scroll and scroll `what` into view when it is not in the window. Unless
        `shown`, `what` may be missing (a question folded away): then nothing happens."""
        self.idle()
        where = self.page.evaluate(WHERE, [kind, text])
        if where is None and not shown:
            self.current.scrolls.setdefault(what, 0)
            return
        if where is None:
            raise self.failure(f"no {what} on the page ({text[:60]!r})")
        if not (where["partly"] if partly else where["inside"]):
            self.current.scrolls[what] = self.current.scrolls.get(what, 0) + 1
            self.page.evaluate(SCROLL_TO, [kind, text])

    def tab_to(self, label: str) -> int:
        """Press Tab until the field labelled `label` has the focus; the presses. Gives up after
        max_tabs presses and focuses it (not_reached_by_tab)."""
        for n in range(1, self.max_tabs + 1):
            self.key("Tab")
            if self.page.evaluate(FOCUSED_LABEL) == label:
                return n
        self.current.not_reached_by_tab = True
        self.page.locator(f'[data-testid=stMain] [aria-label="{label}"]').first.focus()
        return self.max_tabs

    def reach_rationale(self, label: str) -> int:
        """Put the focus in the rationale box labelled `label` as the page's key list says: its key
        (the one-screen marker's data-rationale-key, ui/layout.py), else Tab presses; the presses."""
        key = self.page.evaluate("document.querySelector('[data-annotator-claim-screen]')?.dataset.rationaleKey ?? null")
        if key:
            self.key(key)
            if self.page.evaluate(FOCUSED_LABEL) == label:
                return 1
            return 1 + self.tab_to(label)
        return self.tab_to(label)

    def leave_rationale(self, severity: str | None) -> None:
        """From the rationale box just typed in: Tab on (its text reaches the app: a run, waited
        for); with `severity`, Shift+Tab back to the severity box above it instead (Tab where that
        does not reach it), its name typed and Enter (a run); then Tab until the focus is in no
        text box."""
        if severity is not None:  # the severity box is above the rationale box: Shift+Tab goes back to it
            label = self.tr("label.severity")
            self.key("Shift+Tab", runs=True)  # the rationale's text reaches the app
            if self.page.evaluate(FOCUSED_LABEL) != label:
                self.tab_to(label)
            self.type(self.tr(f"severity.{severity}"))
            self.key("Enter", runs=True)
        else:
            self.key("Tab", runs=True)  # its text reaches the app
        for _ in range(self.max_tabs):
            if not self.page.evaluate(IS_TEXT):
                return
            self.key("Tab")
        raise self.failure("Tab never left the text boxes")

    def save(self, value: str, button_prefix: str, done_when: str) -> None:
        """Press the key of `value` and wait until the next claim is rendered (or, after the
        last, `done_when` is shown). A press the page ignored (too soon) is pressed again."""
        before = self.shown_pk()
        for _ in range(3):
            self.idle()
            started = time.perf_counter()
            self.key(KEY_OF[value])
            try:
                self.page.wait_for_function(
                    "([before, done]) => { const m = document.querySelector('[data-annotator-key-guard]');"
                    " return (m && m.dataset.claim !== String(before)) || document.body.innerText.includes(done); }",
                    arg=[before, done_when], polling="raf", timeout=15_000)
            except Exception as error:  # noqa: BLE001 - Playwright's TimeoutError: the press was dropped
                if "Timeout" not in type(error).__name__:
                    raise
                time.sleep(READ_SECONDS)
                continue
            self.page.wait_for_function(SETTLED, polling="raf")
            if not self.page.get_by_text(done_when).count():  # the next claim's buttons on the page
                try:
                    self.page.wait_for_function(
                        "prefix => !!document.querySelector('[class*=\"' + prefix + '\"]')",
                        arg=f"st-key-{button_prefix.replace('.', '-')}", polling="raf", timeout=15_000)
                except Exception as error:  # noqa: BLE001 - Playwright's TimeoutError
                    raise self.failure(f"no buttons after saving {value}") from error
            self.current.save_wait = time.perf_counter() - started
            self.current.wait += self.current.save_wait
            return
        raise self.failure(f"the key for {value} saved nothing three times")


def label_queue(person: Person, claims: dict[int, ClaimData], labels: dict[int, str]) -> list[Claimed]:
    """Label every claim the Label page shows until the queue is done."""
    done_text = person.tr("label.queue_done")
    results: list[Claimed] = []
    seen: set[int] = set()
    case_pk = None
    while True:
        pk = person.shown_pk()
        if pk is None or pk in seen:
            break  # the queue is done: the page shows the last claim again
        seen.add(pk)
        claim = claims[pk]
        value = labels[pk]
        person.current = record = Claimed(person.name, claim.claim_id, value)
        rendered = time.perf_counter()
        if claim.case_pk != case_pk:  # a new case: its question first
            person.look_at("question", "text", claim.question, partly=True, shown=False)
            case_pk = claim.case_pk
        person.look_at("claim", "text", claim.text)
        person.look_at("first passage", "text", claim.first_passage, partly=True)
        person.shift_digit(1)  # cite passage 1
        if value != "support":
            person.look_at("rationale box", "label", person.tr("label.rationale"))
            record.tabs_to_rationale = person.reach_rationale(person.tr("label.rationale"))
            person.type(RATIONALE[value])
            person.leave_rationale(SEVERITY if value == "contradict" else None)
        person.look_at("label buttons", "keys", "st-key-label-button-")
        time.sleep(max(0.0, READ_SECONDS - (time.perf_counter() - rendered)))
        person.save(value, "label.button.", done_text)
        results.append(record)
        if person.page.get_by_text(done_text).count():
            break
    return results


def adjudicate_queue(person: Person, claims: dict[int, ClaimData]) -> list[Claimed]:
    """Decide every claim the Adjudicate page shows until the queue is empty."""
    empty = person.tr("adjudicate.empty")
    results: list[Claimed] = []
    case_pk = None
    while not person.page.get_by_text(empty).count():
        pk = person.shown_pk()
        if pk is None:
            break
        claim = claims[pk]
        person.current = record = Claimed(person.name, claim.claim_id, claim.intended)
        rendered = time.perf_counter()
        if claim.case_pk != case_pk:
            person.look_at("question", "text", claim.question, partly=True, shown=False)
            case_pk = claim.case_pk
        person.look_at("claim", "text", claim.text)
        person.look_at("first passage", "text", claim.first_passage, partly=True)
        person.look_at("rationale box", "label", person.tr("adjudicate.rationale"))
        record.tabs_to_rationale = person.reach_rationale(person.tr("adjudicate.rationale"))
        person.type(DECISION_RATIONALE)
        person.leave_rationale(SEVERITY if claim.intended == "contradict" else None)
        person.look_at("decision buttons", "keys", "st-key-adjudicate-button-")
        time.sleep(max(0.0, READ_SECONDS - (time.perf_counter() - rendered)))
        person.save(claim.intended, "adjudicate.button.", empty)
        results.append(record)
    return results


# --- serving and reporting ----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve(work: Path, url: str, port: int) -> tuple[subprocess.Popen, str]:
    """`annotator serve` of this checkout on `port`, once /_stcore/health answers."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("DATABASE_URL", None)
    log = (work / "serve.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "annotator", "serve", "--db", url, "--port", str(port)],
                              cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{base}/_stcore/health", timeout=2).read() == b"ok":
                return server, base
        except OSError:
            time.sleep(0.5)
    os.killpg(server.pid, 15)
    raise SystemExit(f"annotator serve did not answer at {base}; see {work / 'serve.log'}")


def _spread(values: list[float], unit: str = "", scale: float = 1.0, digits: int = 0) -> str:
    if not values:
        return "-"
    ordered = sorted(v * scale for v in values)
    p95 = ordered[max(0, -(-95 * len(ordered) // 100) - 1)]  # nearest rank
    return (f"median {statistics.median(ordered):.{digits}f}{unit}, p95 {p95:.{digits}f}{unit}, "
            f"mean {statistics.fmean(ordered):.{digits}f}{unit} (n={len(ordered)})")


def report(title: str, rows: list[Claimed]) -> None:
    """Print the figures of `rows` under `title`."""
    print(f"\n{title}: {len(rows)} claims")
    if not rows:
        return
    scrolls = [sum(r.scrolls.values()) for r in rows]
    by_element: dict[str, int] = {}
    for row in rows:
        for what, n in row.scrolls.items():
            by_element[what] = by_element.get(what, 0) + n
    typed_rows = [r for r in rows if r.tabs_to_rationale is not None]
    print(f"  {'key to next claim rendered':<30} {_spread([r.save_wait for r in rows], ' ms', 1000)}")
    print(f"  {'all waiting on the app':<30} {_spread([r.wait for r in rows], ' ms', 1000)}")
    print(f"  {'scrolls needed per claim':<30} {_spread(scrolls, '', 1, 2)}; {sum(scrolls)} in all, "
          f"{sum(1 for n in scrolls if n)} claims needed any"
          + (" (" + ", ".join(f"{what} {n}" for what, n in by_element.items()) + ")" if by_element else ""))
    print(f"  {'key presses per label':<30} {_spread([r.keys for r in rows], '', 1, 1)}")
    print(f"  {'characters typed per label':<30} {_spread([r.typed for r in rows], '', 1, 1)}")
    if typed_rows:
        print(f"  {'keys to the rationale box':<30} {_spread([r.tabs_to_rationale for r in typed_rows], '', 1, 1)}; "
              f"not reached by Tab: {sum(r.not_reached_by_tab for r in typed_rows)}")
    if any(r.no_run_seen for r in rows):
        print(f"  {'keys that made no run':<30} {sum(r.no_run_seen for r in rows)} (their waits not counted)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=100, help="claims to label (default 100)")
    parser.add_argument("--work", type=Path, default=None, help="an empty folder for the database and the server log")
    parser.add_argument("--db", default=None, help="an empty database's URL (default: SQLite in --work)")
    parser.add_argument("--port", type=int, default=None, help="the app's port (default: a free one)")
    parser.add_argument("--language", choices=("en", "ja"), default="en", help="the browser's language")
    parser.add_argument("--disagree", type=float, default=0.15, help="share of claims the second labeler labels otherwise")
    parser.add_argument("--seed", type=int, default=0, help="seed of the second labeler's disagreements")
    parser.add_argument("--max-tabs", type=int, default=80, help="Tab presses tried to reach a box before giving up")
    parser.add_argument("--json", type=Path, default=None, help="write every claim's figures to this file")
    parser.add_argument("--headed", action="store_true", help="show the browser window")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no chromium on PATH (Debian: apt-get install chromium)")
    work = args.work or Path(tempfile.mkdtemp(prefix="annotator-labeling-day-"))
    work.mkdir(parents=True, exist_ok=True)
    url = args.db or f"sqlite:///{work / 'labeling-day.db'}"
    if args.db is None and (work / "labeling-day.db").exists():
        raise SystemExit(f"{work} holds a database from an earlier run: give a new --work")
    claims, labels = build(work, url, args.claims, args.disagree, args.seed)
    disputes = sum(labels[LABELERS[0]][pk] != labels[LABELERS[1]][pk] for pk in claims)
    print("command: python " + shlex.join([os.path.relpath(sys.argv[0], Path.cwd()), *sys.argv[1:]]))
    print(f"{len(claims)} claims, {disputes} disputes; Chromium {VIEWPORT['width']}x{VIEWPORT['height']}, "
          f"language {args.language}; load average before: {os.getloadavg()[0]:.1f}")
    server, base = serve(work, url, args.port or free_port())
    rows: dict[str, list[Claimed]] = {}
    started = time.perf_counter()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, headless=not args.headed,
                                                 args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            for name in LABELERS:
                person = Person(browser, base, name, args.language, args.max_tabs, work)
                person.log_in("page.label")
                rows[name] = label_queue(person, claims, labels[name])
                person.close()
            person = Person(browser, base, ADJUDICATOR, args.language, args.max_tabs, work)
            person.log_in("page.adjudicate")
            rows[ADJUDICATOR] = adjudicate_queue(person, claims)
            person.close()
            browser.close()
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=20)
    for name in LABELERS:
        report(f"labeler {name}", rows[name])
    report("both labelers", [row for name in LABELERS for row in rows[name]])
    report(f"adjudicator {ADJUDICATOR} (the disputes)", rows[ADJUDICATOR])
    print(f"\n{time.perf_counter() - started:.0f} s in the browser; load average after: {os.getloadavg()[0]:.1f}; "
          f"work folder: {work}")
    if args.json is not None:
        args.json.write_text(json.dumps({"command": sys.argv, "claims": len(claims), "disputes": disputes,
                                         "rows": {name: [asdict(row) for row in got] for name, got in rows.items()}},
                                        ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
