"""The Judges page driven through AppTest, on SQLite and PostgreSQL: the judge run's figures with
both intervals as the service computes them (and as worked out by hand in tests/test_judges.py),
the confusion matrix, the slices, the humans, the corrected support rate, the disagreements linked
to their history; the holdout shown only on a press, each press recorded once however often the
page reruns; the cached report; who may open the page; the states without a judge run or a release;
and the Japanese texts. Also the builders behind it (annotator.ui.judge_format).

The world is tests/test_judges.py's: release v1 of claims c1-c5 (dev) and h1 (holdout), labeled
by alice and bob (c5 adjudicated by carol), and judge run j1, which labels them and u1 (outside
the release). The gold against the judge on dev: c2 a false fail, c3 a false pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from sqlmodel import Session, func, select
from streamlit.testing.v1 import AppTest

from annotator.db import init_db, session_scope
from annotator.models import Case, GoldRelease, LabelEvent
from annotator.services import judges
from annotator.services.access import OPERATOR
from annotator.services.judges import import_judge_labels, judge_report
from annotator.services.labeling import assign_cases
from annotator.services.releases import create_release
from annotator.services.users import add_user
from annotator.ui import format as fmt
from annotator.ui import judge_format as jf
from annotator.ui.i18n import t, use_language
from tests.conftest import ON_BOTH, seeded_url
from tests.factories import PASSWORD, make_team
from tests.test_judges import JUDGE, judge_file, seed_gold

APP = Path(__file__).resolve().parents[1] / "annotator" / "ui" / "app.py"
VIEW = APP.parent / "views" / "judges.py"
N_BOOT = 1000  # the page's resamples (views/judges.py N_BOOTSTRAP): the expected report uses the same


def _seed(session: Session) -> None:
    """The gold world, with logins: alice and bob label, carol adjudicates, root is an admin,
    boss an admin who also labels (nothing assigned yet)."""
    make_team(session)
    add_user(session, OPERATOR, "boss", ["admin", "labeler"], PASSWORD)
    seed_gold(session)


def _world(request, tmp_path, monkeypatch, *, release: bool = True, run: bool = True):  # noqa: ANN001, ANN202
    url = seeded_url(request, f"sqlite:///{tmp_path}/judges.db", _seed)
    engine = init_db(url)
    if release:
        with session_scope(engine) as session:
            create_release(session, OPERATOR, "v1", only_final=True, out_dir=tmp_path / "releases", n_bootstrap=0)
    if run:
        with session_scope(engine) as session:
            import_judge_labels(session, OPERATOR, judge_file(tmp_path), run="j1", model="lexical", prompt_version="p1",
                                note="first try")
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.chdir(tmp_path)
    st.cache_resource.clear()
    st.cache_data.clear()
    return engine


@pytest.fixture
def engine(request, tmp_path, monkeypatch):
    """Release v1 and judge run j1 on the seeded database the app opens."""
    engine = _world(request, tmp_path, monkeypatch)
    yield engine
    st.cache_data.clear()
    st.cache_resource.clear()
    engine.dispose()


@pytest.fixture
def report_calls(monkeypatch):
    """The page's calls of judges.judge_report (the bootstrap computation): their holdout flags."""
    calls: list[bool] = []
    real = judges.judge_report

    def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(bool(kwargs.get("holdout")))
        return real(*args, **kwargs)

    monkeypatch.setattr(judges, "judge_report", counting)
    return calls


def expected(engine, **options) -> dict:  # noqa: ANN001
    with session_scope(engine) as session:
        return judge_report(session, OPERATOR, "j1", "v1", n_bootstrap=N_BOOT, seed=0, **options)


