"""The layers of docs/design.md ("Layers"): imports point down only."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "annotator"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
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
