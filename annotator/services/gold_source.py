"""Where every report against a gold release gets its gold: the release folder, verified against
its manifest first (and, for a stored release, against the manifest hash the database recorded),
never the live database. Judge reports (services/judges.py) and run reports
(services/run_reports.py) both open their release here, and both apply the blind rule here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlmodel import Session, select

from annotator.errors import NotFoundError, PermissionDeniedError
from annotator.messages import Message
from annotator.models import Claim, Dataset, GoldRelease
from annotator.release import check_release, read_manifest, release_layout
from annotator.services.access import Caller, require
from annotator.services.blind import claims_still_to_label
from annotator.services.releases import check_stored_release
from annotator.workflow import Permission

LOOKUP_BATCH = 500


@dataclass(frozen=True)
class VerifiedRelease:
    """A release folder whose files match its manifest.

    release: the release as the caller named it (a stored release's name, or the folder given).
    folder: the folder; manifest_sha256: its manifest.json's SHA-256 (hex); manifest: its content.
    stored_as: the stored release whose manifest this is; None for a folder the database does not hold.
    """

    release: str
    folder: Path
    manifest_sha256: str
    manifest: dict[str, Any]
    stored_as: str | None

    @property
    def parquet(self) -> Path:
        return release_layout(self.folder).parquet

    @property
    def cases(self) -> Path:
        return release_layout(self.folder).cases


def open_release(session: Session, actor: Caller, release: str | Path) -> VerifiedRelease:
    """The release `release`, verified.

    release: a stored release's name (a str; verified against its folder's manifest and the
        manifest hash the database recorded) or a release folder (a Path, or a str naming no
        stored release but a folder with a manifest.json; verified against its manifest).
    Raises PermissionDeniedError unless `actor` may see releases (Permission.RELEASE);
    NotFoundError for an unknown release name or a folder without a manifest.json;
    ReleaseVerifyError when a file does not match the manifest.
    """
    require(actor, Permission.RELEASE)  # a folder too: the database's check_stored_release is not asked for one
    if isinstance(release, str) and _is_unstored_folder(session, release):
        release = Path(release)
    if isinstance(release, Path):
        if not release_layout(release).manifest.is_file():
            raise NotFoundError.of("msg.judge.not_a_release", folder=str(release))
        result, folder, shown = check_release(release), release, str(release)
    else:
        result = check_stored_release(session, actor, release)
        folder = Path(session.exec(select(GoldRelease.path).where(GoldRelease.name == release)).one())
        shown = release
    sha256 = result.manifest_sha256 or ""
    stored_as = session.exec(select(GoldRelease.name).where(GoldRelease.manifest_sha256 == sha256)).first()
    return VerifiedRelease(shown, folder, sha256, read_manifest(folder), stored_as)


def _is_unstored_folder(session: Session, given: str) -> bool:
    """Whether `given` names no stored release but a folder holding a manifest.json."""
    stored = session.exec(select(GoldRelease.id).where(GoldRelease.name == given)).first()
    return stored is None and release_layout(given).manifest.is_file()


def refuse_blind(session: Session, actor: Caller, claims: Iterable[tuple[str, str]], doing: Message) -> None:
    """PermissionDeniedError (msg.release.still_to_label, saying what `actor` was `doing`) when
    `claims` ((dataset name, claim id) pairs: a release's claims) hold one that `actor` is assigned
    to label and has not labeled yet: a report shows its gold label or the evidence the labelers
    cited (the blind rule, docs/domain.md)."""
    hidden = claims_still_to_label(session, actor)
    if hidden is None:
        return
    keys = set(claims)
    pks = list(session.exec(hidden))
    for start in range(0, len(pks), LOOKUP_BATCH):
        query = (select(Dataset.name, Claim.claim_id).join(Dataset, Dataset.id == Claim.dataset_id)
                 .where(Claim.id.in_(pks[start:start + LOOKUP_BATCH])))
        if any(tuple(row) in keys for row in session.exec(query)):
            raise PermissionDeniedError.of("msg.release.still_to_label", doing=doing)


def superseded_by(session: Session, verified: VerifiedRelease) -> list[str]:
    """The stored releases created after `verified` that cover one of its datasets, oldest first.
    "After": later in the database's order when the release is stored there (found by its manifest
    hash), else created after the manifest's created_at (which is to the second)."""
    datasets = set((verified.manifest.get("scope") or {}).get("datasets") or [])
    releases = list(session.exec(select(GoldRelease).order_by(GoldRelease.created_at, GoldRelease.id)))
    this = next((release for release in releases if release.manifest_sha256 == verified.manifest_sha256), None)
    if this is not None:
        later = releases[releases.index(this) + 1:]
    else:
        created = _manifest_time(verified.manifest.get("created_at"))
        later = [] if created is None else [r for r in releases if r.created_at.replace(microsecond=0) > created]
    return [release.name for release in later if datasets & set((release.scope or {}).get("datasets") or [])]


def _manifest_time(created: Any) -> datetime | None:
    """A manifest's created_at (ISO 8601, UTC) as an aware datetime; None when it is not one."""
    try:
        moment = datetime.fromisoformat(str(created).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
