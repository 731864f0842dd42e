"""Judge runs on SQLite and PostgreSQL: the import (immutable, hashed, refused whole on a bad
line), the list, and the report against a verified gold release with figures computed by hand."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
from sqlmodel import Session, func, select

from annotator.db import session_scope
from annotator.errors import (
    ImportFileError,
    ImportRowError,
    InvalidValueError,
    NotFoundError,
    PermissionDeniedError,
    ReleaseVerifyError,
)
from annotator.models import Claim, GoldRelease, JudgeLabel, JudgeRun, LabelEvent, User
from annotator.release import release_layout
from annotator.services import judges
from annotator.services.access import OPERATOR
from annotator.services.judges import import_judge_labels, judge_report, list_judge_runs
from annotator.services.labeling import assign_cases, first_unassigned_cases
from annotator.services.releases import create_release
from tests.conftest import annotator
from tests.test_release_service import Seeder

N_BOOT = 200

# The gold (labels alice/bob; c5 adjudicated by carol) and the judge, claim by claim:
#   claim  case  split    gold          judge
#   c1     q1    dev      support       support
#   c2     q1    dev      support       contradict     false fail
#   c3     q2    dev      contradict    support        false pass
#   c4     q2    dev      insufficient  insufficient
#   c5     q3    dev      contradict    contradict     (alice contradict, bob support: adjudicated)
#   h1     q4    holdout  support       support
#   u1     q5    dev      (no labels: left out of the release)   support
JUDGE = {"c1": "support", "c2": "contradict", "c3": "support", "c4": "insufficient", "c5": "contradict",
         "h1": "support", "u1": "support"}


def seed_gold(session: Session) -> Seeder:
    seed = Seeder(session)
    seed.claim("q1", "c1", labels={"alice": "support", "bob": "support"})
    seed.claim("q1", "c2", labels={"alice": "support", "bob": "support"})
    seed.claim("q2", "c3", slice_="paraphrase", labels={"alice": "contradict", "bob": "contradict"})
    seed.claim("q2", "c4", slice_="paraphrase", labels={"alice": "insufficient", "bob": "insufficient"})
    seed.claim("q3", "c5", labels={"alice": "contradict", "bob": "support"}, adjudication=("carol", "contradict"))
    seed.claim("q4", "h1", split="holdout", labels={"alice": "support", "bob": "support"})
    seed.claim("q5", "u1")
    return seed


def judge_file(tmp_path: Path, labels: dict[str, str] = JUDGE, name: str = "judge.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps({"claim_id": c, "label": v, "confidence": 0.9}) + "\n" for c, v in labels.items()),
                    encoding="utf-8")
    return path


@pytest.fixture
def gold(any_engine, tmp_path):
    """The database above with release v1 (the final claims) and judge run j1 imported."""
    with session_scope(any_engine) as session:
        seed_gold(session)
    with session_scope(any_engine) as session:
        create_release(session, OPERATOR, "v1", only_final=True, out_dir=tmp_path / "releases", n_bootstrap=N_BOOT)
    with session_scope(any_engine) as session:
        import_judge_labels(session, OPERATOR, judge_file(tmp_path), run="j1", model="lexical", prompt_version="p1")
    return any_engine


def report(engine, release="v1", **options) -> dict:
    with session_scope(engine) as session:
        return judge_report(session, OPERATOR, "j1", release, n_bootstrap=N_BOOT, **options)


def _count(engine, model) -> int:
    with Session(engine) as session:
        return session.exec(select(func.count()).select_from(model)).one()


# ------------------------------------------------------------------------------- import


def test_an_imported_run_keeps_its_labels_the_file_hash_and_who_what_when(gold, tmp_path):
    with session_scope(gold) as session:
        runs = list_judge_runs(session, OPERATOR)
    assert len(runs) == 1
    run = runs[0]
    assert run["name"] == "j1" and run["dataset"] == "pilot" and run["model"] == "lexical" and run["prompt_version"] == "p1"
    assert run["source_sha256"] == hashlib.sha256((tmp_path / "judge.jsonl").read_bytes()).hexdigest()
    assert run["n_labels"] == 7 and run["label_counts"] == {"support": 4, "contradict": 2, "insufficient": 1}
    assert _count(gold, JudgeLabel) == 7
    with Session(gold) as session:
        assert set(session.exec(select(JudgeLabel.confidence))) == {0.9}
        assert session.exec(select(LabelEvent).where(LabelEvent.entity == "judge_run")).one().after["labels"] == 7


def test_a_run_name_is_never_reused_and_the_refusal_stores_nothing(gold, tmp_path):
    for name in ("j1", "J1"):
        with pytest.raises(InvalidValueError, match="exists already"), session_scope(gold) as session:
            import_judge_labels(session, OPERATOR, judge_file(tmp_path), run=name)
    assert _count(gold, JudgeRun) == 1 and _count(gold, JudgeLabel) == 7


@pytest.mark.parametrize("name", ["", " j2", "j 2", "j/2", "-j2", "x" * 101, "j\u202e2"])
def test_a_bad_run_name_is_refused(any_engine, tmp_path, name):
    with session_scope(any_engine) as session:
        seed_gold(session)
    with pytest.raises(InvalidValueError, match="is not a judge run name"), session_scope(any_engine) as session:
        import_judge_labels(session, OPERATOR, judge_file(tmp_path), run=name)
    assert _count(any_engine, JudgeRun) == 0


def test_an_unknown_claim_refuses_the_file_naming_line_and_field_and_stores_nothing(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_gold(session)
    path = judge_file(tmp_path, {"c1": "support", "nope": "support", "c2": "support"})
    with pytest.raises(ImportRowError) as refused, session_scope(any_engine) as session:
        import_judge_labels(session, OPERATOR, path, run="j2")
    assert (refused.value.line, refused.value.field) == (2, "claim_id")
    assert "judge.jsonl" in str(refused.value) and "line 2" in str(refused.value) and "nope" in str(refused.value)
    assert _count(any_engine, JudgeRun) == 0 and _count(any_engine, JudgeLabel) == 0


def test_partial_stores_the_good_lines_and_lists_the_bad_ones(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_gold(session)
    path = judge_file(tmp_path, {"c1": "support", "nope": "support", "c2": "contradict"})
    with session_scope(any_engine) as session:
        done = import_judge_labels(session, OPERATOR, path, run="j2", partial=True)
    assert done.run["n_labels"] == 2
    assert [(line.line, line.field) for line in done.report.skipped_lines] == [(2, "claim_id")]
    assert any("judge run j2 stored: 2 labels" in line.lower() for line in done.summary_lines())


def test_a_file_whose_every_line_is_skipped_stores_no_run(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_gold(session)
    with pytest.raises(ImportFileError, match="no judge label was stored") as refused, session_scope(any_engine) as session:
        import_judge_labels(session, OPERATOR, judge_file(tmp_path, {"nope": "support", "nada": "support"}), run="j2",
                            partial=True)
    assert "skipped all 2 lines" in str(refused.value) and "line 1, field 'claim_id'" in str(refused.value)
    assert "no claim with id 'nope'" in str(refused.value)
    assert _count(any_engine, JudgeRun) == 0


def test_a_claim_id_in_two_datasets_needs_the_dataset(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        seed_gold(session)
        Seeder(session, "other").claim("q1", "c1")
    path = judge_file(tmp_path, {"c1": "support"})
    with pytest.raises(ImportRowError, match="--dataset"), session_scope(any_engine) as session:
        import_judge_labels(session, OPERATOR, path, run="j2")
    with session_scope(any_engine) as session:
        done = import_judge_labels(session, OPERATOR, path, run="j2", dataset="other")
    assert done.run["dataset"] == "other"


def test_only_an_admin_may_import_list_or_report_judge_runs(gold, tmp_path):
    with Session(gold) as session:
        people = {name: session.exec(select(User).where(User.name == name)).one() for name in ("alice", "carol")}
    for person in people.values():
        with session_scope(gold) as session:
            with pytest.raises(PermissionDeniedError, match="only an admin may import judge runs"):
                list_judge_runs(session, person)
            with pytest.raises(PermissionDeniedError, match="only an admin"):
                judge_report(session, person, "j1", "v1", n_bootstrap=0)
            with pytest.raises(PermissionDeniedError, match="only an admin"):
                import_judge_labels(session, person, judge_file(tmp_path), run="j9")


# ------------------------------------------------------------------------------- report


def test_the_report_on_dev_matches_the_hand_computed_figures(gold):
    data = report(gold)
    assert (data["run"], data["release"], data["split"]) == ("j1", "v1", "dev")
    assert (data["n_gold"], data["n_items"], data["n_missing"], data["n_holdout_left_out"]) == (5, 5, 0, 1)
    assert data["confusion"] == {"support": {"support": 1, "contradict": 1, "insufficient": 0},
                                 "contradict": {"support": 1, "contradict": 1, "insufficient": 0},
                                 "insufficient": {"support": 0, "contradict": 0, "insufficient": 1}}
    assert data["percent_agreement"] == pytest.approx(3 / 5)
    # p_o = 0.6; both margins (2, 2, 1) of 5: p_e = (4 + 4 + 1) / 25 = 0.36; (0.6 - 0.36) / 0.64
    assert data["cohen_kappa"] == pytest.approx(0.375)
    assert data["false_pass_rate"] == pytest.approx(1 / 3)  # c3 of c3, c4, c5
    assert data["false_fail_rate"] == pytest.approx(1 / 2)  # c2 of c1, c2
    assert set(data["indicative"]) >= {"false_pass_rate", "false_fail_rate", "percent_agreement"}
    assert sorted(d["claim_id"] for d in data["disagreements"]) == ["c2", "c3"]
    assert {d["claim_id"]: (d["gold_label"], d["judge_label"], d["case_id"]) for d in data["disagreements"]} == {
        "c2": ("support", "contradict", "q1"), "c3": ("contradict", "support", "q2")}
    assert set(data["by_slice"]) == {"normal", "paraphrase"} and set(data["by_split"]) == {"dev"}
    assert data["by_slice"]["paraphrase"]["percent_agreement"] == pytest.approx(1 / 2)  # c3 wrong, c4 right
    assert len(data["release_manifest_sha256"]) == 64 and data["superseded_by"] == []
    json.dumps(data, allow_nan=False)


def test_the_humans_are_scored_against_the_same_gold_from_their_blind_labels(gold):
    humans = report(gold)["humans"]
    assert set(humans) == {"alice", "bob"}
    assert humans["alice"]["percent_agreement"] == 1.0
    assert humans["bob"]["percent_agreement"] == pytest.approx(4 / 5)  # c5: bob said support, gold contradict
    assert humans["bob"]["false_pass_rate"] == pytest.approx(1 / 3)
    assert report(gold)["human_range"]["percent_agreement"] == [pytest.approx(0.8), 1.0]


def test_the_figures_do_not_depend_on_how_many_threads_score_them(gold, monkeypatch):
    threaded = report(gold)
    monkeypatch.setattr(judges, "SCORING_THREADS", 1)
    alone = report(gold)
    assert alone == threaded and alone["ci95"]["percent_agreement"] is not None


def test_a_single_split_has_the_overall_figures_but_not_what_the_report_adds_to_them(gold, tmp_path):
    with session_scope(gold) as session:
        import_judge_labels(session, OPERATOR, judge_file(tmp_path, {"c1": "support", "c2": "support"}, "two.jsonl"), run="j2")
    with session_scope(gold) as session:
        data = judge_report(session, OPERATOR, "j2", "v1", n_bootstrap=N_BOOT)
    dev = data["by_split"]["dev"]
    assert dev["confusion"] == data["confusion"] and dev["ci95"] == data["ci95"]
    assert "corrected_support_rate" in data["undefined"] and "corrected_support_rate" not in dev["undefined"]


def test_the_corrected_support_rate_uses_the_claims_only_the_judge_labeled(gold):
    corrected = report(gold)["corrected_support_rate"]
    assert corrected["n_unlabeled"] == 1 and corrected["n_labeled"] == 5  # u1 outside the release; c1-c5
    assert corrected["gold_only_rate"] == pytest.approx(2 / 5)
    assert corrected["naive_judge_rate"] == pytest.approx(3 / 6)  # c1, c3, u1 of c1-c5 and u1
    assert "random sample" in corrected["assumption"]


def test_without_claims_outside_the_release_there_is_no_corrected_rate_and_it_says_why(gold, tmp_path):
    with session_scope(gold) as session:
        import_judge_labels(session, OPERATOR, judge_file(tmp_path, {"c1": "support"}, "small.jsonl"), run="j2")
    with session_scope(gold) as session:
        data = judge_report(session, OPERATOR, "j2", "v1", n_bootstrap=0)
    assert data["corrected_support_rate"] is None and "outside the release" in data["undefined"]["corrected_support_rate"]
    assert (data["n_gold"], data["n_items"], data["n_missing"]) == (5, 1, 4)


def test_the_holdout_is_shown_only_when_asked_and_every_viewing_is_counted(gold):
    assert report(gold)["holdout_views"] == {"this_run": 0, "any_run": 0}
    first = report(gold, holdout=True)
    assert (first["split"], first["n_gold"], first["percent_agreement"]) == ("holdout", 1, 1.0)
    assert set(first["by_split"]) == {"dev", "holdout"}
    assert first["holdout_views"] == {"this_run": 1, "any_run": 1}
    assert report(gold, holdout=True)["holdout_views"] == {"this_run": 2, "any_run": 2}
    assert report(gold)["holdout_views"] == {"this_run": 2, "any_run": 2}
    with Session(gold) as session:
        events = session.exec(select(LabelEvent).where(LabelEvent.entity == "holdout_view")).all()
    assert len(events) == 2 and events[0].after["release"] == "v1"


def test_a_folder_gives_the_same_report_as_the_stored_release(gold, tmp_path):
    by_name, by_folder = report(gold), report(gold, release=tmp_path / "releases" / "v1")
    for key in ("confusion", "percent_agreement", "cohen_kappa", "ci95", "disagreements", "release_manifest_sha256"):
        assert by_name[key] == by_folder[key]


def test_a_release_that_fails_verify_is_refused(gold, tmp_path):
    parquet = release_layout(tmp_path / "releases" / "v1").parquet
    parquet.write_bytes(parquet.read_bytes() + b"\0")
    with pytest.raises(ReleaseVerifyError, match="gold.parquet"):
        report(gold)
    with pytest.raises(ReleaseVerifyError, match="gold.parquet"):
        report(gold, release=tmp_path / "releases" / "v1")


def test_a_report_against_a_superseded_release_says_so(gold, tmp_path):
    with session_scope(gold) as session:
        create_release(session, OPERATOR, "v2", only_final=True, out_dir=tmp_path / "releases", n_bootstrap=N_BOOT)
    assert report(gold)["superseded_by"] == ["v2"]
    assert report(gold, release="v2")["superseded_by"] == []


def test_an_unknown_run_or_release_is_named(gold):
    with pytest.raises(NotFoundError, match="no judge run named 'nope'.*j1"), session_scope(gold) as session:
        judge_report(session, OPERATOR, "nope", "v1", n_bootstrap=0)
    with pytest.raises(NotFoundError, match="no release named 'v9'"):
        report(gold, release="v9")


def test_an_admin_still_to_label_a_released_claim_is_refused_the_report(gold):
    with session_scope(gold) as session:
        root = User(name="root", roles="admin,labeler")
        session.add(root)
        session.flush()
        from annotator.models import Case

        q1 = session.exec(select(Case).where(Case.case_id == "q1")).one()
        assign_cases(session, OPERATOR, [q1.id], ["root"])
    with session_scope(gold) as session:
        root = session.exec(select(User).where(User.name == "root")).one()
        with pytest.raises(PermissionDeniedError, match="assigned to label"):
            judge_report(session, root, "j1", "v1", n_bootstrap=0)


# ---------------------------------------------------------------------------------- CLI


def test_the_command_line_imports_lists_and_reports(any_db_url, tmp_path, monkeypatch):
    from annotator.db import init_db

    engine = init_db(any_db_url, create=True)
    with session_scope(engine) as session:
        seed_gold(session)
    out = tmp_path / "releases"
    assert annotator("release", "create", "v1", "--only-final", "--out", str(out), "--bootstrap", "0", "--db", any_db_url).code == 0
    ran = annotator("judge", "import", str(judge_file(tmp_path)), "--run", "j1", "--model", "m", "--db", any_db_url)
    assert ran.code == 0, ran.out + ran.err
    assert "Judge run j1 stored: 7 labels" in ran.out + ran.err
    listed = json.loads(annotator("judge", "list", "--json", "--db", any_db_url).out)
    assert [run["name"] for run in listed] == ["j1"]
    ran = annotator("judge", "report", "j1", "--release", "v1", "--bootstrap", "0", "--json", "--db", any_db_url)
    assert ran.code == 0, ran.out + ran.err
    data = json.loads(ran.out)
    for key in ("run", "release", "release_manifest_sha256", "n_gold", "n_items", "n_missing", "percent_agreement",
                "cohen_kappa", "confusion", "false_pass_rate", "false_fail_rate", "ci95", "undefined", "by_slice",
                "by_split", "humans", "corrected_support_rate", "disagreements"):
        assert key in data
    text = annotator("judge", "report", "j1", "--release", str(out / "v1"), "--bootstrap", "0", "--db", any_db_url).out
    assert "dev split only: 1 holdout claims left out" in text and "false_pass_rate" in text and "alice" in text
    again = annotator("judge", "import", str(judge_file(tmp_path)), "--run", "j1", "--db", any_db_url)
    assert again.code == 1 and "exists already" in again.err


# --------------------------------------------------------------------------------- demo


def test_the_demo_seeds_the_lexical_judge_run_once(engine, tmp_path):
    from annotator.services.demo import DEMO_JUDGE, DEMO_JUDGE_MODEL, DEMO_JUDGE_PROMPT, DEMO_JUDGE_RUN, seed_demo

    with session_scope(engine) as session:
        assert seed_demo(session, release_dir=tmp_path)
    with session_scope(engine) as session:
        runs = list_judge_runs(session, OPERATOR)
    assert [(run["name"], run["dataset"], run["model"], run["prompt_version"]) for run in runs] == [
        (DEMO_JUDGE_RUN, "demo", DEMO_JUDGE_MODEL, DEMO_JUDGE_PROMPT)]
    lines = [json.loads(line) for line in DEMO_JUDGE.read_text(encoding="utf-8").splitlines()]
    assert runs[0]["n_labels"] == len(lines) == _count(engine, Claim)
    assert runs[0]["label_counts"] == {label: sum(1 for line in lines if line["label"] == label)
                                       for label in ("support", "contradict", "insufficient")}
    assert runs[0]["source_sha256"] == hashlib.sha256(DEMO_JUDGE.read_bytes()).hexdigest()
    with session_scope(engine) as session:
        assert seed_demo(session, release_dir=tmp_path) is None
    assert _count(engine, JudgeRun) == 1 and _count(engine, JudgeLabel) == len(lines)


def pilot_cases() -> list[dict]:
    """The demo's pilot round, from its file."""
    from annotator.services.demo import DEMO_PILOT

    return [json.loads(line) for line in DEMO_PILOT.read_text(encoding="utf-8").splitlines()]


