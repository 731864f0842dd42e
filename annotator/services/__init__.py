"""Use cases on a database Session: import, assign, label, adjudicate, release, report.

Every function takes an open `Session` (see `annotator.db.session_scope`) and raises
`annotator.errors` exceptions; none commits, the caller's `session_scope` does.
"""
