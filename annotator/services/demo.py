"""The demo: the 20-case demo data set, four demo users, the first 20 cases assigned to the
two demo labelers, the demo labeling guideline published as v1; a pilot round of 12 more cases,
double-labeled by two earlier labelers, adjudicated and released as gold-v0; and one judge run
(a lexical baseline's labels of all 32 cases) for the Judges page, which it fills from the start:
the pilot is its gold, the 20 cases still to label are the claims only the judge labeled."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlmodel import Session, select

from annotator.errors import ReleaseExistsError
from annotator.models import Claim, Dataset, Label, User
from annotator.services.access import OPERATOR
from annotator.services.guidelines import current_guideline, publish_guideline, read_guideline_file
from annotator.services.imports import import_adjudications, import_cases, import_labels
from annotator.services.judges import import_judge_labels, list_judge_runs
from annotator.services.labeling import assign_cases, first_cases, first_unassigned_cases
from annotator.services.releases import DEFAULT_OUT_DIR, create_release
from annotator.services.runs import import_run, list_runs
from annotator.services.users import add_user, get_user, password_matches

DEMO_FILE = Path(__file__).resolve().parents[2] / "data" / "demo.jsonl"
DEMO_DATASET = "demo"
DEMO_GUIDELINE = DEMO_FILE.parent / "guideline-v1.md"
DEMO_GUIDELINE_VERSION = "v1"
DEMO_PUBLISHER = "admin"
"""The demo user who publishes the demo guideline."""
DEMO_PILOT = DEMO_FILE.parent / "demo-pilot.jsonl"
DEMO_PILOT_LABELS = DEMO_FILE.parent / "demo-pilot-labels.csv"
DEMO_PILOT_ADJUDICATIONS = DEMO_FILE.parent / "demo-pilot-adjudications.csv"
DEMO_RELEASE = "gold-v0"
DEMO_RELEASE_CREATOR = "admin"
"""The pilot round (data/README.md): 12 cases imported into the demo dataset after the 20 to
label, labeled by sato and kim (created by the label import, with no password), their disputes
decided by mika, and its final claims released as DEMO_RELEASE."""
DEMO_JUDGE = DEMO_FILE.parent / "demo-judge.jsonl"
DEMO_JUDGE_RUN = "demo-lexical"
DEMO_JUDGE_MODEL = "lexical baseline"
DEMO_JUDGE_PROMPT = "benchmarks/judge_baselines.py"
"""The demo's judge run: the labels benchmarks/judge_baselines.py's lexical entailment baseline gave
the demo claims (data/README.md), imported under this name, model and prompt version."""


DEMO_RUNS: tuple[tuple[str, Path, dict[str, str]], ...] = (
    ("rag-v3", DEMO_FILE.parent / "demo-run-baseline.jsonl",
     {"system": "minato-rag", "model": "minato-rag-gen-2026.09", "prompt": "qa-ja-v3", "index": "bm25-2026-10",
      "corpus_release": "2026-10"}),
    ("rag-v4-rerank", DEMO_FILE.parent / "demo-run-candidate.jsonl",
     {"system": "minato-rag", "model": "minato-rag-gen-2026.10", "prompt": "qa-ja-v4", "index": "bm25+rerank-2026-11",
      "corpus_release": "2026-10"}),
)
"""The demo's RAG runs over the pilot's cases (data/README.md): a baseline and a candidate that
fixes most of its failures, regresses one case and retrieves a forbidden passage there, so that
`run compare rag-v3 rag-v4-rerank --release gold-v0` is blocked and says why. (name, file, meta)."""


@dataclass(frozen=True)
class DemoUser:
    """A demo login: name, roles and password."""
    name: str
    roles: tuple[str, ...]
    password: str


DEMO_USERS: tuple[DemoUser, ...] = (
    DemoUser("aoi", ("labeler",), "aoi-demo-pass"),
    DemoUser("ren", ("labeler",), "ren-demo-pass"),
    DemoUser("mika", ("adjudicator",), "mika-demo-pass"),
    DemoUser("admin", ("admin", "adjudicator"), "admin-demo-pass"),
)
"""Demo logins, printed by `annotator demo`. For a local demo only: never use them for real work."""


@dataclass(frozen=True)
class DemoSeeded:
    """What seed_demo made, counted as it was made: the cases assigned to the demo labelers, the
    pilot's cases, the claims the judge run labels (0 without one), the pilot's release (None
    when it was not made) and, then, why not."""
    to_label: int
    pilot: int
    judged: int
    release: str | None
    release_skipped: str | None = None
    runs: tuple[str, ...] = ()


def seed_demo(session: Session, demo_file: Path = DEMO_FILE, guideline_file: Path = DEMO_GUIDELINE,
              judge_file: Path | None = DEMO_JUDGE, pilot_file: Path | None = DEMO_PILOT,
              release_dir: Path = DEFAULT_OUT_DIR, runs: tuple[tuple[str, Path, dict[str, str]], ...] = DEMO_RUNS) -> DemoSeeded | None:
    """Seed the demo; None (and nothing done) when the demo dataset exists already.

    Imports the demo data set (`demo_file`) and, after it, the pilot round (`pilot_file` with its
    labels and adjudications, DEMO_PILOT_LABELS and DEMO_PILOT_ADJUDICATIONS; None: no pilot);
    creates the demo users; assigns the first 20 cases to the two demo labelers; when no
    guideline is published yet, publishes `guideline_file` as v1 (by the demo admin); releases the
    pilot's final claims as DEMO_RELEASE into `release_dir/DEMO_RELEASE` (committed with the
    caller's session); and imports `judge_file` (None: none) as the judge run DEMO_JUDGE_RUN of
    the demo dataset, unless a run of that name exists; and, with the pilot, imports `runs`
    ((name, file, meta); default DEMO_RUNS) as RAG runs of the demo dataset, each unless a run of
    that name exists.
    Returns DemoSeeded: when `release_dir` already holds a DEMO_RELEASE folder (from an earlier
    demo database) the release is not made and `release_skipped` says why and what to do.
    Raises ImportFileError when a demo file is missing; ImportRowError when a label, decision or
    judge label names a claim the demo files do not hold.
    """
    if session.exec(select(Dataset).where(Dataset.name == DEMO_DATASET)).first() is not None:
        return None
    import_cases(session, OPERATOR, demo_file, fmt="jsonl", dataset=DEMO_DATASET)
    pilot = 0 if pilot_file is None else import_cases(session, OPERATOR, pilot_file, fmt="jsonl",
                                                      dataset=DEMO_DATASET).counts["cases"]["new"]
    for demo_user in DEMO_USERS:
        if session.exec(select(User).where(User.name == demo_user.name)).first() is None:
            add_user(session, OPERATOR, demo_user.name, list(demo_user.roles), demo_user.password)
    dataset = session.exec(select(Dataset).where(Dataset.name == DEMO_DATASET)).one()
    labelers = [u.name for u in DEMO_USERS if "labeler" in u.roles]
    to_label = first_cases(session, 20, dataset.id)
    assign_cases(session, OPERATOR, to_label, labelers)
    if current_guideline(session) is None:  # a team's own guideline is never replaced by the demo's
        publish_guideline(session, get_user(session, DEMO_PUBLISHER), DEMO_GUIDELINE_VERSION,
                          read_guideline_file(guideline_file))
    release, skipped = (None, None) if pilot_file is None else _release_pilot(session, dataset.id, pilot, release_dir)
    judged = 0
    if judge_file is not None and not any(run["name"] == DEMO_JUDGE_RUN for run in list_judge_runs(session, OPERATOR)):
        judged = import_judge_labels(session, OPERATOR, judge_file, run=DEMO_JUDGE_RUN, dataset=DEMO_DATASET,
                                     model=DEMO_JUDGE_MODEL, prompt_version=DEMO_JUDGE_PROMPT).run["n_labels"]
    stored = () if pilot_file is None else _import_runs(session, runs)
    return DemoSeeded(len(to_label), pilot, judged, release, skipped, stored)


def _import_runs(session: Session, runs: tuple[tuple[str, Path, dict[str, str]], ...]) -> tuple[str, ...]:
    """The demo's RAG runs imported (each unless a run of its name exists); their names."""
    taken = {run["name"] for run in list_runs(session, OPERATOR)}
    for name, path, meta in runs:
        if name not in taken:
            import_run(session, OPERATOR, path, run=name, dataset=DEMO_DATASET, meta=meta)
    return tuple(name for name, _, _ in runs)


