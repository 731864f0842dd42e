"""The fixed vocabularies of the domain: label categories, severities, hold reasons, roles,
slices and splits. Each set is defined here and only here; everything else imports it.

Source: FEVER / SciFact / CLIMATE-FEVER categories (SUPPORTS / REFUTES / NOT ENOUGH INFO)
under their RAG names; see docs/domain.md, "Words".
"""

from __future__ import annotations

LABELS: tuple[str, ...] = ("support", "contradict", "insufficient")
"""The declared label categories, in display and keyboard-shortcut order (1, 2, 3)."""

SEVERITIES: tuple[str, ...] = ("leak", "legal", "amount_or_deadline", "other")
"""Severity of a claim that is not supported; a single `leak` blocks a release."""

HOLD_REASONS: tuple[str, ...] = ("gold_undetermined", "missing_logs", "permission_unknown")
"""Why a case cannot be labeled yet."""

HOLD_EXPIRES_AFTER_DAYS = 14
"""A hold no one lifts stops applying this many days after it was placed (workflow.hold_in_force)."""

ROLES: tuple[str, ...] = ("labeler", "adjudicator", "admin")

SLICES: tuple[str, ...] = (
    "normal",
    "paraphrase",
    "insufficient_evidence",
    "updated_document",
    "permission",
)
"""The pilot mix of slices. An import also accepts the slices its dataset already uses and those
declared with `--slices a,b` (a team's own groups); any other slice is refused, to catch typos."""

SPLITS: tuple[str, ...] = ("dev", "holdout")

BEHAVIORS: tuple[str, ...] = ("answer", "abstain", "clarify", "refuse")
"""What a RAG system did with a case in a run (a run file's `behavior`)."""

EXPECTED_BEHAVIORS: tuple[str, ...] = ("answer", "answer_with_citation", "abstain", "clarify", "refuse")
"""What a case expects the system to do (the RAG case field `expected_behavior`);
`answer_with_citation` is met by the behaviour `answer` with at least one cited passage."""

RUN_STATUSES: tuple[str, ...] = ("passed", "retrieval_failure", "generation_failure", "both")
"""The failure class of one case of a run (docs/domain.md, "failure class"), in display order."""

RETRIEVAL_FAILURE_LABELS: tuple[str, ...] = ("retrieval_miss", "partial_evidence", "stale_evidence", "unauthorized_evidence")
"""Failure labels that point at the retriever."""

GENERATION_FAILURE_LABELS: tuple[str, ...] = ("unsupported_claim", "answered_without_evidence", "over_abstain",
                                              "behavior_mismatch", "answer_mismatch")
"""Failure labels that point at the generator (the answer, its behaviour or a claim)."""

FAILURE_LABELS: tuple[str, ...] = RETRIEVAL_FAILURE_LABELS + GENERATION_FAILURE_LABELS
"""Every failure label of a case of a run, in display order."""

BLOCKING_SEVERITIES: tuple[str, ...] = ("leak", "legal", "amount_or_deadline")
"""Severities whose contradicted claim blocks a change whatever the averages say."""

GATE_DECISIONS: tuple[str, ...] = ("ship", "hold", "blocked")
"""What `run compare` decides for a candidate run against its baseline."""

RETRIEVAL_UNITS: tuple[str, ...] = ("passage", "doc")
"""What a run's retrieval is scored on: passage ids, or the documents they belong to (`--unit doc`)."""

REPORT_SPLITS: tuple[str, ...] = ("all", *SPLITS)
"""The cases a run report covers (`--split`)."""

RETRIEVAL_RULES: tuple[str, ...] = ("all", "any")
"""When a case's retrieval is ok: every relevant passage in the top k, or at least one (`--retrieval-rule`)."""

CLAIM_MODES: tuple[str, ...] = ("sentences", "whole")
"""How an answer without its own `claims` is cut (`--claims`): into its sentences, or kept whole."""

EXPORT_FORMATS: tuple[str, ...] = ("ragas",)
"""The shapes `release export --format` writes a release's gold in (annotator/release_export.py)."""

RAGAS_EXPORT_KEYS: tuple[str, ...] = (
    "case_id",
    "user_input",
    "response",
    "retrieved_contexts",
    "retrieved_context_ids",
    "reference",
    "reference_contexts",
    "slice",
    "split",
    "metadata",
    "claims",
    "gold_claims",
)
"""The keys of one record of `release export --format ragas`, in the order they are written
(annotator/release_export.py). The RAGAS reader (annotator/formats/ragas.py) reads those it knows
and drops the others (`gold_claims`: the released gold labels, which no labeler may see), saying so."""

CLIMATE_FEVER_LABELS: dict[str, str] = {
    "SUPPORTS": "support",
    "REFUTES": "contradict",
    "NOT_ENOUGH_INFO": "insufficient",
}
"""CLIMATE-FEVER vote names to our label names (Diggelmann et al., 2020, arXiv:2012.00614)."""

INDICATIVE_BELOW = 10
"""A slice with fewer items than this is reported as indicative only."""


def declared_categories(categories: str | None = None) -> tuple[str, ...]:
    """The category set agreement and validation run over.

    categories: None for the three labels, or a comma-separated list ("a,b,c") declared by the
        user; blanks around names are dropped.
    Returns the categories as a tuple in the given order.
    Raises ValueError when the list is empty or names a category twice.
    """
    if categories is None:
        return LABELS
    names = tuple(name.strip() for name in categories.split(",") if name.strip())
    if len(names) < 2:
        raise ValueError(f"declare at least two categories, got {categories!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"a category is declared twice in {categories!r}")
    return names
