"""Blind everywhere: one sweep over every service function and every page, proving that before a
labeler submits on a claim nothing of another labeler's label on it (value, rationale, cited
passages, name, time) reaches them; and the adjudicator's anonymized view.

The world (built by `build_world`): labeler A, aoi, has labeled claim X (case-1-c1) with a
distinctive value, a rationale holding MARKER, one cited passage of three and a label time far
from now (A_TIME). Two labelers assigned to X have not labeled it yet: ren (labeler only) and boss
(an admin who also labels). Everything else is ordinary work both of them may see.

Each check runs twice: in world S0, before A labels X, and in world S1, after. What a labeler B
gets must be the same in both (after normalizing this run's own times, row keys and hashes:
`normalized`), and S1 must hold no MARKER, no trace of A_TIME and (for ren, who sees no user
list) not A's name. The differential check catches what a marker cannot: A's value and which
passages A cited, which B legitimately sees as choices.

Judge labels anchor people as another labeler's label would: the world holds a judge run (JUDGE_RUN)
whose labels of X, Z and W carry a distinctive rationale (JUDGE_MARKER) and confidence, under a
distinctive name, model, prompt version, note and file name (JUDGE_TRACES). No service and no page
gives a labeler (ren) or an adjudicator (mika) any of them; an admin who labels (boss) may see the
run on the Judges page, never a judge's rationale or confidence.

Services: every public function of `annotator.services.*` is found by introspection and must be
classified in PROBES (called on B's behalf, B as the caller) or INTERNAL (reachable on nobody's
behalf: no caller argument, and no page refers to it); a new function fails
`test_every_public_service_function_is_classified` until it is. Pages: AppTest drives the app
as ren and as boss through every page and the address of every page they lack.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import json
import pkgutil
import re
from collections.abc import Callable
from contextlib import ExitStack
from datetime import UTC, date, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from sqlalchemy import update
from sqlmodel import Session, SQLModel, select
from streamlit.testing.v1 import AppTest

import annotator.services as services_package
import annotator.ui.components as ui_components
from annotator.db import init_db, session_scope
from annotator.errors import AnnotatorError, PermissionDeniedError
from annotator.models import Case, Claim, ClaimPassage, Dataset, Draft, GoldRelease, Label, LabelEvent, Passage, User
from annotator.services import (
    access,
    adjudication,
    blind,
    claim_review,
    corrections,
    drafts,
    gold_source,
    guidelines,
    history,
    home,
    imports,
    judges,
    labeling,
    login_sessions,
    lookup,
    releases,
    reports,
    run_reports,
    runs,
    status,
    users,
)
from annotator.messages import english, msg
from annotator.release import read_manifest
from annotator.services.access import OPERATOR
from annotator.services.fingerprint import label_fingerprint
from annotator.workflow import Permission
from tests.conftest import fresh_postgres_database, label_button

REPO = Path(__file__).resolve().parents[1]
APP = REPO / "annotator" / "ui" / "app.py"
VIEWS = REPO / "annotator" / "ui" / "views"
UI = REPO / "annotator" / "ui"

MARKER = "RATIONALE-MARKER-7f3a"
"""A's rationale on X: nowhere else in the world."""
A_TIME = datetime(2031, 7, 13, 5, 17, 29, 314159, tzinfo=UTC)
"""When A labeled X (set on the label and its audit event): no other time is near it."""
TIME_TRACES = ("2031-07-13", "2031/07/13", "13/07/2031", "07/13/2031", "05:17:29", "05:17 ", "314159",
               str(int(A_TIME.timestamp())), str(int(A_TIME.timestamp() * 1000)))
"""How A_TIME could show: ISO and other dates, clock time, microseconds, epoch seconds and ms."""
A_NAME = "aoi"
A_VALUE, A_CITED, A_SEVERITY = "contradict", ("case-1-p2",), "legal"

PASSWORDS = {"aoi": "aoi-pass-1234", "ren": "ren-pass-1234", "cleo": "cleo-pass-1234",
             "mika": "mika-pass-1234", "admin": "admin-pass-1234", "boss": "boss-pass-1234",
             "kai": "kai-pass-1234", "chief": "chief-pass-1234"}
ROLES = {"aoi": ["labeler"], "ren": ["labeler"], "cleo": ["labeler"], "mika": ["adjudicator"],
         "admin": ["admin", "adjudicator"], "boss": ["labeler", "admin"]}
BLIND = ("ren", "boss")
"""The labelers B who have not labeled X yet: a labeler, and an admin who also labels."""

JUDGE_RUN, JUDGE_FILE = "judge-run-5e1d", "judge-labels-5e1d.jsonl"
JUDGE_MODEL, JUDGE_PROMPT, JUDGE_NOTE = "JUDGE-MODEL-5e1d", "JUDGE-PROMPT-5e1d", "JUDGE-NOTE-5e1d"
JUDGE_MARKER, JUDGE_CONFIDENCE = "JUDGE-RATIONALE-5e1d", 0.4173
JUDGE_LABELS = {"case-1-c1": "insufficient", "case-1-c2": "contradict", "case-2-c1": "contradict"}
"""The judge run of the world: its labels of X, Z (whose gold in gold-v0 is support) and W."""
JUDGE_TRACES = (JUDGE_RUN, JUDGE_FILE, JUDGE_MODEL, JUDGE_PROMPT, JUDGE_NOTE, JUDGE_MARKER, str(JUDGE_CONFIDENCE))
"""How the judge run could show: nowhere for a labeler or an adjudicator."""
JUDGE_PRIVATE = (JUDGE_MARKER, str(JUDGE_CONFIDENCE))
"""What of a judge's labels no page or service shows anyone: its rationales and confidences."""
NOT_BLIND = ("mika",)
"""The adjudicator, swept for judge traces only (mika labels nothing)."""

RAG_RUNS = {
    "rag-base-world": [
        {"case_id": "case-1", "retrieved": ["case-1-p2", "case-1-p1"], "behavior": "answer",
         "claims": [{"text": "Claim text 1.2.", "label": "support"}]},
        {"case_id": "case-2", "retrieved": ["case-2-p3"], "behavior": "abstain"}],
    "rag-candidate-world": [
        {"case_id": "case-1", "retrieved": ["case-1-p1"], "behavior": "answer",
         "claims": [{"text": "Claim text 1.2.", "label": "support"}]},
        {"case_id": "case-2", "retrieved": ["case-2-p1", "case-2-p3"], "behavior": "answer", "cited": ["case-2-p1"],
         "claims": [{"text": "Claim text 2.1.", "label": "contradict", "severity": "legal"}]}],
}
"""The world's RAG runs over case-1 (Z's case: X is not in gold-v0) and case-2 (W, not released)."""
RAG_BASE, RAG_CANDIDATE = RAG_RUNS


# --- the world ---------------------------------------------------------------------------------


def build_world(session: Session, releases_dir: Path) -> None:
    """World S0 (see the module docstring).

    case-1 (normal): claims case-1-c1 (X) and case-1-c2 (Z), shown with passages case-1-p1..p3,
    assigned to aoi, ren and boss. Z is labeled support by all three (B has submitted on it).
    case-2 (paraphrase): claim case-2-c1 (W), assigned to aoi and cleo, disputed (aoi support,
    cleo contradict). Release gold-v0 (only final: Z) is written to `releases_dir`; the judge run
    JUDGE_RUN (JUDGE_LABELS) and the RAG runs RAG_RUNS are imported from files beside it.
    """
    dataset = Dataset(name="pilot", source_format="test")
    session.add(dataset)
    session.flush()
    for position, (case_id, slice_, claims) in enumerate(
            (("case-1", "normal", ("c1", "c2")), ("case-2", "paraphrase", ("c1",))), start=1):
        case = Case(dataset_id=dataset.id, case_id=case_id, position=position, question=f"Question of {case_id}?",
                    answer=f"Answer of {case_id}.", slice=slice_, split="dev", meta={"source": "blind test"})
        session.add(case)
        session.flush()
        passages = [Passage(dataset_id=dataset.id, passage_id=f"{case_id}-p{k}", doc_id=f"doc-{position}",
                            version="2026-04", title=f"Policy {position}.{k}", text=f"Evidence text {position}.{k}.")
                    for k in (1, 2, 3)]
        session.add_all(passages)
        session.flush()
        for j, claim_suffix in enumerate(claims, start=1):
            claim = Claim(dataset_id=dataset.id, case_pk=case.id, claim_id=f"{case_id}-{claim_suffix}", position=j,
                          text=f"Claim text {position}.{j}.")
            session.add(claim)
            session.flush()
            session.add_all([ClaimPassage(claim_pk=claim.id, passage_pk=p.id, position=k) for k, p in enumerate(passages)])
    for name, roles in ROLES.items():
        users.add_user(session, OPERATOR, name, roles, PASSWORDS[name])
    case_pk = {c.case_id: c.id for c in session.exec(select(Case))}
    labeling.assign_cases(session, OPERATOR, [case_pk["case-1"]], ["aoi", "ren", "boss"])
    labeling.assign_cases(session, OPERATOR, [case_pk["case-2"]], ["aoi", "cleo"])
    claim_pk = {c.claim_id: c.id for c in session.exec(select(Claim))}
    for name in ("aoi", "ren", "boss"):
        labeling.save_label(session, users.get_user(session, name), claim_pk["case-1-c2"], "support",
                            rationale=f"{name} finds it in passage 1", passage_ids=["case-1-p1"])
    labeling.save_label(session, users.get_user(session, "aoi"), claim_pk["case-2-c1"], "support", rationale="W: aoi")
    labeling.save_label(session, users.get_user(session, "cleo"), claim_pk["case-2-c1"], "contradict",
                        rationale="W: cleo", severity="other")
    session.flush()
    releases.create_release(session, OPERATOR, "gold-v0", only_final=True, out_dir=releases_dir, n_bootstrap=100)
    judge_file = releases_dir.parent / JUDGE_FILE
    judge_file.write_text("".join(json.dumps({"claim_id": claim_id, "label": label, "confidence": JUDGE_CONFIDENCE,
                                              "rationale": f"{JUDGE_MARKER}: {claim_id}"}) + "\n"
                                  for claim_id, label in JUDGE_LABELS.items()), encoding="utf-8")
    judges.import_judge_labels(session, OPERATOR, judge_file, run=JUDGE_RUN, model=JUDGE_MODEL,
                               prompt_version=JUDGE_PROMPT, note=JUDGE_NOTE)
    for name, lines in RAG_RUNS.items():
        run_file = releases_dir.parent / f"{name}.jsonl"
        run_file.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        runs.import_run(session, OPERATOR, run_file, run=name, meta={"system": name})


def a_labels_x(session: Session) -> None:
    """S0 -> S1: aoi labels X (value, cited passage, MARKER rationale, severity) at A_TIME."""
    aoi = users.get_user(session, A_NAME)
    x = lookup.find_claim(session, "case-1-c1").id
    label = labeling.save_label(session, aoi, x, A_VALUE, passage_ids=list(A_CITED), rationale=f"{MARKER}: passage 2",
                                severity=A_SEVERITY)
    session.flush()
    session.exec(update(Label).where(Label.id == label.id).values(created_at=A_TIME, updated_at=A_TIME))
    session.exec(update(LabelEvent).where(LabelEvent.entity == "label", LabelEvent.entity_pk == label.id).values(at=A_TIME))


def world_keys(session: Session) -> SimpleNamespace:
    """The primary keys the probes need."""
    claims = {c.claim_id: c.id for c in session.exec(select(Claim))}
    cases = {c.case_id: c.id for c in session.exec(select(Case))}
    return SimpleNamespace(x=claims["case-1-c1"], z=claims["case-1-c2"], w=claims["case-2-c1"],
                           case1=cases["case-1"], case2=cases["case-2"],
                           dataset=session.exec(select(Dataset.id)).one())


# --- deep serialization and the checks ---------------------------------------------------------


