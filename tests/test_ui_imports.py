"""The Import page through AppTest: an admin uploads a file, checks it (the import run and rolled
back: nothing lands), then imports it; a bad file shows its lines and fields and offers no
Import; a labeler cannot open the page."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from sqlalchemy import func
from sqlmodel import SQLModel, select
from streamlit.testing.v1 import AppTest

import annotator.ui.components as ui_components
from annotator.db import init_db, session_scope
from annotator.models import Claim, LabelEvent, User
from annotator.services.access import OPERATOR
from annotator.services.imports import import_cases
from tests.conftest import ON_BOTH, seeded_url
from tests.test_ui_app import _seed, open_app

DATA = Path(__file__).resolve().parent / "data"
NATIVE = (DATA / "import_native.jsonl").read_bytes()  # 2 cases, 3 claims, 2 passages
MIXED = (DATA / "import_partial_mixed.jsonl").read_bytes()  # bad lines 2 (JSON), 3 (slice), 4 (claim text)


@pytest.fixture
def engine(request, tmp_path, monkeypatch):
    """The app's seeded database: SQLite, or PostgreSQL as well for a test marked ON_BOTH."""
    url = seeded_url(request, f"sqlite:///{tmp_path}/a.db", _seed)
    engine = init_db(url)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ui_components, "DOUBLE_CLICK_SECONDS", 0.0)
    st.cache_resource.clear()
    yield engine
    st.cache_resource.clear()
    engine.dispose()


def row_counts(engine) -> dict[str, int]:  # noqa: ANN001
    """Rows in every table of the database."""
    with session_scope(engine) as session:
        return {table.name: session.exec(select(func.count()).select_from(table)).one()
                for table in SQLModel.metadata.sorted_tables}


def import_page(name: str = "admin") -> AppTest:
    at = open_app(name)
    at.switch_page("views/imports.py").run()
    assert not at.exception
    assert [title.value for title in at.title] == ["Import"]
    return at


def upload(at: AppTest, file_name: str, data: bytes, kind: str = "cases") -> AppTest:
    at.radio(key="imports.kind").set_value(kind).run()
    at.file_uploader(key="imports.file").set_value((file_name, data, "application/octet-stream")).run()
    at.button(key="imports.check").click().run()
    assert not at.exception
    return at


def counts(at: AppTest) -> list[dict]:
    """The rows of the table of counts (new / unchanged / changed per kind of record)."""
    [table] = at.table
    return table.value.to_dict("records")


def frames(at: AppTest) -> list[list[dict]]:
    """The rows of each dataframe: bad or skipped lines, the preview."""
    return [frame.value.to_dict("records") for frame in at.dataframe]


def test_a_check_shows_the_report_and_a_preview_and_writes_nothing(engine):
    at = import_page()
    before = row_counts(engine)
    upload(at, "my cases.jsonl", NATIVE)
    assert row_counts(engine) == before
    assert [info.value for info in at.info] == [
        "Read my cases.jsonl as UTF-8 (jsonl) into dataset 'default': 2 cases, 3 claims, 2 passages"]
    [preview] = frames(at)
    assert counts(at) == [{"Records": "cases", "New": 2, "Unchanged": 0, "Changed": 0},
                      {"Records": "claims", "New": 3, "Unchanged": 0, "Changed": 0},
                      {"Records": "passages", "New": 2, "Unchanged": 0, "Changed": 0}]
    assert [row["claim_id"] for row in preview] == ["n1-c1", "n1-c2", "n2-c1"]
    assert preview[0]["claim"] == "The travel policy was updated in April 2024." and preview[0]["passages"] == "p1"
    assert [e.value for e in at.error] == []
    assert at.button(key="imports.confirm").label == "Import"
    with session_scope(engine) as session:
        assert session.exec(select(Claim).where(Claim.claim_id == "n1-c1")).first() is None


@ON_BOTH
def test_import_after_the_check_writes_the_file_and_shows_the_final_report(engine):
    at = upload(import_page(), "my cases.jsonl", NATIVE)
    before = row_counts(engine)
    at.button(key="imports.confirm").click().run()
    assert not at.exception
    after = row_counts(engine)
    assert [after[table] - before[table] for table in ("case", "claim", "passage")] == [2, 3, 2]
    assert [s.value for s in at.success] == ["Imported my cases.jsonl."]
    assert counts(at)[1] == {"Records": "claims", "New": 3, "Unchanged": 0, "Changed": 0}
    assert [w.value for w in at.warning] == []  # the database did not change between check and import
    assert not [b for b in at.button if b.key == "imports.confirm"]  # a second click imports nothing
    with session_scope(engine) as session:
        claim = session.exec(select(Claim).where(Claim.claim_id == "n1-c1")).one()
        assert claim.text == "The travel policy was updated in April 2024."
    again = upload(at, "my cases.jsonl", NATIVE)  # checked again: all there, nothing new
    assert counts(again)[1] == {"Records": "claims", "New": 0, "Unchanged": 3, "Changed": 0}


