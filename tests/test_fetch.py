"""`annotator data fetch`: a public data set downloaded, its size and SHA-256 checked, and nothing
left behind when anything goes wrong; against a web server on this machine (loopback only).

CLIMATE-FEVER: Diggelmann, Boyd-Graber, Bulian, Ciaramita, Leippold (2020), arXiv:2012.00614.
"""

from __future__ import annotations

import hashlib
import socket
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from annotator import fetch
from annotator.errors import FetchError
from annotator.filemodes import current_umask
from tests.conftest import CLIMATE_FEVER, annotator, need

SMALL = b'{"claim_id": "0", "claim": "a small file"}\n' * 50
SMALL_SHA256 = hashlib.sha256(SMALL).hexdigest()


class QuietHandler(SimpleHTTPRequestHandler):
    """Files of one folder, without a log line per request on standard error."""

    def log_message(self, format, *args):  # noqa: A002, ANN001, ANN002 - http.server's signature
        pass


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A web server on 127.0.0.1 serving a folder: small.jsonl (SMALL), other.jsonl (as long as
    SMALL, other bytes), longer.jsonl (SMALL and more) and, when the tests have it,
    climate-fever.jsonl; yields (base address, folder). Any other path answers 404."""
    folder = tmp_path_factory.mktemp("served")
    (folder / "small.jsonl").write_bytes(SMALL)
    (folder / "other.jsonl").write_bytes(SMALL.replace(b"small", b"SMALL"))
    (folder / "longer.jsonl").write_bytes(SMALL + b"and more\n")
    if CLIMATE_FEVER.exists():
        (folder / CLIMATE_FEVER.name).symlink_to(CLIMATE_FEVER)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", folder
    httpd.shutdown()
    httpd.server_close()


def closed_port() -> int:
    """A port of 127.0.0.1 on which nothing listens (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def everything_under(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*")) if folder.exists() else []


def test_a_download_that_matches_is_written_and_a_second_fetch_keeps_it(server, tmp_path):
    base, _ = server
    target = tmp_path / "out" / "small.jsonl"
    done = fetch.download(f"{base}/small.jsonl", target, sha256=SMALL_SHA256, size=len(SMALL))
    assert (done.path, done.url, done.size, done.sha256, done.replaced) == (target, f"{base}/small.jsonl", len(SMALL), SMALL_SHA256, False)
    assert target.read_bytes() == SMALL
    assert everything_under(tmp_path) == ["out", "out/small.jsonl"]  # no temporary file left
    assert target.stat().st_mode & 0o777 == 0o644 & ~current_umask()  # public data: a file as any other
    written = target.stat().st_mtime_ns
    again = fetch.download(f"{base}/missing.jsonl", target, sha256=SMALL_SHA256, size=len(SMALL))
    assert again.url is None and again.sha256 == SMALL_SHA256  # a good copy in place: nothing downloaded
    assert target.stat().st_mtime_ns == written


def test_a_file_of_other_content_in_place_is_replaced_once_the_download_matches(server, tmp_path):
    base, _ = server
    target = tmp_path / "small.jsonl"
    target.write_bytes(b"an older, damaged copy\n")
    done = fetch.download(f"{base}/small.jsonl", target, sha256=SMALL_SHA256, size=len(SMALL))
    assert done.replaced and target.read_bytes() == SMALL


def test_other_bytes_are_refused_naming_both_hashes_and_nothing_is_left_behind(server, tmp_path):
    base, _ = server
    target = tmp_path / "new" / "folder" / "small.jsonl"
    with pytest.raises(FetchError) as refused:
        fetch.download(f"{base}/other.jsonl", target, sha256=SMALL_SHA256, size=len(SMALL))
    other = hashlib.sha256((server[1] / "other.jsonl").read_bytes()).hexdigest()
    assert f"SHA-256 {other}" in str(refused.value) and f"SHA-256 {SMALL_SHA256}" in str(refused.value)
    assert "nothing was written" in str(refused.value)
    assert everything_under(tmp_path) == []  # not even the folders it made


def test_a_bad_download_leaves_an_earlier_copy_as_it_was(server, tmp_path):
    base, _ = server
    target = tmp_path / "small.jsonl"
    target.write_bytes(b"what was there\n")
    with pytest.raises(FetchError):
        fetch.download(f"{base}/other.jsonl", target, sha256=SMALL_SHA256, size=len(SMALL))
    assert target.read_bytes() == b"what was there\n" and everything_under(tmp_path) == ["small.jsonl"]


def test_more_bytes_than_the_file_has_are_refused_after_one_byte_too_many(server, tmp_path):
    base, _ = server
    with pytest.raises(FetchError) as refused:
        fetch.download(f"{base}/longer.jsonl", tmp_path / "small.jsonl", sha256=SMALL_SHA256, size=len(SMALL))
    assert f"gave {len(SMALL) + 1:,} bytes" in str(refused.value) and f"{len(SMALL):,} bytes" in str(refused.value)
    assert everything_under(tmp_path) == []


def test_an_http_error_says_its_status_and_writes_nothing(server, tmp_path):
    base, _ = server
    with pytest.raises(FetchError) as refused:
        fetch.download(f"{base}/not-there.jsonl", tmp_path / "x" / "small.jsonl", sha256=SMALL_SHA256, size=len(SMALL))
    assert "answered HTTP 404 (File not found)" in str(refused.value) and "nothing was written" in str(refused.value)
    assert everything_under(tmp_path) == []


def test_an_unreachable_server_says_so_and_writes_nothing(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/small.jsonl"
    with pytest.raises(FetchError) as refused:
        fetch.download(url, tmp_path / "x" / "small.jsonl", sha256=SMALL_SHA256, size=len(SMALL), timeout=5)
    assert str(refused.value).startswith(f"cannot reach {url} (Connection refused); nothing was written")
    assert "--url" in str(refused.value) and everything_under(tmp_path) == []


@pytest.mark.parametrize("url", ["file:///etc/hostname", "ftp://127.0.0.1/small.jsonl"])
def test_an_address_that_is_not_http_is_refused_before_anything_is_read(url, tmp_path):
    with pytest.raises(FetchError, match="not an http:// or https:// address"):
        fetch.download(url, tmp_path / "small.jsonl", sha256=SMALL_SHA256, size=len(SMALL))
    assert everything_under(tmp_path) == []


def test_the_command_refuses_a_mirror_with_other_bytes_exit_1_and_nothing_written(server, tmp_path):
    base, _ = server
    ran = annotator("data", "fetch", "climate-fever", "--url", f"{base}/small.jsonl", "--to", str(tmp_path / "cf"))
    assert ran.code == 1 and ran.out == ""
    assert ran.err.startswith(f"Error: {base}/small.jsonl gave {len(SMALL):,} bytes with SHA-256 {SMALL_SHA256}, but the "
                              f"data set is {fetch.CLIMATE_FEVER.size:,} bytes with SHA-256 {fetch.CLIMATE_FEVER.sha256}")
    assert everything_under(tmp_path) == []


def test_the_command_refuses_an_unknown_data_set_naming_the_known_ones(tmp_path):
    ran = annotator("data", "fetch", "fever", "--to", str(tmp_path))
    assert ran.code == 1 and ran.err == "Error: no data set named 'fever': choose one of climate-fever\n"


def test_the_command_fetches_climate_fever_byte_for_byte_and_checks_it(server, tmp_path):
    need(CLIMATE_FEVER)
    base, _ = server
    ran = annotator("data", "fetch", "climate-fever", "--url", f"{base}/climate-fever.jsonl", "--to", str(tmp_path))
    assert ran.code == 0, ran.err
    written = tmp_path / "climate-fever.jsonl"
    assert ran.out.splitlines() == [
        f"Fetched climate-fever from {base}/climate-fever.jsonl: 3,152,039 bytes, SHA-256 {fetch.CLIMATE_FEVER.sha256} as expected.",
        f"  written to {written}",
        "  CLIMATE-FEVER: Diggelmann, Boyd-Graber, Bulian, Ciaramita, Leippold (2020), arXiv:2012.00614; cite the paper "
        "wherever the data is used.",
    ]
    assert written.read_bytes() == CLIMATE_FEVER.read_bytes()
    again = annotator("data", "fetch", "climate-fever", "--to", str(tmp_path))  # the pinned address is not asked
    assert again.code == 0 and again.out.startswith(f"{written} is already there (3,152,039 bytes, SHA-256 ")


def test_the_pinned_size_and_sha256_are_those_of_the_file_the_tests_read():
    path = need(CLIMATE_FEVER)
    assert path.stat().st_size == fetch.CLIMATE_FEVER.size
    assert hashlib.sha256(path.read_bytes()).hexdigest() == fetch.CLIMATE_FEVER.sha256


def test_the_default_folder_is_where_the_tests_look_first():
    from tests.conftest import CLIMATE_FEVER_PLACES, REPO

    assert CLIMATE_FEVER_PLACES[0] == REPO / "data" / "external" / "climate-fever.jsonl" == REPO / fetch.DEFAULT_FOLDER / "climate-fever.jsonl"
    assert CLIMATE_FEVER_PLACES[-1] == REPO.parent / "shared" / "data" / "climate-fever.jsonl"
