"""The README's "Your own RAG answers (RAGAS records)" walk-through, on SQLite and PostgreSQL: its
commands run as written on data/ragas-en.jsonl and data/ragas-ja.jsonl (import, assign, agreement,
the adjudication queue, release create and export, the Python snippet, run import and report),
the labels and the decision made through the services in between; what it says the import prints
is what it prints; and the claims it quotes are those the segmenter cuts from the two files."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections import Counter

import pytest
from sqlmodel import select

from annotator import formats
from annotator.db import init_db, session_scope
from annotator.models import Claim, Dataset
from annotator.services.access import OPERATOR
from annotator.services.adjudication import adjudicate
from annotator.services.labeling import save_label
from annotator.services.users import add_user, get_user
from tests.conftest import REPO, annotator

SECTION = "## Your own RAG answers (RAGAS records)"
FILES = ("ragas-en.jsonl", "ragas-ja.jsonl")

NOT_RUN = {"users": "asks for a password: the users are added through the service",
           "serve": "starts the app: labeling and adjudicating are done through the services"}
"""The walk-through's commands this test does not run, and why."""

CONTRADICT, INSUFFICIENT = {"travel-01-c3"}, {"travel-05-c1"}
DISPUTED = "travel-05-c1"
"""The labels of travel-en's claims (support for the others): ren supports DISPUTED, mika decides it."""


def section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start:end]


def blocks(kind: str = "") -> list[str]:
    """The section's code blocks of `kind` ("" for plain, "python"), each fence opened by ```kind
    and closed by ```."""
    found, current, opened = [], [], None
    for line in section().splitlines():
        if line.startswith("```"):
            if opened is None:
                opened, current = line[3:].strip(), []
            else:
                if opened == kind:
                    found.append("\n".join(current) + "\n")
                opened = None
        elif opened is not None:
            current.append(line)
    return found


def commands() -> list[list[str]]:
    """Every `annotator ...` line of the section's plain blocks, in order, as its words."""
    return [shlex.split(line, comments=True)[1:] for block in blocks() for line in block.splitlines()
            if line.startswith("annotator ")]


def printed() -> list[str]:
    """The lines the section shows the imports printing (its plain block that holds no command)."""
    [block] = [block for block in blocks() if "annotator " not in block]
    return block.splitlines()


def _label(engine) -> None:  # noqa: ANN001 - an Engine
    """aoi and ren label every claim of travel-en, each in their own transactions."""
    for name in ("aoi", "ren"):
        with session_scope(engine) as session:
            me = get_user(session, name)
            dataset = session.exec(select(Dataset.id).where(Dataset.name == "travel-en")).one()
            for claim in session.exec(select(Claim).where(Claim.dataset_id == dataset).order_by(Claim.id)).all():
                value = ("contradict" if claim.claim_id in CONTRADICT else "insufficient" if claim.claim_id in INSUFFICIENT
                         else "support")
                if name == "ren" and claim.claim_id == DISPUTED:
                    value = "support"
                save_label(session, me, claim.id, value, severity="amount_or_deadline" if value == "contradict" else None)


REVIEWED = {
    "travel-05-c1": "The hotel limit in London is 210 GBP per night, approx. 245 EUR.",
    "travel-05-c3": "Other UK cities have a limit of 140 GBP.",
    "travel-05-c4": "A rate above the limit must be approved before you book.",
    "travel-06-c1": "A taxi is reimbursed when no train or bus runs, e.g. after 11 p.m.",
    "travel-06-c2": "Keep the receipt", "travel-06-c2-2": "and write the reason on the claim.",
    "travel-06-c3": "Ride-hailing services count as taxis.",
}
"""The claims of two travel-en cases after the walk-through's review (merge, split), in order."""


def _texts(engine, *case_ids: str) -> dict[str, str]:  # noqa: ANN001 - an Engine
    """{claim id: text} of the cases' claims, in case and queue order."""
    from annotator.models import Case

    with session_scope(engine) as session:
        rows = session.exec(select(Claim.claim_id, Claim.text).join(Case, Case.id == Claim.case_pk)
                            .where(Case.case_id.in_(case_ids)).order_by(Case.position, Claim.position)).all()
    return dict(rows)


