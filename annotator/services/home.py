"""The Home page's figures, one overview per role, and where a `?claim=` link leads.

Each overview is a frozen dataclass of plain values, computed from the functions that already
define the figures (never restated): the labeler's queue from `labeling.next_claim_for` and
`workflow.label_to_review`, the disputes from `adjudication.adjudication_queue`, the claims by
state from `states.claim_facts` (the one place a claim's state is decided), agreement from
`reports.agreement_report` (kept until a label changes: `_headline_agreement`), and what refuses a
release from `releases`' own check.

The blind rule (services/blind.py) holds here as everywhere: the labeler's overview counts only
the caller's own assignments, labels and holds; the admin's overview leaves out, as
`status.project_status` does, the claims the caller is still to label (an admin who also labels),
and counts them apart; the adjudicator's overview is built on the adjudication queue, which
leaves out the claims the caller labels or is assigned to.
"""

from __future__ import annotations

import copy
import threading
from collections import Counter, OrderedDict, defaultdict
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import and_, func
from sqlmodel import Session, select

from annotator.errors import PermissionDeniedError, ReleaseBlockedError
from annotator.messages import Message, shortened
from annotator.models import Adjudication, Assignment, Case, Claim, Dataset, Hold, Label, LabelEvent
from annotator.services import releases
from annotator.services.access import Caller, caller_roles, require
from annotator.services.adjudication import adjudication_queue
from annotator.services.blind import claims_still_to_label
from annotator.services.fingerprint import label_fingerprint
from annotator.services.labeling import assigned_claim_matches, next_claim_for, several_datasets_error
from annotator.services.reports import agreement_report
from annotator.services.states import claim_facts, count_by_state, hold_in_force_sql
from annotator.workflow import FINAL_STATES, Permission, State, label_to_review

AGREEMENT_KEYS = ("n_items", "n_in_scope", "n_raters", "indicative", "percent_agreement", "cohen_kappa",
                  "fleiss_kappa", "krippendorff_alpha", "n_used", "undefined")
"""What the admin's overview keeps of `AgreementReport.to_json()`: the headline figures with their
n, nothing that names a labeler (label counts and pairs are on the Agreement page)."""

STILL_TO_LABEL = "still_to_label"
"""The reason, among what blocks a release, of the claims the caller is assigned to label and has
not labeled (release create refuses to show them their labels: releases._refuse_blind)."""


# --- the labeler -------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueCounts:
    """A labeler's assigned claims, each in exactly one group: to_label (no label of theirs yet),
    to_review (their label was written before the claim's content changed:
    workflow.label_to_review), on_hold (one of those two, its case on hold: it waits for the
    hold), done (labeled, nothing to review; as `labeling.progress_for` counts them)."""

    to_label: int = 0
    to_review: int = 0
    on_hold: int = 0
    done: int = 0

    @property
    def assigned(self) -> int:
        return self.to_label + self.to_review + self.on_hold + self.done

    def plus(self, group: str) -> QueueCounts:
        """These counts with one more claim in `group` (a field name)."""
        return QueueCounts(**{**self.__dict__, group: getattr(self, group) + 1})


@dataclass(frozen=True)
class SliceQueue:
    """The caller's queue in one slice of one dataset."""

    dataset: str
    slice: str
    counts: QueueCounts


@dataclass(frozen=True)
class LabelerOverview:
    """A labeler's queue: counts (QueueCounts), by dataset and slice in queue order, and the claim
    the Label page opens next (next_claim_for; None when nothing is left to label or review), with
    its dataset's name (a link to it names the dataset: claim ids are unique per dataset only)."""

    counts: QueueCounts
    by_slice: tuple[SliceQueue, ...]
    next_claim_pk: int | None
    next_claim_id: str | None
    next_claim_dataset: str | None = None


