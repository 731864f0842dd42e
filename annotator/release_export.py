"""A release's gold in the record shape of other evaluation tools, so that a team can run its usual
metrics on human-checked data: `annotator release export NAME --format ragas` (docs/design.md,
"File formats").

RAGAS: JSON lines, one released case a line, in release order, read from the release's
cases.jsonl (questions, answers, passages) and gold.jsonl (gold labels). The keys, in RAGAS_KEYS
order: `case_id`; RAGAS's single-turn sample fields `user_input` (the question), `response` (the
answer), `retrieved_contexts` (the texts of the case's passages, in cases.jsonl's order: for a case
imported from RAGAS, its retrieved contexts in rank order), `retrieved_context_ids` (their passage
ids), `reference` (the case's expected_answer, null when it has none) and `reference_contexts`
(null when none); `slice`, `split`, `metadata` (the case's metadata without expected_answer and
reference_contexts, given above); `claims` (the released claims' texts, in order: what
`import --format ragas` takes as the claims given in the file) and `gold_claims` (per released
claim, in the same order: GOLD_CLAIM_KEYS). UTF-8 without escapes, `\\n` line ends; the same
release always gives the same bytes.

Source: RAGAS, "Evaluation Sample" (SingleTurnSample: user_input, retrieved_contexts,
reference_contexts, response, reference), https://docs.ragas.io/en/stable/concepts/components/eval_sample/
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotator.durable import sync_folder
from annotator.errors import ExportError, ReleaseVerifyError
from annotator.filemodes import make_private_folders
from annotator.release import read_gold, read_released_cases, release_layout
from annotator.vocabulary import RAGAS_EXPORT_KEYS

RAGAS_KEYS: tuple[str, ...] = RAGAS_EXPORT_KEYS
"""The keys of one exported RAGAS record, in the order they are written (vocabulary.RAGAS_EXPORT_KEYS:
the RAGAS reader drops those it does not read)."""

GOLD_CLAIM_KEYS: tuple[str, ...] = ("dataset", "claim_id", "text", "gold_label", "resolution", "severity", "passage_ids")
"""The keys of one entry of a record's `gold_claims`: the claim's dataset and id, its text, its
gold label, how it was resolved (agreed, adjudicated), its severity (null for none) and the
passages it was labeled against."""

PROMOTED_METADATA: tuple[str, ...] = ("expected_answer", "reference_contexts")
"""Case metadata written as RAGAS fields of their own (`reference`, `reference_contexts`), and so
left out of the record's `metadata`."""

_JSON_LINE = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


@dataclass(frozen=True)
class Exported:
    """What an export wrote: the number of records (cases) and of claims in them."""

    cases: int
    claims: int


