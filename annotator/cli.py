"""The command line: parses, calls one service, prints. Errors become a message and exit 1.

The database is chosen by `--db URL`, else `DATABASE_URL`, else the SQLite file
`data/annotator.db` in the current folder.
"""

from __future__ import annotations

import json
import math
import re
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Optional

import typer

from annotator import __version__
from annotator.errors import AnnotatorError
from annotator.formats.kinds import kind
from annotator.services.access import OPERATOR
from annotator.terminal import json_safe, terminal_safe as safe
from annotator.vocabulary import CLAIM_MODES, EXPORT_FORMATS, REPORT_SPLITS, RETRIEVAL_RULES, RETRIEVAL_UNITS

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Blind double labeling, agreement, adjudication and gold releases for RAG claims.")
labels_app = typer.Typer(no_args_is_help=True, help="Labels: import those made elsewhere, correct a stored one.")
adjudications_app = typer.Typer(no_args_is_help=True, help="Adjudications made elsewhere.")
queue_app = typer.Typer(no_args_is_help=True, help="Work queues.")
release_app = typer.Typer(no_args_is_help=True, help="Frozen, hashed gold releases.")
users_app = typer.Typer(no_args_is_help=True, help="Local users and their roles.")
guideline_app = typer.Typer(no_args_is_help=True, help="The labeling guideline: published Markdown versions.")
hold_app = typer.Typer(no_args_is_help=True, help="Holds in force: list them, lift them.")
claims_app = typer.Typer(no_args_is_help=True, help="Claim review before labeling: list a case's claims; split, merge, edit or drop one, with a reason.")
judge_app = typer.Typer(no_args_is_help=True, help="Automatic judges: import a run's labels, calibrate it against a gold release.")
run_app = typer.Typer(no_args_is_help=True, help="RAG runs: import a run of the system, score it against a gold release, compare two runs and gate a change.")
data_app = typer.Typer(no_args_is_help=True, help="Public data sets (for the tests, benchmarks and examples), fetched from where their authors publish them.")
sessions_app = typer.Typer(no_args_is_help=True, help="Login sessions: how long a login lasts, and ending a user's logins.")
app.add_typer(labels_app, name="labels")
app.add_typer(adjudications_app, name="adjudications")
app.add_typer(queue_app, name="queue")
app.add_typer(release_app, name="release")
app.add_typer(users_app, name="users")
app.add_typer(guideline_app, name="guideline")
app.add_typer(hold_app, name="hold")
app.add_typer(claims_app, name="claims")
app.add_typer(judge_app, name="judge")
app.add_typer(run_app, name="run")
app.add_typer(data_app, name="data")
app.add_typer(sessions_app, name="sessions")

