"""A RAGAS file goes round, on SQLite and PostgreSQL: imported (JSON lines), labeled by two
labelers, its dispute adjudicated, released, exported with `release export --format ragas`, and
the export imported into a new dataset gives the same cases, passages (ids, texts, order), claims
(texts, spans) and expected answers, and never the gold (`gold_claims` is dropped, saying so); the
export imported as a run ranks as the original file does."""

from __future__ import annotations

from sqlmodel import select

from annotator.db import session_scope
from annotator.formats import ragas
from annotator.models import Case, Claim, Dataset, Label
from annotator.release_export import RAGAS_KEYS, ragas_records, write_export
from annotator.services.access import OPERATOR
from annotator.services.adjudication import adjudicate
from annotator.services.imports import import_cases
from annotator.services.labeling import assign_cases, save_label
from annotator.services.releases import create_release
from annotator.services.runs import import_run, run_cases
from annotator.services.users import get_user
from annotator.vocabulary import RAGAS_EXPORT_KEYS
from tests.factories import make_team
from tests.test_formats_ragas import PARIS, write_jsonl
from tests.test_imports_ragas import stored

RECORDS = [
    {**PARIS, "response": "It rains. Paris is the capital of France. It rains."},  # a sentence twice: two spans
    {"case_id": "tokyo", "user_input": "東京の人口は？",
     "response": "東京の人口は約1400万人です。\n・「23区」は約970万人です。\nご不明点はお問い合わせください。",
     "retrieved_contexts": ["東京都の人口は約1400万人（2023年）。", PARIS["retrieved_contexts"][1], "23区の人口は約970万人。"],
     "retrieved_context_ids": ["tokyo-1", "shared-paris", "tokyo-3"], "reference": "約1400万人",
     "reference_contexts": ["東京都の人口は約1400万人（2023年）。"], "slice": "paraphrase", "split": "holdout",
     "required_evidence_ids": ["tokyo-1"], "source": "wiki", "metadata": {"team": "検索"}},
    {"user_input": "Is it open on Sundays?", "response": "Yes. It opens at 9 a.m. on Sundays.",
     "retrieved_contexts": ["Open daily from 9 a.m.", "Closed on public holidays."],
     "claims": ["It opens at 9 a.m. on Sundays.", "It is closed on holidays."]},  # given claims, the second not in the answer
]
"""Three records: made and given ids, a shared context, a Japanese answer with a bullet and line
breaks, RAG and unknown fields, given claims (one the answer does not hold word for word)."""

CONTRADICTED = "It is closed on holidays."
"""The claim alice calls contradicted and bob supported: carol adjudicates it."""


def _label_and_release(engine, root):  # noqa: ANN001, ANN202 - an Engine, a folder; the created release
    with session_scope(engine) as session:
        make_team(session)
        dataset = session.exec(select(Dataset.id).where(Dataset.name == "src")).one()
        assign_cases(session, OPERATOR, list(session.exec(select(Case.id).where(Case.dataset_id == dataset))), ["alice", "bob"])
    for name in ("alice", "bob"):
        with session_scope(engine) as session:
            me = get_user(session, name)
            for claim in session.exec(select(Claim).order_by(Claim.id)).all():
                disputed = claim.text == CONTRADICTED and name == "alice"
                save_label(session, me, claim.id, "contradict" if disputed else "support",
                           severity="other" if disputed else None)
    with session_scope(engine) as session:
        claim = session.exec(select(Claim).where(Claim.text == CONTRADICTED)).one()
        adjudicate(session, get_user(session, "carol"), claim.id, "insufficient", rationale="holidays are not Sundays",
                   severity="other")
    with session_scope(engine) as session:
        return create_release(session, OPERATOR, "gold-v1", dataset="src", out_dir=root / "releases", n_bootstrap=0)


def test_an_exported_release_imports_again_as_the_same_cases_claims_and_passages_without_the_gold(any_engine, tmp_path):
    original = write_jsonl(tmp_path / "eval.jsonl", *RECORDS)
    with session_scope(any_engine) as session:
        import_cases(session, OPERATOR, original, fmt="ragas", dataset="src")
    created = _label_and_release(any_engine, tmp_path)
    exported = tmp_path / "gold-v1.ragas.jsonl"
    written = write_export(ragas_records(created.path), exported, created.path)
    assert (written.cases, written.claims) == (3, 8)

    with session_scope(any_engine) as session:
        report = import_cases(session, OPERATOR, exported, fmt="ragas", dataset="again")
    assert report.counts["claims"] == {"new": 8, "unchanged": 0, "updated": 0}
    assert report.warnings == (f"{exported}, line 1: field 'gold_claims' is written by `annotator release export` "
                               "(a release's gold labels, which labelers must not see); it was not imported",)
    before, after = stored(any_engine, "src"), stored(any_engine, "again")
    assert after == before  # cases, claims with their spans and passages in order, metadata with expected_answer
    tokyo = next(case for case in after if case[0] == "tokyo")
    assert tokyo[5] == {"team": "検索", "source": "wiki", "expected_answer": "約1400万人", "required_evidence_ids": ["tokyo-1"],
                        "reference_contexts": ["東京都の人口は約1400万人（2023年）。"]}
    assert [claim[1] for claim in tokyo[6]] == ["東京の人口は約1400万人です。", "「23区」は約970万人です。", "ご不明点はお問い合わせください。"]
    assert [passage[0] for passage in tokyo[6][0][4]] == ["tokyo-1", "shared-paris", "tokyo-3"]
    rains = [claim[2:4] for claim in after[0][6]]
    assert rains == [(0, 9), (10, 41), (42, 51)]  # "It rains." twice: each its own place
    assert [claim[2:4] for claim in after[2][6]] == [(5, 35), (None, None)]
    with session_scope(any_engine) as session:
        again = session.exec(select(Dataset.id).where(Dataset.name == "again")).one()
        metas = session.exec(select(Case.meta).where(Case.dataset_id == again)).all()
        assert not any("gold_claims" in meta or "gold_label" in str(meta) for meta in metas)
        claims_again = session.exec(select(Claim.id).where(Claim.dataset_id == again)).all()
        assert session.exec(select(Label).where(Label.claim_pk.in_(claims_again))).all() == []

    with session_scope(any_engine) as session:
        import_run(session, OPERATOR, original, run="from-file", dataset="src", fmt="ragas")
        import_run(session, OPERATOR, exported, run="from-export", dataset="again", fmt="ragas")
        ranked = [[(case["case_id"], case["retrieved"], case["answer"]) for case in run_cases(session, OPERATOR, run)]
                  for run in ("from-file", "from-export")]
    assert ranked[0] == ranked[1]
    assert ranked[0][1][:2] == ("tokyo", ["tokyo-1", "shared-paris", "tokyo-3"])


def test_the_reader_knows_every_key_the_exporter_writes_and_drops_only_the_gold():
    assert RAGAS_KEYS == RAGAS_EXPORT_KEYS  # the exporter writes the keys of the one list
    assert ragas.EXPORT_ONLY_KEYS == ("gold_claims",)
    assert set(RAGAS_EXPORT_KEYS) <= set(ragas.RAGAS_KEYS) | set(ragas.EXPORT_ONLY_KEYS)