def open_page(name: str = "root", locale: str | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    if locale:
        at.context["locale"] = locale
    at.run()
    at.text_input(key="login.name").input(name)
    at.text_input(key="login.password").input(PASSWORD)
    at.form_submit_button[0].click().run()
    at.switch_page("views/judges.py").run()
    assert not at.exception, at.exception
    return at


def holdout_views(engine) -> int:  # noqa: ANN001
    with Session(engine) as session:
        return session.exec(select(func.count()).select_from(LabelEvent).where(LabelEvent.entity == "holdout_view")).one()


def table_rows(at: AppTest, first_column: str) -> dict[str, dict]:
    """The rows of the first dataframe or table whose columns start with `first_column`, by that column."""
    for frame in [*at.table, *at.dataframe]:
        value = frame.value
        if len(value.columns) and value.columns[0] == first_column:
            return {str(row[first_column]): row for row in value.to_dict("records")}
    raise AssertionError(f"no table starting with {first_column!r}")


def page_links(at: AppTest) -> list[tuple[str, str]]:
    return [(link.proto.label, link.proto.query_string) for link in at.get("page_link")]


# --- the figures ---------------------------------------------------------------------------------


@ON_BOTH
def test_the_page_shows_the_services_figures_with_both_intervals_and_their_n(engine):
    at = open_page()
    data = expected(engine)
    assert [x.value for x in at.title] == ["Judges"]
    assert [e.value for e in at.error] == []
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"Percent agreement": "0.600", "Cohen's kappa": "0.375", "False pass rate": "0.333",
                       "False fail rate": "0.500"}  # 3/5; (0.6 - 0.36) / 0.64; c3 of 3; c2 of 2
    rows = table_rows(at, "Figure")
    for metric, name in (("percent_agreement", "Percent agreement"), ("cohen_kappa", "Cohen's kappa"),
                         ("false_pass_rate", "False pass rate"), ("false_fail_rate", "False fail rate")):
        row = rows[name]
        ci, analytic = data["ci95"][metric], data["ci95_analytic"][metric]
        assert row["Value [95% CI, cases resampled]"] == (f"{data[metric]:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]" if ci
                                                          else f"{data[metric]:.3f} (no interval)")
        assert row["Analytic 95% CI"] == (f"[{analytic[0]:.3f}, {analytic[1]:.3f}]" if analytic else "—")
        assert row["n (claims)"] == data["denominators"][metric]
        assert row["Note"].startswith("indicative only")  # every n is under 10 here
        if not ci:  # 3 cases: a rate undefined in too many resamples has no interval, and the note says why
            assert "no interval: the coefficient is undefined (0/0) in" in row["Note"]
    assert any(data["ci95"].values())
    assert rows["False pass rate"]["n (claims)"] == 3 and rows["False fail rate"]["n (claims)"] == 2
    scope = next(m.value for m in at.markdown if m.value.startswith("**Dev split**"))
    assert scope == ("**Dev split**: 5 gold claims, 5 labeled by the judge, 0 not labeled by it. "
                     "Holdout claims left out: 1.")


def test_the_confusion_matrix_has_gold_rows_and_judge_columns(engine):
    at = open_page()
    frame = next(f.value for f in at.dataframe if f.value.index.name == "gold \\ judge")
    assert frame.to_dict("index") == {"support": {"support": 1, "contradict": 1, "insufficient": 0},
                                      "contradict": {"support": 1, "contradict": 1, "insufficient": 0},
                                      "insufficient": {"support": 0, "contradict": 0, "insufficient": 1}}


def test_each_slice_has_its_false_pass_and_false_fail_rates_with_n_and_its_undefined_reason(engine):
    at = open_page()
    rows = table_rows(at, "Slice")
    data = expected(engine)["by_slice"]
    assert set(rows) == {"normal", "paraphrase"}
    # normal: c1 (gold support, judge support), c2 (support, contradict), c5 (contradict, contradict): no false
    # pass of c5, the one claim whose gold is not support; c2 fails falsely, 1 of 2.
    normal = data["normal"]
    assert normal["false_pass_rate"] == 0.0 and normal["false_fail_rate"] == pytest.approx(0.5)
    assert rows["normal"]["False fail rate"].startswith("0.50 ") and "(n = 2 · cases = 1 · indicative only)" in rows["normal"]["False fail rate"]
    # paraphrase: c3 (contradict, support) passes falsely, c4 does not: 1 of 2; neither is gold support, so the
    # false fail rate is 0/0, with its reason as a note
    assert rows["paraphrase"]["False fail rate"] == "undefined (note 1)"
    assert rows["paraphrase"]["False pass rate"].startswith("0.50 ")
    notes = [c.value for c in at.caption if c.value.startswith("Note 1.")]
    assert notes == ["Note 1. Undefined: no claim's gold label is 'support', so no claim can fail falsely (0/0)."]
    chart = next(c for c in at.get("vega_lite_chart") if "per slice" in c.proto.spec)
    assert "False pass rate" in chart.proto.spec and "indicative only (under 10 claims or cases)" in chart.proto.spec


