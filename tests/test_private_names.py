"""No module of annotator/ reaches into another's private names: none imports a name with a
leading underscore (dunders aside) from another annotator module, nor reads `module._name` of an
annotator module it imported. A name two modules share is public (tests may still use privates)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "annotator"


def is_private(name: str) -> bool:
    """A leading underscore, not a dunder (__version__, __file__ are everyone's)."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def is_module(dotted: str, root: Path = PACKAGE) -> bool:
    """Whether `dotted` ("annotator.formats.reading") names a module or package under `root`."""
    parts = dotted.split(".")
    if parts[0] != root.name:
        return False
    path = root.joinpath(*parts[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file() or len(parts) == 1


def absolute(module: str | None, level: int, path: Path, root: Path) -> str:
    """The absolute name of a `from` import's module (relative imports resolved from `path`)."""
    if level == 0:
        return module or ""
    package = [root.name, *path.relative_to(root).parent.parts]
    base = package[:len(package) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def reaches_into_privates(path: Path, root: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, what) for every private name of another annotator module that `path` imports or reads."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found, modules = [], {}  # modules: local name -> the annotator module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == root.name:
                    local = alias.asname or alias.name.split(".")[0]
                    modules[local] = alias.name if alias.asname else root.name
        elif isinstance(node, ast.ImportFrom):
            source = absolute(node.module, node.level, path, root)
            if source.split(".")[0] != root.name:
                continue
            for alias in node.names:
                if is_private(alias.name):
                    found.append((node.lineno, f"from {source} import {alias.name}"))
                elif is_module(f"{source}.{alias.name}", root):
                    modules[alias.asname or alias.name] = f"{source}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.insert(0, value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in modules and is_private(chain[-1]):
                dotted = modules[value.id]
                owner = ".".join([dotted, *chain[:-1]])
                if is_module(owner, root) or not chain[:-1]:
                    found.append((node.lineno, f"{value.id}.{'.'.join(chain)}"))
    return sorted(set(found))


def test_no_module_reaches_into_anothers_private_names():
    leaks = {str(path.relative_to(PACKAGE)): found for path in sorted(PACKAGE.rglob("*.py"))
             if (found := reaches_into_privates(path))}
    assert leaks == {}


def test_the_scanner_sees_a_private_import_and_a_private_attribute(tmp_path):
    """Guard against a vacuous pass: planted violations are found, public and own names are not."""
    root = tmp_path / "annotator"
    (root / "formats").mkdir(parents=True)
    for name in ("__init__.py", "formats/__init__.py", "formats/reading.py", "labels.py"):
        (root / name).write_text("", encoding="utf-8")
    planted = root / "services.py"
    planted.write_text(
        "from annotator.formats.reading import Row, _digest\n"
        "from annotator import formats, __version__\n"
        "from annotator.formats import reading as r\n"
        "import annotator.labels\n"
        "from . import labels\n"
        "from .formats.reading import _Seen\n"
        "x = formats._Seen\n"
        "y = r._digest(1) + r.public(2)\n"
        "z = annotator.labels._label_key\n"
        "w = labels._key\n"
        "def own(self):\n"
        "    return self._cache, _local, Row._fields, formats.reading.__name__\n",
        encoding="utf-8")
    assert reaches_into_privates(planted, root) == [
        (1, "from annotator.formats.reading import _digest"),
        (6, "from annotator.formats.reading import _Seen"),
        (7, "formats._Seen"),
        (8, "r._digest"),
        (9, "annotator.labels._label_key"),
        (10, "labels._key"),
    ]
