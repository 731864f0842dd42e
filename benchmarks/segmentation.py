"""Sentence splitters compared for cutting RAG answers into claims (a benchmark, not a test).

Each splitter cuts the lines of an answer inside annotator.segment's own frame
(`sentences_cut_by`: every line break ends a sentence, a leading bullet marker is dropped, spans
are kept over the answer as written); a Japanese line is given to every splitter with its
full-width ASCII written as ASCII (`fold_width`: ！→!, （→(, １２．５→12.5, one code point for one).
So the table compares the splitters' own sentence rules.

Accuracy: the hand-cut answers below (CASES: Japanese with 「」 holding 。, （）, 。！？, full-width
digits, bullets and line breaks; English with Dr., U.S., e.g., i.e., vs., a.m., et al., decimals,
bullets and line breaks). "sentences" counts the expected sentences a splitter found exactly
(same start and end), "answers" the answers it cut exactly right.

Speed: a generated corpus of answer-like texts, three sentences each (templates about climate,
company policy and medicine; a quarter of them as bullet lists), --answers per language. Each
splitter is timed on its first --sample answers (pysbd, much slower, on a tenth of them), as
sentences of the corpus per second; annotator.segment.sentences (language read from the text) on
all of them. Times are CPU seconds of this process, so other work on a shared machine does not
count. The floor is a bare regular-expression split of the same answers at . ! ? 。！？ (less than
any splitter does), measured in the same run.

Run: `python benchmarks/segmentation.py [--answers 100000] [--sample 20000] [--show]`
(--show prints the answers a splitter cuts wrongly). pysbd and fast-bunkai are needed only here:
`pip install -r benchmarks/requirements-segmentation.txt`; a splitter not installed is left out.
"""

from __future__ import annotations

import argparse
import random
import re
import time
from collections.abc import Callable, Iterable

from annotator.segment import fold_width, piece_ends, sentences, sentences_cut_by