def test_the_judge_is_shown_beside_each_human_and_the_human_range(engine):
    at = open_page()
    rows = table_rows(at, "Who")
    data = expected(engine)
    assert list(rows) == ["alice", "bob", "Judge (j1)", "Human range"]
    assert rows["bob"]["Percent agreement"].startswith("0.800 ")  # c5: bob said support, the gold contradict
    assert rows["alice"]["Claims"] == "5" and rows["Judge (j1)"]["Claims"] == "5"
    assert rows["Judge (j1)"]["Cohen's kappa"] == jf.figure(data, "cohen_kappa") + " · indicative only"  # 5 claims
    assert rows["bob"]["Percent agreement"].endswith(" · indicative only")
    assert rows["Human range"]["Percent agreement"] == "0.800 – 1.000"


def test_the_corrected_support_rate_stands_beside_the_judge_only_and_gold_only_rates_with_its_assumption(engine):
    at = open_page()
    corrected = expected(engine)["corrected_support_rate"]
    rows = table_rows(at, "Estimate")
    assert list(rows) == ["Corrected (PPI++)", "Judge only", "Gold only"]
    rate = "Support rate [95% CI, cases resampled]"
    assert rows["Judge only"][rate].startswith("0.500 ")  # c1, c3, u1 of 6
    assert rows["Gold only"][rate].startswith("0.400 ")  # c1, c2 of 5
    assert rows["Corrected (PPI++)"][rate].startswith(f"{corrected['estimate']:.3f} ")
    assert rows["Gold only"]["95% CI if claims were independent"] == fmt.interval(corrected["gold_only_ci95_analytic"])
    assert (rows["Judge only"]["Claims"], rows["Gold only"]["Claims"]) == (6, 5)
    infos = [i.value for i in at.info]
    assert ("Assumption: the estimate assumes the released claims are a random sample of the claims the judge "
            "labeled; it is biased if they were chosen otherwise (by slice, difficulty or time).") in infos


def test_each_disagreement_links_to_its_claims_history(engine):
    at = open_page()
    assert page_links(at) == [
        ("c2 · case q1 · slice normal · dev: gold support, judge contradict", "history=c2&dataset=pilot"),
        ("c3 · case q2 · slice paraphrase · dev: gold contradict, judge support", "history=c3&dataset=pilot"),
    ]
    assert [h.value for h in at.header if h.value.startswith("Disagreements")] == ["Disagreements (2)"]


def test_the_run_s_metadata_is_shown(engine):
    at = open_page()
    rows = table_rows(at, "Field")
    assert rows["Model"]["Value"] == "lexical" and rows["Prompt version"]["Value"] == "p1"
    assert rows["Note"]["Value"] == "first try" and rows["Dataset"]["Value"] == "pilot"
    assert rows["Labels"]["Value"] == "7 (support 4, contradict 2, insufficient 1)"
    assert rows["File"]["Value"].startswith("judge.jsonl (SHA-256 ")


def test_a_report_against_a_superseded_release_says_so(engine, tmp_path):
    with session_scope(engine) as session:
        create_release(session, OPERATOR, "v2", only_final=True, out_dir=tmp_path / "releases", n_bootstrap=0)
    at = open_page()
    at.selectbox(key="judges.release").select("v1").run()
    assert "Release v1 is superseded by v2: score the judge against the newest gold." in [w.value for w in at.warning]
    at.selectbox(key="judges.release").select("v2").run()
    assert not any("superseded" in w.value for w in at.warning)