def dump(value: Any, _depth: int = 0) -> Any:
    """`value` as plain JSON-ready data, all the way down: dataclasses, named tuples, SQLModel rows,
    pandas frames, bytes, enums, times, and paths (a file with its contents, parquet read as a
    frame; a folder with every file in it): whatever a caller could read out of it."""
    if _depth > 40:
        return repr(value)
    deeper = _depth + 1
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return dump(value.value, deeper)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, Path):
        return _dump_path(value, deeper)
    if isinstance(value, pd.DataFrame):
        return {"columns": [dump(c, deeper) for c in value.columns],
                "index": [dump(i, deeper) for i in value.index],
                "rows": [[dump(cell, deeper) for cell in row] for row in value.itertuples(index=False)]}
    if isinstance(value, pd.Series):
        return dump(value.to_frame(), deeper)
    if isinstance(value, SQLModel):
        return {key: dump(item, deeper) for key, item in value.model_dump().items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: dump(getattr(value, f.name), deeper) for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {name: dump(getattr(value, name), deeper) for name in value._fields}
    if isinstance(value, dict):
        return {str(dump(key, deeper)): dump(item, deeper) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [dump(item, deeper) for item in value]
    if isinstance(value, set | frozenset):
        return sorted((dump(item, deeper) for item in value), key=repr)
    if isinstance(value, np.ndarray):
        return [dump(item, deeper) for item in value.tolist()]
    if isinstance(value, np.generic):
        return dump(value.item(), deeper)
    if isinstance(value, BaseException):
        return {"error": type(value).__name__, "message": str(value)}
    return repr(value)


def _dump_path(path: Path, depth: int) -> Any:
    if path.is_dir():
        return {"folder": str(path), "files": {p.name: _dump_path(p, depth) for p in sorted(path.iterdir())}}
    if path.suffix == ".parquet" and path.is_file():
        return {"file": str(path), "content": dump(pd.read_parquet(path), depth)}
    if path.is_file():
        return {"file": str(path), "content": path.read_bytes().decode("utf-8", errors="replace")}
    return {"path": str(path)}


def as_text(value: Any) -> str:
    return json.dumps(dump(value), ensure_ascii=False, sort_keys=True, default=repr)


def traces_of_judge(text_: str, traces: tuple[str, ...] = JUDGE_TRACES) -> list[str]:
    """Which of `traces` (by default everything of the judge run) show in `text_`."""
    return [trace for trace in traces if trace in text_]


def traces_of_a(text_: str, *, name: bool = True) -> list[str]:
    """What of A's label on X shows in `text_`: the marker, A's label time, A's name (a word)."""
    found = [MARKER] if MARKER in text_ else []
    found += [trace for trace in TIME_TRACES if trace in text_]
    if name and re.search(rf"\b{A_NAME}\b", text_):
        found.append(A_NAME)
    return found


_ISO = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?([+-]\d\d:?\d\d|Z)?")
_CLOCK = re.compile(r"\b\d\d:\d\d( UTC)?\b")
_SHA = re.compile(r"\b[0-9a-f]{64}\b")
_SALTED = re.compile(r"\$argon2[^\"'\s]*")


def normalized(value: Any, roots: tuple[str, ...] = ()) -> Any:
    """A dump with what differs from run to run for reasons other than A's label replaced:
    times (this run's "now"), row keys of rows a probe itself wrote (`id`), hashes, password
    hashes and the run's temporary folders. A_TIME would be replaced too: its traces are checked
    on the raw dump."""
    if isinstance(value, dict):
        return {key: "<id>" if key == "id" and isinstance(item, int) else normalized(item, roots)
                for key, item in value.items()}
    if isinstance(value, list):
        return [normalized(item, roots) for item in value]
    if isinstance(value, str):
        for root in roots:
            value = value.replace(root, "<root>")
        value = _ISO.sub("<time>", value)
        value = _CLOCK.sub("<clock>", value)
        value = _SHA.sub("<sha256>", value)
        return _SALTED.sub("<hash>", value)
    return value


# --- the probes ----------------------------------------------------------------------------------


Probe = Callable[[Session, SimpleNamespace], Any]
"""A call made on B's behalf: (session, ctx) -> result; ctx.me is B (a User of the session),
ctx.k the world's keys, ctx.out a fresh folder for files."""


def _each_permission(s: Session, c: SimpleNamespace) -> dict:
    outcome = {}
    for permission in Permission:
        try:
            access.require(c.me, permission)
            outcome[permission.value] = "allowed"
        except PermissionDeniedError as error:
            outcome[permission.value] = f"refused: {error}"
    return outcome


def _pks(s: Session, query: Any) -> list[int] | None:
    return None if query is None else sorted(s.exec(query))


def _missing(c: SimpleNamespace, name: str) -> Path:
    return c.out / name


def _judge_file_of_x(c: SimpleNamespace) -> Path:
    """A judge labels file of X alone, in the probe's folder."""
    path = c.out / "judge-x.jsonl"
    path.write_text(json.dumps({"claim_id": "case-1-c1", "label": "support"}) + "\n", encoding="utf-8")
    return path


def _run_file_of_x(c: SimpleNamespace) -> Path:
    """A run file of X's case alone, in the probe's folder."""
    path = c.out / "run-x.jsonl"
    path.write_text(json.dumps({"case_id": "case-1", "retrieved": ["case-1-p2", "case-1-p1"], "behavior": "answer",
                                "claims": [{"text": "Claim text 1.1.", "label": "support"}]}) + "\n", encoding="utf-8")
    return path


def _gold_v0_folder(s: Session) -> Path:
    """Where gold-v0 was written (its folder, which a caller could name instead of the release)."""
    return Path(s.exec(select(GoldRelease.path).where(GoldRelease.name == "gold-v0")).one())


def _gold_v0_as_verified(s: Session) -> gold_source.VerifiedRelease:
    """gold-v0 as gold_source.open_release gives it, built from its row and folder (no caller)."""
    row = s.exec(select(GoldRelease).where(GoldRelease.name == "gold-v0")).one()
    return gold_source.VerifiedRelease("gold-v0", Path(row.path), row.manifest_sha256, read_manifest(Path(row.path)), "gold-v0")


NEW_CASE = (b'{"case_id": "case-9", "question": "Q?", "answer": "A.", "slice": "normal", "split": "dev", "metadata": {}, '
            b'"passages": [{"passage_id": "case-9-p1", "doc_id": "d", "version": "v1", "title": "T", "text": "E."}], '
            b'"claims": [{"claim_id": "case-9-c1", "text": "C."}]}\n')
LABEL_OF_X = b"claim_id,labeler,label\ncase-1-c1,aoi,support\n"
ADJUDICATION_OF_X = b"claim_id,adjudicator,label\ncase-1-c1,aoi,support\n"
"""Uploads for the Import page's services: a new case; files naming A as the labeler or
adjudicator of X (an admin who labels X is refused at the row, whatever the stored labels)."""

UPDATE_OF_X = json.dumps({
    "case_id": "case-1", "question": "Question of case-1?", "answer": "Answer of case-1.", "slice": "normal",
    "split": "dev", "metadata": {"source": "blind test"},
    "passages": [{"passage_id": f"case-1-p{k}", "doc_id": "doc-1", "version": "2026-04", "title": f"Policy 1.{k}",
                  "text": f"Evidence text 1.{k}."} for k in (1, 2, 3)],
    "claims": [{"claim_id": "case-1-c1", "text": "Claim text 1.1, reworded."}, {"claim_id": "case-1-c2", "text": "Claim text 1.2."}],
}).encode() + b"\n"
"""case-1 again with X's text changed (--update): the labels of X and Z written before are to
review; the report must not count A's label of X for an admin who still labels X."""
UPDATE = imports.UploadOptions(dataset="pilot", update=True)


def _logged_in(s: Session, c: SimpleNamespace) -> tuple[login_sessions.StartedSession, str]:
    """A login session of B, started and its ticket traded: (started, token)."""
    started = login_sessions.start_session(s, c.me)
    return started, login_sessions.redeem_ticket(s, started.ticket).token


def _login_probe(step: str) -> Probe:
    """A probe of one login-session function on B's own login; what it returns without the random
    token and keys (which differ on every call, whatever A did)."""
    def probe(s: Session, c: SimpleNamespace) -> Any:
        started, token = _logged_in(s, c)
        if step == "resume":
            return login_sessions.resume(s, token).user_name
        if step == "in_force":
            return login_sessions.in_force(s, started.session_pk, c.me.id).ticket_pending
        if step == "touch":
            return login_sessions.touch(s, started.session_pk)
        if step == "revoke_session":
            return login_sessions.revoke_session(s, started.session_pk)
        if step == "revoke_token":
            return login_sessions.revoke_token(s, token)
        if step == "revoke_user_sessions":
            return login_sessions.revoke_user_sessions(s, c.me.id, "logout")
        return token != ""  # redeem_ticket
    return probe


PROBES: dict[str, dict[str, Probe]] = {
    "access.caller_roles": {"": lambda s, c: access.caller_roles(c.me)},
    "access.is_operator": {"": lambda s, c: access.is_operator(c.me)},
    "access.need_caller": {"": lambda s, c: access.need_caller(c.me)},
    "access.require": {"every permission": _each_permission},
    "adjudication.adjudicate": {
        "X": lambda s, c: adjudication.adjudicate(s, c.me, c.k.x, "support", rationale="probe"),
        "W": lambda s, c: adjudication.adjudicate(s, c.me, c.k.w, "support", rationale="probe"),
    },
    "adjudication.adjudication_queue": {
        "": lambda s, c: adjudication.adjudication_queue(s, c.me),
        "dataset": lambda s, c: adjudication.adjudication_queue(s, c.me, c.k.dataset),
    },
    "adjudication.view_for_adjudicator": {
        "X": lambda s, c: adjudication.view_for_adjudicator(s, c.me, c.k.x),
        "W": lambda s, c: adjudication.view_for_adjudicator(s, c.me, c.k.w),
    },
    "blind.claims_still_to_label": {"": lambda s, c: _pks(s, blind.claims_still_to_label(s, c.me))},
    "blind.is_still_to_label": {"X": lambda s, c: blind.is_still_to_label(s, c.me, c.k.x)},
    "claim_review.case_review": {
        "case-1": lambda s, c: claim_review.case_review(s, c.me, "case-1"),
        "case-2": lambda s, c: claim_review.case_review(s, c.me, "case-2"),
    },
    "claim_review.review_case_ids": {"": lambda s, c: claim_review.review_case_ids(s, c.me, "pilot")},
    "claim_review.split_claim": {"X": lambda s, c: claim_review.split_claim(s, c.me, "case-1-c1", 5, reason="probe")},
    "claim_review.merge_claims": {"X": lambda s, c: claim_review.merge_claims(s, c.me, "case-1-c1", reason="probe")},
    "claim_review.edit_claim": {
        "X": lambda s, c: claim_review.edit_claim(s, c.me, "case-1-c1", "Probe text.", reason="probe"),
        "X update": lambda s, c: claim_review.edit_claim(s, c.me, "case-1-c1", "Probe text.", reason="probe", update=True),
    },
    "claim_review.drop_claim": {"X": lambda s, c: claim_review.drop_claim(s, c.me, "case-1-c1", reason="probe")},
    "corrections.correct_label": {
        "X": lambda s, c: corrections.correct_label(s, c.me, c.k.x, A_NAME, "support", reason="probe",
                                                    expected_revision=1),
    },
    "corrections.correction_view": {
        "X": lambda s, c: corrections.correction_view(s, c.me, "case-1-c1"),
        "Z": lambda s, c: corrections.correction_view(s, c.me, "case-1-c2"),
    },
    "drafts.discard_draft": {"X": lambda s, c: drafts.discard_draft(s, c.me, c.k.x)},
    "drafts.forget_draft": {"X": lambda s, c: drafts.forget_draft(s, c.me, c.k.x)},
    "drafts.get_draft": {"X": lambda s, c: drafts.get_draft(s, c.me, c.k.x)},
    "drafts.save_draft": {
        "X": lambda s, c: drafts.save_draft(s, c.me, c.k.x, value="support", rationale="B is typing",
                                            passage_ids=["case-1-p1"]),
    },
    "fingerprint.label_fingerprint": {
        "": lambda s, c: label_fingerprint(s, c.me),
        "dataset": lambda s, c: label_fingerprint(s, c.me, c.k.dataset),
    },
    "guidelines.current_guideline": {"": lambda s, c: guidelines.current_guideline(s)},
    "guidelines.get_guideline": {"v1": lambda s, c: guidelines.get_guideline(s, "v1")},
    "guidelines.guideline_text": {"": lambda s, c: guidelines.guideline_text("# Guideline\n".encode(), "g.md")},
    "guidelines.list_guidelines": {"": lambda s, c: guidelines.list_guidelines(s)},
    "guidelines.publish_guideline": {"v9": lambda s, c: guidelines.publish_guideline(s, c.me, "v9", "# Probe\n")},
    "history.claim_datasets": {"X": lambda s, c: history.claim_datasets(s, c.me, "case-1-c1")},
    "history.claim_history_view": {
        "X": lambda s, c: history.claim_history_view(s, c.me, "case-1-c1"),
        "Z": lambda s, c: history.claim_history_view(s, c.me, "case-1-c2"),
        "W": lambda s, c: history.claim_history_view(s, c.me, "case-2-c1"),
    },
    # the Home page: each overview as B would get it (boss: the admin's, its blind claims left out)
    "home.labeler_overview": {"": lambda s, c: home.labeler_overview(s, c.me)},
    "home.adjudicator_overview": {"": lambda s, c: home.adjudicator_overview(s, c.me)},
    "home.admin_overview": {
        "": lambda s, c: home.admin_overview(s, c.me),
        "dataset": lambda s, c: home.admin_overview(s, c.me, c.k.dataset),
    },
    "home.open_claim_link": {
        "X": lambda s, c: home.open_claim_link(s, c.me, "case-1-c1"),
        "W": lambda s, c: home.open_claim_link(s, c.me, "case-2-c1"),
        "unknown": lambda s, c: home.open_claim_link(s, c.me, "no-such-claim"),
        "X pilot": lambda s, c: home.open_claim_link(s, c.me, "case-1-c1", "pilot"),
        "W pilot": lambda s, c: home.open_claim_link(s, c.me, "case-2-c1", "pilot"),
        "X unknown dataset": lambda s, c: home.open_claim_link(s, c.me, "case-1-c1", "no-such-dataset"),
    },
    "imports.check_dataset_name": {"": lambda s, c: imports.check_dataset_name("pilot")},
    "judges.check_run_name": {"": lambda s, c: judges.check_run_name("judge-probe")},
    "judges.import_judge_labels": {
        "missing file": lambda s, c: judges.import_judge_labels(s, c.me, _missing(c, "judge.jsonl"), run="judge-probe"),
        "labels of X": lambda s, c: judges.import_judge_labels(s, c.me, _judge_file_of_x(c), run="judge-probe"),
    },
    "judges.list_judge_runs": {"": lambda s, c: judges.list_judge_runs(s, c.me)},
    "judges.get_judge_run": {"": lambda s, c: judges.get_judge_run(s, c.me, JUDGE_RUN)},
    "judges.report_fingerprint": {"gold-v0": lambda s, c: judges.report_fingerprint(s, c.me, JUDGE_RUN, "gold-v0")},
    "judges.judge_report": {
        "gold-v0": lambda s, c: judges.judge_report(s, c.me, JUDGE_RUN, "gold-v0", n_bootstrap=100),
        "gold-v0 holdout": lambda s, c: judges.judge_report(s, c.me, JUDGE_RUN, "gold-v0", n_bootstrap=100, holdout=True),
    },
    "runs.check_run_name": {"": lambda s, c: runs.check_run_name("run-probe")},
    "runs.check_meta": {"": lambda s, c: runs.check_meta({"model": "m-probe"})},
    "runs.import_run": {
        "missing file": lambda s, c: runs.import_run(s, c.me, _missing(c, "run.jsonl"), run="run-probe"),
        "run of X's case": lambda s, c: runs.import_run(s, c.me, _run_file_of_x(c), run="run-probe"),
    },
    "runs.list_runs": {"": lambda s, c: runs.list_runs(s, c.me)},
    "runs.get_run": {"": lambda s, c: runs.get_run(s, c.me, "run-probe"),
                     "world's run": lambda s, c: runs.get_run(s, c.me, RAG_BASE)},
    "runs.run_cases": {"": lambda s, c: runs.run_cases(s, c.me, "run-probe"),
                       "world's run": lambda s, c: runs.run_cases(s, c.me, RAG_CANDIDATE)},
    "run_reports.run_report": {
        "gold-v0": lambda s, c: run_reports.run_report(s, c.me, RAG_BASE, "gold-v0", n_bootstrap=100),
        "gold-v0 folder, by document": lambda s, c: run_reports.run_report(s, c.me, RAG_CANDIDATE, _gold_v0_folder(s),
                                                                           unit="doc", n_bootstrap=100),
    },
    "run_reports.compare_report": {
        "gold-v0": lambda s, c: run_reports.compare_report(s, c.me, RAG_BASE, RAG_CANDIDATE, "gold-v0", n_bootstrap=100),
        "gold-v0 folder": lambda s, c: run_reports.compare_report(s, c.me, RAG_CANDIDATE, RAG_BASE, _gold_v0_folder(s),
                                                                  n_bootstrap=100),
    },
    "gold_source.open_release": {
        "gold-v0": lambda s, c: gold_source.open_release(s, c.me, "gold-v0"),
        "gold-v0 folder": lambda s, c: gold_source.open_release(s, c.me, _gold_v0_folder(s)),
        "gold-v0 folder as text": lambda s, c: gold_source.open_release(s, c.me, str(_gold_v0_folder(s))),
    },
    "gold_source.refuse_blind": {
        "X": lambda s, c: gold_source.refuse_blind(s, c.me, [("pilot", "case-1-c1")], msg("msg.run.doing_report")),
        "Z and W": lambda s, c: gold_source.refuse_blind(s, c.me, [("pilot", "case-1-c2"), ("pilot", "case-2-c1")],
                                                         msg("msg.run.doing_report")),
    },
    "gold_source.superseded_by": {"gold-v0": lambda s, c: gold_source.superseded_by(s, _gold_v0_as_verified(s))},
    "run_reports.report_fingerprint": {
        "gold-v0": lambda s, c: run_reports.report_fingerprint(s, c.me, ["run-probe"], "gold-v0"),
        "world's runs": lambda s, c: run_reports.report_fingerprint(s, c.me, [RAG_BASE, RAG_CANDIDATE], "gold-v0"),
    },
    "run_reports.case_detail": {
        "X's case": lambda s, c: run_reports.case_detail(s, c.me, "run-probe", "gold-v0", "case-1"),
        "X's case, world's run": lambda s, c: run_reports.case_detail(s, c.me, RAG_BASE, "gold-v0", "case-1"),
        "Z's case, world's run": lambda s, c: run_reports.case_detail(s, c.me, RAG_CANDIDATE, "gold-v0", "case-2"),
    },
    "imports.check_upload": {
        "cases": lambda s, c: imports.check_upload(s, c.me, "cases.jsonl", NEW_CASE, imports.UploadOptions()),
        "update of X": lambda s, c: imports.check_upload(s, c.me, "cases.jsonl", UPDATE_OF_X, UPDATE),
        "labels of X": lambda s, c: imports.check_upload(s, c.me, "labels.csv", LABEL_OF_X,
                                                         imports.UploadOptions(kind="labels")),
        "adjudications of X": lambda s, c: imports.check_upload(s, c.me, "adjudications.csv", ADJUDICATION_OF_X,
                                                                imports.UploadOptions(kind="adjudications")),
    },
    "imports.import_upload": {
        "cases": lambda s, c: imports.import_upload(s, c.me, "cases.jsonl", NEW_CASE, imports.UploadOptions()),
        "update of X": lambda s, c: imports.import_upload(s, c.me, "cases.jsonl", UPDATE_OF_X, UPDATE),
        "labels of X": lambda s, c: imports.import_upload(s, c.me, "labels.csv", LABEL_OF_X,
                                                          imports.UploadOptions(kind="labels")),
        "adjudications of X": lambda s, c: imports.import_upload(s, c.me, "adjudications.csv", ADJUDICATION_OF_X,
                                                                 imports.UploadOptions(kind="adjudications")),
    },
    "imports.import_adjudications": {"missing file": lambda s, c: imports.import_adjudications(
        s, c.me, _missing(c, "adjudications.csv"))},
    "imports.import_cases": {"missing file": lambda s, c: imports.import_cases(s, c.me, _missing(c, "cases.jsonl"))},
    "imports.import_labels": {"missing file": lambda s, c: imports.import_labels(s, c.me, _missing(c, "labels.csv"))},
    "labeling.assign_cases": {"": lambda s, c: labeling.assign_cases(s, c.me, [c.k.case2], ["ren", "boss"])},
    "labeling.assigned_claims": {"": lambda s, c: labeling.assigned_claims(s, c.me)},
    "labeling.check_label_fields": {
        "X": lambda s, c: labeling.check_label_fields(s, c.k.x, "support", ["case-1-p1"], None),
    },
    "labeling.check_label_input": {
        "X": lambda s, c: labeling.check_label_input(s, c.k.x, "support", ["case-1-p1"], None),
    },
    "labeling.claim_for_labeler": {
        "X": lambda s, c: labeling.claim_for_labeler(s, c.me, c.k.x),
        "Z": lambda s, c: labeling.claim_for_labeler(s, c.me, c.k.z),
        "W": lambda s, c: labeling.claim_for_labeler(s, c.me, c.k.w),
    },
    "labeling.claim_passages": {"X": lambda s, c: labeling.claim_passages(s, c.k.x)},
    "labeling.assigned_claim_matches": {"X": lambda s, c: labeling.assigned_claim_matches(s, c.me, "case-1-c1"),
                                        "W": lambda s, c: labeling.assigned_claim_matches(s, c.me, "case-2-c1", "pilot")},
    "labeling.find_assigned_claim": {"X": lambda s, c: labeling.find_assigned_claim(s, c.me, "case-1-c1"),
                                     "X pilot": lambda s, c: labeling.find_assigned_claim(s, c.me, "case-1-c1", "pilot")},
    "labeling.first_cases": {"": lambda s, c: labeling.first_cases(s, 20)},
    "labeling.first_queued_claim": {"": lambda s, c: labeling.first_queued_claim(s, c.me)},
    "labeling.first_unassigned_cases": {"": lambda s, c: labeling.first_unassigned_cases(s, 20)},
    "labeling.is_assigned_to_claim": {"X": lambda s, c: labeling.is_assigned_to_claim(s, c.me, c.k.x)},
    "labeling.lift_hold": {"case-1": lambda s, c: labeling.lift_hold(s, c.me, c.k.case1)},
    "labeling.lift_holds": {"case-1": lambda s, c: labeling.lift_holds(s, c.me, c.k.case1),
                            "case-2": lambda s, c: labeling.lift_holds(s, c.me, c.k.case2)},
    "labeling.holds_in_force": {"": lambda s, c: labeling.holds_in_force(s, c.me),
                                "dataset": lambda s, c: labeling.holds_in_force(s, c.me, c.k.dataset)},
    "labeling.lock_claim": {"X": lambda s, c: labeling.lock_claim(s, c.k.x)},
    "labeling.next_claim_for": {"": lambda s, c: labeling.next_claim_for(s, c.me)},
    "labeling.progress_for": {"": lambda s, c: labeling.progress_for(s, c.me)},
    "labeling.queue_place": {"X": lambda s, c: labeling.queue_place(s, c.me, c.k.x),
                             "Z": lambda s, c: labeling.queue_place(s, c.me, c.k.z)},
    "labeling.put_on_hold": {"case-1": lambda s, c: labeling.put_on_hold(s, c.me, c.k.case1, "missing_logs", "probe")},
    "labeling.save_label": {
        # B submits: the returned label is B's own (what B may see afterwards is test_after_b_submits_*)
        "X": lambda s, c: labeling.save_label(s, c.me, c.k.x, "support", rationale="B's own", passage_ids=["case-1-p1"]),
    },
    "labeling.save_label_as": {
        # the label page's save: B's name and key as B's session state holds them
        "X": lambda s, c: labeling.save_label_as(s, c.me.name, c.me.id, c.k.x, "support", rationale="B's own",
                                                 passage_ids=["case-1-p1"]),
    },
    "lookup.dataset_pk": {"": lambda s, c: lookup.dataset_pk(s, "pilot")},
    "lookup.find_case": {"": lambda s, c: lookup.find_case(s, "case-1")},
    "lookup.find_claim": {"X": lambda s, c: lookup.find_claim(s, "case-1-c1")},
    "lookup.get_dataset": {"": lambda s, c: lookup.get_dataset(s, "pilot")},
    "lookup.list_datasets": {"": lambda s, c: lookup.list_datasets(s)},
    "releases.check_stored_release": {"gold-v0": lambda s, c: releases.check_stored_release(s, c.me, "gold-v0")},
    "releases.create_release": {
        "only final": lambda s, c: releases.create_release(s, c.me, "gold-probe", only_final=True, out_dir=c.out,
                                                           n_bootstrap=100),
        "all": lambda s, c: releases.create_release(s, c.me, "gold-probe", out_dir=c.out, n_bootstrap=100),
    },
    "releases.compare_releases": {"gold-v0": lambda s, c: releases.compare_releases(s, c.me, "gold-v0", "gold-v0")},
    "releases.get_release": {"gold-v0": lambda s, c: releases.get_release(s, c.me, "gold-v0")},
    "releases.list_releases": {"": lambda s, c: releases.list_releases(s, c.me)},
    "releases.most_severe": {"": lambda s, c: releases.most_severe(["legal", None])},
    "releases.release_files": {"gold-v0": lambda s, c: releases.release_files(s, c.me, "gold-v0")},
    "releases.verify_stored_release": {"gold-v0": lambda s, c: releases.verify_stored_release(s, c.me, "gold-v0")},
    "reports.agreement_report": {
        "by every group": lambda s, c: reports.agreement_report(s, c.me, by=reports.GROUP_COLUMNS, n_bootstrap=100),
        "claims X and Z": lambda s, c: reports.agreement_report(s, c.me, claim_pks=[c.k.x, c.k.z], n_bootstrap=100),
    },
    "reports.label_table": {
        "": lambda s, c: reports.label_table(s, c.me),
        "claim X": lambda s, c: reports.label_table(s, c.me, claim_pks=[c.k.x]),
    },
    "status.project_status": {"": lambda s, c: status.project_status(s, c.me)},
    "login_sessions.start_session": {"": lambda s, c: login_sessions.start_session(s, c.me).ticket_expires_at},
    "login_sessions.redeem_ticket": {"": _login_probe("redeem_ticket")},
    "login_sessions.resume": {"": _login_probe("resume")},
    "login_sessions.in_force": {"": _login_probe("in_force")},
    "login_sessions.touch": {"": _login_probe("touch")},
    "login_sessions.revoke_session": {"": _login_probe("revoke_session")},
    "login_sessions.revoke_token": {"": _login_probe("revoke_token")},
    "login_sessions.revoke_user_sessions": {"": _login_probe("revoke_user_sessions")},
    "login_sessions.session_settings": {"": lambda s, c: login_sessions.session_settings(s)},
    "login_sessions.set_session_settings": {"": lambda s, c: login_sessions.set_session_settings(s, c.me, idle_hours=2)},
    "login_sessions.token_hash": {"": lambda s, c: login_sessions.token_hash("probe")},
    "users.add_user": {"": lambda s, c: users.add_user(s, c.me, "eve", ["labeler"], "eve-pass-1234")},
    "users.authenticate": {"": lambda s, c: users.authenticate(s, c.me.name, PASSWORDS[c.me.name])},
    "users.get_user": {"self": lambda s, c: users.get_user(s, c.me.name)},
    "users.has_role": {"": lambda s, c: users.has_role(c.me, "labeler")},
    "users.list_users": {"": lambda s, c: users.list_users(s, c.me)},
    "users.login_delay": {"": lambda s, c: users.login_delay(7)},
    "users.roles_of": {"": lambda s, c: users.roles_of(c.me)},
    "users.set_active": {"": lambda s, c: users.set_active(s, c.me, users.get_user(s, "mika"), True)},
    "users.set_locale": {"": lambda s, c: users.set_locale(s, c.me, "ja")},
    "users.set_password": {"": lambda s, c: users.set_password(s, c.me, users.get_user(s, "mika"), "new-pass-1234")},
    "users.set_roles": {"": lambda s, c: users.set_roles(s, c.me, users.get_user(s, "mika"), ["adjudicator"])},
    "users.still_logged_in": {"": lambda s, c: users.still_logged_in(c.me.name, c.me.id, c.me)},
    "users.user_for_identity": {"": lambda s, c: users.user_for_identity(s, c.me.name)},
}
"""Every public service function B could reach, with the calls made on B's behalf."""

INTERNAL: dict[str, str] = {
    "adjudication.blind_labels": "no caller: the labels of any claim, read only by view_for_adjudicator after its checks",
    "audit.append_event": "writes the audit trail, returns nothing",
    "audit.event_row": "builds an audit row from its arguments, reads nothing",
    "audit.record_event": "writes the audit trail, returns the row it was given",
    "audit.record_events": "writes the audit trail, returns nothing",
    "claim_content.change_claim_content": "no caller: writes a claim's changed content for import_cases and "
                                          "claim_review.edit_claim, which checked their caller; returns nothing",
    "claim_content.labels_written_before": "no caller: counts the labels to review after a change, for import_cases "
                                           "and claim_review.edit_claim, which checked their caller",
    "corrections.corrected_content": "pure: builds correct_label's arguments from a label the caller already holds",
    "demo.seed_demo": "the command line's `annotator demo`: seeds the demo data as the operator",
    "guidelines.read_guideline_file": "the command line's `guideline publish`: reads a file the operator names",
    "states.claim_facts": "no caller: every claim's label values, for services that checked their caller",
    "states.claim_states": "no caller: every claim's state, for services that checked their caller",
    "states.count_by_state": "pure: counts a states mapping it is given",
    "states.hold_cutoff": "pure: a time less the hold lifetime",
    "states.hold_in_force_sql": "builds a SQL condition, reads nothing",
    "releases.choose_claims": "no caller, no database: a rule over claim states that release create and the Home page apply",
    "labeling.versions_in_dataset": "no caller: the versions of documents the caller's view already shows, read by "
                                  "claim_for_labeler and view_for_adjudicator after their checks",
    "labeling.several_datasets_error": "builds a refusal from dataset names its callers found within the caller's "
    "reach, reads nothing",
    "labeling.check_content_seen": "no caller: compares two timestamps for save_label and adjudicate, which checked their caller",
    "users.ensure_user": "no caller: creates people for imports, which checked their caller",
    "demo.demo_logins_in_use": "no caller: which demo users keep their demo password, for the command line's serve warning",
    "numbers.plain_number": "no caller, no database: turns a driver's number into a plain int or float",
    "numbers.plain_row": "no caller, no database: plain_number over a result row",
    "users.password_matches": "no caller, no database: compares a password with the hash it is given",
    "users.taken_name": "no caller: the user name equal to a name up to case, for add_user and imports, which checked their caller",
    "imports.batches": "no caller, no database: slices a list it is given",
    "imports.chunks": "no caller, no database: groups an iterable it is given",
    "imports.stream": "no caller: feeds a reader's records to an import that checked its caller",
    "imports.bulk_insert": "no caller: writes the rows an import that checked its caller gives it, returns nothing",
    "imports.refused_when_concurrent": "no caller, no database: a decorator of the imports",
    "imports.skipped_lines_of": "no caller, no database: the skipped lines of a partial import, from its own notes",
    "imports.nothing_stored": "no caller, no database: the refusal of a run file with nothing left to store, built "
                              "from an import's own notes",
    "imports.refuse_taken_name": "no caller: refuses a run name taken in any letter case, for import_run and "
                                 "import_judge_labels, which checked their caller",
    "imports.differences": "no caller, no database: compares two contents it is given",
    "imports.stored_label_conflict": "no caller, no database: the refusal of a label that differs from the stored one, "
                                  "built from both",
    "imports.write_labels": "no caller: writes the labels an import that checked its caller planned, returns nothing",
    "imports.stored_labels_by_claim_pk": "no caller: the stored labels of claims, for imports, which checked their caller",
    "imports.stored_adjudications": "no caller: the stored decisions of claims, for imports, which checked their caller",
    "imports.labelers_of": "no caller: who labeled the claims, for imports, which checked their caller",
    "imports.states_of": "no caller: the claims' states, for imports, which checked their caller",
    "imports.shown_passages": "no caller: the passages each claim is shown with, for imports, which checked their caller",
    "judges.run_json": "no caller: a judge run as plain data, for list_judge_runs, import_judge_labels and judge_report, "
                       "which checked their caller",
    "runs.run_json": "no caller: a run as plain data, for list_runs, import_run and the run reports, which checked their caller",
    "run_reports.gate_exit_code": "no caller, no database: the exit code of a decision it is given, for the command "
                                  "line's run compare --gate",
}
"""Public service functions that take no caller and that no page calls: reachable on nobody's
behalf (`test_internal_service_functions_are_not_called_by_any_page` checks the second part)."""

COUNTS_ONLY: dict[tuple[str, str], tuple[str, Callable[[Any], Any] | None]] = {}
"""(caller, function) whose result may differ between S0 and S1 in counts of claims by state,
and why: compared after the given transform (None: only the absolute checks apply)."""

KNOWN_LEAKS: dict[tuple[str, str, str], str] = {}
"""(caller, function, probe) that leak in files this test may not change: xfail(strict) documents them."""


def service_functions() -> dict[str, Callable[..., Any]]:
    """`module.function` -> the function, for every public function defined in annotator.services.*;
    a package's (annotator.services.imports) named by the package, whichever of its modules defines it."""
    found: dict[str, Callable[..., Any]] = {}
    for info in pkgutil.walk_packages(services_package.__path__, f"{services_package.__name__}."):
        module = importlib.import_module(info.name)
        top = info.name.removeprefix(f"{services_package.__name__}.").split(".")[0]
        for name, item in vars(module).items():
            if inspect.isfunction(item) and item.__module__ == module.__name__ and not name.startswith("_"):
                where = found.setdefault(f"{top}.{name}", item).__module__
                assert where == module.__name__, f"{top}.{name} is defined in {where} and {module.__name__}"
    return found


def public_service_functions() -> set[str]:
    """`module.function` for every public function defined in annotator.services.* (`service_functions`)."""
    return set(service_functions())


PROBE_IDS = [(function, probe) for function, calls in PROBES.items() for probe in calls]


# --- running the probes in both worlds ---------------------------------------------------------


def run_probe(engine, who: str, function: str, probe: str, keys: SimpleNamespace, out: Path,  # noqa: ANN001
              call: Probe | None = None) -> dict:
    """One probe in its own transaction, rolled back afterwards (writes never reach the world):
    {"outcome": ok | refused | error | fault, "result": dump of what came back or of the error}."""
    call = call or PROBES[function][probe]
    out.mkdir(parents=True, exist_ok=True)
    with Session(engine, expire_on_commit=False) as session:
        try:
            context = SimpleNamespace(me=users.get_user(session, who), k=keys, out=out)
            result = call(session, context)
            outcome = {"outcome": "ok", "result": dump(result)}
        except PermissionDeniedError as error:
            outcome = {"outcome": "refused", "result": dump(error)}
        except AnnotatorError as error:
            outcome = {"outcome": "error", "result": dump(error)}
        except Exception as error:  # noqa: BLE001 - a fault is reported by the probe's test, not here
            outcome = {"outcome": "fault", "result": dump(error)}
        finally:
            session.rollback()
    return outcome


def sweep(engine, keys: SimpleNamespace, root: Path) -> dict:  # noqa: ANN001
    """(who, function, probe) -> outcome, for every blind labeler and the adjudicator, and every probe."""
    results = {}
    for who in (*BLIND, *NOT_BLIND):
        for number, (function, probe) in enumerate(PROBE_IDS):
            results[who, function, probe] = run_probe(engine, who, function, probe, keys, root / who / str(number))
    return results


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def swept(request, tmp_path_factory):
    """Every probe as ren, boss and mika, in S0 and in S1, on SQLite and on PostgreSQL:
    SimpleNamespace(s0, s1, roots)."""
    root = tmp_path_factory.mktemp(f"blind-{request.param}")
    with ExitStack() as stack:  # a PostgreSQL database is dropped once swept
        url = (f"sqlite:///{root / 'blind.db'}" if request.param == "sqlite"
               else stack.enter_context(fresh_postgres_database()))
        engine = init_db(url)
        stack.callback(engine.dispose)
        with session_scope(engine) as session:
            build_world(session, root / "releases")
        with session_scope(engine) as session:
            keys = world_keys(session)
        s0 = sweep(engine, keys, root / "s0")
        with session_scope(engine) as session:
            a_labels_x(session)
        s1 = sweep(engine, keys, root / "s1")
    yield SimpleNamespace(s0=s0, s1=s1, roots=(str(root / "s0"), str(root / "s1"), str(root)))


# --- the service sweep -------------------------------------------------------------------------


def test_every_public_service_function_is_classified():
    found = public_service_functions()
    assert not set(PROBES) & set(INTERNAL), "a function is both probed and internal"
    unclassified = sorted(found - set(PROBES) - set(INTERNAL))
    assert unclassified == [], f"classify these in PROBES (call them on B's behalf) or INTERNAL: {unclassified}"
    gone = sorted((set(PROBES) | set(INTERNAL)) - found)
    assert gone == [], f"these are no public service functions any more: {gone}"


def test_internal_service_functions_are_not_called_by_any_page():
    sources = {path: path.read_text(encoding="utf-8") for path in sorted(UI.rglob("*.py"))}
    for function in INTERNAL:
        name = function.split(".")[1]
        callers = [path.name for path, source in sources.items() if re.search(rf"\b{name}\b", source)]
        assert callers == [], f"{function} ({INTERNAL[function]}) is referred to by {callers}: probe it instead"


def _probe_params() -> list:
    params = []
    for who in BLIND:
        for function, probe in PROBE_IDS:
            marks = []
            if (who, function, probe) in KNOWN_LEAKS:
                marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_LEAKS[who, function, probe]))
            params.append(pytest.param(who, function, probe, marks=marks, id=f"{who}-{function}-{probe}".rstrip("-")))
    return params


