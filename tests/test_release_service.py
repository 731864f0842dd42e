"""Creating gold releases from the database, on SQLite and PostgreSQL: refusal while claims are not
final, --only-final, the gold records, byte-identical data files, hashes, rows and events."""

from __future__ import annotations

import gc
import json
import os
import signal
import stat
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from sqlmodel import Session, func, select

from annotator import release
from annotator.db import session_scope
from annotator.services import releases
from annotator.services.access import OPERATOR
from annotator.errors import (
    InvalidValueError,
    NotFoundError,
    ReleaseBlockedError,
    ReleaseExistsError,
    ReleaseVerifyError,
    ReleaseWriteError,
)
from annotator.models import (
    Adjudication,
    Case,
    Claim,
    ClaimPassage,
    Dataset,
    GoldLabel,
    GoldRelease,
    Hold,
    Label,
    LabelEvent,
    Passage,
    User,
    utcnow,
)
from annotator.release import check_release, release_layout, sha256_file
from annotator.services.releases import (
    check_stored_release,
    create_release,
    list_releases,
    most_severe,
    release_files,
    verify_stored_release,
)

T0 = utcnow() - timedelta(days=1)
N_BOOT = 100


class Seeder:
    """Builds a small database directly with the models."""

    def __init__(self, session: Session, dataset: str = "pilot"):
        self.session = session
        self.dataset = Dataset(name=dataset, source_format="jsonl")
        session.add(self.dataset)
        session.flush()
        self.users: dict[str, User] = {}
        self.cases: dict[str, Case] = {}
        self.passages: dict[str, Passage] = {}

    def user(self, name: str, roles: str = "labeler") -> User:
        if name not in self.users:
            user = self.session.exec(select(User).where(User.name == name)).first()
            if user is None:
                user = User(name=name, roles=roles)
                self.session.add(user)
                self.session.flush()
            self.users[name] = user
        return self.users[name]

    def case(self, case_id: str, slice_: str = "normal", split: str = "dev") -> Case:
        if case_id not in self.cases:
            case = Case(dataset_id=self.dataset.id, case_id=case_id, position=len(self.cases), slice=slice_, split=split,
                        created_at=T0, updated_at=T0)
            self.session.add(case)
            self.session.flush()
            self.cases[case_id] = case
        return self.cases[case_id]

    def passage(self, passage_id: str) -> Passage:
        if passage_id not in self.passages:
            passage = Passage(dataset_id=self.dataset.id, passage_id=passage_id, text=f"text of {passage_id}")
            self.session.add(passage)
            self.session.flush()
            self.passages[passage_id] = passage
        return self.passages[passage_id]

    def claim(self, case_id: str, claim_id: str, *, text: str = "", slice_: str = "normal", split: str = "dev",
              passages: tuple[str, ...] = ("p1",), labels: dict | None = None,
              adjudication: tuple | None = None, position: int | None = None) -> Claim:
        """labels: labeler -> value or (value, severity[, rationale]); adjudication:
        (adjudicator, value[, severity, rationale])."""
        case = self.case(case_id, slice_, split)
        n_in_case = len(self.session.exec(select(Claim.id).where(Claim.case_pk == case.id)).all())
        claim = Claim(dataset_id=self.dataset.id, case_pk=case.id, claim_id=claim_id, text=text or f"claim {claim_id}",
                      position=n_in_case if position is None else position, created_at=T0, updated_at=T0)
        self.session.add(claim)
        self.session.flush()
        for index, passage_id in enumerate(passages):
            self.session.add(ClaimPassage(claim_pk=claim.id, passage_pk=self.passage(passage_id).id, position=index))
        for labeler, spec in (labels or {}).items():
            value, severity, rationale = (*((spec,) if isinstance(spec, str) else spec), None, "")[:3]
            self.session.add(Label(claim_pk=claim.id, labeler_pk=self.user(labeler).id, value=value, severity=severity,
                                   rationale=rationale or "", passage_ids=list(passages[:1]), guideline_version="g1",
                                   created_at=T0, updated_at=T0))
        if adjudication is not None:
            adjudicator, value, severity, rationale = (*adjudication, None, "")[:4]
            self.session.add(Adjudication(claim_pk=claim.id, adjudicator_pk=self.user(adjudicator, "adjudicator").id,
                                          value=value, severity=severity, rationale=rationale or "",
                                          decided_at=T0 + timedelta(hours=1)))
        self.session.flush()
        return claim

    def hold(self, case_id: str, reason: str = "missing_logs") -> None:
        self.session.add(Hold(case_pk=self.cases[case_id].id, reason=reason))
        self.session.flush()


def seed_final(session: Session, dataset: str = "pilot") -> Seeder:
    """Three final claims: two agreed, one adjudicated, over two cases and two slices."""
    seed = Seeder(session, dataset)
    seed.claim("q1", "q1-a", text="返金は30日以内です。", passages=("p2", "p1"),
               labels={"bob": ("support", None, "p2 says so"), "alice": "support"})
    seed.claim("q1", "q1-b", passages=("p1",), labels={"alice": "support", "bob": ("contradict", "legal", "=wrong")},
               adjudication=("carol", "contradict", "amount_or_deadline", "p1 gives 14 days"))
    seed.claim("q2", "q2-a", slice_="paraphrase", split="holdout", passages=("p3",),
               labels={"alice": ("contradict", "amount_or_deadline"), "bob": ("contradict", "legal")})
    return seed