CASES: dict[str, list[tuple[str, list[str]]]] = {
    "ja": [
        ("地球の平均気温は産業革命前から約1.1℃上昇しました。主な原因は化石燃料の燃焼です。",
         ["地球の平均気温は産業革命前から約1.1℃上昇しました。", "主な原因は化石燃料の燃焼です。"]),
        ("気象庁は「今年の夏は平年より暑い。熱中症に注意してほしい。」と発表しました。",
         ["気象庁は「今年の夏は平年より暑い。熱中症に注意してほしい。」と発表しました。"]),
        ("平均気温は１２．５度でした。前年より０．３度高い値です。",
         ["平均気温は１２．５度でした。", "前年より０．３度高い値です。"]),
        ("有給休暇は年２０日付与されます（入社６か月後から。試用期間は除く）。未使用分は翌年に繰り越せます。",
         ["有給休暇は年２０日付与されます（入社６か月後から。試用期間は除く）。", "未使用分は翌年に繰り越せます。"]),
        ("在宅勤務は認められていますか？はい、週２日まで認められています！",
         ["在宅勤務は認められていますか？", "はい、週２日まで認められています！"]),
        ("経費精算の手順は次のとおりです。\n・申請書を提出する\n・領収書を添付する\n・上長の承認を待つ",
         ["経費精算の手順は次のとおりです。", "申請書を提出する", "領収書を添付する", "上長の承認を待つ"]),
        ("対象者：\n1. 正社員\n2. 契約社員", ["対象者：", "正社員", "契約社員"]),
        ("この薬は１日３回服用します。\n食後に水で飲んでください。", ["この薬は１日３回服用します。", "食後に水で飲んでください。"]),
        ("「飲み忘れた場合はどうすればよいですか？」という質問がよくあります。次の服用時間が近い場合は１回分を飛ばしてください。",
         ["「飲み忘れた場合はどうすればよいですか？」という質問がよくあります。", "次の服用時間が近い場合は１回分を飛ばしてください。"]),
        ("CO2の排出量は2019年比で7.3%減少しました。これはCOVID-19の影響によるものです。",
         ["CO2の排出量は2019年比で7.3%減少しました。", "これはCOVID-19の影響によるものです。"]),
        ("本当ですか!?　信じられません。", ["本当ですか!?", "信じられません。"]),
        ("海面は１９０１年から２０１８年までに約２０ｃｍ上昇しました。（出典：IPCC第６次評価報告書。）",
         ["海面は１９０１年から２０１８年までに約２０ｃｍ上昇しました。", "（出典：IPCC第６次評価報告書。）"]),
        ("服用量は体重１ｋｇあたり１０ｍｇです。\r\n最大量は１日６０ｍｇです。", ["服用量は体重１ｋｇあたり１０ｍｇです。", "最大量は１日６０ｍｇです。"]),
        ("彼は「明日は晴れる」と言った。実際には雨だった。", ["彼は「明日は晴れる」と言った。", "実際には雨だった。"]),
        ("１．対象となる社員は正社員です。\n２．申請は人事部に行います。", ["対象となる社員は正社員です。", "申請は人事部に行います。"]),
        ("ワクチンは２回接種が必要です。１回目から３週間後に２回目を接種します。",
         ["ワクチンは２回接種が必要です。", "１回目から３週間後に２回目を接種します。"]),
        ("この規定は2024年4月1日から適用されます。詳細はhttps://example.com/policy.htmlを参照してください。",
         ["この規定は2024年4月1日から適用されます。", "詳細はhttps://example.com/policy.htmlを参照してください。"]),
        ("リスクは低いとされています（ただし高齢者は除く）。医師に相談してください。",
         ["リスクは低いとされています（ただし高齢者は除く）。", "医師に相談してください。"]),
        ("まとめると、①排出削減、②適応策、③資金支援の三つが柱です。", ["まとめると、①排出削減、②適応策、③資金支援の三つが柱です。"]),
        ("気温上昇を1.5℃に抑えるには、2030年までに排出を半減する必要があります。それは可能でしょうか？専門家の意見は分かれています。",
         ["気温上昇を1.5℃に抑えるには、2030年までに排出を半減する必要があります。", "それは可能でしょうか？", "専門家の意見は分かれています。"]),
        ("副作用：眠気（約５％。高齢者ではより多い）、頭痛。\n重い副作用はまれです。",
         ["副作用：眠気（約５％。高齢者ではより多い）、頭痛。", "重い副作用はまれです。"]),
        ("- 年間の排出量：約１１．５億トン\n- 目標：２０５０年に実質ゼロ", ["年間の排出量：約１１．５億トン", "目標：２０５０年に実質ゼロ"]),
    ],
    "en": [
        ("Dr. Smith leads the trial. She joined the hospital in 2019.", ["Dr. Smith leads the trial.", "She joined the hospital in 2019."]),
        ("The U.S. economy grew 2.5% in 2023. Inflation slowed.", ["The U.S. economy grew 2.5% in 2023.", "Inflation slowed."]),
        ("Global temperatures have risen by about 1.1 °C since pre-industrial times. Most of the rise came after 1975.",
         ["Global temperatures have risen by about 1.1 °C since pre-industrial times.", "Most of the rise came after 1975."]),
        ("Some greenhouse gases, e.g. methane, trap more heat than CO2. Methane stays in the air for about 12 years.",
         ["Some greenhouse gases, e.g. methane, trap more heat than CO2.", "Methane stays in the air for about 12 years."]),
        ("The main cause, i.e. burning fossil fuels, is well established. Deforestation adds to it.",
         ["The main cause, i.e. burning fossil fuels, is well established.", "Deforestation adds to it."]),
        ("Employees get 25 days of leave.\nUnused days expire in March.", ["Employees get 25 days of leave.", "Unused days expire in March."]),
        ("Benefits include:\n- health insurance\n- a pension plan\n- 25 days of leave",
         ["Benefits include:", "health insurance", "a pension plan", "25 days of leave"]),
        ("Steps:\n1. Submit the expense report.\n2. Attach the receipts.\n3. Wait for approval by your manager.",
         ["Steps:", "Submit the expense report.", "Attach the receipts.", "Wait for approval by your manager."]),
        ("The adult dose is 10 mg vs. 5 mg for children. Do not exceed it.",
         ["The adult dose is 10 mg vs. 5 mg for children.", "Do not exceed it."]),
        ("Take it at 8 a.m. and 8 p.m. every day. Do not double a missed dose.",
         ["Take it at 8 a.m. and 8 p.m. every day.", "Do not double a missed dose."]),
        ("Mr. Tanaka, the CFO, approved the policy. It starts on Jan. 15.",
         ["Mr. Tanaka, the CFO, approved the policy.", "It starts on Jan. 15."]),
        ("Why does sea level rise? Warmer water expands! Ice sheets also melt.",
         ["Why does sea level rise?", "Warmer water expands!", "Ice sheets also melt."]),
        ('The WHO says "Vaccines save lives." It recommends two doses.', ['The WHO says "Vaccines save lives."', "It recommends two doses."]),
        ("Arctic sea ice is shrinking (about 13% per decade). Summers may be ice-free by 2050.",
         ["Arctic sea ice is shrinking (about 13% per decade).", "Summers may be ice-free by 2050."]),
        ("The study by Smith et al. found no effect. A larger trial is planned.",
         ["The study by Smith et al. found no effect.", "A larger trial is planned."]),
        ("Version 2.1 of the policy applies from 1 April. See intranet.example.com for details.",
         ["Version 2.1 of the policy applies from 1 April.", "See intranet.example.com for details."]),
        ("Aspirin thins the blood... Ask a doctor before taking it.", ["Aspirin thins the blood...", "Ask a doctor before taking it."]),
        ("Approx. 40% of staff work remotely. The rest work on site.", ["Approx. 40% of staff work remotely.", "The rest work on site."]),
        ("The policy applies to full-time staff only.\r\nPart-timers are covered from 2025.",
         ["The policy applies to full-time staff only.", "Part-timers are covered from 2025."]),
        ("The drug was approved in the U.S. in 2020 and in the EU in 2021. It costs about $3.50 per tablet.",
         ["The drug was approved in the U.S. in 2020 and in the EU in 2021.", "It costs about $3.50 per tablet."]),
        ("* Wash your hands often.\n* Wear a mask in crowded places.", ["Wash your hands often.", "Wear a mask in crowded places."]),
        ("Dr. Lee (Ph.D., M.D.) leads the unit. She reports to Prof. Kim.", ["Dr. Lee (Ph.D., M.D.) leads the unit.", "She reports to Prof. Kim."]),
        ("The head office is in Washington, D.C. It employs 500 people.", ["The head office is in Washington, D.C.", "It employs 500 people."]),
        ("Claims need approval by a director, e.g. Ms. Chen. Late claims are refused.",
         ["Claims need approval by a director, e.g. Ms. Chen.", "Late claims are refused."]),
        ("Sick leave is reported to HR. Sick notes are needed after 3 days.",
         ["Sick leave is reported to HR.", "Sick notes are needed after 3 days."]),
    ],
}