def pilot_claims(split: str | None = None) -> list[str]:
    """The claim ids of the demo's pilot round (of one split), from its file."""
    return [claim["claim_id"] for case in pilot_cases() if split in (None, case["split"]) for claim in case["claims"]]


def test_the_demo_fills_the_judges_page_the_pilot_is_the_gold_and_the_round_to_label_is_judged_only(engine, tmp_path):
    from annotator.services.demo import DEMO_FILE, DEMO_JUDGE_RUN, DEMO_RELEASE, seed_demo

    with session_scope(engine) as session:
        seeded = seed_demo(session, release_dir=tmp_path)
    assert (seeded.release, seeded.release_skipped) == (DEMO_RELEASE, None)
    assert (seeded.to_label, seeded.pilot, seeded.judged) == (20, len(pilot_cases()), _count(engine, JudgeLabel))
    with session_scope(engine) as session:
        data = judge_report(session, OPERATOR, DEMO_JUDGE_RUN, DEMO_RELEASE, n_bootstrap=N_BOOT)
    gold = pd.read_parquet(release_layout(tmp_path / DEMO_RELEASE).parquet)
    assert sorted(gold["claim_id"]) == sorted(pilot_claims())  # the release is the pilot, whole
    assert set(gold["resolution"]) == {"agreed", "adjudicated"}
    assert data["n_gold"] == data["n_items"] == len(pilot_claims("dev")) and data["n_holdout_left_out"] == len(pilot_claims("holdout"))
    round_one = sum(len(json.loads(line)["claims"]) for line in DEMO_FILE.read_text(encoding="utf-8").splitlines())
    corrected = data["corrected_support_rate"]
    assert corrected["n_unlabeled"] == round_one and corrected["estimate"] is not None
    assert set(data["humans"]) == {"kim", "sato"} and data["warnings"]  # the round to label was left out of gold-v0
    with Session(engine) as session:
        sato = session.exec(select(User).where(User.name == "sato")).one()
    assert sato.password_hash in (None, "")  # the pilot's labelers cannot log in
    with Session(engine) as session:
        assert first_unassigned_cases(session, 20) == []  # "assign the next cases" hands out no pilot case again


