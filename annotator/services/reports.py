"""Agreement reports on the labels in the database: gathers the long table
(item_id, rater, label, slice, split, guideline_version) and hands it to `annotator.agreement`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from sqlmodel import Session, func, select

from annotator.agreement import AgreementReport, compute_agreement
from annotator.services.access import Caller, require
from annotator.services.blind import claims_still_to_label
from annotator.workflow import Permission
from annotator.models import Case, Claim, Label, User
from annotator.vocabulary import LABELS

if TYPE_CHECKING:  # label_table's DataFrame; a report is computed without pandas
    import pandas as pd

DEFAULT_BOOTSTRAP = 1000
IN_CHUNK = 30_000
GROUP_COLUMNS = ("slice", "split", "guideline_version")
"""What a report can be broken down by."""
MIXED_VERSIONS = "mixed"
"""The guideline_version group of a claim whose labels were made under different versions."""


TABLE_COLUMNS = ("item_id", "rater", "label", "slice", "split", "guideline_version")
"""The columns of label_table (and of _label_columns)."""


def label_table(session: Session, actor: Caller, dataset_pk: int | None = None, claim_pks: Iterable[int] | None = None) -> pd.DataFrame:
    """Every stored (pre-adjudication) label in scope as a long table.

    Returns a DataFrame with columns item_id (the claim's primary key, as a string), rater (the
    labeler's name), label, slice, split, guideline_version; one row per label.
    guideline_version is the claim's: the version its labels were made under, or MIXED_VERSIONS
    when they differ. Adjudications are not labels and are never included: agreement is
    computed on the blind labels only.
    The blind rule: the labels of claims `actor` is assigned to label and has not labeled yet
    are left out (blind.claims_still_to_label), so an admin who also labels sees no other label
    of a claim before labeling it; for everyone else (and the command line) nothing is.
    """
    import pandas as pd

    frame = pd.DataFrame(_label_rows(session, actor, dataset_pk, claim_pks), columns=list(TABLE_COLUMNS))
    frame["item_id"] = frame["item_id"].astype(str)
    versions = frame.groupby("item_id")["guideline_version"].transform("nunique")
    frame.loc[versions > 1, "guideline_version"] = MIXED_VERSIONS
    return frame


def _label_rows(session: Session, actor: Caller, dataset_pk: int | None, claim_pks: Iterable[int] | None) -> list[tuple]:
    """label_table's rows as the database gives them: (claim_pk, labeler name, label, slice, split,
    guideline_version) tuples, the blind rule applied. Raises PermissionDeniedError as label_table."""
    require(actor, Permission.SEE_AGREEMENT)
    query = (
        select(Label.claim_pk, User.name, Label.value, Case.slice, Case.split, Label.guideline_version)
        .join(User, User.id == Label.labeler_pk)
        .join(Claim, Claim.id == Label.claim_pk)
        .join(Case, Case.id == Claim.case_pk)
    )
    hidden = claims_still_to_label(session, actor)
    if hidden is not None:
        query = query.where(Label.claim_pk.not_in(hidden))
    if dataset_pk is not None:
        query = query.where(Claim.dataset_id == dataset_pk)
    if claim_pks is None:
        return [tuple(row) for row in session.exec(query).all()]
    wanted = sorted(set(claim_pks))  # in chunks: PostgreSQL takes at most 65,535 parameters a statement
    return [tuple(row) for start in range(0, len(wanted), IN_CHUNK)
            for row in session.exec(query.where(Label.claim_pk.in_(wanted[start:start + IN_CHUNK]))).all()]


def _label_columns(session: Session, actor: Caller, dataset_pk: int | None, claim_pks: Iterable[int] | None) -> dict[str, list]:
    """label_table as a dict of columns (TABLE_COLUMNS -> lists), the same values, built without
    pandas: compute_agreement takes it as it takes the DataFrame."""
    rows = _label_rows(session, actor, dataset_pk, claim_pks)
    columns = {name: [row[k] for row in rows] for k, name in enumerate(TABLE_COLUMNS)}
    columns["item_id"] = [str(pk) for pk in columns["item_id"]]
    versions: dict[str, set] = {}
    for item, version in zip(columns["item_id"], columns["guideline_version"]):
        if version is not None:  # as pandas' nunique counts: a missing version is no version
            versions.setdefault(item, set()).add(version)
    columns["guideline_version"] = [MIXED_VERSIONS if len(versions.get(item, ())) > 1 else version
                                    for item, version in zip(columns["item_id"], columns["guideline_version"])]
    return columns


def agreement_report(
    session: Session,
    actor: Caller,
    dataset_pk: int | None = None,
    claim_pks: Iterable[int] | None = None,
    *,
    by: str | Sequence[str] | None = None,
    n_bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    categories: tuple[str, ...] = LABELS,
    pair_bootstrap: bool = True,
    group_pairs: bool = True,
) -> AgreementReport:
    """The agreement report over the stored labels in scope (see `label_table`: without the
    labels of claims `actor` is still to label), optionally broken down `by` one or more of
    GROUP_COLUMNS. Bootstrap intervals are seeded: the same
    labels give the same report. pair_bootstrap=False leaves the pairs of labelers without their
    bootstrap intervals (compute_agreement's; `agreement.pair_bootstrap_ci95` gives one pair's
    when it is shown); group_pairs=False leaves the groups without their pairs (compute_agreement's).
    Raises ValueError for another `by` column."""
    require(actor, Permission.SEE_AGREEMENT)
    group_by = (by,) if isinstance(by, str) else tuple(by or ())
    unknown = [column for column in group_by if column not in GROUP_COLUMNS]
    if unknown:
        raise ValueError(f"cannot break agreement down by {unknown[0]!r}; use {', '.join(GROUP_COLUMNS)}")
    wanted = None if claim_pks is None else list(claim_pks)
    table = _label_columns(session, actor, dataset_pk, wanted)
    report = compute_agreement(table, categories, n_bootstrap=n_bootstrap, seed=seed, by=group_by,
                               pair_bootstrap=pair_bootstrap, group_pairs=group_pairs)
    groups = {column: _with_claims_in_scope(session, parts, column, dataset_pk, wanted, categories)
              for column, parts in report.groups.items()}
    return replace(report, n_in_scope=_count_claims(session, dataset_pk, wanted), groups=groups)


def _with_claims_in_scope(session: Session, parts: dict, column: str, dataset_pk: int | None,
                          claim_pks: list[int] | None, categories: tuple[str, ...]) -> dict:
    """Group reports whose n_in_scope counts every claim of the group, labeled or not, with an
    empty report for a slice or split none of whose claims has a label yet (sorted by value).
    guideline_version groups count labeled claims only: an unlabeled claim has no version."""
    if column == "guideline_version":
        return parts
    in_scope = _claims_per_group(session, getattr(Case, column), dataset_pk, claim_pks)
    empty = compute_agreement([], categories, n_bootstrap=0)
    merged = {value: replace(parts.get(value, empty), n_in_scope=n) for value, n in in_scope.items()}
    return dict(sorted(merged.items()))


def _claims_per_group(session: Session, column, dataset_pk: int | None,  # noqa: ANN001 - a Case column
                      claim_pks: list[int] | None) -> dict[str, int]:
    """group value -> claims in scope with that value."""
    query = select(column, func.count()).select_from(Claim).join(Case, Case.id == Claim.case_pk).group_by(column)
    if dataset_pk is not None:
        query = query.where(Claim.dataset_id == dataset_pk)
    if claim_pks is None:
        return dict(session.exec(query).all())
    wanted, counts = sorted(set(claim_pks)), {}
    for start in range(0, len(wanted), IN_CHUNK):
        for value, n in session.exec(query.where(Claim.id.in_(wanted[start:start + IN_CHUNK]))).all():
            counts[value] = counts.get(value, 0) + n
    return counts


def _count_claims(session: Session, dataset_pk: int | None, claim_pks: list[int] | None) -> int:
    if claim_pks is not None:
        return len(set(claim_pks))
    query = select(func.count()).select_from(Claim)
    if dataset_pk is not None:
        query = query.where(Claim.dataset_id == dataset_pk)
    return session.exec(query).one()