Cut = Callable[[str], Iterable[int]]


def candidates() -> dict[str, dict[str, Cut]]:
    """splitter name -> {language: a line cutter}, for the splitters that are installed."""
    found: dict[str, dict[str, Cut]] = {}
    try:
        import sentencex
        found["sentencex 1.0 (MIT)"] = {
            "ja": lambda line: piece_ends(line, sentencex.segment("ja", fold_width(line))),
            "en": lambda line: piece_ends(line, sentencex.segment("en", line))}
    except ImportError:
        print("sentencex is not installed: left out")
    try:
        from ja_sentence_segmenter.split.simple_splitter import split_punctuation
        found["ja_sentence_segmenter 0.3 (MIT)"] = {"ja": lambda line: piece_ends(fold_width(line), split_punctuation(fold_width(line)))}
    except ImportError:
        print("ja_sentence_segmenter is not installed: left out")
    try:
        import pysbd
        segmenters = {lang: pysbd.Segmenter(language=lang, clean=False) for lang in ("ja", "en")}
        found["pysbd 0.3 (MIT)"] = {
            "ja": lambda line: piece_ends(line, segmenters["ja"].segment(fold_width(line))),
            "en": lambda line: piece_ends(line, segmenters["en"].segment(line))}
    except ImportError:
        print("pysbd is not installed: left out")
    try:
        from fast_bunkai import FastBunkai
        bunkai = FastBunkai()
        found["fast-bunkai 0.1 (Apache-2.0)"] = {"ja": lambda line: bunkai.find_eos(fold_width(line)),
                                                 "en": lambda line: bunkai.find_eos(line)}
    except ImportError:
        print("fast-bunkai is not installed: left out")
    return found


def expected_spans(answer: str, texts: list[str]) -> list[tuple[int, int]]:
    """Where the hand-cut sentences `texts` are in `answer`, in order."""
    spans, at = [], 0
    for text in texts:
        start = answer.index(text, at)
        at = start + len(text)
        spans.append((start, at))
    return spans


def accuracy(split: Callable[[str], list], language: str, show: bool, name: str) -> tuple[int, int]:
    """(sentences found exactly, answers cut exactly right) over CASES[language]."""
    right = whole = 0
    for answer, texts in CASES[language]:
        expected = expected_spans(answer, texts)
        found = [(s.start, s.end) for s in split(answer)]
        right += len(set(found) & set(expected))
        whole += found == expected
        if show and found != expected:
            print(f"  {name} [{language}] {[answer[a:b] for a, b in found]!r}")
    return right, whole