# --- the holdout -------------------------------------------------------------------------------


@ON_BOTH
def test_each_press_of_the_holdout_button_records_one_viewing_and_a_rerun_none(engine, report_calls):
    at = open_page()
    assert holdout_views(engine) == 0 and report_calls == [False]
    assert not any(s.value == "Holdout figures" for s in at.subheader)
    assert "so far: 0 for this run, 0 for any run." in next(m.value for m in at.markdown if "holdout claims:" in m.value)
    at.button(key="judges.show_holdout").click().run()
    assert holdout_views(engine) == 1 and report_calls.count(True) == 1
    assert [s.value for s in at.subheader if s.value == "Holdout figures"] == ["Holdout figures"]
    scope = next(m.value for m in at.markdown if m.value.startswith("**Holdout split**"))
    assert scope.startswith("**Holdout split**: 1 gold claims, 1 labeled by the judge")
    assert "so far: 1 for this run, 1 for any run." in " ".join(c.value for c in at.caption)
    for _ in range(3):  # reruns (any widget, a reload of the script) show it again without recording
        at.run()
        assert [s.value for s in at.subheader if s.value == "Holdout figures"] == ["Holdout figures"]
    assert holdout_views(engine) == 1 and report_calls.count(True) == 1
    at.button(key="judges.show_holdout").click().run()
    assert holdout_views(engine) == 2 and report_calls.count(True) == 2
    assert "so far: 2 for this run, 2 for any run." in " ".join(c.value for c in at.caption)


def test_the_holdout_figures_are_the_services_and_their_undefined_rates_say_why(engine):
    at = open_page()
    at.button(key="judges.show_holdout").click().run()
    held = expected(engine, holdout=True)
    tables = [f.value for f in at.table if f.value.columns[0] == "Figure"]
    assert len(tables) == 2  # dev, then holdout
    rows = {row["Figure"]: row for row in tables[1].to_dict("records")}
    assert rows["Percent agreement"]["Value [95% CI, cases resampled]"].startswith(f"{held['percent_agreement']:.3f}")
    # h1 alone, gold support: no claim can pass falsely
    assert rows["False pass rate"]["Value [95% CI, cases resampled]"] == (
        "undefined: every claim's gold label is 'support', so no claim can pass falsely (0/0)")


def test_the_holdout_shown_is_for_the_run_and_release_it_was_asked_for(engine, tmp_path):
    with session_scope(engine) as session:
        import_judge_labels(session, OPERATOR, judge_file(tmp_path, JUDGE, "other.jsonl"), run="j2")
    at = open_page()
    at.selectbox(key="judges.run").select("j1").run()
    at.button(key="judges.show_holdout").click().run()
    assert any(s.value == "Holdout figures" for s in at.subheader)
    at.selectbox(key="judges.run").select("j2").run()
    assert not any(s.value == "Holdout figures" for s in at.subheader)
    assert "so far: 0 for this run, 1 for any run." in next(m.value for m in at.markdown if "holdout claims:" in m.value)


# --- the cache and who may see it ---------------------------------------------------------------


def test_a_rerun_reuses_the_report_and_a_new_release_recomputes_it(engine, tmp_path, report_calls):
    at = open_page()
    at.run()
    open_page()  # another browser session of an admin who does not label: the same report
    assert report_calls == [False]
    with session_scope(engine) as session:
        create_release(session, OPERATOR, "v2", only_final=True, out_dir=tmp_path / "releases", n_bootstrap=0)
    at.run()  # v1 is still chosen; a newer release supersedes it, so its report changed
    assert report_calls == [False, False]
    assert any("superseded by v2" in w.value for w in at.warning)