Db = Annotated[Optional[str], typer.Option("--db", help="Database URL (default: DATABASE_URL, else data/annotator.db).")]
DatasetOpt = Annotated[Optional[str], typer.Option("--dataset", help="Dataset name (default: all datasets).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
HostOpt = Annotated[str, typer.Option("--host", help="Address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every interface).")]
LOOPBACK = "127.0.0.1"

MAX_BOOTSTRAP = 100_000
UI_APP = Path(__file__).parent / "ui" / "app.py"
SERVED_APP = Path(__file__).parent / "ui" / "server.py"
"""UI_APP as served: every response refuses framing (ui/server.py)."""
STREAMLIT_CONFIG = Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml"


def _engine(db: str | None, *, create: bool = False):  # noqa: ANN202 - sqlalchemy Engine
    """The migrated database; only `init`, `demo` and `import` may create a new SQLite file."""
    from annotator.db import init_db

    return init_db(db, create=create)


def _echo_json(data: object) -> None:
    typer.echo(json_safe(json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False)))


def _echo_lines(lines: list[str]) -> None:
    """Print lines a service composed (a report): each terminal-safe, a line break or an escape
    sequence inside one shown escaped, tabs kept."""
    for line in lines:
        typer.echo(safe(line, keep="\t"))


def _dataset_pk(session, dataset: str | None) -> int | None:  # noqa: ANN001
    from annotator.services.lookup import dataset_pk

    return dataset_pk(session, dataset)


@app.command()
def init(db: Db = None) -> None:
    """Create or migrate the database."""
    from annotator.db import display_url, resolve_url

    _engine(db, create=True)
    typer.echo(f"Database ready: {safe(display_url(resolve_url(db)))}")


@app.command()
def serve(db: Db = None, port: Annotated[int, typer.Option(min=1, max=65535, help="Port to serve on (1-65535).")] = 8501,
          host: HostOpt = LOOPBACK) -> None:
    """Start the Streamlit app (on this machine only, unless --host says otherwise)."""
    from annotator.db import resolve_url, session_scope
    from annotator.services.demo import demo_logins_in_use

    host = _checked_host(host)
    _check_can_listen(host, port)
    url = resolve_url(db)
    engine = _engine(url)
    if not _is_loopback(host):
        with session_scope(engine) as session:
            _warn_demo_logins(host, demo_logins_in_use(session))
    _serve(url, port, host)


@app.command()
def demo(
    db: Db = None,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to serve on (1-65535).")] = 8501,
    no_serve: Annotated[bool, typer.Option("--no-serve", help="Seed only; do not start the app.")] = False,
    host: HostOpt = LOOPBACK,
) -> None:
    """Seed the demo data set and demo users, print their logins, and start the app (on this
    machine only, unless --host says otherwise)."""
    from annotator.db import resolve_url, session_scope
    from annotator.services.demo import DEMO_USERS, demo_logins_in_use, seed_demo

    host = _checked_host(host)
    if not no_serve:
        _check_can_listen(host, port)  # before seeding: a taken port changes nothing
    url = resolve_url(db)
    engine = _engine(url, create=True)
    with session_scope(engine) as session:
        seeded = seed_demo(session)
    typer.echo(_demo_seeded_text(seeded))
    typer.echo("Demo logins as seeded (for this local demo only; a password changed since is not shown):")
    for user in DEMO_USERS:
        typer.echo(f"  {user.name:<6} {user.password:<18} {', '.join(user.roles)}")
    if not no_serve:
        if not _is_loopback(host):
            with session_scope(engine) as session:
                _warn_demo_logins(host, demo_logins_in_use(session))
        _serve(url, port, host)


def _demo_seeded_text(seeded) -> str:  # noqa: ANN001 - a DemoSeeded or None
    """What `annotator demo` seeded, in one or two lines."""
    from annotator.services.demo import DEMO_DATASET, DEMO_JUDGE_RUN, DEMO_RELEASE, DEMO_USERS

    if seeded is None:
        return "Demo data already present."
    labelers = " and ".join(user.name for user in DEMO_USERS if "labeler" in user.roles)
    released = f"released as '{seeded.release}'" if seeded.release else "not released"
    text = (f"Demo data seeded (dataset '{DEMO_DATASET}': {seeded.to_label} cases to label, assigned to {labelers}; "
            f"the pilot round's {seeded.pilot} cases, {released}; judge run '{DEMO_JUDGE_RUN}' of {seeded.judged} claims"
            + (f"; RAG runs {', '.join(repr(name) for name in seeded.runs)}" if seeded.runs else "") + ").")
    if seeded.release_skipped:
        text += f"\nRelease '{DEMO_RELEASE}' not made: {safe(seeded.release_skipped)}"
    return text


def _checked_host(host: str) -> str:
    """--host as given, stripped (an IPv6 address also of its brackets); a usage error when it is
    empty or holds a space or control character."""
    host = host.strip().removeprefix("[").removesuffix("]")
    if not host or any(char.isspace() or not char.isprintable() for char in host):
        raise typer.BadParameter("give an address such as 127.0.0.1, a host name, or 0.0.0.0 for every interface",
                                 param_hint="--host")
    return host


def _check_can_listen(host: str, port: int) -> None:
    """Refuse (PortUnavailableError, exit 1) before anything is said or started when the app could
    not listen on host:port: the port taken, the address not this machine's (annotator/listen.py)."""
    from annotator import listen

    listen.check_can_listen(host, port)


def _is_loopback(host: str) -> bool:
    """Whether `host` is this machine only: localhost, 127.0.0.0/8 or ::1."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to any address
        return False


def _warn_demo_logins(host: str, names: list[str]) -> None:
    """On standard error: the app on a non-loopback `host` takes the demo logins `names`."""
    if names:
        typer.echo(f"Warning: --host {safe(host)} lets other machines reach the app, and the demo logins "
                   f"({', '.join(names)}) have the passwords printed by `annotator demo` and in the README: anyone "
                   "who can reach it can log in as them. Serve on 127.0.0.1 (the default), or set new passwords "
                   "first (`annotator users passwd NAME`).", err=True)


def _streamlit_flags() -> list[str]:
    """The project's .streamlit/config.toml as command-line flags, so the app looks the same
    whatever folder it is started from."""
    import tomllib

    if not STREAMLIT_CONFIG.exists():
        return []
    flags = []
    for section, options in tomllib.loads(STREAMLIT_CONFIG.read_text(encoding="utf-8")).items():
        for key, value in options.items():
            flags += [f"--{section}.{key}", str(value).lower() if isinstance(value, bool) else str(value)]
    return flags


def _serve(url: str, port: int, host: str = LOOPBACK) -> None:
    from annotator.db import display_url

    env = {**os.environ, "DATABASE_URL": url}
    # Streamlit's own start banner is hidden: the line below says where the app is, and the banner,
    # for a wildcard address, asks a web service for this machine's public address.
    command = [sys.executable, "-m", "streamlit", "run", str(SERVED_APP), *_streamlit_flags(), "--server.port", str(port),
               "--server.address", host, "--logger.hideWelcomeMessage", "true"]
    shown = f"[{host}]" if ":" in host else host  # an IPv6 address
    typer.echo(f"Serving on http://{safe(shown)}:{port} (database: {safe(display_url(url))}); Ctrl+C stops.")
    os.execve(sys.executable, command, env)  # Streamlit takes this process over: a signal to it stops the app


def _quoted_or(names: tuple[str, ...]) -> str:
    """Names quoted and joined for a help text: "'default', or 'climate-fever'"."""
    quoted = [f"'{name}'" for name in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + ", or " + quoted[-1]


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="Cases file: native JSONL, flat CSV, CLIMATE-FEVER JSONL, or RAGAS records (JSONL, CSV or Parquet).")],
    fmt: Annotated[str, typer.Option("--format", help=kind("cases").format_help())] = "auto",
    dataset: Annotated[Optional[str], typer.Option("--dataset", help=f"Dataset to import into (default: {_quoted_or(kind('cases').dataset_names())}).")] = None,
    with_votes: Annotated[bool, typer.Option("--with-votes", help="CLIMATE-FEVER: import vote slot j as labeler cf-vote-{j+1}.")] = False,
    first_votes: Annotated[Optional[int], typer.Option("--first-votes", help="CLIMATE-FEVER: import the first N non-null votes of each evidence as labelers cf-vote-1..N.")] = None,
    update: Annotated[bool, typer.Option("--update", help="Accept changed content for existing ids (recorded; labels and decisions made on the old content are marked for review).")] = False,
    partial: Annotated[bool, typer.Option("--partial", help="Import the good lines and list every skipped bad line (file, line, field, reason).")] = False,
    slices: Annotated[Optional[str], typer.Option("--slices", help="New slice names this file may use, comma-separated (besides the standard ones and the dataset's own).")] = None,
    claims: Annotated[Optional[str], typer.Option("--claims", help="RAGAS: cut each answer into its sentences (sentences, the default) or keep it whole as one claim (whole); a record's own 'claims' list is used as given.")] = None,
    db: Db = None,
) -> None:
    """Import cases, claims and passages (one transaction: a bad line lands nothing, unless --partial)."""
    from annotator.db import session_scope
    from annotator.services.imports import import_cases

    if claims is not None:
        _choice(claims, CLAIM_MODES, "--claims")
    declared = [name.strip() for name in (slices or "").split(",") if name.strip()]
    with _import_progress(file) as progress, session_scope(_engine(db, create=True)) as session:
        report = import_cases(session, OPERATOR, file, fmt=fmt, dataset=dataset, with_votes=with_votes, first_votes=first_votes,
                              update=update, partial=partial, slices=declared, progress=progress, claims=claims)
    _echo_lines(report.summary_lines())


@contextmanager
def _import_progress(file: Path):  # noqa: ANN202 - a context manager of a progress callback
    """A progress bar on standard error while a file is imported (rich), shown only when standard
    error is a terminal; yields the callback `import_cases` calls with (bytes read, file size)."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(f"Importing {escape(safe(file.name))}", total=None)  # plain text, not rich markup
        yield lambda done, total: bar.update(task, completed=done, total=total or None)


@labels_app.command("import")
def labels_import(
    file: Annotated[Path, typer.Argument(help="CSV or JSONL with claim_id, labeler, label[, rationale, passage_ids, severity].")],
    dataset: DatasetOpt = None,
    update: Annotated[bool, typer.Option("--update", help="Accept changed labels for existing (claim, labeler) pairs.")] = False,
    partial: Annotated[bool, typer.Option("--partial", help="Import the good lines and list every skipped bad line (file, line, field, reason).")] = False,
    db: Db = None,
) -> None:
    """Import labels made elsewhere (one transaction: a bad line lands nothing, unless --partial); unknown labelers are created without a password."""
    from annotator.db import session_scope
    from annotator.services.imports import import_labels

    with session_scope(_engine(db)) as session:
        report = import_labels(session, OPERATOR, file, dataset=dataset, update=update, partial=partial)
    _echo_lines(report.summary_lines())


@labels_app.command("correct")
def labels_correct(
    claim_id: Annotated[str, typer.Argument(help="The claim's id.")],
    labeler: Annotated[str, typer.Option("--labeler", help="Whose label to correct (it stays theirs).")],
    label: Annotated[str, typer.Option("--label", help="The corrected label: support | contradict | insufficient.")],
    reason: Annotated[str, typer.Option("--reason", help="Why (required); recorded in the claim's history.")],
    rationale: Annotated[Optional[str], typer.Option("--rationale", help="The label's rationale (default: keep the stored one; \"\" clears it).")] = None,
    passages: Annotated[Optional[str], typer.Option("--passages", help="Cited passage ids, comma-separated (default: keep the stored ones; \"\" cites none).")] = None,
    severity: Annotated[Optional[str], typer.Option("--severity", help="leak | legal | amount_or_deadline | other | none (default: keep the stored one; dropped for support).")] = None,
    dataset: DatasetOpt = None,
    revision: Annotated[Optional[int], typer.Option("--revision", min=1, help="Refuse unless the stored label is still at revision N (the one you looked at).")] = None,
    db: Db = None,
) -> None:
    """Correct a labeler's stored label on a claim, with a reason.

    The label stays the labeler's; its revision goes up by one; the claim's history records who,
    before, after and the reason. An adjudicated claim becomes stale: decide it again before a
    release."""
    from annotator.db import session_scope
    from annotator.services.corrections import correct_label, corrected_content, correction_view

    cited = None if passages is None else [part.strip() for part in passages.split(",") if part.strip()]
    with session_scope(_engine(db)) as session:
        view = correction_view(session, OPERATOR, claim_id, dataset)
        current = view.label_of(labeler)
        content = corrected_content(current, label, passage_ids=cited, rationale=rationale, severity=severity)
        done = correct_label(session, OPERATOR, view.claim_pk, labeler, **content, reason=reason,
                             expected_revision=current.revision if revision is None else revision)
    where = f"claim {safe(view.claim_id)} (dataset {safe(view.dataset)})"
    if not done.changed:
        typer.echo(f"Nothing changed: {safe(labeler)}'s label on {where} already says that (revision {done.after.revision}).")
        return
    typer.echo(f"Corrected {safe(labeler)}'s label on {where}: {done.before.value} -> {done.after.value}, "
               f"revision {done.before.revision} -> {done.after.revision}.")
    typer.echo(f"  claim state: {done.state_before.value} -> {done.state_after.value}")
    if done.made_stale:
        typer.echo("  The claim had been adjudicated: it is back in the adjudication queue, and a release refuses it "
                   "until it is decided again.")


@adjudications_app.command("import")
def adjudications_import(
    file: Annotated[Path, typer.Argument(help="CSV or JSONL with claim_id, adjudicator, label[, rationale, severity]; or a CLIMATE-FEVER file with --vote.")],
    dataset: DatasetOpt = None,
    fmt: Annotated[str, typer.Option("--format", help=kind("adjudications").format_help())] = "auto",
    vote: Annotated[Optional[int], typer.Option("--vote", help="CLIMATE-FEVER: the K-th non-null vote decides each disputed claim, as adjudicator cf-vote-K.")] = None,
    update: Annotated[bool, typer.Option("--update", help="Replace stored decisions that differ (recorded in the audit trail).")] = False,
    partial: Annotated[bool, typer.Option("--partial", help="Import the good lines and list every skipped bad line (file, line, field, reason).")] = False,
    db: Db = None,
) -> None:
    """Import adjudications of disputed claims (one transaction: a bad line lands nothing, unless --partial); unknown adjudicators are created without a password."""
    from annotator.db import session_scope
    from annotator.services.imports import import_adjudications

    with session_scope(_engine(db)) as session:
        report = import_adjudications(session, OPERATOR, file, dataset=dataset, fmt=fmt, vote=vote, update=update,
                                      partial=partial)
    _echo_lines(report.summary_lines())


@app.command()
def agreement(
    dataset: DatasetOpt = None,
    labels: Annotated[Optional[Path], typer.Option("--labels", help="Compute from a CSV/JSONL of item_id, rater, label, without a database.")] = None,
    by: Annotated[Optional[str], typer.Option("--by", help="Break down by slice, split or guideline_version (comma-separated for several). From the database, by slice is always included.")] = None,
    categories: Annotated[Optional[str], typer.Option("--categories", help="Declared categories, comma-separated (default: support,contradict,insufficient).")] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", min=0, max=MAX_BOOTSTRAP, help="Bootstrap resamples for the 95% intervals (0: none).")] = 1000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the bootstrap.")] = 0,
    target_half_width: Annotated[float, typer.Option("--target-half-width", min=0.001, max=1.0, help="Sample-size guidance: the +- width of Krippendorff's alpha's 95% interval to aim for.")] = 0.1,
    as_json: JsonOpt = False,
    db: Db = None,
) -> None:
    """Inter-annotator agreement on the blind labels (never on adjudications)."""
    from annotator.agreement import compute_agreement, read_label_frame
    from annotator.agreement_text import format_agreement
    from annotator.services.reports import GROUP_COLUMNS
    from annotator.vocabulary import declared_categories

    try:
        declared = declared_categories(categories)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--categories") from None
    group_by = tuple(dict.fromkeys(part.strip() for part in (by or "").split(",") if part.strip()))
    unknown = [column for column in group_by if column not in GROUP_COLUMNS]
    if unknown:
        raise typer.BadParameter(f"{unknown[0]!r}: use {', '.join(GROUP_COLUMNS)}", param_hint="--by")
    if labels is not None:
        if db is not None or dataset is not None:
            raise typer.BadParameter("a labels file needs no database: leave out --db and --dataset", param_hint="--labels")
        frame = read_label_frame(labels, declared, keep=group_by)
        report = compute_agreement(frame, declared, n_bootstrap=bootstrap, seed=seed, by=group_by)
    else:
        from annotator.db import read_scope
        from annotator.services.reports import agreement_report

        group_by = tuple(dict.fromkeys(("slice", *group_by)))
        with read_scope(_engine(db)) as session:
            report = agreement_report(session, OPERATOR, _dataset_pk(session, dataset), by=group_by, n_bootstrap=bootstrap,
                                      seed=seed, categories=declared)
    data = report.to_json(target_half_width=target_half_width)
    if as_json:
        _echo_json(data)
    else:
        _echo_lines(format_agreement(data).split("\n"))


