"""The Runs page driven through AppTest: the demo's runs (rag-v3, the baseline, and rag-v4-rerank,
the candidate) against its release gold-v0, on SQLite and PostgreSQL. The report's blocker comes
before any figure and the figures are the service's; the per-slice table and chart; the failure
table filtered by status and failure label; a case opened with its retrieved ranks, passages and
claims; the comparison's BLOCKED decision first, with its reason and the split it decided on, then
the fixed and regressed cases; the downloaded JSON; the cached report and the release verified on
every run; who may open the page and the blind rule; the states without a run or a release; the
Japanese texts; run names and case ids holding Markdown or HTML shown as text. Also the builders
behind it (annotator.ui.run_format).

The demo (services/demo.py): on the holdout split (demo-30 to demo-32) the candidate fixes
demo-31 and regresses demo-32, which retrieved the forbidden passage p-remote-5-v1 (a blocker);
on all 12 cases it fixes 8 and regresses 1.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import streamlit as st
from sqlmodel import Session, select
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from annotator.db import init_db, session_scope
from annotator.messages import recognize
from annotator.models import Case, GoldRelease
from annotator.services import run_reports
from annotator.services.access import OPERATOR
from annotator.services.demo import DEMO_RELEASE, DEMO_USERS, seed_demo
from annotator.services.labeling import assign_cases
from annotator.services.runs import import_run
from annotator.services.users import add_user
from annotator.ui import run_format as rf
from annotator.ui.i18n import use_language
from annotator.ui.plain import plain_text
from tests.conftest import BACKENDS, fresh_postgres_database
from tests.factories import PASSWORD, make_team

APP = Path(__file__).resolve().parents[1] / "annotator" / "ui" / "app.py"
VIEW = APP.parent / "views" / "runs.py"
N_BOOT = 1000  # the page's resamples (views/runs.py N_BOOTSTRAP): the expected reports use the same
BASE, CANDIDATE = "rag-v3", "rag-v4-rerank"
PASSWORDS = {user.name: user.password for user in DEMO_USERS} | {"boss": PASSWORD}
BLOCKER = "case demo-32 retrieved forbidden passage p-remote-5-v1"


def _seed(session: Session, folder: Path) -> None:
    """The demo (its release gold-v0 in `folder`), and boss, an admin who also labels (nothing yet)."""
    seed_demo(session, release_dir=folder)
    add_user(session, OPERATOR, "boss", ["admin", "labeler"], PASSWORD)


def _build(url: str, folder: Path):  # noqa: ANN202
    engine = init_db(url)
    with session_scope(engine) as session:
        _seed(session, folder)
    return engine


@pytest.fixture(scope="module", params=BACKENDS)
def demo_db(request, tmp_path_factory):
    """The demo on SQLite and on PostgreSQL, seeded once per module and backend: (url, engine).
    Tests on it only read."""
    folder = tmp_path_factory.mktemp(f"runs-{request.param}")
    if request.param == "sqlite":
        url = f"sqlite:///{folder / 'demo.db'}"
        engine = _build(url, folder / "releases")
        yield url, engine
        engine.dispose()
        return
    with fresh_postgres_database() as url:
        engine = _build(url, folder / "releases")
        yield url, engine
        engine.dispose()


@pytest.fixture(scope="module")
def sqlite_demo(tmp_path_factory):
    """The demo on SQLite alone, for the tests that need one database only: (url, engine)."""
    folder = tmp_path_factory.mktemp("runs-sqlite-only")
    url = f"sqlite:///{folder / 'demo.db'}"
    engine = _build(url, folder / "releases")
    yield url, engine
    engine.dispose()


def _point_the_app(url: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.chdir(folder)
    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.fixture
def both(demo_db, tmp_path, monkeypatch):
    """The app pointed at the demo, on each backend: the engine."""
    _point_the_app(demo_db[0], tmp_path, monkeypatch)
    yield demo_db[1]
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def engine(sqlite_demo, tmp_path, monkeypatch):
    """The app pointed at the demo on SQLite: the engine."""
    _point_the_app(sqlite_demo[0], tmp_path, monkeypatch)
    yield sqlite_demo[1]
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def own_demo(tmp_path, monkeypatch):
    """A demo of this test's own (it writes to it), on SQLite: the engine."""
    url = f"sqlite:///{tmp_path / 'own.db'}"
    engine = _build(url, tmp_path / "releases")
    _point_the_app(url, tmp_path, monkeypatch)
    yield engine
    st.cache_data.clear()
    st.cache_resource.clear()
    engine.dispose()


@pytest.fixture
def report_calls(monkeypatch):
    """The page's calls of run_reports.run_report and compare_report (the bootstrap computations)."""
    calls: list[str] = []
    for name in ("run_report", "compare_report"):
        real = getattr(run_reports, name)

        def counting(*args, _real=real, _name=name, **kwargs):  # noqa: ANN002, ANN003, ANN202
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(run_reports, name, counting)
    return calls