def _lines(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "gold.jsonl").read_text(encoding="utf-8").splitlines()]


def _count(engine, model) -> int:
    with Session(engine) as session:
        return session.exec(select(func.count()).select_from(model)).one()


# ---------------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("state, extra", [
    ("disputed", lambda s: s.claim("q3", "q3-a", labels={"alice": "support", "bob": "insufficient"})),
    ("on_hold", lambda s: (s.claim("q3", "q3-a", labels={"alice": "support"}), s.hold("q3"))),
    ("unlabeled", lambda s: s.claim("q3", "q3-a")),
    ("single", lambda s: s.claim("q3", "q3-a", labels={"alice": "support"})),
])
def test_create_is_refused_while_a_claim_in_scope_is_not_final_and_writes_nothing(any_engine, tmp_path, state, extra):
    with session_scope(any_engine) as session:
        extra(seed_final(session))
    out = tmp_path / "releases"
    with pytest.raises(ReleaseBlockedError) as refused, session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", out_dir=out, n_bootstrap=N_BOOT)
    assert str(refused.value) == (
        f"1 of 4 claims in any dataset are not final ({state} 1): label, adjudicate or lift the holds on them first, "
        'or release only the agreed and adjudicated claims ("only final" in the app, --only-final on the command line)'
    )
    assert not out.exists()
    assert _count(any_engine, GoldRelease) == 0 and _count(any_engine, GoldLabel) == 0