@queue_app.command("adjudication")
def queue_adjudication(dataset: DatasetOpt = None, as_json: JsonOpt = False, db: Db = None) -> None:
    """Disputed (and stale) claims waiting for a decision."""
    from annotator.db import session_scope
    from annotator.services.adjudication import adjudication_queue

    with session_scope(_engine(db)) as session:
        queue = adjudication_queue(session, OPERATOR, _dataset_pk(session, dataset))
    if as_json:
        _echo_json([item.to_json() for item in queue])
        return
    typer.echo(f"{len(queue)} claims waiting for adjudication")
    for item in queue:
        typer.echo(f"  {safe(item.claim_id)}\t{safe(item.case_id)}\t{item.state}\t{safe('/'.join(item.labels))}")


@release_app.command("create")
def release_create(
    name: Annotated[str, typer.Argument(help="Release name, e.g. gold-v1 (letters, digits, . _ -).")],
    dataset: DatasetOpt = None,
    only_final: Annotated[bool, typer.Option("--only-final", help="Release the agreed and adjudicated claims; count the rest as excluded.")] = False,
    out: Annotated[Path, typer.Option("--out", help="Folder that receives NAME/.")] = Path("data/releases"),
    creator: Annotated[str, typer.Option("--creator", help="Who creates the release (recorded in the manifest).")] = "",
    bootstrap: Annotated[int, typer.Option("--bootstrap", min=0, max=MAX_BOOTSTRAP, help="Bootstrap resamples for the agreement report in the manifest.")] = 1000,
    excel: Annotated[bool, typer.Option("--excel", help="Also write gold.excel.csv, the file to open in Excel (cells cut to Excel's 32,767 characters).")] = False,
    db: Db = None,
) -> None:
    """Freeze the final claims into a versioned, hashed gold release folder OUT/NAME/."""
    from annotator.db import session_scope
    from annotator.services.releases import create_release

    with session_scope(_engine(db)) as session:
        created = create_release(session, OPERATOR, name, dataset=dataset, only_final=only_final, out_dir=out,
                                 creator=creator or os.environ.get("USER", ""), n_bootstrap=bootstrap, excel=excel)
    for note in created.notes:
        typer.echo(f"Note: {safe(note)}")
    typer.echo(f"Release {safe(created.name)} written to {safe(created.path)}")
    typer.echo(f"  claims: {json_safe(json.dumps(created.counts, ensure_ascii=False))}")
    if created.excluded:
        typer.echo(f"  left out: {json_safe(json.dumps(created.excluded, ensure_ascii=False))}")
    typer.echo(f"  manifest sha256: {created.manifest_sha256}")


@release_app.command("verify")
def release_verify(
    folder: Annotated[Optional[Path], typer.Argument(help="A release folder (holding manifest.json).")] = None,
    manifest_sha256: Annotated[Optional[str], typer.Option("--manifest-sha256", help="The manifest's SHA-256 printed by `release create`: also checks manifest.json itself.")] = None,
    release: Annotated[Optional[str], typer.Option("--release", help="Verify the stored release NAME against the manifest hash recorded in the database.")] = None,
    db: Db = None,
) -> None:
    """Recompute every file's SHA-256 and compare with the manifest (and the manifest with the
    hash recorded at creation, given --manifest-sha256 or --release). With --release, a release
    whose create was stopped before its folder was renamed into place is finished first."""
    if manifest_sha256 is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", manifest_sha256):
        raise typer.BadParameter("give the 64 hexadecimal digits that `release create` printed", param_hint="--manifest-sha256")
    if release is not None and (folder is not None or manifest_sha256 is not None):
        raise typer.BadParameter("give either a folder (with --manifest-sha256) or --release NAME, not both", param_hint="--release")
    if release is not None:
        from annotator.db import session_scope
        from annotator.services.releases import check_stored_release, verify_stored_release

        with session_scope(_engine(db)) as session:
            result = verify_stored_release(session, OPERATOR, release)
            for note in result.notes:
                typer.echo(f"Note: {safe(note)}")
            result = check_stored_release(session, OPERATOR, release) if not result.ok else result
        where = f"release {release}"
    elif folder is None:
        raise typer.BadParameter("give a release folder or --release NAME", param_hint="FOLDER")
    else:
        from annotator.release import check_release

        result = check_release(folder, manifest_sha256)
        where = str(folder)
    typer.echo(f"OK: {safe(where)} matches its manifest ({len(result.files)} files checked)")
    typer.echo(f"  manifest sha256: {result.manifest_sha256}")