def open_page(name: str = "admin", locale: str | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    if locale:
        at.context["locale"] = locale
    at.run()
    at.text_input(key="login.name").input(name)
    at.text_input(key="login.password").input(PASSWORDS[name])
    at.form_submit_button[0].click().run()
    at.switch_page("views/runs.py").run()
    assert not at.exception, at.exception
    return at


def expected_report(engine, run: str = CANDIDATE, **options) -> dict:  # noqa: ANN001
    with session_scope(engine) as session:
        return run_reports.run_report(session, OPERATOR, run, DEMO_RELEASE, n_bootstrap=N_BOOT, seed=0, **options)


def expected_compare(engine, **options) -> dict:  # noqa: ANN001
    with session_scope(engine) as session:
        return run_reports.compare_report(session, OPERATOR, BASE, CANDIDATE, DEMO_RELEASE, n_bootstrap=N_BOOT, seed=0,
                                          **options)


def elements(node) -> list:  # noqa: ANN001
    """The elements under `node` (a tab, a block), in page order."""
    out = []
    for _, child in sorted(getattr(node, "children", {}).items()):
        if isinstance(child, Block):
            out += elements(child)
        else:
            out.append(child)
    return out


def kinds(node) -> list[tuple[str, str]]:  # noqa: ANN001
    """(element type, its text or label) of the elements under `node`, in page order."""
    texts = ("error", "warning", "success", "info", "markdown", "caption", "title", "header", "subheader")
    return [(element.type, str(getattr(element, "value", "") if element.type in texts else getattr(element, "label", "")))
            for element in elements(node)]


def frame_rows(node, first_column: str) -> list[dict]:  # noqa: ANN001
    """The rows of the first dataframe under `node` whose first column is `first_column`."""
    for element in elements(node):
        if element.type == "dataframe" and len(element.value.columns) and element.value.columns[0] == first_column:
            return element.value.to_dict("records")
    raise AssertionError(f"no table starting with {first_column!r}")


def frames(node, first_column: str) -> list[list[dict]]:  # noqa: ANN001
    return [element.value.to_dict("records") for element in elements(node)
            if element.type == "dataframe" and len(element.value.columns) and element.value.columns[0] == first_column]


# --- the report ----------------------------------------------------------------------------------


def test_the_runs_page_follows_the_judges_page_and_is_for_admins_only():
    from annotator.ui.components import PAGE_ROLES

    source = APP.read_text(encoding="utf-8")
    assert source.index('("judges", "views/judges.py"') < source.index('("runs", "views/runs.py"') < source.index('("admin",')
    assert PAGE_ROLES["runs"] == frozenset({"admin"})


def test_the_report_shows_its_blocker_before_any_figure_then_the_services_figures(both):
    at = open_page()
    assert [x.value for x in at.title] == ["Runs"]
    assert (at.selectbox(key="runs.run").value, at.selectbox(key="runs.release").value) == (CANDIDATE, DEMO_RELEASE)
    report_tab = at.tabs[0]
    shown = kinds(report_tab)
    first_error = next(i for i, (kind, _) in enumerate(shown) if kind == "error")
    first_metric = next(i for i, (kind, _) in enumerate(shown) if kind == "metric")
    assert first_error < first_metric
    assert shown[first_error][1] == "**Blockers: 1. Each stops the change whatever the averages say.**\n\n- " + BLOCKER
    data = expected_report(both)
    metrics = {m.label: m.value for m in elements(report_tab) if m.type == "metric"}
    assert metrics == {"Pass rate": f"{data['pass_rate']:.3f}", "Recall@5": f"{data['mean_recall_at_k']:.3f}",
                       "MRR": f"{data['mrr']:.3f}", "Claim support rate": f"{data['claim_support_rate']:.3f}"}
    assert metrics["Pass rate"] == "0.833"  # 10 of 12 pass: demo-23 (partial evidence) and demo-32 (forbidden) fail
    rows = {row["Figure"]: row["Value [95% CI, cases resampled]"] for row in frame_rows_table(report_tab)}
    ci = data["ci95"]["pass_rate"]
    assert rows["Pass rate"] == f"0.833 [{ci[0]:.3f}, {ci[1]:.3f}]"
    assert rows["nDCG@5"] == f"{data['mean_ndcg_at_k']:.3f} [{data['ci95']['mean_ndcg_at_k'][0]:.3f}, " \
                             f"{data['ci95']['mean_ndcg_at_k'][1]:.3f}]"
    scope = next(value for kind, value in shown if kind == "markdown" and value.startswith("**all cases**"))
    assert scope == ("**all cases**: 12 cases scored of the release's 12 (missing from the run: 0; run cases outside the "
                     "release: 0); without relevant evidence (scored on behaviour only): 0; retrieved ids the dataset "
                     "does not know: 1.")
    assert "k 5 · unit: passage · retrieval rule: all relevant in the top k" in [v for k, v in shown if k == "caption"]


def frame_rows_table(node) -> list[dict]:  # noqa: ANN001
    """The rows of the report's figures table (st.table)."""
    for element in elements(node):
        if element.type == "table":
            return element.value.to_dict("records")
    raise AssertionError("no table")


def test_the_baseline_s_report_lists_each_of_its_blockers_with_its_case_and_reason(engine):
    at = open_page()
    at.selectbox(key="runs.run").select(BASE).run()
    report_tab = at.tabs[0]
    errors = [value for kind, value in kinds(report_tab) if kind == "error"]
    data = expected_report(engine, BASE)
    assert len(data["blockers"]) == 10
    lines = errors[0].split("\n")
    assert lines[0] == "**Blockers: 10. Each stops the change whatever the averages say.**"
    assert lines[2:] == [f"- {rf.blocker_markdown(blocker)}" for blocker in data["blockers"]]
    assert "- case demo-29 retrieved forbidden passage p-hyoka-1-2026-04" in lines
    assert "- case demo-29: claim demo-29-c2 is contradicted, severity leak" in lines
    assert any(line.startswith("- case demo-27 answered where the gold expects abstain, with claims not supported: "
                               "demo-27-c2 (insufficient)") for line in lines)
    assert {m.label: m.value for m in elements(report_tab) if m.type == "metric"}["Pass rate"] == "0.250"


def test_a_report_without_a_blocker_says_so(engine):
    at = open_page()
    at.selectbox(key="runs.split").select("dev").run()  # the candidate's dev cases: demo-32 is a holdout case
    report_tab = at.tabs[0]
    assert not [kind for kind, _ in kinds(report_tab) if kind == "error"]
    assert any(kind == "success" and value.startswith("No blocker") for kind, value in kinds(report_tab))


def test_each_slice_has_its_figures_with_intervals_and_an_interval_chart(engine):
    at = open_page()
    rows = {row["Slice"]: row for row in frame_rows(at.tabs[0], "Slice")}
    data = expected_report(engine)["by_slice"]
    assert set(rows) == set(data) == {"insufficient_evidence", "normal", "paraphrase", "permission", "updated_document"}
    assert rows["normal"]["Cases"] == "5 · indicative only" and rows["normal"]["Passed"] == 4
    ci = data["normal"]["ci95"]["pass_rate"]
    assert rows["normal"]["Pass rate"] == f"0.80 [{ci[0]:.2f}, {ci[1]:.2f}]"
    assert rows["permission"]["Pass rate"] == "1.00 (no interval)"  # one case: no resampling
    assert rows["insufficient_evidence"]["Claim support rate"] == "undefined: no case has a labeled claim (0/0)"
    chart = next(c for c in at.get("vega_lite_chart") if "Figures per slice" in c.proto.spec)
    assert "Recall@5" in chart.proto.spec and "indicative only (under 10 cases)" in chart.proto.spec


def test_the_status_and_failure_label_counts_are_shown(engine):
    at = open_page()
    statuses = {row["Status"]: row["Cases"] for row in frame_rows(at.tabs[0], "Status")}
    assert statuses == {"passed": 10, "retrieval failure": 2, "generation failure": 0,
                        "retrieval and generation failure": 0}
    labels = {row["Failure label"]: row["Cases"] for row in frame_rows(at.tabs[0], "Failure label")}
    assert labels == {"partial evidence": 1, "stale evidence": 1, "unauthorized evidence": 1}


def test_the_failure_table_lists_each_failed_case_and_its_filters_narrow_it(engine):
    at = open_page()
    rows = frame_rows(at.tabs[0], "Case")
    assert [(row["Case"], row["Slice"], row["Split"], row["Status"], row["Failure labels"], row["Recall@5"], row["RR"])
            for row in rows] == [
        ("demo-23", "normal", "dev", "retrieval failure", "partial evidence", "0.50", "1.00"),
        ("demo-32", "updated_document", "holdout", "retrieval failure", "stale evidence, unauthorized evidence", "1.00", "1.00"),
    ]
    assert [h.value for h in at.header if h.value.startswith("Failed cases")] == ["Failed cases (2)"]
    assert at.multiselect(key="runs.filter_label").options == ["partial evidence", "stale evidence", "unauthorized evidence"]
    at.multiselect(key="runs.filter_label").select("unauthorized_evidence").run()
    assert [row["Case"] for row in frame_rows(at.tabs[0], "Case")] == ["demo-32"]
    assert at.selectbox(key="runs.case").options == ["(none)", "demo-32"]
    assert "1 of 2 failed cases shown." in [c.value for c in at.caption]
    at.multiselect(key="runs.filter_label").select("partial_evidence").run()  # both labels: no case has both
    assert frame_rows(at.tabs[0], "Case") == []
    at.multiselect(key="runs.filter_label").set_value([]).run()
    assert at.multiselect(key="runs.filter_status").options == ["retrieval failure"]  # the statuses the failed cases have
    at.multiselect(key="runs.filter_status").select("retrieval_failure").run()
    assert [row["Case"] for row in frame_rows(at.tabs[0], "Case")] == ["demo-23", "demo-32"]


def test_the_baseline_s_failures_filter_by_generation_failure(engine):
    at = open_page()
    at.selectbox(key="runs.run").select(BASE).run()
    failed = expected_report(engine, BASE)["cases"]
    generation = [case["case_id"] for case in failed if case["status"] == "generation_failure"]
    assert generation  # rag-v3's unsupported claims
    at.multiselect(key="runs.filter_status").select("generation_failure").run()
    assert [row["Case"] for row in frame_rows(at.tabs[0], "Case")] == generation
    assert {row["Status"] for row in frame_rows(at.tabs[0], "Case")} == {"generation failure"}


def test_a_case_opened_shows_its_retrieved_ranks_its_gold_passages_and_claims_and_the_run_s_answer(both):
    at = open_page()
    at.selectbox(key="runs.case").select("demo-32").run()
    assert not at.exception
    assert "Case demo-32" in [s.value for s in at.subheader]
    retrieved = frame_rows(at.tabs[0], "Rank")
    assert [(row["Rank"], row["Passage"], row["For this case"]) for row in retrieved] == [
        ("1", "p-remote-5-v2", "in the top k, relevant, cited by the answer"),
        ("2", "p-remote-3-v2", "in the top k"),
        ("3", "p-remote-5-v1", "in the top k, forbidden, outdated"),
    ]
    headings = [m.value for m in at.markdown if m.value.startswith(("Rank ", "Not retrieved"))]
    assert headings == ["Rank 3 (in the top 5): 在宅勤務規程 第５条（勤務場所）", "Rank 1 (in the top 5): 在宅勤務規程 第５条（勤務場所）",
                        "Rank 2 (in the top 5): 在宅勤務規程 第７条（使用機器）"]  # the release's order of the case's passages
    assert "p-remote-5-v1 · document zaitaku-kinmu · version v1 · forbidden, outdated" in [c.value for c in at.caption]
    claims = frames(at.tabs[0], "Claim")
    assert [(row["Claim"], row["Gold label"], row["Resolution"]) for row in claims[0]] == [
        ("demo-32-c1", "contradict", "adjudicated"), ("demo-32-c2", "support", "agreed")]
    assert [(row["Claim"], row["Label"]) for row in claims[1]] == [("demo-32-r1", "support")]
    case_errors = [e.value for e in at.error if e.value == BLOCKER]
    assert case_errors == [BLOCKER]  # the case's own blocker, in its box
    assert any(x.value.startswith("在宅勤務の勤務場所は、自宅のほか") for x in at.text)  # the run's answer
    assert "Behaviour: **answer**; the gold expects **answer** (matches)." in [m.value for m in at.markdown]


def test_a_case_opened_by_document_ranks_each_passage_with_its_document(engine):
    at = open_page()
    at.selectbox(key="runs.unit").select("doc").run()
    at.selectbox(key="runs.case").select("demo-32").run()
    retrieved = frame_rows(at.tabs[0], "Rank")
    assert [row["Rank"] for row in retrieved] == ["1 (document 1)", "2 (document 1)", "3 (document 1)"]
    assert "k 5 · unit: document · retrieval rule: all relevant in the top k" in [c.value for c in at.caption]


def test_the_report_s_download_is_the_service_s_report_as_json(engine, monkeypatch):
    downloads = capture_downloads(monkeypatch)
    at = open_page()
    buttons = [b for b in at.get("download_button") if b.proto.label == "Download the report (JSON)"]
    assert len(buttons) == 2  # the report's and the comparison's
    report = json.loads(downloads(buttons[0].proto))
    data = expected_report(engine)
    assert report == json.loads(json.dumps(data))
    comparison = json.loads(downloads(buttons[1].proto))
    assert comparison["decision"] == "blocked" and comparison["split"] == "holdout"


def capture_downloads(monkeypatch):  # noqa: ANN001, ANN201
    """Keep the data of every download button rendered from now on (AppTest discards it); returns
    a function from a DownloadButton proto to its data as text."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    kept: dict[str, object] = {}
    original_deferred, original_add = MediaFileManager.add_deferred, MediaFileManager.add

    def add_deferred(manager, data_callable, *args, **kwargs):  # noqa: ANN001, ANN202
        file_id = original_deferred(manager, data_callable, *args, **kwargs)
        kept[file_id] = data_callable
        return file_id

    def add(manager, data, *args, **kwargs):  # noqa: ANN001, ANN202
        url = original_add(manager, data, *args, **kwargs)
        kept[url] = lambda: data
        return url

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    monkeypatch.setattr(MediaFileManager, "add", add)

    def of(proto) -> str:  # noqa: ANN001
        content = kept[proto.deferred_file_id or proto.url]()
        return content if isinstance(content, str) else bytes(content).decode("utf-8")

    return of


# --- the comparison ----------------------------------------------------------------------------


def test_the_comparison_says_blocked_first_with_its_reason_and_the_split_it_decided_on(both):
    at = open_page()
    assert (at.selectbox(key="runs.base").value, at.selectbox(key="runs.candidate").value) == (BASE, CANDIDATE)
    compare_tab = at.tabs[1]
    shown = [(kind, value) for kind, value in kinds(compare_tab) if kind not in ("selectbox", "number_input")]
    kind, decision = shown[0]  # the decision comes first, before anything else the comparison shows
    assert kind == "error"
    assert decision.startswith("### Decision: BLOCKED\nThe candidate has a blocker: it may not ship")
    assert f"- 1 blocker: {BLOCKER}" in decision.split("\n")
    assert shown[1] == ("markdown", ("Decided on the **holdout** split: the release has holdout cases, and the gate "
                                     "decides on cases kept unseen while tuning."))
    blockers = [value for kind, value in shown[2:] if kind == "error"]
    assert blockers == ["**Blockers: 1. Each stops the change whatever the averages say.**\n\n- " + BLOCKER]
    data = expected_compare(both)
    assert (data["decision"], data["fixed"], data["regressed"]) == ("blocked", ["demo-31"], ["demo-32"])
    fixed, regressed = frames(compare_tab, "Case")
    assert fixed == [{"Case": "demo-31", "Slice": "insufficient_evidence"}]
    assert regressed == [{"Case": "demo-32", "Slice": "updated_document"}]
    subheaders = [value for kind, value in kinds(compare_tab) if kind == "subheader"]
    assert subheaders[:2] == ["Fixed (1)", "Regressed (1)"]


def test_on_every_case_the_comparison_fixes_eight_and_regresses_one_and_is_still_blocked(engine):
    at = open_page()
    at.selectbox(key="runs.compare_split").select("all").run()
    compare_tab = at.tabs[1]
    decision = next(value for kind, value in kinds(compare_tab) if kind == "error")
    assert decision.startswith("### Decision: BLOCKED")
    assert "Decided on **all cases**, as chosen." in [value for kind, value in kinds(compare_tab) if kind == "markdown"]
    fixed, regressed = frames(compare_tab, "Case")
    assert [row["Case"] for row in fixed] == ["demo-21", "demo-22", "demo-25", "demo-26", "demo-27", "demo-28", "demo-29",
                                              "demo-31"]
    assert [row["Case"] for row in regressed] == ["demo-32"]
    data = expected_compare(engine, split="all")
    ci = data["ci95"]["pass_rate_difference"]
    difference = next(value for kind, value in kinds(compare_tab) if kind == "markdown" and value.startswith("Change"))
    assert difference == (f"Change of the pass rate: **+0.583**, 95% CI (paired cases) [{ci[0]:.3f}, {ci[1]:.3f}]; "
                          f"exact McNemar p = {data['mcnemar_p']:.3f} (8 fixed, 1 regressed).")
    assert f"{data['mcnemar_p']:.3f}" == "0.039"  # 8 against 1: 2 * (1 + 8) / 2**9
    metrics = {m.label: m.value for m in elements(compare_tab) if m.type == "metric"}
    assert metrics == {"Baseline pass rate": "0.250", "Candidate pass rate": "0.833", "Change": "+0.583"}
    slices = {row["Slice"]: row for row in frame_rows(compare_tab, "Slice")}
    assert slices["updated_document"]["Regressed"] == 1 and slices["updated_document"]["Regresses"] == ""
    deltas = {row["Figure"]: row for row in frame_rows(compare_tab, "Figure")}
    assert deltas["MRR"]["Change"] == f"{data['metric_deltas']['mrr']['delta']:+.3f}"
    assert deltas["Pass rate"]["Baseline"] == "0.250"


def test_a_regressing_slice_is_flagged_and_holds_the_change(own_demo, tmp_path):
    """Two runs of the demo's dev cases made here: the candidate passes every case but fails every
    case of slice normal the baseline passes (no blocker): hold, and slice normal says so."""
    with session_scope(own_demo) as session:
        report = run_reports.run_report(session, OPERATOR, CANDIDATE, DEMO_RELEASE, n_bootstrap=0)
    passing = [case["case_id"] for case in report["cases"] if case["status"] == "passed" and case["slice"] == "normal"]
    forbidden = {case["case_id"]: set(case["forbidden_retrieved"]) for case in report["cases"]}
    base_lines, candidate_lines = [], []
    with session_scope(own_demo) as session:
        from annotator.services.runs import run_cases

        for case in run_cases(session, OPERATOR, CANDIDATE):  # without its forbidden passage: no blocker
            allowed = {**case, "retrieved": [p for p in case["retrieved"] if p not in forbidden[case["case_id"]]]}
            base_lines.append(allowed)
            candidate_lines.append({**allowed, "retrieved": ["nothing-relevant"]} if case["case_id"] in passing else allowed)
    for name, lines in (("made-base", base_lines), ("made-candidate", candidate_lines)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({key: line[key] for key in ("case_id", "retrieved", "behavior", "answer",
                                                                       "cited", "claims") if line[key] is not None},
                                           ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
        with session_scope(own_demo) as session:
            import_run(session, OPERATOR, path, run=name)
    at = open_page()
    assert (at.selectbox(key="runs.base").value, at.selectbox(key="runs.candidate").value) == ("made-base", "made-candidate")
    at.selectbox(key="runs.compare_split").select("all").run()
    compare_tab = at.tabs[1]
    decision = next(value for kind, value in kinds(compare_tab) if kind in ("error", "warning", "success"))
    with session_scope(own_demo) as session:
        data = run_reports.compare_report(session, OPERATOR, "made-base", "made-candidate", DEMO_RELEASE, split="all",
                                          n_bootstrap=N_BOOT)
    assert data["decision"] == "hold"
    assert decision.startswith("### Decision: HOLD")
    kind = next(kind for kind, _ in kinds(compare_tab) if kind in ("error", "warning", "success"))
    assert kind == "warning"
    slices = {row["Slice"]: row for row in frame_rows(compare_tab, "Slice")}
    assert slices["normal"]["Regressed"] == len(passing)
    assert (slices["normal"]["Regresses"] == "REGRESSES") == data["by_slice"]["normal"]["regresses"]


def test_the_same_run_twice_is_not_compared(engine):
    at = open_page()
    at.selectbox(key="runs.base").select(CANDIDATE).run()
    assert "Choose two different runs: the baseline and the candidate are the same." in [w.value for w in at.warning]
    assert not [kind for kind, value in kinds(at.tabs[1]) if kind == "error" and "Decision" in value]


# --- the cache, the release's check, who may see it ---------------------------------------------


def test_a_rerun_reuses_the_reports_and_new_options_compute_anew(engine, report_calls):
    at = open_page()
    assert sorted(report_calls) == ["compare_report", "run_report"]
    at.run()
    open_page()  # another browser session of an admin: the same reports
    assert sorted(report_calls) == ["compare_report", "run_report"]
    at.number_input(key="runs.k").set_value(3).run()
    assert sorted(report_calls) == ["compare_report", "compare_report", "run_report", "run_report"]
    assert {m.label for m in at.metric} >= {"Recall@3"}


def test_a_release_folder_edited_after_its_report_was_cached_is_refused_not_shown_from_the_cache(own_demo, report_calls):
    at = open_page()
    assert at.metric and len(report_calls) == 2
    with Session(own_demo) as session:
        folder = Path(session.exec(select(GoldRelease.path).where(GoldRelease.name == DEMO_RELEASE)).one())
    with (folder / "gold.csv").open("a", encoding="utf-8") as gold_csv:
        gold_csv.write("x")
    at.run()
    assert not at.exception and not at.metric and len(report_calls) == 2
    assert any("gold.csv" in error.value and "does not match" in error.value for error in at.error)


def test_an_admin_still_to_label_a_released_claim_gets_no_report_not_even_one_cached_for_another(own_demo):
    open_page("admin")  # caches the reports for admins who label nothing
    with session_scope(own_demo) as session:
        case = session.exec(select(Case).where(Case.case_id == "demo-21")).one()
        assign_cases(session, OPERATOR, [case.id], ["boss"])
    at = open_page("boss")
    refusals = [e.value for e in at.error]
    assert len(refusals) == 2  # the report and the comparison
    assert all("you cannot score a run against this release" in refusal for refusal in refusals)
    assert not at.metric and not at.get("download_button")


@pytest.mark.parametrize("name", ["aoi", "mika"])
def test_labelers_and_adjudicators_cannot_open_the_page(engine, name):
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.text_input(key="login.name").input(name)
    at.text_input(key="login.password").input(PASSWORDS[name])
    at.form_submit_button[0].click().run()
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page("views/runs.py")
    direct = AppTest.from_file(str(VIEW), default_timeout=60)
    direct.session_state["auth.user_pk"] = at.session_state["auth.user_pk"]
    direct.session_state["auth.user_name"] = name
    direct.run()
    assert [e.value for e in direct.error] == ["You cannot open this page with your roles."]
    assert not direct.selectbox and not direct.metric


@pytest.mark.parametrize("release, run, says", [
    (True, False, ["No run yet"]),
    (False, True, ["No gold release yet"]),
    (False, False, ["No run yet", "No gold release yet"]),
])
def test_without_a_run_or_a_release_the_page_says_what_to_do_first(tmp_path, monkeypatch, release, run, says):
    from annotator.services.releases import create_release
    from tests.test_judges import seed_gold

    url = f"sqlite:///{tmp_path / 'empty.db'}"
    engine = init_db(url)
    with session_scope(engine) as session:
        make_team(session)
        seed_gold(session)
    if release:
        with session_scope(engine) as session:
            create_release(session, OPERATOR, "v1", only_final=True, out_dir=tmp_path / "releases", n_bootstrap=0)
    if run:
        path = tmp_path / "run.jsonl"
        path.write_text(json.dumps({"case_id": "q1", "retrieved": ["p1"], "behavior": "answer"}) + "\n", encoding="utf-8")
        with session_scope(engine) as session:
            import_run(session, OPERATOR, path, run="r1")
    _point_the_app(url, tmp_path, monkeypatch)
    try:
        at = AppTest.from_file(str(APP), default_timeout=60)
        at.run()
        at.text_input(key="login.name").input("root")
        at.text_input(key="login.password").input(PASSWORD)
        at.form_submit_button[0].click().run()
        at.switch_page("views/runs.py").run()
        assert not at.exception
        infos = [i.value for i in at.info if i.value.startswith(("No run", "No gold release"))]
        assert [info.split(".")[0].split(":")[0] for info in infos] == says
        if not run:
            assert "`annotator run import FILE --run NAME`" in infos[0]
        if not release:
            assert "`annotator release create NAME --only-final`" in infos[-1]
        assert [box for box in at.selectbox if box.key == "runs.run"] == [] and not at.metric
    finally:
        st.cache_data.clear()
        engine.dispose()


# --- Japanese ----------------------------------------------------------------------------------


def test_in_japanese_the_decision_its_reasons_and_the_blockers_read_in_japanese(engine):
    at = open_page(locale="ja-JP")
    assert [x.value for x in at.title] == ["実行"]
    decision = next(value for kind, value in kinds(at.tabs[1]) if kind == "error")
    assert decision.startswith("### 判定: ブロック（BLOCKED）")
    assert "- ブロッカー 1 件: ケース demo-32 が禁止されたパッセージ p-remote-5-v1 を検索しました" in decision.split("\n")
    assert "下限が 0（許容幅なし） を下回っています" in decision
    assert "退行しているスライスはありません" in decision
    with use_language("ja"):  # AppTest formats the options in the test's language
        at.selectbox(key="runs.case").select("demo-32").run()
    assert not at.exception
    rows = frame_rows(at.tabs[0], "順位")
    assert rows[2]["このケースにとって"] == "上位 k 件, 禁止, 古い版"
    shown = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "Decided" not in shown and "Blockers" not in shown


# --- values from files shown as text ------------------------------------------------------------


def test_a_run_name_and_case_ids_holding_markdown_or_html_are_shown_as_text(tmp_path, monkeypatch):
    from tests.test_plain_text import PASSWORD as HOSTILE_PASSWORD
    from tests.test_plain_text import RAG_RUN, build_world, hostile, markdown_bodies, problems_of

    url = f"sqlite:///{tmp_path / 'hostile.db'}"
    build_world(url, tmp_path)
    _point_the_app(url, tmp_path, monkeypatch)
    try:
        at = AppTest.from_file(str(APP), default_timeout=60)
        at.run()
        at.text_input(key="login.name").input("boss")
        at.text_input(key="login.password").input(HOSTILE_PASSWORD)
        at.form_submit_button[0].click().run()
        at.switch_page("views/runs.py").run()
        assert not at.exception and [e.value for e in at.error if "Blockers" not in e.value] == []
        assert at.selectbox(key="runs.run").options == [plain_text(RAG_RUN)]
        case_id = hostile("case2")
        assert [row["Case"] for row in frame_rows(at.tabs[0], "Case")] == [plain_text(case_id)]
        assert "[U+202E]" in plain_text(case_id)
        at.selectbox(key="runs.case").select(case_id).run()
        assert not at.exception
        subheader = next(s.value for s in at.subheader if s.value.startswith("Case "))
        assert problems_of(subheader) == [] and "\\[link\\]" in subheader
        assert all(problems_of(body) == [] for body in markdown_bodies(at))
        retrieved = frame_rows(at.tabs[0], "Rank")
        assert retrieved[0]["Passage"] == plain_text(hostile("p2.1"))
        assert any(x.value == plain_text(hostile("Passage text 2.1 about travel")) for x in at.text)
    finally:
        st.cache_data.clear()
        st.cache_resource.clear()


# --- the builders ------------------------------------------------------------------------------


@pytest.mark.parametrize("reason, english, japanese", [
    ("1 blocker: case c1 retrieved forbidden passage p9",
     "1 blocker: case c1 retrieved forbidden passage p9",
     "ブロッカー 1 件: ケース c1 が禁止されたパッセージ p9 を検索しました"),
    ("2 blockers: case c1 retrieved forbidden passages p8, p9; case c2: claim x is contradicted, severity leak",
     "2 blockers: case c1 retrieved forbidden passages p8, p9; case c2: claim x is contradicted, severity leak",
     "ブロッカー 2 件: ケース c1 が禁止されたパッセージ p8, p9 を検索しました; ケース c2: 主張 x は矛盾と判定され、重大度は leak です"),
    ("the pass rate's change has no 95% interval (the two runs have no case in common), so nothing rules out a drop",
     "the pass rate's change has no 95% interval (the two runs have no case in common), so nothing rules out a drop",
     "合格率の変化に 95% 区間がありません（2 つの実行に共通のケースがありません）。低下していないとは言えません"),
    ("a reason no message gives [x](y)", "a reason no message gives \\[x\\](y)", "a reason no message gives \\[x\\](y)"),
])
def test_the_gate_s_reasons_are_written_in_the_current_language(reason, english, japanese):
    with use_language("en"):
        assert rf.reason_markdown(reason) == english
    with use_language("ja"):
        assert rf.reason_markdown(reason) == japanese


def test_every_reason_of_the_demo_s_comparisons_is_recognized_and_written_in_japanese(engine):
    reasons = [reason for split in (None, "all") for reason in expected_compare(engine, split=split)["reasons"]]
    assert len(reasons) == 7  # the holdout comparison also says it is indicative (3 cases)
    for reason in reasons:
        assert recognize(reason, "msg.run.reason.") is not None, reason
        with use_language("ja"):
            assert re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", rf.reason_markdown(reason)), reason


@pytest.mark.parametrize("blocker, english", [
    ({"case_id": "c1", "reason": "forbidden_evidence", "passage_ids": ["p1"]}, "case c1 retrieved forbidden passage p1"),
    ({"case_id": "c1", "reason": "answered_when_expected", "expected": "refuse",
      "claims": [{"claim_id": None, "text": "t", "label": "insufficient"}]},
     'case c1 answered where the gold expects refuse, with claims not supported: "t" (insufficient)'),
    ({"case_id": "c*1", "reason": "severe_contradiction", "claim_id": "k", "text": "t", "severity": "leak"},
     "case c\\*1: claim k is contradicted, severity leak"),
])
def test_a_blocker_names_its_case_and_reason(blocker, english):
    with use_language("en"):
        assert rf.blocker_markdown(blocker) == english


def test_the_failure_filter_keeps_cases_of_a_chosen_status_that_carry_every_chosen_label():
    cases = [{"case_id": "a", "status": "retrieval_failure", "failure_labels": ["retrieval_miss"]},
             {"case_id": "b", "status": "both", "failure_labels": ["retrieval_miss", "unsupported_claim"]},
             {"case_id": "c", "status": "generation_failure", "failure_labels": ["unsupported_claim"]}]
    assert [c["case_id"] for c in rf.filter_cases(cases)] == ["a", "b", "c"]
    assert [c["case_id"] for c in rf.filter_cases(cases, ["both", "generation_failure"])] == ["b", "c"]
    assert [c["case_id"] for c in rf.filter_cases(cases, labels=["retrieval_miss", "unsupported_claim"])] == ["b"]
    assert [c["case_id"] for c in rf.filter_cases(cases, ["retrieval_failure"], ["unsupported_claim"])] == []
    assert rf.present(cases) == (["retrieval_failure", "generation_failure", "both"], ["retrieval_miss", "unsupported_claim"])


def test_a_slice_that_regresses_significantly_is_flagged():
    part = {"n": 12, "fixed": [], "regressed": [f"c{n}" for n in range(6)], "fix_rate": None, "regression_rate": 0.5,
            "regression_p": 0.015625, "regression_p_holm": 0.03125, "regresses": True}
    with use_language("en"):
        table = rf.compare_slice_table({"by_slice": {"web": part, "": {**part, "regresses": False}}})
    assert table.to_dict("records") == [
        {"Slice": "web", "Cases": 12, "Fixed": 0, "Regressed": 6, "Fix rate": "undefined", "Regression rate": "0.50",
         "p (one-sided)": "0.016", "p (Holm)": "0.031", "Regresses": "REGRESSES"},
        {"Slice": "none set", "Cases": 12, "Fixed": 0, "Regressed": 6, "Fix rate": "undefined",
         "Regression rate": "0.50", "p (one-sided)": "0.016", "p (Holm)": "0.031", "Regresses": ""},
    ]


def test_the_split_a_comparison_decided_on_is_said():
    with use_language("en"):
        assert rf.split_text({"split": "holdout", "split_chosen": "default"}).startswith("Decided on the **holdout** split")
        assert rf.split_text({"split": "all", "split_chosen": "default"}) == (
            "Decided on **all cases**: the release has no holdout split.")
        assert rf.split_text({"split": "dev", "split_chosen": "given"}) == "Decided on **dev**, as chosen."


def test_the_case_detail_scores_the_case_as_the_report_does_in_plain_values(both):
    report = expected_report(both)
    with session_scope(both) as session:
        fingerprint = run_reports.report_fingerprint(session, OPERATOR, [BASE, CANDIDATE], DEMO_RELEASE)
        assert [type(value) for _, count, highest in fingerprint.corpus for value in (count, highest)] == [int, int]
        for case in report["cases"]:
            detail = run_reports.case_detail(session, OPERATOR, CANDIDATE, DEMO_RELEASE, case["case_id"])
            assert detail["score"] == {key: value for key, value in case.items() if key != "dataset"}
            json.dumps(detail, allow_nan=False)
