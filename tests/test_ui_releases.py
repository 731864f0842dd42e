"""The Releases page's comparison of two releases, driven through AppTest: counts, label changes
and the claims added, removed and changed, as the service computes them; a release that fails
verification is refused naming the file; labelers never reach the page.

The state is built with the services on the app's seeded database (tests/test_ui_app.py):
aoi and ren label, gold-v1 is released (only final), an admin corrects both labels of one
released claim and the adjudicator decides the disputed one, then gold-v2 is released.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from sqlmodel import Session, select
from streamlit.testing.v1 import AppTest

from annotator.db import session_scope
from annotator.models import Claim
from annotator.services import corrections, releases
from annotator.services.access import OPERATOR
from annotator.services.adjudication import adjudicate
from annotator.services.labeling import save_label
from annotator.services.users import get_user
from tests.conftest import ON_BOTH
from tests.test_blind import Downloads
from tests.test_ui_app import APP, engine, open_app  # noqa: F401 - engine: the app's fixture

VIEW = APP.parent / "views" / "releases.py"
OUT = Path("data/releases")  # where the page's releases land (the fixture chdirs to the test's folder)
N_BOOT = 100

# claim id -> (aoi's label, ren's label) before gold-v1.
LABELS = {"case-1-c1": ("support", "support"), "case-1-c2": ("support", "contradict"),
          "case-2-c1": ("insufficient", "insufficient")}


def _pks(session: Session) -> dict[str, int]:
    return {claim.claim_id: claim.id for claim in session.exec(select(Claim))}


def _release(engine, name: str) -> None:  # noqa: ANN001
    with session_scope(engine) as session:
        releases.create_release(session, OPERATOR, name, only_final=True, out_dir=OUT, n_bootstrap=N_BOOT)


def two_releases(engine) -> None:  # noqa: ANN001
    """gold-v1: case-1-c1 support, case-2-c1 insufficient. gold-v2: case-1-c1 support,
    case-1-c2 contradict (adjudicated: added), case-2-c1 contradict (both labels corrected: changed)."""
    revisions = {}
    with session_scope(engine) as session:
        pks = _pks(session)
        for who, labeler in enumerate(("aoi", "ren")):
            user = get_user(session, labeler)
            for claim_id, values in LABELS.items():
                revisions[claim_id, labeler] = save_label(session, user, pks[claim_id], values[who]).revision
    _release(engine, "gold-v1")
    with session_scope(engine) as session:
        pks = _pks(session)
        for labeler in ("aoi", "ren"):
            corrections.correct_label(session, OPERATOR, pks["case-2-c1"], labeler, "contradict",
                                      reason="the passage gives 14 days", expected_revision=revisions["case-2-c1", labeler])
        adjudicate(session, get_user(session, "mika"), pks["case-1-c2"], "contradict", rationale="passage 2 decides")
    _release(engine, "gold-v2")


def open_releases(name: str = "admin") -> AppTest:
    at = open_app(name)
    at.switch_page("views/releases.py").run()
    assert not at.exception
    return at


def compare(at: AppTest, older: str | None = None, newer: str | None = None) -> AppTest:
    if older is not None:
        at.selectbox(key="releases.compare_old").select(older)
    if newer is not None:
        at.selectbox(key="releases.compare_new").select(newer)
    at.button(key="releases.compare_button").click().run()
    assert not at.exception
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def tables(at: AppTest) -> list[list[dict]]:
    return [frame.value.to_dict("records") for frame in at.dataframe]


@ON_BOTH
def test_the_page_compares_the_two_newest_releases_with_counts_the_label_change_and_the_claims(engine, monkeypatch):
    two_releases(engine)
    downloads = Downloads()
    downloads.install(monkeypatch)
    at = open_releases()
    assert (at.selectbox(key="releases.compare_old").value, at.selectbox(key="releases.compare_new").value) == (
        "gold-v1", "gold-v2")
    assert at.metric == []  # nothing compared before the button
    compare(at)
    assert [e.value for e in at.error] == []
    assert metrics(at) == {"Added": "1", "Removed": "0", "Gold label changed": "1", "Unchanged": "1"}
    sides, by_label, added, changed = tables(at)[1:]  # the first table lists the releases; no removed claim
    assert [(row["Side"], row["Name"], row["Claims"]) for row in sides] == [("older", "gold-v1", 2), ("newer", "gold-v2", 3)]
    assert by_label == [{"From (older)": "insufficient", "To (newer)": "contradict", "Claims": 1}]
    assert added == [{"Claim": "case-1-c2", "Case": "case-1", "Dataset": "pilot", "Gold label": "contradict"}]
    assert changed == [{"Claim": "case-2-c1", "Case": "case-2", "Dataset": "pilot", "From (older)": "insufficient",
                        "To (newer)": "contradict"}]
    assert "None." in [c.value for c in at.main.caption]  # no removed claim, said in words
    button = next(b for b in at.get("download_button") if b.proto.label == "Download the comparison (JSON)")
    with session_scope(engine) as session:
        expected = releases.compare_releases(session, OPERATOR, "gold-v1", "gold-v2").to_json()
    assert json.loads(downloads.of(button.proto)) == expected
    assert expected["counts"] == {"added": 1, "removed": 0, "changed": 1, "unchanged": 1}


def test_comparing_the_other_way_round_counts_the_added_claim_as_removed(engine):
    two_releases(engine)
    at = compare(open_releases(), older="gold-v2", newer="gold-v1")
    assert metrics(at) == {"Added": "0", "Removed": "1", "Gold label changed": "1", "Unchanged": "1"}
    _, _, by_label, removed, changed = tables(at)  # no added claim: no table
    assert by_label == [{"From (older)": "contradict", "To (newer)": "insufficient", "Claims": 1}]
    assert removed == [{"Claim": "case-1-c2", "Case": "case-1", "Dataset": "pilot", "Gold label": "contradict"}]
    assert changed == [{"Claim": "case-2-c1", "Case": "case-2", "Dataset": "pilot", "From (older)": "contradict",
                        "To (newer)": "insufficient"}]


def test_changing_a_selection_hides_the_result_until_compare_is_pressed_again(engine):
    two_releases(engine)
    at = compare(open_releases())
    assert len(at.metric) == 4
    at.selectbox(key="releases.compare_old").select("gold-v2").run()
    assert at.metric == []
    compare(at)
    assert metrics(at) == {"Added": "0", "Removed": "0", "Gold label changed": "0", "Unchanged": "3"}


def test_a_tampered_release_is_refused_with_an_error_naming_gold_jsonl(engine):
    two_releases(engine)
    gold = OUT / "gold-v2" / "gold.jsonl"
    gold.write_text(gold.read_text(encoding="utf-8").replace('"contradict"', '"support"'), encoding="utf-8")
    at = compare(open_releases())
    assert len(at.error) == 1
    message = at.error[0].value
    assert message.startswith(f"release 'gold-v2' ({(OUT / 'gold-v2').resolve()}) does not match what was released: ")
    assert "gold.jsonl: changed" in message
    assert at.metric == [] and len(at.dataframe) == 1  # only the list of releases: nothing of the comparison
    assert not [b for b in at.get("download_button") if b.proto.label == "Download the comparison (JSON)"]


def test_a_labeler_cannot_open_the_releases_page(engine):
    two_releases(engine)
    at = open_app("aoi")
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page("views/releases.py")
    direct = AppTest.from_file(str(VIEW), default_timeout=30)
    direct.session_state["auth.user_pk"] = at.session_state["auth.user_pk"]
    direct.session_state["auth.user_name"] = "aoi"
    direct.run()
    assert [e.value for e in direct.error] == ["You cannot open this page with your roles."]
    assert direct.title == [] and direct.selectbox == [] and direct.metric == []


# --- notes of stopped creates --------------------------------------------------------------------


def test_verify_shows_a_note_when_it_finishes_a_release_whose_create_was_stopped(engine):
    two_releases(engine)
    at = open_releases()
    assert at.selectbox(key="releases.pick").value == "gold-v2"
    (OUT / "gold-v2").rename(OUT / ".gold-v2.tmp-stopped1")  # as a create killed after its commit leaves it
    at.button(key="releases.verify").click().run()
    assert not at.exception
    assert [i.value for i in at.info] == [
        f"finished release 'gold-v2': its `release create` was stopped after the database recorded it and before its "
        f"folder was renamed into place; renamed .gold-v2.tmp-stopped1 to {(OUT / 'gold-v2').resolve()}"]
    assert [s.value for s in at.success] == ["Release gold-v2: every file matches its manifest."]
    assert sorted(p.name for p in OUT.iterdir()) == ["gold-v1", "gold-v2"]


def test_create_shows_a_note_when_it_removes_a_leftover_staging_folder(engine):
    two_releases(engine)
    (OUT / ".gold-v9.tmp-stopped2").mkdir()  # as a create killed before its commit leaves it
    at = open_releases()
    at.text_input(key="releases.name").input("gold-v3")
    at.checkbox(key="releases.only_final").check()
    at.button(key="releases.create_button").click().run()
    assert not at.exception
    assert [s.value.split(" created")[0] for s in at.success] == ["Release gold-v3"]
    assert [i.value for i in at.info] == [
        "removed .gold-v9.tmp-stopped2: the staging folder of a `release create` of 'gold-v9' that was stopped "
        "before the database recorded it"]
    assert not (OUT / ".gold-v9.tmp-stopped2").exists()
    at.run()
    assert at.info == []  # said once


def test_a_release_created_on_the_page_becomes_the_newer_side_and_the_picked_one(engine):
    two_releases(engine)
    at = compare(open_releases())  # gold-v1 -> gold-v2, chosen on this page
    at.selectbox(key="releases.pick").select("gold-v1").run()
    at.text_input(key="releases.name").input("gold-v3")
    at.checkbox(key="releases.only_final").check()
    at.button(key="releases.create_button").click().run()
    assert not at.exception
    assert (at.selectbox(key="releases.compare_old").value, at.selectbox(key="releases.compare_new").value) == (
        "gold-v2", "gold-v3")
    assert at.selectbox(key="releases.pick").value == "gold-v3"
    assert at.metric == []  # the old comparison is not shown under the new pair


def test_a_release_created_on_the_page_shows_its_whole_manifest_sha256_in_a_code_block_once(engine):
    two_releases(engine)
    at = open_releases()
    assert at.code == []
    at.text_input(key="releases.name").input("gold-v3")
    at.checkbox(key="releases.only_final").check()
    at.button(key="releases.create_button").click().run()
    assert not at.exception
    with session_scope(engine) as session:
        recorded = next(r.manifest_sha256 for r in releases.list_releases(session, OPERATOR) if r.name == "gold-v3")
    assert recorded == hashlib.sha256((OUT / "gold-v3" / "manifest.json").read_bytes()).hexdigest()
    assert [(c.value, c.language) for c in at.code] == [(recorded, "plaintext")]  # all 64 digits, as `release verify` takes them
    assert at.code[0].proto.wrap_lines  # no digit hidden past the edge of a narrow window
    assert [c.value for c in at.main.caption][0] == (
        "The SHA-256 of gold-v3's manifest.json (copy it with the button at its right; "
        "`annotator release verify FOLDER --manifest-sha256 HASH` checks downloaded files against it):")
    at.run()
    assert at.code == []  # said once, like the success message
