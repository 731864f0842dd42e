"""Find datasets, cases and claims by the ids users give, across datasets when none is named."""

from __future__ import annotations

from sqlmodel import Session, select

from annotator.errors import AmbiguousIdError, NotFoundError
from annotator.messages import msg, shortened
from annotator.text import MAX_ID_CHARS
from annotator.models import Case, Claim, Dataset


def get_dataset(session: Session, name: str) -> Dataset:
    """The dataset called `name`. Raises NotFoundError listing the datasets there are."""
    dataset = session.exec(select(Dataset).where(Dataset.name == name)).first()
    if dataset is None:
        names = ", ".join(session.exec(select(Dataset.name).order_by(Dataset.name))) or msg("msg.release.none")
        raise NotFoundError.of("msg.lookup.no_dataset", name=shortened(name, MAX_ID_CHARS), names=names)
    return dataset


def list_datasets(session: Session) -> list[str]:
    """The names of all datasets, sorted."""
    return list(session.exec(select(Dataset.name).order_by(Dataset.name)))


def dataset_pk(session: Session, name: str | None) -> int | None:
    """The primary key of dataset `name`, or None (all datasets) when no name is given."""
    return None if name is None else get_dataset(session, name).id


def find_claim(session: Session, claim_id: str, dataset: str | None = None) -> Claim:
    """The claim with the user's id `claim_id`, in `dataset` or in any dataset.

    Raises NotFoundError when there is none, AmbiguousIdError when two datasets have it.
    """
    return _find_one(session, Claim, Claim.claim_id, "claim", claim_id, dataset)


def find_case(session: Session, case_id: str, dataset: str | None = None) -> Case:
    """The case with the user's id `case_id`; errors as `find_claim`."""
    return _find_one(session, Case, Case.case_id, "case", case_id, dataset)


def _find_one(session, model, id_column, kind: str, value: str, dataset: str | None):  # noqa: ANN001
    query = select(model).where(id_column == value)
    if dataset is not None:
        query = query.where(model.dataset_id == get_dataset(session, dataset).id)
    found = list(session.exec(query.limit(2)))
    if not found:
        if dataset:
            raise NotFoundError.of(f"msg.lookup.no_{kind}_in", id=shortened(value, MAX_ID_CHARS), dataset=dataset)
        raise NotFoundError.of(f"msg.lookup.no_{kind}", id=shortened(value, MAX_ID_CHARS))
    if len(found) > 1:
        raise AmbiguousIdError.of(f"msg.lookup.ambiguous_{kind}", id=value)
    return found[0]
