"""API authentication: a knox token, checked in one query (kept apart from casino.accounts.auth, whose views import
rest_framework.views, which imports the authentication classes: a circular import)."""

import binascii
from hmac import compare_digest

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.contrib.postgres.expressions import ArraySubquery
from django.db import connection
from django.db.models import Exists, OuterRef, Q, Value
from django.db.models.functions import Concat
from django.utils import timezone
from knox import auth as knox_auth
from knox.crypto import hash_token
from knox.models import AuthToken
from knox.settings import CONSTANTS, knox_settings
from rest_framework import exceptions

INVALID_TOKEN = "Jeton invalide."


class TokenAuthentication(knox_auth.TokenAuthentication):
    """knox's token check in one query: the token with its user, the user's employee (their role, read by every
    permission, history row and journal entry of the request) and, on PostgreSQL, the user's permissions.

    knox itself costs two queries and the permission check two more (ModelBackend: the user's, then the groups'),
    on every API request. knox also sweeps the user's other expired tokens at each authentication: that sweep runs
    here too, but only when the query found one, which it tells in the same round trip.
    """

    def authenticate_credentials(self, token):
        token = token.decode("utf-8")
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


def _permissions_of_user():
    """["app_label.codename", …] of the token's user, directly or through their groups (PostgreSQL arrays)."""
    # Two index lookups by user (pk__in), not an OR across four joins, which PostgreSQL plans slowly.
    user = OuterRef(OuterRef("user_id"))
    own = get_user_model().user_permissions.through.objects.filter(user_id=user).values("permission_id")
    grouped = Group.permissions.through.objects.filter(group__user=user).values("permission_id")
    granted = Permission.objects.filter(Q(pk__in=own) | Q(pk__in=grouped))
    return ArraySubquery(granted.order_by().values_list(Concat("content_type__app_label", Value("."), "codename")))
