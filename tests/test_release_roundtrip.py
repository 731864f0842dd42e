"""A release lets a team import its claims again: generated Unicode cases go through import, two
labelers, a release, and an import of the release's cases.jsonl into a fresh database, and come
back the same (ids, texts, order, metadata)."""

from __future__ import annotations

import json
import tempfile
import unicodedata
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import Session, select

from annotator.db import init_db, session_scope
from annotator.models import Case, Claim, ClaimPassage, Passage
from annotator.release import check_release
from annotator.services.access import OPERATOR
from annotator.services.imports import import_cases
from annotator.services.labeling import assign_cases, save_label
from annotator.services.releases import create_release
from annotator.services.users import add_user, get_user


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


PIECES = ["=", "+", "-", "@", "＝", "＋", "－", "＠", "\t", "\n", "\r\n", '"', "'", ",", ";", "返金は30日以内", "日本語",
          "ｶﾞ", "e\u0301", "か\u3099", "①", "㈱", " ", "a", "Z", "0", "\\", "{}", "\u00a0", "😀"]
"""Spreadsheet formula starts (half and full width), line breaks, quotes, separators, Japanese,
combining characters that NFC composes (e + acute, か + dakuten), characters NFKC would change."""

texts = st.lists(
    st.one_of(st.sampled_from(PIECES),
              st.text(st.characters(min_codepoint=0x20, max_codepoint=0x30FF, exclude_categories=("Cs", "Cc")), min_size=1, max_size=3)),
    min_size=1, max_size=6,
).map("".join).map(nfc).filter(lambda text: not text.isspace())
ids = st.text(alphabet="ab日本=+-@＝_.é", min_size=1, max_size=4).map(nfc)


@st.composite
def case_files(draw) -> list[dict]:  # noqa: ANN001 - hypothesis' draw
    """1 to 3 native cases, each with 1 to 3 passages and 1 to 3 claims shown with some of them."""
    cases = []
    for c in range(draw(st.integers(1, 3))):
        passages = [{"passage_id": f"{draw(ids)}p{c}.{k}", "doc_id": draw(ids), "version": draw(st.sampled_from(["", "v1", "2"])),
                     "title": draw(st.one_of(st.just(""), texts)), "text": draw(texts)} for k in range(draw(st.integers(1, 3)))]
        claims = []
        for j in range(draw(st.integers(1, 3))):
            shown = draw(st.permutations([p["passage_id"] for p in passages]))[: draw(st.integers(1, len(passages)))]
            claims.append({"claim_id": f"{draw(ids)}c{c}.{j}", "text": draw(texts), "passage_ids": list(shown)})
        cases.append({
            "case_id": f"{draw(ids)}q{c}", "question": draw(texts), "answer": draw(st.one_of(st.just(""), texts)),
            "slice": draw(st.sampled_from(["normal", "paraphrase"])), "split": draw(st.sampled_from(["dev", "holdout"])),
            "metadata": {"expected_behavior": draw(texts), "required_evidence_ids": [passages[0]["passage_id"]],
                         "principal": draw(st.sampled_from(["社員", "=admin", ""]))},
            "passages": passages, "claims": claims,
        })
    return cases


def stored(engine) -> dict:  # noqa: ANN001
    """What a database holds of cases, claims and passages, in their stored order."""
    with Session(engine) as session:
        cases = session.exec(select(Case).order_by(Case.position)).all()
        claims = session.exec(select(Claim, Case.case_id).join(Case, Case.id == Claim.case_pk)
                              .order_by(Case.position, Claim.position)).all()
        shown = {}
        for claim_pk, passage_id in session.exec(select(ClaimPassage.claim_pk, Passage.passage_id)
                                                 .join(Passage, Passage.id == ClaimPassage.passage_pk)
                                                 .order_by(ClaimPassage.claim_pk, ClaimPassage.position)):
            shown.setdefault(claim_pk, []).append(passage_id)
        passages = session.exec(select(Passage).order_by(Passage.passage_id)).all()
        return {
            "cases": [(c.case_id, c.question, c.answer, c.slice, c.split, c.meta) for c in cases],
            "claims": [(case_id, c.claim_id, c.text, shown.get(c.id, [])) for c, case_id in claims],
            "passages": [(p.passage_id, p.doc_id, p.version, p.title, p.text) for p in passages],
        }


def write_jsonl(path: Path, cases: list[dict]) -> None:
    path.write_text("".join(json.dumps(case, ensure_ascii=False) + "\n" for case in cases), encoding="utf-8")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases=case_files())
def test_a_release_imported_again_gives_the_same_claims_and_passages(cases):
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        source = init_db(f"sqlite:///{root / 'source.db'}", create=True)
        write_jsonl(root / "cases.jsonl", cases)
        with session_scope(source) as session:
            import_cases(session, OPERATOR, root / "cases.jsonl", fmt="jsonl", dataset="pilot")
            for name in ("ann", "ben"):
                add_user(session, OPERATOR, name, ["labeler"])
            assign_cases(session, OPERATOR, list(session.exec(select(Case.id))), ["ann", "ben"])
        for name in ("ann", "ben"):  # two labelers agree on every claim, each in their own transactions
            with session_scope(source) as session:
                me = get_user(session, name)
                for claim in session.exec(select(Claim).order_by(Claim.id)).all():
                    save_label(session, me, claim.id, "support" if len(claim.text) % 2 else "contradict")
        with session_scope(source) as session:
            created = create_release(session, OPERATOR, "v1", out_dir=root / "releases", n_bootstrap=0)
        assert check_release(created.path, created.manifest_sha256).ok

        again = init_db(f"sqlite:///{root / 'again.db'}", create=True)
        with session_scope(again) as session:
            import_cases(session, OPERATOR, created.path / "cases.jsonl", fmt="jsonl", dataset="pilot")
        before, after = stored(source), stored(again)
        gold = [json.loads(line) for line in (created.path / "gold.jsonl").read_text(encoding="utf-8").splitlines()]
        source.dispose()
        again.dispose()
    shown = {passage_id for claim in before["claims"] for passage_id in claim[3]}
    assert after["cases"] == before["cases"]
    assert after["claims"] == before["claims"]
    assert after["passages"] == [passage for passage in before["passages"] if passage[0] in shown]
    assert [claim[1:] for claim in after["claims"]] == [
        (claim["claim_id"], claim["text"], claim["passage_ids"]) for case in cases for claim in case["claims"]]
    metadata = {case["case_id"]: case["metadata"] for case in cases}
    assert [record["case_metadata"] for record in gold] == [metadata[record["case_id"]] for record in gold]