def _release_pilot(session: Session, dataset_pk: int, n_cases: int, release_dir: Path) -> tuple[str | None, str | None]:
    """The pilot's labels and decisions imported, its `n_cases` cases (the last imported) assigned
    to the labelers who labeled them (so that "assign the next cases" does not hand them out
    again), its final claims released as DEMO_RELEASE. Returns (the release, None), or (None, why
    it was not made)."""
    import_labels(session, OPERATOR, DEMO_PILOT_LABELS, dataset=DEMO_DATASET)
    cases = first_unassigned_cases(session, n_cases, dataset_pk)
    labelers = session.exec(select(User.name).join(Label, Label.labeler_pk == User.id).join(Claim, Claim.id == Label.claim_pk)
                            .where(Claim.case_pk.in_(cases)).distinct().order_by(User.name)).all()
    assign_cases(session, OPERATOR, cases, list(labelers))
    import_adjudications(session, OPERATOR, DEMO_PILOT_ADJUDICATIONS, dataset=DEMO_DATASET)
    folder = Path(release_dir) / DEMO_RELEASE
    if folder.exists():
        return None, (f"{folder} exists already (from an earlier demo database?). Remove it, or run the demo in another "
                      "folder, to have the release the Judges page is filled from.")
    try:
        create_release(session, OPERATOR, DEMO_RELEASE, dataset=DEMO_DATASET, only_final=True, out_dir=release_dir,
                       creator=DEMO_RELEASE_CREATOR)
    except ReleaseExistsError as error:
        return None, str(error)
    return DEMO_RELEASE, None


def demo_logins_in_use(session: Session) -> list[str]:
    """The names of the active demo users (DEMO_USERS) whose password is still the demo one
    printed by `annotator demo` and in the README: anyone who can reach the app can log in as them."""
    names = [demo_user.name for demo_user in DEMO_USERS]
    users = {user.name: user for user in session.exec(select(User).where(User.name.in_(names)))}
    return [demo_user.name for demo_user in DEMO_USERS
            if demo_user.name in users and users[demo_user.name].active
            and password_matches(users[demo_user.name].password_hash, demo_user.password)]
