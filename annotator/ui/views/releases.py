"""Releases: freeze the agreed and adjudicated labels into an immutable, hashed gold release;
list the releases, download their files, verify a release folder against its manifest, compare
two releases (claims added, removed, whose gold label changed, whose text or passages changed, and
whose resolution changed)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from annotator.errors import AnnotatorError
from annotator.release import problem_message
from annotator.services import releases
from annotator.ui import components as ui
from annotator.ui.i18n import datetime_text, t

_VERIFIED = "releases.verified"
_NOTES = "releases.notes"  # what a create did on the way (stopped releases finished, leftovers removed)
_OLDER, _NEWER = "releases.compare_old", "releases.compare_new"  # the two selectboxes
_COMPARED = "releases.compared"  # (older, newer) the compare button was pressed for
_CREATED_SHA = "releases.created_sha"  # (name, manifest SHA-256) of the release just created, shown once


def _create() -> None:
    name = (st.session_state.get("releases.name") or "").strip()
    dataset = st.session_state.get("releases.dataset")
    try:
        with ui.db() as session:
            me = ui.session_user(session)
            created = releases.create_release(
                session, me, name, dataset=dataset, only_final=bool(st.session_state.get("releases.only_final")),
            )
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    left_out = ", ".join(f"{t(f'state.{state}')} {n}" for state, n in created.excluded.items())
    ui.flash("success", ui.md("releases.created", name=created.name, claims=created.counts.get("claims", 0),
                          path=str(Path(created.path).resolve()), left_out=left_out or "-"))
    st.session_state[_NOTES] = list(created.notes)
    st.session_state[_CREATED_SHA] = (created.name, created.manifest_sha256)
    _show_new(created.name)


def _show_created_sha() -> None:
    """Under the success message of a create: the new manifest's whole SHA-256 in a code block
    (copy button at its right; lines wrap, so all 64 hex digits show in a narrow window), which
    `release verify --manifest-sha256` takes. Once, like the message."""
    created = st.session_state.pop(_CREATED_SHA, None)
    if created is None:
        return
    name, sha256 = created
    st.caption(ui.md("releases.created_sha", name=name))
    st.code(sha256, language=None, wrap_lines=True)


def _show_new(name: str) -> None:
    """Pick the release just created, and compare it with the one before it. Set, not cleared: a
    selectbox with a key keeps the value its browser holds when its options change."""
    with ui.db() as session:
        names = [release.name for release in releases.list_releases(session, ui.session_user(session))]
    st.session_state["releases.pick"] = st.session_state[_NEWER] = name
    st.session_state[_OLDER] = next((other for other in names if other != name), name)
    st.session_state.pop(_COMPARED, None)


def _verify(name: str) -> None:
    try:
        with ui.db() as session:
            result = releases.verify_stored_release(session, ui.session_user(session), name)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    st.session_state[_VERIFIED] = (name, result.ok, list(result.problems), list(result.notes))


def _compare() -> None:
    st.session_state[_COMPARED] = (st.session_state.get(_OLDER), st.session_state.get(_NEWER))


def _claims_table(changes: list[dict], columns: dict[str, str]) -> None:
    """The claims of one kind of change (GoldChange.to_json() dicts), `columns`: field -> heading."""
    if not changes:
        st.caption(t("releases.compare_no_claims"))
        return
    st.dataframe(pd.DataFrame([{heading: ui.plain_text(change[field]) for field, heading in columns.items()} for change in changes]),
                 hide_index=True)


def _show_comparison(older: str, newer: str) -> None:
    """Compare release `older` with `newer` through the service and show the plain result; a release
    that fails verification (or the blind rule) is shown as the service's message."""
    try:
        with ui.db() as session:
            comparison = releases.compare_releases(session, ui.session_user(session), older, newer)
    except AnnotatorError as error:
        st.error(ui.error_markdown(error))
        return
    st.dataframe(
        pd.DataFrame([{t("releases.compare_side"): t(f"releases.compare_{side}"), t("col.name"): ui.plain_text(compared.release),
                       t("col.claims"): compared.claims, t("col.path"): ui.plain_text(compared.path),
                       "SHA-256 (manifest)": compared.manifest_sha256}
                      for side, compared in (("old", comparison.old), ("new", comparison.new))]),
        hide_index=True,
    )
    more = comparison.diff.change_counts()
    counts = comparison.diff.counts() | {"unchanged": more["nothing_changed"]}  # unchanged: nothing changed at all
    for column, kind in zip(st.columns(4), ("added", "removed", "changed", "unchanged"), strict=True):
        column.metric(t(f"releases.compare_{kind}"), counts[kind])
    st.caption(t("releases.compare_more", text=more["text_or_passages_changed"], resolution=more["resolution_changed"]))
    st.markdown(f"**{t('releases.compare_by_label')}**")
    by_label = comparison.diff.changes_by_label()
    if by_label:
        st.dataframe(pd.DataFrame([{t("releases.compare_from"): row["from"], t("releases.compare_to"): row["to"],
                                    t("col.claims"): row["claims"]} for row in by_label]), hide_index=True)
    else:
        st.caption(t("releases.compare_no_claims"))
    data = comparison.to_json()
    shown = {**data, "text_or_passages_changed": [  # with what changed, in the words of the Label page
        {**change, "what": "/".join(t(f"label.changed.{part}") for part, changed in (
            ("text", change["claim_changed"]), ("passages", change["passage_ids_changed"] or change["passage_text_changed"]))
            if changed)} for change in data["text_or_passages_changed"]]}
    claim_columns = {"claim_id": t("col.claim"), "case_id": t("col.case"), "dataset": t("releases.compare_dataset")}
    gold_columns = {"added": {"to": t("releases.compare_gold")}, "removed": {"from": t("releases.compare_gold")},
                    "changed": {"from": t("releases.compare_from"), "to": t("releases.compare_to")},
                    "text_or_passages_changed": {"what": t("releases.compare_what")},
                    "resolution_changed": {"from": t("releases.compare_from"), "to": t("releases.compare_to")}}
    for kind, labels in gold_columns.items():
        st.markdown(f"**{t(f'releases.compare_{kind}')}**")
        _claims_table(shown[kind], claim_columns | labels)
    st.download_button(t("releases.compare_download"), data=json.dumps(data, ensure_ascii=False, indent=2) + "\n",
                       file_name=f"compare-{older}-{newer}.json", mime="application/json",
                       key="releases.compare_download", on_click="ignore", icon=":material/download:")


