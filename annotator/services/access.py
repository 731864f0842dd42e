"""Who is calling a service, and the check every service makes before it reads or writes.

A caller is a logged-in `User` (the app) or `OPERATOR`, whoever runs the command line: they
hold the database itself (the SQLite file or the PostgreSQL URL), so they hold every role; their
writes are recorded in the audit trail with no user (`actor_pk` None, shown as "command line").
The rules themselves live in `workflow.allowed`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from annotator.errors import PermissionDeniedError
from annotator.vocabulary import ROLES
from annotator.workflow import Permission, allowed

if TYPE_CHECKING:  # the ORM is not loaded for a caller: the command line starts without it
    from annotator.models import User


@dataclass(frozen=True)
class Operator:
    """The person at the command line (see the module docstring); not a row of the user table."""

    id: None = None
    name: str = "(command line)"
    roles: str = ",".join(ROLES)
    active: bool = True


OPERATOR = Operator()
"""The caller of every command-line command."""

Caller: TypeAlias = "User | Operator"
"""Whoever calls a service (an annotation only)."""

_DENIED = {permission: f"msg.denied.{permission.value}" for permission in Permission}
"""The refusal of each permission, saying who may (a key of annotator.messages.MESSAGES)."""


def caller_roles(caller: Caller | None) -> frozenset[str]:
    """The roles of a caller (a disabled user has none, and so has no caller: None)."""
    if caller is None or not caller.active:
        return frozenset()
    return frozenset(role for role in caller.roles.split(",") if role)


def require(caller: Caller | None, permission: Permission) -> None:
    """Return when `caller` may do `permission`; raise PermissionDeniedError (saying who may)
    otherwise, also when there is no caller."""
    if caller is None or not allowed(caller_roles(caller), permission):
        raise PermissionDeniedError.of(_DENIED[permission])


def need_caller(caller: Caller | None) -> None:
    """Return when there is a caller; raise PermissionDeniedError (msg.denied.no_caller) for None.
    Every service that acts for someone calls this (or `require`) first, so that one that forgot
    its caller is refused rather than served as nobody in particular, or as everyone."""
    if caller is None:
        raise PermissionDeniedError.of("msg.denied.no_caller")


def is_operator(caller: Caller) -> bool:
    """Whether the caller is the command line rather than a logged-in user."""
    return isinstance(caller, Operator)
