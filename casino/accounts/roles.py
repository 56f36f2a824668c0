"""Every role of DOMAIN.md as a Django group, with the model permissions it holds."""

from django.contrib.auth.models import Group, Permission

from casino.models import Role

REGISTRY = ["tables.apparatus", "tables.table", "tables.tableau", "tables.cashbox"]
STAFF = ["casino.employee", "casino.membership"]
SEANCES = ["seances.gamingday", "seances.seance", "seances.opening"]
# The rotation order (R4, R5): everyone of the floor and the regulator reads it.
ROSTERS = [
    "seances.roster",
    "seances.rostermember",
    "seances.rosterchange",
    "seances.spin",
    "seances.announcement",
    "seances.pushedbackstake",
]
# The management sets and publishes the order; the chef de partie records the changes during play.
ROSTERING = ["seances.roster:add", "seances.roster:change", "seances.rosterchange:add"]
CASH = [
    "cashbox.advance",
    "cashbox.count",
    "cashbox.interruption",
    "cashbox.correction",
    "cashbox.controlregister",
    "cashbox.signature",
    "cashbox.registeramendment",
    "cashbox.deputy",
]
FLOOR_VIEW = [f"{model}:view" for model in [*SEANCES, *ROSTERS, *CASH]]
# Who enters money records; the signer of each is checked separately, with their password (R15, R20).
CASH_ENTRY = ["cashbox.advance:add", "cashbox.count:add"]
FLOOR_CONTROL = ["cashbox.interruption:add", "cashbox.interruption:change", "cashbox.correction:add"]
DIRECTING = ["seances.seance:add", "seances.seance:change", "seances.open_tableau"]
# The register of spins (R4, R9): the chef de partie at the table, the management, or a results display.
SPIN_ENTRY = ["seances.spin:add"]
# « Rien ne va plus » and the stakes pushed back after it (R9): the chef de partie or a croupier at the table.
ANNOUNCING = ["seances.announcement:add", "seances.pushedbackstake:add"]
AUDIT = ["casino.casino", "casino.alert", "casino.journalentry"]
# Proposed roles and approvals (R29): the administrator proposes, the direction decides with its signature.
ACCOUNT_CHANGES = ["casino.accountchange", "casino.accountdecision"]
# The books beyond the day (R25–R27): the direction, the regulator and the administrator read them.
BOOKS = [
    "books.observation",
    "books.observationaction",
    "books.levyschedule",
    "books.levybracket",
    "books.monthlystatement",
]
VIEW_ALL = [
    f"{model}:view" for model in [*REGISTRY, *STAFF, *ACCOUNT_CHANGES, *SEANCES, *ROSTERS, *CASH, *AUDIT, *BOOKS]
]
# The direction records what was done about the regulator's observations (R27).
BOOKS_DIRECTING = ["books.observationaction:add"]

ROLE_PERMISSIONS = {
    Role.DIRECTOR: [
        *VIEW_ALL,
        # The director enters the levy schedule of each season (R25).
        "books.levyschedule:add",
        # The director signs the situation mensuelle (R26).
        "books.monthlystatement:add",
        *[f"{model}:add" for model in REGISTRY],
        *[f"{model}:change" for model in REGISTRY],
        "casino.casino:change",
        "casino.alert:change",
        "casino.sign",
        *DIRECTING,
        *CASH_ENTRY,
        *FLOOR_CONTROL,
        "cashbox.controlregister:add",
        "cashbox.sign_register",
        "cashbox.deputy:add",
        *BOOKS_DIRECTING,
        *ROSTERING,
        "casino.decide_accountchange",
        *SPIN_ENTRY,
    ],
    Role.CODIR: [
        *VIEW_ALL,
        "casino.alert:change",
        "casino.sign",
        *DIRECTING,
        *CASH_ENTRY,
        *FLOOR_CONTROL,
        "cashbox.controlregister:add",
        "cashbox.sign_register",
        "cashbox.deputy:add",
        *BOOKS_DIRECTING,
        *ROSTERING,
        "casino.decide_accountchange",
        *SPIN_ENTRY,
    ],
    Role.CHEF: [
        *[f"{model}:view" for model in [*REGISTRY, "casino.casino", "casino.alert"]],
        *FLOOR_VIEW,
        *CASH_ENTRY,
        *FLOOR_CONTROL,
        "casino.alert:change",
        "seances.rosterchange:add",
        *SPIN_ENTRY,
        *ANNOUNCING,
    ],
    Role.CROUPIER: [
        *[f"{model}:view" for model in [*REGISTRY, "casino.casino"]],
        *FLOOR_VIEW,
        *CASH_ENTRY,
        *ANNOUNCING,
    ],
    Role.CAISSIER: [*[f"{model}:view" for model in [*REGISTRY, "casino.casino"]], *FLOOR_VIEW, *CASH_ENTRY],
    # The registre spécial d'observations is the only book the regulator writes in (R27).
    Role.CONTROLEUR: [*VIEW_ALL, "casino.view_audit", "books.observation:add"],
    # The token of a results display reaches the spins only (R9).
    Role.AFFICHEUR: [*SPIN_ENTRY, "seances.spin:view"],
    Role.ADMIN: [
        *VIEW_ALL,
        *[f"{model}:add" for model in [*REGISTRY, *STAFF]],
        # Not the casino's settings: an act of the director, signed (R29).
        *[f"{model}:change" for model in [*REGISTRY, *STAFF]],
        "casino.accountchange:add",
        # R28: the administrator issues activation codes; nobody sets another person's password.
        "casino.activationcode:add",
    ],
}


def _permission_key(spec):
    """(app label, codename) of a spec: 'app.model:action' is a model permission, 'app.codename' a named one."""
    if ":" in spec:
        model_path, action = spec.split(":")
        app_label, model = model_path.split(".")
        return app_label, f"{action}_{model}"
    app_label, codename = spec.split(".")
    return app_label, codename


def ensure_groups(**kwargs):
    """Create or refresh the role groups; run after every migrate (and every test database set-up).

    Every permission is read in one query rather than one per spec: some 270 look-ups were most of a migrate's
    time once there was nothing to migrate. A spec naming no permission fails the migrate (KeyError).
    """
    permissions = {
        (permission.content_type.app_label, permission.codename): permission
        for permission in Permission.objects.select_related("content_type")
    }
    for role, specs in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role.label)
        group.permissions.set([permissions[_permission_key(spec)] for spec in specs])


def role_of(user):
    """The user's role, or None for a user without an employee profile."""
    # Equivalent mutant: skipping the is_authenticated test changes nothing, Django's anonymous user having no
    # `employee` attribute; the test stays so that no lookup is made for a visitor.
    employee = getattr(user, "employee", None) if user.is_authenticated else None  # pragma: no mutate
    return Role(employee.role) if employee and employee.role else None