@release_app.command("export")
def release_export(
    release: Annotated[str, typer.Argument(help="The release: a release folder, or the name of a release in the database.")],
    fmt: Annotated[str, typer.Option("--format", help="The shape to write: ragas (JSON lines, one case a line, RAGAS's field names, the gold labels per claim).")] = "ragas",
    output: Annotated[Optional[Path], typer.Option("--output", help="The file to write (replaced when it exists); default: standard output.")] = None,
    db: Db = None,
) -> None:
    """The gold of a release in another tool's record shape (--format ragas: user_input, response,
    retrieved_contexts, retrieved_context_ids, reference, the claims and their gold labels), so that
    a team can run its usual metrics on human-checked data. The release is verified first (a folder
    against its manifest, a stored release also against the manifest hash the database recorded)."""
    from annotator.release_export import json_line, ragas_records, write_export

    _choice(fmt, EXPORT_FORMATS, "--format")
    folder = _verified_release_folder(release, db)
    if output is None:
        lines = [json_safe(json_line(record)) for record in ragas_records(folder, release)]  # all read before any is printed
        for line in lines:
            typer.echo(line)
        return
    written = write_export(ragas_records(folder, release), output, folder)
    typer.echo(f"Wrote {written.cases} cases ({written.claims} claims) of release {safe(release)} to {safe(output)}")


def _verified_release_folder(release: str, db: Optional[str]) -> Path:
    """The folder of `release` (a release folder, or the name of a stored release), verified: a
    folder against its manifest, a stored release also against the manifest hash recorded."""
    if Path(release).is_dir():
        from annotator.errors import NotFoundError
        from annotator.release import check_release, release_layout

        if not release_layout(release).manifest.is_file():
            raise NotFoundError.of("msg.judge.not_a_release", folder=release)
        check_release(release)
        return Path(release)
    from annotator.db import session_scope
    from annotator.services.gold_source import open_release

    with session_scope(_engine(db)) as session:
        return open_release(session, OPERATOR, release).folder


@release_app.command("diff")
def release_diff(
    old: Annotated[str, typer.Argument(help="The older release: a release folder, or the name of a release in the database.")],
    new: Annotated[str, typer.Argument(help="The newer release: a release folder, or the name of a release in the database.")],
    as_json: JsonOpt = False,
    db: Db = None,
) -> None:
    """Claims added, removed, whose gold label changed, whose text or passages changed, and whose
    resolution (agreed, adjudicated) changed from OLD to NEW, with counts. An
    argument that is a folder is read as a release folder, else as the name of a stored release
    (in --db). Both are verified first (a folder against its manifest, a stored release also
    against the manifest hash the database recorded); one that fails is refused, naming the file.
    A folder given as a path is only as trustworthy as its own manifest: to compare a copy, check
    it first with `release verify FOLDER --manifest-sha256 HASH` (the hash recorded at creation)."""
    from annotator.services.releases import compare_releases

    sources = [Path(given) if Path(given).is_dir() else given for given in (old, new)]
    if all(isinstance(source, Path) for source in sources):
        comparison = compare_releases(None, OPERATOR, *sources)
    else:
        from annotator.db import session_scope

        with session_scope(_engine(db)) as session:
            comparison = compare_releases(session, OPERATOR, *sources)
    if as_json:
        _echo_json(comparison.to_json())
        return
    diff, counts, more = comparison.diff, comparison.diff.counts(), comparison.diff.change_counts()
    typer.echo(f"{safe(old)} ({comparison.old.claims} claims) -> {safe(new)} ({comparison.new.claims} claims): "
               f"{counts['added']} added, {counts['removed']} removed, {counts['changed']} gold label changed, "
               f"{counts['unchanged']} same gold label")
    typer.echo(f"  of the claims in both: {more['text_or_passages_changed']} text or passages changed, "
               f"{more['resolution_changed']} resolution changed, {more['nothing_changed']} unchanged "
               "(same gold label, resolution, text and passages)")
    from annotator.release import ContentChange, GoldChange

    def shown(change: GoldChange | ContentChange) -> str:  # the label or resolution, or what of the content changed
        if isinstance(change, ContentChange):
            return ", ".join(["claim text"] * change.claim + ["passage ids"] * change.passage_ids
                             + [f"passage text ({', '.join(change.passage_text)})"] * bool(change.passage_text))
        return change.after if change.before is None else change.before if change.after is None else f"{change.before} -> {change.after}"

    for title, changes in (("added", diff.added), ("removed", diff.removed), ("gold label changed", diff.changed),
                           ("text or passages changed", diff.text_or_passages_changed),
                           ("resolution changed", diff.resolution_changed)):
        if not changes:
            continue
        typer.echo(f"{title} ({len(changes)}):")
        for change in changes:
            typer.echo(f"  {safe(change.dataset)}\t{safe(change.case_id)}\t{safe(change.claim_id)}\t{safe(shown(change))}")
    if diff.changed:
        typer.echo("gold label changes: " + ", ".join(f"{c['from']} -> {c['to']} {c['claims']}" for c in diff.changes_by_label()))


@users_app.command("add")
def users_add(
    name: Annotated[str, typer.Argument(help="Login name.")],
    role: Annotated[list[str], typer.Option("--role", help="labeler | adjudicator | admin (repeatable).")],
    password: Annotated[Optional[str], typer.Option("--password", help="Password (asked for when omitted and --no-password is not given).")] = None,
    no_password: Annotated[bool, typer.Option("--no-password", help="Create without a password (cannot log in yet).")] = False,
    db: Db = None,
) -> None:
    """Add a user with one or more roles."""
    from annotator.db import session_scope
    from annotator.services.users import add_user

    if password is not None and no_password:
        raise typer.BadParameter("give --password or --no-password, not both", param_hint="--no-password")
    if password is None and not no_password:
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    with session_scope(_engine(db)) as session:
        user = add_user(session, OPERATOR, name, role, password)
    typer.echo(f"Added user {safe(user.name)} ({user.roles})" + ("" if password else "; no password: cannot log in until one is set"))


@users_app.command("list")
def users_list(as_json: JsonOpt = False, db: Db = None) -> None:
    """List users, their roles, and whether they can log in."""
    from annotator.db import session_scope
    from annotator.services.users import list_users

    with session_scope(_engine(db)) as session:
        rows = [{"name": u.name, "roles": u.roles.split(","), "active": u.active, "has_password": u.password_hash is not None} for u in list_users(session, OPERATOR)]
    if as_json:
        _echo_json(rows)
        return
    for row in rows:
        login = "can log in" if row["active"] and row["has_password"] else ("disabled" if not row["active"] else "no password")
        typer.echo(f"{safe(row['name']):<20} {','.join(row['roles']):<28} {login}")


@users_app.command("passwd")
def users_passwd(
    name: Annotated[str, typer.Argument(help="Login name.")],
    password: Annotated[Optional[str], typer.Option("--password", help="New password (asked for when omitted).")] = None,
    db: Db = None,
) -> None:
    """Set or reset a user's password."""
    from annotator.db import session_scope
    from annotator.services.users import get_user, set_password

    engine = _engine(db)
    with session_scope(engine) as session:
        get_user(session, name)  # an unknown name is an error before any prompt
    if password is None:
        password = typer.prompt("New password", hide_input=True, confirmation_prompt=True)
    with session_scope(engine) as session:
        set_password(session, OPERATOR, get_user(session, name), password)
    typer.echo(f"Password set for {safe(name)}")


@users_app.command("roles")
def users_roles(
    name: Annotated[str, typer.Argument(help="Login name.")],
    role: Annotated[list[str], typer.Option("--role", help="labeler | adjudicator | admin (repeatable): the user's roles from now on.")],
    db: Db = None,
) -> None:
    """Replace a user's roles (their labels and decisions stay)."""
    from annotator.db import session_scope
    from annotator.services.users import get_user, roles_of, set_roles

    with session_scope(_engine(db)) as session:
        user = get_user(session, name)
        before = ",".join(sorted(roles_of(user)))
        set_roles(session, OPERATOR, user, role)
        after = ",".join(sorted(roles_of(user)))
    typer.echo(f"Roles of {safe(name)}: {before} -> {after}")