def test_the_demo_says_so_when_an_earlier_demo_left_its_release_folder(engine, tmp_path):
    from annotator.services.demo import DEMO_RELEASE, seed_demo

    (tmp_path / DEMO_RELEASE).mkdir()
    (tmp_path / DEMO_RELEASE / "kept.txt").write_text("an earlier demo's file", encoding="utf-8")
    with session_scope(engine) as session:
        seeded = seed_demo(session, release_dir=tmp_path)
    assert seeded.release is None and str(tmp_path / DEMO_RELEASE) in seeded.release_skipped
    assert "Remove it" in seeded.release_skipped
    assert (tmp_path / DEMO_RELEASE / "kept.txt").read_text(encoding="utf-8") == "an earlier demo's file"
    assert _count(engine, GoldRelease) == 0 and _count(engine, JudgeRun) == 1  # the rest is seeded


def test_a_breakdown_with_one_group_has_the_overall_figures_and_its_own_notes(gold, tmp_path):
    inside = {claim: label for claim, label in JUDGE.items() if claim != "u1"}
    with session_scope(gold) as session:
        import_judge_labels(session, OPERATOR, judge_file(tmp_path, inside, "inside.jsonl"), run="j2")
    with session_scope(gold) as session:
        data = judge_report(session, OPERATOR, "j2", "v1", n_bootstrap=N_BOOT)
    (only,) = data["by_split"].values()
    for key in ("percent_agreement", "cohen_kappa", "ci95", "confusion", "n_gold", "n_items"):
        assert only[key] == data[key]
    assert "corrected_support_rate" in data["undefined"]  # the report's own note ...
    assert "corrected_support_rate" not in only["undefined"]  # ... not the breakdown's