def test_refusal_counts_every_non_final_state(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed = seed_final(session)
        seed.claim("q3", "q3-a", labels={"alice": "support", "bob": "insufficient"})
        seed.claim("q3", "q3-b", labels={"alice": "support", "bob": "contradict"})
        seed.claim("q4", "q4-a")
        seed.claim("q5", "q5-a", labels={"alice": "support"})
        seed.hold("q5")
    with pytest.raises(ReleaseBlockedError, match=r"4 of 7 claims in dataset 'pilot' are not final \(unlabeled 1, disputed 2, on_hold 1\)"):
        with session_scope(any_engine) as session:
            create_release(session, OPERATOR, "v1", dataset="pilot", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert not (tmp_path / "out").exists()


def test_a_stale_adjudication_blocks_the_release(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed = seed_final(session)
        claim = seed.claim("q3", "q3-a", labels={"alice": "support", "bob": "contradict"}, adjudication=("carol", "support"))
        claim.updated_at = T0 + timedelta(hours=2)
        session.add(claim)
    with pytest.raises(ReleaseBlockedError, match=r"\(stale 1\)"), session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)


def test_a_scope_without_claims_is_refused(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        Seeder(session, "empty")
    with pytest.raises(ReleaseBlockedError, match="no claim in dataset 'empty' to release"), session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", dataset="empty", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    with pytest.raises(ReleaseBlockedError, match="no claim in any dataset"), session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert not (tmp_path / "out").exists()


def test_only_final_with_no_final_claim_is_refused(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        Seeder(session).claim("q1", "q1-a", labels={"alice": "support", "bob": "contradict"})
    with pytest.raises(ReleaseBlockedError, match=r"no agreed or adjudicated claim in any dataset to release \(disputed 1\)"):
        with session_scope(any_engine) as session:
            create_release(session, OPERATOR, "v1", only_final=True, out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert not (tmp_path / "out").exists()


def test_an_unknown_dataset_is_refused(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with pytest.raises(NotFoundError, match="no dataset named 'nope'"), session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", dataset="nope", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)


def test_a_bad_release_name_is_refused(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with pytest.raises(InvalidValueError, match="release name"), session_scope(any_engine) as session:
        create_release(session, OPERATOR, "../v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert not (tmp_path / "out").exists()


def test_a_name_already_released_or_on_disk_is_refused_writing_nothing(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", out_dir=tmp_path / "a", n_bootstrap=N_BOOT)
    with pytest.raises(ReleaseExistsError, match="'v1' exists already"), session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", out_dir=tmp_path / "b", n_bootstrap=N_BOOT)
    assert not (tmp_path / "b").exists()
    (tmp_path / "a" / "v2").mkdir()
    with pytest.raises(ReleaseExistsError, match="v2 exists already"), session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v2", out_dir=tmp_path / "a", n_bootstrap=N_BOOT)
    assert list((tmp_path / "a" / "v2").iterdir()) == []
    assert _count(any_engine, GoldRelease) == 1


def test_a_failure_while_writing_leaves_no_folder_no_temporary_folder_and_no_rows(any_engine, tmp_path, monkeypatch):
    with session_scope(any_engine) as session:
        seed_final(session)

    def broken_parquet(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(release.pq, "write_table", broken_parquet)
    with pytest.raises(ReleaseWriteError) as failed, session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert str(failed.value) == f"cannot write the release folder {tmp_path / 'out' / 'v1'}: disk full; nothing was written"
    assert list((tmp_path / "out").iterdir()) == []
    assert _count(any_engine, GoldRelease) == 0 and _count(any_engine, GoldLabel) == 0


def test_an_out_dir_that_cannot_be_created_is_a_clear_error_with_no_rows(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with pytest.raises(ReleaseWriteError) as failed, session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", out_dir=Path("/proc/nope"), n_bootstrap=N_BOOT)
    assert str(failed.value) == (
        "cannot write the release folder /proc/nope/v1: No such file or directory (/proc/nope); nothing was written"
    )
    assert _count(any_engine, GoldRelease) == 0 and _count(any_engine, GoldLabel) == 0 and _count(any_engine, LabelEvent) == 0


def test_an_out_dir_that_is_a_file_is_a_clear_error_with_no_rows(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    target = tmp_path / "out"
    target.write_text("not a folder", encoding="utf-8")
    with pytest.raises(ReleaseWriteError) as failed, session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", out_dir=target, n_bootstrap=N_BOOT)
    assert str(failed.value) == f"cannot write the release folder {target / 'v1'}: {target} is a file, not a folder; nothing was written"
    assert target.is_file() and target.read_text(encoding="utf-8") == "not a folder"
    assert not [path.name for path in tmp_path.iterdir() if "v1" in path.name]
    assert _count(any_engine, GoldRelease) == 0 and _count(any_engine, GoldLabel) == 0 and _count(any_engine, LabelEvent) == 0


def test_a_name_differing_only_in_case_from_a_stored_release_is_refused_naming_it(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with session_scope(any_engine) as session:
        create_release(session, OPERATOR, "r1", out_dir=tmp_path / "a", n_bootstrap=N_BOOT)
    with pytest.raises(ReleaseExistsError) as refused, session_scope(any_engine) as session:
        create_release(session, OPERATOR, "R1", out_dir=tmp_path / "b", n_bootstrap=N_BOOT)
    assert str(refused.value) == (
        "a release named 'r1' exists already and 'R1' differs from it only in case "
        "(the same folder on case-insensitive file systems): choose a new name"
    )
    assert not (tmp_path / "b").exists()
    assert _count(any_engine, GoldRelease) == 1


def test_a_name_differing_only_in_case_from_a_folder_in_out_dir_is_refused_naming_it(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    (tmp_path / "out" / "Gold-V1").mkdir(parents=True)
    with pytest.raises(ReleaseExistsError) as refused, session_scope(any_engine) as session:
        create_release(session, OPERATOR, "gold-v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert str(refused.value) == (
        f"release folder {tmp_path / 'out' / 'Gold-V1'} exists already and its name differs from 'gold-v1' only in case "
        "(the same folder on case-insensitive file systems): choose a new name"
    )
    assert [path.name for path in (tmp_path / "out").iterdir()] == ["Gold-V1"]
    assert _count(any_engine, GoldRelease) == 0


def test_a_failure_while_writing_rolls_back_to_the_savepoint_even_if_the_caller_goes_on(any_engine, tmp_path, monkeypatch):
    with session_scope(any_engine) as session:
        seed_final(session)
    monkeypatch.setattr(release.pq, "write_table", lambda *a, **k: (_ for _ in ()).throw(OSError("disk full")))
    with session_scope(any_engine) as session:
        with pytest.raises(ReleaseWriteError, match="disk full"):
            create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert _count(any_engine, GoldRelease) == 0 and _count(any_engine, GoldLabel) == 0


# ---------------------------------------------------------------------------------- content


def test_gold_jsonl_holds_gold_label_resolution_severity_labels_and_adjudication(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", creator="admin", n_bootstrap=N_BOOT)
    assert created.path == tmp_path / "out" / "v1" and created.name == "v1"
    assert _lines(created.path) == [
        {
            "dataset": "pilot", "case_id": "q1", "claim_id": "q1-a", "claim": "返金は30日以内です。",
            "gold_label": "support", "resolution": "agreed", "severity": None, "slice": "normal", "split": "dev",
            "passage_ids": ["p2", "p1"],
            "labels": [
                {"labeler": "alice", "label": "support", "rationale": "", "passage_ids": ["p2"], "severity": None},
                {"labeler": "bob", "label": "support", "rationale": "p2 says so", "passage_ids": ["p2"], "severity": None},
            ],
            "adjudication": None,
            "case_metadata": {},
        },
        {
            "dataset": "pilot", "case_id": "q1", "claim_id": "q1-b", "claim": "claim q1-b",
            "gold_label": "contradict", "resolution": "adjudicated", "severity": "amount_or_deadline",
            "slice": "normal", "split": "dev", "passage_ids": ["p1"],
            "labels": [
                {"labeler": "alice", "label": "support", "rationale": "", "passage_ids": ["p1"], "severity": None},
                {"labeler": "bob", "label": "contradict", "rationale": "=wrong", "passage_ids": ["p1"], "severity": "legal"},
            ],
            "adjudication": {"adjudicator": "carol", "label": "contradict", "rationale": "p1 gives 14 days",
                             "severity": "amount_or_deadline"},
            "case_metadata": {},
        },
        {
            "dataset": "pilot", "case_id": "q2", "claim_id": "q2-a", "claim": "claim q2-a",
            "gold_label": "contradict", "resolution": "agreed", "severity": "legal",
            "slice": "paraphrase", "split": "holdout", "passage_ids": ["p3"],
            "labels": [
                {"labeler": "alice", "label": "contradict", "rationale": "", "passage_ids": ["p3"], "severity": "amount_or_deadline"},
                {"labeler": "bob", "label": "contradict", "rationale": "", "passage_ids": ["p3"], "severity": "legal"},
            ],
            "adjudication": None,
            "case_metadata": {},
        },
    ]
    rows = (created.path / "gold.csv").read_bytes().decode("utf-8-sig").splitlines()
    assert "'=wrong" in rows[2] and "=wrong" not in rows[2].replace("'=wrong", "")


def test_records_follow_dataset_case_position_and_claim_position(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        other = Seeder(session, "b-set")
        other.claim("z", "z-1", labels={"alice": "support", "bob": "support"})
        seed = Seeder(session, "a-set")
        seed.claim("late", "late-2", labels={"alice": "support", "bob": "support"}, position=2)
        seed.claim("late", "late-1", labels={"alice": "support", "bob": "support"}, position=1)
        seed.claim("early", "early-1", labels={"alice": "support", "bob": "support"})
        seed.cases["early"].position = -1
        session.add(seed.cases["early"])
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert [(r["dataset"], r["claim_id"]) for r in _lines(created.path)] == [
        ("a-set", "early-1"), ("a-set", "late-1"), ("a-set", "late-2"), ("b-set", "z-1"),
    ]


def test_a_named_dataset_releases_only_its_own_claims(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
        other = Seeder(session, "other")
        other.claim("x", "x-1", labels={"dan": "insufficient", "eve": "support"})
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", dataset="pilot", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert [r["claim_id"] for r in _lines(created.path)] == ["q1-a", "q1-b", "q2-a"]
    manifest = json.loads((created.path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["scope"] == {"dataset": "pilot", "datasets": ["pilot"], "only_final": False, "claims_in_scope": 3}


def test_only_final_releases_exactly_the_agreed_and_adjudicated_claims_and_counts_the_rest(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed = seed_final(session)
        seed.claim("q3", "q3-a", labels={"alice": "support", "bob": "insufficient"})
        seed.claim("q3", "q3-b")
        seed.claim("q4", "q4-a", labels={"alice": "support"})
        seed.claim("q5", "q5-a", labels={"alice": "support", "bob": "support"})
        seed.hold("q5")
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", only_final=True, out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert [r["claim_id"] for r in _lines(created.path)] == ["q1-a", "q1-b", "q2-a"]
    assert created.excluded == {"unlabeled": 1, "single": 1, "disputed": 1, "on_hold": 1}
    manifest = json.loads((created.path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["excluded"] == {
        "counts": {"unlabeled": 1, "single": 1, "disputed": 1, "on_hold": 1},
        "claim_ids": {"unlabeled": {"pilot": ["q3-b"]}, "single": {"pilot": ["q4-a"]},
                      "disputed": {"pilot": ["q3-a"]}, "on_hold": {"pilot": ["q5-a"]}},
    }
    assert manifest["scope"]["claims_in_scope"] == 7 and manifest["scope"]["only_final"] is True
    assert manifest["counts"]["claims"] == 3
    with Session(any_engine) as session:
        gold = session.exec(select(Claim.claim_id, GoldLabel.gold_label, GoldLabel.resolution)
                            .join(Claim, Claim.id == GoldLabel.claim_pk).order_by(Claim.claim_id)).all()
    assert [tuple(row) for row in gold] == [
        ("q1-a", "support", "agreed"), ("q1-b", "contradict", "adjudicated"), ("q2-a", "contradict", "agreed"),
    ]


def test_only_final_with_everything_final_excludes_nothing(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", only_final=True, out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert created.excluded == {}
    manifest = json.loads((created.path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["excluded"] == {"counts": {}, "claim_ids": {}}


def test_a_single_leak_is_noted_as_a_release_blocker_in_the_manifest(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed = seed_final(session)
        seed.claim("q3", "q3-a", labels={"alice": ("contradict", "leak"), "bob": ("contradict", "other")})
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    manifest = json.loads((created.path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["release_blockers"] == {"leak": {"claims": 1, "claim_ids": {"pilot": ["q3-a"]}}}
    assert _lines(created.path)[-1]["severity"] == "leak"


def test_no_leak_means_no_release_blockers(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert json.loads((created.path / "manifest.json").read_text(encoding="utf-8"))["release_blockers"] == {}


@pytest.mark.parametrize("severities, expected", [
    ((), None),
    ((None, None), None),
    (("other", "legal"), "legal"),
    (("amount_or_deadline", "leak", None), "leak"),
    (("other", "custom"), "other"),
])
def test_most_severe_follows_the_severity_order(severities, expected):
    assert most_severe(severities) == expected


# ---------------------------------------------------------------------------------- files


def test_the_same_database_state_under_two_names_gives_byte_identical_data_files(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with session_scope(any_engine) as session:
        first = create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", creator="ann", n_bootstrap=N_BOOT)
    with session_scope(any_engine) as session:
        second = create_release(session, OPERATOR, "v2", out_dir=tmp_path / "out", creator="ben", n_bootstrap=N_BOOT)
    for name in ("gold.jsonl", "gold.csv", "gold.parquet"):
        assert (first.path / name).read_bytes() == (second.path / name).read_bytes(), name
    assert first.manifest_sha256 != second.manifest_sha256


def test_manifest_records_hashes_counts_agreement_and_provenance(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", creator="admin", n_bootstrap=N_BOOT,
                                 source_hashes={"pilot.jsonl": "ab" * 32})
    manifest = json.loads((created.path / "manifest.json").read_text(encoding="utf-8"))
    for name in ("gold.jsonl", "gold.csv", "gold.parquet"):
        assert manifest["files"][name] == {"sha256": sha256_file(created.path / name),
                                           "bytes": (created.path / name).stat().st_size}
    assert created.manifest_sha256 == sha256_file(created.path / "manifest.json")
    assert manifest["name"] == "v1" and manifest["creator"] == "admin"
    assert manifest["created_at"].endswith("+00:00")
    assert manifest["counts"] == created.counts == {
        "claims": 3,
        "by_label": {"support": 1, "contradict": 2, "insufficient": 0},
        "by_slice": {"normal": 2, "paraphrase": 1},
        "by_split": {"dev": 2, "holdout": 1},
        "by_resolution": {"agreed": 2, "adjudicated": 1},
        "by_severity": {"amount_or_deadline": 1, "legal": 1},
    }
    assert manifest["guideline_versions"] == ["g1"]
    assert manifest["source_data_hashes"] == {"pilot.jsonl": "ab" * 32}
    assert manifest["schema_version"] == release.SCHEMA_VERSION
    agreement = manifest["agreement"]
    assert agreement["n_items"] == 3 and agreement["n_in_scope"] == 3
    assert agreement["percent_agreement"] == pytest.approx(2 / 3)
    assert set(agreement["by_slice"]) == {"normal", "paraphrase"}
    assert agreement["by_slice"]["paraphrase"]["percent_agreement"] == 1.0


def test_agreement_in_the_manifest_uses_only_the_released_claims_blind_labels(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed = seed_final(session)
        seed.claim("q3", "q3-a", labels={"alice": "support", "bob": "insufficient"})
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", only_final=True, out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    agreement = json.loads((created.path / "manifest.json").read_text(encoding="utf-8"))["agreement"]
    assert agreement["n_items"] == 3 and agreement["percent_agreement"] == pytest.approx(2 / 3)


def test_verify_passes_on_a_fresh_release_and_names_a_changed_file(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert check_release(created.path).ok
    csv_path = created.path / "gold.csv"
    data = bytearray(csv_path.read_bytes())
    data[-3] ^= 0x20
    csv_path.write_bytes(bytes(data))
    assert [problem.split(":")[0] for problem in release.verify_release(created.path).problems] == ["gold.csv"]


def test_verify_stored_release_checks_the_manifest_against_the_recorded_hash(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    with Session(any_engine) as session:
        fresh = verify_stored_release(session, OPERATOR, "v1")
        assert fresh.ok and fresh.problems == () and fresh.manifest_sha256 == created.manifest_sha256
        assert check_stored_release(session, OPERATOR, "v1") == fresh
    manifest_path = created.path / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["counts"]["claims"] = 999
    manifest_path.write_text(release.manifest_text(manifest), encoding="utf-8")
    edited = sha256_file(manifest_path)
    assert check_release(created.path).ok  # the folder alone cannot tell
    problem = (
        f"manifest.json does not have the expected SHA-256: it is {edited}, expected {created.manifest_sha256} "
        "(the file was changed after the release was created, or the SHA-256 given is another release's)"
    )
    with Session(any_engine) as session:
        result = verify_stored_release(session, OPERATOR, "v1")
        assert not result.ok and result.problems == (problem,) and result.manifest_sha256 == edited
        with pytest.raises(ReleaseVerifyError) as failed:
            check_stored_release(session, OPERATOR, "v1")
        stored_path = session.exec(select(GoldRelease.path)).one()
        assert str(failed.value) == f"release 'v1' ({stored_path}) does not match what was released: {problem}"
        with pytest.raises(NotFoundError, match="no release named 'v9'"):
            verify_stored_release(session, OPERATOR, "v9")


def test_verify_stored_release_reports_a_release_without_a_recorded_hash(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    with session_scope(any_engine) as session:
        stored = session.exec(select(GoldRelease)).one()
        stored.manifest_sha256 = ""
        session.add(stored)
    with Session(any_engine) as session:
        result = verify_stored_release(session, OPERATOR, "v1")
    assert not result.ok and result.problems == (
        "manifest.json: the database records no SHA-256 for release 'v1', so the manifest itself cannot be checked",
    )


def test_japanese_text_is_raw_utf8_in_gold_jsonl_and_manifest(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session).claim("q9", "q9-a", text="解約は書面で行います。", slice_="言い換え",
                                  labels={"alice": ("support", None, "第3条"), "bob": "support"})
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", creator="田中", n_bootstrap=N_BOOT)
    jsonl = (created.path / "gold.jsonl").read_bytes()
    for text in ("返金は30日以内です。", "解約は書面で行います。", "言い換え", "第3条"):
        assert text.encode() in jsonl, text
    assert b"\\u" not in jsonl
    manifest = (created.path / "manifest.json").read_bytes()
    assert "田中".encode() in manifest and '"言い換え"'.encode() in manifest and b"\\u" not in manifest


def test_a_created_release_folder_is_0700_with_0600_files(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert stat.S_IMODE(created.path.stat().st_mode) == 0o700
    assert {stat.S_IMODE(path.stat().st_mode) for path in created.path.iterdir()} == {0o600}


# ---------------------------------------------------------------------------------- rows, lists


def test_create_stores_the_release_its_gold_labels_and_an_event(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session).user("admin", "admin")
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", creator="admin", n_bootstrap=N_BOOT)
    with Session(any_engine) as session:
        stored = session.exec(select(GoldRelease)).one()
        assert (stored.name, stored.creator, stored.manifest_sha256) == ("v1", "admin", created.manifest_sha256)
        assert Path(stored.path) == (tmp_path / "out" / "v1").resolve()
        assert stored.counts == created.counts and stored.scope["dataset"] is None
        assert len(session.exec(select(GoldLabel).where(GoldLabel.release_pk == stored.id)).all()) == 3
        event = session.exec(select(LabelEvent).where(LabelEvent.entity == "release")).one()
        admin = session.exec(select(User).where(User.name == "admin")).one()
        assert (event.action, event.entity_pk, event.actor_pk) == ("create", stored.id, admin.id)
        assert event.after["manifest_sha256"] == created.manifest_sha256


def test_list_releases_is_newest_first_and_release_files_gives_the_files_there_are(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    for name in ("v1", "v2"):
        with session_scope(any_engine) as session:
            create_release(session, OPERATOR, name, out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    with Session(any_engine) as session:
        assert [r.name for r in list_releases(session, OPERATOR)] == ["v2", "v1"]
        files = release_files(session, OPERATOR, "v1")
        assert files == release_layout((tmp_path / "out" / "v1").resolve()).present_files()
        assert list(files) == ["gold.jsonl", "gold.csv", "gold.parquet", "cases.jsonl", "manifest.json"]
        assert all(path.is_file() for path in files.values())
        with pytest.raises(NotFoundError, match="no release named 'v9'"):
            release_files(session, OPERATOR, "v9")


def test_the_garbage_collector_is_running_again_after_a_create_or_a_refusal(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session).claim("q3", "q3-a")
    with pytest.raises(ReleaseBlockedError), session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert gc.isenabled()
    with session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", only_final=True, out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    assert gc.isenabled()


# ---------------------------------------------------------------------------------- cases.jsonl, excel


def test_the_same_database_state_gives_byte_identical_cases_and_excel_files_under_two_names(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
        for case in session.exec(select(Case)).all():
            case.meta = {"principal": "社員", "expected_behavior": "answer", "required_evidence_ids": ["p1"]}
            session.add(case)
    with session_scope(any_engine) as session:
        first = create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT, excel=True)
    with session_scope(any_engine) as session:
        second = create_release(session, OPERATOR, "v2", out_dir=tmp_path / "out", n_bootstrap=N_BOOT, excel=True)
    for name in ("gold.jsonl", "gold.csv", "gold.parquet", "cases.jsonl", "gold.excel.csv"):
        assert (first.path / name).read_bytes() == (second.path / name).read_bytes(), name
    assert _lines(first.path)[0]["case_metadata"] == {"expected_behavior": "answer", "principal": "社員",
                                                      "required_evidence_ids": ["p1"]}
    assert '"{""expected_behavior"":""answer"",""principal"":""社員"",""required_evidence_ids"":[""p1""]}"' in \
        (first.path / "gold.csv").read_text(encoding="utf-8-sig")
    assert check_release(first.path, first.manifest_sha256).files == (
        "cases.jsonl", "gold.csv", "gold.excel.csv", "gold.jsonl", "gold.parquet")


def test_cases_jsonl_holds_exactly_the_released_claims_and_the_passages_they_are_shown_with(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed = seed_final(session)
        seed.claim("q1", "q1-c", passages=("p9",), labels={"alice": "support", "bob": "insufficient"})  # disputed
        seed.cases["q1"].question, seed.cases["q1"].meta = "返金の期限は?", {"corpus_release": "2025-01"}
    with session_scope(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", only_final=True, out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    lines = [json.loads(line) for line in (created.path / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [line["case_id"] for line in lines] == ["q1", "q2"]
    assert lines[0] == {
        "case_id": "q1", "question": "返金の期限は?", "answer": "", "slice": "normal", "split": "dev",
        "metadata": {"corpus_release": "2025-01"},
        "passages": [{"passage_id": pid, "doc_id": "", "version": "", "title": "", "text": f"text of {pid}"} for pid in ("p2", "p1")],
        "claims": [{"claim_id": "q1-a", "text": "返金は30日以内です。", "passage_ids": ["p2", "p1"]},
                   {"claim_id": "q1-b", "text": "claim q1-b", "passage_ids": ["p1"]}],
    }


# ---------------------------------------------------------------------------------- compare


def _relabel(engine, claim_id: str, value: str) -> None:
    with session_scope(engine) as session:
        claim = session.exec(select(Claim).where(Claim.claim_id == claim_id)).one()
        for label in session.exec(select(Label).where(Label.claim_pk == claim.id)).all():
            label.value = value
            session.add(label)


def test_compare_releases_names_added_removed_and_changed_claims(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed = seed_final(session)
        seed.claim("q3", "q3-a", labels={"alice": "support", "bob": "insufficient"})  # disputed: left out of v1
    with session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", only_final=True, out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    _relabel(any_engine, "q3-a", "insufficient")  # now agreed: added
    _relabel(any_engine, "q2-a", "support")  # agreed on another label: changed
    with session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v2", only_final=True, out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    with Session(any_engine) as session:
        comparison = releases.compare_releases(session, OPERATOR, "v1", "v2")
    assert comparison.diff.counts() == {"added": 1, "removed": 0, "changed": 1, "unchanged": 2}
    assert [c.to_json() for c in comparison.diff.added] == [
        {"dataset": "pilot", "case_id": "q3", "claim_id": "q3-a", "from": None, "to": "insufficient"}]
    assert [c.to_json() for c in comparison.diff.changed] == [
        {"dataset": "pilot", "case_id": "q2", "claim_id": "q2-a", "from": "contradict", "to": "support"}]
    assert (comparison.old.release, comparison.old.source, comparison.old.claims) == ("v1", "database", 3)
    folders = releases.compare_releases(None, OPERATOR, tmp_path / "out" / "v2", tmp_path / "out" / "v1")
    assert folders.diff.counts() == {"added": 0, "removed": 1, "changed": 1, "unchanged": 2}
    assert folders.to_json()["old"]["source"] == "folder"


def _v1_then_text_passages_and_resolution_changed(engine, out: Path) -> None:  # noqa: ANN001 - an Engine
    """v1 of seed_final; then, the gold labels kept: q1-a's text changes, q1-b is also shown with p2,
    p3's text changes (q2-a is shown with it) and q2-a, agreed, is adjudicated on the same label;
    then v2."""
    with session_scope(engine) as session:
        seed_final(session)
    with session_scope(engine) as session:
        create_release(session, OPERATOR, "v1", out_dir=out, n_bootstrap=N_BOOT)
    with session_scope(engine) as session:
        claims = {claim.claim_id: claim for claim in session.exec(select(Claim)).all()}
        passages = {passage.passage_id: passage for passage in session.exec(select(Passage)).all()}
        claims["q1-a"].text = "返金は14日以内です。"
        passages["p3"].text = "text of p3, revised"
        session.add_all([claims["q1-a"], passages["p3"],
                         ClaimPassage(claim_pk=claims["q1-b"].id, passage_pk=passages["p2"].id, position=1),
                         Adjudication(claim_pk=claims["q2-a"].id, value="contradict", decided_at=utcnow(),
                                      adjudicator_pk=session.exec(select(User.id).where(User.name == "carol")).one())])
    with session_scope(engine) as session:
        create_release(session, OPERATOR, "v2", out_dir=out, n_bootstrap=N_BOOT)


def test_compare_releases_names_claims_whose_text_passages_or_resolution_changed(any_engine, tmp_path):
    _v1_then_text_passages_and_resolution_changed(any_engine, tmp_path / "out")
    with Session(any_engine) as session:
        comparison = releases.compare_releases(session, OPERATOR, "v1", "v2")
    assert comparison.diff.counts() == {"added": 0, "removed": 0, "changed": 0, "unchanged": 3}  # as ever: same gold label
    assert comparison.diff.change_counts() == {"text_or_passages_changed": 3, "resolution_changed": 1, "nothing_changed": 0}
    data = comparison.to_json()
    assert list(data) == ["old", "new", "counts", "changes_by_label", "added", "removed", "changed",
                          "change_counts", "text_or_passages_changed", "resolution_changed"]
    assert data["text_or_passages_changed"] == [
        {"dataset": "pilot", "case_id": "q1", "claim_id": "q1-a", "claim_changed": True, "passage_ids_changed": False,
         "passage_text_changed": []},
        {"dataset": "pilot", "case_id": "q1", "claim_id": "q1-b", "claim_changed": False, "passage_ids_changed": True,
         "passage_text_changed": []},
        {"dataset": "pilot", "case_id": "q2", "claim_id": "q2-a", "claim_changed": False, "passage_ids_changed": False,
         "passage_text_changed": ["p3"]},
    ]
    assert data["resolution_changed"] == [
        {"dataset": "pilot", "case_id": "q2", "claim_id": "q2-a", "from": "agreed", "to": "adjudicated"}]
    same = releases.compare_releases(None, OPERATOR, tmp_path / "out" / "v2", tmp_path / "out" / "v2")
    assert same.diff.change_counts() == {"text_or_passages_changed": 0, "resolution_changed": 0, "nothing_changed": 3}


def test_release_diff_prints_text_passage_and_resolution_changes_and_keeps_the_json_fields(any_engine, tmp_path):
    out = tmp_path / "out"
    _v1_then_text_passages_and_resolution_changed(any_engine, out)
    done = _annotator("release", "diff", str(out / "v1"), str(out / "v2"), db=f"sqlite:///{tmp_path / 'unused.db'}")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        f"{out / 'v1'} (3 claims) -> {out / 'v2'} (3 claims): 0 added, 0 removed, 0 gold label changed, 3 same gold label",
        "  of the claims in both: 3 text or passages changed, 1 resolution changed, 0 unchanged (same gold label, "
        "resolution, text and passages)",
        "text or passages changed (3):",
        "  pilot\tq1\tq1-a\tclaim text",
        "  pilot\tq1\tq1-b\tpassage ids",
        "  pilot\tq2\tq2-a\tpassage text (p3)",
        "resolution changed (1):",
        "  pilot\tq2\tq2-a\tagreed -> adjudicated",
    ]
    done = _annotator("release", "diff", str(out / "v1"), str(out / "v2"), "--json", db=f"sqlite:///{tmp_path / 'unused.db'}")
    data = json.loads(done.stdout)
    assert {key: data[key] for key in ("counts", "changes_by_label", "added", "removed", "changed")} == {
        "counts": {"added": 0, "removed": 0, "changed": 0, "unchanged": 3}, "changes_by_label": [], "added": [],
        "removed": [], "changed": []}
    assert data["change_counts"] == {"text_or_passages_changed": 3, "resolution_changed": 1, "nothing_changed": 0}


def test_compare_releases_refuses_a_release_that_fails_verification_naming_the_file(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    for name in ("v1", "v2"):
        with session_scope(any_engine) as session:
            create_release(session, OPERATOR, name, out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
    cases = tmp_path / "out" / "v2" / "cases.jsonl"
    cases.write_bytes(cases.read_bytes() + b"\n")
    with Session(any_engine) as session, pytest.raises(ReleaseVerifyError, match=r"release 'v2' .*cases.jsonl: changed"):
        releases.compare_releases(session, OPERATOR, "v1", "v2")
    with pytest.raises(ReleaseVerifyError, match="cases.jsonl: changed"):
        releases.compare_releases(None, OPERATOR, tmp_path / "out" / "v1", tmp_path / "out" / "v2")
    with Session(any_engine) as session, pytest.raises(NotFoundError, match="no release named 'v9'"):
        releases.compare_releases(session, OPERATOR, "v1", "v9")


# ---------------------------------------------------------------------------------- crash safety


def _annotator(*args: str, db: str, kill_at: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", release.KILL_AT_ENV)}
    if kill_at:
        env[release.KILL_AT_ENV] = kill_at
    return subprocess.run([sys.executable, "-m", "annotator", *args, "--db", db], env=env, capture_output=True,
                          text=True, timeout=300)


def _world(engine) -> dict:
    with Session(engine) as session:
        return {model.__name__: session.exec(select(func.count()).select_from(model)).one()
                for model in (GoldRelease, GoldLabel, LabelEvent)}


def _accepted(out: Path) -> list[str]:
    """The entries of `out` (hidden ones too) that `release verify` accepts."""
    return [entry.name for entry in sorted(out.iterdir()) if release.verify_release(entry).ok] if out.exists() else []


@pytest.mark.parametrize("step", ["writing", "staged"])
def test_a_create_killed_before_the_commit_leaves_no_accepted_folder_and_an_unchanged_database(any_engine, any_db_url, tmp_path, step):
    with session_scope(any_engine) as session:
        seed_final(session)
    before = _world(any_engine)
    out = tmp_path / "out"
    killed = _annotator("release", "create", "v1", "--out", str(out), db=any_db_url, kill_at=step)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _world(any_engine) == before
    assert _accepted(out) == [] and not (out / "v1").exists()
    [left] = list(out.iterdir())
    assert left.name.startswith(".v1.tmp-")  # the staging folder of the killed run
    done = _annotator("release", "create", "v1", "--out", str(out), db=any_db_url)
    assert done.returncode == 0, done.stderr
    assert f"Note: removed {left.name}: the staging folder of a `release create` of 'v1' that was stopped" in done.stdout
    assert [entry.name for entry in out.iterdir()] == ["v1"] and _accepted(out) == ["v1"]


@pytest.mark.parametrize("recover_with", ["verify", "create"])
def test_a_create_killed_after_the_commit_is_finished_by_the_next_verify_or_create(any_engine, any_db_url, tmp_path, recover_with):
    with session_scope(any_engine) as session:
        seed_final(session)
    out = tmp_path / "out"
    killed = _annotator("release", "create", "v1", "--out", str(out), db=any_db_url, kill_at="committed")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _world(any_engine)["GoldRelease"] == 1
    assert _accepted(out) == [] and not (out / "v1").exists()
    [staging] = list(out.iterdir())
    if recover_with == "verify":
        done = _annotator("release", "verify", "--release", "v1", db=any_db_url)
        assert done.returncode == 0, done.stderr
        assert f"Note: finished release 'v1': its `release create` was stopped after the database recorded it" in done.stdout
        assert "OK: release v1 matches its manifest (4 files checked)" in done.stdout
    else:
        done = _annotator("release", "create", "v1", "--out", str(out), db=any_db_url)
        assert done.returncode == 1
        assert f"finished release 'v1'" in done.stderr and f"renamed {staging.name} to" in done.stderr
        assert "releases are immutable" in done.stderr
    assert [entry.name for entry in out.iterdir()] == ["v1"]
    with Session(any_engine) as session:
        assert check_stored_release(session, OPERATOR, "v1").ok
        assert session.exec(select(func.count()).select_from(GoldLabel)).one() == 3


def test_a_rolled_back_create_removes_its_staging_folder_and_a_committed_one_renames_it(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_final(session)
    with Session(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
        assert not created.path.exists() and [p.name[:8] for p in (tmp_path / "out").iterdir()] == [".v1.tmp-"]
        session.rollback()
    assert list((tmp_path / "out").iterdir()) == [] and _world(any_engine)["GoldRelease"] == 0
    with Session(any_engine) as session:
        created = create_release(session, OPERATOR, "v1", out_dir=tmp_path / "out", n_bootstrap=N_BOOT)
        with session.begin_nested():  # a savepoint's commit is not the commit
            pass
        assert not created.path.exists()
        session.commit()
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["v1"] and check_release(created.path).ok