@pytest.mark.parametrize("who, function, probe", _probe_params())
def test_a_service_called_for_b_before_b_labels_x_shows_nothing_of_as_label(swept, who, function, probe):
    before, after = swept.s0[who, function, probe], swept.s1[who, function, probe]
    assert after["outcome"] != "fault", f"{function} failed: {after['result']}"
    raw = json.dumps(after["result"], ensure_ascii=False, sort_keys=True)
    assert traces_of_a(raw, name=who == "ren") == [], f"{function} ({after['outcome']}) shows A's label: {raw[:2000]}"
    before, after = normalized(before, swept.roots), normalized(after, swept.roots)
    if (who, function) in COUNTS_ONLY:
        transform = COUNTS_ONLY[who, function][1]
        if transform is None:
            return
        before, after = transform(before), transform(after)
    assert after == before, (
        f"{function} gives {who} something else once A labeled X: A's label shows through it")


def test_a_labeler_is_refused_every_service_beyond_labeling(swept):
    """Authorization in the service layer: ren (labeler only) gets refused whatever needs another
    role, never a result."""
    refused = {function for (who, function, _), outcome in swept.s1.items()
               if who == "ren" and outcome["outcome"] == "refused"}
    assert {
        "adjudication.adjudicate", "adjudication.adjudication_queue", "adjudication.view_for_adjudicator",
        "claim_review.case_review", "claim_review.review_case_ids", "claim_review.split_claim",
        "claim_review.merge_claims", "claim_review.edit_claim", "claim_review.drop_claim",
        "corrections.correct_label", "corrections.correction_view", "fingerprint.label_fingerprint",
        "history.claim_datasets", "history.claim_history_view", "imports.check_upload", "imports.import_adjudications",
        "imports.import_cases", "imports.import_labels", "imports.import_upload", "judges.get_judge_run",
        "judges.import_judge_labels", "judges.judge_report", "judges.list_judge_runs", "judges.report_fingerprint",
        "labeling.assign_cases", "releases.check_stored_release",
        "releases.compare_releases", "releases.create_release", "releases.get_release", "releases.list_releases", "releases.release_files",
        "releases.verify_stored_release", "reports.agreement_report", "reports.label_table", "runs.get_run",
        "runs.import_run", "runs.list_runs", "runs.run_cases", "run_reports.run_report", "run_reports.compare_report",
        "run_reports.case_detail", "run_reports.report_fingerprint",
        "gold_source.open_release", "status.project_status", "users.add_user", "users.list_users", "users.set_active", "users.set_password", "users.set_roles",
    } <= refused
    assert swept.s1["ren", "labeling.claim_for_labeler", "W"]["outcome"] == "refused"  # not ren's claim