def test_the_claims_outside_that_the_release_left_out_are_named_and_the_intervals_resample_cases(gold):
    data = report(gold)
    corrected = data["corrected_support_rate"]
    assert corrected["left_out"] == {"unlabeled": 1}  # u1: --only-final left it out
    assert corrected["interval_unit"] == "case" and corrected["ci95_analytic"] is not None
    assert any("1 of the 1 claims outside the release are claims it left out (unlabeled 1)" in w for w in data["warnings"])


def test_a_folder_that_is_not_a_release_is_named_in_one_line(gold, tmp_path):
    with pytest.raises(NotFoundError) as refused:
        report(gold, release=tmp_path)
    assert str(refused.value) == (f"{tmp_path} holds no manifest.json: it is not a release folder (give a release's "
                                  "folder, or a stored release's name)")


def test_a_copied_release_folder_is_scored_with_a_warning_but_its_holdout_is_refused(gold, tmp_path):
    import shutil

    copy = tmp_path / "copy of v1"
    shutil.copytree(tmp_path / "releases" / "v1", copy)
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    manifest["creator"] = "someone else"
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    data = report(gold, release=copy)
    assert data["release_stored_as"] is None and data["percent_agreement"] == pytest.approx(3 / 5)
    assert any("is not a release this database holds" in w for w in data["warnings"])
    assert report(gold, release=tmp_path / "releases" / "v1")["release_stored_as"] == "v1"
    with pytest.raises(InvalidValueError, match="holdout viewings could not be counted"):
        report(gold, release=copy, holdout=True)
    with Session(gold) as session:
        assert session.exec(select(func.count()).select_from(LabelEvent).where(LabelEvent.entity == "holdout_view")).one() == 0


