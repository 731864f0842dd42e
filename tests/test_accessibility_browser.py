"""Accessibility in a real browser: axe-core (the copy bundled in the axe-playwright-python package,
injected by Playwright: nothing is fetched at test time) runs on the login page and on every page
each role opens, over a demo database with labels, disputes, decisions and a release, so every page
shows its tables, charts and badges. Every control must have an accessible name, every image and
chart its text, every link its name; beside axe, our own check that no state is shown by colour
alone (badges, alerts and highlighted words carry words or bold and underline, and a chart that
colours its marks prints each one's value as text). A violation Streamlit's own markup or theme
causes, which annotator cannot fix, or one of ours not fixed yet, is listed in KNOWN with the rule,
the element and the page it is excused on; any other fails the test. Each page is screenshotted
into test-artifacts/ (ignored by git)."""

from __future__ import annotations

import json
import os

import pytest

from annotator.ui.components import PAGE_ROLES
from annotator.vocabulary import LABELS
from annotator.workflow import may_see_agreement
from tests.conftest import DEMO, TEST_DATA, annotator_in
from tests.test_e2e_browser import browser  # noqa: F401 - a fixture, used by name
from tests.test_e2e_browser import go_to, log_in, navigation, running_app, settled, shot, tr

try:
    from axe_playwright_python import sync_playwright as axe_playwright
except ImportError:  # the test extra installs it; CI must run these tests
    if os.environ.get("CI"):
        raise
    pytest.skip("axe-playwright-python is not installed (pip install -e '.[test]')", allow_module_level=True)

AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]},
    "resultTypes": ["violations"],
}
"""WCAG 2.2 A and AA, and axe's best practices."""

MUST_RUN = ("label", "button-name", "select-name", "input-button-name", "aria-input-field-name",
            "aria-toggle-field-name", "image-alt", "svg-img-alt", "role-img-alt", "link-name",
            "link-in-text-block", "document-title", "html-has-lang")
"""The rules this test is for (a name for every control, image, chart and link; no link told apart
by colour alone): each must have run on every page, not been left out by a changed option."""

KNOWN: tuple[tuple[str, str, str | None, str], ...] = (
    # (axe rule, CSS selector of the element the violation may be on or inside,
    #  the page (its key in PAGE_ROLES) it is excused on, None for every page, whose and why)
    ("presentation-role-conflict", "[data-testid=stFileUploaderDropzone]", None,
     "Streamlit: the file uploader's drop zone is role=presentation yet labelled and focusable (Import page)"),
)

COLOUR_ONLY = """() => {
    const problems = [];
    const seen = {highlights: 0, badges: 0, alerts: 0, coloured_marks: 0};
    for (const mark of document.querySelectorAll('[data-testid=stMain] mark')) {
        seen.highlights += 1;
        const style = getComputedStyle(mark);
        if (!(parseInt(style.fontWeight) >= 600 && style.textDecorationLine.includes('underline')))
            problems.push(`the highlighted words "${mark.textContent}" differ by colour only`);
    }
    for (const badge of document.querySelectorAll('.stMarkdownBadge')) {
        seen.badges += 1;
        if (!badge.innerText.trim()) problems.push('a coloured badge without words');
    }
    for (const alert of document.querySelectorAll('[data-testid=stAlert]')) {
        seen.alerts += 1;
        if (!alert.innerText.trim()) problems.push('a coloured message without words');
    }
    for (const chart of document.querySelectorAll('[data-testid=stVegaLiteChart]')) {
        const svg = chart.querySelector('svg');
        if (!svg || !svg.querySelector('g.role-mark')) { problems.push('a chart not drawn as SVG'); continue; }
        let coloured = 0;
        for (const group of svg.querySelectorAll('g.role-mark:not(.mark-text)')) {
            const items = Array.from(group.children).filter(item => item.getAttribute('fill'));
            if (new Set(items.map(item => item.getAttribute('fill'))).size > 1) coloured += items.length;
        }
        const texts = Array.from(svg.querySelectorAll('g.mark-text.role-mark > text'))
            .filter(text => text.textContent.trim()).length;
        seen.coloured_marks += coloured;
        if (texts < coloured)
            problems.push(`a chart colours ${coloured} marks but prints ${texts} values: ${svg.getAttribute('aria-label')}`);
    }
    return {problems, seen};
}"""


