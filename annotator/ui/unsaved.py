"""Typing a reload would lose: sent to the server while the user types, or asked about first.

Streamlit sends a text area's value to the server only on blur or Ctrl+Enter (a text input's on
blur or Enter); until then the typing lives in the browser alone, and a reload, a closed tab or a
lost connection drops it. A page calls `guard` once per run with the keys of its text fields:

- drafted fields (their on_change keeps the value as a draft, services/drafts.py): a text area's
  typing is sent AUTOSAVE_MS after the last keystroke (outside an IME composition) by the same
  Ctrl+Enter Streamlit takes, the field keeping its focus and caret; the browser asks before
  leaving the page while typing has not been sent.
- held fields (nothing keeps them across a reload: it keeps the login, not the page's inputs): the browser asks
  before leaving the page while they hold any text.

The question is the browser's own "Leave site? Changes you made may not be saved" (its text cannot
be set). Chromium and Firefox show it only after the user interacted with the page, which typing
is; nothing can be asked when the connection drops, or when a page is left inside the app.
The script installs its listeners once per browser tab; they read the current page's marker
element, so a page without `guard` asks nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import streamlit as st

AUTOSAVE_MS = 1000
CONTAINER = "unsaved-guard"

# The marker's data attributes hold the class prefixes Streamlit gives a keyed widget's container
# ("st-key-" + the key, characters other than letters, digits, "_" and "-" made "-").
SCRIPT = """<script>
(() => {
  if (window.annotatorUnsavedGuard) return;
  window.annotatorUnsavedGuard = true;
  const marker = () => document.querySelector("[data-annotator-unsaved]");
  const prefixes = (name) => (marker()?.dataset[name] || "").split(" ").filter(Boolean);
  const inside = (el, wanted) => {
    for (let node = el; node; node = node.parentElement)
      for (const name of node.classList) if (wanted.some((p) => name.startsWith(p))) return true;
    return false;
  };
  const isText = (el) => el instanceof HTMLTextAreaElement || (el instanceof HTMLInputElement && el.type === "text");
  const unsent = new Set();  // drafted fields holding typing Streamlit has not received
  let composing = false, timer = null;

  const send = (el) => {  // what Streamlit takes as "apply" in a text area, focus and caret kept
    unsent.delete(el);
    el.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", code: "Enter", ctrlKey: true, bubbles: true, cancelable: true}));
  };
  const schedule = (el) => {
    clearTimeout(timer);
    const wait = Number(marker()?.dataset.autosaveMs || 0);
    if (!(el instanceof HTMLTextAreaElement) || wait <= 0) return;
    timer = setTimeout(() => {
      if (!composing && unsent.has(el) && el.isConnected && document.activeElement === el) send(el);
    }, wait);
  };
  document.addEventListener("input", (e) => {
    if (!isText(e.target) || !inside(e.target, prefixes("drafted"))) return;
    unsent.add(e.target);
    schedule(e.target);
  }, true);
  document.addEventListener("compositionstart", () => { composing = true; }, true);
  document.addEventListener("compositionend", (e) => {
    composing = false;
    if (unsent.has(e.target)) schedule(e.target);
  }, true);
  document.addEventListener("focusout", (e) => { unsent.delete(e.target); }, true);  // blur sends
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey || e.target instanceof HTMLInputElement)) unsent.delete(e.target);
  }, true);
  window.addEventListener("beforeunload", (e) => {
    if (!marker()) return;
    const held = prefixes("held");
    const typing = [...unsent].some((el) => el.isConnected);
    const holding = [...document.querySelectorAll("textarea, input[type=text]")]
      .some((el) => el.value.trim() !== "" && inside(el, held));
    if (typing || holding) { e.preventDefault(); e.returnValue = ""; }
  });
})();
</script>"""


def key_class(key: str) -> str:
    """The CSS class Streamlit gives the container of the widget keyed `key` (a key prefix gives
    the class prefix of those keys)."""
    return "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key.strip())


def hidden_style(key: str) -> str:
    """A <style> that hides the container keyed `key` and the layout wrapper Streamlit puts around
    it: a hidden container alone would leave its wrapper in the page's column of elements, one
    gap (1 rem) more above the next element. The style itself takes no space (an st.html of a
    style only is not laid out)."""
    name = key_class(key)
    return f'<style>.{name}, [data-testid="stLayoutWrapper"]:has(> .{name}) {{ display: none; }}</style>'


def guard(drafted: Sequence[str] = (), held: Sequence[str] = ()) -> None:
    """Put the page's marker and the script on the page, in a hidden container (no gap). Call it
    before the page's text fields: the script then listens before the user can type in them.

    drafted: key prefixes of text fields kept as a draft on change; their typing is sent while
        the user types, and leaving the page is asked about until it is.
    held: key prefixes of text fields nothing keeps across a reload; leaving the page is asked
        about while they hold text.
    """
    marker = (f'<div data-annotator-unsaved data-drafted="{" ".join(map(key_class, drafted))}" '
              f'data-held="{" ".join(map(key_class, held))}" data-autosave-ms="{AUTOSAVE_MS}" hidden></div>')
    with st.container(key=CONTAINER):
        st.html(marker + SCRIPT, unsafe_allow_javascript=True)
    st.html(hidden_style(CONTAINER))
