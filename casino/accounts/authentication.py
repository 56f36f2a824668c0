"""API authentication: a knox token, checked in one query (kept apart from casino.accounts.auth, whose views import
rest_framework.views, which imports the authentication classes: a circular import)."""

import binascii
import copy
import logging
import threading
import time
from hmac import compare_digest

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.contrib.postgres.expressions import ArraySubquery
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q, Value
from django.db.models.functions import Concat
from django.db.models.signals import m2m_changed, post_delete
from django.utils import timezone
from knox import auth as knox_auth
from knox.crypto import hash_token
from knox.models import AuthToken
from knox.settings import CONSTANTS, knox_settings
from rest_framework import exceptions

INVALID_TOKEN = "Jeton invalide."

logger = logging.getLogger(__name__)

# A token's check (its user, their employee and role, their permissions) is kept by each worker process for
# TOKEN_CACHE_SECONDS at most: the query it spares cost a quarter of a signed write's CPU (issue 39). Ending a token
# (revocation, logout, a password change, a deactivation, a role change: every deletion of a token) and changing a
# person's groups or permissions move a revocation counter in the shared cache (Redis in production), which every
# request reads: each worker then forgets every token it kept, so the change holds at the next request. Only a
# change made past the application (a token deleted or an account deactivated in SQL by hand) waits for the delay;
# docs/security.md says it. When the shared cache cannot be read, nothing is kept.
TOKEN_CACHE_SECONDS = 30
REVOCATION_KEY = "casino:token-revocations"
_CACHE_LIMIT = 2000
_kept = {}
_kept_lock = threading.Lock()


class TokenAuthentication(knox_auth.TokenAuthentication):
    """knox's token check in one query: the token with its user, the user's employee (their role, read by every
    permission, history row and journal entry of the request) and, on PostgreSQL, the user's permissions.

    knox itself costs two queries and the permission check two more (ModelBackend: the user's, then the groups'),
    on every API request. knox also sweeps the user's other expired tokens at each authentication: that sweep runs
    here too, but only when the query found one, which it tells in the same round trip.
    """

    def authenticate_credentials(self, token):
        token = token.decode("utf-8")
        generation = revocation_generation()
        kept = _kept_check(token, generation)
        if kept is not None:
            return kept
        user, auth_token = self._authenticate_in_database(token)
        if generation is not None:
            _keep(token, generation, user, auth_token)
        return user, auth_token

    def _authenticate_in_database(self, token):
        now = timezone.now()
        others_expired = AuthToken.objects.filter(user=OuterRef("user"), expiry__lt=now).exclude(
            digest=OuterRef("digest")
        )
        tokens = (
            AuthToken.objects.filter(token_key=token[: CONSTANTS.TOKEN_KEY_LENGTH])
            .select_related("user", "user__employee")
            .annotate(others_expired=Exists(others_expired))
        )
        if connection.vendor == "postgresql":
            tokens = tokens.annotate(permissions=_permissions_of_user())
        for auth_token in tokens:
            if auth_token.others_expired or (auth_token.expiry is not None and auth_token.expiry < now):
                # knox's sweep: deletes the expired ones and sends token_expired, as knox does.
                if self._cleanup_token(auth_token):
                    continue
            try:
                digest = hash_token(token)
            except (TypeError, binascii.Error):
                raise exceptions.AuthenticationFailed(INVALID_TOKEN) from None
            if compare_digest(digest, auth_token.digest):
                if knox_settings.AUTO_REFRESH and auth_token.expiry:
                    self.renew_token(auth_token)
                user = auth_token.user
                if hasattr(auth_token, "permissions") and user.is_active and not user.is_superuser:
                    # What ModelBackend.get_all_permissions caches on the user: its own and its groups' permissions.
                    user._perm_cache = set(auth_token.permissions)
                return self.validate_user(auth_token)
        raise exceptions.AuthenticationFailed(INVALID_TOKEN)


