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
    "msg.claim_not_waiting": "claim '{claim_id}' is not waiting for your decision",
    "msg.claim_not_in_queue_nor_waiting": "claim '{claim_id}' is neither in your queue nor waiting for your decision",
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
    "msg.field.rationale": "rationale",
    "msg.field.note": "note",
    "msg.field.reason": "reason",
    "msg.field.guideline": "guideline",
    # --- adjudication (services/adjudication.py)
    "msg.labeler_n": "Labeler {n}",
    "msg.adjudicator_labels_it": "you label this claim, so another adjudicator must decide it",
    "msg.not_disputed": "this claim is {state}, not disputed: there is nothing to decide",
    "msg.decided_meanwhile": "this claim was decided by someone else meanwhile; your input is kept: reload to see it",
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
}
