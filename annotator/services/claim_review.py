"""Claim review: before anyone labels a case, an admin fixes how its answer was cut into claims
(by the sentence segmenter, segment.py, or by the file): split a claim in two, merge it with the
next claim of its case, edit its text, or drop a claim that states no fact ("ご不明点はお問い合わせ
ください"). Each change takes a reason and is one transaction and one audit event per claim it
touches, with the content before and after (the admin's History shows it).

Rules, checked here whatever page or command calls (docs/design.md, "Rules that hold everywhere", its
paragraph Claim review):
- Only admins review (Permission.REVIEW_CLAIMS); the command line, as the operator, may. An admin
  who labels the case (is assigned to it, or has a label on one of its claims) may not: what is
  refused would tell them whether another labeler has labeled (the blind rule).
- A claim that holds work is not changed, so that no label is lost or moved to another statement:
  a label of anyone (for a merge, on either claim), a decision, a judge run's label, a gold release,
  or a labeler's unsaved draft (services/drafts.py; only whether there is one is read, never what
  it holds). The refusal names the claim and what to do instead. The one way to change the text of
  a labeled claim is `edit` with `update=True`, which applies import --update's rule
  (claim_content.change_claim_content: the labels and decision are kept and become to review).
- split: at a code-point offset strictly inside the text, with text on both sides once stripped
  and not inside a grapheme cluster (UAX #29). The first part keeps the claim id; the second is a
  new claim `{claim_id}-2` (or -3, ..., the first not in use in the dataset) right after it,
  shown with the same passages. Known spans are cut with the text.
- merge: with the next claim of the case; the first keeps its id, the text of both joined with the
  answer's text between them when both spans are known (the span then runs from the first's start
  to the second's end), else with one space; its passages are the first's then the second's
  others. The second claim is removed.
- edit: the new text (NFC, stripped, not blank); its span is where it is found in the answer
  (after the previous claim's span, else from the start), else None.
- drop: the claim and its passage links are removed; the last claim of a case cannot be dropped
  (every import gives a case at least one claim).
- The claims after a split or a removal keep their order (positions renumbered from the case's
  first). A hold does not stop a review. A gold release is immutable as files: a claim changed
  after it (edit with update) differs from the release's copy, and the next release holds the new
  text once its claim is final again.
Every function works the same on SQLite and PostgreSQL and returns plain Python values.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

import regex
from sqlalchemy import delete, func, update
from sqlmodel import Session, select

from annotator.errors import InvalidValueError, NotFoundError, PermissionDeniedError
from annotator.messages import Joined, Message, msg
from annotator.models import (
    Adjudication, Assignment, Case, Claim, ClaimPassage, Dataset, Draft, GoldLabel, GoldRelease, JudgeLabel,
    JudgeRun, Label, utcnow,
)
from annotator.services.access import Caller, is_operator, require
from annotator.services.audit import record_event
from annotator.services.claim_content import change_claim_content, labels_written_before
from annotator.services.imports.stored import shown_passages
from annotator.services.labeling import lock_claim
from annotator.services.lookup import find_case, find_claim, get_dataset
from annotator.text import MAX_ID_CHARS, check_free_text, is_blank
from annotator.workflow import Permission

OPERATIONS = ("split", "merge", "edit", "drop")
"""The four changes of claim review, as events and results name them."""

_GRAPHEME = regex.compile(r"\X")


@dataclass(frozen=True)
class ReviewedClaim:
    """One claim's content as a review shows it, before or after a change.

    position: its order in its case. span: (start, end) in the case's answer, code points, or None
    when not known. passage_ids: the passages it is shown with, in order.
    """

    claim_id: str
    position: int
    text: str
    span: tuple[int, int] | None
    passage_ids: tuple[str, ...]


@dataclass(frozen=True)
class ClaimReviewed:
    """What a split, merge, edit or drop did.

    operation: one of OPERATIONS. before, after: the claims it touched, as they were and as they
    are (a split: one before, two after; a merge: two before, one after; a drop: none after).
    changed: False when an edit gave the text the claim already has (nothing was written).
    labels_to_review: labels written before the change that are now to review (edit with update).
    """

    operation: str
    dataset: str
    case_id: str
    reason: str
    before: tuple[ReviewedClaim, ...]
    after: tuple[ReviewedClaim, ...]
    changed: bool = True
    labels_to_review: int = 0


@dataclass(frozen=True)
class ReviewClaimRow:
    """One claim of a case under review.

    labels: how many labels it has (anyone's). has_draft: a labeler has unsaved input on it.
    refusals: operation -> why it is refused on this claim (a Message), for each of OPERATIONS
        that is; "edit" refused means: only with update (labels kept, to review).
    """

    claim_pk: int
    claim_id: str
    position: int
    text: str
    span: tuple[int, int] | None
    passage_ids: tuple[str, ...]
    labels: int
    has_draft: bool
    refusals: dict[str, Message] = field(default_factory=dict)


@dataclass(frozen=True)
class CaseReview:
    """A case as an admin reviews its claims: its question and answer, and its claims in order."""

    dataset: str
    case_id: str
    question: str
    answer: str
    claims: tuple[ReviewClaimRow, ...]


@dataclass(frozen=True)
class _Work:
    """What stops a claim from being split, merged or dropped."""

    labels: int = 0
    drafts: int = 0
    decided: bool = False
    runs: tuple[str, ...] = ()
    releases: tuple[str, ...] = ()


# --- reading ------------------------------------------------------------------------------------


CASE_CHOICES = 2_000
"""The most case ids the Claim review page offers to choose from; past them, the page takes a typed id."""


def review_case_ids(session: Session, actor: Caller, dataset: str, limit: int | None = CASE_CHOICES) -> list[str]:
    """The case ids of `dataset` in their order, at most `limit` (the Claim review page's choice;
    None: all, as `annotator claims list --dataset NAME` prints them).
    Raises PermissionDeniedError unless `actor` is an admin, NotFoundError for an unknown dataset."""
    require(actor, Permission.REVIEW_CLAIMS)
    found = get_dataset(session, dataset)
    return list(session.exec(select(Case.case_id).where(Case.dataset_id == found.id)
                             .order_by(Case.position, Case.id).limit(limit)))


def case_review(session: Session, actor: Caller, case_id: str, dataset: str | None = None) -> CaseReview:
    """The case `case_id` (in `dataset`, or in the only dataset that has it) with its claims in
    order, each with its label count and the operations refused on it and why.

    Raises PermissionDeniedError unless `actor` is an admin (checked before anything is read) or
    when the admin labels the case (msg.review.own_case), NotFoundError for an unknown case or
    dataset, AmbiguousIdError when the id is in several datasets and none is named.
    """
    require(actor, Permission.REVIEW_CLAIMS)
    case = find_case(session, case_id.strip(), dataset)
    _refuse_own_case(session, actor, case)
    claims = _claims_of(session, case.id)
    work = _work_of(session, [claim.id for claim in claims])
    shown = _passage_ids(session, [claim.id for claim in claims])
    rows = []
    for index, claim in enumerate(claims):
        next_claim = claims[index + 1] if index + 1 < len(claims) else None
        refusals = {op: said for op in OPERATIONS if (said := _refused(op, claim, case, work, claims, next_claim)) is not None}
        rows.append(ReviewClaimRow(claim.id, claim.claim_id, claim.position, claim.text, _span(claim),
                                   tuple(shown.get(claim.id, ())), work[claim.id].labels, work[claim.id].drafts > 0,
                                   refusals))
    return CaseReview(session.get(Dataset, case.dataset_id).name, case.case_id, case.question, case.answer, tuple(rows))


# --- the four changes ---------------------------------------------------------------------------


def split_claim(session: Session, actor: Caller, claim_id: str, at: int, *, reason: str,
                dataset: str | None = None) -> ClaimReviewed:
    """Split the claim `claim_id` in two at code-point offset `at` of its text (the module
    docstring's rules); returns both parts.

    Raises PermissionDeniedError (not an admin; the admin labels the case), NotFoundError,
    AmbiguousIdError (as `case_review`), InvalidValueError (the claim holds work, with what to do
    instead; no reason; `at` not strictly inside the text, leaving a blank part, or inside a
    grapheme cluster; a new id longer than MAX_ID_CHARS). A refusal writes nothing.
    """
    claim, case, claims = _start(session, actor, claim_id, dataset)
    _refuse(_refused("split", claim, case, _work_of(session, [claim.id]), claims, None))
    why = _reason(reason)
    text, old_span = claim.text, _span(claim)  # the update below refreshes the claim's attributes
    _check_offset(claim.claim_id, text, at)
    first, first_span = _part(text, 0, at, old_span, case.answer)
    second, second_span = _part(text, at, len(text), old_span, case.answer)
    new_id = _new_claim_id(session, claim.dataset_id, claim.claim_id)
    now = utcnow()
    passages = _passage_ids(session, [claim.id]).get(claim.id, [])
    before = _snapshot(claim.claim_id, claim.position, text, old_span, passages)
    session.exec(update(Claim).where(Claim.id == claim.id).values(text=first, **_span_columns(first_span), updated_at=now))
    new = Claim(dataset_id=claim.dataset_id, case_pk=case.id, claim_id=new_id, position=claim.position + 1, text=second,
                **_span_columns(second_span), created_at=now, updated_at=now)
    session.add(new)
    session.flush()
    links = session.exec(select(ClaimPassage.passage_pk, ClaimPassage.position).where(ClaimPassage.claim_pk == claim.id)).all()
    session.add_all([ClaimPassage(claim_pk=new.id, passage_pk=passage_pk, position=position) for passage_pk, position in links])
    order = [c.id for c in claims]
    order.insert(order.index(claim.id) + 1, new.id)
    positions = _renumber(session, claims, order)
    case_content = {"case_id": case.case_id}
    record_event(session, actor_pk=actor.id, entity="claim", entity_pk=claim.id, claim_pk=claim.id, action="update",
                 before={**case_content, **_content(text, old_span, passages)},
                 after={**case_content, **_content(first, first_span, passages), "new_claim": new_id, "reason": why,
                        "review": "split"})
    record_event(session, actor_pk=actor.id, entity="claim", entity_pk=new.id, claim_pk=new.id, action="create",
                 after={**case_content, "claim_id": new_id, **_content(second, second_span, passages),
                        "split_from": claim.claim_id, "reason": why, "review": "split"})
    session.flush()
    after = (_snapshot(claim.claim_id, positions[claim.id], first, first_span, passages),
             _snapshot(new_id, positions[new.id], second, second_span, passages))
    return ClaimReviewed("split", _dataset_name(session, case), case.case_id, why, (before,), after)


def merge_claims(session: Session, actor: Caller, claim_id: str, *, reason: str,
                 dataset: str | None = None) -> ClaimReviewed:
    """Merge the claim `claim_id` with the next claim of its case (the module docstring's rules);
    returns both as they were and the merged claim.

    Raises PermissionDeniedError, NotFoundError, AmbiguousIdError (as `split_claim`),
    InvalidValueError (either claim holds work, naming it, with what to do instead; no reason; the
    claim is the last of its case). A refusal writes nothing.
    """
    claim, case, claims = _start(session, actor, claim_id, dataset)
    index = [c.id for c in claims].index(claim.id)
    following = claims[index + 1] if index + 1 < len(claims) else None
    if following is not None:
        lock_claim(session, following.id)
    work = _work_of(session, [claim.id] + ([following.id] if following is not None else []))
    _refuse(_refused("merge", claim, case, work, claims, following))
    why = _reason(reason)
    span_a, span_b = _span(claim), _span(following)
    text_a = claim.text  # the update below refreshes the claim's attributes
    if (span_a is not None and span_b is not None and span_a[1] <= span_b[0]
            and case.answer[span_a[0]:span_a[1]] == claim.text and case.answer[span_b[0]:span_b[1]] == following.text):
        text = claim.text + case.answer[span_a[1]:span_b[0]] + following.text
        span: tuple[int, int] | None = (span_a[0], span_b[1])
    else:
        text = claim.text + " " + following.text
        span = _found_span(case.answer, text, _previous_end(claims, index))
    shown = _passage_ids(session, [claim.id, following.id])
    passages_a, passages_b = shown.get(claim.id, []), shown.get(following.id, [])
    passages = list(dict.fromkeys(passages_a + passages_b))
    now = utcnow()
    before = (_snapshot(claim.claim_id, claim.position, text_a, span_a, passages_a),
              _snapshot(following.claim_id, following.position, following.text, span_b, passages_b))
    if passages != passages_a:
        links_b = session.exec(select(ClaimPassage.passage_pk).where(ClaimPassage.claim_pk == following.id)
                               .order_by(ClaimPassage.position)).all()
        links_a = dict(session.exec(select(ClaimPassage.passage_pk, ClaimPassage.position)
                                    .where(ClaimPassage.claim_pk == claim.id)).all())
        start = max(links_a.values(), default=-1) + 1
        session.add_all([ClaimPassage(claim_pk=claim.id, passage_pk=pk, position=start + k)
                         for k, pk in enumerate(pk for pk in links_b if pk not in links_a)])
    session.exec(update(Claim).where(Claim.id == claim.id).values(text=text, **_span_columns(span), updated_at=now))
    _remove_claim(session, following.id)
    positions = _renumber(session, claims, [c.id for c in claims if c.id != following.id])
    case_content = {"case_id": case.case_id}
    record_event(session, actor_pk=actor.id, entity="claim", entity_pk=claim.id, claim_pk=claim.id, action="update",
                 before={**case_content, **_content(text_a, span_a, passages_a)},
                 after={**case_content, **_content(text, span, passages), "merged_claim": following.claim_id,
                        "reason": why, "review": "merge"})
    record_event(session, actor_pk=actor.id, entity="claim", entity_pk=following.id, claim_pk=following.id,
                 action="delete",
                 before={**case_content, "claim_id": following.claim_id, **_content(following.text, span_b, passages_b)},
                 after={"merged_into": claim.claim_id, "reason": why, "review": "merge"})
    session.flush()
    after = (_snapshot(claim.claim_id, positions[claim.id], text, span, passages),)
    return ClaimReviewed("merge", _dataset_name(session, case), case.case_id, why, before, after)


def edit_claim(session: Session, actor: Caller, claim_id: str, text: str, *, reason: str, update: bool = False,
               dataset: str | None = None) -> ClaimReviewed:
    """Replace the text of the claim `claim_id` (its span: where the new text is found in the
    answer, else None).

    update: False refuses a claim that holds work (labels, a decision, a judge's label, a draft);
        True applies import --update's rule instead (claim_content.change_claim_content, the one
        function both use): every label and decision is kept, those written before become to
        review (`labels_to_review` counts the labels).
    The same text again writes nothing (`changed` False, no event).
    Raises PermissionDeniedError, NotFoundError, AmbiguousIdError (as `split_claim`),
    InvalidValueError (the claim holds work and update is False, with what to do; no reason; a
    blank, too long or unstorable text). A refusal writes nothing.
    """
    claim, case, claims = _start(session, actor, claim_id, dataset)
    if not update:
        _refuse(_refused("edit", claim, case, _work_of(session, [claim.id]), claims, None))
    why = _reason(reason)
    new_text = unicodedata.normalize("NFC", check_free_text("text", text or "")).strip()
    if is_blank(new_text):
        raise InvalidValueError.of("msg.review.text_needed")
    passages = _passage_ids(session, [claim.id]).get(claim.id, [])
    before = _snapshot(claim.claim_id, claim.position, claim.text, _span(claim), passages)
    dataset_name = _dataset_name(session, case)
    if new_text == claim.text:
        return ClaimReviewed("edit", dataset_name, case.case_id, why, (before,), (before,), changed=False)
    index = [c.id for c in claims].index(claim.id)
    span = _found_span(case.answer, new_text, _previous_end(claims, index))
    now = utcnow()
    case_content = {"case_id": case.case_id}
    change_claim_content(session, claim.id, {"text": new_text, **_span_columns(span)},
                         before={**case_content, **_content(claim.text, _span(claim), passages)},
                         after={**case_content, **_content(new_text, span, passages), "reason": why, "review": "edit"},
                         now=now, actor_pk=actor.id)
    session.flush()
    to_review = labels_written_before(session, [claim.id], now)
    after = _snapshot(claim.claim_id, claim.position, new_text, span, passages)
    return ClaimReviewed("edit", dataset_name, case.case_id, why, (before,), (after,), labels_to_review=to_review)


def drop_claim(session: Session, actor: Caller, claim_id: str, *, reason: str,
               dataset: str | None = None) -> ClaimReviewed:
    """Remove the claim `claim_id` from its case, with its passage links (a claim that states no
    fact). The event is the case's (entity `case`), so the history of every claim left in the
    case shows it.

    Raises PermissionDeniedError, NotFoundError, AmbiguousIdError (as `split_claim`),
    InvalidValueError (the claim holds work, with what to do instead; no reason; it is the only
    claim of its case). A refusal writes nothing.
    """
    claim, case, claims = _start(session, actor, claim_id, dataset)
    _refuse(_refused("drop", claim, case, _work_of(session, [claim.id]), claims, None))
    why = _reason(reason)
    passages = _passage_ids(session, [claim.id]).get(claim.id, [])
    before = _snapshot(claim.claim_id, claim.position, claim.text, _span(claim), passages)
    content = {"claim_id": claim.claim_id, **_content(claim.text, _span(claim), passages)}
    claim_pk, claim_id = claim.id, claim.claim_id
    _remove_claim(session, claim_pk)
    _renumber(session, claims, [c.id for c in claims if c.id != claim_pk])
    record_event(session, actor_pk=actor.id, entity="case", entity_pk=case.id, claim_pk=claim_pk, action="update",
                 before=content, after={"claim_id": claim_id, "reason": why, "review": "drop"})
    session.flush()
    return ClaimReviewed("drop", _dataset_name(session, case), case.case_id, why, (before,), ())


# --- the checks -------------------------------------------------------------------------------


def _start(session: Session, actor: Caller, claim_id: str, dataset: str | None) -> tuple[Claim, Case, list[Claim]]:
    """The claim (locked: writes about one claim run one after the other), its case and the case's
    claims in order, read after the lock; the caller checked first."""
    require(actor, Permission.REVIEW_CLAIMS)
    found = find_claim(session, claim_id.strip(), dataset)
    claim = lock_claim(session, found.id)
    if claim is None:  # removed while we waited for the lock
        raise NotFoundError.of("msg.lookup.no_claim", id=claim_id.strip())
    case = session.get(Case, claim.case_pk)
    _refuse_own_case(session, actor, case)
    return claim, case, _claims_of(session, case.id)


def _refuse_own_case(session: Session, actor: Caller, case: Case) -> None:
    """Raise PermissionDeniedError when the caller labels `case`: assigned to it, or a label of
    theirs on one of its claims (the command line labels nothing)."""
    if is_operator(actor):
        return
    assigned = session.exec(select(Assignment.id).where(Assignment.case_pk == case.id,
                                                        Assignment.labeler_pk == actor.id).limit(1)).first()
    labeled = assigned is not None or session.exec(
        select(Label.id).join(Claim, Claim.id == Label.claim_pk)
        .where(Claim.case_pk == case.id, Label.labeler_pk == actor.id).limit(1)).first() is not None
    if labeled:
        raise PermissionDeniedError.of("msg.review.own_case", case_id=case.case_id)


def _refused(op: str, claim: Claim, case: Case, work: dict[int, _Work], claims: list[Claim],
             following: Claim | None) -> Message | None:
    """Why `op` may not be done on `claim` (for a merge, with `following`), None when it may."""
    if op == "drop" and len(claims) == 1:
        return msg("msg.review.last_claim", claim_id=claim.claim_id, case_id=case.case_id)
    if op == "merge" and following is None:
        return msg("msg.review.no_next", claim_id=claim.claim_id, case_id=case.case_id)
    for one in (claim, following) if op == "merge" else (claim,):
        said = _held(op, one.claim_id, work.get(one.id, _Work()))
        if said is not None:
            return said
    return None


def _held(op: str, claim_id: str, work: _Work) -> Message | None:
    """Why the work a claim holds stops `op`, None when it holds none (the order: what is most
    worth keeping first)."""
    if work.labels:
        return msg(f"msg.review.labeled.{op}", claim_id=claim_id, n=work.labels)
    if work.decided:
        return msg("msg.review.decided", claim_id=claim_id)
    if work.releases and op != "edit":
        return msg("msg.review.released", claim_id=claim_id, releases=Joined(work.releases))
    if work.runs:
        return msg("msg.review.judged", claim_id=claim_id, runs=Joined(work.runs))
    if work.drafts:
        return msg("msg.review.draft", claim_id=claim_id)
    return None


def _refuse(said: Message | None) -> None:
    if said is not None:
        raise InvalidValueError(said)


def _reason(reason: str) -> str:
    why = unicodedata.normalize("NFC", check_free_text("reason", reason or "")).strip()
    if is_blank(why):
        raise InvalidValueError.of("msg.review.reason_needed")
    return why


def _check_offset(claim_id: str, text: str, at: int) -> None:
    """Raise InvalidValueError unless `at` cuts `text` into two parts with text once stripped,
    at a grapheme cluster's boundary."""
    if not isinstance(at, int) or isinstance(at, bool) or not 0 < at < len(text) or is_blank(text[:at]) \
            or is_blank(text[at:]):
        raise InvalidValueError.of("msg.review.bad_offset", at=at, claim_id=claim_id, last=max(len(text) - 1, 1),
                                   length=len(text))
    bounds = [0] + [match.end() for match in _GRAPHEME.finditer(text)]
    if at not in bounds:
        after = next(bound for bound in bounds if bound > at)
        before = max(bound for bound in bounds if bound < at)
        raise InvalidValueError.of("msg.review.inside_character", at=at, claim_id=claim_id, before=before, after=after)


def _work_of(session: Session, claim_pks: list[int]) -> dict[int, _Work]:
    """claim pk -> what it holds: labels, drafts with input, a decision, judge runs, releases."""
    labels = dict(session.exec(select(Label.claim_pk, func.count(Label.id)).where(Label.claim_pk.in_(claim_pks))
                               .group_by(Label.claim_pk)).all())
    drafts: dict[int, int] = {}
    for claim_pk, value, passage_ids, rationale, severity in session.exec(
            select(Draft.claim_pk, Draft.value, Draft.passage_ids, Draft.rationale, Draft.severity)
            .where(Draft.claim_pk.in_(claim_pks))):
        if value is not None or passage_ids or not is_blank(rationale or "") or severity is not None:  # an empty draft holds no work
            drafts[claim_pk] = drafts.get(claim_pk, 0) + 1
    decided = set(session.exec(select(Adjudication.claim_pk).where(Adjudication.claim_pk.in_(claim_pks))))
    runs: dict[int, list[str]] = {}
    for claim_pk, name in session.exec(select(JudgeLabel.claim_pk, JudgeRun.name).join(JudgeRun, JudgeRun.id == JudgeLabel.run_pk)
                                       .where(JudgeLabel.claim_pk.in_(claim_pks)).order_by(JudgeRun.name)):
        runs.setdefault(claim_pk, []).append(name)
    releases: dict[int, list[str]] = {}
    for claim_pk, name in session.exec(select(GoldLabel.claim_pk, GoldRelease.name)
                                       .join(GoldRelease, GoldRelease.id == GoldLabel.release_pk)
                                       .where(GoldLabel.claim_pk.in_(claim_pks)).order_by(GoldRelease.name)):
        releases.setdefault(claim_pk, []).append(name)
    return {pk: _Work(int(labels.get(pk, 0)), drafts.get(pk, 0), pk in decided, tuple(runs.get(pk, ())),
                      tuple(releases.get(pk, ()))) for pk in claim_pks}


# --- writing helpers ----------------------------------------------------------------------------


def _claims_of(session: Session, case_pk: int) -> list[Claim]:
    return list(session.exec(select(Claim).where(Claim.case_pk == case_pk).order_by(Claim.position, Claim.id)
                             .execution_options(populate_existing=True)))


def _passage_ids(session: Session, claim_pks: list[int]) -> dict[int, list[str]]:
    return shown_passages(session, claim_pks)


def _renumber(session: Session, claims: list[Claim], order: list[int]) -> dict[int, int]:
    """Give the claims `order` (keys, in their new order) positions from the case's first one up,
    writing only those that move; returns key -> position."""
    base = min((claim.position for claim in claims), default=0)
    was = {claim.id: claim.position for claim in claims}
    positions = {pk: base + index for index, pk in enumerate(order)}
    for pk, position in positions.items():
        if was.get(pk) != position:
            session.exec(update(Claim).where(Claim.id == pk).values(position=position))
    return positions


def _remove_claim(session: Session, claim_pk: int) -> None:
    """Delete a claim that holds no work: its passage links and empty drafts first."""
    session.exec(delete(ClaimPassage).where(ClaimPassage.claim_pk == claim_pk))
    session.exec(delete(Draft).where(Draft.claim_pk == claim_pk))
    session.flush()
    session.exec(delete(Claim).where(Claim.id == claim_pk))


def _new_claim_id(session: Session, dataset_pk: int, claim_id: str) -> str:
    """`{claim_id}-2`, else -3, ...: the first not in use in the dataset."""
    n = 2
    while True:
        candidate = f"{claim_id}-{n}"
        if len(candidate) > MAX_ID_CHARS:
            raise InvalidValueError.of("msg.review.id_too_long", claim_id=candidate, length=len(candidate),
                                       limit=MAX_ID_CHARS)
        taken = session.exec(select(Claim.id).where(Claim.dataset_id == dataset_pk, Claim.claim_id == candidate)).first()
        if taken is None:
            return candidate
        n += 1


def _span(claim: Claim | None) -> tuple[int, int] | None:
    if claim is None or claim.span_start is None or claim.span_end is None:
        return None
    return (claim.span_start, claim.span_end)


def _span_columns(span: tuple[int, int] | None) -> dict[str, int | None]:
    start, end = span if span is not None else (None, None)
    return {"span_start": start, "span_end": end}


def _part(text: str, start: int, end: int, span: tuple[int, int] | None, answer: str) -> tuple[str, tuple[int, int] | None]:
    """text[start:end] stripped, and its span in the answer when the claim's span is known and
    holds the claim's text."""
    raw = text[start:end]
    part = raw.strip()
    if span is None or answer[span[0]:span[1]] != text:
        return part, None
    begin = span[0] + start + (len(raw) - len(raw.lstrip()))
    return part, (begin, begin + len(part))


def _previous_end(claims: list[Claim], index: int) -> int:
    """Where the claims before `index` end in the answer, as far as their spans are known."""
    ends = [span[1] for claim in claims[:index] if (span := _span(claim)) is not None]
    return max(ends, default=0)


def _found_span(answer: str, text: str, after: int) -> tuple[int, int] | None:
    """Where `text` is in the answer: first looked for from `after` (the previous claim's end),
    else from the start, as a RAGAS import places a given claim; None when it is not there."""
    start = answer.find(text, after)
    if start < 0:
        start = answer.find(text)
    return None if start < 0 else (start, start + len(text))


def _content(text: str, span: tuple[int, int] | None, passage_ids: list[str]) -> dict[str, Any]:
    """A claim's content as its review events hold it (the keys of an import's claim events)."""
    return {"text": text, "passage_ids": list(passage_ids), "span": None if span is None else list(span)}


def _snapshot(claim_id: str, position: int, text: str, span: tuple[int, int] | None,
              passage_ids: list[str]) -> ReviewedClaim:
    return ReviewedClaim(claim_id, position, text, span, tuple(passage_ids))


def _dataset_name(session: Session, case: Case) -> str:
    return session.get(Dataset, case.dataset_id).name
