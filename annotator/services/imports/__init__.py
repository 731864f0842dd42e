"""Imports into the database: cases (native JSONL, flat CSV, CLIMATE-FEVER, optionally with its
votes as labels), labels and adjudications; and an uploaded file checked, then imported.

Every function works in the caller's session, whose `session_scope` makes the import ONE
transaction: a refusal (`ImportRowError` naming file, line and field) rolls back everything,
however late in the file. Case imports stream: CHUNK_CASES cases at a time are read, checked,
compared with what the dataset holds of their ids (one query per table and BATCH ids), and
written in bulk (one executemany per table; generated keys fetched back per table, never one
row at a time). Label and adjudication imports (CSV or JSONL) stream the same way (`stream`),
CHUNK_ROWS rows at a time. With `partial`, a bad line is skipped and listed instead
(`formats.skipping`, the one place that turns a refusal into a skip).

    shared         the report, counts, streaming, bulk inserts, people, the concurrency refusal
    stored         what the database holds of the claims an import names
    rows           what the label and adjudication imports share (claims of a chunk, repeats)
    named          what the run imports share (judge runs, RAG runs): ids resolved to one dataset
    cases, labels, adjudications     one import per kind of file
    uploads        the app's Import page: check an uploaded file, then import it

CLIMATE-FEVER: Diggelmann et al. (2020), arXiv:2012.00614.
"""

from annotator.services.imports.adjudications import ADJUDICABLE, ADJUDICATION_FIELDS, import_adjudications
from annotator.services.imports.cases import CHUNK_CASES, import_cases
from annotator.services.imports.labels import LabelItem, import_labels, write_labels
from annotator.services.imports.named import NamedIds, nothing_stored, refuse_taken_name
from annotator.services.imports.rows import CHUNK_ROWS, ChunkClaims, RowImport
from annotator.services.imports.shared import (
    BATCH, DEFAULT_DATASETS, KINDS, SHOWN_CHARACTERS, ImportReport, People, PeopleSoFar, SkippedLine, Tally, batches,
    bulk_insert, check_dataset_name, chunks, differences, refused_when_concurrent, skipped_lines_of, stream,
)
from annotator.services.imports.stored import LABEL_FIELDS, StoredLabel
from annotator.services.imports.uploads import (
    PREVIEW_ROWS, UPLOAD_KINDS, UPLOAD_SUFFIXES, ImportCheck, UploadOptions, check_upload, import_upload,
)

__all__ = [
    "ADJUDICABLE", "ADJUDICATION_FIELDS", "BATCH", "CHUNK_CASES", "CHUNK_ROWS", "DEFAULT_DATASETS", "KINDS",
    "LABEL_FIELDS", "PREVIEW_ROWS", "SHOWN_CHARACTERS", "UPLOAD_KINDS", "UPLOAD_SUFFIXES",
    "ChunkClaims", "ImportCheck", "ImportReport", "LabelItem", "NamedIds", "People", "PeopleSoFar", "RowImport", "SkippedLine",
    "StoredLabel", "Tally", "UploadOptions",
    "batches", "bulk_insert", "check_dataset_name", "check_upload", "chunks", "differences", "import_adjudications",
    "import_cases", "import_labels", "import_upload", "nothing_stored", "refuse_taken_name", "refused_when_concurrent", "skipped_lines_of", "stream",
    "write_labels",
]
