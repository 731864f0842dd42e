"""The UI's strings: `t(key, **fields)` looks a key up and fills in its fields.

English only for now; a Japanese catalog can be added beside ENGLISH and chosen by a setting.
An unknown key is shown as the key itself, so a missing string is visible, never a crash.
"""

from __future__ import annotations

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
    "case.question": "Question",
    "case.answer": "Generated answer",
    "passage.meta": "{passage_id} · document {doc_id} · version {version}",
    "passage.cite": "Cite this passage",
    "passage.cited": "Cited in your label",
    # label page
    "label.progress": "{done} of {total} claims labeled",
    "label.no_assignments": "No claims are assigned to you yet.",
    "label.queue_done": "Every claim in your queue is labeled (or its case is on hold). You may still review them.",
    "label.previous": "Previous",
    "label.next": "Next",
    "label.position": "Claim {n} of {total} in your queue: {claim_id}",
    "label.claim": "Claim {claim_id}",
    "label.evidence": "Evidence passages",
    "label.yours": "Your saved label (revision {revision}):",
    "label.none": "no label",
    "label.locked": "The second label on this claim has landed: your label is final here; "
                    "a disagreement goes to adjudication.",
    "label.on_hold": "This case is on hold ({reason}); it cannot be labeled until the hold is lifted.",
    "label.on_hold_by_other": "This case is on hold; it cannot be labeled until the hold is lifted.",
    "label.lift": "Lift the hold",
    "label.lifted": "The hold is lifted.",
    "label.rationale": "Rationale",
    "label.rationale_hint": "Why this label? Quote or point to the passage.",
    "label.severity": "Severity (only when not supported)",
    "label.severity_none": "no severity",
    "label.severity_help": "Used for contradict and insufficient; ignored when you choose support. "
                           "A single leak blocks a release.",
    "label.shortcuts": "Keys 1, 2, 3 save support, contradict, insufficient.",
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
    "adjudicate.severity": "Severity: {severity}",
    "adjudicate.decision": "Final label",
    "adjudicate.stale": "Decided before as {value}, but a label or the claim changed since: decide again.",
    "adjudicate.rationale_hint": "Why this final label? The labels above stay as they are.",
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
    "releases.only_final": "Only final claims (agreed and adjudicated)",
    "releases.only_final_help": "Without it, the release is refused while any claim in scope is disputed, "
                                "stale, on hold or unlabeled.",
    "releases.create_button": "Create release",
    "releases.created": "Release {name} created with {claims} claims in {path}. Left out: {left_out}.",
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
    "imports.file": "File (JSONL or CSV)",
    "imports.format": "Format (--format)",
    "imports.dataset": "Dataset (--dataset)",
    "imports.dataset_help": "Empty: cases go to 'default' (or 'climate-fever' for a CLIMATE-FEVER file); labels and "
                            "adjudications find their claims in every dataset.",
    "imports.update": "Accept changed content for ids already stored (--update; recorded, labels and decisions made on the old content are marked for review)",
    "imports.partial": "Import the good lines and list every bad line (--partial)",
    "imports.slices": "New slice names this file may use, comma-separated (--slices)",
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
}


def t(key: str, **fields: object) -> str:
    """The English string for `key` with `fields` filled in; the key itself when unknown."""
    text = ENGLISH.get(key)
    if text is None:
        return key
    return text.format(**fields) if fields else text