def labeler_overview(session: Session, user: Caller) -> LabelerOverview:
    """The queue of `user` (a labeler): what is left to label, to review after an update, waiting
    for a hold, and done, overall and by dataset and slice, and the next claim.

    Reads only the caller's own assignments, labels and holds in force (and, for their
    labels, the claim's content time and adjudication, as `workflow.label_to_review` needs):
    nothing about anyone else's labels. Two queries and next_claim_for's.
    Raises PermissionDeniedError when `user` is no labeler.
    """
    require(user, Permission.LABEL)
    own = and_(Label.claim_pk == Claim.id, Label.labeler_pk == user.id)
    rows = session.exec(
        select(Claim.id, Claim.updated_at, Case.id, Case.slice, Dataset.name, Label.updated_at, Adjudication.decided_at)
        .join(Assignment, and_(Assignment.case_pk == Claim.case_pk, Assignment.labeler_pk == user.id))
        .join(Case, Case.id == Claim.case_pk)
        .join(Dataset, Dataset.id == Case.dataset_id)
        .outerjoin(Label, own)
        .outerjoin(Adjudication, Adjudication.claim_pk == Claim.id)
        .order_by(Case.dataset_id, Case.position, Claim.position, Claim.id)
    ).all()
    held = set(session.exec(select(Hold.case_pk).where(Hold.created_by == user.id, hold_in_force_sql(Hold))))
    total = QueueCounts()
    groups: dict[tuple[str, str], QueueCounts] = {}
    for _, content_changed_at, case_pk, slice_, dataset, labeled_at, decided_at in rows:
        if labeled_at is not None and not label_to_review(labeled_at, content_changed_at, decided_at):
            group = "done"
        elif case_pk in held:
            group = "on_hold"
        else:
            group = "to_label" if labeled_at is None else "to_review"
        total = total.plus(group)
        groups[dataset, slice_] = groups.get((dataset, slice_), QueueCounts()).plus(group)
    next_pk = next_claim_for(session, user)
    next_id, next_dataset = (None, None) if next_pk is None else session.exec(
        select(Claim.claim_id, Dataset.name).join(Dataset, Dataset.id == Claim.dataset_id).where(Claim.id == next_pk)).one()
    return LabelerOverview(total, tuple(SliceQueue(d, s, c) for (d, s), c in groups.items()), next_pk, next_id,
                           next_dataset)


# --- the adjudicator ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SliceDisputes:
    """The claims waiting for the caller's decision in one slice: how many, how many of them are
    stale (decided or agreed once, changed since), and the day the oldest started waiting."""

    slice: str
    waiting: int
    stale: int
    oldest_since: date | None


@dataclass(frozen=True)
class AdjudicatorOverview:
    """The disputes waiting for the caller (adjudication_queue): how many (disputed and stale),
    since when the oldest waits (a day, UTC), which claim that is (its id and its dataset's name),
    and the same by slice."""

    waiting: int
    disputed: int
    stale: int
    oldest_since: date | None
    oldest_claim_id: str | None
    by_slice: tuple[SliceDisputes, ...]
    oldest_claim_dataset: str | None = None


def adjudicator_overview(session: Session, user: Caller) -> AdjudicatorOverview:
    """The disputed and stale claims waiting for `user`'s decision (the Adjudicate page's queue,
    which leaves out the claims they label), counted overall and by slice.

    A claim waits since its content or one of its labels last changed (the later of the claim's
    update time and its labels' times: when it became disputed or stale). Only the day is given:
    the adjudicator sees labels as "Labeler 1 / 2" without times. Raises PermissionDeniedError
    when `user` is no adjudicator.
    """
    queue = adjudication_queue(session, user)  # checks Permission.ADJUDICATE
    since = _waiting_since(session, [item.claim_pk for item in queue])
    by_slice: dict[str, list] = defaultdict(list)
    for item in queue:
        by_slice[item.slice].append(item)
    oldest = min(queue, key=lambda item: since[item.claim_pk], default=None)  # min keeps the first in queue order

    def stale(items: list) -> int:
        return sum(item.state == State.STALE.value for item in items)

    return AdjudicatorOverview(
        waiting=len(queue),
        disputed=len(queue) - stale(queue),
        stale=stale(queue),
        oldest_since=None if oldest is None else since[oldest.claim_pk].date(),
        oldest_claim_id=None if oldest is None else oldest.claim_id,
        oldest_claim_dataset=None if oldest is None else session.get(Dataset, oldest.dataset_id).name,
        by_slice=tuple(SliceDisputes(slice_, len(items), stale(items), min(since[i.claim_pk] for i in items).date())
                       for slice_, items in sorted(by_slice.items())),
    )


