"""Values from a user or a file are shown as plain text on every page (annotator/ui/plain.py),
and the served app refuses to be framed (annotator/ui/server.py).

A dataset whose ids, slice, titles, texts, dataset name and user names hold Markdown links and
images, raw HTML, Streamlit colours and shortcodes, LaTeX, emphasis, a right-to-left override
and a zero-width space is imported; every page is rendered through AppTest as each role, on
SQLite and PostgreSQL, and every element Streamlit renders as Markdown is rendered again by a
CommonMark renderer (markdown-it-py) and by Streamlit's own after-parse rules: no link, image or
HTML that the app did not make, no hostile fragment as written, no invisible control character.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import streamlit as st
from markdown_it import MarkdownIt
from sqlmodel import select
from streamlit.testing.v1 import AppTest

import annotator.ui.components as ui_components
from annotator.db import init_db, session_scope
from annotator.models import Case, Claim, User
from annotator.services import guidelines, labeling, releases
from annotator.services.access import OPERATOR
from annotator.services.imports import import_cases
from annotator.services.judges import import_judge_labels
from annotator.services.runs import import_run
from annotator.services.users import add_user
from annotator.ui.plain import guideline_markdown, plain_markdown, plain_text, visible

APP = Path(__file__).resolve().parents[1] / "annotator" / "ui" / "app.py"

IMAGE, LINK, HTML = "![x](http://127.0.0.1:9/img.png)", "[link](http://evil)", "<img src=x onerror=alert(1)>"
HOSTILE = f"{IMAGE} {LINK} {HTML} :red[big] $x^2$ **bold** \u202eevil\u200b :streamlit: a@b.example www.evil.example"
"""Everything at once: each value of the dataset holds it."""
FRAGMENTS = (IMAGE, LINK, HTML, ":red[big]", "$x^2$", "**bold**", "\u202e", "\u200b", ":streamlit:")
PASSWORD = "hostile-pass-1234"
GUIDELINE = f"# Rules\n\n{IMAGE}\n\nLabel with care."
"""The admin's guideline: rendered as Markdown on purpose (its link stays), its image as text."""
LABELER_1, LABELER_2 = f"ann {LINK}", f"bob {IMAGE}"
NAMES = {LABELER_1: ["labeler"], LABELER_2: ["labeler"], "judge": ["adjudicator"], "boss": ["admin", "adjudicator"]}
JUDGE_RUN = "j:streamlit:www.evil.example"
"""A judge run name is letters, digits and . _ : + -: enough for a shortcode and an autolink."""
RAG_RUN = "r:streamlit:www.evil.example"
"""A RAG run's name follows the same rule."""


def hostile(prefix: str) -> str:
    return f"{prefix} {HOSTILE}"


def case(n: int) -> dict:
    passages = [{"passage_id": hostile(f"p{n}.{k}"), "doc_id": hostile(f"doc{n}"), "version": f"v{k}",
                 "title": hostile(f"title {n}.{k}"), "text": hostile(f"Passage text {n}.{k} about travel")}
                for k in (1, 2)]
    return {"case_id": hostile(f"case{n}"), "question": hostile("Question about travel?"), "answer": hostile("Answer."),
            "slice": hostile("slice"), "split": "dev", "metadata": {"principal": hostile("principal")},
            "passages": passages,
            "claims": [{"claim_id": hostile(f"claim{n}.{j}"), "text": hostile(f"Claim {n}.{j} about travel"),
                        "passage_ids": [p["passage_id"] for p in passages]} for j in (1, 2)]}


