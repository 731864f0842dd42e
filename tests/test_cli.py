"""The command line on CLIMATE-FEVER and on bad input: its commands in this process through the
console entry point (`run`), and as a user runs it, a subprocess, where the process itself is
what is tested (`run_plain`: pipes, exit statuses past a closed reader, the environment).

CLIMATE-FEVER: Diggelmann, Boyd-Graber, Bulian, Ciaramita, Leippold (2020), arXiv:2012.00614.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from annotator.services.demo import DEMO_FILE, DEMO_PILOT
from tests.conftest import CLIMATE_FEVER, DEMO, annotator_in, need

VOTE = {"SUPPORTS": "support", "REFUTES": "contradict", "NOT_ENOUGH_INFO": "insufficient"}


def run(*args: str, db: str, cwd: Path, ok: bool = True) -> subprocess.CompletedProcess:
    """`annotator ARGS --db DB` in the folder `cwd`, in this process (conftest.annotator_in), and
    check its exit status; run_plain runs a real `python -m annotator` where a test needs one."""
    done = annotator_in(cwd, *args, "--db", db)
    if ok:
        assert done.returncode == 0, done.stderr
    return done


def run_plain(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "annotator", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def first_two_votes():
    """(claim id, first non-null vote, second non-null vote, third or None) per evidence."""
    for line in need(CLIMATE_FEVER).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for k, evidence in enumerate(record["evidences"]):
            votes = [VOTE[v] for v in evidence["votes"] if v is not None]
            yield f"{record['claim_id']}-{k}", votes


@pytest.fixture(scope="module")
def cf_run(tmp_path_factory, module_db_url):
    """CLIMATE-FEVER through import (first two votes as labelers), agreement, queue, the third
    vote as adjudicator, and a release of the final claims: once on SQLite, once on PostgreSQL
    (module_db_url), shared by the tests that read it."""
    need(CLIMATE_FEVER)
    work = tmp_path_factory.mktemp("cf")
    db = module_db_url
    out = {"work": work, "db": db}
    out["import"] = run("import", str(CLIMATE_FEVER), "--format", "climate-fever", "--first-votes", "2", db=db, cwd=work)
    out["agreement"] = json.loads(run("agreement", "--json", "--bootstrap", "200", db=db, cwd=work).stdout)
    out["queue"] = json.loads(run("queue", "adjudication", "--json", db=db, cwd=work).stdout)
    out["blocked"] = run("release", "create", "cf-gold-v1", "--out", str(work / "rel"), db=db, cwd=work, ok=False)
    out["blocked_left"] = sorted(p.name for p in (work / "rel").iterdir()) if (work / "rel").exists() else []
    out["adjudicate"] = run("adjudications", "import", str(CLIMATE_FEVER), "--format", "climate-fever", "--vote", "3", db=db, cwd=work)
    out["queue_after"] = json.loads(run("queue", "adjudication", "--json", db=db, cwd=work).stdout)
    out["release"] = run("release", "create", "cf-gold-v1", "--only-final", "--bootstrap", "100", "--out", str(work / "rel"), db=db, cwd=work)
    out["status"] = json.loads(run("status", "--json", db=db, cwd=work).stdout)
    return out


def test_climate_fever_import_reports_what_it_created(cf_run):
    assert "7,675" in cf_run["import"].stdout or "7675" in cf_run["import"].stdout
    assert "cf-vote-1" in cf_run["import"].stdout and "cf-vote-2" in cf_run["import"].stdout
    assert cf_run["status"]["cases"] == 1535 and cf_run["status"]["claims"] == 7675


def test_climate_fever_agreement_through_the_cli_equals_an_independent_computation(cf_run):
    """The first two votes' percent agreement and Cohen's kappa: computed here from the file with
    a plain count and scikit-learn (the dataset's paper publishes neither; 0.5445 and 0.2961 are
    reproduced values, pinned in tests/test_agreement.py)."""
    from sklearn.metrics import cohen_kappa_score

    firsts, seconds = zip(*((votes[0], votes[1]) for _, votes in first_two_votes()), strict=True)
    report = cf_run["agreement"]
    assert report["n_raters"] == 2 and report["n_items"] == 7675
    assert report["percent_agreement"] == pytest.approx(sum(map(str.__eq__, firsts, seconds)) / len(firsts), abs=1e-9)
    assert report["cohen_kappa"] == pytest.approx(cohen_kappa_score(firsts, seconds), abs=1e-9)
    low, high = report["ci95"]["cohen_kappa"]
    assert low < report["cohen_kappa"] < high
    assert report["categories"] == ["support", "contradict", "insufficient"]


def test_the_adjudication_queue_holds_exactly_the_claims_whose_first_two_votes_differ(cf_run):
    disputed = {claim_id for claim_id, votes in first_two_votes() if votes[0] != votes[1]}
    assert {item["claim_id"] for item in cf_run["queue"]} == disputed
    assert {"claim_id", "case_id", "state"} <= set(cf_run["queue"][0])


def test_a_release_is_refused_while_claims_are_disputed_and_leaves_no_folder(cf_run):
    assert cf_run["blocked"].returncode == 1
    assert "disputed" in cf_run["blocked"].stderr and "--only-final" in cf_run["blocked"].stderr
    assert cf_run["blocked_left"] == []


def test_the_third_vote_decides_the_disputed_claims_that_have_one(cf_run):
    votes = dict(first_two_votes())
    decided = {c for c, v in votes.items() if v[0] != v[1] and len(v) >= 3}
    waiting = {c for c, v in votes.items() if v[0] != v[1] and len(v) < 3}
    assert {item["claim_id"] for item in cf_run["queue_after"]} == waiting
    assert cf_run["status"]["claims_by_state"]["adjudicated"] == len(decided)
    assert cf_run["status"]["claims_by_state"]["agreed"] == sum(1 for v in votes.values() if v[0] == v[1])


def test_the_release_holds_the_final_claims_and_verifies(cf_run):
    folder = cf_run["work"] / "rel" / "cf-gold-v1"
    lines = (folder / "gold.jsonl").read_text(encoding="utf-8").splitlines()
    status = cf_run["status"]["claims_by_state"]
    assert len(lines) == status["agreed"] + status["adjudicated"]
    first = json.loads(lines[0])
    assert first["resolution"] in ("agreed", "adjudicated") and len(first["labels"]) == 2
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["excluded"]["counts"] == {"disputed": status["disputed"]}
    verified = run_plain("release", "verify", str(folder), cwd=cf_run["work"])
    assert verified.returncode == 0, verified.stderr


def test_a_tampered_release_fails_verify_naming_the_file(cf_run, tmp_path):
    import shutil

    copy = tmp_path / "cf-gold-v1"
    shutil.copytree(cf_run["work"] / "rel" / "cf-gold-v1", copy)
    data = (copy / "gold.csv").read_bytes()
    (copy / "gold.csv").write_bytes(data.replace(b"contradict", b"support", 1))
    failed = run_plain("release", "verify", str(copy), cwd=tmp_path)
    assert failed.returncode == 1
    assert "gold.csv" in failed.stderr


def test_a_broken_file_is_reported_with_file_line_and_field_and_nothing_lands(tmp_path, any_db_url):
    db = any_db_url
    good = need(DEMO).read_text(encoding="utf-8").splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([good[0], good[1], '{"case_id": "x", "claims": [}', good[2]]) + "\n", encoding="utf-8")
    failed = run("import", str(broken), db=db, cwd=tmp_path, ok=False)
    assert failed.returncode == 1
    assert "broken.jsonl" in failed.stderr and "line 3" in failed.stderr
    assert json.loads(run("status", "--json", db=db, cwd=tmp_path).stdout)["cases"] == 0


def test_agreement_from_a_labels_file_needs_no_database_and_names_an_unknown_label(tmp_path):
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,rater,label\n1,a,support\n1,b,support\n2,a,contradict\n2,b,support\n3,a,insufficient\n3,b,insufficient\n", encoding="utf-8")
    done = run_plain("agreement", "--labels", str(labels), "--json", "--bootstrap", "0", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["percent_agreement"] == pytest.approx(2 / 3)
    assert not (tmp_path / "data").exists()
    labels.write_text("item_id,rater,label\n1,a,support\n1,b,maybe\n", encoding="utf-8")
    failed = run_plain("agreement", "--labels", str(labels), cwd=tmp_path)
    assert failed.returncode == 1 and "maybe" in failed.stderr and "line 3" in failed.stderr


def test_agreement_from_a_labels_file_breaks_down_by_its_slice_column(tmp_path):
    labels = tmp_path / "labels.csv"
    rows = [f"c{i},{r},{'support' if r == 'a' or i % 4 else 'contradict'},{'normal' if i < 12 else 'permission'}"
            for i in range(16) for r in "ab"]
    labels.write_text("item_id,rater,label,slice\n" + "\n".join(rows) + "\n", encoding="utf-8")
    done = run_plain("agreement", "--labels", str(labels), "--by", "slice", "--json", "--bootstrap", "100", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["by_slice"]["normal"]["n_items"] == 12 and report["by_slice"]["permission"]["indicative"]
    assert {"brennan_prediger", "by_pair", "by_category", "analytic_ci95", "sample_size"} <= set(report)
    text = run_plain("agreement", "--labels", str(labels), "--by", "slice", "--bootstrap", "100", cwd=tmp_path).stdout
    for words in ("brennan_prediger", "specific agreement", "labeler pairs", "by slice:", "permission (indicative"):
        assert words in text
    failed = run_plain("agreement", "--labels", str(labels), "--by", "split", cwd=tmp_path)
    assert failed.returncode == 1 and "labels.csv" in failed.stderr and "split" in failed.stderr


def test_agreement_refuses_an_unknown_breakdown_and_a_zero_target_width(tmp_path):
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,rater,label\n1,a,support\n1,b,support\n", encoding="utf-8")
    unknown = run_plain("agreement", "--labels", str(labels), "--by", "labeler", cwd=tmp_path)
    assert unknown.returncode == 2 and "guideline_version" in unknown.stderr
    zero = run_plain("agreement", "--labels", str(labels), "--target-half-width", "0", cwd=tmp_path)
    assert zero.returncode == 2 and "--target-half-width" in zero.stderr


def test_agreement_text_explains_the_paradox_and_the_sample_size(tmp_path):
    labels = tmp_path / "labels.csv"
    pairs = [("support", "support")] * 36 + [("support", "contradict"), ("contradict", "support")] * 2
    labels.write_text("item_id,rater,label\n" + "".join(f"{i},a,{x}\n{i},b,{y}\n" for i, (x, y) in enumerate(pairs)),
                      encoding="utf-8")
    done = run_plain("agreement", "--labels", str(labels), "--target-half-width", "0.02", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "kappa paradox" in done.stdout and "support is 95% of the labels" in done.stdout
    assert "more double-labeled items" in done.stdout and "+-0.02" in done.stdout


def test_demo_seeds_once_and_prints_the_logins(tmp_path, any_db_url):
    db = any_db_url
    first = run("demo", "--no-serve", db=db, cwd=tmp_path)
    assert "aoi" in first.stdout and "mika" in first.stdout and "admin" in first.stdout
    again = run("demo", "--no-serve", db=db, cwd=tmp_path)
    assert "already" in again.stdout
    assert "'gold-v0'" in first.stdout and "not made" not in first.stdout
    status = json.loads(run("status", "--json", db=db, cwd=tmp_path).stdout)
    to_label = [json.loads(line) for line in DEMO_FILE.read_text(encoding="utf-8").splitlines()]
    pilot = [json.loads(line) for line in DEMO_PILOT.read_text(encoding="utf-8").splitlines()]
    assert status["cases"] == len(to_label) + len(pilot) == 32
    assert status["claims_by_state"]["unlabeled"] == sum(len(case["claims"]) for case in to_label)  # the pilot is labeled
    assert (tmp_path / "data" / "releases" / "gold-v0" / "manifest.json").is_file()


def test_a_second_demo_database_in_the_same_folder_says_why_it_has_no_release(tmp_path):
    run("demo", "--no-serve", db=f"sqlite:///{tmp_path / 'first.db'}", cwd=tmp_path)
    second = run("demo", "--no-serve", db=f"sqlite:///{tmp_path / 'second.db'}", cwd=tmp_path)
    assert "Release 'gold-v0' not made:" in second.stdout and "exists already" in second.stdout
    assert "Remove it, or run the demo in another folder" in second.stdout and "aoi" in second.stdout
    assert "12 cases, not released" in second.stdout and "released as 'gold-v0'" not in second.stdout


def test_an_edited_manifest_fails_verify_against_the_recorded_hash(cf_run, tmp_path):
    import shutil

    copy = tmp_path / "cf-gold-v1"
    shutil.copytree(cf_run["work"] / "rel" / "cf-gold-v1", copy)
    recorded = next(line.split()[-1] for line in cf_run["release"].stdout.splitlines() if "manifest sha256" in line)
    assert run_plain("release", "verify", str(copy), "--manifest-sha256", recorded, cwd=tmp_path).returncode == 0
    manifest = copy / "manifest.json"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace('"claims": 5384', '"claims": 999', 1), encoding="utf-8")
    assert run_plain("release", "verify", str(copy), cwd=tmp_path).returncode == 0  # a manifest cannot vouch for itself
    failed = run_plain("release", "verify", str(copy), "--manifest-sha256", recorded, cwd=tmp_path)
    assert failed.returncode == 1 and "manifest.json does not have the expected SHA-256" in failed.stderr
    stored = run("release", "verify", "--release", "cf-gold-v1", db=cf_run["db"], cwd=cf_run["work"])
    assert f"manifest sha256: {recorded}" in stored.stdout


def test_a_mistyped_database_path_is_refused_and_nothing_is_created(tmp_path):
    failed = run("status", db=str(tmp_path / "typo.db"), cwd=tmp_path, ok=False)
    assert failed.returncode == 1 and "no database at" in failed.stderr and "annotator init" in failed.stderr
    assert not (tmp_path / "typo.db").exists()
    plain = run_plain("status", cwd=tmp_path)
    assert plain.returncode == 1 and "no database at data/annotator.db" in plain.stderr
    assert not (tmp_path / "data").exists()


def test_release_verify_takes_a_folder_or_a_stored_release_not_both(tmp_path):
    both = run_plain("release", "verify", str(tmp_path), "--release", "gold-v1", cwd=tmp_path)
    assert both.returncode == 2 and "not both" in both.stderr
    bad_hash = run_plain("release", "verify", str(tmp_path), "--manifest-sha256", "xyz", cwd=tmp_path)
    assert bad_hash.returncode == 2 and "64 hexadecimal digits" in bad_hash.stderr


def test_a_password_for_an_unknown_user_is_not_asked_for(tmp_path, any_db_url):
    db = any_db_url
    run("init", db=db, cwd=tmp_path)
    failed = subprocess.run([sys.executable, "-m", "annotator", "users", "passwd", "ghost", "--db", db],
                            cwd=tmp_path, capture_output=True, text=True, input="", timeout=60)
    assert failed.returncode == 1 and "no user named 'ghost'" in failed.stderr and "New password" not in failed.stdout


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_a_port_out_of_range_is_refused_before_anything_starts(tmp_path, command):
    done = run_plain(command, "--port", "70000", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "Invalid value for '--port'" in done.stderr and "65535" in done.stderr
    assert list(tmp_path.iterdir()) == []  # no database created


def test_users_roles_replaces_a_users_roles_and_refuses_to_leave_no_admin(tmp_path, any_db_url):
    db = any_db_url
    run("init", db=db, cwd=tmp_path)
    run("users", "add", "chief", "--role", "admin", "--password", "chief-password", db=db, cwd=tmp_path)
    run("users", "add", "mika", "--role", "adjudicator", "--no-password", db=db, cwd=tmp_path)
    done = run("users", "roles", "mika", "--role", "adjudicator", "--role", "labeler", db=db, cwd=tmp_path)
    assert done.stdout.strip() == "Roles of mika: adjudicator -> adjudicator,labeler"
    refused = run("users", "roles", "chief", "--role", "labeler", db=db, cwd=tmp_path, ok=False)
    assert refused.returncode == 1 and "last active admin who can log in" in refused.stderr and "Traceback" not in refused.stderr
    unknown = run("users", "roles", "mika", "--role", "boss", db=db, cwd=tmp_path, ok=False)
    assert unknown.returncode == 1 and "boss" in unknown.stderr
    listed = run("users", "list", "--json", db=db, cwd=tmp_path)
    assert {row["name"]: sorted(row["roles"]) for row in json.loads(listed.stdout)} == {"chief": ["admin"], "mika": ["adjudicator", "labeler"]}


# ------------------------------------------------------------------ where serve and demo listen


def started(monkeypatch, *args: str) -> tuple[list[str], str, str]:
    """`annotator ARGS` in this process with Streamlit's start caught: (the command it would
    run, stdout, stderr). It runs in a new empty folder: `demo` writes its release under the
    current folder, which must not be the repository's."""
    from typer.testing import CliRunner

    from annotator import cli as annotator_cli

    monkeypatch.chdir(tempfile.mkdtemp(prefix="annotator-started-"))
    commands: list[list[str]] = []
    monkeypatch.setattr(annotator_cli.os, "execve", lambda _exe, command, _env: commands.append(command))
    # The port check is tested in test_listen.py; here the default port may be in use, and 192.0.2.7 is no address of ours.
    monkeypatch.setattr("annotator.listen.check_can_listen", lambda _host, _port: None)
    monkeypatch.setattr(sys, "argv", ["annotator", *args])
    with CliRunner().isolation() as (out, err, *_):
        with pytest.raises(SystemExit) as stop:
            annotator_cli.app()
        assert stop.value.code == 0, err.getvalue()
        return commands[0], out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8")