def _waiting_since(session: Session, claim_pks: list[int]) -> dict[int, datetime]:
    """claim pk -> the later of the claim's update time and its labels' latest update time."""
    if not claim_pks:
        return {}
    changed = dict(session.exec(select(Claim.id, Claim.updated_at).where(Claim.id.in_(claim_pks))).all())
    labeled = dict(session.exec(select(Label.claim_pk, func.max(Label.updated_at))
                                .where(Label.claim_pk.in_(claim_pks)).group_by(Label.claim_pk)).all())
    return {pk: max(changed[pk], labeled.get(pk) or changed[pk]) for pk in claim_pks}


# --- the admin ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReleaseCheck:
    """What blocks the next release of the claims in scope.

    refused_by: reason -> claims, for each reason `release create` (without --only-final) refuses:
        every non-final state (workflow.FINAL_STATES) with claims, in State order, and
        STILL_TO_LABEL for the claims the caller is still to label (create refuses to show them
        their labels); empty when a release would be created.
    refusal: release create's own message for the states (releases' check), None when the states
        refuse nothing.
    final: agreed and adjudicated claims (what --only-final would release).
    leaks: final claims with a `leak` severity in a label or the adjudication: the manifest notes
        each as a release blocker (releases.BLOCKING_SEVERITY), whatever the averages say.
    """

    refused_by: dict[str, int]
    refusal: str | None
    final: int
    leaks: int
    refusal_message: Message | None = None  # `refusal` as a message, for the app to write in the user's language


@dataclass(frozen=True)
class SliceStates:
    """How many claims of one slice are in each state (every state named, zero when none)."""

    slice: str
    by_state: dict[str, int]


@dataclass(frozen=True)
class AdminOverview:
    """The project at a glance for an admin: claims in scope and by state (as project_status counts
    them), by slice, the headline agreement figures (AGREEMENT_KEYS of the report's JSON, no
    bootstrap), and what blocks the next release. claims_left_out: the claims the caller is still
    to label, left out of every figure (0 for an admin who labels nothing)."""

    claims: int
    by_state: dict[str, int]
    by_slice: tuple[SliceStates, ...]
    agreement: dict
    release: ReleaseCheck
    claims_left_out: int = 0
    datasets: tuple[str, ...] = ()


AGREEMENT_CACHE_SIZE = 32
"""How many headline agreements `_headline_agreement` keeps (the least recently used goes first)."""

_agreement_cache: OrderedDict[tuple, dict] = OrderedDict()
_agreement_lock = threading.Lock()


def _agreement_key(session: Session, user: Caller, dataset_pk: int | None) -> tuple | None:
    """What the headline agreement of `dataset_pk` as `user` sees it depends on: the database (its
    URL), the dataset, the label fingerprint (services/fingerprint.py: labels, claims and cases in
    scope, and the viewer when the blind rule hides claims from them) and the latest audit event
    (every label write, import, correction, assignment and user change records one). Three
    aggregate queries. None for an in-memory SQLite database, which no URL tells apart."""
    url = session.get_bind().url
    if url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"):
        return None
    fingerprint = label_fingerprint(session, user, dataset_pk)
    last_event = session.exec(select(func.max(LabelEvent.id))).one()
    return url.render_as_string(hide_password=True), dataset_pk, tuple(fingerprint), int(last_event or 0)


