"""The role check of every API request (casino/accounts/permissions.py), branch by branch: which model permission
each method and action needs, and whether a request passes (R10, R15, R23, R29). The API tests reach the check
through real views; here each condition is driven on its own, so that weakening one fails a test."""

from types import SimpleNamespace

import pytest
from django.contrib.auth.models import AnonymousUser, User

from casino.accounts.permissions import METHOD_ACTIONS, RolePermission, required_permissions
from tables.models import Apparatus

pytestmark = pytest.mark.django_db


class ModelView:
    """A view over the apparatus of the registry, with a handler for each method of DRF's ModelViewSet but delete."""

    queryset = Apparatus.objects.all()
    http_method_names = ["get", "post", "put", "patch", "head", "options"]

    def __init__(self, action=None, **attributes):
        self.action = action
        self.__dict__.update(attributes)

    def get(self):
        pass

    def post(self):
        pass

    def put(self):
        pass

    def patch(self):
        pass

    def head(self):
        pass

    def options(self):
        pass


class PlainView:
    """A view with no model and no declared permission (an APIView answering GET, HEAD, OPTIONS and POST)."""

    http_method_names = ["get", "post", "head", "options"]

    def get(self):
        pass

    def post(self):
        pass

    def head(self):
        pass

    def options(self):
        pass


def request(user, method):
    return SimpleNamespace(user=user, method=method)


# Which permissions a request needs ------------------------------------------------------------------------------


def test_r23_each_method_asks_for_the_model_permission_of_its_action():
    view = ModelView()
    assert {method: required_permissions(view, method) for method in METHOD_ACTIONS} == {
        "GET": ["tables.view_apparatus"],
        "HEAD": ["tables.view_apparatus"],
        "OPTIONS": ["tables.view_apparatus"],
        "POST": ["tables.add_apparatus"],
        "PUT": ["tables.change_apparatus"],
        "PATCH": ["tables.change_apparatus"],
    }


def test_r23_delete_maps_to_no_model_permission():
    # Nothing is ever deleted (R23): no method maps to a delete permission.
    assert required_permissions(ModelView(), "DELETE") is None
    assert "delete" not in {action for action in METHOD_ACTIONS.values()}


def test_r15_an_action_declares_its_own_permission_over_the_models():
    view = ModelView(action="sign", action_permissions={"sign": ["cashbox.sign_register"]})
    assert required_permissions(view, "POST") == ["cashbox.sign_register"]


def test_r15_an_action_without_a_declared_permission_falls_back_to_the_models():
    view = ModelView(action="create", action_permissions={"sign": ["cashbox.sign_register"]})
    assert required_permissions(view, "POST") == ["tables.add_apparatus"]


def test_r15_a_view_without_an_action_uses_the_declared_permission_of_none():
    # A plain APIView has no `action`: a permission declared for None applies to it (seances/spins/api.py).
    view = SimpleNamespace(action_permissions={None: ["seances.view_spin"]}, queryset=Apparatus.objects.all())
    assert required_permissions(view, "GET") == ["seances.view_spin"]


def test_r23_a_view_without_a_model_needs_no_model_permission():
    assert required_permissions(PlainView(), "GET") is None
    assert required_permissions(PlainView(), "POST") is None


# Whether a request passes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("user", [None, AnonymousUser()], ids=["no-user", "anonymous"])
def test_an_anonymous_request_never_passes(user):
    for view in (ModelView(), PlainView()):
        assert RolePermission().has_permission(request(user, "GET"), view) is False


def test_r23_a_method_without_a_handler_is_left_to_the_view_405_not_403(croupier):
    # The croupier holds no delete permission; still, a DELETE is not a role question but a missing handler.
    assert RolePermission().has_permission(request(croupier, "DELETE"), ModelView()) is True


def test_r23_a_listed_method_whose_handler_is_missing_is_left_to_the_view(croupier):
    view = ModelView(http_method_names=["get", "post", "delete"])
    assert RolePermission().has_permission(request(croupier, "DELETE"), view) is True


def test_r23_a_handler_the_view_does_not_list_is_left_to_the_view(croupier):
    view = ModelView(http_method_names=["get"])
    assert RolePermission().has_permission(request(croupier, "POST"), view) is True


def test_r10_a_role_passes_with_the_permission_of_the_model(director, croupier):
    assert RolePermission().has_permission(request(director, "POST"), ModelView()) is True
    assert RolePermission().has_permission(request(croupier, "GET"), ModelView()) is True


def test_r10_a_role_without_the_permission_is_refused_and_named(croupier):
    permission = RolePermission()
    assert permission.has_permission(request(croupier, "POST"), ModelView()) is False
    assert permission.message == "Votre rôle (Croupier) ne permet pas cette action."


def test_r10_a_declared_action_permission_decides_over_the_models(croupier, director):
    # The croupier may read apparatus, but not through an action that asks for the register's signature.
    view = ModelView(action="sign", action_permissions={"sign": ["cashbox.sign_register"]})
    assert RolePermission().has_permission(request(croupier, "GET"), view) is False
    assert RolePermission().has_permission(request(director, "GET"), view) is True


def test_r29_a_user_without_a_role_is_refused_and_told_so(db):
    user = User.objects.create_user("sans-role", password="x")
    permission = RolePermission()
    assert permission.has_permission(request(user, "GET"), ModelView()) is False
    assert permission.message == "Votre rôle (aucun rôle) ne permet pas cette action."


def test_the_refusal_message_starts_generic():
    assert RolePermission.message == "Votre rôle ne permet pas cette action."


def test_a_view_without_a_model_is_only_read_and_only_by_a_role(croupier, db):
    view = PlainView()
    for method in ("GET", "HEAD", "OPTIONS"):
        assert RolePermission().has_permission(request(croupier, method), view) is True, method
    assert RolePermission().has_permission(request(croupier, "POST"), view) is False
    nobody = User.objects.create_user("personne", password="x")
    for method in ("GET", "HEAD", "OPTIONS"):
        assert RolePermission().has_permission(request(nobody, method), view) is False, method