def _ja_case(engine) -> list[str]:  # noqa: ANN001
    """The case ids of travel-ja."""
    from annotator.models import Case

    with session_scope(engine) as session:
        return list(session.exec(select(Case.case_id).join(Dataset, Dataset.id == Case.dataset_id)
                                 .where(Dataset.name == "travel-ja")).all())


def _adjudicate(engine) -> None:  # noqa: ANN001
    with session_scope(engine) as session:
        claim = session.exec(select(Claim).where(Claim.claim_id == DISPUTED)).one()
        adjudicate(session, get_user(session, "mika"), claim.id, "insufficient",
                   rationale="a bare amount: no passage gives the rate in euros")


def test_the_walk_through_names_the_commands_it_runs():
    words = [tuple(command[:2]) for command in commands()]
    assert words[:2] == [("import", "data/ragas-en.jsonl"), ("import", "data/ragas-ja.jsonl")]
    assert {("release", "create"), ("release", "export"), ("run", "import"), ("assign", "--labelers")} <= set(words)
    assert {command[0] for command in commands()} - {"import", "claims", "assign", "agreement", "queue", "release", "run"} == set(NOT_RUN)


def test_the_walk_through_runs_as_written(any_db_url, tmp_path, monkeypatch):
    for name in FILES:
        (tmp_path / "data").mkdir(exist_ok=True)
        shutil.copyfile(REPO / "data" / name, tmp_path / "data" / name)
    monkeypatch.chdir(tmp_path)
    engine = init_db(any_db_url)
    outputs = []
    try:
        for command in commands():
            if command[0] in NOT_RUN:
                continue
            if command[0] == "assign":
                with session_scope(engine) as session:
                    for name, role in (("aoi", "labeler"), ("ren", "labeler"), ("mika", "adjudicator")):
                        add_user(session, OPERATOR, name, [role])
            if command[0] == "release" and command[1] == "create":
                _adjudicate(engine)
            ran = annotator(*command, "--db", any_db_url)
            assert (ran.code, ran.err) == (0, ""), (command, ran.err)
            outputs.append(ran.out)
            if command[0] == "assign":
                assert _texts(engine, "travel-05", "travel-06") == REVIEWED
                assert "ご不明点はお問い合わせください。" not in _texts(engine, *_ja_case(engine))
                _label(engine)
            if command[:2] == ["queue", "adjudication"]:
                assert ran.out.splitlines()[:2] == ["1 claims waiting for adjudication",
                                                    f"  {DISPUTED}\ttravel-05\tdisputed\tinsufficient/support"]
    finally:
        engine.dispose()
    said = "\n".join(outputs).splitlines()
    assert [line for line in printed() if line not in said] == []
    assert "Wrote 8 cases (24 claims) of release travel-gold-v1 to travel-gold-v1.ragas.jsonl" in said
    assert "Wrote 8 cases (24 claims) of release travel-gold-v1 to travel-gold-v1.ragas.jsonl" in " ".join(section().split())
    assert any(line.startswith("Run rag-2026-05 stored: 8 cases") for line in said)
    exported = [json.loads(line) for line in (tmp_path / "travel-gold-v1.ragas.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [record["case_id"] for record in exported] == [f"travel-0{n}" for n in range(1, 9)]
    gold = {claim["claim_id"]: claim["gold_label"] for record in exported for claim in record["gold_claims"]}
    assert (gold["travel-01-c3"], gold[DISPUTED], Counter(gold.values())) == (
        "contradict", "insufficient", Counter(support=22, insufficient=1, contradict=1))

    [snippet] = blocks("python")
    done = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert ast.literal_eval(done.stdout.strip().splitlines()[-1]) == {"contradict": 1, "insufficient": 1, "support": 22}


def claims_of(name: str) -> dict[str, list[str]]:
    """Each case of data/NAME by its question -> its claims' texts, as `import --format ragas` cuts them."""
    return {case.question: [claim.text for claim in case.claims]
            for case in formats.read_cases(REPO / "data" / name, "ragas").records}


def test_the_english_answers_are_cut_as_the_walk_through_says():
    claims = claims_of("ragas-en.jsonl")
    assert claims["Can I claim mileage when I drive my own car?"] == [
        "Yes, driving your own car is reimbursed at 0.30 EUR per km.", "Trips shorter than 3.5 km one way are not reimbursed.",
        "Log each trip in the mileage form, i.e. date, route and distance."]
    assert claims["Is a taxi from the airport reimbursed?"] == [
        "A taxi is reimbursed when no train or bus runs, e.g. after 11 p.m.",
        "Keep the receipt and write the reason on the claim.", "Ride-hailing services count as taxis."]
    assert claims["What per diem applies on a trip to the U.S.?"] == [
        "The per diem in the U.S. is 60 USD per day.", "It covers meals and small expenses, e.g. tips.",
        "It is paid with the next monthly salary."]
    assert claims["What hotel rate is allowed in London?"][:2] == [  # the splitter's miss the review merges
        "The hotel limit in London is 210 GBP per night, approx.", "245 EUR."]
    assert claims["How soon must I hand in my expense report after a trip?"][-1] == "Thank you for asking, and have a safe trip!"
    assert sum(map(len, claims.values())) == 25


def test_the_japanese_answers_are_cut_as_the_walk_through_says():
    claims = claims_of("ragas-ja.jsonl")
    assert claims["国内出張の日当はいくらですか？"] == ["国内出張の日当は１日２，５００円です。", "日帰り出張の場合は１，０００円になります。"]
    assert claims["出張申請書の件名はどう書けばよいですか？"] == [  # 。 inside 「」 ends nothing
        "件名は「出張申請（国内）。行き先」の形で書いてください。", "承認は所属長が行います。"]
    assert claims["出張の精算に必要な書類は何ですか？"] == [  # a bullet item is a claim, its bullet dropped
        "必要な書類は次のとおりです。", "出張申請書（承認済みのもの）", "領収書の原本", "行程表"]
    assert claims["出張中のタクシー代はいくらまで精算できますか？"] == ["タクシー代は上限なく精算できます！", "領収書は必ず保管してください。"]
    assert claims["深夜に帰宅するときのタクシー代は対象ですか？"] == [
        "深夜の帰宅が対象かどうか、ですね？", "２２時以降に出張先から帰宅する場合は対象です。"]
    assert claims["海外出張の保険はどうなっていますか？"] == [  # a line break ends a sentence
        "海外出張保険は会社が手配します。", "加入手続きは総務部が出発の５営業日前までに行います。", "ご不明点はお問い合わせください。"]
    assert claims["海外出張の航空券の座席クラスは？"] == [  # 。 inside （） ends nothing either
        "エコノミークラス（８時間を超える便はプレミアムエコノミー。事前承認が必要）を利用します。", "ビジネスクラスは役員のみです！"]
    assert claims["自家用車で出張したときのガソリン代は？"] == [  # １２．５ is one number
        "片道１２．５ｋｍ未満の移動は精算の対象外です。", "それ以上は１ｋｍあたり２５円で計算します。"]


@pytest.mark.parametrize("name", FILES)
def test_every_claim_the_walk_through_quotes_is_one_the_files_give(name):
    """A text in backticks in step 2 that reads as a claim of the file's language is one of its claims."""
    step = section().split("**2. Look at the claims.**")[1].split("**3.")[0]
    quoted = [text for text in re.findall(r"`([^`]+)`", " ".join(step.split()))
              if text.endswith((".", "。", "！", "？", "!", "）")) or text in ("領収書の原本", "行程表")]
    japanese = name.endswith("-ja.jsonl")
    mine = [text for text in quoted if bool(re.search("[\u3040-\u30ff\u4e00-\u9fff]", text)) == japanese]
    given = {text for texts in claims_of(name).values() for text in texts}
    assert mine and [text for text in mine if text not in given] == []
