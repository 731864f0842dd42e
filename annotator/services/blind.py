"""The blind rule's one query: the claims a caller is still to label (`still_to_label` in
workflow.may_see_other_labels, which states the rule).

A labeler sees nothing of another label on a claim before submitting their own. The services
that show labels to roles beyond labeling (agreement reports and their fingerprint, a claim's
history, gold release files) leave these claims out, or refuse them, for a caller who also
labels: an admin whose case is assigned to them is blind on its claims like any labeler until
they have labeled them. Whether a claim is left out depends only on the caller's own assignments
and labels, never on anyone else's, so the leaving out itself tells nothing.
"""

from __future__ import annotations

from sqlalchemy import Select, and_
from sqlalchemy.orm import aliased
from sqlmodel import Session, select

from annotator.models import Assignment, Claim, Label
from annotator.services.access import Caller, is_operator, need_caller


def _query(caller: Caller, claim_pk: int | None = None) -> Select:
    claim, assignment, own = aliased(Claim), aliased(Assignment), aliased(Label)
    labeled = select(own.id).where(own.claim_pk == claim.id, own.labeler_pk == caller.id).exists()
    query = (
        select(claim.id)
        .join(assignment, and_(assignment.case_pk == claim.case_pk, assignment.labeler_pk == caller.id))
        .where(~labeled)
        .correlate(None)  # embedded in another query's WHERE, it must not borrow that query's claim
    )
    return query if claim_pk is None else query.where(claim.id == claim_pk)


def _labels_nothing(caller: Caller) -> bool:
    """Whether `caller` labels nothing: the command line (OPERATOR). Raises PermissionDeniedError
    when there is no caller at all: a service that forgot its caller gets nothing, never everything."""
    need_caller(caller)
    return is_operator(caller) or caller.id is None


def claims_still_to_label(session: Session, caller: Caller) -> Select | None:
    """A select of the keys of the claims whose case is assigned to `caller` and that they have
    not labeled yet, for `NOT IN`; None when there is none (always for the command line, whose
    caller is access.OPERATOR).

    One indexed query to find out; callers with nothing left to label (admins who do not label)
    pay nothing more. Raises PermissionDeniedError when `caller` is None.
    """
    if _labels_nothing(caller):
        return None
    query = _query(caller)
    if session.exec(query.limit(1)).first() is None:
        return None
    return query


def is_still_to_label(session: Session, caller: Caller, claim_pk: int) -> bool:
    """Whether `caller` is assigned to label the claim `claim_pk` and has not labeled it yet.
    Raises PermissionDeniedError when `caller` is None."""
    if _labels_nothing(caller):
        return False
    return session.exec(_query(caller, claim_pk).limit(1)).first() is not None
