"""Import refusals and reports, and release-verify problems, read in the user's language in the app
and exactly as before in English (what the command line prints and scripts parse): every refused
line's problem and fix is a message (annotator/messages.py), the Import page shows a refused file
and a partial import's report in Japanese naming file, line and field, and the Releases page
shows a tampered release's problems in Japanese."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import string
from pathlib import Path

import pytest
from sqlmodel import select

from annotator.db import init_db, session_scope
from annotator.errors import AnnotatorError, ImportFileError, ImportRowError, InvalidValueError, ReleaseVerifyError
from annotator.formats import refusal_message
from annotator.messages import MESSAGES, Message, english, recognize
from annotator.models import Claim
from annotator.release import check_release, problem_message, verify_release
from annotator.services import imports, releases, users
from annotator.services.access import OPERATOR
from annotator.services.labeling import save_label
from annotator.ui.i18n import error_text, message_text, use_language
from tests.test_messages_i18n import _errors, _open, app_db  # noqa: F401 - app_db: the Japanese app's fixture

PACKAGE = Path(__file__).resolve().parents[1] / "annotator"
DATA = Path(__file__).resolve().parent / "data"
MIXED = DATA / "import_partial_mixed.jsonl"  # bad lines 2 (JSON), 3 (slice), 4 (claim text)
JAPANESE_CHARACTER = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


# --- every refusal is a message ---------------------------------------------------------------------


def _plain_texts(node: ast.expr) -> bool:
    """Whether an argument is written as English text in place: a literal, an f-string or a sum of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.BinOp) and (_plain_texts(node.left) or _plain_texts(node.right))


