"""The labeling guideline beside the work: the current version's Markdown in the sidebar, in an
expander whose header names the version and its publish date, so the labeler (and the
adjudicator) can read the rules while deciding and knows which version their labels record
(labeling.save_label records the current one).

The sidebar is narrow (a table in it gets a few characters a line, which in Japanese is two or
three): a button in the panel opens the same text in a dialog as wide as the page.

The text is an admin's Markdown, rendered as Markdown (headings, lists, emphasis, links), never as
HTML, and with every image written as text (plain.guideline_markdown): no reader's browser fetches
anything to show it.
"""

from __future__ import annotations

import streamlit as st

from annotator.services.guidelines import GuidelineView, current_guideline
from annotator.ui import components as ui
from annotator.ui.i18n import date_text, t
from annotator.ui.plain import guideline_markdown

PANEL_KEY = "guideline.panel"
SEEN_VERSION = "guideline.seen_version"
"""The guideline version this tab showed last (session state)."""
WIDE_KEY = "guideline.open_wide"
"""The panel's button that opens the guideline in a wide dialog."""


def panel_title(guideline: GuidelineView) -> str:
    """The expander's header: the version (as typed, not as Markdown) and its publish date."""
    return ui.md("guideline.panel", version=guideline.version, date=date_text(guideline.published_at))


def guideline_panel() -> None:
    """Render the current guideline in the sidebar (one read; no write lock), or a note that none
    is published yet."""
    with ui.read_db() as session:
        current = current_guideline(session)
    show_guideline_panel(current)


def show_guideline_panel(current: GuidelineView | None) -> None:
    """Render `current` (the current guideline, read by the page with the rest of what it shows)
    in the sidebar, or a note that none is published yet. When a new version was published since
    this tab last showed one, say so on the page and open the panel: what the next label records
    changed under the user's eyes."""
    seen = st.session_state.get(SEEN_VERSION)
    changed = current is not None and seen is not None and seen != current.version
    st.session_state[SEEN_VERSION] = None if current is None else current.version
    if changed:
        st.info(ui.md("guideline.changed", version=current.version), icon=":material/menu_book:")
    with st.sidebar:
        if current is None:
            st.caption(t("guideline.none"))
            return
        with st.expander(panel_title(current), icon=":material/menu_book:", expanded=changed):
            wide = st.button(t("guideline.open_wide"), key=WIDE_KEY, icon=":material/open_in_full:")
            st.markdown(guideline_markdown(current.markdown))
    if wide:  # opened from the main area: a dialog belongs to the page, not to the sidebar
        st.dialog(panel_title(current), width="large", icon=":material/menu_book:")(_wide_guideline)(current.markdown)


def _wide_guideline(markdown: str) -> None:
    """The guideline in a dialog as wide as the page: its tables have room, where the sidebar
    squeezes them to a few characters a line. Closed by its close button, Esc or a click outside."""
    st.markdown(guideline_markdown(markdown))
