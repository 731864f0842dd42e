"""The UI's strings in English and Japanese, and the numbers and dates shown in them.

`t(key, **fields)` looks `key` up in the catalog of the current language (ENGLISH below, JAPANESE
in catalog_ja.py) and fills in its fields; a number among the fields is written as that language
writes numbers (its grouping, decimal and minus signs) under the field's format spec (`{n:,}`,
`{x:.3f}`, `{share:.0%}`; a bare `{n}` groups an integer's digits). A key the Japanese catalog lacks
falls back to English, and an unknown key is shown as the key itself: a missing string is
visible, never a crash. What the core and the services say (annotator/messages.py: refusals,
"Labeler 1", history lines, agreement notes) has "msg." keys: ENGLISH takes their English from
there and JAPANESE has them too, a field that is a Message or a vocabulary Term is written in the
same language, and `error_text` shows an error raised with a message key in the user's language
(str(error) otherwise). `number_text`, `datetime_text`, `date_text` and `time_text` write numbers
and times outside a catalog string the same way (Babel's locale data: CLDR).

The current language is, first found: the one `use_language` sets (tests, code outside Streamlit);
the one this browser session runs in (session state LANGUAGE_KEY, which ui/language.py sets at the
top of every run: the user's stored choice, else the login page's, else the browser's); the
browser's (`st.context.locale`: ja* is Japanese); English.
"""

from __future__ import annotations

import functools
import numbers
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import date, datetime

import streamlit as st
from babel import Locale
from babel.dates import format_datetime, format_skeleton, format_time
from streamlit.runtime.scriptrunner import get_script_run_ctx

from annotator.messages import MESSAGES, Joined, Message, Term
from annotator.ui.catalog_ja import JAPANESE
from annotator.vocabulary import HOLD_REASONS, LABELS, ROLES, SEVERITIES

