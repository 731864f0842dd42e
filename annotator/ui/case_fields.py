"""The case's RAG fields as the Label and Adjudicate pages show them: required and forbidden
evidence, expected behaviour, principal and corpus release (imports keep them in the case's
metadata under these snake_case names; see formats.RAG_ID_LISTS). The pages get the metadata
from the service that loads the claim; nothing here reads the database.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from annotator.ui.plain import plain_markdown
from annotator.ui.i18n import t

FIELDS: dict[str, str] = {
    "required_evidence_ids": "case.required_evidence",
    "forbidden_evidence_ids": "case.forbidden_evidence",
    "expected_behavior": "case.expected_behavior",
    "principal": "case.principal",
    "corpus_release": "case.corpus_release",
}
"""Metadata key -> the i18n key of its name, in the order shown."""


def _shown(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def _ids(metadata: dict, key: str) -> set[str]:
    value = metadata.get(key)
    return {str(item) for item in value} if isinstance(value, list | tuple) else set()


def detail_parts(metadata: dict) -> list[str]:
    """The RAG fields the case has, in FIELDS order, each as Markdown "**name**: value" (the value
    as plain text); [] when it has none. The case header writes them on its one line."""
    parts = []
    for key, name in FIELDS.items():
        value = metadata.get(key)
        if value in (None, "", [], {}):
            continue
        parts.append(f"**{t(name)}**: {plain_markdown(_shown(value))}")
    return parts


def evidence_role(metadata: dict, passage_id: str) -> None:
    """Above a passage: says in words (an icon too) when the case names it as required or
    forbidden evidence; nothing otherwise."""
    if passage_id in _ids(metadata, "required_evidence_ids"):
        st.markdown(f":material/check_circle: **{t('passage.required')}**")
    if passage_id in _ids(metadata, "forbidden_evidence_ids"):
        st.markdown(f":material/block: **{t('passage.forbidden')}**")