def revocation_generation():
    """The shared revocation counter (0 before any revocation), or None when the shared cache cannot be read."""
    try:
        return cache.get(REVOCATION_KEY, 0)
    except Exception as error:  # noqa: BLE001 - any cache failure: keep nothing, read the database
        logger.warning("token cache: revocation counter unreadable", extra={"error": type(error).__name__})
        return None


def tokens_changed(**_kwargs):
    """Every worker forgets the tokens it kept, at once and again once the transaction commits (until it commits,
    another request may still read the old rows and keep them)."""
    _bump()
    transaction.on_commit(_bump)


def _bump():
    _kept.clear()
    try:
        try:
            cache.incr(REVOCATION_KEY)
        except ValueError:  # no counter yet
            cache.set(REVOCATION_KEY, 1, timeout=None)
    except Exception as error:  # noqa: BLE001 - reported; the workers then keep nothing (revocation_generation)
        logger.warning("token cache: revocation counter not moved", extra={"error": type(error).__name__})


def _fresh(user, auth_token):
    """Copies of the kept token, user and employee for one request: a request may set attributes on its user."""
    user = copy.copy(user)
    user._state = copy.copy(user._state)
    user._state.fields_cache = {}
    employee = user.__dict__.pop("_kept_employee", None)
    if employee is not None:
        employee = copy.copy(employee)
        employee._state = copy.copy(employee._state)
        employee._state.fields_cache = {"user": user}
    # None as select_related leaves it for a user without an employee profile: `user.employee` raises, no query.
    user._state.fields_cache["employee"] = employee
    if hasattr(user, "_perm_cache"):
        user._perm_cache = set(user._perm_cache)
    auth_token = copy.copy(auth_token)
    auth_token._state = copy.copy(auth_token._state)
    auth_token._state.fields_cache = {"user": user}
    return user, auth_token


def _keep(token, generation, user, auth_token):
    if auth_token.expiry is None:
        return
    template, kept_token = copy.copy(user), copy.copy(auth_token)
    template._state = copy.copy(user._state)
    template._state.fields_cache = {}
    template._kept_employee = user._state.fields_cache.get("employee")
    if hasattr(user, "_perm_cache"):
        template._perm_cache = frozenset(user._perm_cache)
    kept_token._state = copy.copy(auth_token._state)
    kept_token._state.fields_cache = {}
    with _kept_lock:
        if len(_kept) >= _CACHE_LIMIT:
            _kept.clear()
        _kept[token] = (generation, time.time() + TOKEN_CACHE_SECONDS, template, kept_token)


def _kept_check(token, generation):
    """(user, token) of a token this worker checked less than TOKEN_CACHE_SECONDS ago, with no revocation since and
    not expired; else None."""
    if generation is None:
        return None
    found = _kept.get(token)
    if found is None:
        return None
    kept_generation, until, user, auth_token = found
    if kept_generation != generation or time.time() >= until or auth_token.expiry < timezone.now():
        _kept.pop(token, None)
        return None
    return _fresh(user, auth_token)


def _permissions_of_user():
    """["app_label.codename", …] of the token's user, directly or through their groups (PostgreSQL arrays)."""
    # Two index lookups by user (pk__in), not an OR across four joins, which PostgreSQL plans slowly.
    user = OuterRef(OuterRef("user_id"))
    own = get_user_model().user_permissions.through.objects.filter(user_id=user).values("permission_id")
    grouped = Group.permissions.through.objects.filter(group__user=user).values("permission_id")
    granted = Permission.objects.filter(Q(pk__in=own) | Q(pk__in=grouped))
    return ArraySubquery(granted.order_by().values_list(Concat("content_type__app_label", Value("."), "codename")))


def connect_revocation_signals():
    """Every deletion of a token and every change of a person's groups or permissions: the workers forget their
    tokens (tokens_changed)."""
    User = get_user_model()
    post_delete.connect(tokens_changed, sender=AuthToken, dispatch_uid="token_cache_deleted")
    for through in (User.groups.through, User.user_permissions.through, Group.permissions.through):
        m2m_changed.connect(tokens_changed, sender=through, dispatch_uid=f"token_cache_{through._meta.label_lower}")
