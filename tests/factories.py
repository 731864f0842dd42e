"""Small databases built directly from the models, for service tests."""

from __future__ import annotations

from sqlmodel import Session

from annotator.models import Case, Claim, ClaimPassage, Dataset, Passage
from annotator.services.access import OPERATOR
from annotator.services.labeling import assign_cases
from annotator.services.users import add_user

PASSWORD = "correct-horse-battery"


def make_dataset(session: Session, name: str = "pilot", n_cases: int = 3, claims_per_case: int = 2, slices=("normal", "paraphrase")) -> Dataset:
    """A dataset of `n_cases` cases (case-1..), each with `claims_per_case` claims (case-1-c1..)
    shown with two passages of their case."""
    dataset = Dataset(name=name, source_format="test")
    session.add(dataset)
    session.flush()
    for i in range(1, n_cases + 1):
        case = Case(dataset_id=dataset.id, case_id=f"case-{i}", position=i, question=f"質問 {i}?", answer=f"回答 {i}.",
                    slice=slices[(i - 1) % len(slices)], split="dev", meta={})
        session.add(case)
        session.flush()
        passages = [Passage(dataset_id=dataset.id, passage_id=f"{name}-p{i}-{k}", doc_id=f"doc-{i}", version="v1",
                            title=f"Doc {i}", text=f"本文 {i}-{k}") for k in (1, 2)]
        session.add_all(passages)
        session.flush()
        for j in range(1, claims_per_case + 1):
            claim = Claim(dataset_id=dataset.id, case_pk=case.id, claim_id=f"case-{i}-c{j}", position=j, text=f"主張 {i}-{j}")
            session.add(claim)
            session.flush()
            session.add_all([ClaimPassage(claim_pk=claim.id, passage_pk=p.id, position=k) for k, p in enumerate(passages)])
    session.flush()
    return dataset


def make_team(session: Session) -> dict:
    """Users alice and bob (labelers), carol (adjudicator), root (admin), all with PASSWORD."""
    return {
        "alice": add_user(session, OPERATOR, "alice", ["labeler"], PASSWORD),
        "bob": add_user(session, OPERATOR, "bob", ["labeler"], PASSWORD),
        "carol": add_user(session, OPERATOR, "carol", ["adjudicator"], PASSWORD),
        "root": add_user(session, OPERATOR, "root", ["admin"], PASSWORD),
    }


def pilot(session: Session, n_cases: int = 3) -> tuple[Dataset, dict]:
    """A dataset whose cases are all assigned to alice and bob, and the team."""
    dataset = make_dataset(session, n_cases=n_cases)
    team = make_team(session)
    from annotator.services.labeling import first_cases

    assign_cases(session, OPERATOR, first_cases(session, n_cases, dataset.id), ["alice", "bob"])
    return dataset, team


def json_says(line: str) -> str:
    """What Python's json module says of a line that is not valid JSON, as the import's message
    quotes it ("Expecting ',' delimiter at column 225"): its wording is Python's, not ours, and
    may change with the Python version, so tests take it from json itself. Raises AssertionError
    when the line is valid JSON."""
    import json

    try:
        json.loads(line.rstrip("\r\n"))
    except json.JSONDecodeError as error:
        return f"{error.msg.removesuffix(' at')} at column {error.colno}"
    raise AssertionError(f"valid JSON: {line!r}")
