"""Making a rename durable before a command reports success (POSIX fsync of the folder)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

_CANNOT_SYNC_FOLDERS = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EISDIR, errno.EACCES, errno.EPERM})
"""What a file system that cannot open or sync a folder answers (some network and Windows file
systems); any other error (EIO, ENOSPC ...) is a real failure."""


def sync_folder(folder: Path) -> None:
    """fsync `folder`, so that a file created or renamed in it survives a power loss (POSIX: a
    directory entry is durable only once its directory is synced). A file system that cannot sync
    folders is left as is. Raises OSError for a real failure, e.g. EIO."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError as error:
        if error.errno in _CANNOT_SYNC_FOLDERS:
            return
        raise
    try:
        os.fsync(descriptor)
    except OSError as error:
        if error.errno not in _CANNOT_SYNC_FOLDERS:
            raise
    finally:
        os.close(descriptor)
