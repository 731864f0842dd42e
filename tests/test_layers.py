"""The layers of docs/design.md ("Layers"): imports point down only."""

import ast
import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "annotator"
LAZY_NAME = re.compile(r"annotator(\.\w+)+(:\w+)?")
"""A module named in a string, imported when first used ("annotator.formats.cases:read_cases" in
formats/kinds.py, "annotator.formats.reading" in formats/__init__.py): an import all the same."""


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports: at the top, inside functions, and named in strings for a
    lazy import (LAZY_NAME)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and LAZY_NAME.fullmatch(node.value):
            names.add(node.value.split(":")[0])
    return names


def modules_outside(folder: str) -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if folder not in p.relative_to(PACKAGE).parts]


def test_nothing_outside_the_ui_imports_streamlit():
    leaks = [str(p.relative_to(PACKAGE)) for p in modules_outside("ui")
             if any(name == "streamlit" or name.startswith("streamlit.") for name in imported_modules(p))]
    assert leaks == []


def test_the_core_and_services_never_import_the_ui_or_the_cli():
    leaks = [str(p.relative_to(PACKAGE)) for p in modules_outside("ui")
             if p.name not in ("cli.py", "__main__.py")
             and any(name.startswith("annotator.ui") or name == "annotator.cli" for name in imported_modules(p))]
    assert leaks == []


def core_modules() -> list[Path]:
    """The core: annotator/*.py (but the command line) and the readers' package annotator/formats/."""
    return [p for p in [*PACKAGE.glob("*.py"), *(PACKAGE / "formats").glob("*.py")] if p.name not in ("cli.py", "__main__.py")]


def test_the_core_never_imports_services():
    leaks = [str(p.relative_to(PACKAGE)) for p in core_modules()
             if any(name.startswith("annotator.services") for name in imported_modules(p))]
    assert leaks == []


def test_the_readers_are_part_of_the_core():
    assert PACKAGE / "formats" / "reading.py" in core_modules()


def test_the_scanner_sees_imports():
    """Guard against a vacuous pass: the UI does import streamlit."""
    assert "streamlit" in imported_modules(PACKAGE / "ui" / "app.py")


def test_the_scanner_sees_lazy_imports():
    assert "annotator.formats.cases" in imported_modules(PACKAGE / "formats" / "kinds.py")
    assert "annotator.formats.reading" in imported_modules(PACKAGE / "formats" / "__init__.py")


HEAVY = ("sqlalchemy", "sqlmodel", "alembic", "numpy", "pandas", "pyarrow", "scipy", "statsmodels", "streamlit",
         "annotator.models", "annotator.db", "annotator.formats.reading")
"""What the command line's start and its help do without: the ORM, the migrations, the numeric
libraries, the readers (each costs from tens to hundreds of milliseconds to import). Not pydantic:
Typer itself loads it to read a command's options."""


def modules_loaded(code: str) -> set[str]:
    """The modules of HEAVY loaded after running `code` in a fresh interpreter."""
    script = code + "\nimport sys\nprint(' '.join(sorted(sys.modules)))\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    return {name for name in HEAVY if name in loaded}


def test_the_command_line_starts_and_gives_its_help_without_the_orm_or_numeric_libraries():
    assert modules_loaded("import annotator.cli") == set()
    helped = ("from typer.testing import CliRunner\nfrom annotator.cli import app\n"
              "for words in ([\"--help\"], [\"import\", \"--help\"], [\"release\", \"create\", \"--help\"]):\n"
              "    assert CliRunner().invoke(app, words).exit_code == 0\n")
    assert modules_loaded(helped) == set()


def test_the_import_check_sees_a_heavy_import():
    """Guard against a vacuous pass: a command that opens the database loads the ORM."""
    assert {"sqlalchemy", "annotator.models"} <= modules_loaded("import annotator.services.status")