@users_app.command("disable")
def users_disable(name: Annotated[str, typer.Argument(help="Login name.")], db: Db = None) -> None:
    """Disable a user (they can no longer log in; their labels stay)."""
    from annotator.db import session_scope
    from annotator.services.users import get_user, set_active

    with session_scope(_engine(db)) as session:
        set_active(session, OPERATOR, get_user(session, name), False)
    typer.echo(f"Disabled {safe(name)}")


@users_app.command("enable")
def users_enable(name: Annotated[str, typer.Argument(help="Login name.")], db: Db = None) -> None:
    """Enable a disabled user again."""
    from annotator.db import session_scope
    from annotator.services.users import get_user, set_active

    with session_scope(_engine(db)) as session:
        set_active(session, OPERATOR, get_user(session, name), True)
    typer.echo(f"Enabled {safe(name)}")


@sessions_app.command("settings")
def sessions_settings(
    idle_hours: Annotated[Optional[float], typer.Option("--idle-hours", help="Log out after this many hours without use (0.25-720; default 8).")] = None,
    absolute_days: Annotated[Optional[float], typer.Option("--absolute-days", help="Log out this many days after the login, used or not (1-365; default 7).")] = None,
    as_json: JsonOpt = False,
    db: Db = None,
) -> None:
    """Show the login session expiries, or set them (they apply at once, also to open sessions)."""
    from annotator.db import session_scope
    from annotator.services.login_sessions import session_settings, set_session_settings

    with session_scope(_engine(db)) as session:
        if idle_hours is None and absolute_days is None:
            settings = session_settings(session)
        else:
            settings = set_session_settings(session, OPERATOR, idle_hours=idle_hours, absolute_days=absolute_days)
    if as_json:
        _echo_json(settings.as_dict())
        return
    typer.echo(f"idle expiry {settings.idle_hours:g} h, absolute expiry {settings.absolute_days:g} d")


@sessions_app.command("revoke")
def sessions_revoke(name: Annotated[str, typer.Argument(help="Login name.")], db: Db = None) -> None:
    """Log a user out of every browser (their next action shows the login page)."""
    from annotator.db import session_scope
    from annotator.services.login_sessions import revoke_user_sessions
    from annotator.services.users import get_user

    with session_scope(_engine(db)) as session:
        revoked = revoke_user_sessions(session, get_user(session, name).id, "admin")
    typer.echo(f"Revoked {revoked} login session{'' if revoked == 1 else 's'} of {safe(name)}")


@guideline_app.command("publish")
def guideline_publish(
    file: Annotated[Path, typer.Argument(help="The guideline as a Markdown file (UTF-8).")],
    version: Annotated[str, typer.Option("--version", help="The new version's name, e.g. v2 or 2026-11 (never used before).")],
    by: Annotated[str, typer.Option("--by", help="The admin who publishes it (a user name).")],
    db: Db = None,
) -> None:
    """Publish FILE as the new current guideline; labels saved from now on record its version."""
    from annotator.db import session_scope
    from annotator.services.guidelines import publish_guideline, read_guideline_file
    from annotator.services.users import get_user

    markdown = read_guideline_file(file)
    with session_scope(_engine(db)) as session:
        published = publish_guideline(session, get_user(session, by), version, markdown)
    typer.echo(f"Published guideline {safe(published.version)} from {safe(file)} by {safe(published.published_by)} "
               f"({published.chars} characters, sha256 {published.sha256[:12]}); labels saved from now on record it.")


@guideline_app.command("show")
def guideline_show(
    version: Annotated[Optional[str], typer.Option("--version", help="A published version (default: the current one).")] = None,
    db: Db = None,
) -> None:
    """Print a guideline's Markdown (the current one by default); its version and date go to standard error."""
    from annotator.db import session_scope
    from annotator.errors import NotFoundError
    from annotator.services.guidelines import current_guideline, get_guideline

    with session_scope(_engine(db)) as session:
        shown = current_guideline(session) if version is None else get_guideline(session, version)
    if shown is None:
        raise NotFoundError("no guideline is published yet; publish one with "
                            "`annotator guideline publish FILE.md --version V --by ADMIN`")
    typer.echo(f"guideline {safe(shown.version)}, published {shown.published_at:%Y-%m-%d %H:%M} UTC by {safe(shown.published_by)}, "
               f"sha256 {shown.sha256}", err=True)
    typer.echo(safe(shown.markdown, keep="\n\t"), nl=not shown.markdown.endswith("\n"))


@guideline_app.command("list")
def guideline_list(as_json: JsonOpt = False, db: Db = None) -> None:
    """List the published versions, the current (newest) first."""
    from annotator.db import session_scope
    from annotator.services.guidelines import list_guidelines

    with session_scope(_engine(db)) as session:
        rows = [{"version": g.version, "published_at": g.published_at.isoformat(), "published_by": g.published_by,
                 "sha256": g.sha256, "chars": g.chars, "current": n == 0} for n, g in enumerate(list_guidelines(session))]
    if as_json:
        _echo_json(rows)
        return
    if not rows:
        typer.echo("No guideline published yet.")
        return
    for row in rows:
        when = row["published_at"][:16].replace("T", " ")
        typer.echo(f"{safe(row['version']):<16} {when} UTC  {safe(row['published_by']):<16} {row['chars']:>7} chars  "
                   f"sha256 {row['sha256'][:12]}" + ("  (current)" if row["current"] else ""))


@app.command()
def assign(
    labelers: Annotated[str, typer.Option("--labelers", help="Two labelers' names, comma-separated.")],
    first: Annotated[int, typer.Option("--first", min=1, max=1_000_000, help="Assign the next N cases nobody is assigned to, in import order.")] = 20,
    dataset: DatasetOpt = None,
    db: Db = None,
) -> None:
    """Assign the next N unassigned cases to two labelers, for blind double labeling."""
    from annotator.db import session_scope
    from annotator.services.labeling import assign_cases, first_unassigned_cases

    names = [name.strip() for name in labelers.split(",") if name.strip()]
    if len(names) != 2 or names[0] == names[1]:
        raise typer.BadParameter("name two different labelers, e.g. --labelers aoi,ren", param_hint="--labelers")
    with session_scope(_engine(db)) as session:
        created = assign_cases(session, OPERATOR, first_unassigned_cases(session, first, _dataset_pk(session, dataset)), names)
    typer.echo(f"Created {created} assignments ({safe(', '.join(names))})")


@hold_app.command("list")
def hold_list(dataset: DatasetOpt = None, as_json: JsonOpt = False, db: Db = None) -> None:
    """Every hold in force: case, reason, note, who placed it, when, and when it expires."""
    from annotator.db import session_scope
    from annotator.services.labeling import holds_in_force

    with session_scope(_engine(db)) as session:
        holds = holds_in_force(session, OPERATOR, _dataset_pk(session, dataset))
    if as_json:
        _echo_json([hold.to_json() for hold in holds])
        return
    typer.echo(f"{len(holds)} holds in force")
    for hold in holds:  # the note as a JSON string: no control character reaches the terminal
        typer.echo(f"{hold.dataset} {hold.case_id}: {hold.reason} by {hold.holder}, placed {hold.placed_at:%Y-%m-%d %H:%M}, "
                   f"expires {hold.expires_at:%Y-%m-%d %H:%M}, note {json.dumps(hold.note, ensure_ascii=False)}")


@hold_app.command("lift")
def hold_lift(case_id: Annotated[str, typer.Argument(help="The case whose holds to lift.")],
              dataset: DatasetOpt = None, db: Db = None) -> None:
    """Lift every hold in force on a case, whoever placed it."""
    from annotator.db import session_scope
    from annotator.services.labeling import lift_holds
    from annotator.services.lookup import find_case

    with session_scope(_engine(db)) as session:
        case = find_case(session, case_id, dataset)
        lifted = lift_holds(session, OPERATOR, case.id)
        shown = case.case_id
    typer.echo(f"Lifted {lifted} hold{'' if lifted == 1 else 's'} on case {shown}")


