"""The registry of file kinds (formats/kinds.py) is the one list of formats: the command line's
--format help, the Import page's choices and the imports' default datasets are derived from it."""

from __future__ import annotations

import dataclasses

import pytest
import typer.main

from annotator import cli
from annotator.formats import (
    CASE_FORMATS, RUN_FORMATS, TABLE_FORMATS, read_adjudications, read_cases, read_judge_labels, read_labels, read_run,
)
from annotator.formats.kinds import KINDS, FileKind, kind, page_formats, upload_kinds
from annotator.services import imports
from tests.test_ui_imports import engine, import_page  # noqa: F401 - engine: the Import page's database


def option_help(command: str, option: str) -> str:
    """The help text of `option` of the command line's `command` ("import", "adjudications import")."""
    group = typer.main.get_command(cli.app)
    for word in command.split():
        group = group.commands[word]
    [param] = [param for param in group.params if option in param.opts]
    return param.help


def test_every_kind_has_its_reader_and_its_readers_formats():
    assert [(each.name, each.reader, each.formats) for each in KINDS] == [
        ("cases", read_cases, CASE_FORMATS), ("labels", read_labels, TABLE_FORMATS),
        ("adjudications", read_adjudications, TABLE_FORMATS), ("judge_labels", read_judge_labels, TABLE_FORMATS),
        ("runs", read_run, RUN_FORMATS)]
    assert CASE_FORMATS == ("jsonl", "csv", "climate-fever", "ragas")


@pytest.mark.parametrize("command, name", [("import", "cases"), ("adjudications import", "adjudications")])
def test_the_format_help_of_each_import_is_the_registrys(command, name):
    assert option_help(command, "--format") == kind(name).format_help()


def test_the_format_help_reads_as_before():
    assert option_help("import", "--format") == "auto | jsonl | csv | climate-fever | ragas"
    assert option_help("adjudications import", "--format") == "auto | jsonl | csv | climate-fever"
    assert option_help("import", "--dataset") == "Dataset to import into (default: 'default', or 'climate-fever')."


def test_a_format_added_to_a_kind_appears_in_its_help_and_choices_and_dataset_names():
    cases = kind("cases")
    more = dataclasses.replace(cases, formats=(*cases.formats, "parquet"),
                               default_datasets={**cases.default_datasets, "parquet": "tables"})
    registry = tuple(more if each.name == "cases" else each for each in KINDS)
    assert more.format_help() == "auto | jsonl | csv | climate-fever | ragas | parquet"
    assert page_formats(registry)["cases"] == ("auto", "jsonl", "csv", "climate-fever", "ragas", "parquet")
    assert more.dataset_names() == ("default", "climate-fever", "tables")
    new_kind = FileKind("runs", ("jsonl",), "annotator.formats.cases:read_cases", uploadable=True)
    assert upload_kinds((*registry, new_kind)) == ("cases", "labels", "adjudications", "runs")


def test_the_imports_defaults_and_upload_kinds_are_the_registrys():
    assert imports.DEFAULT_DATASETS == dict(kind("cases").default_datasets)
    assert imports.UPLOAD_KINDS == upload_kinds() == ("cases", "labels", "adjudications")
    assert kind("adjudications").default_datasets["climate-fever"] == "climate-fever"
    assert imports.DEFAULT_DATASETS["ragas"] == "default"


def test_judge_labels_are_in_the_registry_but_not_on_the_import_page():
    assert kind("judge_labels").reader is read_judge_labels
    assert "judge_labels" not in upload_kinds() and "judge_labels" not in page_formats()
    with pytest.raises(KeyError):
        kind("judges")


def test_runs_are_in_the_registry_read_as_jsonl_or_ragas_and_not_on_the_import_page():
    assert kind("runs").reader is read_run
    assert kind("runs").format_choices() == ("auto", "jsonl", "ragas")
    assert option_help("run import", "--format") == kind("runs").format_help() == "auto | jsonl | ragas"
    assert "runs" not in upload_kinds() and "runs" not in page_formats()


def test_labels_are_always_detected_and_adjudications_offer_vote_files_on_the_command_line_only():
    assert kind("labels").format_choices() == ("auto",)
    assert kind("adjudications").format_choices() == ("auto", "jsonl", "csv", "climate-fever")
    assert kind("adjudications").page_formats() == ("auto", "jsonl", "csv")


def test_the_import_page_offers_the_registrys_kinds_and_formats(engine):  # noqa: F811 - the fixture
    at = import_page()
    assert len(at.radio(key="imports.kind").options) == len(upload_kinds())
    for name, choices in page_formats().items():
        at.radio(key="imports.kind").set_value(name).run()
        assert tuple(at.selectbox(key=f"imports.format.{name}").options) == choices