def address_of(command: list[str]) -> str:
    return command[len(command) - 1 - command[::-1].index("--server.address") + 1]


def test_serve_and_demo_listen_on_this_machine_only_unless_host_is_given(monkeypatch, tmp_path):
    db = f"sqlite:///{tmp_path / 'demo.db'}"
    command, out, err = started(monkeypatch, "demo", "--db", db)
    assert address_of(command) == "127.0.0.1" and err == ""
    assert f"Serving on http://127.0.0.1:8501 (database: {db}); Ctrl+C stops." in out
    command, out, err = started(monkeypatch, "serve", "--db", db, "--port", "8600")
    assert address_of(command) == "127.0.0.1" and err == ""
    assert out == f"Serving on http://127.0.0.1:8600 (database: {db}); Ctrl+C stops.\n"
    command, out, err = started(monkeypatch, "serve", "--db", db, "--host", "[::1]")
    assert address_of(command) == "::1" and "http://[::1]:8501" in out and err == ""


def test_serving_on_every_interface_hides_streamlits_banner_which_asks_a_web_service_for_the_address(monkeypatch, tmp_path):
    # Streamlit's start banner, for 0.0.0.0 or ::, fetches this machine's public address from a web
    # service (streamlit.net_util.get_external_ip); the banner is hidden, annotator says where it serves.
    command, out, _ = started(monkeypatch, "demo", "--db", f"sqlite:///{tmp_path / 'a.db'}", "--host", "0.0.0.0")
    assert command[command.index("--logger.hideWelcomeMessage") + 1] == "true"
    assert "Serving on http://0.0.0.0:8501" in out


