"""Public data sets the tests, benchmarks and README examples use, fetched from their own homes.

The project carries no copy of a data set whose licence it cannot state: `annotator data fetch
NAME` downloads it from where its authors publish it and checks its SHA-256 before it keeps a
byte. The file is written under a hidden temporary name in the target folder and renamed into
place only once its size and hash match, so a failed or interrupted fetch leaves nothing behind
(and an earlier good copy stays as it was).

CLIMATE-FEVER: Diggelmann, Boyd-Graber, Bulian, Ciaramita, Leippold (2020), "CLIMATE-FEVER: A
Dataset for Verification of Real-World Climate Claims", arXiv:2012.00614; published at
https://github.com/tdiggelm/climate-fever-dataset (file `dataset/climate-fever.jsonl`, fetched
here at a fixed commit, byte for byte, with no conversion).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from annotator import __version__
from annotator.durable import sync_folder
from annotator.errors import FetchError
from annotator.filemodes import current_umask

DEFAULT_FOLDER = Path("data") / "external"
"""Where `annotator data fetch` puts a data set unless --to names another folder (relative to
the current folder; ignored by git). The tests look here first, under the project folder."""

CHUNK_BYTES = 1 << 20
TIMEOUT_SECONDS = 60.0
"""How long a connection or a read may stall before the fetch gives up."""


@dataclass(frozen=True)
class PublicDataset:
    """A data set fetched byte for byte from its publisher: where, what exactly, whom to cite."""

    name: str  # the command line's NAME
    file_name: str  # the file written in the target folder
    url: str  # pinned to one version: the same bytes every time
    sha256: str  # of those bytes, 64 lowercase hex digits
    size: int  # bytes
    citation: str


CLIMATE_FEVER = PublicDataset(
    name="climate-fever",
    file_name="climate-fever.jsonl",
    url=("https://raw.githubusercontent.com/tdiggelm/climate-fever-dataset/"
         "336f0a46c98920a6f40926385ce71ba877a7b863/dataset/climate-fever.jsonl"),
    sha256="8a4b9032d861be482ffb49dddfd283ffa6089e654f1e968040011882c5eb6e0b",
    size=3_152_039,
    citation=("CLIMATE-FEVER: Diggelmann, Boyd-Graber, Bulian, Ciaramita, Leippold (2020), "
              "arXiv:2012.00614; cite the paper wherever the data is used"),
)

DATASETS: dict[str, PublicDataset] = {CLIMATE_FEVER.name: CLIMATE_FEVER}
"""Every data set `annotator data fetch` knows, by name."""


@dataclass(frozen=True)
class Fetched:
    """What a fetch did: the file, where its bytes came from, and whether it was there already."""

    path: Path
    url: str | None  # None when a good copy was already in place (nothing was downloaded)
    size: int
    sha256: str
    replaced: bool = False  # a file of other content was at `path` and is now the data set


def dataset(name: str) -> PublicDataset:
    """The data set called `name`. Raises FetchError naming the ones there are."""
    try:
        return DATASETS[name]
    except KeyError:
        raise FetchError(f"no data set named {name!r}: choose one of {', '.join(sorted(DATASETS))}") from None


def fetch_dataset(name: str, folder: Path = DEFAULT_FOLDER, *, url: str | None = None,
                  timeout: float = TIMEOUT_SECONDS) -> Fetched:
    """Put the data set `name` at `folder`/its file name, downloaded from its pinned address (or
    from `url`, a mirror: the bytes are checked against the same size and SHA-256 all the same).

    A file already there with the expected SHA-256 is kept and nothing is downloaded; a file of
    other content is replaced, once the download has matched. Raises FetchError (nothing written:
    an unknown name, an unreachable server, an HTTP error, bytes that do not match, a folder that
    cannot be written)."""
    chosen = dataset(name)
    return download(url or chosen.url, folder / chosen.file_name, sha256=chosen.sha256, size=chosen.size, timeout=timeout)


def download(url: str, target: Path, *, sha256: str, size: int, timeout: float = TIMEOUT_SECONDS) -> Fetched:
    """The file at `url` written to `target`, if and only if it is exactly `size` bytes whose
    SHA-256 is `sha256` (64 hex digits).

    A file already at `target` with that hash is kept as it is (`Fetched.url` None). The bytes
    are streamed into a hidden temporary file in `target`'s folder (created when missing) and
    renamed over `target` once they match, then the folder is synced. Raises FetchError saying
    what went wrong and what to do, with nothing left behind: the server unreachable or too slow
    (`timeout` seconds, for the connection and for each read), an HTTP error status, more or
    fewer bytes than `size`, another SHA-256, a folder that cannot be written."""
    _scheme(url)
    if target.is_file() and _sha256_of(target) == sha256:
        return Fetched(target, None, target.stat().st_size, sha256)
    if target.exists() and not target.is_file():
        raise FetchError(f"{target} exists and is not a file; move it away or choose another folder with --to")
    replaced = target.exists()
    folder = target.parent
    made = [parent for parent in (folder, *folder.parents) if not parent.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, part = tempfile.mkstemp(prefix=f".{target.name}.part-", dir=folder)
    except OSError as error:
        _remove_empty(made)
        raise FetchError(f"cannot write in the folder {folder}: {error.strerror or error}; "
                         "choose another folder with --to or fix its permissions") from None
    try:
        with os.fdopen(handle, "wb") as out:
            got, digest = _stream(url, out, size=size, timeout=timeout)
            out.flush()
            os.fsync(out.fileno())
        if got != size or digest != sha256:
            raise FetchError(f"{url} gave {got:,} bytes with SHA-256 {digest}, but the data set is {size:,} bytes with "
                             f"SHA-256 {sha256}; nothing was written. The server holds another file (another version, "
                             "an error page, a damaged copy): fetch it from the data set's own address (leave out --url)")
        os.chmod(part, 0o644 & ~current_umask())  # public data: readable as any file the user makes
        os.replace(part, target)
        sync_folder(folder)
    except BaseException:
        Path(part).unlink(missing_ok=True)
        _remove_empty(made)
        raise
    return Fetched(target, url, got, digest, replaced)


def _stream(url: str, out, *, size: int, timeout: float) -> tuple[int, str]:  # noqa: ANN001 - a binary file
    """Copy the body of GET `url` into `out`, at most `size` + 1 bytes: (bytes read, SHA-256)."""
    request = urllib.request.Request(url, headers={"User-Agent": f"annotator/{__version__}"})
    digest, got = hashlib.sha256(), 0
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - http(s) checked by _scheme
            _scheme(response.geturl())
            while chunk := response.read(min(CHUNK_BYTES, size + 1 - got)):
                digest.update(chunk)
                got += len(chunk)
                out.write(chunk)
                if got > size:
                    break
    except urllib.error.HTTPError as error:
        raise FetchError(f"{url} answered HTTP {error.code} ({error.reason}); nothing was written. Check the address, "
                         "or try again later") from None
    except urllib.error.URLError as error:
        raise FetchError(f"cannot reach {url} ({_reason(error.reason)}); nothing was written. Check the network "
                         "connection, or fetch the file from a mirror with --url") from None
    except (TimeoutError, OSError) as error:  # a read that stalled, a connection reset mid-way
        raise FetchError(f"the download from {url} stopped ({_reason(error)}); nothing was written. Try again") from None
    return got, digest.hexdigest()


def _scheme(url: str) -> None:
    """Refuse an address that is not http(s) (a file:// or ftp:// URL, or a redirect to one)."""
    if not url.lower().startswith(("http://", "https://")):
        raise FetchError(f"{url} is not an http:// or https:// address; give a web address with --url")


def _reason(reason: object) -> str:
    """An OSError's or URLError's reason in words: its strerror when it has one."""
    return getattr(reason, "strerror", None) or str(reason) or type(reason).__name__


def _remove_empty(folders: list[Path]) -> None:
    """Remove the folders a failed fetch created (innermost first), as long as they are empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _sha256_of(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