ENGLISH: dict[str, str] = {
    # app and login
    "app.title": "RAG claim annotator",
    "app.logged_in_as": "Logged in as **{name}** ({roles})",
    "app.logout": "Log out",
    "app.no_pages": "Your account has no role with a page yet. Ask an admin to give you one.",
    "auth.denied": "You cannot open this page with your roles.",
    "app.not_for_your_roles": "This page is not open to {name}'s roles. Ask an admin for the role if you need it.",
    "app.go_to": "Go to {page}",
    "auth.login_again": "You are no longer logged in (or your account was disabled); log in again.",
    "login.title": "Log in",
    "login.name": "User name",
    "login.password": "Password",
    "login.submit": "Log in",
    # the language switch (sidebar, login page): each language named in itself
    "language.label": "Language",
    "language.en": "English",
    "language.ja": "日本語",
    "language.browser": "Browser ({language})",
    "language.help": "Kept for your account, on every device; \"Browser\" follows the language your browser "
                     "asks for.",
    "language.login_help": "For this visit; after you log in, the language saved for your account wins.",
    "sso.log_in_with": "Log in with {provider}",
    "sso.unknown": "You are logged in as {email}, but annotator has no active account of that name. "
                   "Ask an admin to add you as {email} (`annotator users add {email} --role labeler "
                   "--no-password`), or to enable your account.",
    "sso.unverified": "Your provider has not verified the email address {email}; annotator accepts "
                      "verified addresses only.",
    "sso.no_email": "Your provider sent no email address, so annotator cannot tell who you are. Ask an "
                    "admin to have the provider send the `email` claim.",
    "sso.misconfigured": "Single sign-on is set up in .streamlit/secrets.toml but lacks {settings}. "
                         "Ask an admin to complete it.",
    "page.label": "Label",
    "page.adjudicate": "Adjudicate",
    "page.agreement": "Agreement",
    "page.releases": "Releases",
    "page.admin": "Admin",
    # shared
    "case.meta": "Case {case_id} · slice {slice} · split {split}",
    "case.dataset": "Dataset {dataset}",
    "case.question": "Question",
    "case.question_line": "**Question**: {question}",
    "case.answer_lead": "Generated answer:",
    "case.answer_marked": "Generated answer (the words it shares with the claim marked):",
    "case.answer_box": "Generated answer",
    "case.answer_placed": "Generated answer (the claim shown below is outlined where it is in the answer):",
    "case.claim_start": "Current claim begins:",
    "case.claim_end": "Current claim ends.",
    "passage.meta": "{passage_id} · document {doc_id} · version {version}",
    "passage.cite": "Cite this passage",
    "passage.cited": "Cited in your label",
    "passage.heading": "Passage {n}: {title}",
    "passage.cite_key": "Cite passage {n}",
    "passage.uncite_key": "Uncite passage {n}",
    "passage.old_version": "Old version",
    "passage.old_version_newer": "a newer version of document {doc_id} ({newer}) is among these passages.",
    "passage.old_version_elsewhere": "a newer version of document {doc_id} ({newer}) is in this dataset, not among "
                                     "these passages.",
    "passage.old_version_marked": "the case's data marks this passage as outdated.",
    "passage.shared": "Shared with the claim (marked bold and underlined): {words}",
    "passage.shared_none": "No content word of the claim occurs in this passage.",
    # label page
    "label.progress": "{done} of {total} claims labeled",
    "label.no_assignments": "No claims are assigned to you yet.",
    "label.queue_done": "Every claim in your queue is labeled (or its case is on hold). You may still review them.",
    "label.previous": "Previous",
    "label.next": "Next",
    "label.position": "Claim {n} of {total} in your queue: {claim_id}",
    "label.claim": "Claim {claim_id}",
    "claim.link": "Link",
    "claim.link_help": "The address of this claim: it opens the claim for a labeler who has it in their queue and for the adjudicator who has to decide it (after the login, in a new tab too). The button at its right copies it.",
    "label.evidence": "Evidence passages",
    "label.yours": "Your saved label (revision {revision}):",
    "label.none": "no label",
    "label.locked": "The second label on this claim has landed: your label is final here; "
                    "a disagreement goes to adjudication.",
    "label.on_hold": "This case is on hold ({reason}); it cannot be labeled until the hold is lifted.",
    "label.lift": "Lift the hold",
    "label.lifted": "The hold is lifted.",
    "label.rationale": "Rationale",
    "label.rationale_hint": "Why this label? Quote or point to the passage.",
    "label.severity": "Severity (only when not supported)",
    "label.severity_none": "no severity",
    "label.severity_help": "Used for contradict and insufficient; ignored when you choose support. "
                           "A single leak blocks a release.",
    "label.shortcuts": "Keys 1, 2, 3 save support, contradict, insufficient.",
    "label.shortcuts_cite": "{keys}: cite or uncite passage {passages}.",
    "label.shortcuts_move": "{next}: next claim. {previous}: previous claim. A save opens the next claim at once.",
    "label.shortcuts_rationale": "{shortcut}: write the rationale (Tab from it goes to the buttons).",
    "label.shortcuts_typing": "The keys do nothing while you type in a text box: press Tab to leave it first.",
    "label.saved": "Saved {value} on claim {claim_id}.",
    "label.hold": "Hold this case",
    "label.hold_reason": "Reason",
    "label.hold_note": "Note (optional)",
    "label.hold_button": "Put the case on hold",
    "label.held": "The case is on hold: {reason}.",
    "label.draft_restored": "Restored your unsaved draft from {time}.",
    "label.draft_restored_value": "Restored your unsaved draft from {time}. You had chosen {value}; "
                                  "it is not saved until you press a label button.",
    "label.draft_kept": "Your input is kept as a draft (last at {time}): a reload or reconnect restores it. "
                        "Only you can see it.",
    "label.draft_elsewhere": "Another tab or window of yours changed this claim's draft at {time}. This tab "
                             "keeps showing its own input; your next change here replaces that draft.",
    "label.draft_replaced": "This replaced the draft another tab or window of yours had kept at {time}; "
                            "the draft now holds what this tab shows.",
    "label.draft_blocked": "You have an unsaved draft on this claim from {time}; it cannot become a label now.",
    "label.draft_discard": "Discard draft",
    "label.draft_discarded": "Draft discarded.",
    "label.stale_kept": "Your input is kept below, also as a draft (a reload restores it). \"Your saved label\" "
                        "next to the claim now shows the label saved elsewhere; press a label button to replace "
                        "it with yours.",
    # --- labels to review after `import --update`, and the case's RAG fields (Label, Adjudicate)
    "label.citation_gone": "Your saved label cites {ids}, which this claim no longer shows: saving drops that "
                           "citation. Cite the passages shown that justify your label.",
    "label.review": "This claim changed after you labeled it ({changed}); review your label: your saved label is "
                    "filled in below, save it again (changed or not).",
    "label.changed.text": "text",
    "label.changed.passages": "passages",
    "case.details": "Case details: required / forbidden evidence, expected behaviour, principal, corpus release",
    "case.required_evidence": "Required evidence",
    "case.forbidden_evidence": "Forbidden evidence",
    "case.expected_behavior": "Expected behaviour",
    "case.principal": "Principal (who asks)",
    "case.corpus_release": "Corpus release",
    "passage.required": "Required evidence for this case",
    "passage.forbidden": "Forbidden evidence for this case: the answer must not use it",
    "adjudicate.changed_after_labels": "The claim's text or passages changed after it was labeled: your decision "
                                       "settles it (or the labelers review their labels on the Label page).",
    # adjudicate page
    "adjudicate.waiting": "Claims waiting for a decision: {n} (claims you label are not shown).",
    "label.too_fast": "Ignored a second click: the claim had just changed. Look at this claim, then choose its label.",
    "adjudicate.empty": "No disputed claim waits for you.",
    "adjudicate.pick": "Claim to decide",
    "adjudicate.option": "{claim_id} (case {case_id})",
    "adjudicate.cited": "Cited: {passages}",
    "adjudicate.cited_passage": "passage {n} ({passage_id})",
    "passage.cited_by": "Cited by {labelers}",
    "adjudicate.severity": "Severity: {severity}",
    "adjudicate.decision": "Final label",
    "adjudicate.stale": "Decided before as {value}, but a label or the claim changed since: decide again.",
    "adjudicate.rationale_hint": "Why this final label? The two labels stay as they are.",
    "adjudicate.rationale": "Rationale (required)",
    "adjudicate.queue": "Queue ({n})",
    "adjudicate.shortcuts": "Keys 1, 2, 3 decide support, contradict, insufficient.",
    "adjudicate.saved": "Decided {value} on claim {claim_id}.",
    # agreement page
    "agreement.note": "Agreement measures how clearly the labeling guideline can be applied by two people "
                      "labeling blind. It is not a measure of the RAG system's quality: low agreement means "
                      "the guideline needs work.",
    "agreement.scope": "{items} claims with two or more labels, of {scope} in scope; {raters} labelers.",
    "agreement.overall": "Overall",
    "agreement.by_slice": "Per slice",
    "agreement.indicative_help": "A slice with fewer than 10 claims is indicative only.",
    "agreement.indicative": "indicative only",
    "agreement.undefined": "undefined: {reason}",
    "agreement.undefined_short": "undefined",
    "agreement.no_data": "no data",
    "agreement.n": "n = {used} / {scope}",
    "agreement.confusion": "Confusion matrix",
    "agreement.pair": "{a} (rows) vs {b} (columns), {n} claims both labeled",
    "agreement.no_pairs": "No claim has two labels yet.",
    "agreement.label_counts": "Label counts per labeler",
    "metric.percent_agreement": "Percent agreement",
    "metric.cohen_kappa": "Cohen's kappa",
    "metric.scott_pi": "Scott's pi",
    "metric.fleiss_kappa": "Fleiss' kappa",
    "metric.krippendorff_alpha": "Krippendorff's alpha (nominal)",
    "metric.gwet_ac1": "Gwet's AC1",
    "metric.brennan_prediger": "Brennan-Prediger",
    "agreement.computing": "Computing agreement with {n:,} bootstrap resamples...",
    "agreement.value_only": "{value} (no interval)",
    "agreement.no_interval": "no interval",
    "agreement.undefined_note": "undefined (note {n})",
    "agreement.note_line": "Note {n}. Undefined: {reason}.",
    "agreement.analytic_none": "—",
    "agreement.analytic_missing": "none: {why}",
    "agreement.whole_range_because": "The interval of {names}: {why}.",
    "agreement.list_separator": ", ",
    "agreement.figure_note": "{figure} (note {n})",
    "agreement.note_line_any": "Note {n}. {text}.",
    "agreement.undefined_note_reason": "Undefined: {reason}",
    "agreement.interval_note_reason": "Interval: {reason}",
    "agreement.n_short": "{used} / {scope}",
    "agreement.ci_help": "Brackets hold 95% percentile bootstrap intervals over claims ({n:,} resamples, seed 0). "
                         "Analytic intervals are given with two labelers only: Cohen's kappa by the large-sample "
                         "variance of Fleiss, Cohen & Everitt (1969), percent agreement by Wilson's score interval.",
    "agreement.chance_help": "Chance agreement: none for percent agreement; each labeler's own label mix for Cohen's "
                             "kappa; the labels pooled over labelers for Scott's pi, Fleiss' kappa and Krippendorff's "
                             "alpha (which also corrects for small samples); 1 / number of categories for "
                             "Brennan-Prediger; Gwet's AC1 shrinks it as one category dominates, so skew affects it little.",
    "agreement.thresholds": "Krippendorff (2004) suggests relying on alpha ≥ 0.800 and drawing only tentative "
                            "conclusions from 0.667 ≤ alpha < 0.800.",
    "agreement.overall_chart": "All coefficients with their 95% bootstrap intervals",
    "agreement.overall_chart_alt": "Dot plot of the seven agreement coefficients with 95% interval whiskers; "
                                   "the table above gives the same figures.",
    "agreement.chart_x": "Coefficient (-1 to 1; 0 = chance level)",
    "agreement.chart_how": "Point: the value; whisker: its 95% bootstrap interval; dashed line: 0, chance level.",
    "agreement.chart_x_share": "Specific agreement (0 to 1)",
    "agreement.label_counts_help": "Labels per labeler on the claims in scope (share of that labeler's labels). "
                                   "Different mixes between labelers lower Scott's pi and alpha more than Cohen's kappa.",
    "col.labeler": "Labeler",
    "col.total": "Total",
    "col.analytic": "Analytic 95% CI",
    "agreement.count_share": "{n} ({share:.0%})",
    "metric_short.percent_agreement": "% agreement",
    "metric_short.cohen_kappa": "Cohen's κ",
    "metric_short.scott_pi": "Scott's π",
    "metric_short.fleiss_kappa": "Fleiss' κ",
    "metric_short.krippendorff_alpha": "Krippendorff's α",
    "metric_short.gwet_ac1": "Gwet's AC1",
    "metric_short.brennan_prediger": "Brennan-Prediger",
    "metric_about.percent_agreement": "none: the raw share of claims labeled alike",
    "metric_about.cohen_kappa": "from each labeler's own label mix (two labelers)",
    "metric_about.scott_pi": "from the labels pooled over both labelers",
    "metric_about.fleiss_kappa": "from the pooled labels, any number of labelers",
    "metric_about.krippendorff_alpha": "from the pooled labels, small-sample corrected; missing labels allowed",
    "metric_about.gwet_ac1": "shrinking as one category dominates: little affected by skew",
    "metric_about.brennan_prediger": "1 / number of categories (all equally likely)",
    "agreement.indicative_overall": "Only {n} claims have two labels: with fewer than {below}, every figure "
                                    "here is indicative only; label more before drawing conclusions.",
    "agreement.no_interval_because": "No interval for {metric}: {why}.",
    "agreement.zero_width": "its interval has zero width (every resample gave the same value), which says nothing "
                            "about how many more claims are needed",
    "agreement.paradox": "Percent agreement is high ({pa:.3f}) but {kappa_name} ({kappa:.3f}) is much lower "
                         "because {category} holds {share:.0%} of the labels, so the agreement expected by chance is high "
                         "(the kappa paradox; Feinstein & Cicchetti 1990). Gwet's AC1, less sensitive to such skew, "
                         "is {ac1}.",
    "agreement.sample_size": "How many more claims?",
    "agreement.target": "Target width of the 95% interval (±)",
    "agreement.target_option": "±{hw:.2f}",
    "agreement.more_items": "About {more:,} more double-labeled claims would bring the 95% interval of {metric} to "
                            "±{target:.2f} (now ±{now:.2f} from {n:,} claims); an estimate assuming the labels keep "
                            "their current mix.",
    "agreement.already_narrow": "The 95% interval of {metric} is already ±{now:.2f} from {n:,} claims, within the "
                                "target ±{target:.2f}: no more claims are needed for it.",
    "agreement.no_estimate": "No estimate of the claims needed: {metric} has no interval ({reason}).",
    "agreement.sample_method": "An interval's width shrinks as 1/√n (Efron & Tibshirani 1993), so the "
                               "claims needed are ⌈n × (now / target)²⌉. A planning estimate, not a promise.",
    "agreement.breakdowns": "Breakdowns",
    "agreement.by_split": "Per split",
    "agreement.by_guideline_version": "Per guideline version",
    "agreement.tab": "{name} ({n})",
    "agreement.group_name.slice": "Slice",
    "agreement.group_name.split": "Split",
    "agreement.group_name.guideline_version": "Guideline version",
    "agreement.single_group": "{what}: every claim with two labels is in one group ({group}), so there is no breakdown.",
    "agreement.indicative_help_any": "A group with fewer than {n} claims is indicative only.",
    "agreement.group_none": "none set",
    "agreement.group_mixed": "mixed (labels under different versions)",
    "agreement.group_row": "{group} · {n} claims",
    "agreement.group_row_indicative": "{group} · {n} claims · indicative only",
    "agreement.marker_full": "{n} or more claims",
    "agreement.marker_indicative": "indicative only (fewer than {n} claims)",
    "agreement.group_chart": "{what}: coefficients per group with 95% intervals",
    "agreement.group_chart_alt": "Dot plot per coefficient: one row per {what}, a point at the value and a whisker "
                                 "for its 95% interval; indicative groups are drawn as triangles and named so in the "
                                 "row label. The table above gives the same figures.",
    "agreement.confusion_help": "Rows: the first labeler's label; columns: the second's. The diagonal holds the "
                                "agreements; off the diagonal, which categories get confused.",
    "agreement.confusion_chart": "Confusion matrix of {a} (rows) and {b} (columns)",
    "agreement.pairs_many": "{n} pairs of labelers share claims. The table below lists them all; {shown} at a time "
                            "are drawn here as confusion matrices, in the order chosen. Open any pair by name, or "
                            "turn the page.",
    "agreement.pair_order": "Order of the pairs",
    "agreement.pair_order.kappa": "Lowest kappa first",
    "agreement.pair_order.items": "Most claims in common first",
    "agreement.pair_order.name": "By name",
    "agreement.pair_page": "Pairs drawn",
    "agreement.pair_page_option": "{first}–{last} of {n}",
    "agreement.pair_pick": "Open a pair",
    "agreement.pair_pick_none": "none chosen",
    "agreement.pair_option": "{a} and {b}, {n} claims both labeled",
    "agreement.value_not_drawn": "{value} (interval once drawn)",
    "agreement.pairs_many_help": "A pair's bootstrap intervals ({n:,} resamples) are computed when its confusion "
                                 "matrix is drawn above; for every pair the last column gives kappa's analytic "
                                 "(large-sample) interval.",
    "agreement.pairs": "Labeler pairs",
    "agreement.pairs_help": "Cohen's kappa and percent agreement of each pair of labelers over the claims both labeled.",
    "agreement.pair_matrix": "Cohen's kappa per pair of labelers",
    "agreement.pair_matrix_alt": "Heatmap of Cohen's kappa for every pair of labelers, the value printed in each cell.",
    "agreement.pair_matrix_two": "With two labelers the one pair's kappa is the overall Cohen's kappa; a labeler-pair "
                                 "matrix is drawn from three labelers on.",
    "agreement.cell_none": "no shared claims",
    "col.labeler_a": "Labeler A",
    "col.labeler_b": "Labeler B",
    "col.both": "Claims both labeled",
    "agreement.by_category": "Per category",
    "agreement.category_help": "Specific agreement: when one labeler said a category (for example {example}), how "
                               "often the other labeler said it too. Ratings: labels in the category on claims with "
                               "two or more labels.",
    "agreement.category_chart": "Specific agreement per category with 95% intervals",
    "agreement.category_chart_alt": "Dot plot of the specific agreement of each category with its 95% interval; "
                                    "the table beside gives the same figures.",
    "col.category": "Category",
    "col.specific": "Specific agreement [95% CI]",
    "col.ratings": "Ratings",
    "col.more_items": "More claims for ±{target:.2f}",
    "agreement.more_items_help": "More claims for ±{target:.2f}: about how many more double-labeled claims the group "
                                 "would need for the 95% interval of its Krippendorff's alpha to narrow to ±{target:.2f}.",
    # releases page
    "releases.create": "Create a gold release",
    "releases.name": "Release name",
    "releases.name_hint": "gold-v1",
    "releases.only_final": "Only final claims (agreed and adjudicated)",
    "releases.only_final_help": "Without it, the release is refused while any claim in scope is disputed, "
                                "stale, on hold or unlabeled.",
    "releases.create_button": "Create release",
    "releases.created": "Release {name} created with {claims} claims in {path}. Left out: {left_out}.",
    "releases.created_sha": "The SHA-256 of {name}'s manifest.json (copy it with the button at its right; "
                            "`annotator release verify FOLDER --manifest-sha256 HASH` checks downloaded files against it):",
    "releases.list": "Releases",
    "releases.none": "No release yet.",
    "releases.pick": "Release",
    "releases.verify": "Verify files against the manifest",
    "releases.verify_ok": "Release {name}: every file matches its manifest.",
    "releases.verify_bad": "Release {name} does not match its manifest:",
    # releases page: compare two releases
    "releases.compare": "Compare releases",
    "releases.compare_older": "Older release",
    "releases.compare_newer": "Newer release",
    "releases.compare_button": "Compare",
    "releases.compare_side": "Side",
    "releases.compare_old": "older",
    "releases.compare_new": "newer",
    "releases.compare_added": "Added",
    "releases.compare_removed": "Removed",
    "releases.compare_changed": "Gold label changed",
    "releases.compare_unchanged": "Unchanged",
    "releases.compare_by_label": "Gold label changes (from -> to)",
    "releases.compare_from": "From (older)",
    "releases.compare_to": "To (newer)",
    "releases.compare_gold": "Gold label",
    "releases.compare_dataset": "Dataset",
    "releases.compare_no_claims": "None.",
    "releases.compare_download": "Download the comparison (JSON)",
    "releases.compare_more": "Of the claims in both: {text} with another text or other passages, {resolution} with "
                             "another resolution (agreed or adjudicated). Unchanged: the same gold label, resolution, "
                             "text and passages.",
    "releases.compare_text_or_passages_changed": "Text or passages changed",
    "releases.compare_resolution_changed": "Resolution changed (agreed or adjudicated)",
    "releases.compare_what": "What changed",
    # admin page
    "admin.tab_assign": "Assign cases",
    "admin.tab_users": "Users",
    "admin.tab_status": "Project status",
    "admin.assign_help": "Each case goes to two labelers who label it blind. Cases already assigned to a "
                         "labeler stay as they are.",
    "admin.dataset": "Dataset",
    "admin.dataset_all": "all datasets",
    "admin.assign_n": "First N cases",
    "admin.assign_cases": "Or these case ids (one a line)",
    "admin.assign_cases_hint": "demo-01",
    "admin.assign_labelers": "Two labelers",
    "admin.assign_two": "Choose exactly two labelers.",
    "admin.assign_button": "Assign",
    "admin.assigned": "{created} new assignments for {cases} cases to {labelers}.",
    "admin.add_user": "Add a user",
    "admin.add_button": "Add user",
    "admin.user_added": "User {name} added.",
    "admin.password_help": "At least 8 characters.",
    "admin.reset": "Reset a password",
    "admin.new_password": "New password",
    "admin.reset_button": "Set password",
    "admin.password_set": "Password of {name} set.",
    "admin.no_password": "No password (logs in by single sign-on)",
    "admin.no_password_help": "Only for a user who logs in through the single sign-on provider: they cannot "
                              "log in with a password.",
    "admin.password_missing": "Type a password (at least 8 characters), or tick \"No password\" for a user who "
                              "logs in by single sign-on.",
    "admin.password_and_none": "You typed a password and ticked \"No password\": clear one of them.",
    "admin.active": "Enable or disable",
    "admin.disable_button": "Disable",
    "admin.enable_button": "Enable",
    "admin.disabled": "User {name} disabled: they cannot log in.",
    "admin.enabled": "User {name} enabled.",
    "admin.sessions": "Login sessions",
    "admin.sessions_help": "A login lasts in its browser (a reload or a new tab stays logged in) until it has "
                           "gone unused for the idle expiry, or the absolute expiry has passed since the login, "
                           "whichever comes first. Logging out, disabling a user, and a change of their password "
                           "or roles end their logins at once. Changes apply to open logins too.",
    "admin.sessions_idle": "Idle expiry (hours)",
    "admin.sessions_absolute": "Absolute expiry (days)",
    "admin.sessions_button": "Save expiries",
    "admin.sessions_saved": "Logins now end after {idle} hour(s) unused, or {absolute} day(s) after the login.",
    "admin.tab_history": "Claim history",
    "admin.history_help": "Every recorded change of one claim and of its case, oldest first: labels, "
                          "adjudications, holds, assignments, changes by import --update, releases. It names "
                          "the labelers, so only admins see it. Times are UTC.",
    "admin.history_claim": "Claim id",
    "admin.history_claim_hint": "demo-01-c1",
    "admin.history_unknown": "No claim has the id '{claim_id}'.",
    "admin.history_dataset": "Claim '{claim_id}' is in several datasets: choose one",
    "admin.history_of": "Claim {claim_id} · case {case_id} · dataset {dataset}",
    "admin.history_none": "Nothing is recorded about this claim yet.",
    "admin.correct": "Correct a label",
    "admin.correct_help": "Change a labeler's stored label on this claim, for example a slip they report after "
                          "the second label landed. The label stays theirs; its revision goes up by one, and the "
                          "change, who made it and your reason appear in the history above. A correction after "
                          "an adjudication makes the claim stale: it must be decided again before a release.",
    "admin.correct_none": "This claim has no label to correct yet.",
    "admin.correct_own": "You label this claim yourself, so another admin must correct its labels. Revise your "
                         "own label on the Label page.",
    "admin.correct_labeler": "Labeler",
    "admin.correct_current": "Stored label of {labeler}: revision {revision}, source {source}",
    "admin.correct_cited": "Cited: {passages}",
    "admin.correct_severity_now": "Severity: {severity}",
    "admin.correct_value": "Corrected label",
    "admin.correct_passages": "Cited passages",
    "admin.correct_reason": "Reason for the correction (required)",
    "admin.correct_reason_hint": "e.g. aoi reported pressing 1 instead of 2",
    "admin.correct_button": "Correct the label",
    "admin.correct_restart": "Start again from the stored label",
    "admin.correct_done": "Corrected {labeler}'s label on claim {claim_id}: {before} -> {after} (revision {revision}).",
    "admin.correct_stale": "The claim had been adjudicated, so it is now stale: it is back in the adjudication "
                           "queue, and a release refuses it until it is decided again.",
    "admin.correct_unchanged": "Nothing changed: {labeler}'s stored label already says that.",
    "status.cases": "Cases",
    "status.claims": "Claims",
    "status.labels": "Labels",
    "status.adjudications": "Adjudications",
    "status.releases": "Releases",
    "status.holds": "Cases on hold",
    # table columns
    "col.name": "Name",
    "col.roles": "Roles",
    "col.active": "Active",
    "col.has_password": "Has password",
    "col.claim": "Claim",
    "col.claims": "Claims",
    "col.case": "Case",
    "col.cases": "Cases",
    "col.slice": "Slice",
    "col.split": "Split",
    "col.state": "State",
    "col.labels": "Labels",
    "col.metric": "Coefficient",
    "col.value": "Value [95% CI]",
    "col.n": "Items used / in scope",
    "col.items": "Items",
    "col.indicative": "Note",
    "col.reason": "Reason",
    "col.created": "Created",
    "col.created_utc": "Created (UTC)",
    "col.manifest_sha256": "SHA-256 (manifest)",
    "col.creator": "Creator",
    "col.path": "Folder",
    "col.guideline_version": "Guideline version",
    "col.when": "When (UTC)",
    "col.who": "Who",
    "col.what": "What",
    "col.change": "Change (before -> after)",
    # vocabularies
    **{f"value.{v}": v for v in LABELS},
    **{f"severity.{s}": s.replace("_", " ") for s in SEVERITIES},
    **{f"hold.{r}": r.replace("_", " ") for r in HOLD_REASONS},
    **{f"role.{r}": r for r in ROLES},
    # the Import page
    "page.imports": "Import",
    "imports.intro": "Upload a file and check it first: the check imports it and rolls it back, so it shows "
                     "exactly what the import would do. Nothing is written until you press Import.",
    "imports.kind": "What to import",
    "imports.kind.cases": "Cases (claims and passages)",
    "imports.kind.labels": "Labels",
    "imports.kind.adjudications": "Adjudications",
    "imports.file": "File (JSONL or CSV; RAGAS records also as Parquet)",
    "imports.format": "Format (--format)",
    "imports.dataset": "Dataset (--dataset)",
    "imports.dataset_help": "Empty: cases go to {defaults}; labels and adjudications find their claims in every dataset.",
    "imports.dataset_default": "'{dataset}' ({formats})",
    "imports.update": "Accept changed content (--update)",
    "imports.update_help": "For ids already stored: the change is recorded, and labels and decisions made on the old "
                           "content are marked for review.",
    "imports.partial": "Import the good lines (--partial)",
    "imports.partial_help": "Every bad line is listed and skipped; without it, one bad line refuses the whole file "
                            "and nothing is written.",
    "imports.slices": "New slice names this file may use, comma-separated (--slices)",
    "imports.slices_hint": "faq, long_answer",
    "imports.check": "Check",
    "imports.check_result": "Check of {file}: nothing was written",
    "imports.refused": "This file would be refused as a whole; nothing was written. Fix it and check again.",
    "imports.skipped": "{n} bad line(s) would be skipped (partial import):",
    "imports.warnings": "{n} warning(s):",
    "imports.preview": "Preview: the first {n} rows of the file",
    "imports.confirm": "Import",
    "imports.progress": "Importing {file} ...",
    "imports.stopped": "The import of {file} was stopped before it finished (a click elsewhere ended it): nothing of it was imported. Check the file again and press Import to retry.",
    "imports.done": "Imported {file}.",
    "imports.failed": "The import was refused; nothing was written. {error}",
    "imports.changed_since_check": "The database changed after the check: the counts below are those of the import itself.",
    "imports.col_kind": "Records",
    "imports.col_new": "New",
    "imports.col_unchanged": "Unchanged",
    "imports.col_updated": "Changed",
    "imports.col_file": "File",
    "imports.col_line": "Line",
    "imports.col_field": "Field",
    "imports.col_reason": "Problem and what to do",
    "state.unlabeled": "unlabeled",
    "state.single": "one label",
    "state.agreed": "agreed",
    "state.disputed": "disputed",
    "state.adjudicated": "adjudicated",
    "state.stale": "stale (changed after labeling or adjudication)",
    "state.on_hold": "on hold",
    # guideline
    "guideline.panel": "Guideline {version} · published {date}",
    "guideline.none": "No labeling guideline is published yet.",
    "guideline.open_wide": "Read in a wide window",
    "guideline.changed": "A new guideline version, {version}, was published: read it in the sidebar. Your labels from "
                         "now on record it.",
    "guideline.col_version": "Version",
    "guideline.col_published": "Published",
    "guideline.col_by": "By",
    "guideline.col_chars": "Characters",
    "guideline.col_sha256": "SHA-256",
    "guideline.col_current": "Current",
    "admin.tab_guideline": "Guideline",
    "admin.guideline_help": "Upload or paste the labeling guideline (Markdown), give it a new version name, check the "
                            "preview and publish it. Labels saved from then on record its version; labels already "
                            "saved keep theirs.",
    "admin.guideline_file": "Upload a Markdown file (it fills the text box)",
    "admin.guideline_text": "Guideline (Markdown)",
    "admin.guideline_version": "New version name",
    "admin.guideline_version_hint": "e.g. v2 or 2026-11",
    "admin.guideline_publish": "Publish",
    "admin.guideline_preview": "Preview",
    "admin.guideline_preview_empty": "The preview shows here once the text box holds the guideline.",
    "admin.guideline_loaded": "Loaded {file} into the text box: check the preview, then publish.",
    "admin.guideline_published": "Published guideline {version}: labels saved from now on record it.",
    "admin.guideline_versions": "Published versions",
    "admin.guideline_no_versions": "No version published yet.",
    # home
    "page.home": "Home",
    "home.labeler": "Your queue",
    "home.queue.to_label": "To label",
    "home.queue.to_review": "To review",
    "home.queue.on_hold": "On hold",
    "home.queue.done": "Done",
    "home.queue_help.to_label": "Claims of your cases you have not labeled yet.",
    "home.queue_help.to_review": "Claims whose text or passages changed after you labeled them: review your label "
                                 "and save it again.",
    "home.queue_help.on_hold": "Claims to label or review whose case you put on hold: they wait until you or an admin lift the hold, or it expires {days} days after you placed it.",
    "home.queue_help.done": "Claims you have labeled, with nothing to review.",
    "home.next_claim": "Label the next claim: {claim_id}",
    "home.col_dataset": "Dataset",
    "home.adjudicator": "Disputes waiting for you",
    "home.disputes_waiting": "Waiting",
    "home.disputes_stale": "Of them stale",
    "home.disputes_stale_help": "Claims decided or agreed once whose text, passages or labels changed since.",
    "home.oldest_since": "Oldest waiting since",
    "home.oldest_since_help": "The day the longest-waiting claim became disputed or stale (UTC).",
    "home.open_disputes": "Open the Adjudicate page ({n} waiting)",
    "home.open_oldest": "Decide the oldest first: {claim_id}",
    "home.admin": "Project",
    "home.left_out": "{n} claims you are assigned to label and have not labeled yet are left out of every figure "
                     "below (you would see the other labels on them).",
    "home.no_claims": "No claims yet: import cases on the Import page.",
    "home.final": "Final (agreed or adjudicated)",
    "home.final_help": "The claims a release with only the final claims (--only-final) would hold.",
    "home.chart_title": "Claims by slice and state",
    "home.chart_alt": "Bar chart: for each slice, how many claims are in each state; each bar is labeled with its "
                      "state and count.",
    "home.bar_text": "{state}: {n}",
    "home.agreement": "Agreement at a glance",
    "home.indicative": "Fewer than {n} claims with two labels: indicative only.",
    "home.open_agreement": "Open the Agreement page (intervals, slices, pairs)",
    "home.release": "The next release",
    "home.release_ready": "Nothing blocks a release: all {n} claims are agreed or adjudicated.",
    "home.release_refused": "A release of every claim (release create without --only-final) is refused now:",
    "home.blocked_by": "**{reason}**: {n}",
    "home.reason.unlabeled": "unlabeled",
    "home.reason.single": "one label only",
    "home.reason.disputed": "disputed",
    "home.reason.stale": "stale (changed after labeling or adjudication)",
    "home.reason.on_hold": "on hold",
    "home.reason.still_to_label": "yours to label first",
    "home.fix.unlabeled": "Assign cases or wait for labels (Admin)",
    "home.fix.single": "Assign a second labeler or wait for the label (Admin)",
    "home.fix.disputed": "Decide the disputes",
    "home.fix.stale": "Decide them again",
    "home.fix.on_hold": "See the holds (Admin, Project status)",
    "home.fix.still_to_label": "Label them",
    "home.refusal": "release create says: {message}",
    "home.leaks": "{n} final claims have severity leak: each is a release blocker, noted in the release's manifest.",
    "home.open_releases": "Open the Releases page",
    "admin.holds": "Holds in force",
    "admin.holds_help": "A hold parks its case in its holder's queue only and keeps the case out of a release until its holder or an admin lifts it, or until {days} days after it was placed.",
    "admin.holds_none": "No hold is in force.",
    "admin.lift_holds": "Lift the holds on {case_id}",
    "admin.holds_lifted": "Lifted {n} hold(s) on {case_id}.",
    "col.note": "Note",
    "col.holder": "Placed by",
    "col.placed_at": "Placed",
    "col.expires_at": "Expires",
    # judges page
    "page.judges": "Judges",
    "judges.note": "An automatic judge (an LLM, or any grader) scored against a frozen gold release: how often it "
                   "agrees with the gold, and how wrong it is when it is wrong, beside the human labelers. The figures "
                   "cover the dev split; look at the holdout once, when the judge is tuned.",
    "judges.no_runs": "No judge run yet. Import one from the command line: `annotator judge import FILE --run NAME "
                      "[--dataset D] [--model M] [--prompt-version P]`, FILE a CSV or JSONL of `claim_id`, `label` "
                      "and optional `confidence` and `rationale`.",
    "judges.no_releases": "No gold release yet: a judge is scored against one. Create one first on the Releases page "
                          "(or `annotator release create NAME --only-final`) once claims are labeled, and disputes "
                          "adjudicated.",
    "judges.run": "Judge run",
    "judges.release": "Gold release",
    "judges.run_meta": "About judge run {run}",
    "judges.meta.model": "Model",
    "judges.meta.prompt_version": "Prompt version",
    "judges.meta.dataset": "Dataset",
    "judges.meta.labels": "Labels",
    "judges.meta.labels_value": "{n} ({counts})",
    "judges.meta.created": "Imported (UTC)",
    "judges.meta.creator": "Imported by",
    "judges.meta.command_line": "command line",
    "judges.meta.source": "File",
    "judges.meta.source_value": "{name} (SHA-256 {sha256})",
    "judges.meta.note": "Note",
    "judges.col.field": "Field",
    "judges.col.detail": "Value",
    "judges.computing": "Scoring the judge with {n:,} case-level bootstrap resamples...",
    "judges.superseded": "Release {release} is superseded by {newer}: score the judge against the newest gold.",
    "judges.figures": "The judge against the gold",
    "judges.scope_dev": "**Dev split**: {gold} gold claims, {judged} labeled by the judge, {missing} not labeled "
                        "by it. Holdout claims left out: {left_out}.",
    "judges.scope_holdout": "**Holdout split**: {gold} gold claims, {judged} labeled by the judge, {missing} not "
                            "labeled by it.",
    "judges.indicative_overall": "Only {n} claims are judged: with fewer than {below}, every figure here is "
                                 "indicative only.",
    "metric.false_pass_rate": "False pass rate",
    "metric.false_fail_rate": "False fail rate",
    "judges.about.percent_agreement": "the share of claims where the judge's label is the gold label",
    "judges.about.cohen_kappa": "agreement beyond what the judge's and the gold's label mixes give by chance",
    "judges.about.false_pass_rate": "of the claims whose gold is not support, the share the judge calls support",
    "judges.about.false_fail_rate": "of the claims whose gold is support, the share the judge does not call support",
    "judges.n": "n = {n}",
    "judges.n_cases": "n = {n} · cases = {cases}",
    "judges.no_interval": "no interval: {why}",
    "judges.col.figure": "Figure",
    "judges.col.value": "Value [95% CI, cases resampled]",
    "judges.col.n": "n (claims)",
    "judges.ci_help": "Brackets hold 95% percentile bootstrap intervals that resample whole cases ({n:,} resamples, "
                      "seed 0): the claims of one case share its question and passages, so they are not independent. "
                      "Analytic: Wilson's score interval for the rates, the large-sample interval for kappa (none "
                      "under 10 claims). Rates are fractions from 0 to 1.",
    "judges.n_help": "n: the claims a figure is a fraction of: every judged claim for agreement and kappa; those whose "
                     "gold is not support for the false pass rate; those whose gold is support for the false fail "
                     "rate; cases: the cases those claims come from (the bootstrap resamples cases). Under 10 claims "
                     "or under 10 cases, a figure is indicative only.",
    "judges.confusion": "Confusion matrix",
    "judges.confusion_help": "Rows: the gold label; columns: the judge's. The diagonal holds the agreements; the "
                             "support column off the diagonal holds the false passes.",
    "judges.confusion_axes": "gold \\ judge",
    "judges.confusion_chart": "Gold (rows) and judge {run} (columns)",
    "judges.gold": "Gold",
    "judges.judge": "Judge",
    "judges.by_slice": "Per slice",
    "judges.by_slice_none": "No slice holds a claim of this split.",
    "judges.by_slice_help": "Where the judge goes wrong: the false pass and false fail rates of each slice. A rate "
                            "whose n is under {n} is indicative only.",
    "judges.col.gold_claims": "Gold claims",
    "judges.col.judged": "Judged",
    "judges.slice_chart": "False pass and false fail rate per slice, with 95% intervals",
    "judges.slice_chart_x": "Rate (0 to 1)",
    "judges.slice_chart_how": "Point: the rate; whisker: its 95% case-level bootstrap interval.",
    "judges.slice_chart_alt": "Dot plot of the judge's false pass and false fail rates, one row per slice, a point at "
                              "the rate and a whisker for its 95% interval.",
    "judges.marker_full": "n of {n} or more",
    "judges.marker_indicative": "indicative only (under {n} claims or cases)",
    "judges.humans": "The judge beside the humans",
    "judges.humans_help": "Each labeler's blind labels (before adjudication) scored against the same gold in the "
                          "same way: the human range is the noise floor to read the judge against. The labelers' "
                          "labels made the gold (an agreed claim's gold is their label), so their figures are "
                          "optimistic.",
    "judges.humans_none": "The release holds no labeler's labels on the claims of this split.",
    "judges.col.who": "Who",
    "judges.col.claims": "Claims",
    "judges.judge_row": "Judge ({run})",
    "judges.human_range": "Human range",
    "judges.range": "{low} – {high}",
    "judges.corrected": "Corrected support rate (PPI++)",
    "judges.corrected_help": "The true support rate of every claim the judge labeled, estimated from the judge's "
                             "labels and corrected by its errors on the gold claims (prediction-powered inference: "
                             "Angelopoulos et al. 2023, and PPI++), beside the judge's own rate and the gold's.",
    "judges.corrected_none": "No corrected support rate: {why}. It needs a run that also labels claims outside the "
                             "release (a new RAG run's claims, for example).",
    "judges.col.estimate": "Estimate",
    "judges.col.rate": "Support rate [95% CI, cases resampled]",
    "judges.col.rate_claims": "Support rate [95% CI]",
    "judges.col.rate_independent": "95% CI if claims were independent",
    "judges.col.how": "From",
    "judges.corrected.ppi": "Corrected (PPI++)",
    "judges.corrected.ppi_how": "the judge on all {big_n} + {n} claims, corrected by its errors on the {n} gold claims",
    "judges.corrected.judge_only": "Judge only",
    "judges.corrected.judge_only_how": "the judge's labels of all {big_n} + {n} claims, as they are",
    "judges.corrected.gold_only": "Gold only",
    "judges.corrected.gold_only_how": "the gold labels of the {n} released claims the judge labeled",
    "judges.corrected.lambda": "Power-tuning weight lambda {weight} (1: plain PPI; 0: the gold-only rate); standard "
                               "error {se}.",
    "judges.corrected.missing": "Missing: {why}.",
    "judges.corrected.assumption": "Assumption: the estimate {assumption}.",
    "judges.slice_mix_differs": "The released claims' slice mix differs from the judged-only claims', beyond chance "
                                "(chi-square p {p}, under {max_p}) and by a total variation distance of {distance} (over "
                                "{min_distance}); {labeled} and {unlabeled} claims: they are not a random sample of them, "
                                "and the corrected rate may be biased.",
    "judges.slice_mix_same": "Slice mix: no difference between the released claims and the judged-only claims is "
                             "shown that is both beyond chance (chi-square p under {max_p}) and large (total variation "
                             "distance over {min_distance}): distance {distance}, p {p}; {labeled} and {unlabeled} "
                             "claims. Few released claims show little either way.",
    "judges.slice_mix_unknown": "Slice mix not compared: {why}.",
    "judges.disagreements": "Disagreements ({n})",
    "judges.disagreements_none": "The judge agrees with the gold on every claim of this split.",
    "judges.disagreements_help": "Each claim where the judge's label differs from the gold; a link opens its history "
                                 "on the Admin page.",
    "judges.disagreement": "{claim_id} · case {case_id} · slice {slice} · {split}: gold {gold}, judge {judge}",
    "judges.disagreements_more": "{n} more: the downloaded report (or `annotator judge report ... --json`) lists them all.",
    "judges.download": "Download the report (JSON)",
    "judges.holdout": "Holdout",
    "judges.holdout_none": "This release holds no holdout claims.",
    "judges.holdout_left_out": "The figures above leave out the release's holdout claims: **{n}**. {views}",
    "judges.holdout_views": "Viewings of this release's holdout figures so far: {this_run} for this run, {any_run} for "
                            "any run.",
    "judges.holdout_warning": "Tune the judge (its prompt, model, threshold) on dev, and look at the holdout once, at "
                              "the end: a holdout looked at while tuning is tuned on too. Each viewing is recorded in "
                              "the audit trail, with your name.",
    "judges.holdout_button": "Show holdout figures",
    "judges.holdout_shown": "Holdout figures",
    # the Runs page
    "page.runs": "Runs",
    "runs.note": "A RAG system's run scored against a frozen gold release, case by case, with retrieval and "
                 "generation kept apart; and a candidate run compared with its baseline on the same cases, with the "
                 "gate's decision. Blockers come first: each stops a change whatever the averages say. The same "
                 "figures as `annotator run report` and `annotator run compare`.",
    "runs.no_runs": "No run yet. Import one from the command line: `annotator run import FILE --run NAME` (JSONL, "
                    "one case a line: case_id, retrieved, behavior, and optionally answer, cited, claims).",
    "runs.no_releases": "No gold release yet: a run is scored against one. Create one first on the Releases page "
                        "or with `annotator release create NAME --only-final`.",
    "runs.release": "Gold release",
    "runs.release_help": "The frozen gold the runs are scored against; its folder is verified against its manifest "
                         "first. The newest is chosen at first.",
    "runs.k": "k (rank cut)",
    "runs.k_help": "The retrieval figures look at the top k retrieved passages (or documents).",
    "runs.unit": "Unit",
    "runs.unit_help": "Score retrieval by passage, or by document: a document counts once, at the best rank of its "
                      "passages.",
    "runs.unit.passage": "passage",
    "runs.unit.doc": "document",
    "runs.rule": "Retrieval rule",
    "runs.rule_help": "When a case's retrieval is ok: every relevant passage in the top k (all), or at least one (any).",
    "runs.rule.all": "all relevant in the top k",
    "runs.rule.any": "any relevant in the top k",
    "runs.tab_report": "Report",
    "runs.tab_compare": "Compare",
    "runs.run": "Run",
    "runs.split": "Split",
    "runs.split_help": "The cases scored: all of them, or the dev or the holdout split only.",
    "runs.split.all": "all cases",
    "runs.split.dev": "dev",
    "runs.split.holdout": "holdout",
    "runs.run_meta": "About run {run}",
    "runs.meta.dataset": "Dataset",
    "runs.meta.cases": "Cases",
    "runs.meta.unknown": "Retrieved ids the dataset does not know",
    "runs.meta.key": "Meta: {name}",
    "runs.meta.created": "Imported (UTC)",
    "runs.meta.creator": "Imported by",
    "runs.meta.source": "File",
    "runs.meta.note": "Note",
    "runs.computing": "Scoring with {n:,} case-level bootstrap resamples...",
    "runs.superseded": "Release {release} is superseded by {newer}: score the runs against the newest gold.",
    "runs.scope": "**{split}**: {n} cases scored of the release's {of} (missing from the run: {missing}; run cases "
                  "outside the release: {outside}); without relevant evidence (scored on behaviour only): "
                  "{no_evidence}; retrieved ids the dataset does not know: {unknown}.",
    "runs.options": "k {k} · unit: {unit} · retrieval rule: {rule}",
    "runs.blockers": "Blockers: {n}. Each stops the change whatever the averages say.",
    "runs.blockers_none": "No blocker: no forbidden passage retrieved, no answer where the gold expects abstaining or "
                          "refusing, no severe contradiction.",
    "runs.figures": "Figures",
    "runs.indicative_overall": "Only {n} cases are scored: with fewer than {below}, every figure here is indicative "
                               "only, and its interval is wide.",
    "runs.ci": "95% CI {interval}",
    "runs.ci_help": "Brackets hold 95% percentile bootstrap intervals that resample whole cases ({n:,} resamples). "
                    "Retrieval figures cover the cases with relevant evidence; the claim support rate the claims of "
                    "every case; the behaviour match rate the cases that state an expected behaviour.",
    "runs.about.pass_rate": "the share of cases that pass: retrieval ok and generation ok, no forbidden passage",
    "runs.about.mean_recall_at_k": "the mean share of a case's relevant evidence found in the top k",
    "runs.about.mrr": "the mean of 1 / the rank of the first relevant passage (0 when none is retrieved)",
    "runs.about.claim_support_rate": "the share of the answers' claims labeled support",
    "runs.col.value": "Value [95% CI, cases resampled]",
    "runs.by_slice": "Per slice",
    "runs.by_slice_none": "No slice holds a case of this split.",
    "runs.by_slice_help": "Each figure per slice, two decimals: a slice holds few cases. A slice of fewer than {n} "
                          "cases is indicative only.",
    "runs.col.passed": "Passed",
    "runs.slice_row": "{slice} · {n} cases",
    "runs.slice_chart": "Figures per slice, with 95% intervals",
    "runs.slice_chart_x": "Value (0 to 1)",
    "runs.slice_chart_how": "Point: the figure; whisker: its 95% case-level bootstrap interval.",
    "runs.slice_chart_alt": "Dot plot of the pass rate, recall, MRR and claim support rate of the run, one row per "
                            "slice, a point at the value and a line over its 95% interval; the table above gives "
                            "the same values.",
    "runs.marker_full": "{n} cases or more",
    "runs.marker_indicative": "indicative only (under {n} cases)",
    "runs.counts": "Statuses and failure labels",
    "runs.counts_help": "A case fails on retrieval (a relevant passage missing from the top k, or a forbidden "
                        "passage retrieved), on generation (a claim not supported, a wrong behaviour or answer), "
                        "or on both; its failure labels say why.",
    "runs.col.status": "Status",
    "runs.col.label": "Failure label",
    "runs.labels_none": "No case carries a failure label.",
    "runs.status.passed": "passed",
    "runs.status.retrieval_failure": "retrieval failure",
    "runs.status.generation_failure": "generation failure",
    "runs.status.both": "retrieval and generation failure",
    "runs.label.retrieval_miss": "retrieval miss",
    "runs.label.partial_evidence": "partial evidence",
    "runs.label.stale_evidence": "stale evidence",
    "runs.label.unauthorized_evidence": "unauthorized evidence",
    "runs.label.unsupported_claim": "unsupported claim",
    "runs.label.answered_without_evidence": "answered without evidence",
    "runs.label.over_abstain": "over-abstain",
    "runs.label.behavior_mismatch": "behaviour mismatch",
    "runs.label.answer_mismatch": "answer mismatch",
    "runs.failures": "Failed cases ({n})",
    "runs.failures_none": "Every case of this split passed.",
    "runs.filter_status": "Status",
    "runs.filter_label": "Failure labels",
    "runs.filter_label_help": "Cases carrying every label chosen.",
    "runs.failures_shown": "{shown} of {n} failed cases shown.",
    "runs.col.labels": "Failure labels",
    "runs.case": "Open a case",
    "runs.case_help": "Its question, the run's retrieved passages with their ranks, its gold passages and claims, "
                      "and the run's answer and claims.",
    "runs.case_none": "(none)",
    "runs.case_title": "Case {case_id}",
    "runs.case_meta": "Slice {slice} · split {split} · {status} · failure labels: {labels}",
    "runs.case_behavior": "Behaviour: **{behavior}**; the gold expects **{expected}** ({match}).",
    "runs.behavior_none": "none stated",
    "runs.behavior.answer": "answer",
    "runs.behavior.answer_with_citation": "answer with a citation",
    "runs.behavior.abstain": "abstain",
    "runs.behavior.clarify": "ask to clarify",
    "runs.behavior.refuse": "refuse",
    "runs.match_yes": "matches",
    "runs.match_no": "does not match",
    "runs.match_none": "nothing to match",
    "runs.run_answer": "The run's answer",
    "runs.expected_answer": "The expected answer",
    "runs.retrieved": "Retrieved by the run ({n}, best first; the top {k} are scored)",
    "runs.col.rank": "Rank",
    "runs.col.passage": "Passage",
    "runs.col.document": "Document",
    "runs.col.version": "Version",
    "runs.col.marks": "For this case",
    "runs.col.title": "Title",
    "runs.rank_doc": "{rank} (document {doc_rank})",
    "runs.mark.in_top_k": "in the top k",
    "runs.mark.relevant": "relevant",
    "runs.mark.forbidden": "forbidden",
    "runs.mark.stale": "outdated",
    "runs.mark.unknown": "unknown to the dataset",
    "runs.mark.cited": "cited by the answer",
    "runs.relevant": "Relevant evidence: {ids}. Not in the top k: {missed}.",
    "runs.passages": "The case's passages in the release",
    "runs.passages_none": "The release holds no passage of this case (a release of schema 1).",
    "runs.passage_rank_top": "Rank {rank} (in the top {k}): {title}",
    "runs.passage_rank": "Rank {rank} (below the top {k}): {title}",
    "runs.passage_not_retrieved": "Not retrieved: {title}",
    "runs.gold_claims": "The case's released claims (the gold)",
    "runs.col.text": "Text",
    "runs.col.gold": "Gold label",
    "runs.col.severity": "Severity",
    "runs.col.resolution": "Resolution",
    "runs.col.passages": "Shown with",
    "runs.run_claims": "The run's claims",
    "runs.run_claims_none": "The run gave no claim for this case.",
    "runs.col.label_given": "Label",
    "runs.download": "Download the report (JSON)",
    "runs.compare_needs_two": "A comparison needs two runs: import another with `annotator run import FILE --run NAME`.",
    "runs.base": "Baseline",
    "runs.candidate": "Candidate",
    "runs.compare_split": "Decide on",
    "runs.compare_split_help": "By default the holdout split when the release has one (cases kept unseen while "
                               "tuning), else every case.",
    "runs.split_default": "the release's choice",
    "runs.margin": "Margin",
    "runs.margin_help": "The pass-rate loss the gate tolerates: it holds when the lower bound of the change's 95% "
                        "interval is below minus the margin.",
    "runs.same_run": "Choose two different runs: the baseline and the candidate are the same.",
    "runs.decision.ship": "Decision: SHIP",
    "runs.decision.hold": "Decision: HOLD",
    "runs.decision.blocked": "Decision: BLOCKED",
    "runs.decision_help.ship": "No blocker, the pass rate does not drop beyond the margin, and no slice regresses.",
    "runs.decision_help.hold": "No blocker, but a drop is not ruled out, or a slice regresses: look before shipping.",
    "runs.decision_help.blocked": "The candidate has a blocker: it may not ship, whatever the averages say.",
    "runs.no_margin": "0 (no margin)",
    "runs.split_used_holdout": "Decided on the **{split}** split: the release has holdout cases, and the gate "
                               "decides on cases kept unseen while tuning.",
    "runs.split_used_all": "Decided on **{split}**: the release has no holdout split.",
    "runs.split_used_given": "Decided on **{split}**, as chosen.",
    "runs.common": "cases in both runs {n}; only in the baseline {only_base}; only in the candidate {only_candidate}",
    "runs.fixed": "Fixed ({n})",
    "runs.regressed": "Regressed ({n})",
    "runs.fix_rate": "Failed in the baseline, passed in the candidate. Fix rate: {rate}",
    "runs.regression_rate": "Passed in the baseline, failed in the candidate. Regression rate: {rate}",
    "runs.fixed_none": "No case was fixed.",
    "runs.regressed_none": "No case regressed.",
    "runs.pass_rates": "Pass rates",
    "runs.pass_rate_base": "Baseline pass rate",
    "runs.pass_rate_candidate": "Candidate pass rate",
    "runs.pass_rate_change": "Change",
    "runs.difference": "Change of the pass rate: **{delta}**, 95% CI (paired cases) {interval}; exact McNemar "
                       "p = {p} ({fixed} fixed, {regressed} regressed).",
    "runs.paired_help": "The paired interval resamples the common cases, the same ones for both runs ({n:,} "
                        "resamples); McNemar's exact test looks at the cases that changed only.",
    "runs.compare_slices": "Per slice",
    "runs.compare_slices_help": "A slice regresses when its one-sided exact test (more regressions than fixes), "
                                "Holm-corrected over the slices, is below {alpha}.",
    "runs.col.fixed": "Fixed",
    "runs.col.regressed": "Regressed",
    "runs.col.fix_rate": "Fix rate",
    "runs.col.regression_rate": "Regression rate",
    "runs.col.p": "p (one-sided)",
    "runs.col.p_holm": "p (Holm)",
    "runs.col.regresses": "Regresses",
    "runs.regresses": "REGRESSES",
    "runs.deltas": "Every figure, baseline and candidate",
    "runs.deltas_help": "On the cases both runs have; the interval resamples them in pairs.",
    "runs.col.base": "Baseline",
    "runs.col.candidate": "Candidate",
    "runs.col.delta": "Change",
    "runs.col.delta_ci": "95% CI (paired)",
    "metric.pass_rate": "Pass rate",
    "metric.mean_recall_at_k": "Recall@{k}",
    "metric.mean_precision_at_k": "Precision@{k}",
    "metric.hit_rate_at_k": "Hit rate@{k}",
    "metric.mrr": "MRR",
    "metric.mean_ndcg_at_k": "nDCG@{k}",
    "metric.claim_support_rate": "Claim support rate",
    "metric.behavior_match_rate": "Behaviour match rate",
    "metric.recall_at_k": "Recall@{k}",
    "metric.reciprocal_rank": "RR",
    # the Claim review page (views/claims.py)
    "page.claims": "Claim review",
    "claims.intro": "Fix how an answer was cut into claims before anyone labels them: split a claim in two, merge it "
                    "with the next, edit its text or drop one that states no fact. Each change needs a reason and is "
                    "kept in the claim's history; a claim with labels, a decision or a labeler's draft cannot be split, "
                    "merged or dropped.",
    "claims.no_datasets": "There is no data yet: import cases first (Import page).",
    "claims.no_cases": "This dataset has no cases.",
    "claims.dataset": "Dataset",
    "claims.case": "Case",
    "claims.case_typed": "Or type a case id (the list holds the first {n:,} cases)",
    "claims.question": "Question",
    "claims.answer": "Answer",
    "claims.claims": "Claims ({n})",
    "claims.heading": "Claim {n}: {claim_id}",
    "claims.span": "in the answer at {start}-{end}",
    "claims.no_span": "not found in the answer",
    "claims.labels": "{n} labels",
    "claims.has_draft": "a labeler has unsaved input on it",
    "claims.split": "Split",
    "claims.merge": "Merge with next",
    "claims.edit": "Edit",
    "claims.drop": "Drop",
    "claims.split_at": "Cut after character (1 to {length} less 1)",
    "claims.split_preview": "The two claims it becomes:",
    "claims.split_button": "Split the claim",
    "claims.merge_help": "Joins this claim and the next one into one claim, which keeps this claim's id.",
    "claims.merge_button": "Merge with the next claim",
    "claims.text": "Text",
    "claims.keep_labels": "Keep the labels (they become to review)",
    "claims.keep_labels_help": "Changes the text as import --update does: the labels and any decision stay, each "
                               "labeler reviews their label again.",
    "claims.edit_button": "Save the text",
    "claims.drop_help": "Removes this claim from the case, with its passage links.",
    "claims.drop_button": "Drop the claim",
    "claims.reason": "Reason (required)",
    "claims.reason_hint": "e.g. two facts in one sentence",
    "claims.split_done": "Split claim {claim_id} into {first} and {second}.",
    "claims.merge_done": "Merged claim {other} into {claim_id}.",
    "claims.edit_done": "Saved the new text of claim {claim_id}.",
    "claims.edit_to_review": "{n} labels are now to review.",
    "claims.edit_unchanged": "Nothing changed: claim {claim_id} already has that text.",
    "claims.drop_done": "Dropped claim {claim_id}.",
}

