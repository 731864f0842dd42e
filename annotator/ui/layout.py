"""One screen per claim: the Label and Adjudicate pages fit a laptop window, and each new claim
opens at the top of the page.

On a 1366x768 window and larger, the claim, its first passage (at least its top), the label (or
decision) buttons and the rationale box are in view without scrolling (tests/test_e2e_browser.py
measures it at 1366x768 and 1920x1080, in English and Japanese). The pages lay themselves out for
it (the case on one line, the question and answer in a collapsible box, the claim and its form
beside the passages); `claim_screen` does the rest, on the page that calls it only:

- a style that gives the page less of Streamlit's empty space: the main area's padding (6 rem on
  top for a toolbar this app hides, 5 rem at the sides) and the headings' sizes;
- a marker naming the claim shown, and a script that scrolls the main area (Streamlit scrolls it
  inside the window, not the document) back to its top when the marker names another claim: a
  save, J or K, another claim picked. A rerun of the same claim (a refused save, a typed draft)
  stays where the user is;
- the same script scrolls a long answer's box (ui/components.case_header) so that the claim's
  place, outlined in it (highlight.claim_html), is in view: once per claim, inside the box only
  (the page stays at its top); a rerun of the same claim leaves the box where the user put it.

The script installs its listener once per browser tab, as ui/keyguard.py does; a page without the
marker scrolls nothing.

The same script gives the rationale box a key, RATIONALE_KEY: pressed outside a text box (and with
no dialog open), it puts the cursor in the claim's rationale box, so a keyboard user reaches it in
one press instead of Tabbing through the sidebar and the case (benchmarks/labeling_day.py counted
24 to 30 Tabs); Tab from the box goes on to the label buttons. The key is taken from Streamlit,
whose own R (rerun) it would otherwise be.
"""

from __future__ import annotations

import streamlit as st

from annotator.ui.unsaved import hidden_style, key_class

CONTAINER = "claim-screen"
RATIONALE_KEY = "R"
"""The key that puts the cursor in the rationale box (pressed outside a text box)."""

STYLE = """
[data-testid="stMainBlockContainer"] { padding: 2.5rem 2rem 3rem 2rem; }
[data-testid="stMain"] h1 { font-size: 2rem; padding: 0 0 0.25rem 0; }
[data-testid="stMain"] h2 { font-size: 1.375rem; padding: 0.25rem 0 0 0; }
[data-testid="stMain"] h3 { font-size: 1.125rem; padding: 0.25rem 0 0 0; }
"""
"""The page's spacing: top padding enough for the sidebar's open button (which sits in the header's
top left corner once the sidebar is closed), h1 to h3 smaller than Streamlit's 2.75, 2.25 and
1.75 rem (their order and levels unchanged)."""

SCRIPT = """<script>
(() => {
  if (window.annotatorClaimScreen) return;
  window.annotatorClaimScreen = true;
  let shown = null;
  const check = () => {
    const claim = document.querySelector("[data-annotator-claim-screen]")?.dataset.claim ?? null;
    if (claim === shown) return;
    shown = claim;
    if (claim === null) return;
    const main = document.querySelector("[data-testid=stMain]");
    if (main) main.scrollTo({top: 0, left: 0, behavior: "instant"});
    window.scrollTo({top: 0, left: 0, behavior: "instant"});
  };
  let placed = null;
  const place = () => {
    const mark = Array.from(document.querySelectorAll("[data-annotator-current-claim]"))
      .find((m) => !m.closest("[data-stale=true]"));
    if (!mark || mark.dataset.annotatorCurrentClaim === placed || !mark.getClientRects().length) return;
    placed = mark.dataset.annotatorCurrentClaim;
    const main = document.querySelector("[data-testid=stMain]");
    for (let box = mark.parentElement; box && box !== main && box !== document.body; box = box.parentElement) {
      const overflow = getComputedStyle(box).overflowY;
      if ((overflow === "auto" || overflow === "scroll") && box.scrollHeight > box.clientHeight) {
        const top = mark.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
        box.scrollTo({top: Math.max(0, top - box.clientHeight / 4), left: 0, behavior: "instant"});
        return;
      }
    }
  };
  new MutationObserver(() => { check(); place(); }).observe(document.body,
    {childList: true, subtree: true, attributes: true, attributeFilter: ["data-claim"]});
  check();
  place();
  const isText = (el) => el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement ||
    (el instanceof HTMLInputElement && !["checkbox", "radio", "button", "submit"].includes(el.type)) ||
    (el instanceof HTMLElement && el.isContentEditable);
  window.addEventListener("keydown", (e) => {
    const m = document.querySelector("[data-annotator-claim-screen]");
    if (!m || !m.dataset.rationale || e.ctrlKey || e.altKey || e.metaKey || e.shiftKey || e.repeat) return;
    if (e.key.toUpperCase() !== m.dataset.rationaleKey || isText(e.target) || document.querySelector("[role=dialog]")) return;
    const box = document.querySelector(`.${m.dataset.rationale} textarea`);
    if (!box || box.disabled) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  }, true);
})();
</script>"""


def claim_screen(claim_pk: int, rationale_key: str | None = None) -> None:
    """Lay out the page calling it for one screen per claim (STYLE) and scroll it to its top
    whenever the claim shown changes. Call it on every run, before the claim is drawn, with the
    key of the claim shown (claim_pk: the claim's primary key) and the widget key of its rationale
    box (rationale_key; None: the claim has none now, RATIONALE_KEY does nothing). Takes no space
    on the page."""
    rationale = f' data-rationale="{key_class(rationale_key)}" data-rationale-key="{RATIONALE_KEY}"' if rationale_key else ""
    marker = f'<div data-annotator-claim-screen data-claim="{int(claim_pk)}"{rationale} hidden></div>'
    with st.container(key=CONTAINER):
        st.html(marker + SCRIPT, unsafe_allow_javascript=True)
    st.html(f"<style>{STYLE}</style>" + hidden_style(CONTAINER))  # styles only: take no space
