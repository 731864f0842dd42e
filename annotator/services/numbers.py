"""Numbers read from the database as plain Python ints and floats, on every backend.

PostgreSQL returns SUM over a bigint (such as a COUNT) as NUMERIC, which psycopg reads as
`decimal.Decimal`; SQLite returns an int for the same query. A Decimal compares equal to the int
(`Decimal(6) == 6`), so only its type differs, and code that checks types (Streamlit's
`st.progress`, JSON output) refuses it. Every service that returns a number computed by the
database (SUM, COUNT, AVG, arithmetic) passes it through here, so pages and files see the same
types on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from numbers import Integral, Real


def plain_number(value: object) -> object:
    """`value` as a plain int or float when it is a number of another type (Decimal, a numpy
    scalar), else unchanged (None, str, bool, datetime, a plain int or float).

    A Decimal (or other real number) with no fractional part becomes an int, any other a float.
    """
    if value is None or isinstance(value, bool) or type(value) in (int, float):
        return value
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, Real):
        return float(value)
    return value


def plain_row(row: Iterable[object]) -> tuple:
    """A result row (an SQLAlchemy Row or any sequence) as a tuple whose numbers are plain
    ints and floats (plain_number); the other values are kept as they are."""
    return tuple(plain_number(value) for value in row)