ReasonOpt = Annotated[str, typer.Option("--reason", help="Why (required); recorded in the claim's history.")]


def _claim_line(claim) -> str:  # noqa: ANN001 - a claim_review.ReviewedClaim
    """One claim as `claims` commands print it: id, position, span and text (quoted, escaped)."""
    span = f"{claim.span[0]}-{claim.span[1]}" if claim.span is not None else "-"
    return (f"  {safe(claim.claim_id)}\tposition {claim.position}\tspan {span}\t"
            f"{safe(json.dumps(claim.text, ensure_ascii=False))}")


def _echo_reviewed(done, said: str) -> None:  # noqa: ANN001 - a claim_review.ClaimReviewed
    typer.echo(f"{said} (case {safe(done.case_id)}, dataset {safe(done.dataset)}); reason {safe(json.dumps(done.reason, ensure_ascii=False))}")
    if done.before:
        typer.echo(" before:")
        for claim in done.before:
            typer.echo(_claim_line(claim))
    if done.after:
        typer.echo(" after:")
        for claim in done.after:
            typer.echo(_claim_line(claim))


@claims_app.command("list")
def claims_list(case_id: Annotated[str | None, typer.Argument(
                    help="The case whose claims to list; without it, the case ids of --dataset.")] = None,
                dataset: DatasetOpt = None, as_json: JsonOpt = False, db: Db = None) -> None:
    """A case's claims in order: id, position, span in the answer (code points), label count and text; and what
    cannot be changed on each, and why. Without a case id: the case ids of --dataset, one a line."""
    from annotator.db import read_scope
    from annotator.services.claim_review import case_review, review_case_ids

    if case_id is None:
        if dataset is None:
            raise typer.BadParameter("give a case id, or --dataset NAME to list the dataset's case ids", param_hint="CASE_ID")
        with read_scope(_engine(db)) as session:
            ids = review_case_ids(session, OPERATOR, dataset, limit=None)
        if as_json:
            _echo_json({"dataset": dataset, "case_ids": ids})
            return
        for found in ids:
            typer.echo(safe(found))
        return
    with read_scope(_engine(db)) as session:
        view = case_review(session, OPERATOR, case_id, dataset)
    if as_json:
        _echo_json({"dataset": view.dataset, "case_id": view.case_id, "question": view.question, "answer": view.answer,
                    "claims": [{"claim_id": c.claim_id, "position": c.position,
                                "span": None if c.span is None else list(c.span), "text": c.text,
                                "passage_ids": list(c.passage_ids), "labels": c.labels, "has_draft": c.has_draft,
                                "refused": {op: str(why) for op, why in c.refusals.items()}} for c in view.claims]})
        return
    typer.echo(f"Case {safe(view.case_id)} (dataset {safe(view.dataset)}): {len(view.claims)} claim{'' if len(view.claims) == 1 else 's'}")
    typer.echo(f"  answer: {safe(json.dumps(view.answer, ensure_ascii=False))}")
    for claim in view.claims:
        span = f"{claim.span[0]}-{claim.span[1]}" if claim.span is not None else "-"
        draft = ", a draft" if claim.has_draft else ""
        typer.echo(f"  {claim.position}\t{safe(claim.claim_id)}\tspan {span}\tlabels {claim.labels}{draft}\t"
                   f"{safe(json.dumps(claim.text, ensure_ascii=False))}")
        for op, why in claim.refusals.items():
            typer.echo(f"      no {op}: {safe(why)}")


@claims_app.command("split")
def claims_split(
    claim_id: Annotated[str, typer.Argument(help="The claim to split.")],
    at: Annotated[int, typer.Option("--at", help="Where to cut its text: a code-point offset, from 1 to its length less 1 (`claims list` shows the text).")],
    reason: ReasonOpt,
    dataset: DatasetOpt = None,
    db: Db = None,
) -> None:
    """Split an unlabeled claim in two at --at: the first part keeps the id, the second is a new claim ID-2 (or -3, ...)
    right after it, shown with the same passages."""
    from annotator.db import session_scope
    from annotator.services.claim_review import split_claim

    with session_scope(_engine(db)) as session:
        done = split_claim(session, OPERATOR, claim_id, at, reason=reason, dataset=dataset)
    _echo_reviewed(done, f"Split claim {safe(done.before[0].claim_id)} at {at} into {safe(done.after[0].claim_id)} and {safe(done.after[1].claim_id)}")


@claims_app.command("merge")
def claims_merge(
    claim_id: Annotated[str, typer.Argument(help="The claim to merge with the next claim of its case.")],
    reason: ReasonOpt,
    dataset: DatasetOpt = None,
    db: Db = None,
) -> None:
    """Merge an unlabeled claim with the next one of its case: it keeps its id, the texts are joined (with the answer's
    text between them when both spans are known, else one space) and the next claim is removed."""
    from annotator.db import session_scope
    from annotator.services.claim_review import merge_claims

    with session_scope(_engine(db)) as session:
        done = merge_claims(session, OPERATOR, claim_id, reason=reason, dataset=dataset)
    _echo_reviewed(done, f"Merged claim {safe(done.before[1].claim_id)} into {safe(done.before[0].claim_id)}")


@claims_app.command("edit")
def claims_edit(
    claim_id: Annotated[str, typer.Argument(help="The claim to edit.")],
    text: Annotated[str, typer.Option("--text", help="The claim's new text (stripped; its span is where it is found in the answer).")],
    reason: ReasonOpt,
    update: Annotated[bool, typer.Option("--update", help="Also for a claim with labels or a decision: change it as import --update does (the labels are kept and marked to review; a decision becomes stale).")] = False,
    dataset: DatasetOpt = None,
    db: Db = None,
) -> None:
    """Replace a claim's text; refused on a claim with labels, a decision or a draft unless --update."""
    from annotator.db import session_scope
    from annotator.services.claim_review import edit_claim

    with session_scope(_engine(db)) as session:
        done = edit_claim(session, OPERATOR, claim_id, text, reason=reason, update=update, dataset=dataset)
    if not done.changed:
        typer.echo(f"Nothing changed: claim {safe(done.before[0].claim_id)} already has that text.")
        return
    _echo_reviewed(done, f"Edited claim {safe(done.before[0].claim_id)}")
    if done.labels_to_review:
        typer.echo(f"  {done.labels_to_review} label{'' if done.labels_to_review == 1 else 's'} to review: each labeler "
                   "finds the claim back in their queue (two or more such labels make it stale until they save again or "
                   "an adjudicator decides).")


@claims_app.command("drop")
def claims_drop(
    claim_id: Annotated[str, typer.Argument(help="The claim to drop (one that states no fact).")],
    reason: ReasonOpt,
    dataset: DatasetOpt = None,
    db: Db = None,
) -> None:
    """Remove an unlabeled claim from its case, with its passage links; the last claim of a case stays."""
    from annotator.db import session_scope
    from annotator.services.claim_review import drop_claim

    with session_scope(_engine(db)) as session:
        done = drop_claim(session, OPERATOR, claim_id, reason=reason, dataset=dataset)
    _echo_reviewed(done, f"Dropped claim {safe(done.before[0].claim_id)}")


@judge_app.command("import")
def judge_import(
    file: Annotated[Path, typer.Argument(help="CSV or JSONL with claim_id, label[, confidence (0..1), rationale].")],
    run: Annotated[str, typer.Option("--run", help="Name of the new judge run (letters, digits, . _ : + -); a run is never changed once imported.")],
    dataset: DatasetOpt = None,
    fmt: Annotated[str, typer.Option("--format", help=kind("judge_labels").format_help())] = "auto",
    model: Annotated[str, typer.Option("--model", help="The judge's model, kept with the run.")] = "",
    prompt_version: Annotated[str, typer.Option("--prompt-version", help="The judge's prompt version, kept with the run.")] = "",
    note: Annotated[str, typer.Option("--note", help="A note kept with the run.")] = "",
    partial: Annotated[bool, typer.Option("--partial", help="Import the good lines and list every skipped bad line (file, line, field, reason).")] = False,
    db: Db = None,
) -> None:
    """Import an automatic judge's labels of claims as a new, immutable judge run (one transaction: a bad line stores nothing, unless --partial)."""
    from annotator.db import session_scope
    from annotator.services.judges import import_judge_labels

    with session_scope(_engine(db)) as session:
        done = import_judge_labels(session, OPERATOR, file, run=run, dataset=dataset, model=model,
                                   prompt_version=prompt_version, note=note, partial=partial, fmt=fmt)
    _echo_lines(done.summary_lines())