def test_b_sees_x_with_no_label_and_its_passages_uncited(swept):
    """The view B labels X from: every passage shown, none marked as cited, no label, revisable."""
    for who in BLIND:
        view = swept.s1[who, "labeling.claim_for_labeler", "X"]
        assert view["outcome"] == "ok"
        assert view["result"]["own_label"] is None and view["result"]["can_revise"] is True
        assert [p["passage_id"] for p in view["result"]["passages"]] == ["case-1-p1", "case-1-p2", "case-1-p3"]
        assert set(view["result"]) == {f.name for f in dataclasses.fields(labeling.ClaimView)}


def test_a_service_refuses_nothing_to_b_that_depends_on_as_label(swept):
    """Whether B is refused never depends on A's label: the outcome kind is the same in S0 and S1
    (else the refusal itself would tell B that A labeled X)."""
    changed = {key: (swept.s0[key]["outcome"], swept.s1[key]["outcome"]) for key in swept.s1
               if key[0] in BLIND and swept.s0[key]["outcome"] != swept.s1[key]["outcome"]}
    assert changed == {}


def test_no_service_gives_a_labeler_or_an_adjudicator_anything_of_a_judge_run(swept):
    """ren and mika are refused every judge service, and no other service's result (or refusal)
    holds the judge run's name, file, model, prompt version, note, rationales or confidences; boss
    (an admin) gets the run, never a judge's rationale or confidence."""
    problems = []
    for world in (swept.s0, swept.s1):
        for (who, function, probe), outcome in world.items():
            raw = json.dumps(outcome["result"], ensure_ascii=False, sort_keys=True)
            found = traces_of_judge(raw, JUDGE_PRIVATE if who == "boss" else JUDGE_TRACES)
            if found:
                problems.append(f"{who}: {function} ({probe}, {outcome['outcome']}) shows {found}")
    assert problems == []
    judge_services = {"judges.get_judge_run", "judges.import_judge_labels", "judges.judge_report",
                      "judges.list_judge_runs", "judges.report_fingerprint"}
    for who in ("ren", "mika"):
        outcomes = {outcome["outcome"] for (caller, function, _), outcome in swept.s1.items()
                    if caller == who and function in judge_services}
        assert outcomes == {"refused"}, who
    boss_runs = swept.s1["boss", "judges.list_judge_runs", ""]
    assert boss_runs["outcome"] == "ok" and [run["name"] for run in boss_runs["result"]] == [JUDGE_RUN]
    assert swept.s1["boss", "judges.judge_report", "gold-v0"]["outcome"] == "ok"  # gold-v0 holds Z, which boss labeled