me = ui.require_page("releases")
with ui.db() as session:
    known = releases.list_releases(session, me)

st.title(t("page.releases"))
ui.show_flash()
_show_created_sha()
for note in st.session_state.pop(_NOTES, []):
    st.info(note)  # the service's own words about release folders it tidied (names it checked)

with st.container(border=True):
    st.header(t("releases.create"))
    st.text_input(t("releases.name"), key="releases.name", placeholder=t("releases.name_hint"))
    ui.dataset_select("releases.dataset")
    st.checkbox(t("releases.only_final"), key="releases.only_final", help=t("releases.only_final_help"))
    st.button(t("releases.create_button"), key="releases.create_button", type="primary", on_click=_create)

st.header(t("releases.list"))
if not known:
    st.caption(t("releases.none"))
    st.stop()
st.dataframe(
    pd.DataFrame([{t("col.name"): ui.plain_text(r.name), t("col.created_utc"): datetime_text(r.created_at, seconds=True),
                   t("col.creator"): ui.plain_text(r.creator), t("col.claims"): (r.counts or {}).get("claims"),
                   t("col.path"): ui.plain_text(r.path), t("col.manifest_sha256"): r.manifest_sha256} for r in known]),
    hide_index=True,
)

by_name = {r.name: r for r in known}
chosen = st.selectbox(t("releases.pick"), list(by_name), key="releases.pick", format_func=ui.plain_text)
release = by_name[chosen]
try:
    with ui.db() as session:
        files = releases.release_files(session, me, release.name)
except AnnotatorError as error:
    st.error(ui.error_markdown(error))
    files = {}
for column, (file_name, path) in zip(st.columns(max(len(files), 1)), files.items(), strict=False):
    column.download_button(file_name, data=Path(path).read_bytes, file_name=file_name, key=f"releases.download.{file_name}",
                           on_click="ignore", icon=":material/download:")

st.button(t("releases.verify"), key="releases.verify", on_click=_verify, args=(release.name,))
verified = st.session_state.get(_VERIFIED)
if verified is not None and verified[0] == release.name:
    _, ok, problems, notes = verified
    for note in notes:
        st.info(note)
    if ok:
        st.success(ui.md("releases.verify_ok", name=release.name))
    else:
        st.error(ui.md("releases.verify_bad", name=release.name) + "\n\n"
                 + "\n".join(f"- {ui.message_markdown(problem_message(p))}" for p in problems))

with st.container(border=True):
    st.header(t("releases.compare"))
    names = list(by_name)  # newest first
    left, right = st.columns(2)
    if st.session_state.get(_OLDER) not in names:  # the default, set by state (an index as well would warn)
        st.session_state[_OLDER] = names[min(1, len(names) - 1)]
    older = left.selectbox(t("releases.compare_older"), names, key=_OLDER, format_func=ui.plain_text)
    newer = right.selectbox(t("releases.compare_newer"), names, key=_NEWER, format_func=ui.plain_text)  # the newest first
    st.button(t("releases.compare_button"), key="releases.compare_button", on_click=_compare)
    if st.session_state.get(_COMPARED) == (older, newer):
        _show_comparison(older, newer)