def wait_for_charts(page) -> None:  # noqa: ANN001
    """Until every chart on the page has drawn its marks (Vega draws after Streamlit's run ends)."""
    page.wait_for_function("() => Array.from(document.querySelectorAll('[data-testid=stVegaLiteChart]'))"
                           ".every(chart => chart.querySelector('svg g.role-mark'))", timeout=20_000)


def unexpected_violations(page, where: str, key: str | None = None) -> list[str]:  # noqa: ANN001
    """Run axe-core on the page as it is (`key`: its key in PAGE_ROLES, None for the login page);
    each violation that KNOWN does not excuse there, as a line naming the page, the rule, the
    element and axe's advice. Fails when a rule of MUST_RUN did not run."""
    results = axe_playwright.Axe().run(page, options=AXE_OPTIONS).response
    ran = {rule["id"] for kind in ("violations", "passes", "incomplete", "inapplicable") for rule in results[kind]}
    assert not set(MUST_RUN) - ran, f"{where}: axe did not run {sorted(set(MUST_RUN) - ran)}"
    found = []
    for violation in results["violations"]:
        allowed = [selector for rule, selector, on, _ in KNOWN if rule == violation["id"] and on in (None, key)]
        for node in violation["nodes"]:
            excused = len(node["target"]) == 1 and page.evaluate(
                "([target, allowed]) => { const element = document.querySelector(target);"
                " return !!element && allowed.some(selector => element.closest(selector)); }",
                [node["target"][0], allowed])
            if not excused:
                found.append(f"{where}: {violation['id']} ({violation['impact']}) on {node['target']}: "
                             f"{node['html'][:200]} - {violation['help']}")
    return found


def colour_only(page, where: str) -> tuple[list[str], dict[str, int]]:  # noqa: ANN001
    """The places on the page where colour alone tells a state, and how many of each kind were checked."""
    result = page.evaluate(COLOUR_ONLY)
    return [f"{where}: {problem}" for problem in result["problems"]], result["seen"]


@pytest.fixture(scope="module")
def labeled_server(tmp_path_factory):
    """`annotator serve` over the demo after the command line imported, for the first 24 claims,
    labels of aoi and ren (6 disputed), mika's decisions on 3 disputes, the release gold-a1, and a
    second dataset that nobody labeled; yields the base URL."""
    work = tmp_path_factory.mktemp("a11y")
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    db = ["--db", str(work / "demo.db")]
    claims = [claim["claim_id"] for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()
              for claim in json.loads(line)["claims"]][:24]
    labels, disputed = ["claim_id,labeler,label,rationale"], []
    for n, claim_id in enumerate(claims):
        first = LABELS[n % 3]
        second = first if n % 4 else LABELS[(n + 1) % 3]
        labels += [f"{claim_id},aoi,{first},seeded", f"{claim_id},ren,{second},seeded"]
        disputed += [claim_id] if first != second else []
    (work / "labels.csv").write_text("\n".join(labels) + "\n", encoding="utf-8")
    (work / "decisions.csv").write_text("claim_id,adjudicator,label,rationale\n"
                                        + "".join(f"{claim_id},mika,support,seeded\n" for claim_id in disputed[:3]),
                                        encoding="utf-8")
    for args in (["demo", "--no-serve"], ["labels", "import", "labels.csv"], ["adjudications", "import", "decisions.csv"],
                 ["release", "create", "gold-a1", "--only-final", "--bootstrap", "0"],
                 ["import", str(TEST_DATA / "import_native.jsonl"), "--dataset", "nobody-labeled"]):
        done = annotator_in(work, *args, *db)
        assert done.returncode == 0, f"annotator {' '.join(args)}: {done.stdout}{done.stderr}"
    with running_app(work, env, ["serve", *db]) as base:
        yield base


