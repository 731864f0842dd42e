"""Project counts: cases, claims, labels, claims by state, holds and releases."""

from __future__ import annotations

from sqlalchemy import or_
from sqlmodel import Session, func, select

from annotator.models import Adjudication, Case, Claim, GoldRelease, Hold, Label
from annotator.services.access import Caller, require
from annotator.services.blind import claims_still_to_label
from annotator.workflow import Permission
from annotator.services.states import claim_states, count_by_state, hold_in_force_sql


def project_status(session: Session, actor: Caller, dataset_pk: int | None = None) -> dict:
    """Counts for one dataset or all, as a JSON-ready dict with keys cases, claims, labels,
    adjudications, claims_by_state (every state name, zero when none), holds (in force,
    workflow.hold_in_force: active, by reason),
    releases (all releases: a release may span datasets) and claims_left_out.

    The blind rule (services/blind.py): for a caller who still has claims to label, labels,
    adjudications and claims_by_state leave those claims out (a count that moved when the other
    labeler labeled one would tell them so), and holds leave out the holds others placed on those
    claims' cases; claims_left_out says how many claims, 0 for everyone else.
    """
    require(actor, Permission.SEE_STATUS)
    still_to_label = claims_still_to_label(session, actor)
    blind = set() if still_to_label is None else set(session.exec(still_to_label))

    def count(model, *where):  # noqa: ANN001, ANN202
        query = select(func.count()).select_from(model)
        for condition in where:
            query = query.where(condition)
        return session.exec(query).one()

    in_dataset_claims = select(Claim.id) if dataset_pk is None else select(Claim.id).where(Claim.dataset_id == dataset_pk)
    seen_claims = in_dataset_claims if still_to_label is None else in_dataset_claims.where(Claim.id.not_in(still_to_label))
    states = {pk: state for pk, state in claim_states(session, dataset_pk).items() if pk not in blind}
    in_dataset_cases = select(Case.id) if dataset_pk is None else select(Case.id).where(Case.dataset_id == dataset_pk)
    counted_holds = [hold_in_force_sql(Hold), Hold.case_pk.in_(in_dataset_cases)]
    if still_to_label is not None:  # others' holds on a case the caller still labels are their judgment of it
        counted_holds.append(or_(Hold.created_by == actor.id,
                                 Hold.case_pk.not_in(select(Claim.case_pk).where(Claim.id.in_(still_to_label)))))
    holds = session.exec(select(Hold.reason, func.count()).where(*counted_holds).group_by(Hold.reason)).all()
    return {
        "cases": count(Case, Case.id.in_(in_dataset_cases)),
        "claims": count(Claim, Claim.id.in_(in_dataset_claims)),
        "labels": count(Label, Label.claim_pk.in_(seen_claims)),
        "adjudications": count(Adjudication, Adjudication.claim_pk.in_(seen_claims)),
        "claims_by_state": count_by_state(states),
        "holds": {"active": sum(n for _, n in holds), "by_reason": dict(sorted(holds))},
        "releases": count(GoldRelease),
        "claims_left_out": len(blind),
    }