def build_world(url: str, folder: Path) -> dict[str, int]:
    """The hostile dataset in the database at `url`, four users, both cases assigned to the two
    labelers; claim 1.1 labeled differently by both (a dispute), claim 2.1 alike (final), a
    guideline with an image; release gold-v0 (claim 2.1), a judge run (JUDGE_RUN, its model,
    prompt version and note hostile) that disagrees with the gold on claim 2.1, and a RAG run
    (RAG_RUN, its meta and note hostile) of both cases whose claims are not supported (so case 2,
    the released one, fails). Returns {claim_id: claim pk}."""
    engine = init_db(url, create=True)
    source = folder / "hostile.jsonl"
    source.write_text("".join(json.dumps(case(n), ensure_ascii=False) + "\n" for n in (1, 2)), encoding="utf-8")
    with session_scope(engine) as session:
        import_cases(session, OPERATOR, source, dataset=hostile("ds"), slices=[hostile("slice")])
        for name, roles in NAMES.items():
            add_user(session, OPERATOR, name, roles, PASSWORD)
    with session_scope(engine) as session:
        pks = list(session.exec(select(Case.id).order_by(Case.id)))
        labeling.assign_cases(session, OPERATOR, pks, [LABELER_1, LABELER_2])
        guidelines.publish_guideline(session, session.exec(select(User).where(User.name == "boss")).one(), "v1",
                                     GUIDELINE)
    with session_scope(engine) as session:
        claims = {claim.claim_id: claim.id for claim in session.exec(select(Claim))}
    for labeler, values in ((LABELER_1, ("support", "support")), (LABELER_2, ("contradict", "support"))):
        with session_scope(engine) as session:
            user = session.exec(select(User).where(User.name == labeler)).one()
            for claim_id, value in zip((hostile("claim1.1"), hostile("claim2.1")), values, strict=True):
                labeling.save_label(session, user, claims[claim_id], value, rationale=hostile("rationale"),
                                    severity=None if value == "support" else "other",
                                    passage_ids=[hostile("p1.1")] if claim_id.startswith("claim1") else [hostile("p2.1")])
    judge = folder / "judge.jsonl"  # the judge passes claim 1.1 and fails claim 2.1, whose gold is support
    judge.write_text("".join(json.dumps({"claim_id": hostile(f"claim{n}.{j}"), "label": label,
                                         "rationale": hostile("judge rationale")}, ensure_ascii=False) + "\n"
                             for (n, j), label in (((1, 1), "support"), ((1, 2), "support"), ((2, 1), "contradict"),
                                                   ((2, 2), "support"))), encoding="utf-8")
    with session_scope(engine) as session:
        releases.create_release(session, OPERATOR, "gold-v0", only_final=True, out_dir=folder / "releases", n_bootstrap=0)
    with session_scope(engine) as session:
        import_judge_labels(session, OPERATOR, judge, run=JUDGE_RUN, model=hostile("model"),
                            prompt_version=hostile("prompt"), note=hostile("note"))
    rag = folder / "run.jsonl"
    rag.write_text("".join(json.dumps({"case_id": hostile(f"case{n}"), "retrieved": [hostile(f"p{n}.1"), hostile("unknown")],
                                       "behavior": "answer", "answer": hostile("run answer"), "cited": [hostile(f"p{n}.1")],
                                       "claims": [{"text": hostile("run claim"), "label": "contradict",
                                                   "claim_id": hostile(f"run claim {n}"), "severity": "other"}]},
                                      ensure_ascii=False) + "\n" for n in (1, 2)), encoding="utf-8")
    with session_scope(engine) as session:
        import_run(session, OPERATOR, rag, run=RAG_RUN, meta={"model": hostile("model")}, note=hostile("note"))
    engine.dispose()
    return claims


@pytest.fixture
def world(any_db_url, tmp_path, monkeypatch):  # noqa: ANN001
    """build_world on SQLite and PostgreSQL, the app pointed at it."""
    claims = build_world(any_db_url, tmp_path)
    monkeypatch.setenv("DATABASE_URL", any_db_url)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ui_components, "DOUBLE_CLICK_SECONDS", 0.0)
    st.cache_resource.clear()
    yield claims
    st.cache_resource.clear()


