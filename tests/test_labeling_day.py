"""The data of the labeling-week benchmark (benchmarks/labeling_day.py): exactly the claims asked
for, made from the demo's cases with unique ids and an intended label each, every case assigned to
both labelers, and the second labeler's disagreements where the disputes are."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter

from sqlmodel import func, select

from annotator.db import init_db, session_scope
from annotator.models import Assignment, Case, Claim
from annotator.vocabulary import LABELS
from tests.conftest import REPO

SCRIPT = REPO / "benchmarks" / "labeling_day.py"


def _load_script():  # noqa: ANN202 - the script as a module
    spec = importlib.util.spec_from_file_location("labeling_day", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


labeling_day = _load_script()


def test_the_week_holds_exactly_the_claims_asked_for_with_unique_ids_and_intended_labels():
    cases = labeling_day.week_cases(100)
    claims = [claim for case in cases for claim in case["claims"]]
    assert len(claims) == 100
    assert len({claim["claim_id"] for claim in claims}) == 100 and len({case["case_id"] for case in cases}) == len(cases)
    intended = {key: value for case in cases for key, value in case["metadata"]["intended_labels"].items()}
    assert {claim["claim_id"] for claim in claims} <= set(intended) and set(intended.values()) <= set(LABELS)
    assert any(case["case_id"].endswith("-r2") for case in cases)  # the demo's cases again, under new ids
    assert len([c for case in labeling_day.week_cases(7) for c in case["claims"]]) == 7  # the last case cut


def test_the_database_assigns_every_case_to_both_labelers_and_the_disputes_are_the_disagreements(tmp_path):
    url = f"sqlite:///{tmp_path / 'week.db'}"
    claims, labels = labeling_day.build(tmp_path, url, 30, disagree=0.5, seed=1)
    assert len(claims) == 30
    engine = init_db(url)
    with session_scope(engine) as session:
        n_cases = session.exec(select(func.count()).select_from(Case)).one()
        assigned = Counter(session.exec(select(Assignment.case_pk)).all())
        assert len(assigned) == n_cases and set(assigned.values()) == {2}
        assert session.exec(select(func.count()).select_from(Claim)).one() == 30
    engine.dispose()
    first, second = (labels[name] for name in labeling_day.LABELERS)
    assert first == {pk: claim.intended for pk, claim in claims.items()}
    disputes = [pk for pk in claims if first[pk] != second[pk]]
    assert 0 < len(disputes) < 30  # some, not all
    assert all(claim.text and claim.first_passage and claim.question for claim in claims.values())