def test_an_admin_still_to_label_a_released_claim_gets_no_report_not_even_one_cached_for_another(engine):
    open_page("root")  # caches the report for admins who label nothing
    with session_scope(engine) as session:
        q1 = session.exec(select(Case).where(Case.case_id == "q1")).one()
        assign_cases(session, OPERATOR, [q1.id], ["boss"])
    at = open_page("boss")
    assert len(at.error) == 1 and "see a judge report against this release" in at.error[0].value
    assert not at.metric and not at.get("page_link")


@pytest.mark.parametrize("name", ["alice", "carol"])
def test_labelers_and_adjudicators_cannot_open_the_page(engine, name):
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.text_input(key="login.name").input(name)
    at.text_input(key="login.password").input(PASSWORD)
    at.form_submit_button[0].click().run()
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page("views/judges.py")
    direct = AppTest.from_file(str(VIEW), default_timeout=60)
    direct.session_state["auth.user_pk"] = at.session_state["auth.user_pk"]
    direct.session_state["auth.user_name"] = name
    direct.run()
    assert [e.value for e in direct.error] == ["You cannot open this page with your roles."]
    assert not direct.selectbox and not direct.metric


# --- without a run or a release -----------------------------------------------------------------


@pytest.mark.parametrize("release, run, says", [
    (True, False, ["No judge run yet"]),
    (False, True, ["No gold release yet"]),
    (False, False, ["No judge run yet", "No gold release yet"]),
])
def test_without_a_judge_run_or_a_release_the_page_says_what_to_do_first(request, tmp_path, monkeypatch, release, run,
                                                                         says):
    engine = _world(request, tmp_path, monkeypatch, release=release, run=run)
    try:
        at = open_page()
        infos = [i.value for i in at.info if i.value.startswith(("No judge run", "No gold release"))]
        assert [info.split(".")[0].split(":")[0] for info in infos] == says
        if not run:
            assert "`annotator judge import FILE --run NAME" in infos[0]
        if not release:
            assert "`annotator release create NAME --only-final`" in infos[-1]
        assert [box for box in at.selectbox if box.key == "judges.run"] == []
        assert not at.metric and not at.get("page_link")
    finally:
        st.cache_data.clear()
        engine.dispose()


def test_the_demo_opens_the_judges_page_filled_with_its_run_against_the_pilots_release(tmp_path, monkeypatch):
    from annotator.services.demo import DEMO_JUDGE_RUN, DEMO_RELEASE, DEMO_USERS, seed_demo

    url = f"sqlite:///{tmp_path}/demo.db"
    engine = init_db(url)
    with session_scope(engine) as session:
        seed_demo(session, release_dir=tmp_path / "data" / "releases")
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.chdir(tmp_path)
    st.cache_resource.clear()
    try:
        admin = next(user for user in DEMO_USERS if "admin" in user.roles)
        at = AppTest.from_file(str(APP), default_timeout=60)
        at.run()
        at.text_input(key="login.name").input(admin.name)
        at.text_input(key="login.password").input(admin.password)
        at.form_submit_button[0].click().run()
        at.switch_page("views/judges.py").run()
        assert not at.exception
        assert (at.selectbox(key="judges.run").value, at.selectbox(key="judges.release").value) == (DEMO_JUDGE_RUN, DEMO_RELEASE)
        assert not any(info.value.startswith("No gold release yet") for info in at.info)
        with session_scope(engine) as session:
            data = judges.judge_report(session, OPERATOR, DEMO_JUDGE_RUN, DEMO_RELEASE, n_bootstrap=0)
        shown = {m.label: m.value for m in at.metric}
        assert shown["Cohen's kappa"] == f"{data['cohen_kappa']:.3f}"
        assert any("random sample" in info.value for info in at.info)  # the corrected rate is there, with its assumption
    finally:
        st.cache_resource.clear()
        engine.dispose()


# --- Japanese ---------------------------------------------------------------------------------------


