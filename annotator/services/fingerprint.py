"""A cheap fingerprint of the data an agreement report is computed from, so a cached report can
be reused until a label (or a claim or case in scope) changes.

Two aggregate queries, no row is loaded: the fingerprint changes when a label is added, removed
or revised (count, highest key, sum of revisions, latest update), and when a claim is added or
removed or a case is updated (its slice or split may have changed), in the dataset asked for.
"""

from __future__ import annotations

from typing import NamedTuple

from sqlmodel import Session, func, select

from annotator.models import Case, Claim, Label
from annotator.services.access import Caller, require
from annotator.services.blind import claims_still_to_label
from annotator.services.numbers import plain_row
from annotator.workflow import Permission


class LabelFingerprint(NamedTuple):
    """What a report depends on, in a hashable tuple: equal fingerprints, equal reports."""

    labels: int  # Label rows in scope
    max_label_pk: int  # highest Label key (0 when none): a new label raises it
    revisions: int  # sum of Label.revision: every edit of a label raises it
    label_updated: str  # latest Label.updated_at (ISO text, "" when none)
    claims: int  # claims in scope: the report's n_in_scope
    max_claim_pk: int
    case_updated: str  # latest Case.updated_at in scope: an import may change slice or split
    viewer: int | None = None  # the caller whose claims still to label are left out (their key), else None


def label_fingerprint(session: Session, actor: Caller, dataset_pk: int | None = None) -> LabelFingerprint:
    """The fingerprint of the labels, claims and cases of dataset `dataset_pk` (None: all).

    Costs two aggregate queries (count / max / sum), whatever the number of labels. Like the
    report (reports.label_table), it leaves out the labels of claims `actor` is still to label,
    and then names the actor in `viewer`: their report is theirs, not to be shared with others.
    """
    require(actor, Permission.SEE_AGREEMENT)
    labels = (select(func.count(Label.id), func.max(Label.id), func.sum(Label.revision), func.max(Label.updated_at))
              .join(Claim, Claim.id == Label.claim_pk))
    hidden = claims_still_to_label(session, actor)
    if hidden is not None:
        labels = labels.where(Label.claim_pk.not_in(hidden))
    claims = (select(func.count(Claim.id), func.max(Claim.id), func.max(Case.updated_at))
              .join(Case, Case.id == Claim.case_pk))
    if dataset_pk is not None:
        labels = labels.where(Claim.dataset_id == dataset_pk)
        claims = claims.where(Claim.dataset_id == dataset_pk)
    n_labels, max_label, revisions, label_updated = plain_row(session.exec(labels).one())
    n_claims, max_claim, case_updated = plain_row(session.exec(claims).one())
    return LabelFingerprint(
        labels=int(n_labels or 0), max_label_pk=int(max_label or 0), revisions=int(revisions or 0),
        label_updated=_text(label_updated), claims=int(n_claims or 0), max_claim_pk=int(max_claim or 0),
        case_updated=_text(case_updated), viewer=None if hidden is None else actor.id,
    )


def _text(moment: object) -> str:
    """A timestamp as ISO text ("" for None); SQLite may hand back text already."""
    if moment is None:
        return ""
    return moment.isoformat() if hasattr(moment, "isoformat") else str(moment)
