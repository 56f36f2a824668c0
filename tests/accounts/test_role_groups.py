"""The groups of the roles (casino/accounts/roles.py): each holds exactly its role's permissions, each employee is in
the group of their confirmed role only, and the role of a user (R29)."""

import pytest
from django.contrib.auth.models import AnonymousUser, Group, Permission, User

from casino.accounts import roles
from casino.accounts.roles import ROLE_PERMISSIONS, _permission_key, ensure_groups, role_of
from casino.models import Employee, Role

pytestmark = pytest.mark.django_db


def codenames(group):
    return {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.select_related("content_type")}


def expected(role):
    names = set()
    for spec in ROLE_PERMISSIONS[role]:
        if ":" in spec:
            model_path, action = spec.split(":")
            app_label, model = model_path.split(".")
            names.add(f"{app_label}.{action}_{model}")
        else:
            names.add(spec)
    return names


def permission(spec):
    app_label, codename = _permission_key(spec)
    return Permission.objects.get(content_type__app_label=app_label, codename=codename)


def test_a_model_permission_and_a_named_permission_are_found():
    assert _permission_key("tables.apparatus:add") == ("tables", "add_apparatus")
    assert _permission_key("cashbox.sign_register") == ("cashbox", "sign_register")


def test_an_unknown_permission_is_an_error_not_skipped(monkeypatch):
    monkeypatch.setitem(
        roles.ROLE_PERMISSIONS, Role.CHEF, [*ROLE_PERMISSIONS[Role.CHEF], "tables.apparatus:delete_all"]
    )
    with pytest.raises(KeyError):
        ensure_groups()


def test_r29_each_role_group_holds_exactly_the_permissions_of_its_role():
    ensure_groups()
    for role in ROLE_PERMISSIONS:
        assert codenames(Group.objects.get(name=role.label)) == expected(role), role


def test_r29_ensure_groups_takes_back_a_permission_granted_by_hand_and_restores_a_removed_one():
    ensure_groups()
    group = Group.objects.get(name=Role.CROUPIER.label)
    group.permissions.add(permission("cashbox.sign_register"))
    group.permissions.remove(permission("cashbox.advance:add"))
    Group.objects.filter(name=Role.CHEF.label).delete()
    ensure_groups()
    assert codenames(Group.objects.get(name=Role.CROUPIER.label)) == expected(Role.CROUPIER)
    assert codenames(Group.objects.get(name=Role.CHEF.label)) == expected(Role.CHEF)


def test_r29_an_employee_is_in_the_group_of_its_role_only(croupier):
    employee = croupier.employee
    other = Group.objects.get(name=Role.DIRECTOR.label)
    unrelated = Group.objects.create(name="Équipe du soir")
    croupier.groups.add(other, unrelated)
    employee.sync_groups()
    assert set(croupier.groups.values_list("name", flat=True)) == {Role.CROUPIER.label, "Équipe du soir"}


def test_r29_a_changed_role_moves_the_employee_to_its_new_group(croupier):
    employee = Employee.objects.get(user=croupier)
    employee.role = Role.CAISSIER
    employee.sync_groups()
    assert list(croupier.groups.values_list("name", flat=True)) == [Role.CAISSIER.label]


def test_r29_a_missing_role_group_is_created_when_needed(croupier):
    Group.objects.filter(name=Role.CAISSIER.label).delete()
    employee = croupier.employee
    employee.role = Role.CAISSIER
    employee.sync_groups()
    assert list(croupier.groups.values_list("name", flat=True)) == [Role.CAISSIER.label]


def test_r29_an_employee_without_a_confirmed_role_is_in_no_role_group(croupier):
    unrelated = Group.objects.create(name="Équipe du soir")
    croupier.groups.add(unrelated)
    employee = croupier.employee
    employee.role = ""
    employee.sync_groups()
    assert list(croupier.groups.values_list("name", flat=True)) == ["Équipe du soir"]
    assert not User.objects.get(pk=croupier.pk).has_perm("cashbox.add_advance")


def test_the_role_of_a_user(croupier, director):
    assert role_of(croupier) is Role.CROUPIER
    assert role_of(director) is Role.DIRECTOR


def test_no_role_for_an_anonymous_user_a_user_without_profile_or_an_unconfirmed_role(croupier):
    assert role_of(AnonymousUser()) is None
    assert role_of(User.objects.create_user("sans-profil", password="x")) is None
    employee = croupier.employee
    employee.role = ""
    assert role_of(croupier) is None


def test_r29_a_permission_is_looked_up_in_its_own_application():
    """A codename another application also defines (a third-party app's `add_apparatus`) must not make a role's
    permission ambiguous nor give the role the other application's permission."""
    from django.contrib.contenttypes.models import ContentType

    Permission.objects.create(
        codename="add_apparatus", name="Autre", content_type=ContentType.objects.get_for_model(Group)
    )
    Permission.objects.create(
        codename="sign_register", name="Autre", content_type=ContentType.objects.get_for_model(Group)
    )
    ensure_groups()
    for role in (Role.ADMIN, Role.DIRECTOR):
        assert codenames(Group.objects.get(name=role.label)) == expected(role), role


def test_ensure_groups_reads_every_permission_in_one_query(django_assert_max_num_queries):
    """Run at every migrate and every test database set-up: some 270 look-ups, one per permission, were most of it."""
    ensure_groups()
    with django_assert_max_num_queries(len(ROLE_PERMISSIONS) * 4 + 1):
        ensure_groups()
