"""Role checks on the server for every API request: the role's model permissions decide."""

from rest_framework.permissions import BasePermission

from casino.accounts.roles import role_of

METHOD_ACTIONS = {"GET": "view", "HEAD": "view", "OPTIONS": "view", "POST": "add", "PUT": "change", "PATCH": "change"}


def required_permissions(view, method):
    """A view may name its own permissions per action (`action_permissions`), else model permissions apply."""
    action = getattr(view, "action", None)
    custom = getattr(view, "action_permissions", {})
    if action in custom:
        return custom[action]
    queryset = getattr(view, "queryset", None)
    if queryset is None or method not in METHOD_ACTIONS:
        return None
    meta = queryset.model._meta
    return [f"{meta.app_label}.{METHOD_ACTIONS[method]}_{meta.model_name}"]


class RolePermission(BasePermission):
    message = "Votre rôle ne permet pas cette action."

    def has_permission(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return False
        method = request.method.lower()
        if method not in view.http_method_names or not hasattr(view, method):
            # No handler: let the view answer 405 (R23: nothing is ever deleted), not a misleading 403.
            return True
        perms = required_permissions(view, request.method)
        if perms is None:
            # No model and no declared permission: nothing may pass unchecked, except reading.
            return request.method in ("GET", "HEAD", "OPTIONS") and role_of(request.user) is not None
        if not request.user.has_perms(perms):
            role = role_of(request.user)
            label = role.label if role else "aucun rôle"
            self.message = f"Votre rôle ({label}) ne permet pas cette action."
            return False
        return True