@judge_app.command("list")
def judge_list(as_json: JsonOpt = False, db: Db = None) -> None:
    """Every judge run: name, dataset, model, prompt version, labels, when and from which file."""
    from annotator.db import read_scope
    from annotator.services.judges import list_judge_runs

    with read_scope(_engine(db)) as session:
        runs = list_judge_runs(session, OPERATOR)
    if as_json:
        _echo_json(runs)
        return
    typer.echo(f"{len(runs)} judge run{'' if len(runs) == 1 else 's'}")
    for run in runs:
        typer.echo(safe(f"  {run['name']}\t{run['dataset']}\t{run['model'] or '-'}\t{run['prompt_version'] or '-'}\t"
                        f"{run['n_labels']} labels\t{run['created_at'][:16]}\t{run['source_name']}", keep="\t"))


@judge_app.command("report")
def judge_report(
    name: Annotated[str, typer.Argument(help="The judge run.")],
    release: Annotated[str, typer.Option("--release", help="The gold: a stored release's name, or a release folder.")],
    by: Annotated[str, typer.Option("--by", help="Break down by slice and/or split (comma-separated; '' for none).")] = "slice,split",
    bootstrap: Annotated[int, typer.Option("--bootstrap", min=0, max=MAX_BOOTSTRAP, help="Case-level bootstrap resamples for the 95% intervals (0: none).")] = 1000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the bootstrap.")] = 0,
    holdout: Annotated[bool, typer.Option("--holdout", help="Show the holdout split's figures (recorded in the audit trail; without it: the dev split only).")] = False,
    as_json: JsonOpt = False,
    db: Db = None,
) -> None:
    """A judge run against a gold release: agreement, false pass / false fail rates with case-level
    intervals, the judge beside each human labeler, and the corrected support rate."""
    from annotator.calibration_text import format_judge_report
    from annotator.db import session_scope
    from annotator.services.judges import judge_report as report_of

    with session_scope(_engine(db)) as session:
        data = report_of(session, OPERATOR, name, _release_arg(release), by=by.split(","), n_bootstrap=bootstrap, seed=seed, holdout=holdout)
    if as_json:
        _echo_json(data)
    else:
        _echo_lines(format_judge_report(data).split("\n"))


def _meta_options(given: list[str]) -> dict[str, str]:
    """--meta KEY=VALUE options as KEY -> VALUE (split at the first `=`). Raises typer.BadParameter
    (a usage error, exit status 2) naming the option for one without `=`, with an empty key, or
    with a key an earlier --meta gave."""
    meta: dict[str, str] = {}
    for option in given:
        key, equals, value = option.partition("=")
        shown = repr(option if len(option) <= 80 else option[:80] + "…")
        if not equals:
            raise typer.BadParameter(f"{shown}: write KEY=VALUE, such as model=gpt-4o-mini", param_hint="--meta")
        if not key.strip():
            raise typer.BadParameter(f"{shown}: the key before '=' is empty; write KEY=VALUE, such as model=gpt-4o-mini",
                                     param_hint="--meta")
        if key in meta:
            raise typer.BadParameter(f"{shown}: the key {key!r} is given twice; give each key once", param_hint="--meta")
        meta[key] = value
    return meta


@run_app.command("import")
def run_import(
    file: Annotated[Path, typer.Argument(help="JSONL, one case a line: case_id, retrieved (passage ids, best first), behavior[, answer, cited, claims]; or RAGAS records (--format ragas: the contexts' order is the ranking).")],
    run: Annotated[str, typer.Option("--run", help="Name of the new run (letters, digits, . _ : + -); a run is never changed once imported.")],
    dataset: DatasetOpt = None,
    meta: Annotated[Optional[list[str]], typer.Option("--meta", help="KEY=VALUE kept with the run (repeatable): system, model, prompt, index, corpus_release or another name.")] = None,
    note: Annotated[str, typer.Option("--note", help="A note kept with the run.")] = "",
    partial: Annotated[bool, typer.Option("--partial", help="Import the good lines and list every skipped bad line (file, line, field, reason).")] = False,
    fmt: Annotated[str, typer.Option("--format", help=kind("runs").format_help())] = "auto",
    db: Db = None,
) -> None:
    """Import a RAG system's run over a dataset's cases as a new, immutable run (one transaction: a bad line stores nothing, unless --partial)."""
    from annotator.db import session_scope
    from annotator.services.runs import import_run

    given = _meta_options(meta or [])
    with session_scope(_engine(db)) as session:
        done = import_run(session, OPERATOR, file, run=run, dataset=dataset, meta=given, note=note, partial=partial, fmt=fmt)
    _echo_lines(done.summary_lines())


@run_app.command("list")
def run_list(as_json: JsonOpt = False, db: Db = None) -> None:
    """Every run: name, dataset, cases, unknown retrieved passage ids, meta, when and from which file."""
    from annotator.db import read_scope
    from annotator.services.runs import list_runs

    with read_scope(_engine(db)) as session:
        runs = list_runs(session, OPERATOR)
    if as_json:
        _echo_json(runs)
        return
    typer.echo(f"{len(runs)} run{'' if len(runs) == 1 else 's'}")
    for each in runs:  # each field terminal-safe on its own: a tab in a value is shown escaped, not a column
        meta = " ".join(f"{key}={value}" for key, value in each["meta"].items()) or "-"
        fields = (each["name"], each["dataset"], f"{each['n_cases']} case{'' if each['n_cases'] == 1 else 's'}",
                  f"{each['n_unknown_retrieved']} unknown retrieved", meta, each["created_at"][:16], each["source_name"],
                  f"sha256 {each['source_sha256']}", *([each["note"]] if each["note"] else []))
        typer.echo("  " + "\t".join(safe(field) for field in fields))


def _release_arg(release: str) -> str | Path:
    """--release as the services take it: a path when it looks like one, else a stored release's name."""
    return Path(release) if ("/" in release or os.sep in release or release in (".", "..")) else release


def _fraction(value: float, option: str, *, low_open: bool) -> None:
    """A usage error unless `value` is a finite fraction below 1, at least 0 (above 0 when `low_open`)."""
    if not (math.isfinite(value) and (value > 0 if low_open else value >= 0) and value < 1):
        bounds = "between 0 and 1 (such as 0.05)" if low_open else "from 0 up to, not including, 1 (such as 0.02)"
        raise typer.BadParameter(f"{value!r}: give a fraction {bounds}", param_hint=option)


def _resamples(n: int) -> None:
    """A usage error for a number of bootstrap resamples other than 0 or at least MIN_BOOTSTRAP."""
    from annotator.agreement import MIN_BOOTSTRAP

    if 0 < n < MIN_BOOTSTRAP:
        raise typer.BadParameter(f"{n}: use 0 (no intervals) or at least {MIN_BOOTSTRAP} resamples", param_hint="--bootstrap")


def _choice(value: str, choices: tuple[str, ...], option: str) -> None:
    if value not in choices:
        raise typer.BadParameter(f"{safe(repr(value))}: choose one of {', '.join(choices)}", param_hint=option)


