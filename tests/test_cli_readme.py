"""Every command and option of the command line (the Typer app in annotator/cli.py, walked as
the Click commands Typer builds from it) is in the README's "The command line" section, each option in its command's
entry: the README is where a user's script starts from."""

from __future__ import annotations

import re

import pytest
import typer

from annotator.cli import app
from tests.conftest import REPO

SECTION = "## The command line"
EVERYWHERE = frozenset({"--db"})
"""Options every database command takes, stated once in the section's text, not in each entry."""


def commands(group, path: tuple[str, ...] = ()) -> dict:  # noqa: ANN001 - Typer's (vendored) Click group
    """Every command below `group` by its words (("release", "create"): command), groups left out."""
    found = {}
    for name, command in group.commands.items():
        if hasattr(command, "commands"):  # a group (Typer ships its own copy of Click: no isinstance)
            found |= commands(command, (*path, name))
        else:
            found[(*path, name)] = command
    return found


def options(command) -> set[str]:  # noqa: ANN001 - a Click command
    """The option names a user types (`--json`; `--help` left out), long and short."""
    return {name for param in command.params if param.param_type_name == "option"
            for name in (*param.opts, *param.secondary_opts)} - {"--help"}


def readme_section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start:] if end < 0 else text[start:end]


def _top_level_alternatives(entry: str) -> list[str]:
    """`entry` split at the `|` that stand outside brackets ("list | passwd NAME")."""
    parts, depth, current = [], 0, []
    for char in entry:
        depth += char == "["
        depth -= char == "]"
        if char == "|" and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    return [*parts, "".join(current)]


def documented(section: str, known: dict) -> dict[tuple[str, ...], str]:
    """The text of each command's entry in the section's command block: an entry starts at a line
    `annotator WORDS ...` and goes on over the indented lines after it; `| other ...` inside it
    starts the entry of a sibling command (`users list | passwd NAME`), `| --option` goes on."""
    block = section.split("```")[1]
    entries: list[str] = []
    for line in block.splitlines():
        if line.startswith("annotator "):
            entries.append(line)
        elif line.startswith(" ") and entries:
            entries[-1] += "\n" + line
    found: dict[tuple[str, ...], str] = {}
    for entry in entries:
        words = entry.split()[1:]
        path = next((p for p in sorted(known, key=len, reverse=True) if tuple(words[:len(p)]) == p), None)
        if path is None:
            continue
        for n, alternative in enumerate(_top_level_alternatives(entry)):
            first = alternative.split()[0] if alternative.split() else ""
            sibling = (*path[:-1], first)
            if n and sibling in known:
                path = sibling
            found[path] = found.get(path, "") + " " + alternative
    return found


CLI = typer.main.get_command(app)
COMMANDS = commands(CLI)


def test_the_walk_finds_the_commands_and_their_options():
    assert ("release", "create") in COMMANDS and ("data", "fetch") in COMMANDS and ("import",) in COMMANDS
    assert {"--only-final", "--out", "--excel", "--db"} <= options(COMMANDS[("release", "create")])


@pytest.mark.parametrize("path", sorted(COMMANDS), ids=" ".join)
def test_every_command_and_its_options_are_in_the_readme(path):
    entries = documented(readme_section(), COMMANDS)
    assert path in entries, f"`annotator {' '.join(path)}` has no entry in the README's command-line section"
    missing = sorted(option for option in options(COMMANDS[path]) - EVERYWHERE
                     if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", entries[path]))
    assert missing == [], f"`annotator {' '.join(path)}`: options missing from its README entry: {missing}"


def test_the_options_every_command_takes_are_stated_in_the_section():
    section = readme_section()
    for option in EVERYWHERE:
        assert re.search(rf"`{re.escape(option)}[ `]", section), option
        assert any(option in options(command) for command in COMMANDS.values())