def test_when_the_database_changed_after_the_check_the_import_shows_its_own_counts(engine, tmp_path):
    at = upload(import_page(), "my cases.jsonl", NATIVE)
    path = tmp_path / "same.jsonl"
    path.write_bytes(NATIVE)
    with session_scope(engine) as session:  # someone imports the same file meanwhile
        import_cases(session, OPERATOR, path)
    at.button(key="imports.confirm").click().run()
    assert [s.value for s in at.success] == ["Imported my cases.jsonl."]
    assert [w.value for w in at.warning] == [
        "The database changed after the check: the counts below are those of the import itself."]
    assert counts(at)[1] == {"Records": "claims", "New": 0, "Unchanged": 3, "Changed": 0}


def test_a_bad_file_shows_every_bad_line_with_its_field_offers_no_import_and_writes_nothing(engine):
    at = import_page()
    before = row_counts(engine)
    upload(at, "mixed.jsonl", MIXED)
    assert row_counts(engine) == before
    [error] = [e.value for e in at.error]
    assert error.startswith("This file would be refused as a whole; nothing was written.")
    assert "mixed.jsonl, line 2: not valid JSON" in error
    assert "annotator-upload" not in error and "/tmp" not in error  # named after the upload, not the temporary file
    [bad] = frames(at)
    assert [(row["File"], row["Line"], row["Field"]) for row in bad] == [
        ("mixed.jsonl", 2, "-"), ("mixed.jsonl", 3, "slice"), ("mixed.jsonl", 4, "claims[0].text")]
    assert "unknown slice 'nromal'" in bad[1]["Problem and what to do"]
    assert not [b for b in at.button if b.key == "imports.confirm"]


def test_a_partial_import_lists_the_skipped_lines_and_lands_the_good_ones(engine):
    at = import_page()
    at.file_uploader(key="imports.file").set_value(("mixed.jsonl", MIXED, "application/octet-stream")).run()
    at.checkbox(key="imports.partial").check().run()
    at.button(key="imports.check").click().run()
    assert [w.value for w in at.warning] == ["3 bad line(s) would be skipped (partial import):"]
    skipped, preview = frames(at)
    assert [row["Line"] for row in skipped] == [2, 3, 4]
    assert [row["claim_id"] for row in preview] == ["pm1-c1", "pm5-c1"]
    before = row_counts(engine)
    at.button(key="imports.confirm").click().run()
    assert row_counts(engine)["claim"] - before["claim"] == 2
    assert [row["Line"] for row in frames(at)[0]] == [2, 3, 4]


def test_changing_an_option_after_the_check_voids_it(engine):
    at = upload(import_page(), "my cases.jsonl", NATIVE)
    at.text_input(key="imports.dataset").input("pilot-2").run()
    assert not [b for b in at.button if b.key == "imports.confirm"]
    assert at.dataframe.len == 0 and at.table.len == 0


def test_a_labels_file_naming_an_unknown_claim_is_refused_at_its_line(engine):
    at = upload(import_page(), "labels.csv", b"claim_id,labeler,label\ncase-1-c1,zoe,support\nnope,zoe,support\n",
                kind="labels")
    [error] = [e.value for e in at.error]
    assert "labels.csv, line 3, field 'claim_id': no claim with id 'nope'" in error
    assert not [b for b in at.button if b.key == "imports.confirm"]
    with session_scope(engine) as session:
        assert session.exec(select(User).where(User.name == "zoe")).first() is None  # not created by the check


@ON_BOTH
def test_a_labels_file_is_checked_then_imported_creating_the_labeler(engine):
    at = upload(import_page(), "labels.csv", b"claim_id,labeler,label\ncase-3-c1,zoe,support\n", kind="labels")
    assert counts(at) == [{"Records": "labels", "New": 1, "Unchanged": 0, "Changed": 0}]
    assert frames(at)[0][0]["labeler"] == "zoe"
    with session_scope(engine) as session:
        assert session.exec(select(User).where(User.name == "zoe")).first() is None
    at.button(key="imports.confirm").click().run()
    assert any("Created user zoe" in c.value for c in at.caption)
    with session_scope(engine) as session:
        assert session.exec(select(User).where(User.name == "zoe")).one().roles == "labeler"
        assert session.exec(select(func.count()).select_from(LabelEvent)).one() >= 1