RUN_SERVICES = {"runs.get_run", "runs.import_run", "runs.list_runs", "runs.run_cases", "run_reports.run_report",
                "run_reports.compare_report"}
"""The services of RAG runs: admins only (Permission.SCORE_RUNS), as the judges' are."""


def test_no_service_gives_a_labeler_or_an_adjudicator_a_run_or_its_report(swept):
    """ren and mika are refused every run service and every way to open a release; boss (an admin
    who has labeled Z, gold-v0's only claim) gets the world's runs, their reports and their comparison."""
    for who in ("ren", "mika"):
        for world in (swept.s0, swept.s1):
            outcomes = {function: outcome["outcome"] for (caller, function, _), outcome in world.items()
                        if caller == who and function in RUN_SERVICES | {"gold_source.open_release"}}
            assert set(outcomes.values()) == {"refused"}, (who, outcomes)
    boss_runs = swept.s1["boss", "runs.list_runs", ""]
    assert boss_runs["outcome"] == "ok" and sorted(run["name"] for run in boss_runs["result"]) == sorted(RAG_RUNS)
    for function, probe in (("run_reports.run_report", "gold-v0"), ("run_reports.run_report", "gold-v0 folder, by document"),
                            ("run_reports.compare_report", "gold-v0"), ("run_reports.compare_report", "gold-v0 folder"),
                            ("gold_source.open_release", "gold-v0 folder")):
        assert swept.s1["boss", function, probe]["outcome"] == "ok", (function, probe, swept.s1["boss", function, probe])
    report = swept.s1["boss", "run_reports.run_report", "gold-v0"]["result"]
    assert [case["case_id"] for case in report["cases"]] == ["case-1"] and report["n_outside_release"] == 1
    assert swept.s1["boss", "gold_source.refuse_blind", "X"]["outcome"] == "refused"  # boss is still to label X
    assert swept.s1["boss", "gold_source.refuse_blind", "Z and W"]["outcome"] == "ok"


CALLER_PARAMETERS = ("caller", "actor", "user")
"""The names a service gives the person it acts for."""

ANSWERS_ABOUT_A_CALLER = {"access.caller_roles", "access.is_operator", "users.has_role", "users.roles_of"}
"""Questions about a caller rather than services acting for one: without a caller they answer
"no role", never every role."""


def services_taking_a_caller() -> list[str]:
    """`module.function` of every public service function with a caller parameter."""
    found = []
    for function, item in sorted(service_functions().items()):
        if set(inspect.signature(item).parameters) & set(CALLER_PARAMETERS):
            found.append(function)
    return found


@pytest.fixture(scope="module")
def world_without_caller(tmp_path_factory):
    """The world S1 on SQLite: (engine, keys, folder)."""
    root = tmp_path_factory.mktemp("no-caller")
    engine = init_db(f"sqlite:///{root / 'blind.db'}")
    with session_scope(engine) as session:
        build_world(session, root / "releases")
        a_labels_x(session)
    with session_scope(engine) as session:
        keys = world_keys(session)
    yield engine, keys, root
    engine.dispose()


@pytest.mark.parametrize("function", [f for f in services_taking_a_caller() if f not in ANSWERS_ABOUT_A_CALLER])
def test_a_service_called_without_a_caller_is_refused(world_without_caller, function):
    """No service fails open: a caller that forgets the user (None) is refused, in every probe,
    never given everything (the command line passes access.OPERATOR)."""
    engine, keys, root = world_without_caller
    if function == "access.require":
        with Session(engine) as session:
            assert set(_each_permission(session, SimpleNamespace(me=None)).values()) == {
                f"refused: {PermissionDeniedError.of(f'msg.denied.{p.value}')}" for p in Permission}
        return
    outcomes = {}
    for number, (probe, call) in enumerate(PROBES[function].items()):
        out = root / "out" / function / str(number)
        out.mkdir(parents=True, exist_ok=True)
        with Session(engine, expire_on_commit=False) as session:
            try:
                call(session, SimpleNamespace(me=None, k=keys, out=out))
                outcomes[probe] = "ok"
            except PermissionDeniedError:
                outcomes[probe] = "refused"
            except Exception as error:  # noqa: BLE001 - reported below
                outcomes[probe] = f"{type(error).__name__}: {error}"
            finally:
                session.rollback()
    assert outcomes == dict.fromkeys(PROBES[function], "refused")


@pytest.mark.parametrize("function", sorted(ANSWERS_ABOUT_A_CALLER))
def test_a_question_about_no_caller_answers_no_role(function):
    module, name = function.split(".")
    item = getattr(importlib.import_module(f"annotator.services.{module}"), name)
    answer = item(None, "labeler") if name == "has_role" else item(None)
    assert answer in (False, frozenset(), [], ())


# --- pages ---------------------------------------------------------------------------------------

PAGE_KEYS = ("home", "label", "adjudicate", "agreement", "releases", "judges", "runs", "admin", "imports", "claims")
HISTORY_TAB = "Claim history"