def test_in_japanese_the_page_and_its_undefined_reasons_read_in_japanese(engine, tmp_path):
    with session_scope(engine) as session:  # a run of released claims only: no corrected rate, and why
        import_judge_labels(session, OPERATOR, judge_file(tmp_path, {"c1": "support", "c3": "contradict"}, "small.jsonl"),
                            run="j0")
    at = open_page(locale="ja-JP")
    assert [x.value for x in at.title] == ["判定器"]
    assert {m.label for m in at.metric} == {"単純一致率", "Cohen's kappa", "誤合格率", "誤不合格率"}
    at.selectbox(key="judges.run").select("j0").run()
    infos = [i.value for i in at.info]
    assert any(info.startswith("補正した支持率はありません: この実行はリリースの外の主張にラベルを付けていません。") for info in infos)
    at.button(key="judges.show_holdout").click().run()
    cells = " ".join(str(v) for f in at.table for v in f.value.to_numpy().ravel())
    assert "算出不能: 正解と判定器のラベルが両方ある主張がありません（0/0）" in cells  # j0 labels no holdout claim


# --- the builders -------------------------------------------------------------------------------------


@pytest.mark.parametrize("key, fields", [
    ("msg.calibration.no_gold_positive", {"positive": "'support'"}),
    ("msg.calibration.one_case", {}),
    ("msg.judge.no_outside", {}),
    ("msg.judge.ppi_assumption", {}),
])
def test_a_calibration_or_judge_note_is_written_in_the_current_language(key, fields):
    from annotator.messages import english

    with use_language("ja"):
        assert fmt.note(english(key, **fields)) == t(key, **fields) != english(key, **fields)
    with use_language("en"):
        assert fmt.note(english(key, **fields)) == english(key, **fields)
    assert fmt.note("a reason no message gives") == "a reason no message gives"


def test_slice_points_mark_a_rate_indicative_by_its_own_n():
    part = {"n_gold": 12, "n_items": 12, "false_pass_rate": 0.25, "false_fail_rate": None,
            "ci95": {"false_pass_rate": [0.0, 0.5], "false_fail_rate": None}, "indicative": ["false_fail_rate"],
            "undefined": {"false_fail_rate": "no claim's gold label is 'support', so no claim can fail falsely (0/0)"}}
    with use_language("en"):
        points = jf.slice_points({"by_slice": {"web": part}})
    assert [(p.panel, p.value, p.low, p.high, p.note, p.text) for p in points] == [
        ("False pass rate", 0.25, 0.0, 0.5, "n of 10 or more", "0.25"),
        ("False fail rate", None, None, None, "indicative only (under 10 claims or cases)", "undefined"),
    ]
    assert {p.row for p in points} == {"web · 12 claims"}


def test_the_slice_mix_warns_only_when_it_differs():
    base = {"n_labeled": 40, "n_unlabeled": 400, "total_variation": 0.31, "p_value": 0.0001, "undefined": {}}
    with use_language("en"):
        warn, text = jf.slice_mix_text({"slice_mix": {**base, "differs": True}})
        assert warn and "differs" in text and "0.31" in text and "p < 0.001" in text
        warn, text = jf.slice_mix_text({"slice_mix": {**base, "differs": False, "p_value": 0.2}})
        assert not warn and "p 0.200" in text
        warn, text = jf.slice_mix_text({"slice_mix": {"differs": None, "undefined": {
            "differs": "the gold claims or the judged-only claims are none: their slice mixes cannot be compared"}}})
        assert not warn and text.startswith("Slice mix not compared: the gold claims or the judged-only claims are none")


def test_a_release_folder_edited_after_its_report_was_cached_is_refused_not_shown_from_the_cache(engine, report_calls):
    at = open_page()
    assert at.metric and report_calls == [False]
    with Session(engine) as session:
        folder = Path(session.exec(select(GoldRelease.path).where(GoldRelease.name == "v1")).one())
    with (folder / "gold.csv").open("a", encoding="utf-8") as gold_csv:
        gold_csv.write("x")
    at.run()
    assert not at.exception and not at.metric and report_calls == [False]
    assert any("gold.csv" in error.value and "does not match" in error.value for error in at.error)
