"""Releases: freeze the agreed and adjudicated labels into an immutable, hashed gold release;
list the releases, download their files, verify a release folder against its manifest."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from annotator.errors import AnnotatorError
from annotator.services import releases
from annotator.ui import components as ui
from annotator.ui.i18n import t

_VERIFIED = "releases.verified"


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
    ui.flash("success", t("releases.created", name=created.name, claims=created.counts.get("claims", 0),
                          path=str(Path(created.path).resolve()), left_out=left_out or "-"))


def _verify(name: str) -> None:
    try:
        with ui.db() as session:
            result = releases.verify_stored_release(session, ui.session_user(session), name)
    except AnnotatorError as error:
        ui.flash_error(error)
        return
    st.session_state[_VERIFIED] = (name, result.ok, list(result.problems))


me = ui.require_page("releases")
with ui.db() as session:
    known = releases.list_releases(session, me)

st.title(t("page.releases"))
ui.show_flash()

with st.container(border=True):
    st.subheader(t("releases.create"))
    st.text_input(t("releases.name"), key="releases.name", placeholder="gold-v1")
    ui.dataset_select("releases.dataset")
    st.checkbox(t("releases.only_final"), key="releases.only_final", help=t("releases.only_final_help"))
    st.button(t("releases.create_button"), key="releases.create_button", type="primary", on_click=_create)

st.subheader(t("releases.list"))
if not known:
    st.caption(t("releases.none"))
    st.stop()
st.dataframe(
    pd.DataFrame([{t("col.name"): r.name, t("col.created"): r.created_at.isoformat(timespec="seconds"),
                   t("col.creator"): r.creator, t("col.claims"): (r.counts or {}).get("claims"),
                   t("col.path"): r.path, "SHA-256 (manifest)": r.manifest_sha256} for r in known]),
    hide_index=True,
)

by_name = {r.name: r for r in known}
chosen = st.selectbox(t("releases.pick"), list(by_name), key="releases.pick")
release = by_name[chosen]
try:
    with ui.db() as session:
        files = releases.release_files(session, me, release.name)
except AnnotatorError as error:
    st.error(str(error))
    files = {}
for column, (file_name, path) in zip(st.columns(max(len(files), 1)), files.items(), strict=False):
    column.download_button(file_name, data=Path(path).read_bytes, file_name=file_name, key=f"releases.download.{file_name}",
                           on_click="ignore", icon=":material/download:")

st.button(t("releases.verify"), key="releases.verify", on_click=_verify, args=(release.name,))
verified = st.session_state.get(_VERIFIED)
if verified is not None and verified[0] == release.name:
    _, ok, problems = verified
    if ok:
        st.success(t("releases.verify_ok", name=release.name))
    else:
        st.error(t("releases.verify_bad", name=release.name) + "\n\n" + "\n".join(f"- {p}" for p in problems))