class Downloads:
    """The data behind every download button rendered while installed: Streamlit hands a
    deferred button's data (a callable) to the media file manager, which AppTest discards."""

    def __init__(self) -> None:
        self.data: dict[str, Callable[[], Any]] = {}

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from streamlit.runtime.media_file_manager import MediaFileManager

        original_deferred, original_add = MediaFileManager.add_deferred, MediaFileManager.add
        data = self.data

        def add_deferred(manager, data_callable, *args, **kwargs):  # noqa: ANN001, ANN202
            file_id = original_deferred(manager, data_callable, *args, **kwargs)
            data[file_id] = data_callable
            return file_id

        def add(manager, path_or_data, *args, **kwargs):  # noqa: ANN001, ANN202
            url = original_add(manager, path_or_data, *args, **kwargs)
            data[url] = lambda: path_or_data
            return url

        monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
        monkeypatch.setattr(MediaFileManager, "add", add)

    def of(self, proto) -> Any:  # noqa: ANN001 - a DownloadButton proto
        key = proto.deferred_file_id or proto.url
        assert key in self.data, f"no data captured for download button {proto.label}"
        content = self.data[key]()
        if isinstance(content, str):
            return content
        if proto.label.endswith(".parquet"):
            import io

            return dump(pd.read_parquet(io.BytesIO(content)))
        return dump(content)


def page_text(at: AppTest, downloads: Downloads, skip_tabs: tuple[str, ...] = (), only_tab: str | None = None) -> str:
    """Everything the page holds: every element's protobuf (texts, labels, values, options), the
    value of every dataframe and table, the data of every download button, and the session
    state, deep-serialized. Tabs named in `skip_tabs` are left out; with `only_tab`, only what
    that tab holds (no session state)."""
    from streamlit.testing.v1.element_tree import Dataframe, DownloadButton, Tab, Table

    out: list[str] = []

    def walk(node, inside: bool = only_tab is None) -> None:  # noqa: ANN001
        if isinstance(node, Tab) and node.label in skip_tabs:
            return
        inside = inside or (isinstance(node, Tab) and node.label == only_tab)
        proto = getattr(node, "proto", None)
        if proto is not None and inside:
            out.append(str(proto))
        if isinstance(node, Dataframe | Table) and inside:
            out.append(as_text(node.value))
        if isinstance(node, DownloadButton) and inside:
            out.append(as_text(downloads.of(node.proto)))
        for child in getattr(node, "children", {}).values():
            walk(child, inside)

    walk(at._tree)
    if only_tab is not None:
        return "\n".join(out)
    state = {key: at.session_state[key] for key in at.session_state}
    return "\n".join(out) + "\nSESSION STATE " + as_text(state)


_FILE_ID = re.compile(r'(deferred_file_id|url): "[^"]*"')


_LOGIN_VALUES = re.compile(r'(const (?:ticket|ended) = )[^;]*;|("auth\.(?:pending_ticket|login_session)": )("[^"]*"|\d+)')
"""What each login has of its own, random or a new row's key, whatever A did: the ticket and the
log-out mark in the login scripts of ui/sessions.py, and the ticket and login session key in the
session state."""


def _login_value(match: re.Match) -> str:
    return f"{match.group(1)}<value>;" if match.group(1) else f"{match.group(2)}<value>"


def normalized_page(text_: str) -> str:
    return _LOGIN_VALUES.sub(_login_value, _FILE_ID.sub(r'\1: "<file>"', normalized(text_)))


def open_url(at: AppTest, key: str) -> AppTest:
    """Open the address /`key` in this browser session (as a typed URL would): the page the
    navigation registers there, whatever it is for this user."""
    pages = at._registered_pages
    found = [h for h, info in pages.items() if info.get("url_pathname") == key]
    found = found or [h for h, info in pages.items()  # the default page is registered at ""
                      if str(info.get("script_path") or "").endswith(f"views/{key}.py")]
    assert found, f"no page at /{key}: {[info.get('url_pathname') for info in pages.values()]}"
    at._page_hash = found[0]
    return at.run()


def log_in(who: str, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params.update(query or {})
    at.run()
    at.text_input(key="login.name").input(who)
    at.text_input(key="login.password").input(PASSWORDS[who])
    at.form_submit_button[0].click().run()
    assert not at.exception, at.exception
    assert at.session_state["auth.user_name"] == who
    return at


def visit_every_page(who: str, user_pk: int, keys: SimpleNamespace, downloads: Downloads) -> dict[str, dict]:
    """Drive the app as `who` through every page they may open and every address they may not:
    step name -> {"full": page_text, "compared": page_text (the Project status tab included: its
    counts and holds leave out the claims B still has to label), "at": AppTest}."""
    steps: dict[str, dict] = {}

    def keep(step: str, at: AppTest) -> None:
        assert not at.exception, f"{step}: {at.exception}"
        steps[step] = {"full": page_text(at, downloads), "compared": page_text(at, downloads),
                       "history tab": page_text(at, downloads, only_tab=HISTORY_TAB),
                       "titles": [t.value for t in at.title], "errors": [e.value for e in at.error],
                       "warnings": [w.value for w in at.warning]}

    at = log_in(who)
    keep("start", at)  # the Home page
    keep("home ?claim=W refused", log_in(who, {"claim": "case-2-c1"}))  # not B's claim: refused on Home
    at = open_url(at, "label")
    assert at.session_state["label.claim_pk"] == keys.x  # the first claim B has to label
    for claim_id in ("case-1-c1", "case-1-c2"):  # B's queue: X to label, Z labeled
        keep(f"label {claim_id}", open_url(log_in(who, {"claim": claim_id}), "label"))
    at.button(key="label.next").click().run()
    keep("label next (Z)", at)
    at.button(key="label.previous").click().run()
    keep("label previous (X)", at)
    # (looked up, not asserted: if X were read-only for B, the step's page would show it and differ)
    for text_area in [w for w in at.text_area if w.key == f"label.rationale.{keys.x}"]:
        text_area.input(f"{who} is typing on X").run()
    for checkbox in [w for w in at.checkbox if w.key == f"label.cite.{keys.x}.case-1-p1"]:
        checkbox.check().run()
    keep("label X with a draft", at)
    keep("label X draft restored after a reload", log_in(who, {"claim": "case-1-c1"}))
    before_login = AppTest.from_file(str(APP), default_timeout=120)
    before_login.query_params["claim"] = "case-1-c1"
    before_login.run()
    keep("login page with ?claim=X", before_login)
    before_login.text_input(key="login.name").input(who)
    before_login.text_input(key="login.password").input(PASSWORDS[who])
    before_login.form_submit_button[0].click().run()
    keep("label ?claim=X kept through the login", before_login)
    for key in PAGE_KEYS:
        keep(f"url /{key}", open_url(log_in(who), key))
    linked = open_url(log_in(who, {"history": "case-1-c1"}), "admin")
    keep("url /admin?history=X", linked)
    if who == "boss":  # the admin who labels: the Admin page's claim history, the Releases and Agreement pages
        admin = open_url(log_in(who), "admin")
        for claim_id in ("case-1-c1", "case-1-c2", "case-2-c1"):
            admin.text_input(key="admin.history_claim").input(claim_id).run()
            keep(f"admin history {claim_id}", admin)
        agreement = open_url(log_in(who), "agreement")
        agreement.selectbox(key="agreement.dataset").set_value("pilot").run()
        keep("agreement pilot", agreement)
        release = open_url(log_in(who), "releases")
        release.button(key="releases.verify").click().run()
        keep("releases gold-v0 verified", release)
        claims = open_url(log_in(who), "claims")  # case-1 (X's) is boss's to label: refused; case-2 shows W
        keep("claims case-1 refused", claims)
        claims.selectbox(key="claims.case.pilot").set_value("case-2").run()
        keep("claims case-2", claims)
    run_every_page_script(who, user_pk, keep)
    return steps


def run_every_page_script(who: str, user_pk: int, keep: Callable[[str, AppTest], None]) -> None:
    """Run every page script directly (not through the app's navigation) as `who`, and keep(step, at)
    each: a page must check its reader's roles itself."""
    for view in sorted(VIEWS.glob("*.py")):
        if view.name == "__init__.py":
            continue
        direct = AppTest.from_file(str(view), default_timeout=120)
        direct.session_state["auth.user_pk"] = user_pk
        direct.session_state["auth.user_name"] = who
        direct.run()
        keep(f"page script {view.name} run directly", direct)


def visit_as_adjudicator(who: str, user_pk: int, downloads: Downloads) -> dict[str, dict]:
    """Drive the app as `who`, an adjudicator, through every page they may open and every address
    they may not, a claim link to the dispute W, and every page script run directly: step name ->
    {"full": page_text, "titles"}."""
    steps: dict[str, dict] = {}

    def keep(step: str, at: AppTest) -> None:
        assert not at.exception, f"{step}: {at.exception}"
        steps[step] = {"full": page_text(at, downloads), "titles": [t.value for t in at.title]}

    keep("start", log_in(who))
    keep("home ?claim=W", log_in(who, {"claim": "case-2-c1"}))  # W waits for a decision: the Adjudicate page
    for key in PAGE_KEYS:
        keep(f"url /{key}", open_url(log_in(who), key))
    run_every_page_script(who, user_pk, keep)
    return steps


def visit_logged_out(downloads: Downloads) -> dict[str, dict]:
    """Every address opened in a new browser session, nobody logged in."""
    steps = {}
    for key in PAGE_KEYS:
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.query_params["claim"] = "case-1-c1"
        at.run()
        open_url(at, key)
        assert not at.exception
        steps[f"/{key}?claim=X"] = {"full": page_text(at, downloads), "titles": [t.value for t in at.title],
                                    "forms": len(at.get("form")), "keys": [w.key for w in at.text_input]}
    return steps


def _clear_drafts(engine) -> None:  # noqa: ANN001
    from sqlalchemy import delete

    with session_scope(engine) as session:
        session.exec(delete(Draft))


@pytest.fixture(scope="module")
def pages_swept(tmp_path_factory):
    """Every page as ren and as boss (and logged out), in S0 and in S1, and as mika in S1, on SQLite:
    SimpleNamespace(s0, s1, keys) with s0/s1: who -> step -> page texts."""
    root = tmp_path_factory.mktemp("blind-pages")
    url = f"sqlite:///{root / 'blind.db'}"
    engine = init_db(url)
    downloads = Downloads()
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("DATABASE_URL", url)
        monkeypatch.chdir(root)
        monkeypatch.setattr(ui_components, "DOUBLE_CLICK_SECONDS", 0.0)
        downloads.install(monkeypatch)
        st.cache_resource.clear()
        st.cache_data.clear()
        try:
            with session_scope(engine) as session:
                build_world(session, root / "releases")
            with session_scope(engine) as session:
                keys = world_keys(session)
                pks = {who: users.get_user(session, who).id for who in (*BLIND, *NOT_BLIND)}
            worlds = []
            for step in ("s0", "s1"):
                if step == "s1":
                    with session_scope(engine) as session:
                        a_labels_x(session)
                visits = {who: visit_every_page(who, pks[who], keys, downloads) for who in BLIND}
                visits["(logged out)"] = visit_logged_out(downloads)
                if step == "s1":
                    visits.update({who: visit_as_adjudicator(who, pks[who], downloads) for who in NOT_BLIND})
                worlds.append(visits)
                _clear_drafts(engine)
        finally:
            st.cache_resource.clear()
            st.cache_data.clear()
            engine.dispose()
    yield SimpleNamespace(s0=worlds[0], s1=worlds[1], keys=keys)


NAME_CHECKED_STEPS = ("start", "label ", "page script label.py", "url /label")
"""boss's steps where A's name must not show either: the Label page (an admin's other pages list
every user); on the Admin page, its Claim history tab holding claim X."""
NAME_CHECKED_HISTORY = ("admin history case-1-c1", "url /admin?history=X")


def test_b_is_shown_every_step_of_the_sweep(pages_swept):
    for who in BLIND:
        assert set(pages_swept.s1[who]) == set(pages_swept.s0[who])
    assert len(pages_swept.s1["ren"]) == 31 and len(pages_swept.s1["boss"]) == 38


def test_an_admin_who_labels_a_case_reviews_no_claim_of_it_and_reviews_the_others(pages_swept):
    for world in (pages_swept.s0, pages_swept.s1):
        assert world["boss"]["claims case-1 refused"]["errors"] == [
            "you label case 'case-1' yourself, so another admin must review its claims"]
        assert world["boss"]["claims case-2"]["errors"] == []
        assert "Claim text 2.1." in world["boss"]["claims case-2"]["full"]


@pytest.mark.parametrize("who", [*BLIND, "(logged out)"])
def test_no_page_shows_b_anything_of_as_label_on_x(pages_swept, who):
    """Marker, time and (except where an admin sees the user list) name: nowhere in any element,
    download or the session state; and every page the same, byte for byte after normalizing this
    run's times, whether A labeled X or not."""
    problems = []
    for step, seen in pages_swept.s1[who].items():
        name = who != "boss" or step.startswith(NAME_CHECKED_STEPS)
        if found := traces_of_a(seen["full"], name=name):
            problems.append(f"{step}: shows {found}")
        if who == "boss" and step in NAME_CHECKED_HISTORY and (found := traces_of_a(seen["history tab"])):
            problems.append(f"{step}: its history tab shows {found}")
        before = pages_swept.s0[who][step]
        key = "compared" if "compared" in seen else "full"
        if normalized_page(seen[key]) != normalized_page(before[key]):
            diff = _first_difference(normalized_page(before[key]), normalized_page(seen[key]))
            problems.append(f"{step}: differs once A labeled X: {diff}")
    assert problems == []


def test_no_page_shows_a_labeler_or_an_adjudicator_anything_of_a_judge_run(pages_swept):
    """Nothing of the judge run on any page, download or session state of ren, mika or a visitor
    not logged in; boss sees the run on the Judges page (so the sweep sees judge data where it is
    shown), never a judge's rationale or confidence."""
    problems = []
    for world in (pages_swept.s0, pages_swept.s1):
        for who, steps in world.items():
            for step, seen in steps.items():
                if found := traces_of_judge(seen["full"], JUDGE_PRIVATE if who == "boss" else JUDGE_TRACES):
                    problems.append(f"{who}, {step}: shows {found}")
    assert problems == []
    assert {"url /judges", "url /adjudicate", "home ?claim=W"} <= set(pages_swept.s1["mika"])
    assert pages_swept.s1["mika"]["url /judges"]["titles"] == ["RAG claim annotator"]  # the notice, not the page
    assert pages_swept.s1["mika"]["home ?claim=W"]["titles"] == ["Adjudicate"]
    judges_page = pages_swept.s1["boss"]["url /judges"]["full"]
    assert traces_of_judge(judges_page, (JUDGE_RUN, JUDGE_MODEL, JUDGE_FILE)) == [JUDGE_RUN, JUDGE_MODEL, JUDGE_FILE]


def _first_difference(before: str, after: str) -> str:
    at = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), min(len(before), len(after)))
    return f"...{before[max(0, at - 150):at + 150]!r} became ...{after[max(0, at - 150):at + 150]!r}"


