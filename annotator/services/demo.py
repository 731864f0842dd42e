"""The demo: the 20-case demo data set, four demo users, the first 20 cases assigned to the
two demo labelers, the demo labeling guideline published as v1, and one judge run (a lexical
baseline's labels of the demo claims) for the Judges page."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlmodel import Session, select

from annotator.models import Dataset, User
from annotator.services.access import OPERATOR
from annotator.services.guidelines import current_guideline, publish_guideline, read_guideline_file
from annotator.services.imports import import_cases
from annotator.services.judges import import_judge_labels, list_judge_runs
from annotator.services.labeling import assign_cases, first_cases
from annotator.services.users import add_user, get_user, password_matches

DEMO_FILE = Path(__file__).resolve().parents[2] / "data" / "demo.jsonl"
DEMO_DATASET = "demo"
DEMO_GUIDELINE = DEMO_FILE.parent / "guideline-v1.md"
DEMO_GUIDELINE_VERSION = "v1"
DEMO_PUBLISHER = "admin"
"""The demo user who publishes the demo guideline."""
DEMO_JUDGE = DEMO_FILE.parent / "demo-judge.jsonl"
DEMO_JUDGE_RUN = "demo-lexical"
DEMO_JUDGE_MODEL = "lexical baseline"
DEMO_JUDGE_PROMPT = "benchmarks/judge_baselines.py"
"""The demo's judge run: the labels benchmarks/judge_baselines.py's lexical entailment baseline gave
the demo claims (data/README.md), imported under this name, model and prompt version."""


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


def seed_demo(session: Session, demo_file: Path = DEMO_FILE, guideline_file: Path = DEMO_GUIDELINE,
              judge_file: Path | None = DEMO_JUDGE) -> bool:
    """Import the demo data set, create the demo users, assign the first 20 cases to the two
    demo labelers, when no guideline is published yet publish `guideline_file` as v1 (by the demo
    admin), and import `judge_file` (None: none) as the judge run DEMO_JUDGE_RUN of the demo
    dataset, unless a run of that name exists. Does nothing when the demo dataset exists already;
    returns whether it seeded. Raises ImportFileError when the demo, guideline or judge file is
    missing; ImportRowError when the judge file names a claim the demo file does not hold."""
    if session.exec(select(Dataset).where(Dataset.name == DEMO_DATASET)).first() is not None:
        return False
    import_cases(session, OPERATOR, demo_file, fmt="jsonl", dataset=DEMO_DATASET)
    for demo_user in DEMO_USERS:
        if session.exec(select(User).where(User.name == demo_user.name)).first() is None:
            add_user(session, OPERATOR, demo_user.name, list(demo_user.roles), demo_user.password)
    dataset = session.exec(select(Dataset).where(Dataset.name == DEMO_DATASET)).one()
    labelers = [u.name for u in DEMO_USERS if "labeler" in u.roles]
    assign_cases(session, OPERATOR, first_cases(session, 20, dataset.id), labelers)
    if current_guideline(session) is None:  # a team's own guideline is never replaced by the demo's
        publish_guideline(session, get_user(session, DEMO_PUBLISHER), DEMO_GUIDELINE_VERSION,
                          read_guideline_file(guideline_file))
    if judge_file is not None and not any(run["name"] == DEMO_JUDGE_RUN for run in list_judge_runs(session, OPERATOR)):
        import_judge_labels(session, OPERATOR, judge_file, run=DEMO_JUDGE_RUN, dataset=DEMO_DATASET,
                            model=DEMO_JUDGE_MODEL, prompt_version=DEMO_JUDGE_PROMPT)
    return True


def demo_logins_in_use(session: Session) -> list[str]:
    """The names of the active demo users (DEMO_USERS) whose password is still the demo one
    printed by `annotator demo` and in the README: anyone who can reach the app can log in as them."""
    names = [demo_user.name for demo_user in DEMO_USERS]
    users = {user.name: user for user in session.exec(select(User).where(User.name.in_(names)))}
    return [demo_user.name for demo_user in DEMO_USERS
            if demo_user.name in users and users[demo_user.name].active
            and password_matches(users[demo_user.name].password_hash, demo_user.password)]