EN_SENTENCES = [
    "Global temperatures rose by {d}.{d} °C between {y} and {y2}.",
    "Dr. {name} of the {org} said the rule covers all staff, e.g. contractors and interns.",
    "Employees may carry over up to {n} days of leave, i.e. about {d} weeks.",
    "The U.S. agency estimates that emissions fell {n}% in {y}.",
    "Patients should take {n} mg twice a day, at 8 a.m. and 8 p.m.",
    "Is the drug safe for children under {n}?",
    "Sea levels rose about {n} cm since {y}, according to the {org}.",
    "The policy (version {d}.{d}) applies from {y} onwards!",
    "Side effects include headache, nausea and dizziness in about {d}.{d}% of patients.",
    "Mr. {name} approved a budget of ${n}.{d} million for the program.",
]
JA_SENTENCES = [
    "世界の平均気温は{y}年から{y2}年までに{d}.{d}℃上昇しました。",
    "{org}は「対象はすべての社員です。契約社員も含みます。」と説明しています。",
    "有給休暇は最大{n}日まで翌年に繰り越せます（ただし試用期間中は除く）。",
    "排出量は前年より１２．{d}％減りました。",
    "この薬は１日{d}回、食後に服用してください！",
    "子どもにも使えますか？",
    "海面は{y}年以降、約{n}cm上昇したと{org}は報告しています。",
    "副作用として頭痛や吐き気が{d}.{d}％の患者に見られます。",
    "{name}部長は{n}億円の予算を承認しました。",
    "在宅勤務は週{d}日まで認められています。",
]
NAMES = ["Tanaka", "Smith", "Garcia", "Lee", "Müller", "Okafor"]
ORGS = ["WHO", "IPCC", "NOAA", "the ministry", "HR"]
JA_NAMES = ["田中", "佐藤", "鈴木", "高橋"]
JA_ORGS = ["気象庁", "人事部", "厚生労働省", "IPCC"]


def corpus(language: str, n_answers: int, seed: int = 1) -> list[str]:
    """n_answers answer-like texts of three sentences each; a quarter of them as bullet lists."""
    rng = random.Random(seed)
    templates, names, orgs = (JA_SENTENCES, JA_NAMES, JA_ORGS) if language == "ja" else (EN_SENTENCES, NAMES, ORGS)
    joiner, bullet = ("", "\n・") if language == "ja" else (" ", "\n- ")
    answers = []
    for _ in range(n_answers):
        parts = [rng.choice(templates).format(d=rng.randint(1, 9), n=rng.randint(10, 999), y=rng.randint(1950, 2000),
                                              y2=rng.randint(2001, 2030), name=rng.choice(names), org=rng.choice(orgs))
                 for _ in range(3)]
        answers.append(parts[0] + bullet + bullet.join(parts[1:]) if rng.random() < 0.25 else joiner.join(parts))
    return answers


FLOOR = re.compile(r"(?<=[.!?。！？])\s*")


def timed(split: Callable[[str], object], answers: list[str]) -> float:
    """CPU seconds of this process to split every answer."""
    start = time.process_time()
    for answer in answers:
        split(answer)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=100_000, help="answers per language in the generated corpus")
    parser.add_argument("--sample", type=int, default=20_000, help="answers per language each splitter is timed on")
    parser.add_argument("--show", action="store_true", help="print the answers a splitter cuts wrongly")
    args = parser.parse_args()
    texts = {language: corpus(language, args.answers) for language in ("ja", "en")}
    n_cases = {language: (sum(len(t) for _, t in CASES[language]), len(CASES[language])) for language in CASES}

    rows = []
    splitters: dict[str, dict[str, Callable[[str], list]]] = {
        name: {lang: (lambda answer, cut=cut: sentences_cut_by(answer, cut)) for lang, cut in cuts.items()}
        for name, cuts in candidates().items()}
    splitters["annotator.segment (pick)"] = {lang: (lambda answer, lang=lang: sentences(answer, language=lang)) for lang in ("ja", "en")}
    for name, by_language in splitters.items():
        row = [name]
        for language in ("ja", "en"):
            split = by_language.get(language)
            if split is None:
                row += ["-", "-", "-"]
                continue
            right, whole = accuracy(split, language, args.show, name)
            sample = texts[language][: args.sample // 10 if name.startswith("pysbd") else args.sample]
            rate = 3 * len(sample) / timed(split, sample)
            row += [f"{right}/{n_cases[language][0]}", f"{whole}/{n_cases[language][1]}", f"{rate:,.0f}"]
        rows.append(row)

    header = ["splitter", "ja sentences", "ja answers", "ja sent/s", "en sentences", "en answers", "en sent/s"]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(str(cell).ljust(w) if i == 0 else str(cell).rjust(w) for i, (cell, w) in enumerate(zip(r, widths))))

    print(f"\nannotator.segment.sentences, language read from the text, {args.answers:,} answers of 3 sentences:")
    for language in ("ja", "en"):
        answers = texts[language]
        floor = timed(FLOOR.split, answers)
        seconds = timed(sentences, answers)
        three = sum(len(sentences(a)) == 3 for a in answers[: args.sample]) / min(len(answers), args.sample)
        print(f"  {language}: {seconds:.2f} s ({3 * len(answers) / seconds:,.0f} sentences/s); floor (a bare re.split) "
              f"{floor:.2f} s, ratio {seconds / floor:.1f}; {three:.1%} of the answers cut into their 3 sentences")


if __name__ == "__main__":
    main()