def pages_of(roles: set[str]) -> list[str]:
    """The keys of the pages these roles open (components.may_open), in the navigation's order
    (app.PAGES lists them as PAGE_ROLES does; app.py itself is the app's script, not imported)."""
    return [key for key, allowed in PAGE_ROLES.items()
            if roles & allowed and (key != "agreement" or may_see_agreement(roles))]


ROLES = {"aoi": {"labeler"}, "mika": {"adjudicator"}, "admin": {"admin", "adjudicator"}}
"""The demo's users, one for each role (admin also adjudicates)."""

SEEN_ON = {"aoi": ("highlights",), "mika": ("badges", "highlights"), "admin": ("coloured_marks", "alerts", "badges")}
"""What the colour check must have found on a role's pages (so it cannot pass by finding nothing):
the words a passage shares with the claim (Label, Adjudicate), the two labels' badges (Adjudicate),
the coloured charts (Home, Agreement) and messages (Agreement)."""


@pytest.mark.parametrize("name", list(ROLES))
def test_every_page_a_role_opens_has_no_accessibility_violation_and_is_screenshotted(labeled_server, browser, name):  # noqa: F811
    base = labeled_server
    keys = pages_of(ROLES[name])
    titles = [tr("en", f"page.{key}") for key in keys]
    context, page = log_in(browser, base, name, f"{name}-demo-pass")
    problems: list[str] = []
    seen: dict[str, int] = {}
    try:
        settled(page)
        assert navigation(page) == titles  # exactly the pages PAGE_ROLES gives the role
        for key, title in zip(keys, titles, strict=True):
            go_to(page, title)
            if key == "label":
                page.get_by_text(tr("en", "label.shortcuts")).wait_for(timeout=20_000)
                page.locator("[data-testid=stMain] mark").first.wait_for(timeout=20_000)
            wait_for_charts(page)
            shot(page, f"page-{name}-{key}")
            wait_for_charts(page)  # the shot resizes the window, and Vega draws its charts anew for the new size
            problems += unexpected_violations(page, f"{name} on {title}", key)
            found, counted = colour_only(page, f"{name} on {title}")
            problems += found
            seen = {kind: seen.get(kind, 0) + n for kind, n in counted.items()}
    finally:
        context.close()
    assert not problems, "\n".join(problems)
    assert all(seen[kind] > 0 for kind in SEEN_ON[name]), seen


def test_the_login_page_has_no_accessibility_violation_in_english_or_japanese(labeled_server, browser):  # noqa: F811
    problems: list[str] = []
    for locale, language in (("en-US", "en"), ("ja-JP", "ja")):
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale=locale)
        page = context.new_page()
        try:
            page.goto(labeled_server)
            page.get_by_label(tr(language, "login.password"), exact=True).wait_for(timeout=20_000)
            settled(page)
            shot(page, f"page-login-{language}")
            problems += unexpected_violations(page, f"the login page ({locale})")
        finally:
            context.close()
    assert not problems, "\n".join(problems)


def test_the_agreement_page_of_a_dataset_nobody_labeled_has_no_accessibility_violation(labeled_server, browser):  # noqa: F811
    context, page = log_in(browser, labeled_server, "admin", "admin-demo-pass", to=tr("en", "page.agreement"))
    try:
        page.locator("[data-testid=stMain]").get_by_role("combobox", name=tr("en", "admin.dataset"), exact=True).click()
        page.get_by_role("option", name="nobody-labeled", exact=True).click()
        page.get_by_text(tr("en", "agreement.no_pairs")).wait_for(timeout=20_000)  # every coefficient undefined
        settled(page)
        wait_for_charts(page)
        shot(page, "page-admin-agreement-nobody-labeled")
        problems = unexpected_violations(page, "admin on Agreement (a dataset nobody labeled)", "agreement")
        problems += colour_only(page, "admin on Agreement (a dataset nobody labeled)")[0]
    finally:
        context.close()
    assert not problems, "\n".join(problems)