def test_a_judge_of_part_of_the_gold_or_of_another_dataset_is_warned_of(gold, tmp_path):
    with session_scope(gold) as session:
        import_judge_labels(session, OPERATOR, judge_file(tmp_path, {"c1": "support"}, "part.jsonl"), run="part")
        Seeder(session, "other").claim("z1", "z1-a")
    with session_scope(gold) as session:
        import_judge_labels(session, OPERATOR, judge_file(tmp_path, {"z1-a": "support"}, "other.jsonl"), run="other")
    with session_scope(gold) as session:
        part = judge_report(session, OPERATOR, "part", "v1", n_bootstrap=0)
        other = judge_report(session, OPERATOR, "other", "v1", n_bootstrap=0)
    assert any("labeled 1 of the 5 gold claims" in w for w in part["warnings"])
    assert any("judge run other (dataset other) labels no claim of this release (datasets pilot)" in w for w in other["warnings"])


def test_asking_for_the_holdout_of_a_release_without_one_records_no_viewing(any_engine, tmp_path):
    with session_scope(any_engine) as session:
        Seeder(session, "devonly").claim("d1", "d1-a", labels={"alice": "support", "bob": "support"})
    with session_scope(any_engine) as session:
        create_release(session, OPERATOR, "d1", out_dir=tmp_path / "releases", n_bootstrap=0)
        import_judge_labels(session, OPERATOR, judge_file(tmp_path, {"d1-a": "support"}), run="j")
    with session_scope(any_engine) as session:
        data = judge_report(session, OPERATOR, "j", "d1", n_bootstrap=0, holdout=True)
    assert data["n_gold"] == 0 and data["holdout_views"] == {"this_run": 0, "any_run": 0}
    assert any("holds no holdout claims" in w for w in data["warnings"])
    with Session(any_engine) as session:
        assert session.exec(select(func.count()).select_from(LabelEvent).where(LabelEvent.entity == "holdout_view")).one() == 0