def test_a_network_host_with_the_demo_logins_warns_naming_those_still_on_their_demo_password(monkeypatch, tmp_path):
    from annotator.db import init_db, session_scope
    from annotator.services.access import OPERATOR
    from annotator.services.users import get_user, set_password

    db = f"sqlite:///{tmp_path / 'demo.db'}"
    command, _, err = started(monkeypatch, "demo", "--db", db, "--host", "0.0.0.0")
    assert address_of(command) == "0.0.0.0"
    assert err == ("Warning: --host 0.0.0.0 lets other machines reach the app, and the demo logins (aoi, ren, mika, "
                   "admin) have the passwords printed by `annotator demo` and in the README: anyone who can reach it can "
                   "log in as them. Serve on 127.0.0.1 (the default), or set new passwords first (`annotator users "
                   "passwd NAME`).\n")
    engine = init_db(db, create=False)
    with session_scope(engine) as session:
        for name in ("aoi", "ren", "mika"):
            set_password(session, OPERATOR, get_user(session, name), "a-real-password-now")
    engine.dispose()
    _, _, err = started(monkeypatch, "serve", "--db", db, "--host", "192.0.2.7")
    assert "the demo logins (admin) have the passwords" in err
    with session_scope(init_db(db, create=False)) as session:
        set_password(session, OPERATOR, get_user(session, "admin"), "a-real-password-now")
    assert started(monkeypatch, "serve", "--db", db, "--host", "0.0.0.0")[2] == ""


