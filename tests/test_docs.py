"""The project's own documents stand on their own: the code, tests and docs cite docs/design.md and
docs/domain.md, each citation names a section or a defined word that exists there, and nothing
cites a document or a data folder outside the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

DOCS = {"design": REPO / "docs" / "design.md", "domain": REPO / "docs" / "domain.md"}

CITATION = re.compile(r"docs/(design|domain)\.md`?\s*[,(]\s*((?:\"[^\"\n]+\"(?:\s*,\s*)?)+)")
"""`docs/design.md, "File formats"`, `docs/domain.md ("The procedure")`, `docs/domain.md, "a", "b"`."""

OUTSIDE = re.compile(r"\bDESIGN\.md\b|\bDOMAIN\.md\b|\.\./shared\b|\.\./\.\./shared\b")
"""The documents and the data folder a clone does not have."""


def project_files() -> list[Path]:
    """The repository's text files that cite documents: Python, Markdown, the Makefile, TOML and
    the CI script (git's list when this is a checkout, else a walk without build folders)."""
    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                                capture_output=True, text=True, check=True).stdout.splitlines()
        paths = [REPO / name for name in listed]
    except (OSError, subprocess.CalledProcessError):
        paths = [path for path in REPO.rglob("*") if not {".venv", ".git", "build"} & set(path.parts)]
    wanted = {".py", ".md", ".toml"}
    return sorted(path for path in paths if path.is_file() and (path.suffix in wanted or path.name in ("Makefile", "run")))


def names_in(doc: Path) -> set[str]:
    """The section headings and the bold terms of a document, lower case."""
    text = doc.read_text(encoding="utf-8")
    headings = {match.strip() for match in re.findall(r"^#{1,4} (.+)$", text, flags=re.MULTILINE)}
    terms = set(re.findall(r"\*\*([^*\n]+)\*\*", text))
    return {name.lower() for name in headings | terms}


FILES = project_files()


def test_the_scan_sees_the_code_the_tests_and_the_docs():
    names = {path.relative_to(REPO).as_posix() for path in FILES}
    assert {"annotator/vocabulary.py", "tests/conftest.py", "README.md", "docs/design.md", "Makefile"} <= names


def test_nothing_cites_a_document_or_data_folder_outside_the_repository():
    found = [f"{path.relative_to(REPO)}:{n}: {line.strip()}" for path in FILES if path != Path(__file__)
             for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if OUTSIDE.search(line)]
    assert found == []


@pytest.mark.parametrize("doc", sorted(DOCS))
def test_each_citation_names_a_section_or_word_of_its_document(doc):
    known = names_in(DOCS[doc])
    cited = []
    for path in (path for path in FILES if path != Path(__file__)):  # this file's examples are no citations
        for match in CITATION.finditer(path.read_text(encoding="utf-8", errors="replace")):
            if match.group(1) == doc:
                cited += [(path.relative_to(REPO), name) for name in re.findall(r"\"([^\"]+)\"", match.group(2))]
    assert cited, f"nothing cites a section of docs/{doc}.md"
    assert [(str(path), name) for path, name in cited if name.lower() not in known] == []


def test_the_citation_pattern_reads_the_forms_in_use():
    text = 'see (docs/design.md, "File formats") and `../docs/domain.md` ("The procedure"); docs/domain.md, "a", "b"'
    assert [(m.group(1), m.group(2)) for m in CITATION.finditer(text)] == [
        ("design", '"File formats"'), ("domain", '"The procedure"'), ("domain", '"a", "b"')]
