"""Import (admins): upload a case, label or adjudication file with the command line's options,
check it (the import run and rolled back: encoding, counts, warnings, every bad line with its
line and field, a preview), then import it for real with a progress bar. Nothing is written
before Import is pressed. The report, the refusals and every bad line's problem and fix are the
service's messages, written in the user's language (the command line prints their English)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from annotator.errors import AnnotatorError
from annotator.formats import refusal_message
from annotator.formats import kinds
from annotator.formats.kinds import page_formats
from annotator.services import imports
from annotator.ui import components as ui
from annotator.ui.i18n import message_text, t

_CHECKED = "imports.checked"  # (what was checked, ImportCheck): shown while the upload and options stay the same
_DONE = "imports.done"  # (file name, ImportReport or None, error or None, the check's counts)
_RUNNING = "imports.running"  # the file name while an import runs; left behind when a click elsewhere ends it
_FORMATS = page_formats()  # kind -> its format choices (the registry, formats.kinds)


def _default_datasets() -> str:
    """Where cases go when no dataset is named, from the registry: "'default' (jsonl, csv), ..."."""
    by_dataset: dict[str, list[str]] = {}
    for fmt, dataset in kinds.kind("cases").default_datasets.items():
        by_dataset.setdefault(dataset, []).append(fmt)
    return ", ".join(t("imports.dataset_default", dataset=dataset, formats=", ".join(fmts))
                     for dataset, fmts in by_dataset.items())


def _options(kind: str) -> imports.UploadOptions:
    """The options as the widgets hold them (rendered above)."""
    dataset = (st.session_state.get("imports.dataset") or "").strip() or None
    cases = kind == "cases"
    slices = (st.session_state.get("imports.slices") or "") if cases else ""
    return imports.UploadOptions(
        kind=kind, fmt=st.session_state.get(f"imports.format.{kind}") or "auto", dataset=dataset,
        update=bool(st.session_state.get("imports.update")),
        partial=bool(st.session_state.get("imports.partial")),
        slices=tuple(name.strip() for name in slices.split(",") if name.strip()),
    )


def _bad_lines_table(lines: tuple[imports.SkippedLine, ...]) -> None:
    st.dataframe(pd.DataFrame([{t("imports.col_file"): ui.plain_text(line.path), t("imports.col_line"): line.line,
                                t("imports.col_field"): ui.plain_text(line.field or "-"),
                                t("imports.col_reason"): ui.plain_text(message_text(line.said()))}
                               for line in lines]), hide_index=True)


def _report(report: imports.ImportReport) -> None:
    """The report as the command line prints it, in parts and in the user's language: the encoding
    line, the counts per kind, the people created, the skipped lines and the warnings."""
    st.info(ui.plain_markdown(message_text(report.headline())))
    st.table(pd.DataFrame([{t("imports.col_kind"): message_text(report.kind_name(kind)),
                            **{t(f"imports.col_{k}"): counts.get(k, 0) for k in imports.KINDS}}
                           for kind, counts in report.counts.items()]), hide_index=True)
    for note in report.notes():  # people created or given a role, labels to review, skipped claims
        st.caption(ui.plain_markdown(message_text(note)))
    if report.skipped_lines:
        st.warning(t("imports.skipped", n=len(report.skipped_lines)))
        _bad_lines_table(report.skipped_lines)
    if report.warnings:
        st.warning(t("imports.warnings", n=len(report.warnings)) + "\n\n" + "\n".join(
            f"- {ui.plain_markdown(message_text(warning))}" for warning in report.warning_messages()))


ui.require_page("imports")
st.title(t("page.imports"))
st.caption(t("imports.intro"))

kind = st.radio(t("imports.kind"), imports.UPLOAD_KINDS, key="imports.kind", horizontal=True,
                format_func=lambda name: t(f"imports.kind.{name}"))
uploaded = st.file_uploader(t("imports.file"), type=list(imports.UPLOAD_SUFFIXES), key="imports.file")
left, right = st.columns(2)
with left:
    st.selectbox(t("imports.format"), _FORMATS[kind], key=f"imports.format.{kind}", disabled=len(_FORMATS[kind]) == 1)
    st.text_input(t("imports.dataset"), key="imports.dataset", help=t("imports.dataset_help", defaults=_default_datasets()))
with right:  # a checkbox's label is one line, cut at the column's edge: what it does is said under it
    st.checkbox(t("imports.update"), key="imports.update")
    st.caption(t("imports.update_help"))
    st.checkbox(t("imports.partial"), key="imports.partial")
    st.caption(t("imports.partial_help"))
    if kind == "cases":
        st.text_input(t("imports.slices"), key="imports.slices", placeholder=t("imports.slices_hint"))
options = _options(kind)
upload = (uploaded.file_id, uploaded.name, uploaded.size, options) if uploaded is not None else None

if st.button(t("imports.check"), key="imports.check", disabled=uploaded is None, icon=":material/fact_check:"):
    st.session_state.pop(_DONE, None)
    try:
        with ui.db() as session:
            checked = imports.check_upload(session, ui.session_user(session), uploaded.name, uploaded.getvalue(), options)
    except AnnotatorError as error:
        st.error(ui.error_markdown(error))
        checked = None
    st.session_state[_CHECKED] = (upload, checked)

stopped = st.session_state.pop(_RUNNING, None)
if stopped is not None:  # the run importing it ended before its commit: the import rolled back whole
    st.warning(ui.md("imports.stopped", file=stopped))

done = st.session_state.get(_DONE)
if done is not None:
    name, report, error, checked_counts = done
    if error is not None:
        st.error(t("imports.failed", error=ui.plain_markdown(error)))
    else:
        st.success(ui.md("imports.done", file=name))
        if report.counts != checked_counts:
            st.warning(t("imports.changed_since_check"))
        _report(report)

stored = st.session_state.get(_CHECKED)
checked = stored[1] if stored is not None and stored[0] == upload else None  # a check of other input is void
if checked is not None:
    st.header(ui.md("imports.check_result", file=uploaded.name))
    if checked.report is None:
        refusal = checked.refusal if checked.refusal_message is None else checked.refusal_message
        st.error(t("imports.refused") + "\n\n" + ui.plain_markdown(message_text(refusal)))
        if checked.bad_lines:
            _bad_lines_table(checked.bad_lines)
    else:
        _report(checked.report)
        st.markdown(f"**{t('imports.preview', n=len(checked.preview))}**")
        st.dataframe(pd.DataFrame([{ui.plain_text(k): ui.plain_text(v) for k, v in row.items()} for row in checked.preview]),
                     hide_index=True)
        if st.button(t("imports.confirm"), key="imports.confirm", type="primary", icon=":material/upload:"):
            bar = st.progress(0.0, text=ui.md("imports.progress", file=uploaded.name))

            def progress(done_bytes: int, total: int) -> None:
                bar.progress(min(done_bytes / total, 1.0) if total else 0.0, text=ui.md("imports.progress", file=uploaded.name))

            # One transaction: a click elsewhere meanwhile ends this run (at the next progress update)
            # and rolls the import back whole; _RUNNING, left set, makes the page say so next time.
            st.session_state[_RUNNING] = uploaded.name
            try:
                with ui.db() as session:
                    report = imports.import_upload(session, ui.session_user(session), uploaded.name, uploaded.getvalue(),
                                                   options, progress=progress)
            except AnnotatorError as error:
                st.session_state[_DONE] = (uploaded.name, None, message_text(refusal_message(error)), None)
            else:
                st.session_state[_DONE] = (uploaded.name, report, None, checked.report.counts)
            st.session_state.pop(_RUNNING, None)
            st.session_state.pop(_CHECKED, None)  # the button goes: a second click imports nothing
            st.rerun()