def test_a_labels_file_with_bad_lines_lists_them_all_and_a_partial_import_lands_the_good_row(engine):
    data = b"claim_id,labeler,label\nnope,zoe,support\ncase-3-c1,zoe,support\ncase-3-c1,yui,maybe\n"
    at = upload(import_page(), "labels.csv", data, kind="labels")
    assert [row["Line"] for row in frames(at)[0]] == [2, 4]  # refused: every bad line shown, no Import
    assert not [b for b in at.button if b.key == "imports.confirm"]
    at.checkbox(key="imports.partial").check().run()
    at.button(key="imports.check").click().run()
    assert [w.value for w in at.warning] == ["2 bad line(s) would be skipped (partial import):"]
    at.button(key="imports.confirm").click().run()
    with session_scope(engine) as session:
        assert session.exec(select(User).where(User.name == "zoe")).one().roles == "labeler"
        assert session.exec(select(User).where(User.name == "yui")).first() is None


def test_an_import_ended_by_a_click_elsewhere_is_reported_once_and_a_finished_one_is_not(engine):
    at = open_app("admin")
    at.session_state["imports.running"] = "big.jsonl"  # what an import run ended before its commit leaves
    at.switch_page("views/imports.py").run()
    assert [w.value for w in at.warning] == [
        "The import of big.jsonl was stopped before it finished (a click elsewhere ended it): nothing of it was "
        "imported. Check the file again and press Import to retry."]
    at.run()
    assert at.warning.len == 0
    at = upload(import_page(), "my cases.jsonl", NATIVE)
    at.button(key="imports.confirm").click().run()
    assert "imports.running" not in at.session_state
    assert not [w for w in at.warning if "stopped" in w.value]


def test_a_labeler_cannot_open_the_import_page(engine):
    at = open_app("aoi")
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page("views/imports.py")
    direct = AppTest.from_file(str(Path(ui_components.__file__).parent / "views" / "imports.py"), default_timeout=30)
    with session_scope(engine) as session:
        aoi = session.exec(select(User).where(User.name == "aoi")).one()
    direct.session_state["auth.user_pk"] = aoi.id
    direct.session_state["auth.user_name"] = "aoi"
    direct.run()
    assert [e.value for e in direct.error] == ["You cannot open this page with your roles."]
    assert direct.file_uploader.len == 0


def test_an_adjudicator_cannot_open_the_import_page(engine):
    at = open_app("mika")
    with pytest.raises(ValueError):
        at.switch_page("views/imports.py")



def _ragas_parquet(tmp_path: Path) -> bytes:
    from tests.test_formats_ragas import PARIS, TOKYO, write_parquet

    return write_parquet(tmp_path / "eval.parquet", PARIS, TOKYO).read_bytes()


@ON_BOTH
def test_a_ragas_parquet_file_is_taken_checked_with_its_claims_then_imported(engine, tmp_path):
    at = import_page()
    assert "parquet" in [kind.lstrip(".") for kind in at.file_uploader(key="imports.file").proto.type]
    at.selectbox(key="imports.format.cases").set_value("ragas").run()
    before = row_counts(engine)
    upload(at, "eval.parquet", _ragas_parquet(tmp_path))
    assert row_counts(engine) == before
    assert [info.value for info in at.info] == ["Read eval.parquet as Parquet (ragas) into dataset 'default': 2 cases, 4 claims, "
                                                "3 passages"]
    assert "Claims: 2 answers cut into sentences, 0 kept whole, 0 given in the file (claims)" in [c.value for c in at.caption]
    [preview] = frames(at)
    assert [row["claim"] for row in preview] == ["Paris is the capital of France.", "It had 2.1 million people in 2023.",
                                                 "東京です。", "人口は約1400万人です。"]
    at.button(key="imports.confirm").click().run()
    assert not at.exception
    assert [s.value for s in at.success] == ["Imported eval.parquet."]
    after = row_counts(engine)
    assert [after[table] - before[table] for table in ("case", "claim", "passage")] == [2, 4, 3]


def test_a_parquet_file_as_labels_is_refused_saying_only_ragas_records_are_read_from_parquet(engine, tmp_path):
    at = upload(import_page(), "eval.parquet", _ragas_parquet(tmp_path), kind="labels")
    [error] = [e.value for e in at.error]
    assert "eval.parquet is a Parquet file: only RAGAS records are read from Parquet (--format ragas)" in error
    assert not [b for b in at.button if b.key == "imports.confirm"]
