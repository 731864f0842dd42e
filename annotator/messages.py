"""The messages the core and the services give people, in English, one template per stable key.

A service says something to a person (a refusal, "Labeler 1", a history line) as a `Message`:
a key of MESSAGES and its fields. Its English text is `str(message)`, which is what the command
line prints; the app shows the same key through its catalogs (annotator.ui.i18n: the English
here, the Japanese in annotator/ui/catalog_ja.py), so a refusal reads in the user's language. An
error carries its message (errors.AnnotatorError.of): `error.key`, `error.fields`, and str(error)
is the English text.

A field may itself be a Message (written in the same language) or a `Term`: a word of a
vocabulary (a label value, a state, a hold reason, a role), written as it is in English and by
the app as its catalog writes it ("value.support" -> 支持), or `Joined` (several of these with a
separator). Any other field is written as it is. A message kept only as its English text (an
agreement report's notes, in its JSON) is found again by `recognize`.

Keys start with "msg." so that they never clash with the app's own keys. tests/test_messages_i18n.py
checks that every key used in the code is here and that every one has a Japanese text with the
same fields.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Term:
    """A vocabulary word as a message field: `kind` is the catalog prefix ("value", "severity",
    "hold", "role", "state") and `word` the stored word, the English text ("support")."""

    kind: str
    word: str

    def __str__(self) -> str:
        return self.word

    def __format__(self, spec: str) -> str:
        return format(self.word, spec)


@dataclass(frozen=True)
class Joined:
    """Several values as one field, written one after the other with `separator` between them:
    each a Message, a Term or a text ("disputed 2, on_hold 1")."""

    parts: tuple[object, ...]
    separator: str = ", "

    def __str__(self) -> str:
        return self.separator.join(str(part) for part in self.parts)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


@dataclass(frozen=True)
class Message:
    """Something to tell a person: `key` (of MESSAGES) and the fields its template names.
    str() is the English text. (Fields are a plain dict, so that a message, and an error holding
    one, can be copied and pickled; nobody changes them.)"""

    key: str
    fields: Mapping[str, object] = field(default_factory=dict)

    def __str__(self) -> str:
        return english(self.key, **self.fields)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def msg(key: str, **fields: object) -> Message:
    """The message `key` with `fields`. Raises KeyError for a key MESSAGES lacks."""
    if key not in MESSAGES:
        raise KeyError(f"no message {key!r} in annotator.messages.MESSAGES")
    return Message(key, dict(fields))


def english(key: str, **fields: object) -> str:
    """The English text of the message `key` with `fields` filled in."""
    return MESSAGES[key].format(**fields)


def seconds(n: int) -> Message:
    """A duration in whole seconds, as a field: "1 second", "5 seconds"."""
    return msg("msg.second" if n == 1 else "msg.seconds", n=n)


def recognize(text: str, prefix: str) -> Message | None:
    """The message among those whose keys start with `prefix` that reads `text` in English, with
    its fields as the texts found in their places; None when none does. For messages kept as
    English text (an agreement report's reasons, in its JSON): the app writes them in the
    user's language again."""
    for key in MESSAGES:
        if key.startswith(prefix):
            found = _pattern(key).fullmatch(text)
            if found is not None:
                return Message(key, found.groupdict())
    return None


@functools.cache
def _pattern(key: str) -> re.Pattern[str]:
    """A regular expression matching the English text of `key` with any field values."""
    parts, seen = [], set()
    for literal, name, _spec, _conversion in string.Formatter().parse(MESSAGES[key]):
        parts.append(re.escape(literal))
        if name is not None:
            parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
            seen.add(name)
    return re.compile("".join(parts), re.DOTALL)


def shortened(text: str, limit: int = 80) -> str:
    """`text` as a message field: its first `limit` characters and "…" when it is longer (an id
    typed into an address may be thousands of characters long; echoing it whole helps nobody)."""
    return text if len(text) <= limit else text[:limit] + "…"


def field_name(name: str) -> Message | str:
    """The name of an input field (rationale, note, reason, guideline) as a message field; a name
    without a message of its own is written as it is."""
    key = f"msg.field.{name}"
    return msg(key) if key in MESSAGES else name


MESSAGES: dict[str, str] = {
    # --- who may do what (services/access.py), logging in and the session (services/users.py)
    "msg.denied.label": "only a labeler assigned to the case may label it",
    "msg.denied.adjudicate": "only an adjudicator may decide disputed claims",
    "msg.denied.see_agreement": "only admins may see agreement reports (they name labelers)",
    "msg.denied.see_status": "only admins and adjudicators may see the project status",
    "msg.denied.import": "only an admin may import data",
    "msg.denied.assign": "only an admin may assign cases",
    "msg.denied.release": "only an admin may create, download or verify gold releases",
    "msg.denied.manage_users": "only an admin may manage users",
    "msg.denied.see_history": "only an admin may see a claim's history",
    "msg.denied.correct_labels": "only an admin may correct a labeler's label",
    "msg.login_again": "You are no longer logged in (or your account was disabled); log in again.",
    "msg.login_wrong": "unknown user name or wrong password (or the account has no password yet)",
    "msg.login_wrong_wait": "unknown user name or wrong password (or the account has no password yet); "
                            "wait {wait} before trying again",
    "msg.login_throttled": "too many failed logins for this name: wait {wait}, then try again",
    "msg.second": "{n} second",
    "msg.seconds": "{n} seconds",
    "msg.unknown_language": "unknown language {locale}; use one of {choices} (or none to follow the browser)",
    # --- the labeler's queue and the claim (services/labeling.py, drafts.py, home.py)
    "msg.no_claim_key": "no claim with key {claim_pk}",
    "msg.no_case_key": "no case with key {case_pk}",
    "msg.not_in_queue": "this claim is not in your queue",
    "msg.claim_not_in_queue": "claim '{claim_id}' is not in your queue",
    "msg.claim_link_many": "the address names {n} claims (claim=...): open one claim at a time",
    "msg.claim_not_waiting": "claim '{claim_id}' is not waiting for your decision",
    "msg.claim_not_in_queue_nor_waiting": "claim '{claim_id}' is neither in your queue nor waiting for your decision",
    "msg.claim_in_several_datasets": "claim '{claim_id}' is in more than one of your datasets ({datasets}); open it from your queue, or add &dataset=NAME to the address (claim=...&dataset=...)",
    # --- saving a label
    "msg.on_hold": "this case is on hold; it cannot be labeled until the hold is lifted",
    "msg.label_removed": "your label on this claim was removed meanwhile; your input is kept, save again",
    "msg.label_changed_elsewhere": "your label on this claim was changed elsewhere (another tab?) since you opened it; "
                                   "your input is kept: reload the claim to see the saved label, then save again",
    "msg.label_locked": "the second label on this claim has landed; it now goes to adjudication if they differ",
    "msg.content_changed": "this claim's text or passages changed after you opened it (an import with --update); your "
                           "input is kept: read the claim again, then save",
    "msg.guideline_changed": "the labeling guideline is now version '{current}', published after you were shown "
                             "version '{shown}'; your input is kept: read the new version in the side panel, then save "
                             "again",
    "msg.support_no_severity": "a supported claim has no severity; clear it or choose another label",
    "msg.unknown_label": "unknown label '{value}'; use one of {choices}",
    "msg.unknown_severity": "unknown severity '{severity}'; use one of {choices}",
    "msg.passages_not_shown": "cited passages {passage_ids} are not shown with this claim",
    # --- holds
    "msg.unknown_hold_reason": "unknown hold reason '{reason}'; use one of {choices}",
    "msg.hold_not_assigned": "you may hold only cases assigned to you",
    "msg.lift_not_allowed": "only an admin or the person who placed the hold may lift it",
    # --- text people type (annotator/text.py)
    "msg.unstorable_character": "the {field} holds the character {character} at position {position}, which cannot "
                                "be stored; remove it",
    "msg.invisible_in_name": "the name holds the invisible character {character} at position {position}; type the "
                             "name again without it",
    "msg.text_too_long": "the {field} is {length:,} characters long, over the limit of {limit:,}; shorten it",
    "msg.field.rationale": "rationale",
    "msg.field.note": "note",
    "msg.field.reason": "reason",
    "msg.field.guideline": "guideline",
    # --- adjudication (services/adjudication.py)
    "msg.labeler_n": "Labeler {n}",
    "msg.adjudicator_labels_it": "you label this claim, so another adjudicator must decide it",
    "msg.not_disputed": "this claim is {state}, not disputed: there is nothing to decide",
    "msg.decided_meanwhile": "this claim was decided by someone else meanwhile; your input is kept: reload to see it",
    "msg.adjudication_rationale_needed": "write a rationale for the final label: why the labels are decided so "
                                         "(it is recorded with the decision and released with it); nothing was saved",
    # --- assigning cases (services/labeling.py)
    "msg.assign_different_labelers": "name different labelers, got {names}",
    "msg.assign_none": "none",
    "msg.assign_not_labeler": "user '{name}' is not a labeler; give them the role first",
    "msg.assign_disabled": "user '{name}' is disabled; enable them first or choose another labeler",
    # --- users (services/users.py)
    "msg.unknown_role": "unknown role {roles}; use one of {choices}",
    "msg.no_user": "no user named '{name}'; add one with `annotator users add {name} --role labeler`",
    "msg.user_needs_name": "a user needs a name",
    "msg.user_exists": "a user named '{name}' exists already",
    "msg.user_exists_case": "a user named '{name}' exists already (names differ only in case)",
    "msg.last_admin": "'{name}' is the last active admin who can log in; make someone else an admin first",
    "msg.disable_self": "you cannot disable your own account; ask another admin",
    "msg.password_short": "a password needs at least {n} characters",
    # --- login sessions (services/login_sessions.py)
    "msg.session_idle_range": "the idle expiry must be from {low} to {high} hours, not {value}",
    "msg.session_absolute_range": "the absolute expiry must be from {low} to {high} days, not {value}",
    "msg.session_idle_longer": "the idle expiry ({idle} hour(s)) cannot be longer than the absolute expiry "
                               "({absolute} day(s)); shorten the idle expiry or lengthen the absolute one",
    # --- the labeling guideline (services/guidelines.py)
    "msg.guideline.no_admin": "a guideline is published by a named admin: give the admin's user name (--by NAME)",
    "msg.guideline.admin_only": "only an admin may publish a labeling guideline",
    "msg.guideline.empty": "the guideline text is empty; write or upload the guideline's Markdown",
    "msg.guideline.version_exists": "guideline version '{version}' exists already; published versions are never "
                                    "changed: give the new text a new version name",
    "msg.guideline.version_case": "guideline version '{version}' differs only in case from the published version "
                                  "'{taken}'; published versions are never changed: give the new text a new version name",
    "msg.guideline.unchanged": "this text is the current guideline, version '{version}', unchanged; edit it before "
                               "publishing a new version",
    "msg.guideline.published_meanwhile": "guideline version '{version}' was published meanwhile by someone else; "
                                         "give your text another version name",
    "msg.guideline.unknown": "no guideline version '{version}'; published: {known}",
    "msg.guideline.none_yet": "none yet",
    "msg.guideline.utf16": "{source}: UTF-16 (or a file with NUL bytes) is not supported: save the guideline as "
                           "UTF-8 text and try again",
    "msg.guideline.not_utf8": "{source}: not UTF-8 text (byte {byte} at byte {position}): save the guideline as UTF-8 "
                              "and try again",
    "msg.guideline.empty_file": "{source} is empty: write the guideline's Markdown in it, or name another file",
    "msg.guideline.version_empty": "the guideline version is empty; give it a name such as v1 or 2026-11",
    "msg.guideline.version_long": "the guideline version has {n} characters; use at most {most}",
    # --- gold releases (services/releases.py)
    "msg.release.unknown": "no release named '{name}' (releases: {names})",
    "msg.release.none": "none",
    "msg.release.mismatch": "release '{name}' ({path}) does not match what was released: {problems}",
    "msg.release.folder_gone": "the folder of release '{name}' is gone: {folder}",
    "msg.release.still_to_label": "you cannot {doing}: it holds claims you are assigned to label and have not "
                                  "labeled yet, and its files show the other labels on them; label them first, or "
                                  "ask another admin",
    "msg.release.scope_still_to_label": "you cannot {doing}: its scope holds claims you are assigned to label and have "
                                        "not labeled yet, and a release shows the other labels on them (its files, or its "
                                        "counts of what is left out); label them first, or ask another admin",
    "msg.release.doing_create": "create this release",
    "msg.release.doing_download": "download release '{name}'",
    "msg.release.doing_compare": "compare releases '{old}' and '{new}'",
    "msg.release.finished_exists": "{finished}. Check it with `annotator release verify --release {name}`; releases "
                                   "are immutable: to create another, choose a new name",
    "msg.release.exists": "a release named '{name}' exists already; releases are immutable: choose a new name",
    "msg.release.exists_case": "a release named '{taken}' exists already and '{name}' differs from it only in case "
                               "(the same folder on case-insensitive file systems): choose a new name",
    "msg.release.exists_meanwhile": "a release named '{name}' exists already; choose a new name",
    "msg.release.where_dataset": "dataset '{name}'",
    "msg.release.where_any": "any dataset",
    "msg.release.no_claims": "there is no claim in {where} to release; import cases first",
    "msg.release.not_final": "{n} of {total} claims in {where} are not final ({counts}): label, adjudicate or lift "
                             "the holds on them first, or release only the agreed and adjudicated claims (\"only "
                             "final\" in the app, --only-final on the command line)",
    "msg.release.state_count": "{state} {n}",
    "msg.release.none_final": "no agreed or adjudicated claim in {where} to release ({counts})",
    "msg.release.write_failed": "release '{name}' is recorded, but its folder could not be put in place ({error}); "
                                "its complete files are in {temp}: `annotator release verify --release {name}` "
                                "finishes it",
    "msg.release.bad_name": "invalid release name {name}: use letters, digits, '.', '_' and '-' (not starting with "
                            "'.' or '-', not ending with '.', not a reserved device name such as 'con', at most {most} "
                            "characters), e.g. gold-v1",
    "msg.release.out_dir_is_file": "cannot write the release folder {folder}: {out_dir} is a file, not a folder; "
                                   "nothing was written",
    "msg.release.folder_exists": "release folder {folder} exists already; releases are immutable: choose a new name",
    "msg.release.folder_exists_case": "release folder {folder} exists already and its name differs from '{name}' only "
                                      "in case (the same folder on case-insensitive file systems): choose a new name",
    # --- finding datasets, cases and claims by id (services/lookup.py; kinds "claim" and "case")
    "msg.lookup.no_dataset": "no dataset named '{name}' (datasets: {names})",
    "msg.lookup.no_claim": "no claim with id '{id}'",
    "msg.lookup.no_claim_in": "no claim with id '{id}' in dataset '{dataset}'",
    "msg.lookup.ambiguous_claim": "claim id '{id}' exists in more than one dataset; name one with --dataset",
    "msg.lookup.no_case": "no case with id '{id}'",
    "msg.lookup.no_case_in": "no case with id '{id}' in dataset '{dataset}'",
    "msg.lookup.ambiguous_case": "case id '{id}' exists in more than one dataset; name one with --dataset",
    # --- correcting a label (services/corrections.py)
    "msg.correct.own_claim": "you label this claim yourself, so another admin must correct its labels (revise your "
                             "own label on the Label page)",
    "msg.correct.no_label": "'{labeler}' has no label on claim '{claim_id}' (labeled by: {who})",
    "msg.correct.nobody": "nobody",
    "msg.correct.reason_needed": "give a reason for the correction: it is recorded in the claim's history",
    "msg.correct.stale": "{name}'s label on claim '{claim_id}' changed since you read it (revision {expected}, now "
                         "{revision}); nothing was corrected: look at the stored label, then correct it again",
    # --- why a coefficient or an interval is missing (agreement.py). A report holds these as English
    # texts (its JSON, a release's manifest); the app finds their keys again with `recognize`.
    "msg.agreement.no_ratings": "there are no ratings",
    "msg.agreement.cohen_two_raters": "Cohen's kappa is for exactly two raters; there are {n} (each labeler pair has "
                                      "its own kappa)",
    "msg.agreement.none_rated_by_both": "no item was rated by both raters",
    "msg.agreement.both_put_every_item": "both raters put every item in {category}: expected agreement is 1 (0/0)",
    "msg.agreement.no_pairable_item": "no item has two or more ratings (0/0)",
    "msg.agreement.every_rating": "every rating is {category}: expected agreement is 1 (0/0)",
    "msg.agreement.every_pairable_rating": "every pairable rating is {category}: expected disagreement is 0 (0/0)",
    "msg.agreement.undefined": "undefined (0/0)",
    "msg.agreement.coefficient_undefined": "the coefficient is undefined",
    "msg.agreement.no_resamples": "no bootstrap resamples were drawn",
    "msg.agreement.undefined_in_resamples": "the coefficient is undefined (0/0) in {share} of the bootstrap resamples, "
                                            "so an interval would hold only for data like the others; label more items",
    "msg.agreement.no_category_rating": "no rating on an item with two or more ratings is {category} (0/0)",
    "msg.agreement.whole_range": "it runs from 0 (or below) to 1, so it rules nothing out: too few items to bound "
                                 "it; label more items",
    "msg.agreement.analytic_few_items": "a large-sample interval needs at least {below} items; there are {n}",
    "msg.agreement.analytic_zero_variance": "its large-sample variance is zero (as when every item is labeled alike), "
                                            "which gives no interval",
    # --- calibrating a judge against gold (calibration.py): refused input
    "msg.calibration.lengths": "give as many case ids, gold labels and judge labels: {n_cases}, {n_gold} and {n_judge} "
                               "were given",
    "msg.calibration.gold_label": "the gold label {label} at row {row} (case {case_id}) is not one of the declared "
                                  "categories ({categories})",
    "msg.calibration.judge_label": "the judge label {label} at row {row} (case {case_id}) is not one of the declared "
                                   "categories ({categories})",
    "msg.calibration.case_missing": "the case id at row {row} is missing or blank; give every claim its case",
    "msg.calibration.categories": "declare at least two categories, each once; got {categories}",
    "msg.calibration.positive": "the passing label {positive} is not one of the declared categories ({categories})",
    "msg.calibration.bootstrap": "use 0 bootstrap resamples (no intervals) or at least {minimum} (1,000 recommended), "
                                 "not {n}",
    "msg.calibration.ppi_lengths": "give the judge's and the gold's answers for the same gold claims: {n_judge} and "
                                   "{n_gold} were given",
    "msg.calibration.not_binary": "{name} must hold 0/1 (or false/true) values only; row {row} holds {value}",
    "msg.calibration.alpha": "alpha must be between 0 and 1 (0.05 for a 95% interval), not {alpha}",
    "msg.calibration.slice_missing": "the slice at row {row} of {name} is missing",
    # --- why a judge's rate, interval or corrected estimate is missing (calibration.py). A report holds these as
    # English texts (its JSON); the app finds their keys again with `recognize`.
    "msg.calibration.no_claims": "no claim has both a gold and a judge label (0/0)",
    "msg.calibration.no_gold_negative": "every claim's gold label is {positive}, so no claim can pass falsely (0/0)",
    "msg.calibration.no_gold_positive": "no claim's gold label is {positive}, so no claim can fail falsely (0/0)",
    "msg.calibration.one_category": "the gold and the judge put every claim in {category}: expected agreement is 1 (0/0)",
    "msg.calibration.one_case": "all the claims are in one case, and resampling cases needs two or more",
    "msg.calibration.no_labeled": "no gold claim has a judge label (n = 0): nothing corrects the judge",
    "msg.calibration.no_unlabeled": "the judge labeled no claim outside the gold (N = 0): read the gold-only rate",
    "msg.calibration.judge_constant": "the judge gives every claim the same answer, so lambda is 0/0; the estimate is the "
                                      "gold-only rate",
    "msg.calibration.zero_variance": "the estimate's variance is zero (the gold and the judge each give one answer "
                                     "throughout), so there is no normal interval",
    "msg.judge.not_a_release": "{folder} holds no manifest.json: it is not a release folder (give a release's folder, or a stored release's name)",
    "msg.judge.holdout_unstored": "{folder} is not a release this database holds (its manifest matches none): its holdout viewings could not be counted; give the stored release's name",
    "msg.judge.warn_unstored": "{folder} is not a release this database holds (its manifest matches none): only its own manifest vouches for its gold",
    "msg.judge.warn_no_overlap": "judge run {run} (dataset {dataset}) labels no claim of this release (datasets {datasets}): is it the right release?",
    "msg.judge.warn_subset": "the judge labeled {n} of the {of} gold claims: the figures cover those only, and speak for the rest only if they were not chosen",
    "msg.judge.warn_no_holdout": "the release holds no holdout claims: nothing to show, and no viewing was recorded",
    "msg.judge.warn_left_out": "{n} of the {of} claims outside the release are claims it left out ({states}): they are not a random sample, so the corrected rate's assumption does not hold for them",
    "msg.calibration.degenerate_interval": "every resample gives {value}: the bootstrap has nothing to vary (no case with the other outcome); read the analytic interval",
    "msg.calibration.no_slices": "the gold claims or the judged-only claims are none: their slice mixes cannot be compared",
    # --- a claim's history (services/history.py): who, what, and each part of the change
    "msg.history_still_to_label": "you label claim '{claim_id}' and have not labeled it yet: its history would "
                                  "show the other labels; label it first, or ask another admin",
    "msg.history.no_actor": "command line / import",
    "msg.history.user_key": "user #{key}",
    "msg.history.label_created": "label created",
    "msg.history.label_revised": "label revised",
    "msg.history.label_corrected": "label corrected by an admin",
    "msg.history.adjudication_decided": "adjudication decided",
    "msg.history.adjudication_revised": "adjudication revised",
    "msg.history.hold_placed": "case put on hold",
    "msg.history.hold_lifted": "case hold lifted",
    "msg.history.case_assigned": "case assigned",
    "msg.history.claim_changed": "claim changed by import --update",
    "msg.history.passage_changed": "passage changed by import --update",
    "msg.history.case_changed": "case changed by import --update",
    "msg.history.released": "released in a gold release",
    "msg.history.other": "{entity} {action}",
    "msg.history.set": "{field}: {value}",
    "msg.history.changed": "{field}: {before} -> {after}",
    "msg.history.no_change": "no visible change",
    "msg.history.release": "release: {name}; gold label: {gold} ({resolution})",
    "msg.history.field.labeler": "labeler",
    "msg.history.field.adjudicator": "adjudicator",
    "msg.history.field.passage_id": "passage",
    "msg.history.field.case_id": "case",
    "msg.history.field.value": "value",
    "msg.history.field.passage_ids": "passage ids",
    "msg.history.field.rationale": "rationale",
    "msg.history.field.severity": "severity",
    "msg.history.field.guideline_version": "guideline version",
    "msg.history.field.text": "text",
    "msg.history.field.question": "question",
    "msg.history.field.answer": "answer",
    "msg.history.field.slice": "slice",
    "msg.history.field.split": "split",
    "msg.history.field.metadata": "metadata",
    "msg.history.field.doc_id": "document",
    "msg.history.field.version": "version",
    "msg.history.field.title": "title",
    "msg.history.field.reason": "reason",
    "msg.history.field.note": "note",
    "msg.history.field.source": "source",
    "msg.history.field.revision": "revision",
    # --- importing files (services/imports/, formats/). A refused line reads
    # "{where}: {problem}. {fix}": msg.import.row with its place (msg.import.where.*) and its reason.
    "msg.import.row": "{where}: {reason}",
    "msg.import.reason": "{problem}. {fix}",
    "msg.import.where.file": "{path}",
    "msg.import.where.line": "{path}, line {line}",
    "msg.import.where.field": "{path}, field '{field}'",
    "msg.import.where.line_field": "{path}, line {line}, field '{field}'",
    "msg.import.none": "none",
    "msg.import.noun.case": "case",
    "msg.import.noun.claim": "claim",
    "msg.import.noun.passage": "passage",
    "msg.import.json.bool": "true/false",
    "msg.import.json.number": "a number",
    "msg.import.json.string": "a string",
    "msg.import.json.list": "a list",
    "msg.import.json.object": "an object",
    "msg.import.json.null": "null",
    # a file that cannot be read at all (formats.check_input_file, imports)
    "msg.import.file.unknown_format": "{path}: unknown format '{fmt}'; use auto or one of {choices}",
    "msg.import.file.folder": "{path} is a folder, not a file: name the file to import, inside that folder",
    "msg.import.file.missing": "{path}: no such file. Check the path (relative paths start from the current folder)",
    "msg.import.file.not_regular": "{path} is not a regular file (a device, pipe or socket): save the data to a file "
                                   "and import that file",
    "msg.import.file.empty": "{path} is empty (0 bytes): export the data again, or name another file",
    "msg.import.file.utf16": "{path}: UTF-16 is not supported: save the file as UTF-8 (Excel: 'CSV UTF-8') and import "
                             "again",
    "msg.import.file.nul_byte": "{path}, line {line}: byte {offset} is a NUL byte (0x00), which no text may hold: "
                                "remove it (a tool that wrote the file may have padded it) and import again",
    "msg.import.file.blank": "{path} is empty (only blank lines): export the data again, or name another file",
    "msg.import.file.no_cases": "{path}: the file holds no cases",
    "msg.import.file.no_labels": "{path}: the file holds no labels",
    "msg.import.file.no_adjudications": "{path}: the file holds no adjudications",
    "msg.import.file.no_judge_labels": "{path}: the file holds no judge labels",
    "msg.import.file.vote_needed": "{path}: a CLIMATE-FEVER file gives adjudications only with a vote number (--vote K)",
    "msg.import.file.vote_not_climate_fever": "{path}: --vote works only with a CLIMATE-FEVER file",
    # the options of an import
    "msg.import.option.dataset_blank": "the dataset name {name} is blank: give a name (e.g. --dataset pilot), or leave "
                                       "--dataset out to use the default",
    "msg.import.option.dataset_spaces": "the dataset name {name} has spaces around it: use --dataset {stripped}",
    "msg.import.option.votes_both": "choose either --with-votes (all vote slots) or --first-votes N, not both",
    "msg.import.option.votes_not_climate_fever": "votes can only be imported from a CLIMATE-FEVER file, not from a "
                                                 "{fmt} file",
    "msg.import.option.first_votes_range": "--first-votes must be 1 to 5 (CLIMATE-FEVER has five vote slots), got {n}",
    "msg.import.option.partial_vote": "--partial works with a CSV or JSONL file of adjudications, not with --vote",
    "msg.import.option.vote_range": "--vote must be 1 to 5 (CLIMATE-FEVER has five vote slots), got {n}",
    "msg.import.option.unknown_kind": "unknown kind of import {kind}: use one of {choices}",
    "msg.import.option.slices_cases_only": "declared slices apply to case files only",
    "msg.import.option.labels_auto": "a labels file's format is found from the file itself: use auto",
    # what is wrong with a line (the problem) ...
    "msg.import.problem.expected_object": "expected a JSON object, got {type}",
    "msg.import.problem.missing_value": "missing or empty value",
    "msg.import.problem.expected_string": "expected a string, got {type}",
    "msg.import.problem.too_long": "the text is {n:,} characters long, over the limit of {most:,}",
    "msg.import.problem.expected_id": "expected a string id, got {type}",
    "msg.import.problem.id_spaces": "id {id} has spaces around it",
    "msg.import.problem.unknown_value": "unknown value {value}",
    "msg.import.problem.repeat.case": "case '{id}' is also on line {line} with other content{differing}",
    "msg.import.problem.repeat.claim": "claim '{id}' is also on line {line} with other content{differing}",
    "msg.import.problem.repeat.passage": "passage '{id}' is also on line {line} with other content{differing}",
    "msg.import.problem.repeat.label": "label of claim '{claim_id}', '{labeler}' is also on line {line} with other "
                                       "content{differing}",
    "msg.import.problem.repeat.adjudication": "adjudication of claim '{id}' is also on line {line} with other "
                                              "content{differing}",
    "msg.import.problem.differ": " ({fields} differ)",
    "msg.import.problem.not_utf8_line": "byte {byte} (0x{hex}, column {column} of the line) is not UTF-8",
    "msg.import.problem.bad_json": "not valid JSON: {detail} at column {column}",
    "msg.import.problem.nul_character": "the line holds a NUL character (\\u0000)",
    "msg.import.problem.lone_surrogate": "the line holds a lone UTF-16 surrogate (such as \\ud800), which is not a "
                                         "character",
    "msg.import.problem.not_utf8_nor_cp932": "byte {byte} (0x{hex}) is neither UTF-8 nor CP932{where}",
    "msg.import.problem.encodings_fail": " (UTF-8 fails at byte {utf8}, CP932 at byte {cp932})",
    "msg.import.problem.no_header": "the file has no header row",
    "msg.import.problem.json_as_csv": "the file holds JSON lines, not CSV: its first line is a JSON object",
    "msg.import.problem.other_separator": "the header is one column '{header}': the file is separated by {separator}, "
                                          "not commas",
    "msg.import.separator.semicolons": "semicolons",
    "msg.import.separator.tabs": "tabs",
    "msg.import.problem.missing_columns": "missing column(s) {columns}",
    "msg.import.problem.doubled_columns": "column(s) {columns} appear twice",
    "msg.import.problem.extra_cells": "the row has {cells} cells but the header has {columns}",
    "msg.import.problem.nul_cell": "the cell holds a NUL byte (0x00), which no text may hold",
    "msg.import.problem.unclosed_quote": "a quoted field is never closed (a missing \"?)",
    "msg.import.problem.both_spellings": "'{snake}' and '{camel}' are the same field, given twice",
    "msg.import.problem.rag_and_metadata": "'{name}' and the metadata key '{snake}' have other values",
    "msg.import.problem.expected_id_list": "expected a list of passage ids, got {type}",
    "msg.import.problem.unknown_evidence": "evidence '{id}' is not one of this case's passages ({passages})",
    "msg.import.problem.no_key": "the {noun} has no '{name}'",
    "msg.import.problem.null": "the value is null",
    "msg.import.problem.empty": "the value is empty",
    "msg.import.problem.field_and_metadata": "'{name}' is both a field of the case and a key of its metadata, with "
                                             "other values",
    "msg.import.problem.expected_list": "expected a list, got {type}",
    "msg.import.problem.expected_object_value": "expected an object, got {type}",
    "msg.import.problem.no_claims": "the case has no claims",
    "msg.import.problem.claim_no_passages": "claim '{id}' has no passages",
    "msg.import.problem.unknown_passage": "passage '{id}' is not one of this case's passages ({passages})",
    "msg.import.problem.passage_twice": "passage '{id}' is named twice",
    "msg.import.problem.passage_twice_in_record": "passage '{id}' is given twice in this record with other "
                                                  "content{differing}",
    "msg.import.problem.case_has_refused_row": "case '{id}' has a refused row on line {line}, so the whole case is "
                                               "skipped",
    "msg.import.problem.case_skipped": "case '{id}' is skipped whole (its rows from this line on): its row on line "
                                       "{line} is refused",
    "msg.import.problem.no_evidences": "the claim has no evidences",
    "msg.import.problem.unknown_vote": "unknown vote {vote}",
    "msg.import.problem.unknown_label": "unknown label {value}",
    "msg.import.problem.severity_on_support": "severity '{severity}' is given with the label support, but a "
                                              "supported claim has no severity",
    "msg.import.problem.unknown_slice": "unknown slice {slice} (known: {known})",
    "msg.import.problem.stored_other": "{noun} '{id}' is already in dataset '{dataset}'{when} with another {fields}: "
                                       "{shown}",
    "msg.import.problem.stored_when": " (stored version written {time} UTC)",
    "msg.import.problem.difference": "{name} {stored} in the database, {new} in this file",
    "msg.import.problem.empty_value": "empty",
    "msg.import.problem.voter_adjudicated": "{labeler} adjudicated claim '{claim_id}' and cannot also label it",
    "msg.import.problem.label_stored_other": "{labeler} already labeled claim '{claim_id}' with another {fields}: "
                                             "{shown}",
    "msg.import.problem.passage_not_shown": "claim '{claim_id}' is not shown with passage '{passage_id}'",
    "msg.import.problem.claim_not_in_dataset": "claim '{claim_id}' is not in dataset '{dataset}'",
    "msg.import.problem.adjudicated_other": "claim '{claim_id}' is already adjudicated with another {fields}: {shown}",
    "msg.import.problem.labeler_adjudicates": "{adjudicator} labeled claim '{claim_id}' and cannot adjudicate it",
    "msg.import.problem.not_adjudicable": "claim '{claim_id}' is {state}; only a disputed or stale claim can be "
                                          "adjudicated",
    "msg.import.problem.no_claim": "no claim with id '{claim_id}'",
    "msg.import.problem.no_claim_in": "no claim with id '{claim_id}' in dataset '{dataset}'",
    "msg.import.problem.ambiguous_claim": "claim id '{claim_id}' exists in more than one dataset",
    "msg.import.problem.still_to_label": "you are assigned to label claim '{claim_id}' and have not labeled it yet, "
                                         "so you may not import labels or decisions for it (the import compares them "
                                         "with the other labels)",
    "msg.import.problem.name_case": "{role} '{name}' differs only in case from the existing user '{taken}'{whose}",
    "msg.import.problem.created_for_line": " (created by this import for line {line})",
    # ... and what to do about it (the fix)
    "msg.import.fix.write_object": "Write it as {braces}",
    "msg.import.fix.non_empty": "Give every record a non-empty '{name}'",
    "msg.import.fix.double_quotes": "Write it in double quotes",
    "msg.import.fix.shorten": "Shorten it (split a long document into passages), or check the file for a quote that "
                              "is never closed",
    "msg.import.fix.id_quotes": "Write the id in double quotes",
    "msg.import.fix.id_spaces": "Remove the leading and trailing spaces from the id",
    "msg.import.fix.use_one_of": "Use one of: {choices}",
    "msg.import.fix.repeat_label": "Keep one row per claim and labeler, or make both the same",
    "msg.import.fix.repeat_adjudication": "Keep one row per claim, or make both the same",
    "msg.import.fix.repeat_id": "Give one of them another id, or make both the same",
    "msg.import.fix.jsonl_utf8": "JSON lines must be UTF-8: save the file as UTF-8 and import again",
    "msg.import.fix.json_control": "A tab or line break inside a string must be written as \\t or \\n; each record is "
                                   "one JSON object on one line",
    "msg.import.fix.json_line": "Write each record as one JSON object on one line, e.g. {example}",
    "msg.import.fix.one_object_per_line": "Write each record as one JSON object {braces} on its own line",
    "msg.import.fix.unstorable": "Remove it: a NUL cannot be stored as text (PostgreSQL refuses it), and a lone "
                                 "surrogate is half of a character, which no text may hold",
    "msg.import.fix.csv_encoding": "Save the file as UTF-8 (Excel: 'CSV UTF-8') or as CP932 and import again",
    "msg.import.fix.header": "Put the column names on line 1: {columns}, ...",
    "msg.import.fix.json_as_csv": "Import it as JSON lines: leave --format out, or give --format jsonl (ragas for "
                                  "RAGAS records)",
    "msg.import.fix.commas": "Save it as comma-separated CSV (Excel: 'CSV UTF-8 (Comma delimited)') and import again",
    "msg.import.fix.add_columns": "Add them to the header row (required: {required})",
    "msg.import.fix.keep_one_each": "Keep one of each",
    "msg.import.fix.quote_commas": "Quote cells that contain commas, or remove the extra cells",
    "msg.import.fix.remove_nul": "Remove it and import again",
    "msg.import.fix.close_quote": "Add the closing \" at the end of the cell, and write a \" inside a quoted cell as "
                                  "\"\"",
    "msg.import.fix.keep_spelling": "Keep one of them (it is stored as '{snake}')",
    "msg.import.fix.keep_one": "Keep only one of them",
    "msg.import.fix.id_list": "Write it as a JSON list, e.g. \"{name}\": [\"p1\", \"p2\"]",
    "msg.import.fix.name_case_passages": "Name passages of the case, or add the passage to it",
    "msg.import.fix.add_key": "Add {write} to the {noun} ({meaning})",
    "msg.import.fix.write_key": "Write {write} ({meaning})",
    "msg.import.fix.write_noun_key": "Write the {noun}'s {name} ({meaning})",
    "msg.import.fix.keep_one_metadata": "Keep only one of them (fields the format does not know are kept in metadata)",
    "msg.import.fix.write_list": "Write '{name}' as a JSON list [...]",
    "msg.import.fix.metadata_object": "Write metadata as a JSON object {braces}",
    "msg.import.fix.give_claims": "Give the case a non-empty list of claims",
    "msg.import.fix.give_passages": "Give the case a list of passages, or the claim a list of passage_ids",
    "msg.import.fix.name_a_passage": "Name at least one passage of the case, or leave passage_ids out to show all of "
                                     "them",
    "msg.import.fix.add_passage": "Add the passage to the case's passages or fix the id",
    "msg.import.fix.name_once": "Name each passage once",
    "msg.import.fix.another_id": "Give one of them another id",
    "msg.import.fix.fix_row": "Fix that row and import the case again",
    "msg.import.fix.give_evidences": "Give each claim its list of evidences",
    "msg.import.fix.vote_choices": "Use null or one of: {choices}",
    "msg.import.fix.give_label": "Give every row a label: one of {choices}",
    "msg.import.fix.severity_on_support": "Leave severity empty, or choose the label contradict or insufficient",
    "msg.import.fix.passage_ids_list": "Write passage_ids as a list of ids",
    "msg.import.fix.declare_slice": "Fix the name, or declare the new slice: --slices {slice}",
    "msg.import.fix.update_or_new_id": "Import with --update to replace it (an adjudicated {noun} then becomes stale), "
                                       "or give it another id",
    "msg.import.fix.fewer_votes": "An adjudicator never adjudicates a claim they labeled: import fewer votes",
    "msg.import.fix.label_to_other": "An adjudicator never adjudicates a claim they labeled: give the label to someone "
                                     "else",
    "msg.import.fix.claim_to_other": "An adjudicator never adjudicates a claim they labeled: give the claim to someone "
                                     "else",
    "msg.import.fix.update_label": "Import with --update to replace the stored label (revision + 1; an adjudicated "
                                   "claim then becomes stale)",
    "msg.import.fix.update_decision": "Import with --update to replace the stored decision (revision + 1)",
    "msg.import.fix.cite_shown": "Cite only passages the claim is shown with: {passages}",
    "msg.import.fix.import_first": "Import the file first (annotator import FILE), or name its dataset with --dataset",
    "msg.import.fix.remove_line": "Remove the line, or check the claim id",
    "msg.import.fix.import_case_first": "Import the claim's case first, or fix the id",
    "msg.import.fix.name_dataset": "Name the dataset with --dataset",
    "msg.import.fix.label_first": "Label the claim first, or let another admin or the command line import the file",
    "msg.import.fix.existing_name": "Use the existing name exactly ('{taken}'): names that differ only in case are one "
                                    "person's, and `annotator users add` refuses them too",
    # (the literal "{...}" of these fixes is a field, BRACES in formats/reading.py: a text without fields is shown as it is)
    # what a native record's required keys hold (formats.native.NATIVE_REQUIRED), in the fixes above
    "msg.import.native.question": "the question put to the system; it cannot be empty",
    "msg.import.native.answer": "the system's answer; \"\" if it gave none",
    "msg.import.native.slice": "e.g. \"normal\"; it cannot be empty",
    "msg.import.native.split": "one of {choices}",
    "msg.import.native.if_unknown": "\"\" if unknown",
    "msg.import.native.if_none": "\"\" if none",
    # an import's report (ImportReport.summary_lines): what the command line prints
    "msg.import.encoding.utf8_bom": "UTF-8 with BOM",
    "msg.import.report.read": "Read {file} as {encoding} ({format}): {totals}",
    "msg.import.report.read_into": "Read {file} as {encoding} ({format}) into dataset '{dataset}': {totals}",
    "msg.import.report.total": "{n:,} {kind}",
    "msg.import.report.counts": "  {kind}: {new:,} new, {unchanged:,} unchanged, {updated:,} updated",
    "msg.import.kind.cases": "cases",
    "msg.import.kind.claims": "claims",
    "msg.import.kind.passages": "passages",
    "msg.import.kind.labels": "labels",
    "msg.import.kind.adjudications": "adjudications",
    "msg.import.report.created_user": "Created user {names} (role {role}, no password: they cannot log in until an "
                                      "admin sets one)",
    "msg.import.report.created_users": "Created users {names} (role {role}, no password: they cannot log in until an "
                                       "admin sets one)",
    "msg.import.report.gave_role_one": "Gave role {role} to {names} (an existing user, who keeps their other roles)",
    "msg.import.report.gave_role_many": "Gave role {role} to {names} (existing users, who keep their other roles)",
    "msg.import.report.to_review_one": "Marked {n:,} label for review: made before its claim's text or passages "
                                       "changed, it is back in its labeler's queue (Label page) to be saved again; a "
                                       "claim with two or more labels is stale until each label to review is saved "
                                       "again or an adjudicator decides the claim (a claim with one label stays single)",
    "msg.import.report.to_review_many": "Marked {n:,} labels for review: made before their claims' text or passages "
                                        "changed, they are back in their labelers' queues (Label page) to be saved "
                                        "again; a claim with two or more labels is stale until each label to review is "
                                        "saved again or an adjudicator decides the claim (a claim with one label stays "
                                        "single)",
    "msg.import.report.skipped_claims": "Skipped {n:,} claims: {reason}",
    "msg.import.report.skipped_line": "Skipped {n:,} bad line (--partial):",
    "msg.import.report.skipped_lines": "Skipped {n:,} bad lines (--partial):",
    "msg.import.report.skipped_entry": "  {line}",
    "msg.import.report.warning": "Warning: {warning}",
    # kept as English texts (ImportReport.skipped's keys, its warnings): the app finds them again with
    # `recognize`, so their fields hold no format spec
    "msg.import.skip.not_disputed": "not disputed ({state})",
    "msg.import.skip.no_vote": "disputed but no vote {vote}",
    "msg.import.warn.unknown_column_ignored": "{path}, line {line}: column '{name}' is not one of {known}; it is ignored",
    "msg.import.warn.unknown_column_kept": "{path}, line {line}: column '{name}' is not one of {known}; it is kept as "
                                           "case metadata",
    "msg.import.warn.unknown_field_ignored": "{path}, line {line}: field '{name}' is not one of {known}; it is ignored",
    "msg.import.warn.unknown_field_kept": "{path}, line {line}: field '{name}' is not one of {known}; it is kept as case "
                                          "metadata",
    "msg.import.warn.unnamed_column": "{path}, line {line}: column {number} has no name in the header; it is ignored",
    "msg.import.warn.export_only_column": "{path}, line {line}: column '{name}' is written by `annotator release export` "
                                          "(a release's gold labels, which labelers must not see); it was not imported",
    "msg.import.warn.export_only_field": "{path}, line {line}: field '{name}' is written by `annotator release export` "
                                         "(a release's gold labels, which labelers must not see); it was not imported",
    "msg.import.warn.changed_passages": "{n} claims are shown with changed passages: they are marked changed "
                                        "(adjudicated ones become stale)",
    # --- verifying a release folder (release.py): each problem names its file. VerifyResult.problems
    # holds them as English texts; the app finds their keys again with `recognize` (no format specs).
    # A problem naming a line comes before the same problem without one (recognize takes the first).
    "msg.verify.staging": "{folder}: the staging folder of a `release create` that did not finish, not a release "
                          "(`annotator release verify --release NAME` or the next `release create` finishes or removes "
                          "it)",
    "msg.verify.not_a_folder": "{folder}: not a release folder (missing or not a directory)",
    "msg.verify.manifest_changed": "{name} does not have the expected SHA-256: it is {actual}, expected {expected} "
                                   "(the file was changed after the release was created, or the SHA-256 given is "
                                   "another release's)",
    "msg.verify.no_recorded_sha256": "manifest.json: the database records no SHA-256 for release '{release}', so the "
                                     "manifest itself cannot be checked",
    "msg.verify.not_plain_name": "{name}: listed in manifest.json but not a plain data file name",
    "msg.verify.missing": "{name}: missing",
    "msg.verify.cases_mismatch": "{name}, line {line}: does not follow the claims of gold.parquet (a case a line, in release order)",
    "msg.run.bad_k": "k {k}: give the rank cut as a whole number of at least 1 (such as 5)",
    "msg.run.bad_unit": "unit {value}: score retrieval by one of {choices}",
    "msg.run.bad_split": "split {value}: choose one of {choices}",
    "msg.segment.bad_language": "language {value}: cut answers into sentences in one of {choices}",
    "msg.run.bad_rule": "retrieval rule {value}: choose one of {choices} (all: every relevant passage in the top k; any: at least one)",
    "msg.run.bad_margin": "margin {margin}: give the pass-rate loss the gate tolerates as a fraction from 0 up to 1 (such as 0.02)",
    "msg.run.bad_alpha": "alpha {alpha}: give the level of the slice regression tests as a fraction between 0 and 1 (such as 0.05)",
    "msg.run.same_twice": "run '{name}' is given as both the baseline and the candidate: compare two different runs",
    "msg.run.two_datasets_compared": "run '{base}' is a run of dataset {base_dataset} and run '{candidate}' of dataset {candidate_dataset}: no case is in both, so there is nothing to compare; compare two runs of one dataset",
    "msg.run.doc_needs_cases": "release {release} has no cases.jsonl (a release of schema 1), so its passages' documents are unknown: score by passage, or make a new release",
    "msg.run.doing_report": "score a run against this release",
    "msg.run.case_not_in_release": "release {release} holds no case '{case_id}' of run {run}'s dataset",
    "msg.run.case_not_in_run": "run {run} has no case '{case_id}' (it is in release {release})",
    "msg.run.warn_no_overlap": "run {run} (dataset {dataset}) has no case of this release (datasets {datasets}): is it the right release?",
    "msg.run.warn_missing": "run {run} has {n} of the {of} cases of the release in this split missing: the figures cover the cases it has",
    "msg.run.warn_outside": "run {run} has {n} cases the release does not hold: they are not scored",
    "msg.run.warn_not_common": "{base} cases of the baseline and {candidate} of the candidate are not in both runs: they are counted, not compared",
    "msg.verify.missing_in": "{name}: missing in {folder}",
    "msg.verify.line_unreadable": "{name}, line {line}: unreadable ({error})",
    "msg.verify.unreadable": "{name}: unreadable ({error})",
    "msg.verify.not_object": "{name}: not a JSON object",
    "msg.verify.no_files": "{name}: has no 'files' object listing the release's files",
    "msg.verify.no_sha256": "{name}: its manifest entry has no sha256",
    "msg.verify.changed_sha256": "{name}: changed (sha256 {actual}, manifest says {expected})",
    "msg.verify.changed_bytes": "{name}: changed ({actual} bytes, manifest says {expected})",
    "msg.verify.not_listed": "{name}: not listed in manifest.json",
    "msg.verify.unexpected_file": "{name}: unexpected file (not listed in manifest.json)",
    "msg.verify.unexpected_folder": "{name}: unexpected folder (not listed in manifest.json)",
    "msg.verify.fewer_claims": "{name}: holds fewer claims than gold.jsonl",
    "msg.release.verify_mismatch": "release {folder} does not match its manifest: {problems}",
    "msg.release.load_mismatch": "release {folder} does not match its manifest, so its gold was not loaded: {problems}. "
                                 "Take a new copy of the release from where it was published (its files must be the ones "
                                 "`release create` wrote), or ask whoever made it",
    "msg.release.load_not_a_release": "{path} is not a release folder: give the folder `release create` wrote (it holds "
                                      "manifest.json and gold.parquet), or its manifest.json",
    "msg.export.no_cases": "release {release} has no cases.jsonl (a release of schema 1), so its questions, answers and "
                           "passages are not in it: make a new release of these claims to export them",
    "msg.export.into_release": "{output} is inside the release folder {folder}, whose files are fixed: write the export "
                               "elsewhere",
    "msg.export.is_folder": "{output} is a folder: give the file to write, e.g. {output}/gold.ragas.jsonl",
    "msg.export.cannot_write": "cannot write {output}: {reason}; nothing was written",
    "msg.import.problem.too_deep": "arrays and objects nest more than {most} levels deep",
    "msg.import.fix.too_deep": "Write each record flat, as the file format describes: a value a key, lists of ids or of small objects",
    "msg.import.problem.duplicate_key": "the key '{name}' appears twice in one JSON object",
    "msg.import.fix.duplicate_key": "Keep one of them: which value was meant is unknown, so nothing is guessed",
    "msg.verify.symlink": "{name}: a symbolic link; a release folder holds only plain files (a link can point out of it): replace it with the file itself",
    "msg.db.disk_full": "the disk is full; nothing was saved. Free space and try again",
    "msg.db.read_only_sqlite": "the database {path} cannot be written: {reason}; nothing was saved. Let the user who runs annotator write the file and its folder {folder} (SQLite also writes {name}-wal and {name}-shm there), or give another --db / DATABASE_URL",
    "msg.db.read_only.file": "the file is read-only (permissions {mode} of {path})",
    "msg.db.read_only.folder": "its folder is read-only (permissions {mode} of {path})",
    "msg.db.read_only.opened": "SQLite opened it read-only",
    "msg.db.read_only_postgres": "the database {url} cannot be written: {reason}; nothing was saved. Connect as a role that may write annotator's tables (INSERT, UPDATE, DELETE; CREATE for `annotator init`), on the primary server rather than a read-only standby",
    "msg.import.concurrent": "another import of these {kind} ran at the same time; nothing was imported; run it again",
    "msg.database_busy": "the database is busy with another long write; nothing was saved. Try again in a moment",
    "msg.database_connections_busy": "the app is busy: every database connection stayed in use for {wait}; nothing "
                                     "was saved. Try again in a moment",
    "msg.login_busy": "too many logins are being checked at once; yours was not checked. Try again in a moment",
    "msg.user_looks_like": "'{name}' looks like the existing user '{taken}'; use that name or choose one that cannot be mistaken for it",
    "msg.name_too_long": "the name is {length:,} characters long, over the limit of {limit:,}; shorten it",
    "msg.import.problem.name_looks_like": "{role} '{name}' looks like the existing user '{taken}'{whose}",
    "msg.import.fix.lookalike_name": "Use that name ('{taken}') if it is the same person, or choose one that cannot be mistaken for it",
    "msg.import.problem.invisible_in_name": "the name holds the invisible character {character} at position {position}",
    "msg.import.fix.retype_name": "Type the name again without it",
    "msg.import.problem.id_too_long": "the value is {n:,} characters long, over the limit of {most:,} for an id or name",
    "msg.import.fix.shorten_id": "Use a shorter id or name",
    "msg.import.option.dataset_too_long": "the dataset name is {n:,} characters long, over the limit of {most:,}: use a shorter --dataset",
    # a judge labels file (formats/judge_labels.py): one label per claim, an optional confidence 0..1
    "msg.import.problem.repeat.judge_label": "claim '{id}' is also on line {line}: a judge run gives one label per claim",
    "msg.import.fix.repeat_judge_label": "Keep one row per claim",
    "msg.import.problem.confidence_not_number": "confidence {value} is not a number",
    "msg.import.problem.confidence_type": "confidence is {type}, not a number",
    "msg.import.problem.confidence_range": "confidence {value} is not between 0 and 1",
    "msg.import.fix.confidence": "Write the judge's confidence as a number from 0 to 1 (such as 0.75), or leave it empty "
                                 "for none",
    # a run file (formats/runs.py) and its import (services/runs.py): one line a case of a RAG system's run
    "msg.import.file.no_run_cases": "{path}: the file holds no case of a run",
    "msg.import.problem.repeat.run_case": "case '{id}' is also on line {line}: a run gives one line per case",
    "msg.import.fix.repeat_run_case": "Keep one line per case",
    "msg.import.fix.give_retrieved": "Give the passage ids the system retrieved, ranked best first, e.g. \"retrieved\": "
                                     "[\"p1\", \"p2\"] ([] when it retrieved none)",
    "msg.import.problem.retrieved_twice": "passage '{id}' is ranked twice, at {first} and {second}",
    "msg.import.fix.rank_once": "Rank each passage once, at its best rank",
    "msg.import.fix.give_behavior": "Give every line a behavior: one of {choices}",
    "msg.import.fix.answer_text": "Write the answer as a text in double quotes, or null when there is none",
    "msg.import.problem.run_claim_twice": "claim '{id}' is also {other} of this case",
    "msg.import.fix.run_claim_once": "Give each claim of a case its own claim_id, or none",
    "msg.import.problem.no_case": "no case with id '{case_id}'",
    "msg.import.problem.no_case_in": "no case with id '{case_id}' in dataset '{dataset}'",
    "msg.import.problem.ambiguous_case": "case id '{case_id}' exists in more than one dataset",
    "msg.import.fix.import_run_case_first": "Import the case first (annotator import), or fix the id",
    "msg.import.kind.runs": "run cases",
    "msg.run.bad_name": "{name} is not a run name: use letters, digits and . _ : + - (starting with a letter or digit), at most {most} characters",
    "msg.run.name_taken": "a run named '{taken}' exists already; a run is never changed once imported: give the new one another name",
    "msg.run.unknown": "no run named '{name}' (runs: {names})",
    "msg.run.bad_meta_key": "--meta key {name} is not a name: use letters, digits and _ . - (starting with a letter), at most {most} characters, such as model or corpus_release",
    "msg.run.stored": "Run {run} stored: {n:,} cases (file SHA-256 {sha256}).",
    "msg.run.unknown_retrieved": "{n:,} of the {of:,} retrieved passage ids are not passages of dataset '{dataset}': they are kept, and count as not relevant",
    "msg.run.unknown_cited": "{n:,} of the {of:,} cited passage ids are not passages of dataset '{dataset}': they are kept",
    "msg.run.two_datasets": "case {case_id} is in another dataset than the run's earlier cases: a run covers the cases of one dataset",
    "msg.run.none_stored": "{path}: no run was stored (the file holds no case, or every line was skipped)",
    "msg.run.all_skipped": "{path}: no run was stored: --partial skipped all {n} lines. The first, line {line}, field '{field}': {reason}",
    # a RAGAS file (formats/ragas.py): one question a record, as cases (its answer cut into claims) or as a run
    "msg.import.problem.no_question": "the record has no question ('user_input' or 'question')",
    "msg.import.fix.give_question": "Give every record the question put to the system as 'user_input' (or 'question')",
    "msg.import.problem.no_answer": "the record has no answer ('response' or 'answer')",
    "msg.import.fix.give_answer": "Give every record the system's answer as 'response' (or 'answer'): it is what is "
                                  "cut into claims to check",
    "msg.import.problem.no_contexts": "the record has no retrieved contexts, so its claims would have no passage to be "
                                      "checked against",
    "msg.import.fix.give_contexts": "Give every record the texts the system retrieved, best first, as '{name}': a list "
                                    "of texts",
    "msg.import.fix.context_not_empty": "Remove the empty text from the list, or write the text",
    "msg.import.fix.claim_not_empty": "Remove the empty claim from the list, or write its text",
    "msg.import.fix.give_claim_texts": "Give 'claims' at least one text, or leave it out to cut the answer into claims "
                                       "(--claims)",
    "msg.import.problem.ids_and_contexts": "{ids} ids for {contexts} texts in '{name}'",
    "msg.import.fix.ids_and_contexts": "Give one id per text of '{name}', in the same order, or leave "
                                       "retrieved_context_ids out (ids are then made from the texts)",
    "msg.import.problem.no_sentence": "the answer holds no sentence to make a claim of (no letter or digit: "
                                    "only punctuation, symbols or white space)",
    "msg.import.fix.no_sentence": "Give the record an answer with at least one sentence, or its claims as a list of "
                                  "texts in 'claims', or import with --claims whole",
    "msg.import.problem.cell_not_json": "the cell is not JSON ({detail})",
    "msg.import.fix.json_cell": "In a RAGAS CSV file, write a list as a JSON array in its cell, e.g. {example}, and "
                                "metadata as a JSON object {braces}",
    "msg.import.problem.parquet_type": "the column is {type}, not {expected}",
    "msg.import.parquet.text": "text (string)",
    "msg.import.parquet.texts": "a list of texts (list<string>)",
    "msg.import.parquet.id": "a text or an integer",
    "msg.import.fix.ragas_columns": "Write the file with RAGAS's columns: user_input (or question) and response (or "
                                    "answer) as text, retrieved_contexts (or contexts) as a list of texts, and "
                                    "optionally retrieved_context_ids, reference (or ground_truth), reference_contexts, "
                                    "claims and case_id (or id)",
    "msg.import.file.not_parquet": "{path} starts as a Parquet file but cannot be read as one ({detail}): write it again "
                                   "(pandas: DataFrame.to_parquet), or export the records as JSON lines",
    "msg.import.file.parquet_elsewhere": "{path} is a Parquet file: only RAGAS records are read from Parquet (--format "
                                         "ragas); export other data as JSON lines or CSV",
    "msg.import.option.claims_mode": "--claims must be sentences or whole, not {mode}",
    "msg.import.option.claims_ragas_only": "--claims applies to RAGAS files only (this file is read as {fmt}, whose "
                                           "records give their claims)",
    "msg.import.report.ragas_ids": "Case ids: {given:,} from the file's case_id or id, {made:,} made from the question "
                                   "and answer ({prefix} and {digits} hex digits of their SHA-256: the same on every "
                                   "import of the same texts)",
    "msg.import.report.ragas_claims": "Claims: {sentences:,} answers cut into sentences, {whole:,} kept whole, {given:,} "
                                      "given in the file (claims)",
    "msg.denied.no_caller": "no caller was given: a service acts for a logged-in user or the command line, never for nobody",
    "msg.denied.lift_holds": "only an admin may see every hold and lift another person's hold",
    "msg.denied.calibrate": "only an admin may import judge runs or see them and their reports (judge labels would anchor labelers and adjudicators)",
    "msg.denied.score_runs": "only an admin may import RAG runs or score and compare them (a run report shows each case's gold evidence)",
    "msg.judge.bad_name": "{name} is not a judge run name: use letters, digits and . _ : + - (starting with a letter or digit), at most {most} characters",
    "msg.judge.name_taken": "a judge run named '{taken}' exists already; a run is never changed once imported: give the new one another name",
    "msg.judge.unknown": "no judge run named '{name}' (runs: {names})",
    "msg.judge.stored": "Judge run {run} stored: {n} labels (file SHA-256 {sha256}).",
    "msg.judge.two_datasets": "claim {claim_id} is in another dataset than the run's earlier claims: a judge run labels the claims of one dataset",
    "msg.judge.bad_by": "'{by}': break down by slice or split",
    "msg.judge.doing_report": "see a judge report against this release",
    "msg.judge.none_stored": "{path}: no judge label was stored (the file holds none, or every line was skipped)",
    "msg.judge.all_skipped": "{path}: no judge label was stored: --partial skipped all {n} lines. The first, line {line}, field '{field}': {reason}",
    # --- why a judge report has no corrected support rate, and what it assumes (services/judges.py). A report holds
    # these as English texts (its JSON); the app finds their keys again with `recognize`.
    "msg.judge.no_outside": "the run labels no claim outside the release",
    "msg.judge.none_in_split": "the run labels no claim of the release's gold in this split",
    "msg.judge.ppi_assumption": "assumes the released claims are a random sample of the claims the judge labeled; "
                                "it is biased if they were chosen otherwise (by slice, difficulty or time)",
    # --- why a run's figure or interval is missing (run_scoring.summarize, run_compare.compare_runs), and the
    # gate's reasons (run_compare.compare_runs). A report holds these as English texts (its JSON); the app finds
    # their keys again with `recognize`.
    "msg.run.score.no_cases": "there are no cases (0/0)",
    "msg.run.score.no_evidence": "no case has relevant evidence, so there is no retrieval figure (0/0)",
    "msg.run.score.no_claims": "no case has a labeled claim (0/0)",
    "msg.run.score.no_expected_behavior": "no case states an expected behaviour (0/0)",
    "msg.run.score.no_resamples": "no bootstrap resamples were drawn",
    "msg.run.score.one_case": "there is only one case, and resampling cases needs two or more",
    "msg.run.score.undefined_in_resamples": "the figure is 0/0 in {share} of the bootstrap resamples (too few cases "
                                            "give it a denominator), so it has no interval",
    "msg.run.score.no_common_cases": "the two runs have no case in common",
    "msg.run.score.none_failed": "no common case failed in the baseline, so none could be fixed (0/0)",
    "msg.run.score.none_passed": "no common case passed in the baseline, so none could regress (0/0)",
    "msg.run.reason.blocker_one": "1 blocker: {blockers}",
    "msg.run.reason.blockers": "{n} blockers: {blockers}",
    "msg.run.reason.more_blockers": "and {n} more",
    "msg.run.reason.blockers_only_candidate": "{n} of the blockers are on cases only the candidate has: they block "
                                              "though those cases are not compared",
    "msg.run.reason.blocker.forbidden_passage": "case {case_id} retrieved forbidden passage {passage_ids}",
    "msg.run.reason.blocker.forbidden_passages": "case {case_id} retrieved forbidden passages {passage_ids}",
    "msg.run.reason.blocker.answered_when_expected": "case {case_id} answered where the gold expects {expected}, with "
                                                     "claims not supported: {claims}",
    "msg.run.reason.blocker.severe_contradiction": "case {case_id}: claim {claim} is contradicted, severity {severity}",
    "msg.run.reason.not_compared": "{n_only_base} cases only the baseline has and {n_only_candidate} only the "
                                   "candidate has are counted, not compared",
    "msg.run.reason.interval_below": "the pass rate's change is {difference}, 95% interval [{low}, {high}]: its "
                                     "lower bound is below {bound}",
    "msg.run.reason.interval_above": "the pass rate's change is {difference}, 95% interval [{low}, {high}]: its "
                                     "lower bound is not below {bound}",
    "msg.run.reason.no_interval": "the pass rate's change has no 95% interval ({why}), so nothing rules out a drop",
    "msg.run.reason.slice_regresses": "slice {slice} regresses: {regressions} regressions, {fixes} fixes, Holm p = {p}",
    "msg.run.reason.no_slice_regresses": "no slice regresses (one-sided exact tests, Holm-corrected, alpha {alpha})",
    "msg.run.reason.blockers_other_cases": "{n} of them in cases outside the split compared: a blocker anywhere in the release stops the change",
    "msg.run.reason.candidate_lacks": "the candidate lacks {n} cases the baseline has: a case left out might be one it fails, so the gate holds until it runs them",
    "msg.run.reason.indicative": "indicative only: {n} cases compared (under {below}); the interval and the tests say little on so few",
    "msg.import.kind.judge_labels": "judge labels",
    "msg.hold_case_final": "every claim of case '{case_id}' is already agreed or adjudicated: there is nothing left to hold",
    "msg.lift_still_to_label": "you are assigned to label this case and have not labeled all of its claims: its holds are the other labelers' judgment; label it first, or ask another admin",
    "msg.address_too_long": "the address's {param}= is {length} characters long, more than the {limit} an id may have ({shown}); nothing was opened",
    # --- claim review (services/claim_review.py): an admin splits, merges, edits or drops the claims of a case
    "msg.denied.review_claims": "only an admin may split, merge, edit or drop claims",
    "msg.review.own_case": "you label case '{case_id}' yourself, so another admin must review its claims",
    "msg.review.reason_needed": "give a reason for the change: it is recorded in the claim's history",
    "msg.review.labeled.split": "claim '{claim_id}' has {n} label(s), which a split would take from the statement "
                                "they judged: it can no longer be split. Change its text instead with `annotator "
                                "claims edit {claim_id} --text TEXT --reason TEXT --update` (or \"Keep the labels\" "
                                "on the Claim review page): its labels are kept and marked to review",
    "msg.review.labeled.merge": "claim '{claim_id}' has {n} label(s), which a merge would lose or put on another "
                                "statement: the two claims can no longer be merged. Change a claim's text instead "
                                "with `annotator claims edit {claim_id} --text TEXT --reason TEXT --update` (or "
                                "\"Keep the labels\" on the Claim review page): its labels are kept and marked to review",
    "msg.review.labeled.drop": "claim '{claim_id}' has {n} label(s), which dropping it would delete: it can no longer "
                               "be dropped. Leave it (its labels say what it is worth), or change its text with "
                               "`annotator claims edit {claim_id} --text TEXT --reason TEXT --update`",
    "msg.review.labeled.edit": "claim '{claim_id}' has {n} label(s): its text changes only as `import --update` "
                               "changes it. Add --update (`annotator claims edit {claim_id} --text TEXT --reason TEXT "
                               "--update`, or \"Keep the labels\" on the Claim review page): the labels are kept and "
                               "marked to review",
    "msg.review.decided": "claim '{claim_id}' has an adjudication, which would then judge another statement: it can "
                          "no longer be split, merged, dropped or edited without --update (`annotator claims edit "
                          "{claim_id} --text TEXT --reason TEXT --update` keeps the decision and makes it stale)",
    "msg.review.judged": "judge run {runs} labeled claim '{claim_id}', and a judge run never changes: the claim can "
                         "no longer be split, merged, dropped or edited without --update (`annotator claims edit "
                         "{claim_id} --text TEXT --reason TEXT --update`)",
    "msg.review.released": "claim '{claim_id}' is in gold release {releases}: it can no longer be split, merged or "
                           "dropped; change its text with `annotator claims edit {claim_id} --text TEXT --reason TEXT "
                           "--update` (the release's files stay as they were)",
    "msg.review.draft": "a labeler has unsaved input on claim '{claim_id}' (a draft): ask them to save or discard "
                        "it, then try again, so that nothing they typed is lost",
    "msg.review.bad_offset": "offset {at} does not cut claim '{claim_id}' in two: give an offset from 1 to {last} "
                             "(code points into its text, which is {length} long) with text on both sides of it",
    "msg.review.inside_character": "offset {at} falls inside a character of claim '{claim_id}' as it is shown (a "
                                   "letter and its marks, an emoji): give {before} or {after} instead",
    "msg.review.id_too_long": "the new claim's id '{claim_id}' would be {length} characters long, more than the "
                              "{limit} an id may have: shorten the claim id in the file and import it again instead",
    "msg.review.no_next": "claim '{claim_id}' is the last claim of case '{case_id}': there is no next claim to merge "
                          "it with; merge the claim before it instead",
    "msg.review.last_claim": "claim '{claim_id}' is the only claim of case '{case_id}', and a case holds at least one "
                             "claim: edit its text instead",
    "msg.review.text_needed": "give the claim's new text (it may not be blank)",
    "msg.history.claim_split": "claim split by an admin",
    "msg.history.claim_split_off": "claim made by a split",
    "msg.history.claim_merged": "claim merged with the next one by an admin",
    "msg.history.claim_merged_away": "claim merged into the one before it by an admin",
    "msg.history.claim_edited": "claim text edited by an admin",
    "msg.history.claim_dropped": "claim dropped from the case by an admin",
    "msg.history.field.claim_id": "claim",
    "msg.history.field.span": "span in the answer",
    "msg.history.field.new_claim": "new claim",
    "msg.history.field.split_from": "split from",
    "msg.history.field.merged_claim": "merged claim",
    "msg.history.field.merged_into": "merged into",
    "msg.history.field.labels_to_review": "labels to review",
}
