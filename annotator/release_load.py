"""The gold of a release folder for the people who use it: `load_release` verifies the folder
against its manifest and returns gold.parquet as a pandas DataFrame (`annotator.load_release`).

Nothing is read from a release that fails verification: a changed, missing or extra file (named)
raises ReleaseVerifyError, saying what to do. The DataFrame is the one pandas reads from the
bytes of gold.parquet that were checked against the manifest (read once, so a file changed
between the check and the reading is caught too).
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path
from typing import TYPE_CHECKING

from annotator.errors import ReleaseVerifyError
from annotator.messages import Joined, english
from annotator.release import problem_message, read_manifest, release_layout, verify_release

if TYPE_CHECKING:
    import pandas as pd


def release_folder(path: str | os.PathLike[str]) -> Path:
    """The release folder `path` names: the folder itself, or the folder of one of its files
    (manifest.json, gold.parquet or another name `release_layout` gives).

    Raises ReleaseVerifyError (msg.release.load_not_a_release) for any other path: a missing one,
    or a file that is not one of a release's."""
    path = Path(path)
    if path.is_dir():
        return path
    if path.is_file() and path.name in release_layout(path.parent).all_files:
        return path.parent
    raise ReleaseVerifyError.of("msg.release.load_not_a_release", path=str(path))


def load_release(path: str | os.PathLike[str], manifest_sha256: str | None = None) -> pd.DataFrame:
    """The gold of a release as a pandas DataFrame, after verifying the release (the check of
    `annotator release verify`).

    path: a release folder (`release create` writes OUT/NAME/), or its manifest.json, or another
        file of it (gold.parquet).
    manifest_sha256: the manifest's SHA-256 that `release create` printed (64 hex digits, any
        case). With it the manifest itself is checked too; without it a copy whose files were
        rewritten together with its manifest passes (a manifest cannot vouch for itself).
    Returns gold.parquet as pandas reads it (`pd.read_parquet`): one row per released claim, the
        columns dataset, case_id, claim_id, claim, gold_label, resolution, severity, slice, split,
        passage_ids (a list of ids), labels (a list of {labeler, label, rationale, passage_ids,
        severity}), adjudication ({adjudicator, label, rationale, severity} or None) and
        case_metadata (JSON text, keys sorted); docs/design.md, "File formats".
    Raises ReleaseVerifyError (an AnnotatorError) when `path` is no release folder, or when a file
    does not match the manifest: changed, missing, not listed, a symbolic link, or the manifest
    when its SHA-256 is not `manifest_sha256`; the message names every such file and says what to
    do. Nothing is returned from a release that fails.
    """
    import pandas as pd  # here, not at the top: `import annotator` stays light

    folder = release_folder(path)
    result = verify_release(folder, manifest_sha256)
    if not result.ok:
        raise _mismatch(folder, result.problems)
    parquet = release_layout(folder).parquet
    data = parquet.read_bytes()
    listed, actual = _listed_sha256(folder, parquet.name), hashlib.sha256(data).hexdigest()
    if actual != listed:  # changed between the check and the reading
        raise _mismatch(folder, (english("msg.verify.changed_sha256", name=parquet.name, actual=actual, expected=listed),))
    return pd.read_parquet(io.BytesIO(data))


def _listed_sha256(folder: Path, name: str) -> str | None:
    """The SHA-256 (lowercase) that the manifest lists for the file `name`, None when it lists none."""
    entry = (read_manifest(folder).get("files") or {}).get(name)
    sha256 = entry.get("sha256") if isinstance(entry, dict) else None
    return sha256.lower() if isinstance(sha256, str) else None


def _mismatch(folder: Path, problems: tuple[str, ...]) -> ReleaseVerifyError:
    """ReleaseVerifyError naming the release folder and every problem (each names its file)."""
    joined = Joined(tuple(problem_message(problem) for problem in problems), "; ")
    return ReleaseVerifyError.of("msg.release.load_mismatch", folder=str(folder), problems=joined)