def test_an_import_onto_a_full_disk_says_so_exits_1_and_lands_nothing(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from annotator import cli as annotator_cli
    from annotator import db as annotator_db

    db = f"sqlite:///{tmp_path / 'full.db'}"
    run("init", db=db, cwd=tmp_path)
    configure = annotator_db._configure_sqlite

    def full(connection, record):  # noqa: ANN001, ANN202 - the database may not grow by a page
        configure(connection, record)
        connection.execute("PRAGMA max_page_count=1")

    monkeypatch.setattr(annotator_db, "_configure_sqlite", full)
    monkeypatch.setattr(sys, "argv", ["annotator", "import", str(DEMO), "--db", db])
    with CliRunner().isolation() as (out, err, *_):
        with pytest.raises(SystemExit) as stop:
            annotator_cli.main()
        printed, errors = out.getvalue(), err.getvalue().decode("utf-8")
    assert stop.value.code == 1
    assert errors == "Error: the disk is full; nothing was saved. Free space and try again\n"
    assert printed == b""
    monkeypatch.setattr(annotator_db, "_configure_sqlite", configure)
    assert json.loads(run("status", "--json", db=db, cwd=tmp_path).stdout)["cases"] == 0


def test_hold_list_shows_a_labelers_hold_and_hold_lift_lifts_it_as_the_operator(tmp_path):
    from annotator.db import init_db, session_scope
    from annotator.services.labeling import put_on_hold
    from annotator.services.lookup import find_case
    from annotator.services.users import get_user
    from tests.factories import pilot

    db = f"sqlite:///{tmp_path / 'holds.db'}"
    engine = init_db(db)
    with session_scope(engine) as session:
        pilot(session, n_cases=2)
        put_on_hold(session, get_user(session, "alice"), find_case(session, "case-2").id, "missing_logs", "no log\x1b[31m")
    engine.dispose()
    listed = json.loads(run("hold", "list", "--json", db=db, cwd=tmp_path).stdout)
    assert [(h["case_id"], h["dataset"], h["reason"], h["note"], h["holder"]) for h in listed] == [
        ("case-2", "pilot", "missing_logs", "no log\x1b[31m", "alice")]
    text = run("hold", "list", db=db, cwd=tmp_path).stdout
    assert text.splitlines()[0] == "1 holds in force" and "\x1b" not in text and 'note "no log\\u001b[31m"' in text
    assert run("hold", "lift", "case-2", db=db, cwd=tmp_path).stdout.strip() == "Lifted 1 hold on case case-2"
    assert run("hold", "lift", "case-2", db=db, cwd=tmp_path).stdout.strip() == "Lifted 0 holds on case case-2"
    assert json.loads(run("hold", "list", "--json", db=db, cwd=tmp_path).stdout) == []
    unknown = run("hold", "lift", "case-9", db=db, cwd=tmp_path, ok=False)
    assert unknown.returncode == 1 and "case-9" in unknown.stderr and "Traceback" not in unknown.stderr


def test_an_unknown_id_or_name_of_100000_characters_is_echoed_shortened(tmp_path):
    db = f"sqlite:///{tmp_path / 'a.db'}"
    run("init", db=db, cwd=tmp_path)
    long = "d" * 100_000
    for args, start, limit in ((("status", "--dataset", long), "Error: no dataset named 'dddd", 200),  # text.MAX_ID_CHARS
                               (("hold", "lift", long), "Error: no case with id 'dddd", 200),
                               (("users", "disable", long), "Error: no user named 'dddd", 100)):  # MAX_NAME_CHARS
        refused = run(*args, db=db, cwd=tmp_path, ok=False)
        assert refused.stderr.startswith(start) and len(refused.stderr) < 1_000, (args, refused.stderr[:300])
        assert "d" * limit + "…" in refused.stderr and "d" * (limit + 1) not in refused.stderr


# ------------------------------------------------------------------ run report, run compare and the gate


@pytest.fixture
def runs_db(tmp_path):
    """tests/test_run_reports.py's world in a SQLite file: release v1 in tmp_path/releases and the runs
    base (three blockers), good (every case passed) and misses (q1 and q2 miss their evidence)."""
    from annotator.db import init_db, session_scope
    from annotator.services.access import OPERATOR
    from annotator.services.releases import create_release
    from tests.test_run_reports import BASE, GOOD, MISSES, imported, seed_world

    db = f"sqlite:///{tmp_path / 'runs.db'}"
    engine = init_db(db)
    with session_scope(engine) as session:
        seed_world(session)
    with session_scope(engine) as session:
        create_release(session, OPERATOR, "v1", only_final=True, out_dir=tmp_path / "releases", n_bootstrap=0)
    for name, lines in (("base", BASE), ("good", GOOD), ("misses", MISSES)):
        imported(engine, tmp_path, name, lines)
    engine.dispose()
    return db


def test_run_report_json_holds_the_keys_of_the_contract(runs_db):
    from tests.conftest import annotator
    from tests.test_run_reports import CASE_KEYS, GROUP_KEYS, REPORT_KEYS

    ran = annotator("run", "report", "base", "--release", "v1", "--bootstrap", "200", "--json", "--db", runs_db)
    assert ran.code == 0, ran.err
    data = json.loads(ran.out)
    assert set(REPORT_KEYS) <= set(data) and set(GROUP_KEYS) <= set(data)
    assert all(set(CASE_KEYS) <= set(case) for case in data["cases"])
    assert (data["run"], data["release"], data["k"], data["unit"], data["n_cases"], len(data["blockers"])) == (
        "base", "v1", 5, "passage", 4, 3)
    by_doc = json.loads(annotator("run", "report", "base", "--release", "v1", "--unit", "doc", "--k", "3", "--split",
                                  "dev", "--retrieval-rule", "any", "--bootstrap", "0", "--json", "--db", runs_db).out)
    assert (by_doc["unit"], by_doc["k"], by_doc["split"], by_doc["retrieval_rule"], by_doc["n_cases"]) == (
        "doc", 3, "dev", "any", 3)


def test_run_report_text_shows_the_blockers_before_any_figure(runs_db):
    from tests.conftest import annotator

    ran = annotator("run", "report", "base", "--release", "v1", "--bootstrap", "0", "--db", runs_db)
    assert ran.code == 0, ran.err
    lines = ran.out.splitlines()
    assert lines[0].startswith("run base against release v1 (manifest sha256 ")
    first_figure = next(i for i, text in enumerate(lines) if text.split()[:1] == ["pass_rate"])
    blockers = lines.index("BLOCKERS: 3 (each stops the change whatever the averages say)")
    assert blockers < first_figure
    assert lines[blockers + 1:blockers + 4] == [
        "  case q2: claim x2 is contradicted by the evidence, severity legal",
        "  case q3: retrieved forbidden passage(s) p6",
        "  case q3: answered where the gold expects abstain, with claims not supported: x3 (insufficient)"]
    assert "failed cases: 2" in lines and "  q2  both  partial_evidence, unsupported_claim" in lines
    good = annotator("run", "report", "good", "--release", "v1", "--bootstrap", "0", "--db", runs_db).out.splitlines()
    assert good[2] == "blockers: none"


@pytest.mark.parametrize("base, candidate, code, decision", [
    ("misses", "good", 0, "SHIP"),
    ("good", "base", 1, "BLOCKED"),
    ("good", "misses", 3, "HOLD"),
])
def test_run_compare_gate_exits_0_for_ship_1_for_blocked_3_for_hold(runs_db, base, candidate, code, decision):
    from tests.conftest import annotator

    ran = annotator("run", "compare", base, candidate, "--release", "v1", "--split", "all", "--bootstrap", "200",
                    "--gate", "--db", runs_db)
    assert ran.code == code, ran.err
    assert ran.out.splitlines()[0] == f"DECISION: {decision}"
    without_gate = annotator("run", "compare", base, candidate, "--release", "v1", "--split", "all", "--bootstrap", "200",
                             "--json", "--db", runs_db)
    assert without_gate.code == 0 and json.loads(without_gate.out)["decision"] == decision.lower()


@pytest.mark.parametrize("candidate, code", [("good", 0), ("misses", 3)])
def test_run_compare_gate_keeps_its_exit_status_when_the_reader_of_its_output_leaves(runs_db, candidate, code):
    """`annotator run compare ... --gate | head -1`: the pipe closes before the report is written."""
    base = "misses" if candidate == "good" else "good"
    child = subprocess.Popen([sys.executable, "-m", "annotator", "run", "compare", base, candidate, "--release", "v1",
                              "--split", "all", "--bootstrap", "200", "--gate", "--db", runs_db],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=Path(runs_db.removeprefix("sqlite:///")).parent)
    child.stdout.close()  # the reader is gone before the command writes a line
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == code, err  # never 1 (blocked) for a ship or a hold
    assert "Traceback" not in err and "BrokenPipeError" not in err


@pytest.mark.parametrize("args, words", [
    (("--k", "0"), "Invalid value for '--k'"),
    (("--bootstrap", "-1"), "Invalid value for '--bootstrap'"),
    (("--margin", "x"), "Invalid value for '--margin'"),
    (("--unit", "page"), "Invalid value for --unit"),
])
def test_run_compare_gate_exits_2_for_a_usage_error(runs_db, args, words):
    from tests.conftest import annotator

    ran = annotator("run", "compare", "misses", "good", "--release", "v1", "--gate", *args, "--db", runs_db)
    assert ran.code == 2 and words in ran.err.replace("│", " ")


def test_run_compare_refuses_bad_values_in_words_and_takes_a_release_folder(runs_db, tmp_path):
    from tests.conftest import annotator

    refused = annotator("run", "compare", "misses", "good", "--release", "v1", "--margin", "-0.1", "--db", runs_db)
    def flat(text: str) -> str:  # Typer draws a usage error in a box, wrapped
        return " ".join(text.replace("│", " ").split())

    assert refused.code == 2 and "-0.1: give a fraction from 0 up to, not including, 1" in flat(refused.err)  # a usage error
    for option, value in (("--margin", "nan"), ("--margin", "1"), ("--alpha", "0"), ("--alpha", "1.5")):
        bad = annotator("run", "compare", "misses", "good", "--release", "v1", option, value, "--gate", "--db", runs_db)
        assert bad.code == 2 and "give a fraction" in flat(bad.err), (option, value)  # never 4: the gate was asked wrongly
    few = annotator("run", "report", "base", "--release", "v1", "--bootstrap", "5", "--db", runs_db)
    assert few.code == 2 and "5: use 0 (no intervals) or at least 100 resamples" in flat(few.err)
    folder = str(tmp_path / "releases" / "v1")
    ran = annotator("run", "compare", "misses", "good", "--release", folder, "--split", "all", "--bootstrap", "200",
                    "--gate", "--json", "--db", runs_db)
    assert ran.code == 0, ran.err
    data = json.loads(ran.out)
    assert (data["release"], data["release_stored_as"], data["decision"]) == (folder, "v1", "ship")
    report = annotator("run", "report", "base", "--release", folder, "--bootstrap", "0", "--db", runs_db)
    assert report.code == 0 and report.out.startswith(f"run base against release {folder} (manifest sha256 ")
    unknown = annotator("run", "report", "base", "--release", "v9", "--db", runs_db)
    assert unknown.code == 1 and "no release named 'v9'" in unknown.err
    undecided = annotator("run", "compare", "misses", "good", "--release", "v9", "--gate", "--db", runs_db)
    assert undecided.code == 4 and "no release named 'v9'" in undecided.err  # neither ship (0) nor blocked (1)


def test_run_report_and_compare_show_control_characters_in_ids_escaped(tmp_path):
    from annotator.db import init_db, session_scope
    from annotator.services.access import OPERATOR
    from annotator.services.releases import create_release
    from tests.conftest import annotator
    from tests.test_release_service import Seeder
    from tests.test_run_reports import imported

    hostile = "q\x1b[31m1\nBLOCKERS: none\u202e"
    db = f"sqlite:///{tmp_path / 'hostile.db'}"
    engine = init_db(db)
    with session_scope(engine) as session:
        seed = Seeder(session, "pi\x1b]0;lot\x07")
        seed.claim(hostile, "c1", slice_="sl\x1b[2Jice", passages=("p\x1b[1m1",), labels={"alice": "support", "bob": "support"})
        seed.claim("q2", "c2", passages=("p2",), labels={"alice": "support", "bob": "support"})
        seed.cases[hostile].meta = {"forbidden_evidence_ids": ["p\x9b2"]}
    with session_scope(engine) as session:
        create_release(session, OPERATOR, "v1", only_final=True, out_dir=tmp_path / "releases", n_bootstrap=0)
    claim = {"text": "bad\x1b[8m", "label": "contradict", "severity": "legal", "claim_id": "x\x1b[31m"}
    imported(engine, tmp_path, "r1", [{"case_id": hostile, "retrieved": ["p\x9b2", "p\x1b[1m1"], "behavior": "answer",
                                       "claims": [claim]}, {"case_id": "q2", "retrieved": ["p2"], "behavior": "answer"}])
    imported(engine, tmp_path, "r2", [{"case_id": hostile, "retrieved": ["p\x1b[1m1"], "behavior": "answer"},
                                      {"case_id": "q2", "retrieved": ["p2"], "behavior": "answer"}])
    engine.dispose()
    for args in (("run", "report", "r1"), ("run", "compare", "r1", "r2"), ("run", "compare", "r2", "r1"),
                 ("run", "report", "r1", "--json"), ("run", "compare", "r2", "r1", "--json")):
        ran = annotator(*args, "--release", "v1", "--bootstrap", "0", "--db", db)
        assert ran.code == 0, ran.err
        for control in ("\x1b", "\x07", "\x9b", "\u202e"):
            assert control not in ran.out, (args, control)
        assert not any(line.startswith("BLOCKERS: none") for line in ran.out.splitlines()), args
    text = annotator("run", "report", "r1", "--release", "v1", "--bootstrap", "0", "--db", db).out
    assert "case q\\x1b[31m1\\x0aBLOCKERS: none\\u202e: retrieved forbidden passage(s) p\\x9b2" in text
    data = json.loads(annotator("run", "report", "r1", "--release", "v1", "--bootstrap", "0", "--json", "--db", db).out)
    assert data["cases"][0]["case_id"] == hostile and data["blockers"][0]["passage_ids"] == ["p\x9b2"]


# --- login sessions ----------------------------------------------------------------------------


def test_sessions_settings_shows_sets_and_refuses_the_expiries_and_revoke_logs_a_user_out(any_engine):
    from annotator.db import session_scope
    from annotator.services import login_sessions
    from annotator.services.access import OPERATOR
    from annotator.services.users import add_user, get_user
    from tests.conftest import annotator

    db = any_engine.url.render_as_string(hide_password=False)
    with session_scope(any_engine) as session:
        add_user(session, OPERATOR, "alice", ["labeler"], "s3cret-pass")
        tickets = [login_sessions.start_session(session, get_user(session, "alice")).ticket for _ in range(2)]
    with session_scope(any_engine) as session:
        token = login_sessions.redeem_ticket(session, tickets[0]).token
    assert annotator("sessions", "settings", "--db", db).out == "idle expiry 8 h, absolute expiry 7 d\n"
    ran = annotator("sessions", "settings", "--idle-hours", "2.5", "--absolute-days", "3", "--json", "--db", db)
    assert ran.code == 0 and json.loads(ran.out) == {"idle_hours": 2.5, "absolute_days": 3.0}
    refused = annotator("sessions", "settings", "--idle-hours", "100", "--db", db)
    assert refused.code == 1 and refused.err == (
        "Error: the idle expiry (100 hour(s)) cannot be longer than the absolute expiry (3 day(s)); shorten the idle "
        "expiry or lengthen the absolute one\n")
    assert annotator("sessions", "settings", "--absolute-days", "0", "--db", db).err == (
        "Error: the absolute expiry must be from 1 to 365 days, not 0.0\n")
    assert annotator("sessions", "settings", "--db", db).out == "idle expiry 2.5 h, absolute expiry 3 d\n"  # unchanged
    assert annotator("sessions", "revoke", "alice", "--db", db).out == "Revoked 2 login sessions of alice\n"
    assert annotator("sessions", "revoke", "alice", "--db", db).out == "Revoked 0 login sessions of alice\n"
    with session_scope(any_engine) as session:
        assert login_sessions.resume(session, token) is None
    assert annotator("sessions", "revoke", "nobody", "--db", db).code == 1
