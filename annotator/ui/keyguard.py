"""Label presses the browser drops before Streamlit sees them: the repeats of a burst, and those
that come right after a save moved the page to another claim.

A press of a label key (or a click of a label button) is sent at once, but the page is redrawn
with the next claim only after the server ran: a key pressed again and again, or held down, would
label the claims that follow, unread. The server ignores a label click that comes too soon
(components.py `too_soon_after_move`), yet it cannot know when the browser showed the new claim:
a busy browser handles presses queued while it drew the next claim late, some of them on that
claim's buttons. The script here judges each press by the browser's own clock:

- a press within QUIET_MS of the last one (kept or dropped) is dropped, so a burst saves once
  whatever its length, and a key held down (its repeats) saves once;
- after a press was kept, the next change of the claim shown (the marker's `data-claim`) starts a
  quiet time of QUIET_MS in which presses are dropped: the claim has to be on screen first.

- while a dialog is open over the page (the guideline, ui/guideline.py), every shortcut of the page
  (a key without Ctrl, Alt or Cmd that types a character, the space bar aside) is dropped: the
  user is reading the dialog, and Streamlit would fire the page's buttons under it.

Presses typed in a text box are not label presses (Streamlit fires no shortcut there) and are left
alone. The script installs its listeners once per browser tab, on the window in the capture phase,
so they run before Streamlit's shortcut and click handlers (on the document and React's root); a
page without the marker drops nothing.
"""

from __future__ import annotations

import streamlit as st

from annotator.ui.unsaved import hidden_style, key_class
from annotator.vocabulary import LABELS

LABEL_KEYS = tuple(str(n) for n in range(1, len(LABELS) + 1))
"""The keys of the buttons that save a label or a decision, in LABELS order ("1", "2", "3")."""
QUIET_MS = 600
"""How long a claim a save moved to stays on screen before a label press counts, and how far
apart two presses must be for the second to count (the server's DOUBLE_CLICK_SECONDS)."""
CONTAINER = "label-key-guard"
AWAIT_MOVE_MS = 5000
"""A claim change this long after a kept press was not caused by it (the save was refused)."""

SCRIPT = """<script>
(() => {
  if (window.annotatorKeyGuard) return;
  window.annotatorKeyGuard = true;
  const marker = () => document.querySelector("[data-annotator-key-guard]");
  let lastPress = -Infinity, keptAt = -Infinity, movedAt = -Infinity, shown = null, dropping = new Set();
  const now = (e) => (e && e.timeStamp > 0 ? e.timeStamp : performance.now());
  const quiet = () => Number(marker()?.dataset.quietMs || 0);
  const isText = (el) => el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement ||
    (el instanceof HTMLInputElement && !["checkbox", "radio", "button", "submit"].includes(el.type)) ||
    (el instanceof HTMLElement && el.isContentEditable);
  const guarded = (e) => {
    const m = marker();
    if (!m) return false;
    if (e.type === "click") {
      const prefix = m.dataset.buttons;
      for (let node = e.target; node instanceof Element; node = node.parentElement)
        for (const name of node.classList) if (name.startsWith(prefix)) return true;
      return false;
    }
    return !e.ctrlKey && !e.altKey && !e.metaKey && !e.shiftKey && !isText(e.target) &&
      m.dataset.keys.split(" ").includes(e.key);
  };
  const judge = (e) => {  // true: drop the press
    const t = now(e), wait = quiet();
    const drop = e.repeat || t - lastPress < wait || t - movedAt < wait;  // before the move too: stale
    lastPress = t;
    if (!drop) keptAt = t;
    return drop;
  };
  const stop = (e) => { e.preventDefault(); e.stopImmediatePropagation(); };
  const overPage = (e) => marker() && document.querySelector("[role=dialog]") && !e.ctrlKey && !e.altKey &&
    !e.metaKey && e.key.length === 1 && e.key !== " " && !isText(e.target);
  window.addEventListener("keydown", (e) => {
    if (overPage(e)) { dropping.add(e.key); stop(e); return; }
    if (!guarded(e)) return;
    if (judge(e)) { dropping.add(e.key); stop(e); } else dropping.delete(e.key);
  }, true);
  window.addEventListener("keypress", (e) => { if (dropping.has(e.key)) stop(e); }, true);
  window.addEventListener("keyup", (e) => { if (dropping.delete(e.key)) stop(e); }, true);
  window.addEventListener("click", (e) => { if (guarded(e) && judge(e)) stop(e); }, true);
  new MutationObserver(() => {
    const claim = marker()?.dataset.claim ?? null;
    if (claim === shown) return;
    shown = claim;
    const t = performance.now();
    if (t - keptAt < Number(marker()?.dataset.awaitMoveMs || 0)) { movedAt = t; keptAt = -Infinity; }
  }).observe(document.body, {childList: true, subtree: true, attributes: true, attributeFilter: ["data-claim"]});
})();
</script>"""


def button_key(prefix: str, claim_pk: int, value: str) -> str:
    """The key of the button that saves `value` on the claim `claim_pk`: it names the claim, so a
    press the browser sent while it showed another claim reaches that claim's button (gone, or a
    repeat that saves nothing new), never the one the page has moved to since
    (tests/test_rapid_keys_browser.py). `prefix` ends with a dot ("label.button.")."""
    return f"{prefix}{value}.{claim_pk}"


def guard(claim_pk: int, prefix: str) -> None:
    """Put the marker of the claim shown and the script on the page, in a hidden container (no
    gap). Call it on every run, before the claim and its buttons are drawn, so the marker changes
    as soon as the browser starts drawing another claim.

    claim_pk: the claim shown; prefix: the key prefix of the buttons that save (see `button_key`),
    whose keys are LABEL_KEYS and whose clicks are guarded the same way.
    """
    marker = (f'<div data-annotator-key-guard data-claim="{int(claim_pk)}" data-keys="{" ".join(LABEL_KEYS)}" '
              f'data-buttons="{key_class(prefix)}" data-quiet-ms="{QUIET_MS}" '
              f'data-await-move-ms="{AWAIT_MOVE_MS}" hidden></div>')
    with st.container(key=CONTAINER):
        st.html(marker + SCRIPT, unsafe_allow_javascript=True)
    st.html(hidden_style(CONTAINER))