def ragas_record(case: Mapping[str, Any], gold: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One RAGAS record (RAGAS_KEYS order) of a released case.

    case: a line of the release's cases.jsonl (case_id, question, answer, slice, split, metadata,
        passages with passage_id and text, claims) with its `dataset` (`read_released_cases`).
    gold: the gold records (as in gold.jsonl) of the case's released claims, in the line's order.
    The case's expected_answer becomes `reference` and its reference_contexts `reference_contexts`
    when they are a text and a list of texts (else they stay in `metadata` and those are null).
    """
    metadata = dict(case["metadata"] or {})
    reference = metadata.pop("expected_answer") if isinstance(metadata.get("expected_answer"), str) else None
    contexts = metadata.get("reference_contexts")
    if isinstance(contexts, list) and all(isinstance(text, str) for text in contexts):
        metadata.pop("reference_contexts")
    else:
        contexts = None
    passages = case["passages"]
    return {
        "case_id": case["case_id"],
        "user_input": case["question"],
        "response": case["answer"],
        "retrieved_contexts": [passage["text"] for passage in passages],
        "retrieved_context_ids": [passage["passage_id"] for passage in passages],
        "reference": reference,
        "reference_contexts": contexts,
        "slice": case["slice"],
        "split": case["split"],
        "metadata": metadata,
        "claims": [record["claim"] for record in gold],
        "gold_claims": [_gold_claim(record) for record in gold],
    }


def _gold_claim(record: Mapping[str, Any]) -> dict[str, Any]:
    return {"dataset": record["dataset"], "claim_id": record["claim_id"], "text": record["claim"],
            "gold_label": record["gold_label"], "resolution": record["resolution"], "severity": record["severity"],
            "passage_ids": list(record["passage_ids"] or [])}


def ragas_records(folder: str | os.PathLike[str], release: str | None = None) -> Iterator[dict[str, Any]]:
    """The RAGAS records (`ragas_record`) of a verified release folder, one per line of its
    cases.jsonl, in release order.

    release: the release as the user named it, for messages (default: the folder).
    Raises ExportError (msg.export.no_cases) for a release without cases.jsonl (schema 1);
    ReleaseVerifyError naming cases.jsonl and the line when its claims are not those of
    gold.jsonl, in order, or a line or gold.jsonl is unreadable.
    """
    layout = release_layout(folder)
    if not layout.cases.is_file():
        raise ExportError.of("msg.export.no_cases", release=release or str(layout.folder))
    gold = read_gold(folder)
    lines = read_released_cases(folder, [record["dataset"] for record in gold], [record["case_id"] for record in gold])
    claims = iter(gold)
    for number, case in enumerate(lines, start=1):
        records = [next(claims, None) for _ in case["claims"]]
        if any(record is None or (record["case_id"], record["claim_id"]) != (case["case_id"], claim["claim_id"])
               for record, claim in zip(records, case["claims"], strict=True)):
            raise ReleaseVerifyError.of("msg.verify.cases_mismatch", name=layout.cases.name, line=number)
        yield ragas_record(case, records)
    if next(claims, None) is not None:
        raise ReleaseVerifyError.of("msg.verify.fewer_claims", name=layout.cases.name)


def json_line(record: Mapping[str, Any]) -> str:
    """A record as one line of JSON (no line end): raw UTF-8 text, keys in the record's order.
    Raises ValueError on NaN or infinity (not JSON)."""
    return _JSON_LINE.encode(record)


def write_export(records: Iterable[Mapping[str, Any]], output: str | os.PathLike[str],
                 release_folder: str | os.PathLike[str]) -> Exported:
    """Write the records to `output` as JSON lines (`json_line`, `\\n` after each), whole or not
    at all: written under a temporary name beside it (mode 0600), synced, then renamed over it
    (an existing file is replaced). Missing folders above it are created (0700).

    release_folder: the folder of the release exported; `output` may not be inside it.
    Returns the numbers of records and claims written.
    Raises ExportError when `output` is a folder, inside `release_folder`, or cannot be written
    (naming it and the operating system's reason; nothing is left behind); what reading the
    records raises (see `ragas_records`), also leaving nothing behind.
    """
    output = Path(output)
    if output.is_dir():
        raise ExportError.of("msg.export.is_folder", output=str(output))
    folder = Path(release_folder).resolve()
    if folder == output.resolve() or folder in output.resolve().parents:
        raise ExportError.of("msg.export.into_release", output=str(output), folder=str(release_folder))
    temp: Path | None = None
    try:
        make_private_folders(output.parent)
        handle, name = tempfile.mkstemp(prefix=f".{output.name}.tmp-", dir=output.parent)
        temp = Path(name)
        cases = claims = 0
        with open(handle, "w", encoding="utf-8", newline="\n") as out:
            for record in records:
                out.write(json_line(record) + "\n")
                cases, claims = cases + 1, claims + len(record["claims"])
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, output)
        temp = None
        sync_folder(output.parent)
    except OSError as error:
        raise ExportError.of("msg.export.cannot_write", output=str(output), reason=error.strerror or str(error)) from error
    finally:
        if temp is not None:
            temp.unlink(missing_ok=True)
    return Exported(cases, claims)
