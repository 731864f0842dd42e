"""How long the command line takes from the shell: `annotator --help`, `annotator status` on the
demo database and `release create` of CLIMATE-FEVER, against the floor `python -c pass` measured
in the same run (a benchmark that prints figures, not a test).

What it does. In --work (a new temporary folder unless given; kept and reused when given) it
makes the demo database (`annotator demo --no-serve`) and a CLIMATE-FEVER database of all its
7,675 claims with all their votes: `annotator import --format climate-fever --with-votes` (vote
slot j as labeler cf-vote-{j+1}), then every disputed claim decided by one adjudicator,
cf-adjudicator, for the label most of its votes give (the first of them in the queue's order on
a tie), through `annotator adjudications import`. Then it runs each command --runs times, taking
turns so that a change in the machine's load touches all of them alike, each as its own process
with its output thrown away, and prints for each the median wall time and CPU time (user +
system) and the median wall time divided by the floor's. Each `release create` runs on a fresh
copy of the CLIMATE-FEVER database (the copy is not timed) and writes a new folder.

Besides the commands it times two floors of what the commands need, in processes of their own:
importing what `status` needs (the ORM and the models: `annotator.services.status`) and what
`release create` needs (`annotator.services.releases`), and, in a process that has imported it
all, the call of `create_release` alone: the release's own work.

    python benchmarks/cli_start.py [--runs 7] [--climate-fever FILE] [--work DIR] [--compare-with DIR]

--climate-fever: the data file (default: where the tests look for it: data/external/, then
$ANNOTATOR_SHARED/data/, then shared/data/ beside the project; `annotator data fetch climate-fever`).
--compare-with DIR: a release folder of the same database made earlier (by another version, say):
says whether the release written here has the same bytes, every file and the manifest but for its
creation time. Run it on a quiet machine: the figures are wall-clock times.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RELEASE = "cf-all"
ADJUDICATOR = "cf-adjudicator"


def annotator_command() -> list[str]:
    """The `annotator` console command beside this Python, else `python -m annotator`."""
    script = Path(sys.executable).parent / "annotator"
    return [str(script)] if script.exists() else [sys.executable, "-m", "annotator"]


def climate_fever_file() -> Path:
    """Where the tests look for CLIMATE-FEVER (tests/conftest.py `data_places`), the first that exists."""
    places = [REPO / "data" / "external" / "climate-fever.jsonl"]
    if os.environ.get("ANNOTATOR_SHARED"):
        places.append(Path(os.environ["ANNOTATOR_SHARED"]) / "data" / "climate-fever.jsonl")
    places.append(REPO.parent / "shared" / "data" / "climate-fever.jsonl")
    return next((place for place in places if place.exists()), places[0])


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:  # noqa: ANN003
    return subprocess.run(command, check=True, capture_output=True, text=True, **kwargs)


def build(work: Path, climate_fever: Path, annotator: list[str]) -> tuple[Path, Path]:
    """The demo database and the CLIMATE-FEVER database (all claims final) in `work`, each made
    unless it is there already."""
    demo, cf = work / "demo.db", work / "climate-fever.db"
    if not demo.exists():
        run([*annotator, "demo", "--no-serve", "--db", str(demo)])
    if not cf.exists():
        partial = work / "climate-fever.partial.db"
        partial.unlink(missing_ok=True)
        run([*annotator, "import", str(climate_fever), "--format", "climate-fever", "--with-votes", "--db", str(partial)])
        queue = json.loads(run([*annotator, "queue", "adjudication", "--json", "--db", str(partial)]).stdout)
        decisions = work / "decisions.csv"
        with decisions.open("w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["claim_id", "adjudicator", "label"])
            for item in queue:
                writer.writerow([item["claim_id"], ADJUDICATOR, Counter(item["labels"]).most_common(1)[0][0]])
        run([*annotator, "adjudications", "import", str(decisions), "--dataset", "climate-fever", "--db", str(partial)])
        partial.rename(cf)
        print(f"built {cf}: {len(queue):,} disputed claims decided by {ADJUDICATOR}")
    return demo, cf


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process) of one run of `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


OWN_WORK = """
import shutil, sys, time
from pathlib import Path
from annotator.db import init_db, session_scope
from annotator.services.access import OPERATOR
from annotator.services.releases import create_release
db, out = Path(sys.argv[1]), Path(sys.argv[2])
engine = init_db(f"sqlite:///{db}", create=False)
start = time.perf_counter()
with session_scope(engine) as session:
    create_release(session, OPERATOR, sys.argv[3], out_dir=out, creator="bench")