ENGLISH.update(MESSAGES)  # what the core and the services say (annotator/messages.py: "msg." keys), in English


LANGUAGES: tuple[str, ...] = ("en", "ja")
"""The interface languages, each with a catalog (the same codes as users.LOCALES)."""

CATALOGS: dict[str, dict[str, str]] = {"en": ENGLISH, "ja": JAPANESE}

LANGUAGE_KEY = "ui.language"
"""Session state: the language this browser session runs in (set by ui/language.py every run)."""

_forced: ContextVar[str | None] = ContextVar("annotator_ui_language", default=None)


def language_for(tag: str | None) -> str:
    """The language for a browser's language tag: "ja" for Japanese ("ja", "ja-JP", "ja_JP"),
    "en" for anything else and for no tag."""
    return "ja" if tag and tag.strip().replace("_", "-").split("-")[0].lower() == "ja" else "en"


@contextmanager
def use_language(language: str) -> Iterator[None]:
    """Within the block, t() and the number and date helpers write `language` (one of LANGUAGES),
    whatever the browser session says. Raises ValueError for another language."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; use one of {', '.join(LANGUAGES)}")
    token = _forced.set(language)
    try:
        yield
    finally:
        _forced.reset(token)


def current_language() -> str:
    """The language to write now (see the module's docstring for the order)."""
    forced = _forced.get()
    if forced is not None:
        return forced
    if get_script_run_ctx(suppress_warning=True) is None:  # not in a Streamlit run: a test, the CLI
        return "en"
    chosen = st.session_state.get(LANGUAGE_KEY)
    return chosen if chosen in LANGUAGES else language_for(st.context.locale)


def t(key: str, **fields: object) -> str:
    """The string for `key` in the current language (English when that catalog lacks it) with
    `fields` filled in, numbers written for the language; the key itself when unknown."""
    language = current_language()
    text = CATALOGS[language].get(key)
    if text is None:
        text = ENGLISH.get(key)
    if text is None:
        return key
    if not fields:
        return text
    return text.format(**{name: _field(value, language) for name, value in fields.items()})


def _field(value: object, language: str) -> object:
    """A field of t() as the language writes it: a number with its signs, a Message in this
    language, a vocabulary Term as its catalog word (as it is when the catalog has none)."""
    if _is_number(value):
        return _Number(value, language)
    if isinstance(value, Message):
        return t(value.key, **value.fields)
    if isinstance(value, Term):
        key = f"{value.kind}.{value.word}"
        return t(key) if key in ENGLISH else value.word
    if isinstance(value, Joined):
        return value.separator.join(format(_field(part, language)) for part in value.parts)
    return value


def error_text(error: BaseException) -> str:
    """What an error says, in the current language: the text of its message key (an
    AnnotatorError raised with `.of`, annotator/messages.py) with its fields; str(error) for an
    error raised with a plain text."""
    key = getattr(error, "key", None)
    return t(key, **getattr(error, "fields", {})) if key else str(error)


def message_text(message: Message | str) -> str:
    """A service's Message in the current language (a plain text as it is)."""
    return t(message.key, **message.fields) if isinstance(message, Message) else str(message)


# --- numbers and dates -------------------------------------------------------------------------


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@functools.cache
def _number_signs(language: str) -> dict[int, str]:
    """Python's number signs (",", ".", "-", "%") -> the language's, from CLDR."""
    signs = Locale.parse(language).number_symbols["latn"]
    return str.maketrans({",": signs["group"], ".": signs["decimal"], "-": signs["minusSign"], "%": signs["percentSign"]})


_PERCENT_SPEC = re.compile(r"(,?)(?:\.(\d+))?%")


_NONZERO_DIGIT = re.compile(r"[1-9]")


def number_text(value: float, spec: str = "", language: str | None = None) -> str:
    """`value` under a Python format spec (".3f", ",", ".0%", ...) written as `language` (default:
    the current one) writes numbers: its grouping, decimal, minus and percent signs, and where its
    percent sign goes ("25%", German "25 %"). Rounding is Python's, except that a negative number
    that rounds to zero is written as zero ("0.000", never "-0.000": -1e-17 from a sum is 0). An
    integer with no spec has its digits grouped: 1234567 -> "1,234,567"."""
    language = language or current_language()
    if spec == "" and isinstance(value, numbers.Integral) and not isinstance(value, bool):
        spec = ","
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and value <= 0 \
            and not _NONZERO_DIGIT.search(format(-value, spec)):
        value = 0.0
    percent = _PERCENT_SPEC.fullmatch(spec)
    if percent is None:
        return format(value, spec).translate(_number_signs(language))
    digits = format(value * 100, f"{percent[1]}.{percent[2] or 6}f").translate(_number_signs(language))
    pattern = Locale.parse(language).percent_formats[None].pattern.split(";")[0]  # "#,##0%", "#,##0\xa0%"
    return re.sub(r"[#0,.]+", lambda _: digits, pattern, count=1).replace("%", _percent_sign(language))


@functools.cache
def _percent_sign(language: str) -> str:
    return Locale.parse(language).number_symbols["latn"]["percentSign"]


class _Number:
    """A number field of t(): formats itself with number_text in the language of the string."""

    __slots__ = ("value", "language")

    def __init__(self, value: float, language: str) -> None:
        self.value, self.language = value, language

    def __format__(self, spec: str) -> str:
        return number_text(self.value, spec, self.language)

    def __str__(self) -> str:
        return number_text(self.value, "", self.language)


_DATE_PATTERNS: dict[str, tuple[str, str, str, str]] = {
    "en": ("yyyy-MM-dd", "HH:mm", "HH:mm:ss", "{1} {0}"),
}
"""(date, time, time with seconds, date-time join) of a language that departs from its CLDR
defaults. English is not one region's: ISO 8601 dates and a 24-hour clock ("2026-11-29 14:05")
read the same in every English-speaking country (CLDR's "en" is American: "Nov 29, 2026, 2:05 PM")."""


def date_text(moment: date | datetime, language: str | None = None) -> str:
    """A date (or a datetime's date, in the zone it carries) as `language` (default: the current
    one) writes it: "2026-11-29", "2026年11月29日"."""
    language = language or current_language()
    if not isinstance(moment, datetime):
        moment = datetime(moment.year, moment.month, moment.day)
    if language in _DATE_PATTERNS:
        return format_datetime(moment, _DATE_PATTERNS[language][0], tzinfo=moment.tzinfo, locale=language)
    return format_skeleton("yMMMd", moment, tzinfo=moment.tzinfo, locale=language)


def time_text(moment: datetime, language: str | None = None, *, seconds: bool = False) -> str:
    """A time of day to the minute (or the second) as `language` writes it: "14:05" ("14:05:33");
    in the time zone `moment` carries (converting is the caller's)."""
    language = language or current_language()
    if language in _DATE_PATTERNS:
        return format_datetime(moment, _DATE_PATTERNS[language][2 if seconds else 1], tzinfo=moment.tzinfo,
                               locale=language)
    return format_time(moment, "medium" if seconds else "short", tzinfo=moment.tzinfo, locale=language)


def datetime_text(moment: datetime, language: str | None = None, *, seconds: bool = False) -> str:
    """A date and time to the minute (or the second) as `language` (default: the current one)
    writes it: "2026-11-29 14:05", "2026年11月29日 14:05"; in the time zone `moment` carries."""
    language = language or current_language()
    join = (_DATE_PATTERNS[language][3] if language in _DATE_PATTERNS
            else Locale.parse(language).datetime_formats["medium"])  # "{1} {0}": date, time
    return join.format(time_text(moment, language, seconds=seconds), date_text(moment, language))
