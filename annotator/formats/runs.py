"""Run files: what a RAG system did with each case, one JSON object a line (docs/design.md,
"File formats"): `case_id`, `retrieved` (the passage ids it retrieved, ranked best first, each once;
[] when it retrieved none), `behavior` (one of vocabulary.BEHAVIORS) and the optional `answer`
(text or null), `cited` (the passage ids the answer cites) and `claims` (the answer's claims,
each with `text`, `label` (vocabulary.LABELS, from a judge or a person) and the optional
`claim_id` and `severity`). JSONL only; a field the format does not know is warned about and
ignored, as for the label-shaped files. A RAGAS file is read as a run too (formats/ragas.py,
`read_ragas_run`: its contexts' order is the ranking).

Whether the case ids and passage ids name a dataset's cases and passages is the import's to
check (services/runs.py): a reader never touches the database. A case is given once: a second
line for it is refused naming the first, even when the two lines are the same.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from annotator.formats.jsonl import json_lines
from annotator.formats.ragas import is_ragas_record, read_ragas_run
from annotator.formats.reading import (
    OnePerId, Row, Skips, UnknownKeys, first_nonblank_line, is_parquet, json_type, list_value, nfc, not_empty,
    resolve_format, skipping,
)
from annotator.formats.records import Position, RunCaseRecord, RunClaimRecord, Source
from annotator.formats.tables import label_severity, label_value
from annotator.messages import msg
from annotator.text import MAX_ID_CHARS
from annotator.vocabulary import BEHAVIORS

RUN_FORMATS: tuple[str, ...] = ("jsonl", "ragas")
"""Formats of run files: the run's own JSON lines, or a RAGAS file (formats/ragas.py: JSON lines,
CSV or Parquet); "auto" detects which (`detect_run_format`)."""
RUN_KEYS: tuple[str, ...] = ("case_id", "retrieved", "behavior", "answer", "cited", "claims")
RUN_REQUIRED: tuple[str, ...] = ("case_id", "retrieved", "behavior")
RUN_CLAIM_KEYS: tuple[str, ...] = ("text", "label", "claim_id", "severity")


def detect_run_format(path: Path) -> str:
    """"ragas" for a Parquet or CSV file and for JSON lines whose first record is a RAGAS record
    (`ragas.is_ragas_record`: no `retrieved`), else "jsonl"."""
    if is_parquet(path) or path.suffix.lower() == ".csv":
        return "ragas"
    first = first_nonblank_line(path)
    if not first.lstrip().startswith(b"{"):
        return "jsonl"  # the run reader reports the line
    try:
        record = json.loads(first.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return "jsonl"
    return "ragas" if is_ragas_record(record) else "jsonl"


def read_run(path: str | Path, fmt: str = "auto", *, skips: Skips | None = None) -> Source[RunCaseRecord]:
    """Open a run file and stream its records, in file order.

    path: a JSONL file, one object a line (see the module's docstring), or a RAGAS file.
    fmt: "auto" (`detect_run_format`), "jsonl" or "ragas" (`ragas.read_ragas_run`: the contexts'
        order is the ranking, the response the answer).
    skips: for a partial import (`--partial`): a bad line is noted there and left out, not raised.
    Returns a Source of RunCaseRecords: ids and texts NFC-normalized, `answer` None when the line
        gives none (no key, or null), `cited` and `claims` () when it gives none.
    Raises ImportFileError at once for a file `check_input_file` refuses (missing, folder, empty,
    blank, UTF-16) or a format other than jsonl, and while the records are read for a file with
    no record at all (msg.import.file.no_run_cases; with `skips`, only when no line was skipped).
    Raises ImportRowError while the records are read, naming the file, line and field: a line
    that is not one JSON object (jsonl.json_lines); a missing, blank, space-padded or too long
    case_id (text.MAX_ID_CHARS); the same case on an earlier line; `retrieved` missing, null or
    not a list, an element of it that is not an id (field 'retrieved[3]': not a string, empty,
    spaces around it, too long), a passage id ranked twice (naming both places); `behavior`
    missing or not exactly one of vocabulary.BEHAVIORS (the fix lists them); `answer` not a
    string or over text.MAX_TEXT_CHARS; `cited` not a list of ids; `claims` not a list of
    objects; a claim without text, with a label not exactly one of vocabulary.LABELS, a severity
    not one of vocabulary.SEVERITIES (or one on a `support` label, as for labels), or a
    claim_id an earlier claim of the case has.
    """
    fmt = resolve_format(path, fmt, RUN_FORMATS, detect_run_format, ("ragas",))
    path = Path(path)
    if fmt == "ragas":
        return read_ragas_run(path, skips)
    position = Position(path.stat().st_size)
    encoding, rows = json_lines(path, skips, position)
    warnings: list[str] = []
    unknown = UnknownKeys(warnings)
    records = skipping(rows, lambda row: _run_case(row, unknown), skips)
    one_per_case = OnePerId(str(path), "case_id", "msg.import.problem.repeat.run_case", "msg.import.fix.repeat_run_case")
    records = skipping(records, one_per_case.check, skips)
    return Source(str(path), fmt, encoding, not_empty(str(path), records, skips, "msg.import.file.no_run_cases"),
                  warnings, position)


def _run_case(row: Row, unknown: UnknownKeys) -> RunCaseRecord:
    unknown.check(row, RUN_KEYS)
    case_id = row.ident("case_id")
    retrieved = _retrieved(row)
    behavior = _behavior(row)
    answer = _answer(row)
    cited = tuple(_ids(row, "cited", row.values["cited"])) if row.values.get("cited") is not None else ()
    return RunCaseRecord(line=row.line, case_id=case_id, retrieved=retrieved, behavior=behavior, answer=answer,
                         cited=cited, claims=_claims(row, unknown))


def _retrieved(row: Row) -> tuple[str, ...]:
    """The ranked passage ids, each once ([] is a run that retrieved nothing)."""
    if row.values.get("retrieved") is None:
        problem = (msg("msg.import.problem.null") if "retrieved" in row.values
                   else msg("msg.import.problem.no_key", noun=msg("msg.import.noun.case"), name="retrieved"))
        raise row.error("retrieved", problem, msg("msg.import.fix.give_retrieved"))
    ids = _ids(row, "retrieved", row.values["retrieved"])
    if len(set(ids)) != len(ids):
        first: dict[str, int] = {}
        for index, passage_id in enumerate(ids):
            earlier = first.setdefault(passage_id, index)
            if earlier != index:
                raise row.error(f"retrieved[{index}]", msg("msg.import.problem.retrieved_twice", id=passage_id,
                                                           first=f"retrieved[{earlier}]", second=f"retrieved[{index}]"),
                                msg("msg.import.fix.rank_once"))
    return tuple(ids)


def _ids(row: Row, key: str, value: Any) -> list[str]:
    """A JSON list of passage ids, each checked as an id (`Row.check_ident`, its field named
    "key[i]"). Raises ImportRowError for another type, or for an element that is no id."""
    if not isinstance(value, list):
        raise row.error(key, msg("msg.import.problem.expected_id_list", type=json_type(value)),
                        msg("msg.import.fix.id_list", name=key))
    if _plain_ids(value):
        return value
    return [row.check_ident(f"{key}[{index}]", item) for index, item in enumerate(value)]


_ID_EDGE_SPACE = re.compile(r"(?:^|\x00)\s|\s(?:\x00|\Z)")
"""An id of ids joined by NUL that starts or ends with white space (str.strip's white space)."""


def _plain_ids(value: list[Any]) -> bool:
    """Whether every element is an id `Row.check_ident` takes as it is (a non-empty string in NFC,
    at most MAX_ID_CHARS long, without spaces around it), checked on the ids joined by NUL, which
    no id holds (json_lines refuses it): a run of 100 retrieved ids a line, 10,000 lines, is checked
    in C, not id by id. False sends the list through `check_ident`, which says what is wrong."""
    if not value:
        return True
    try:
        joined = "\x00".join(value)
    except TypeError:  # an element that is not a string
        return False
    return (max(map(len, value)) <= MAX_ID_CHARS and min(map(len, value)) > 0 and not _ID_EDGE_SPACE.search(joined)
            and unicodedata.is_normalized("NFC", joined))


def _behavior(row: Row) -> str:
    """What the system did, exactly one of BEHAVIORS (after NFC): `Answer` and ` answer ` are refused."""
    value = row.values.get("behavior")
    choices = ", ".join(BEHAVIORS)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise row.error("behavior", msg("msg.import.problem.missing_value"), msg("msg.import.fix.give_behavior", choices=choices))
    if not isinstance(value, str) or nfc(value) not in BEHAVIORS:
        raise row.error("behavior", msg("msg.import.problem.unknown_value", value=repr(value)),
                        msg("msg.import.fix.use_one_of", choices=choices))
    return nfc(value)


def _answer(row: Row) -> str | None:
    """The answer's text ("" kept as ""), None when the line gives none (no key, or null)."""
    value = row.values.get("answer")
    if value is None:
        return None
    if not isinstance(value, str):
        raise row.error("answer", msg("msg.import.problem.expected_string", type=json_type(value)),
                        msg("msg.import.fix.answer_text"))
    row.check_length("answer", value)
    return nfc(value)


def _claims(row: Row, unknown: UnknownKeys) -> tuple[RunClaimRecord, ...]:
    """The answer's claims, in file order; a claim_id given to two claims of the case is refused."""
    claims = []
    places: dict[str, int] = {}
    for index, value in enumerate(list_value(row, "claims")):
        claim = row.child("claims", index, value)
        unknown.check(claim, RUN_CLAIM_KEYS)
        text = claim.text("text", required=True)
        label = label_value(claim)
        claim_id = None if claim.values.get("claim_id") is None else claim.ident("claim_id")
        if claim_id is not None:
            earlier = places.setdefault(claim_id, index)
            if earlier != index:
                raise claim.error("claim_id", msg("msg.import.problem.run_claim_twice", id=claim_id, other=f"claims[{earlier}]"),
                                  msg("msg.import.fix.run_claim_once"))
        claims.append(RunClaimRecord(text=text, label=label, claim_id=claim_id, severity=label_severity(claim, label)))
    return tuple(claims)