def log_in(name: str, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update(query or {})
    at.run()
    at.text_input(key="login.name").input(name)
    at.text_input(key="login.password").input(PASSWORD)
    at.form_submit_button[0].click().run()
    assert not at.exception, at.exception
    return at


def open_page(at: AppTest, key: str) -> AppTest:
    found = [h for h, info in at._registered_pages.items() if info.get("url_pathname") == key]
    found = found or [h for h, info in at._registered_pages.items()
                      if str(info.get("script_path") or "").endswith(f"views/{key}.py")]
    at._page_hash = found[0]
    at.run()
    assert not at.exception, at.exception
    return at


html_bodies: list[str] = []
"""The st.html bodies of the page markdown_bodies last walked."""


def markdown_bodies(at: AppTest) -> list[str]:
    """The Markdown source of every element Streamlit renders as Markdown: text, captions,
    alerts, headings, toasts, expander and tab labels, metric, progress and widget labels."""
    out: list[str] = []
    html_bodies.clear()

    def walk(node) -> None:  # noqa: ANN001
        proto = getattr(node, "proto", None)
        kind = type(proto).__name__ if proto is not None else ""
        if kind == "Html":  # the passage text: escaped HTML, with the marks the app made
            html_bodies.append(proto.body)
        elif proto is not None and kind not in ("Text", "Code"):  # st.text, st.code: shown as they are
            for field in ("body", "label", "text", "title"):
                value = getattr(proto, field, None)
                if isinstance(value, str) and value:
                    out.append(value)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    out += [tab.label for tab in at.tabs]
    return out


def plain_bodies(at: AppTest) -> list[str]:
    """What elements that show text as it is hold: st.text, table and dataframe cells, options."""
    out = [t.value for t in at.text]
    for frame in [*at.dataframe, *at.table]:
        out += [str(v) for v in frame.value.astype(str).to_numpy().ravel()] + [str(c) for c in frame.value.columns]
    for select_box in at.selectbox:
        out += [str(o) for o in select_box.options]
    return out


_RENDER = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_APP_ICON = re.compile(r"(?<!\\):material/\w+:")
"""An icon the app's own Markdown names (a value's ":" is escaped)."""
_AUTOLINK = re.compile(r"(?:https?://|www(?=\.))[-.\w]+|[-.\w+]+@[-\w]+(?:\.[-\w]+)+", re.IGNORECASE)
"""GitHub Markdown's autolinks as remark-gfm (Streamlit's) finds them in the parsed text
(mdast-util-gfm-autolink-literal): escaping the source does not stop them."""
_SHORTCODES = re.compile(r":(?:streamlit|material_\w+):")
_MATH = re.compile(r"(?<!\$)\$(?![\s$])[^$\n]*?[^\s$]\$(?!\d)")
_ESCAPES = re.compile(r"(?m)^ {0,3}(`{3,}|~{3,})[\s\S]*?(?:\n[ \t]*\1|$)|(?<!`)(`+)[^`\n]+\2(?!`)|\\[\\$`]")


def problems_of(body: str) -> list[str]:
    """What of `body` would not render as plain text: a link, image or HTML tag a CommonMark
    renderer makes (the app's own Markdown makes none), a hostile fragment as written, an emoji
    or logo shortcode left after parsing, LaTeX (Streamlit's own test, from its frontend), an
    invisible control character."""
    found = []
    html = _RENDER.render(_APP_ICON.sub("", body).replace(":material/", ":material_"))
    if re.search(r"<(a|img)\b", html):
        found.append(f"link or image: {html!r}")
    text = re.sub(r"<[^>]+>", "", html)
    if _SHORTCODES.search(text):
        found.append(f"shortcode after parsing: {text!r}")
    if _AUTOLINK.search(text.replace("&amp;", "&")):
        found.append(f"autolink after parsing: {text!r}")
    if "$" in body and _MATH.search(_ESCAPES.sub("_", body)):
        found.append(f"math: {body!r}")
    found += [f"fragment {fragment!r} as written in {body!r}" for fragment in FRAGMENTS if fragment in body]
    if re.search(r":(red|blue|green|orange|violet|gray|grey|rainbow|primary)\[", body.replace("\\:", "")):
        found.append(f"colour directive: {body!r}")
    return found


def visit(name: str, claims: dict[str, int]) -> dict[str, AppTest]:
    """Every page `name` may open, and the deep links, as that user."""
    steps = {}
    at = log_in(name)
    steps["home"] = at
    for key in ("label", "adjudicate", "agreement", "releases", "judges", "runs", "admin", "imports", "claims"):
        steps[key] = open_page(log_in(name), key)
    steps["?claim=own"] = log_in(name, {"claim": hostile("claim1.2")})
    steps["?claim=too long"] = log_in(name, {"claim": hostile("x") * 20})
    if name == "boss":
        steps["?history"] = open_page(log_in(name, {"history": hostile("claim1.1")}), "admin")
        steps["?history too long"] = open_page(log_in(name, {"history": HOSTILE * 10}), "admin")
        releases = open_page(log_in(name), "releases")
        releases.text_input(key="releases.name").input("gold-v1")
        releases.checkbox(key="releases.only_final").check()
        releases.button(key="releases.create_button").click().run()
        steps["release created"] = releases
    if name == LABELER_1:
        label = open_page(log_in(name), "label")
        label.button(key="label.next").click().run()
        steps["label next"] = label
    return steps


@pytest.mark.parametrize("name", list(NAMES))
def test_every_page_shows_hostile_ids_names_and_texts_as_plain_text(world, name):
    claims = world
    shown_somewhere = False
    for step, at in visit(name, claims).items():
        assert not at.exception, f"{step}: {at.exception}"
        for body in markdown_bodies(at):
            if body == guideline_markdown(GUIDELINE):
                assert "<img" not in _RENDER.render(body)
                continue
            assert problems_of(body) == [], f"{name}, {step}"
            rendered = re.sub(r"<[^>]+>", "", _RENDER.render(body)).replace("&amp;", "&").replace("&lt;", "<")
            shown_somewhere = shown_somewhere or "[link](http://evil)" in rendered.replace("\u2060", "")
        for body in html_bodies:
            assert not re.search(r"<(a|img)\b|\u202e|\u200b", body), f"{name}, {step}: {body!r}"
        for text in plain_bodies(at):
            assert "\u202e" not in text and "\u200b" not in text, f"{name}, {step}: {text!r}"
    assert shown_somewhere  # the values are on the pages, written out


def test_the_judges_page_shows_the_run_its_model_and_the_claims_it_got_wrong_as_plain_text(world):
    at = open_page(log_in("boss"), "judges")
    assert [e.value for e in at.error] == []
    links = [link.proto for link in at.get("page_link")]
    assert len(links) == 1 and links[0].query_string.startswith("history=claim2.1+")  # the one disagreement
    assert problems_of(links[0].label) == []
    rendered = re.sub(r"<[^>]+>", "", _RENDER.render(links[0].label)).replace("&amp;", "&").replace("&lt;", "<")
    assert "claim2.1 ![x](http:" in rendered.replace("\u2060", "")  # written out, not an image
    meta = {row[0]: row[1] for row in at.dataframe[0].value.to_numpy()}
    assert meta["Model"] == plain_text(hostile("model")) and "[U+202E]" in meta["Model"]
    assert at.selectbox(key="judges.run").options == [plain_text(JUDGE_RUN)]
    assert all(problems_of(body) == [] for body in markdown_bodies(at))


def test_a_claim_link_longer_than_200_characters_is_refused_with_one_shortened_message(world):
    at = log_in(LABELER_1, {"claim": "x" * 201})
    assert [e.value for e in at.error] == [
        f"the address's claim= is 201 characters long, more than the 200 an id may have ({'x' * 40}…); nothing was opened"]
    assert "claim" not in at.query_params


def test_a_history_link_longer_than_200_characters_is_refused_and_opens_no_history(world):
    at = log_in("boss", {"history": "y" * 500})  # the login opens the Admin page on the link
    assert [e.value for e in at.error] == [
        f"the address's history= is 500 characters long, more than the 200 an id may have ({'y' * 40}…); nothing was opened"]
    assert not at.session_state["admin.history_claim"]


# --- the helper itself -------------------------------------------------------------------------


@pytest.mark.parametrize("value, shown", [
    (IMAGE, "\\!\\[x\\](http\\:\u2060//127.0.0.1\\:9/img.png)"),
    (LINK, "\\[link\\](http\\:\u2060//evil)"),
    (HTML, r"\<img src=x onerror=alert(1)\>"),
    (":red[big]", r"\:red\[big\]"),
    ("$x^2$", r"\$x\^2\$"),
    ("**bold**", r"\*\*bold\*\*"),
    ("_em_ snake_case", r"\_em\_ snake_case"),
    (":smile: x", r"\:smile\: x"),
    (":streamlit:", "\\:\u2060streamlit\\:"),
    (":material/home:", "\\:\u2060material/home:"),
    ("www.evil.example a@b.example", "www\u2060\\.evil.example a\\@\u2060b.example"),
    ("see http://evil.example", "see http\\:\u2060//evil.example"),
    ("1. one\n- two\n# three\n===", "1\\. one\n\\- two\n\\# three\n\\==="),
    ("&lt; A & B", r"\&lt; A & B"),
    ("demo-01-c1: plain words", "demo-01-c1: plain words"),
])
def test_plain_markdown_escapes_what_would_make_markdown_and_nothing_else(value, shown):
    assert plain_markdown(value) == shown
    assert problems_of(plain_markdown(value)) == []


def test_invisible_and_bidirectional_controls_are_shown_as_code_points():
    assert visible("a\u202eb\u200bc\u2066d\u2069\x1b[31m\ufeff") == "a[U+202E]b[U+200B]c[U+2066]d[U+2069][U+001B][31m[U+FEFF]"
    assert visible("line\nnext\ttab, ZWJ 👩\u200d💻, ZWNJ می\u200cخواهم") == "line\nnext\ttab, ZWJ 👩\u200d💻, ZWNJ می\u200cخواهم"


def test_a_right_to_left_value_is_isolated_and_a_left_to_right_one_is_unchanged():
    assert plain_text("שלום 1") == "\u2068שלום 1\u2069"
    assert plain_text("مرحبا") == "\u2068مرحبا\u2069"
    assert plain_text("demo-01-c1") == "demo-01-c1"
    assert plain_text("evil\u202e") == "evil[U+202E]"


def test_the_guideline_keeps_its_formatting_but_shows_images_as_text():
    shown = guideline_markdown(f"# Rules\n\n**Label** [the policy](https://example.org). {IMAGE} ![a][ref]\n\n[ref]: http://x/y.png")
    html = _RENDER.render(shown)
    assert "<h1>Rules</h1>" in html and "<strong>Label</strong>" in html and '<a href="https://example.org">' in html
    assert "<img" not in html and 'href="http://127.0.0.1' not in html
    assert "![x](http://127.0.0.1:9/img.png)" in html  # written out


# --- framing ---------------------------------------------------------------------------------


def test_every_response_of_the_served_app_forbids_framing(tmp_path):
    from tests.test_e2e_browser import running_app

    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    subprocess.run([sys.executable, "-m", "annotator", "init", "--db", str(tmp_path / "a.db")], check=True, env=env,
                   capture_output=True)
    with running_app(tmp_path, env, ["serve", "--db", str(tmp_path / "a.db")]) as base:
        page = urllib.request.urlopen(f"{base}/", timeout=10)
        html = page.read().decode()
        asset = re.search(r'src="\.?/?(static/js/[^"]+\.js)"', html)
        assert asset is not None, html[:500]
        responses = {"/": page, "/_stcore/health": urllib.request.urlopen(f"{base}/_stcore/health", timeout=10),
                     f"/{asset.group(1)}": urllib.request.urlopen(f"{base}/{asset.group(1)}", timeout=10)}
        try:
            urllib.request.urlopen(f"{base}/no-such-file.png", timeout=10)
        except urllib.error.HTTPError as missing:
            responses["a missing file"] = missing
        for path, response in responses.items():
            assert response.headers["Content-Security-Policy"] == "frame-ancestors 'none'", path
            assert response.headers["X-Frame-Options"] == "DENY", path


# --- in a real browser -------------------------------------------------------------------------


def test_in_chromium_no_page_holds_an_image_or_link_from_the_data_nor_fetches_one(tmp_path):
    from tests.test_e2e_browser import CHROMIUM_ARGS, chromium_path, running_app, settled

    sync_api = pytest.importorskip("playwright.sync_api")
    executable = chromium_path()
    database = tmp_path / "hostile.db"
    build_world(f"sqlite:///{database}", tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    with running_app(tmp_path, env, ["serve", "--db", str(database)]) as base, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        requested: list[str] = []
        seen = 0
        for name in (LABELER_1, "boss"):
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.on("request", lambda request: requested.append(request.url))
            page.goto(base)
            page.get_by_label("User name", exact=True).fill(name)
            page.get_by_label("Password", exact=True).fill(PASSWORD)
            page.get_by_role("button", name="Log in").click()
            page.locator("[data-testid=stSidebarNavLink]").first.wait_for(timeout=30_000)
            for title in range(page.locator("[data-testid=stSidebarNavLink]").count()):
                link = page.locator("[data-testid=stSidebarNavLink]").nth(title)
                link.click()
                link.and_(page.locator("[aria-current=page]")).wait_for(timeout=30_000)  # the page it opens, not the last one
                settled(page)
                for expander in page.locator("[data-testid=stExpander] summary").all():  # the guideline, the hold form
                    expander.click()
                settled(page)
                found = page.evaluate("""() => ({
                    images: [...document.querySelectorAll('img, image, source, video, audio, iframe, object, embed')]
                        .map(e => e.getAttribute('src') || e.getAttribute('href') || e.getAttribute('data') || ''),
                    links: [...document.querySelectorAll('a[href]')]  // the guideline's links are the admin's own
                        .filter(a => !a.closest('[data-testid=stSidebar] [data-testid=stExpander], .st-key-guideline_preview'))
                        .map(a => a.getAttribute('href')),
                    text: document.body.innerText})""")
                assert [src for src in found["images"] if "127.0.0.1:9" in src or src == "x"] == [], (name, title)
                foreign = [href for href in found["links"]  # the app's own links are relative (its pages)
                           if re.match(r"[a-z][a-z0-9+.-]*:", href, re.IGNORECASE) and not href.startswith(base)]
                assert foreign == [], (name, title)
                assert "\u202e" not in found["text"] and "\u200b" not in found["text"], (name, title)
                seen += "[link](http://evil)" in found["text"].replace("\u2060", "")
            context.close()
        browser.close()
    assert [url for url in requested if "127.0.0.1:9" in url or "evil" in url] == []
    assert seen >= 4  # the hostile values are on the pages, written out