ReleaseOpt = Annotated[str, typer.Option("--release", help="The gold: a stored release's name, or a release folder.")]
KOpt = Annotated[int, typer.Option("--k", min=1, help="The rank cut of the retrieval figures (Recall@k, Precision@k, Hit@k, nDCG@k).")]
UnitOpt = Annotated[str, typer.Option("--unit", help="Score retrieval by passage, or by document (doc: a document counts once, at its best rank).")]
RuleOpt = Annotated[str, typer.Option("--retrieval-rule", help="all: retrieval is ok when every relevant passage is in the top k; any: when one is.")]
BootstrapOpt = Annotated[int, typer.Option("--bootstrap", min=0, max=MAX_BOOTSTRAP, help="Case-level bootstrap resamples for the 95% intervals (0: none).")]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="Seed of the bootstrap.")]


@run_app.command("report")
def run_report(
    name: Annotated[str, typer.Argument(help="The run.")],
    release: ReleaseOpt,
    k: KOpt = 5,
    unit: UnitOpt = "passage",
    split: Annotated[str, typer.Option("--split", help="The cases scored: all, dev or holdout.")] = "all",
    rule: RuleOpt = "all",
    bootstrap: BootstrapOpt = 1000,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    db: Db = None,
) -> None:
    """A run scored case by case against a gold release: retrieval and generation apart, blockers
    first, each figure with a case-level interval, by slice and by split."""
    from annotator.db import read_scope
    from annotator.run_text import format_run_report
    from annotator.services.run_reports import run_report as report_of

    _choice(unit, RETRIEVAL_UNITS, "--unit")
    _choice(split, REPORT_SPLITS, "--split")
    _choice(rule, RETRIEVAL_RULES, "--retrieval-rule")
    _resamples(bootstrap)
    with read_scope(_engine(db)) as session:
        data = report_of(session, OPERATOR, name, _release_arg(release), k=k, unit=unit, split=split, rule=rule,
                         n_bootstrap=bootstrap, seed=seed)
    if as_json:
        _echo_json(data)
    else:
        _echo_lines(format_run_report(data).split("\n"))


@run_app.command("compare")
def run_compare(
    base: Annotated[str, typer.Argument(help="The baseline run (the system before the change).")],
    candidate: Annotated[str, typer.Argument(help="The candidate run (the system after the change).")],
    release: ReleaseOpt,
    k: KOpt = 5,
    unit: UnitOpt = "passage",
    split: Annotated[str | None, typer.Option("--split", help="The cases compared: all, dev or holdout (default: holdout when the release has holdout cases, else all).")] = None,
    margin: Annotated[float, typer.Option("--margin", help="The pass-rate loss the gate tolerates, a fraction (the paired interval's lower bound may not fall below -margin).")] = 0.0,
    alpha: Annotated[float, typer.Option("--alpha", help="The level of the per-slice regression tests (Holm-corrected).")] = 0.05,
    rule: RuleOpt = "all",
    gate: Annotated[bool, typer.Option("--gate", help="Exit 0 for ship, 1 for blocked, 3 for hold, 4 when the gate could not decide (2 stays a usage error), for a CI job.")] = False,
    bootstrap: BootstrapOpt = 1000,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    db: Db = None,
) -> None:
    """A candidate run against its baseline on the cases both have: fixed and regressed cases, the
    paired difference in pass rate with its interval, exact McNemar, per-slice regression tests
    (Holm), the metric deltas, the candidate's blockers, and the decision: ship, hold or blocked."""
    from annotator.db import read_scope
    from annotator.run_compare import GATE_ERROR_EXIT
    from annotator.run_text import format_compare
    from annotator.services.run_reports import compare_report, gate_exit_code

    _choice(unit, RETRIEVAL_UNITS, "--unit")
    _choice(rule, RETRIEVAL_RULES, "--retrieval-rule")
    if split is not None:
        _choice(split, REPORT_SPLITS, "--split")
    _fraction(margin, "--margin", low_open=False)
    _fraction(alpha, "--alpha", low_open=True)
    _resamples(bootstrap)
    try:
        with read_scope(_engine(db)) as session:
            data = compare_report(session, OPERATOR, base, candidate, _release_arg(release), k=k, unit=unit, split=split,
                                  rule=rule, margin=margin, alpha=alpha, n_bootstrap=bootstrap, seed=seed)
    except AnnotatorError as error:
        if not gate:
            raise
        typer.echo(f"Error: {safe(error, keep=chr(10))}\nThe gate could not decide: exit status {GATE_ERROR_EXIT}.", err=True)
        raise typer.Exit(code=GATE_ERROR_EXIT) from None
    try:
        if as_json:
            _echo_json(data)
        else:
            _echo_lines(format_compare(data).split("\n"))
        sys.stdout.flush()
    except BrokenPipeError:  # `--gate | head -1`: the reader left; the decision's exit status still holds
        if not gate:
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's flush at exit finds no pipe
    if gate:
        raise typer.Exit(code=gate_exit_code(data["decision"]))


@data_app.command("fetch")
def data_fetch(
    name: Annotated[str, typer.Argument(help="The data set: climate-fever (CLIMATE-FEVER, Diggelmann et al. 2020).")],
    to: Annotated[Optional[Path], typer.Option("--to", help="Folder to put the file in (default: data/external under the current folder).")] = None,
    url: Annotated[Optional[str], typer.Option("--url", help="Fetch from this address instead (a mirror); the size and SHA-256 are checked all the same.")] = None,
) -> None:
    """Download a public data set from its publisher and check its SHA-256 (a failed fetch leaves nothing behind)."""
    from annotator.fetch import DEFAULT_FOLDER, dataset, fetch_dataset

    chosen = dataset(name)
    done = fetch_dataset(name, to if to is not None else DEFAULT_FOLDER, url=url)
    if done.url is None:
        typer.echo(f"{safe(done.path)} is already there ({done.size:,} bytes, SHA-256 {done.sha256} as expected); nothing downloaded.")
    else:
        typer.echo(f"Fetched {chosen.name} from {safe(done.url)}: {done.size:,} bytes, SHA-256 {done.sha256} as expected.")
        typer.echo(f"  written to {safe(done.path)}" + (" (it replaced a file of other content)" if done.replaced else ""))
    typer.echo(f"  {chosen.citation}.")


@app.command()
def status(dataset: DatasetOpt = None, as_json: JsonOpt = False, db: Db = None) -> None:
    """Counts: cases, claims, labels, claims by state, holds, releases."""
    from annotator.db import session_scope
    from annotator.services.status import project_status

    with session_scope(_engine(db)) as session:
        data = project_status(session, OPERATOR, _dataset_pk(session, dataset))
    if as_json:
        _echo_json(data)
        return
    from annotator.db import display_url, resolve_url

    typer.echo(f"database {safe(display_url(resolve_url(db)))}")
    typer.echo(f"cases {data['cases']}, claims {data['claims']}, labels {data['labels']}, adjudications {data['adjudications']}, releases {data['releases']}")
    typer.echo("claims by state: " + ", ".join(f"{k} {v}" for k, v in data["claims_by_state"].items()))
    typer.echo(f"holds: {data['holds']['active']} " + safe(json.dumps(data["holds"]["by_reason"])))


@app.command()
def backup(
    path: Annotated[Path, typer.Argument(help="The backup file to write, e.g. backups/annotator-2026-05-09.db.")],
    force: Annotated[bool, typer.Option("--force", help="Replace PATH if it exists.")] = False,
    db: Db = None,
) -> None:
    """Copy the SQLite database to PATH, consistently, while the app runs (PostgreSQL: use pg_dump)."""
    from annotator.backup import backup_database

    done = backup_database(path, db, force=force)
    typer.echo(f"Backup of {safe(done.source)} written to {safe(done.path)}")
    typer.echo(f"  {done.size_bytes:,} bytes; the copy holds {done.claims:,} claims and {done.labels:,} labels; integrity_check {done.integrity}")
    restarted = f", restarted {done.restarts} times as others wrote" if done.restarts else ""
    typer.echo(f"  took {done.seconds:.2f} s ({done.steps} step{'s' if done.steps != 1 else ''}{restarted})")


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


def main() -> None:
    """Entry point of the `annotator` console command: an AnnotatorError becomes its message
    on standard error and exit status 1; usage errors are Typer's (exit status 2)."""
    try:
        app()
    except AnnotatorError as error:
        typer.echo(f"Error: {safe(error, keep=chr(10))}", err=True)
        raise SystemExit(1) from None