def test_the_pages_b_lacks_show_no_page_content_only_a_notice(pages_swept):
    """Navigation per role: an address B's roles do not open shows the notice (logged in) or the
    login form (logged out), never the page; a page script run directly refuses."""
    notice = "This page is not open to {name}'s roles. Ask an admin for the role if you need it."
    lacks = {"ren": ("adjudicate", "agreement", "releases", "judges", "runs", "admin", "imports", "claims"),
             "boss": ("adjudicate",)}
    for who, keys in lacks.items():
        steps = pages_swept.s1[who]
        for key in keys:
            assert steps[f"url /{key}"]["titles"] == ["RAG claim annotator"]
            assert steps[f"url /{key}"]["warnings"] == [notice.format(name=who)]
            assert steps[f"page script {key}.py run directly"]["errors"] == ["You cannot open this page with your roles."]
    for key in ("label", "agreement", "releases", "judges", "runs", "admin", "imports", "claims"):
        assert pages_swept.s1["boss"][f"url /{key}"]["titles"] == [{"label": "Label", "agreement": "Agreement",
                                                                   "releases": "Releases", "judges": "Judges",
                                                                   "runs": "Runs", "admin": "Admin",
                                                                   "imports": "Import", "claims": "Claim review"}[key]]
    assert pages_swept.s1["ren"]["url /label"]["titles"] == ["Label"]
    for step, seen in pages_swept.s1["(logged out)"].items():
        assert seen["titles"] == ["RAG claim annotator"] and seen["keys"] == ["login.name", "login.password"], step


def test_an_admin_who_labels_x_gets_no_history_of_it_and_no_figure_from_it(pages_swept):
    boss = pages_swept.s1["boss"]
    refusal = ("you label claim 'case-1-c1' and have not labeled it yet: its history would show the other labels; "
               "label it first, or ask another admin")
    assert boss["admin history case-1-c1"]["errors"] == [refusal]
    assert boss["url /admin?history=X"]["errors"] == [refusal]
    assert boss["admin history case-1-c2"]["errors"] == []  # Z: boss has labeled it
    assert "label created" in boss["admin history case-1-c2"]["full"]


# --- probes that leak in files this test may not change ------------------------------------------

IMPORT_PROBES: dict[str, tuple[str, str, Callable]] = {
    # kind -> (file name, content naming A as the labeler / adjudicator of X, import function)
    "labels": ("labels.csv", "claim_id,labeler,label\ncase-1-c1,aoi,support\n", imports.import_labels),
    "adjudications": ("adjudications.csv", "claim_id,adjudicator,label\ncase-1-c1,aoi,support\n",
                      imports.import_adjudications),
}


@pytest.mark.parametrize("kind", list(IMPORT_PROBES))
def test_an_import_by_an_admin_who_labels_x_tells_nothing_of_as_label(any_engine, tmp_path, kind):
    file_name, content, function = IMPORT_PROBES[kind]
    path = tmp_path / file_name
    path.write_text(content, encoding="utf-8")
    with session_scope(any_engine) as session:
        build_world(session, tmp_path / "releases")
    with session_scope(any_engine) as session:
        keys = world_keys(session)
    call = lambda s, c: function(s, c.me, path)  # noqa: E731 - a probe
    before = run_probe(any_engine, "boss", f"imports.import_{kind}", "", keys, tmp_path / "s0", call)
    with session_scope(any_engine) as session:
        a_labels_x(session)
    after = run_probe(any_engine, "boss", f"imports.import_{kind}", "", keys, tmp_path / "s1", call)
    assert after["outcome"] != "fault", after
    assert MARKER not in json.dumps(after["result"])
    assert normalized(after, (str(tmp_path),)) == normalized(before, (str(tmp_path),))
    # refused at the row, whatever the stored labels: "label the claim first"
    assert after["outcome"] == "error" and "line 2, field 'claim_id'" in json.dumps(after["result"])
    assert "have not labeled it yet" in json.dumps(after["result"])


def test_an_update_imported_by_an_admin_who_labels_x_counts_no_label_of_x_for_review_and_the_operator_counts_all(
        any_engine, tmp_path):
    """The report's "Marked N labels for review" leaves out the claims the importer still has to
    label (it would say that A labeled X); the command line (OPERATOR) counts every label."""
    path = tmp_path / "cases.jsonl"
    path.write_bytes(UPDATE_OF_X)
    with session_scope(any_engine) as session:
        build_world(session, tmp_path / "releases")
        a_labels_x(session)
        x = lookup.find_claim(session, "case-1-c1").id  # A labeled X before the update (A_TIME is later)
        session.exec(update(Label).where(Label.claim_pk == x).values(updated_at=datetime(2026, 1, 1, tzinfo=UTC)))
    counted = {}
    for who in ("boss", "operator"):
        with Session(any_engine) as session:
            caller = OPERATOR if who == "operator" else users.get_user(session, who)
            checked = imports.check_upload(session, caller, "cases.jsonl", UPDATE_OF_X, UPDATE)
            report = imports.import_cases(session, caller, path, dataset="pilot", update=True)
            counted[who] = (checked.report.labels_to_review, report.labels_to_review,
                            [str(line) for line in report.notes()])
            session.rollback()
    marked = english("msg.import.report.to_review_one", n=1)
    assert counted == {"boss": (0, 0, []), "operator": (1, 1, [marked])}


# --- an admin who labels, and releases -------------------------------------------------------------

Y_MARKER = "RATIONALE-MARKER-b2c9"


def _y_final_while_boss_has_not_labeled(session: Session) -> int:
    """Claim Y (case-3-c1), assigned to aoi, cleo and boss, agreed by aoi and cleo (rationale
    Y_MARKER); boss has not labeled it. Returns Y's key."""
    dataset = session.exec(select(Dataset)).one()
    case = Case(dataset_id=dataset.id, case_id="case-3", position=3, question="Question of case-3?",
                answer="Answer of case-3.", slice="normal", split="dev", meta={})
    session.add(case)
    session.flush()
    claim = Claim(dataset_id=dataset.id, case_pk=case.id, claim_id="case-3-c1", position=1, text="Claim text 3.1.")
    session.add(claim)
    session.flush()
    labeling.assign_cases(session, OPERATOR, [case.id], ["aoi", "cleo", "boss"])
    for name in ("aoi", "cleo"):
        labeling.save_label(session, users.get_user(session, name), claim.id, "insufficient",
                            rationale=f"{Y_MARKER} by {name}")
    return claim.id


def test_an_admin_who_labels_never_creates_or_downloads_a_release_holding_a_claim_they_have_not_labeled(
        any_engine, tmp_path):
    with session_scope(any_engine) as session:
        build_world(session, tmp_path / "releases")
        y = _y_final_while_boss_has_not_labeled(session)
        releases.create_release(session, OPERATOR, "gold-v1", only_final=True, out_dir=tmp_path / "releases",
                                n_bootstrap=100)
    with session_scope(any_engine) as session:
        boss = users.get_user(session, "boss")
        with pytest.raises(PermissionDeniedError, match="holds claims you are assigned to label and have not labeled"):
            releases.create_release(session, boss, "gold-v2", only_final=True, out_dir=tmp_path / "mine", n_bootstrap=100)
        with pytest.raises(PermissionDeniedError, match="you cannot download release 'gold-v1'"):
            releases.release_files(session, boss, "gold-v1")
        assert set(releases.release_files(session, boss, "gold-v0")) == {"gold.jsonl", "gold.csv", "gold.parquet",
                                                                         "cases.jsonl", "manifest.json"}
        for other in ("admin",):  # an admin who does not label it downloads it
            files = releases.release_files(session, users.get_user(session, other), "gold-v1")
            assert Y_MARKER in files["gold.jsonl"].read_text(encoding="utf-8")
    assert not (tmp_path / "mine").exists() or list((tmp_path / "mine").iterdir()) == []
    with session_scope(any_engine) as session:  # once boss has labeled Y, the release is theirs to read too
        boss = users.get_user(session, "boss")
        labeling.save_label(session, boss, y, "insufficient")
        assert Y_MARKER in releases.release_files(session, boss, "gold-v1")["gold.jsonl"].read_text(encoding="utf-8")


def test_an_admin_who_labels_gets_agreement_without_the_claims_they_have_not_labeled(any_engine, tmp_path):
    """The report is the one an admin who does not label gets, minus those claims' labels; their
    fingerprint names them so a cached report is never shared with anyone else."""
    with session_scope(any_engine) as session:
        build_world(session, tmp_path / "releases")
        a_labels_x(session)
        y = _y_final_while_boss_has_not_labeled(session)
    with session_scope(any_engine) as session:
        boss, admin = users.get_user(session, "boss"), users.get_user(session, "admin")
        keys = world_keys(session)
        mine, full = reports.label_table(session, boss), reports.label_table(session, admin)
        assert sorted(set(full["item_id"]) - set(mine["item_id"])) == sorted([str(keys.x), str(y)])
        ordered = ["item_id", "rater"]
        assert mine.sort_values(ordered).reset_index(drop=True).equals(
            reports.label_table(session, OPERATOR, claim_pks=[keys.z, keys.w]).sort_values(ordered).reset_index(drop=True))
        assert label_fingerprint(session, boss).viewer == boss.id and label_fingerprint(session, admin).viewer is None
        assert label_fingerprint(session, boss).labels == 5 and label_fingerprint(session, admin).labels == 8
        report = reports.agreement_report(session, boss, n_bootstrap=100)
        assert report.label_counts == reports.agreement_report(session, OPERATOR, claim_pks=[keys.z, keys.w],
                                                               n_bootstrap=100).label_counts
        labeling.save_label(session, boss, keys.x, "support")  # boss labels X: A's label on it counts for them again
        assert str(keys.x) in set(reports.label_table(session, boss)["item_id"])