def _headline_agreement(session: Session, user: Caller, dataset_pk: int | None = None) -> dict:
    """The headline agreement figures (AGREEMENT_KEYS of `reports.agreement_report`'s JSON, no
    bootstrap) of `dataset_pk` (None: every dataset), as `user` may see them (the blind rule).

    Kept in a small cache (AGREEMENT_CACHE_SIZE entries, per database) under the key of
    `_agreement_key`: a call with unchanged labels reuses the figures (the report over 15,350
    CLIMATE-FEVER labels takes 0.1 to 0.6 s; the key 7 ms), and any new, revised, imported or corrected label
    changes the key, so the figures are computed again at once. Returns a copy the caller may
    change. Raises PermissionDeniedError unless `user` may see agreement.
    """
    require(user, Permission.SEE_AGREEMENT)
    key = _agreement_key(session, user, dataset_pk)
    with _agreement_lock:
        cached = _agreement_cache.get(key) if key is not None else None
        if cached is not None:
            _agreement_cache.move_to_end(key)
            return copy.deepcopy(cached)
    report = agreement_report(session, user, dataset_pk, n_bootstrap=0).to_json()
    figures = {name: report[name] for name in AGREEMENT_KEYS}
    if key is not None:
        with _agreement_lock:
            _agreement_cache[key] = copy.deepcopy(figures)
            _agreement_cache.move_to_end(key)
            while len(_agreement_cache) > AGREEMENT_CACHE_SIZE:
                _agreement_cache.popitem(last=False)
    return figures


def admin_overview(session: Session, user: Caller, dataset_pk: int | None = None) -> AdminOverview:
    """Claims by state and slice, agreement at a glance and the release check, for one dataset
    (`dataset_pk`) or all of them (as `release create` without --dataset).

    The blind rule as in `status.project_status`: the claims `user` is still to label are left
    out of every count, of agreement (reports.label_table) and of the release check, and counted
    in claims_left_out (they block a release as STILL_TO_LABEL). The agreement figures come from
    `_headline_agreement`, reused while the labels are unchanged; everything else is read anew.
    Raises PermissionDeniedError unless `user` may see the status, agreement and releases (an admin).
    """
    for permission in (Permission.SEE_STATUS, Permission.SEE_AGREEMENT, Permission.RELEASE):
        require(user, permission)
    still_to_label = claims_still_to_label(session, user)
    in_scope = claim_facts(session, dataset_pk)
    blind = set() if still_to_label is None else set(session.exec(still_to_label)) & set(in_scope)
    facts = {pk: f for pk, f in in_scope.items() if pk not in blind}
    states = {pk: f.state for pk, f in facts.items()}
    cases = select(Case.id, Case.slice)
    slices = dict(session.exec(cases if dataset_pk is None else cases.where(Case.dataset_id == dataset_pk)).all())
    per_slice: dict[str, Counter] = defaultdict(Counter)
    for pk, f in facts.items():
        per_slice[slices[f.case_pk]][states[pk].value] += 1
    agreement = _headline_agreement(session, user, dataset_pk)  # cached until a label changes
    named = select(Dataset.name).order_by(Dataset.name)
    datasets = session.exec(named if dataset_pk is None else named.where(Dataset.id == dataset_pk)).all()
    return AdminOverview(
        claims=len(states),
        by_state=count_by_state(states),
        by_slice=tuple(SliceStates(slice_, {state.value: counts[state.value] for state in State})
                       for slice_, counts in sorted(per_slice.items())),
        agreement=agreement,
        release=_release_check(session, states, blind, datasets[0] if dataset_pk is not None and datasets else None),
        claims_left_out=len(blind),
        datasets=tuple(datasets),
    )


