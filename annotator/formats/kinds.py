"""The registry of file kinds: for each kind of input file (cases, labels, adjudications, judge
labels, runs) the formats its reader reads, the reader, the dataset an import goes to when none is
named, and whether the app's Import page takes it. The command line's --format help, the Import
page's choices and the imports' default datasets are derived from it, so a new format or kind is
added here (and in its reader) only.

The registry names each reader by where it is and imports it when it is first used, so that the
command line's help, which is derived from it, starts without loading the readers."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from annotator.formats.records import Source

AUTO = "auto"
"""The format choice that detects a file's format (each reader's default)."""


@dataclass(frozen=True)
class FileKind:
    """One kind of input file.

    name: the kind ("cases", "labels", "adjudications", "judge_labels", "runs"), as the Import page and
        the imports' options (UploadOptions.kind) name it.
    formats: what `reader` reads besides "auto", e.g. ("jsonl", "csv", "climate-fever"): the
        reader module's own list (CASE_FORMATS, TABLE_FORMATS, RUN_FORMATS), written out here.
    reader_at: where the reader is, "module:function"; `reader` is the function, called as
        reader(path, fmt, skips=...) and returning a formats.Source.
    default_datasets: format -> the dataset an import of this kind goes to when none is named
        (a format without one: the import looks its claims up in every dataset).
    choose_format: whether its import takes a format (--format); False: always detected.
    other_formats: formats its import also reads, with another kind's reader (adjudications: a
        CLIMATE-FEVER file with --vote, read as cases); the command line offers them, the page not.
    uploadable: whether the app's Import page takes it.
    """

    name: str
    formats: tuple[str, ...]
    reader_at: str
    default_datasets: Mapping[str, str] = field(default_factory=dict)
    choose_format: bool = True
    other_formats: tuple[str, ...] = ()
    uploadable: bool = False

    @property
    def reader(self) -> Callable[..., Source]:
        """The reader function (its module imported now, if it was not yet)."""
        module, name = self.reader_at.split(":")
        return getattr(importlib.import_module(module), name)

    def format_choices(self) -> tuple[str, ...]:
        """The values of its import's --format: "auto", its formats and its other formats; ("auto",)
        when the format is always detected."""
        return (AUTO, *self.formats, *self.other_formats) if self.choose_format else (AUTO,)

    def format_help(self) -> str:
        """The --format help of its import: "auto | jsonl | csv | climate-fever"."""
        return " | ".join(self.format_choices())

    def page_formats(self) -> tuple[str, ...]:
        """The format choices of the Import page: "auto" and its own formats (not the other formats,
        whose options the page does not offer); ("auto",) when the format is always detected."""
        return (AUTO, *self.formats) if self.choose_format else (AUTO,)

    def dataset_names(self) -> tuple[str, ...]:
        """Its default datasets, each once, in order: ("default", "climate-fever")."""
        return tuple(dict.fromkeys(self.default_datasets.values()))


_TABLE_FORMATS = ("jsonl", "csv")
"""tables.TABLE_FORMATS: what the label-shaped readers read."""

KINDS: tuple[FileKind, ...] = (
    FileKind("cases", ("jsonl", "csv", "climate-fever", "ragas"), "annotator.formats.cases:read_cases",
             {"jsonl": "default", "csv": "default", "climate-fever": "climate-fever", "ragas": "default"},
             uploadable=True),
    FileKind("labels", _TABLE_FORMATS, "annotator.formats.labels:read_labels", choose_format=False, uploadable=True),
    FileKind("adjudications", _TABLE_FORMATS, "annotator.formats.adjudications:read_adjudications",
             {"climate-fever": "climate-fever"}, other_formats=("climate-fever",), uploadable=True),
    FileKind("judge_labels", _TABLE_FORMATS, "annotator.formats.judge_labels:read_judge_labels"),
    FileKind("runs", ("jsonl", "ragas"), "annotator.formats.runs:read_run"),
)
"""Every kind of input file, in the order the app shows them."""


def kind(name: str, kinds: tuple[FileKind, ...] = KINDS) -> FileKind:
    """The kind named `name`. Raises KeyError for an unknown name."""
    for each in kinds:
        if each.name == name:
            return each
    raise KeyError(name)


def upload_kinds(kinds: tuple[FileKind, ...] = KINDS) -> tuple[str, ...]:
    """The kinds the Import page takes, in order: ("cases", "labels", "adjudications")."""
    return tuple(each.name for each in kinds if each.uploadable)


def page_formats(kinds: tuple[FileKind, ...] = KINDS) -> dict[str, tuple[str, ...]]:
    """Kind -> the Import page's format choices, for the kinds it takes."""
    return {each.name: each.page_formats() for each in kinds if each.uploadable}