print(time.perf_counter() - start)
"""
"""The child that times `create_release` alone, its imports and the database's opening done."""


def same_release(ours: Path, theirs: Path) -> list[str]:
    """The files of two release folders that differ (the manifest compared without created_at)."""
    names = sorted({path.name for path in ours.iterdir()} | {path.name for path in theirs.iterdir()})
    differ = []
    for name in names:
        a, b = ours / name, theirs / name
        if not (a.exists() and b.exists()):
            differ.append(name)
        elif name == "manifest.json":
            left, right = (json.loads(path.read_text(encoding="utf-8")) for path in (a, b))
            left.pop("created_at", None), right.pop("created_at", None)
            if left != right:
                differ.append(name)
        elif a.read_bytes() != b.read_bytes():
            differ.append(name)
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--climate-fever", type=Path, default=None)
    parser.add_argument("--work", type=Path, default=None, help="folder that keeps (and reuses) the databases")
    parser.add_argument("--compare-with", type=Path, default=None, help="a release folder of the same database")
    args = parser.parse_args()
    climate_fever = args.climate_fever or climate_fever_file()
    if not climate_fever.exists():
        sys.exit(f"{climate_fever} is not there: run `annotator data fetch climate-fever`, or give --climate-fever FILE")
    work = args.work or Path(tempfile.mkdtemp(prefix="annotator-cli-start-"))
    work.mkdir(parents=True, exist_ok=True)
    annotator = annotator_command()
    demo, cf = build(work, climate_fever, annotator)
    copy, releases = work / "release-run.db", work / "releases"

    python = [sys.executable]
    commands = {
        "python -c pass (the floor)": python + ["-c", "pass"],
        "annotator --help": [*annotator, "--help"],
        "annotator status (demo)": [*annotator, "status", "--db", str(demo)],
        "import of what status needs": python + ["-c", "import typer._adapters, annotator.cli, annotator.db, annotator.services.status"],
        "annotator release create (CLIMATE-FEVER)": [*annotator, "release", "create", RELEASE, "--db", str(copy),
                                                     "--out", str(releases), "--creator", "bench"],
        "import of what release create needs": python + ["-c", "import typer._adapters, annotator.cli, annotator.db, annotator.services.releases"],
    }
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    own: list[float] = []
    kept = None
    for turn in range(args.runs):
        for name, command in commands.items():
            if "release create" in name:
                shutil.copyfile(cf, copy)
                shutil.rmtree(releases, ignore_errors=True)
            wall, cpu = timed(command, work)
            walls[name].append(wall)
            cpus[name].append(cpu)
            if "release create" in name and kept is None:
                kept = work / "release-kept"
                shutil.rmtree(kept, ignore_errors=True)
                shutil.copytree(releases / RELEASE, kept)
        shutil.copyfile(cf, copy)
        shutil.rmtree(releases, ignore_errors=True)
        own.append(float(run(python + ["-c", OWN_WORK, str(copy), str(releases), RELEASE], cwd=work).stdout))

    floor = statistics.median(walls["python -c pass (the floor)"])
    print(f"{sys.platform}, {os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"median of {args.runs} runs; `annotator` is {' '.join(annotator)}")
    print(f"  {'command':<44} {'wall':>8} {'cpu':>8} {'x floor':>8}")
    for name in commands:
        wall = statistics.median(walls[name])
        print(f"  {name:<44} {wall:7.3f}s {statistics.median(cpus[name]):7.3f}s {wall / floor:7.1f}x")
    print(f"  {'create_release alone (its own work)':<44} {statistics.median(own):7.3f}s")
    if args.compare_with is not None and kept is not None:
        differ = same_release(kept, args.compare_with)
        print(f"release compared with {args.compare_with}: " + ("the same bytes (the manifest but for created_at)"
                                                               if not differ else f"differs in {', '.join(differ)}"))


if __name__ == "__main__":
    main()
