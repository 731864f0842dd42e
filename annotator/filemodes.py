"""Files and folders annotator creates are private to their owner: 0600 files, 0700 folders,
or stricter where the user's umask says so (the SQLite database and its -wal/-shm, backups,
releases, the data/ folder). They hold people's labels and names: other local users have no
business reading them."""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700


def current_umask() -> int:
    """The process's umask, read without changing it where the system shows it (Linux:
    /proc/self/status), else by setting it and putting it back at once."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def private_mode(mode: int = PRIVATE_FILE) -> int:
    """`mode` (PRIVATE_FILE or PRIVATE_FOLDER) with what the umask forbids taken away."""
    return mode & ~current_umask()


def create_private_file(path: Path) -> None:
    """Create `path` empty with mode PRIVATE_FILE (less what the umask forbids), unless it
    exists. SQLite gives a database's -wal and -shm files the mode of the database file, so a
    database file created here keeps them private too. Raises OSError as os.open does."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
    except FileExistsError:
        pass


def make_private_folders(folder: Path) -> None:
    """Create `folder` and any missing parents, each new one with mode PRIVATE_FOLDER (less what
    the umask forbids); existing folders are left as they are. Raises OSError as os.mkdir does."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for new in reversed(missing):
        try:
            new.mkdir(mode=PRIVATE_FOLDER)
        except FileExistsError:  # made meanwhile by another process
            if not new.is_dir():
                raise