# --- after B submits -------------------------------------------------------------------------------


def test_after_b_submits_on_x_the_label_is_locked_and_the_claim_goes_to_an_adjudicator(tmp_path, monkeypatch):
    """What the workflow says once B has labeled X (A labeled it already): B may no longer revise
    (the second label landed: may_revise), the disagreement goes to an adjudicator, not to B."""
    url = f"sqlite:///{tmp_path / 'after.db'}"
    engine = init_db(url)
    with session_scope(engine) as session:
        build_world(session, tmp_path / "releases")
        a_labels_x(session)
        keys = world_keys(session)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ui_components, "DOUBLE_CLICK_SECONDS", 0.0)
    st.cache_resource.clear()
    try:
        ren = open_url(log_in("ren"), "label")  # from the Home page
        assert ren.session_state["label.claim_pk"] == keys.x
        label_button(ren, "support").click().run()
        assert [t.value for t in ren.toast] == ["Saved support on claim case-1-c1."]
        ren = log_in("ren", {"claim": "case-1-c1"})
        assert any("second label on this claim has landed" in i.value for i in ren.info)
        assert [b.key for b in ren.button if b.key and b.key.startswith("label.button.")] == []
        with session_scope(engine) as session:
            me = users.get_user(session, "ren")
            view = labeling.claim_for_labeler(session, me, keys.x)
            assert (view.own_label.value, view.can_revise) == ("support", False)
            with pytest.raises(PermissionDeniedError):
                adjudication.adjudication_queue(session, me)
            queue = adjudication.adjudication_queue(session, users.get_user(session, "mika"))
            assert [item.claim_id for item in queue] == ["case-1-c1", "case-2-c1"]
    finally:
        st.cache_resource.clear()
        engine.dispose()


# --- the adjudicator's view ------------------------------------------------------------------------

DISPUTES = 24
LABELER_PKS = {"aoi": 48611, "ren": 48612}
"""Labelers' user keys, distinctive enough to search for."""
LABELER_TIMES = {"aoi": datetime(2031, 7, 13, 5, 17, 29, 314159, tzinfo=UTC),
                 "ren": datetime(2032, 2, 29, 11, 47, 3, 271828, tzinfo=UTC)}
OPINION = {"aoi": "alpha", "ren": "beta", "kai": "gamma", "chief": "delta"}
OWN = {"kai": "d-25", "chief": "d-26"}
"""The claim each labeling adjudicator labeled (with aoi)."""
"""Each labeler's rationales say `<opinion>-says-<claim id>`: the adjudicator reads them, so they
name nobody."""
LABELER_TRACES = ("2031-07-13", "05:17:29", "314159", "2032-02-29", "11:47:03", "271828",
                  *(str(int(t.timestamp())) for t in LABELER_TIMES.values()), *map(str, LABELER_PKS.values()))


def build_disputes(session: Session) -> dict[str, int]:
    """DISPUTES claims d-01.. (case d-01.., one claim each), each labeled support by aoi (citing
    p1, "alpha-says-N") and contradict by ren (citing p2, "beta-says-N", severity other) at
    LABELER_TIMES; claim d-25 disputed by aoi and kai (labeler and adjudicator), claim d-26 by
    aoi and chief (admin, adjudicator and labeler). Adjudicators mika and admin. Returns claim id -> key."""
    dataset = Dataset(name="disputes", source_format="test")
    session.add(dataset)
    for name, pk in LABELER_PKS.items():
        session.add(User(id=pk, name=name, roles="labeler"))
    session.flush()
    for name, roles in (("mika", ["adjudicator"]), ("admin", ["admin", "adjudicator"]),
                        ("kai", ["labeler", "adjudicator"]), ("chief", ["labeler", "adjudicator", "admin"])):
        users.add_user(session, OPERATOR, name, roles, PASSWORDS[name])
    claims = {}
    plan = [(f"d-{n:02d}", "ren") for n in range(1, DISPUTES + 1)] + [(OWN["kai"], "kai"), (OWN["chief"], "chief")]
    for position, (claim_id, second) in enumerate(plan, start=1):
        case = Case(dataset_id=dataset.id, case_id=f"case-{claim_id}", position=position, question="Question?",
                    answer="Answer.", slice="normal", split="dev", meta={})
        session.add(case)
        session.flush()
        passages = [Passage(dataset_id=dataset.id, passage_id=f"{claim_id}-p{k}", doc_id="doc", version="v1",
                            title=f"Title {k}", text=f"Text {k}.") for k in (1, 2)]
        claim = Claim(dataset_id=dataset.id, case_pk=case.id, claim_id=claim_id, position=1, text=f"Claim {claim_id}.")
        session.add_all([*passages, claim])
        session.flush()
        session.add_all([ClaimPassage(claim_pk=claim.id, passage_pk=p.id, position=k) for k, p in enumerate(passages)])
        labeling.assign_cases(session, OPERATOR, [case.id], ["aoi", second])
        labeling.save_label(session, users.get_user(session, "aoi"), claim.id, "support", passage_ids=[f"{claim_id}-p1"],
                            rationale=f"alpha-says-{claim_id}")
        labeling.save_label(session, users.get_user(session, second), claim.id, "contradict", severity="other",
                            passage_ids=[f"{claim_id}-p2"], rationale=f"{OPINION[second]}-says-{claim_id}")
        claims[claim_id] = claim.id
    session.flush()
    for name, moment in LABELER_TIMES.items():
        session.exec(update(Label).where(Label.labeler_pk == LABELER_PKS[name]).values(created_at=moment, updated_at=moment))
        session.exec(update(LabelEvent).where(LabelEvent.actor_pk == LABELER_PKS[name]).values(at=moment))
    return claims


def traces_of_labelers(text_: str) -> list[str]:
    found = [name for name in LABELER_PKS if re.search(rf"\b{name}\b", text_)]
    return found + [trace for trace in LABELER_TRACES if trace in text_]


def first_labeler(view: adjudication.AdjudicationView) -> str:
    """Who is "Labeler 1" in `view` (known from the rationale, which the adjudicator reads)."""
    opinion = view.labels[0].rationale.split("-says-")[0]
    return next(name for name, said in OPINION.items() if said == opinion)


@pytest.fixture
def disputes(any_engine):
    with session_scope(any_engine) as session:
        claims = build_disputes(session)
    return any_engine, claims


@pytest.mark.parametrize("adjudicator", ["mika", "admin"])
def test_the_adjudicator_sees_labeler_1_and_2_without_names_ids_or_times(disputes, adjudicator):
    engine, claims = disputes
    with session_scope(engine) as session:
        me = users.get_user(session, adjudicator)
        queue = adjudication.adjudication_queue(session, me)
        assert [item.claim_id for item in queue] == [f"d-{n:02d}" for n in range(1, DISPUTES + 3)]
        assert traces_of_labelers(as_text(queue) + as_text([item.to_json() for item in queue])) == []
        for claim_id, pk in claims.items():
            view = adjudication.view_for_adjudicator(session, me, pk)
            assert [label.display_name for label in view.labels] == ["Labeler 1", "Labeler 2"]
            second = {own: who for who, own in OWN.items()}.get(claim_id, "ren")
            assert {label.rationale for label in view.labels} == {f"alpha-says-{claim_id}",
                                                                  f"{OPINION[second]}-says-{claim_id}"}
            assert {label.passage_ids for label in view.labels} == {(f"{claim_id}-p1",), (f"{claim_id}-p2",)}
            assert {f.name for f in dataclasses.fields(adjudication.BlindLabel)} == {
                "display_name", "value", "passage_ids", "rationale", "severity", "number"}
            assert traces_of_labelers(as_text(view)) == [], claim_id
            assert not re.search(r"\b(kai|chief)\b", as_text(view)), claim_id


def test_the_order_of_labeler_1_and_2_is_stable_per_claim_and_both_orders_occur(disputes):
    engine, claims = disputes
    orders = {}
    for adjudicator in ("mika", "admin", "mika"):  # again in a new transaction: the same order
        with session_scope(engine) as session:
            me = users.get_user(session, adjudicator)
            seen = {claim_id: first_labeler(adjudication.view_for_adjudicator(session, me, pk))
                    for claim_id, pk in claims.items() if claim_id not in OWN.values()}
        orders.setdefault("first", seen)
        assert seen == orders["first"], f"{adjudicator} sees another order"
    first = orders["first"]
    assert len(first) == DISPUTES
    assert set(first.values()) == {"aoi", "ren"}, "the same labeler is always Labeler 1: not random per claim"
    assert min(list(first.values()).count("aoi"), list(first.values()).count("ren")) >= 4


@pytest.mark.parametrize("who, own", list(OWN.items()))
def test_an_adjudicator_who_labeled_the_claim_can_neither_see_nor_decide_it(disputes, who, own):
    """Even an admin: chief (admin, adjudicator and labeler) is refused the claim they labeled."""
    engine, claims = disputes
    with session_scope(engine) as session:
        me = users.get_user(session, who)
        queue = [item.claim_id for item in adjudication.adjudication_queue(session, me)]
        assert own not in queue and len(queue) == DISPUTES + 1
        with pytest.raises(PermissionDeniedError, match="you label this claim"):
            adjudication.view_for_adjudicator(session, me, claims[own])
        with pytest.raises(PermissionDeniedError, match="you label this claim"):
            adjudication.adjudicate(session, me, claims[own], "support")
        other = adjudication.view_for_adjudicator(session, me, claims["d-01"])
        assert [label.display_name for label in other.labels] == ["Labeler 1", "Labeler 2"]


@pytest.fixture
def disputes_app(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'disputes.db'}"
    engine = init_db(url)
    with session_scope(engine) as session:
        claims = build_disputes(session)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setattr(ui_components, "DOUBLE_CLICK_SECONDS", 0.0)
    st.cache_resource.clear()
    yield engine, claims
    st.cache_resource.clear()
    engine.dispose()


@pytest.mark.parametrize("adjudicator", ["mika", "admin"])
def test_the_adjudicate_page_shows_labeler_1_and_2_in_the_services_order_without_names_ids_or_times(
        disputes_app, adjudicator):
    engine, claims = disputes_app
    downloads = Downloads()
    at = log_in(adjudicator)
    open_url(at, "adjudicate")  # from the Home page
    with session_scope(engine) as session:
        me = users.get_user(session, adjudicator)
        expected = {claim_id: adjudication.view_for_adjudicator(session, me, pk).labels for claim_id, pk in claims.items()}
    firsts = set()
    for claim_id in [f"d-{n:02d}" for n in (*range(1, 9), 25, 26)]:
        at.selectbox(key="adjudicate.claim_pk").set_value(claims[claim_id]).run()
        assert not at.exception
        markdowns = [m.value for m in at.markdown]
        assert [m for m in markdowns if m.startswith("**Labeler")] == ["**Labeler 1**", "**Labeler 2**"]
        rationales = [t.value for t in at.text if "-says-" in t.value]
        assert rationales == [label.rationale for label in expected[claim_id]]
        firsts.add(rationales[0].split("-says-")[0])
        text_ = page_text(at, downloads)
        assert traces_of_labelers(text_) == [], claim_id
        assert not re.search(r"\b(kai|chief)\b", text_), claim_id
    assert firsts >= {"alpha", "beta"}


@pytest.mark.parametrize("who, own", list(OWN.items()))
def test_the_adjudicate_page_leaves_out_the_claim_the_adjudicator_labeled(disputes_app, who, own):
    engine, claims = disputes_app
    at = log_in(who)
    open_url(at, "adjudicate")
    assert not at.exception
    assert claims[own] not in at.selectbox(key="adjudicate.claim_pk").options
    assert own not in list(at.dataframe[0].value["Claim"])
    assert f"{OPINION[who]}-says-{own}" not in page_text(at, Downloads())