def _texts_in_place(path: Path, errors: set[str]) -> list[tuple[int, str]]:
    """(line, call) of every refusal in `path` given as English text: an `errors` class called
    with a text, an ImportRowError or a row's .error(...) whose problem or fix is a text."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
        if name == "ImportRowError":
            texts = node.args[3:5]
        elif name == "error" and isinstance(node.func, ast.Attribute):
            texts = node.args[1:3]
        elif name in errors and isinstance(node.func, ast.Name):
            texts = node.args
        else:
            continue
        if any(_plain_texts(arg) for arg in texts):
            found.append((node.lineno, name))
    return found


def _modules(*names: str) -> list[str]:
    """The modules named, a package's (a folder's) one by one."""
    return [str(path.relative_to(PACKAGE)) for name in names
            for path in (sorted((PACKAGE / name).glob("*.py")) if (PACKAGE / name).is_dir() else [PACKAGE / name])]


IMPORT_MODULES = [name for name in _modules("formats", "services/imports", "services/runs.py")
                  if name != "formats/label_table.py"]  # the agreement table's English refusals (annotator agreement)
"""Every module of the readers and the import services: each refusal it raises is a message."""


@pytest.mark.parametrize("module, errors", [
    *((module, {"ImportFileError", "InvalidValueError"}) for module in IMPORT_MODULES),
    ("release.py", {"ReleaseVerifyError"}),
])
def test_every_refusal_of_an_import_or_a_verify_is_raised_with_a_message(module, errors):
    assert _texts_in_place(PACKAGE / module, errors) == []


def test_the_refusal_check_covers_every_reader_and_import_module():
    assert {"formats/reading.py", "formats/native.py", "formats/labels.py", "formats/judge_labels.py",
            "formats/runs.py", "services/runs.py"} <= set(IMPORT_MODULES)
    assert {"services/imports/shared.py", "services/imports/cases.py", "services/imports/uploads.py"} <= set(IMPORT_MODULES)


def test_the_check_for_texts_in_place_finds_them(tmp_path):
    source = tmp_path / "m.py"
    source.write_text('raise ImportRowError(p, 1, None, f"bad {x}", msg("msg.import.fix.keep_one"))\n'
                      'raise row.error("k", msg("msg.import.problem.null"), "Fix it")\n'
                      'raise ImportFileError("no " + name)\n'
                      'raise ImportFileError.of("msg.import.file.missing", path=p)\n')
    assert _texts_in_place(source, {"ImportFileError"}) == [(1, "ImportRowError"), (2, "error"), (3, "ImportFileError")]


@pytest.fixture
def service_db(tmp_path):
    engine = init_db(f"sqlite:///{tmp_path}/s.db")
    yield engine
    engine.dispose()


def _refusal(engine, path: Path) -> ImportRowError:  # noqa: ANN001
    with pytest.raises(ImportRowError) as refused:
        with session_scope(engine) as session:
            imports.import_cases(session, OPERATOR, path)
    return refused.value


@pytest.mark.parametrize("name", [
    "import_broken_json.jsonl", "import_case_no_claims.jsonl", "import_claim_missing_text.jsonl",
    "import_claim_no_passages.jsonl", "import_missing_column.csv", "import_oversized_text.jsonl",
    "import_passage_of_other_case.jsonl", "import_rag_ids_not_a_list.jsonl", "import_rag_unknown_evidence.jsonl",
    "import_rag_both_spellings.jsonl", "import_unclosed_quote.csv", "import_undecodable.csv", "import_id_space.csv",
    "import_case_id_twice.jsonl", "import_unknown_slice.jsonl", "import_case_without_split.jsonl",
    "import_cp932_byte_ff.csv", "import_late_conflict.jsonl", "import_passage_without_title.jsonl",
    "import_flat_rag_both_spellings.csv",
])
def test_a_refused_line_keeps_its_english_and_reads_in_japanese(service_db, name):
    error = _refusal(service_db, DATA / name)
    assert isinstance(error.problem, Message) and isinstance(error.fix, Message)
    said = refusal_message(error)
    assert str(said) == str(error)  # the command line's words, unchanged
    with use_language("ja"):
        japanese = message_text(said)
    assert japanese.startswith(f"{DATA / name} の {error.line} 行目")
    assert JAPANESE_CHARACTER.search(japanese.split(": ", 1)[1])
    assert str(error.problem) not in japanese and str(error.fix) not in japanese


def test_an_unknown_slice_is_refused_in_japanese_naming_line_field_and_the_new_slice(service_db):
    path = DATA / "import_unknown_slice.jsonl"
    error = _refusal(service_db, path)
    assert str(error).startswith(f"{path}, line 2, field 'slice': unknown slice 'nromal' (known: ")
    known = str(error.problem).split("(known: ")[1].rstrip(")")
    with use_language("ja"):
        assert message_text(refusal_message(error)) == (
            f"{path} の 2 行目、フィールド「slice」: 不明なスライス 'nromal' です（既知のスライス: {known}）。"
            "名前を直すか、新しいスライスを宣言してください: --slices nromal。")


def test_a_file_level_refusal_and_a_wrong_option_keep_their_english_and_have_japanese(service_db, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(ImportFileError) as refused:
        with session_scope(service_db) as session:
            imports.import_cases(session, OPERATOR, empty)
    with pytest.raises(InvalidValueError) as blank:
        imports.check_dataset_name(" ")
    assert [str(e.value) for e in (refused, blank)] == [
        f"{empty} is empty (0 bytes): export the data again, or name another file",
        "the dataset name ' ' is blank: give a name (e.g. --dataset pilot), or leave --dataset out to use the default",
    ]
    with use_language("ja"):
        assert [error_text(e.value) for e in (refused, blank)] == [
            f"{empty} は空です（0 バイト）。データをもう一度エクスポートするか、別のファイルを指定してください。",
            "データセット名 ' ' が空白です。名前を指定する（例: --dataset pilot）か、--dataset を省いて既定のデータセットを使ってください。",
        ]


# --- the report ---------------------------------------------------------------------------------------


def test_an_import_report_says_the_same_in_english_and_reads_in_japanese(service_db):
    with session_scope(service_db) as session:
        report = imports.import_cases(session, OPERATOR, MIXED, partial=True)
    assert report.summary_lines()[0] == ("Read import_partial_mixed.jsonl as UTF-8 (jsonl) into dataset 'default': "
                                         "2 cases, 2 claims, 2 passages")
    assert report.summary_lines()[-4] == "Skipped 3 bad lines (--partial):"
    with use_language("ja"):
        lines = [message_text(line) for line in report.summary_messages()]
    assert lines[0] == ("import_partial_mixed.jsonl を UTF-8（jsonl）としてデータセット「default」に読み込みました: "
                        "ケース 2 件, 主張 2 件, パッセージ 2 件")
    assert lines[1] == "  ケース: 新規 2 件、変更なし 0 件、変更あり 0 件"
    assert lines[-4] == "誤った行 3 行をスキップしました（--partial）:"
    assert lines[-2].startswith(f"  {MIXED} の 3 行目、フィールド「slice」: 不明なスライス 'nromal' です")


def test_the_people_an_import_creates_and_its_warnings_read_in_japanese(service_db):
    with session_scope(service_db) as session:
        imports.import_cases(session, OPERATOR, DATA / "import_native.jsonl")
        report = imports.import_labels(session, OPERATOR, DATA / "labels_native.csv")
        flat = imports.import_cases(session, OPERATOR, DATA / "import_flat_reordered.csv", dataset="flat")
    with use_language("ja"):
        assert [message_text(note) for note in report.notes()] == [
            "ユーザー alice, bob を作成しました（ロール: アノテーター、パスワードなし。管理者が設定するまでログインできません）"]
        warnings = [message_text(warning) for warning in flat.warning_messages()]
    assert flat.warnings[0].startswith(f"{DATA / 'import_flat_reordered.csv'}, line 1: column 'model_version' is not one of ")
    assert warnings[0].startswith(f"{DATA / 'import_flat_reordered.csv'} の 1 行目: 列「model_version」は ")
    assert warnings[0].endswith("のいずれでもありません。ケースのメタデータとして保存します")


def test_the_claims_a_vote_mode_import_skips_read_in_japanese():
    report = imports.ImportReport("cf.jsonl", "climate-fever", "UTF-8", "climate-fever", {"adjudications": {}},
                                  skipped={"not disputed (agreed)": 2, "disputed but no vote 3": 1, "elsewhere": 1})
    assert [str(note) for note in report.notes()] == [
        "Skipped 1 claims: disputed but no vote 3", "Skipped 1 claims: elsewhere", "Skipped 2 claims: not disputed (agreed)"]
    with use_language("ja"):
        assert [message_text(note) for note in report.notes()] == [
            "主張 1 件をスキップしました: 不一致ですが、票 3 がありません", "主張 1 件をスキップしました: elsewhere",
            "主張 2 件をスキップしました: 不一致ではありません（一致）"]


_RECOGNIZED = ("msg.import.warn.", "msg.import.skip.", "msg.verify.")


@pytest.mark.parametrize("key", sorted(key for key in MESSAGES if key.startswith(_RECOGNIZED)))
def test_every_message_kept_as_english_text_is_recognized_and_has_no_format_spec(key):
    from annotator.ui.catalog_ja import JAPANESE

    prefix = next(prefix for prefix in _RECOGNIZED if key.startswith(prefix))
    fields = {name: f"<{name}>" for _, name, _, _ in string.Formatter().parse(MESSAGES[key]) if name}
    assert recognize(english(key, **fields), prefix) == Message(key, fields)
    specs = [spec for text in (MESSAGES[key], JAPANESE[key]) for _, name, spec, _ in string.Formatter().parse(text)
             if name and spec]
    assert specs == []  # its fields come back as texts


# --- release verify -----------------------------------------------------------------------------------


def _entry(data: bytes) -> dict:
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def test_verify_problems_keep_their_english_and_read_in_japanese(tmp_path):
    folder = tmp_path / "gold-v1"
    folder.mkdir()
    for name, data in {"gold.jsonl": b"{}\n", "gold.csv": b"b\n", "extra.txt": b"x"}.items():
        (folder / name).write_bytes(data)
    (folder / "sub").mkdir()
    (folder / "manifest.json").write_text(json.dumps({"files": {"gold.jsonl": {"sha": 1}, "gold.csv": _entry(b"a\n"),
                                                                "gone.csv": _entry(b"")}}))
    changed = _entry(b"b\n")["sha256"]
    result = verify_release(folder)
    assert result.problems == (
        "gold.csv: changed (sha256 " + changed + ", manifest says " + _entry(b"a\n")["sha256"] + ")",
        "gold.jsonl: its manifest entry has no sha256",
        "gone.csv: missing",
        "gold.parquet: not listed in manifest.json",
        "extra.txt: unexpected file (not listed in manifest.json)",
        "sub: unexpected folder (not listed in manifest.json)",
    )
    messages = [problem_message(problem) for problem in result.problems]
    assert all(isinstance(found, Message) for found in messages)
    assert [str(found) for found in messages] == list(result.problems)
    with use_language("ja"):
        assert [message_text(found) for found in messages][1:] == [
            "gold.jsonl: マニフェストの項目に sha256 がありません",
            "gone.csv: ありません",
            "gold.parquet: manifest.json に載っていません",
            "extra.txt: 想定外のファイルです（manifest.json に載っていません）",
            "sub: 想定外のフォルダーです（manifest.json に載っていません）",
        ]
    with pytest.raises(ReleaseVerifyError) as refused:
        check_release(folder)
    assert str(refused.value) == f"release {folder} does not match its manifest: " + "; ".join(result.problems)
    with use_language("ja"):
        assert error_text(refused.value).startswith(f"リリース {folder} はマニフェストと一致しません: gold.csv: 変更されています")


def test_a_missing_manifest_and_a_stored_release_without_a_hash_read_in_japanese(tmp_path):
    (tmp_path / "gold-v1").mkdir()
    [problem] = verify_release(tmp_path / "gold-v1").problems
    assert problem == f"manifest.json: missing in {tmp_path / 'gold-v1'}"
    unrecorded = ("manifest.json: the database records no SHA-256 for release 'gold-v1', so the manifest itself "
                  "cannot be checked")  # services/releases.py's words
    with use_language("ja"):
        assert message_text(problem_message(problem)) == f"manifest.json: {tmp_path / 'gold-v1'} にありません"
        assert message_text(problem_message(unrecorded)) == (
            "manifest.json: データベースにリリース「gold-v1」の SHA-256 の記録がないため、マニフェストそのものは確認できません")
        assert message_text(problem_message("a problem from elsewhere")) == "a problem from elsewhere"


# --- the pages, in a Japanese browser ------------------------------------------------------------------


def _upload(at, file_name: str, data: bytes, kind: str = "cases"):  # noqa: ANN001, ANN202
    at.radio(key="imports.kind").set_value(kind).run()
    at.file_uploader(key="imports.file").set_value((file_name, data, "application/octet-stream")).run()
    at.button(key="imports.check").click().run()
    assert not at.exception
    return at


def test_the_import_page_refuses_a_bad_file_in_japanese_naming_file_line_and_field(app_db):
    at = _open("root").switch_page("views/imports.py").run()
    _upload(at, "mixed.jsonl", MIXED.read_bytes())
    [error] = _errors(at)
    assert error.startswith("このファイルは全体として拒否されます。")
    assert "mixed.jsonl の 2 行目: JSON として正しくありません" in error
    assert "not valid JSON" not in error and "line 2" not in error
    [bad] = [frame.value.to_dict("records") for frame in at.dataframe]
    assert [(row["ファイル"], row["行"], row["フィールド"]) for row in bad] == [
        ("mixed.jsonl", 2, "-"), ("mixed.jsonl", 3, "slice"), ("mixed.jsonl", 4, "claims[0].text")]
    assert bad[1]["問題と対処"].startswith("不明なスライス 'nromal' です（既知のスライス: ")
    assert bad[1]["問題と対処"].endswith("）。名前を直すか、新しいスライスを宣言してください: --slices nromal。")
    assert bad[2]["問題と対処"] == "値がないか、空です。すべてのレコードに空でない「text」を指定してください。"


def test_the_import_page_shows_a_partial_import_s_report_in_japanese(app_db):
    at = _open("root").switch_page("views/imports.py").run()
    at.checkbox(key="imports.partial").check().run()
    _upload(at, "mixed.jsonl", MIXED.read_bytes())
    assert _errors(at) == []
    assert [info.value for info in at.info] == [
        "mixed.jsonl を UTF-8（jsonl）としてデータセット「default」に読み込みました: ケース 2 件, 主張 2 件, パッセージ 2 件"]
    assert [row["レコード"] for row in at.table[0].value.to_dict("records")] == ["ケース", "主張", "パッセージ"]
    skipped = at.dataframe[0].value.to_dict("records")
    assert skipped[0]["問題と対処"].startswith("JSON として正しくありません: ")


def test_the_import_page_refuses_a_labels_line_in_japanese(app_db):
    at = _open("root").switch_page("views/imports.py").run()
    _upload(at, "labels.csv", (DATA / "labels_unknown_claim.csv").read_bytes(), kind="labels")
    [bad] = [frame.value.to_dict("records") for frame in at.dataframe]
    assert (bad[0]["ファイル"], bad[0]["行"], bad[0]["フィールド"]) == ("labels.csv", 2, "claim_id")
    assert bad[0]["問題と対処"] == "ID が「n1-c1」の主張はありません。先に主張のケースをインポートするか、ID を直してください。"


def _tampered_release(engine) -> None:  # noqa: ANN001 - an Engine
    """Release gold-v1 of the pilot, then gold.csv changed and notes.txt added in its folder."""
    with session_scope(engine) as session:
        for name in ("alice", "bob"):
            labeler = users.get_user(session, name)
            for claim in session.exec(select(Claim)).all():
                save_label(session, labeler, claim.id, "support")
        created = releases.create_release(session, OPERATOR, "gold-v1", only_final=True, out_dir=Path("data/releases"),
                                          n_bootstrap=100)
    folder = Path(created.path)
    with open(folder / "gold.csv", "a", encoding="utf-8") as gold:
        gold.write("tampered\n")
    (folder / "notes.txt").write_text("x")


def test_a_stored_release_that_no_longer_matches_keeps_its_english_and_reads_in_japanese(app_db):
    _tampered_release(app_db)
    with session_scope(app_db) as session, pytest.raises(ReleaseVerifyError) as refused:
        releases.check_stored_release(session, OPERATOR, "gold-v1")
    english_text = str(refused.value)
    assert english_text.startswith("release 'gold-v1' (") and "does not match what was released: gold.csv: changed" in english_text
    assert "; notes.txt: unexpected file (not listed in manifest.json)" in english_text
    with use_language("ja"):
        text = error_text(refused.value)
    assert text.startswith("リリース「gold-v1」（") and "一致しません: gold.csv: 変更されています（sha256 " in text
    assert "; notes.txt: 想定外のファイルです（manifest.json に載っていません）" in text
    assert "changed" not in text and "unexpected" not in text


def test_the_releases_page_shows_verify_problems_in_japanese(app_db):
    _tampered_release(app_db)
    at = _open("root").switch_page("views/releases.py").run()
    at.button(key="releases.verify").click().run()
    assert not at.exception
    [error] = _errors(at)
    lines = error.split("\n")
    assert lines[0] == "リリース gold-v1 はマニフェストと一致しません:"
    assert any(line.startswith("- gold.csv: 変更されています（sha256 ") for line in lines)
    assert "- notes.txt: 想定外のファイルです（manifest.json に載っていません）" in lines
    assert "changed" not in error and "unexpected" not in error


def test_an_error_without_a_message_is_shown_as_raised():
    plain = AnnotatorError("a text from elsewhere")
    assert refusal_message(plain) == "a text from elsewhere"


def test_a_fix_showing_a_json_object_shows_its_braces_once_in_japanese(service_db):
    error = _refusal(service_db, DATA / "import_broken_json.jsonl")
    assert str(error.fix) == 'Write each record as one JSON object on one line, e.g. {"case_id": "c1", ...}'
    with use_language("ja"):
        assert message_text(error.fix) == '各レコードを 1 行に 1 つの JSON オブジェクトとして書いてください。例: {"case_id": "c1", ...}'


@pytest.mark.parametrize("key", sorted(MESSAGES))
def test_a_message_without_fields_escapes_no_brace(key):
    """t() shows a text without fields as it is: "{{" would be shown doubled."""
    from annotator.ui.catalog_ja import JAPANESE

    for text in (MESSAGES[key], JAPANESE[key]):
        if not [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]:
            assert "{{" not in text and "}}" not in text