def _release_check(session: Session, states: dict[int, State], blind: set[int], dataset: str | None) -> ReleaseCheck:
    """ReleaseCheck of the claims `states` (the caller's blind claims left out, `blind` apart)."""
    refused_by = {state.value: n for state in State if state not in FINAL_STATES
                  and (n := sum(s is state for s in states.values()))}
    if blind:
        refused_by[STILL_TO_LABEL] = len(blind)
    try:
        releases.choose_claims(states, dataset, only_final=False)  # release create's own check and message
        refusal, message = None, None
    except ReleaseBlockedError as error:
        refusal, message = str(error), error.message
    final = {pk for pk, state in states.items() if state in FINAL_STATES}
    return ReleaseCheck(refused_by, refusal, len(final), len(_leaking(session, final)), message)


def _leaking(session: Session, claim_pks: set[int]) -> set[int]:
    """The claims among `claim_pks` with a label or an adjudication of severity
    releases.BLOCKING_SEVERITY (as the manifest's release_blockers finds them)."""
    if not claim_pks:
        return set()
    severe = releases.BLOCKING_SEVERITY
    found = set(session.exec(select(Label.claim_pk).where(Label.severity == severe)))
    found |= set(session.exec(select(Adjudication.claim_pk).where(Adjudication.severity == severe)))
    return found & claim_pks


# --- claim links -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimLink:
    """Where a `?claim=<claim_id>&dataset=<name>` link opens the claim for the caller: page
    "label" (a claim of their queue) or "adjudicate" (a dispute waiting for their decision), and
    the claim's dataset (its name)."""

    page: str
    claim_pk: int
    claim_id: str
    dataset: str = ""


def open_claim_link(session: Session, user: Caller, claim_id: str, dataset: str | None = None) -> ClaimLink:
    """Where the link `?claim=<claim_id>&dataset=<dataset>` leads `user`: the Label page when the
    claim is in their queue (labeling.assigned_claim_matches), else the Adjudicate page when it
    waits for their decision (adjudication.adjudication_queue: disputed or stale, and not theirs to
    label). `dataset` (a dataset's name) None: an older link without it, which opens the claim
    when its id is in one dataset only within the caller's reach (their queue and the disputes
    waiting for them).

    Raises AmbiguousIdError when `dataset` is None and the id is in several datasets within that
    reach (the message names those datasets only, and says to open the claim from the queue or to
    add `&dataset=`): none is picked. Raises PermissionDeniedError otherwise, with one message per
    set of roles, whether the claim does not exist, is someone else's or is not disputed: the
    refusal says nothing about claims outside the caller's queues.
    """
    roles = caller_roles(user)
    found: list[ClaimLink] = []
    if "labeler" in roles:
        found += [ClaimLink("label", pk, claim_id, name) for pk, name in assigned_claim_matches(session, user, claim_id, dataset)]
    if "adjudicator" in roles:
        waiting = [item for item in adjudication_queue(session, user) if item.claim_id == claim_id]
        names = dict(session.exec(select(Dataset.id, Dataset.name)
                                  .where(Dataset.id.in_(sorted({item.dataset_id for item in waiting})))).all()) if waiting else {}
        found += [ClaimLink("adjudicate", item.claim_pk, claim_id, names[item.dataset_id]) for item in waiting
                  if dataset is None or names[item.dataset_id] == dataset]
    if len({link.dataset for link in found}) > 1:
        raise several_datasets_error(claim_id, [link.dataset for link in found])
    if found:
        return found[0]  # the claim of the user's queue before the dispute (one dataset: never both)
    if {"labeler", "adjudicator"} <= roles:
        raise PermissionDeniedError.of("msg.claim_not_in_queue_nor_waiting", claim_id=shortened(claim_id))
    if "adjudicator" in roles:
        raise PermissionDeniedError.of("msg.claim_not_waiting", claim_id=shortened(claim_id))
    raise PermissionDeniedError.of("msg.claim_not_in_queue", claim_id=shortened(claim_id))
