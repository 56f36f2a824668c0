"""seances/services.py tested directly: who directs (R10, R19), the séances a day plans, the apparatus in play that
still wait for their rotation order (R4). Refusals are checked by their rule id; each test breaks if one step of
these functions is weakened (a mutant of `make mutation MODULE=seances/services.py`)."""

import datetime
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from cashbox import services as cash
from cashbox.models import Signature
from casino.models import Role
from casino.rules import DomainError, InvalidTransition, RoleForbidden, cite
from seances import services
from seances.models import GamingDay, Opening, Seance
from seances.rosters import services as roster_services
from tables.games.rules import euros
from tables.models import Apparatus, Table, Tableau
from tests.conftest import PASSWORD, make_employee
from tests.helpers.cash_helpers import chips_for, publish_rosters

pytestmark = pytest.mark.django_db
PARIS = timezone.get_default_timezone()
DATE = datetime.date(2026, 3, 10)


def at(date, hour):
    return timezone.make_aware(datetime.datetime.combine(date, datetime.time(hour)), PARIS)


def test_r19_only_an_approved_director_or_codir_member_directs(casino, director, codir, chef, croupier):
    assert services.require_director(director, "R19", "ouvrir") == Role.DIRECTOR
    assert services.require_director(codir, "R19", "ouvrir") == Role.CODIR
    with pytest.raises(RoleForbidden) as caught:
        services.require_director(chef, "R10", "planifier les séances")
    assert caught.value.rule == "R10"
    assert f"peut planifier les séances (votre rôle : {Role.CHEF.label})" in caught.value.message
    unapproved = make_employee("dir2", Role.DIRECTOR, casino, approved=False).user
    with pytest.raises(RoleForbidden) as caught:
        services.require_director(unapproved, "R19", "ouvrir une séance")
    assert caught.value.rule == "R19"
    assert caught.value.message.startswith("Votre agrément n'est pas valide ce jour : vous ne pouvez pas ouvrir")
    nobody = make_employee("sans-role", Role.CROUPIER, casino).user
    nobody.employee.role = ""
    nobody.employee.save()
    nobody.refresh_from_db()
    with pytest.raises(RoleForbidden) as caught:
        services.require_director(nobody, "R19", "ouvrir")
    assert "(votre rôle : aucun rôle)" in caught.value.message


def test_r10_a_day_plans_an_afternoon_and_an_evening_seance_once(casino, director):
    afternoon, evening = services.plan_seances(director, casino, DATE)
    assert (afternoon.kind, afternoon.planned_start, afternoon.planned_end) == (
        Seance.Kind.AFTERNOON,
        at(DATE, 14),
        at(DATE, 20),
    )
    assert (evening.kind, evening.planned_start, evening.planned_end) == (
        Seance.Kind.EVENING,
        at(DATE, 21),
        at(DATE + datetime.timedelta(days=1), 3),
    )
    assert services.plan_seances(director, casino, DATE) == [afternoon, evening]
    assert Seance.objects.count() == 2 and GamingDay.objects.get().date == DATE


def test_r10_a_seance_before_the_day_start_hour_is_planned_the_next_morning(casino, director):
    casino.gaming_day_start = datetime.time(15, 0)
    casino.save()
    day = GamingDay.objects.create(
        casino=casino, date=DATE, start=at(DATE, 15), end=at(DATE + datetime.timedelta(days=1), 15)
    )
    afternoon, evening = services.plan_seances(director, casino, DATE)
    assert afternoon.gaming_day == day and afternoon.planned_start == at(DATE + datetime.timedelta(days=1), 14)
    assert evening.planned_start == at(DATE, 21)


def test_r4_only_apparatus_in_play_wait_for_a_rotation_order(casino, boule, boule_table, boule_tableau, vingt_trois):
    resting = Apparatus.objects.create(casino=casino, game="boule", name="Boule 2", in_service=False)
    Tableau.objects.create(table=Table.objects.create(apparatus=resting, name="R"), number=20)
    closed = Apparatus.objects.create(casino=casino, game="boule", name="Boule 3")
    Tableau.objects.create(table=Table.objects.create(apparatus=closed, name="C", in_service=False), number=21)
    idle = Apparatus.objects.create(casino=casino, game="boule", name="Boule 4")
    Tableau.objects.create(table=Table.objects.create(apparatus=idle, name="I"), number=22, in_service=False)
    Tableau.objects.create(table=boule_table, number=23)
    assert list(services.apparatus_in_play(casino)) == [boule]
    Tableau.objects.create(table=Table.objects.create(apparatus=vingt_trois, name="V"), number=24)
    assert list(services.apparatus_in_play(casino)) == [boule, vingt_trois]


def test_r19_only_an_approved_director_opens_or_closes_a_seance_with_the_rule_and_action(casino, director, chef):
    afternoon, _evening = services.plan_seances(director, casino, DATE)
    with pytest.raises(RoleForbidden) as caught:
        services.change_seance_state(chef, afternoon, Seance.State.OPEN)
    assert caught.value.rule == "R19"
    assert caught.value.message == cite(
        "R19",
        "Seul le directeur responsable ou un membre du comité de direction peut ouvrir ou fermer une séance "
        f"(votre rôle : {Role.CHEF.label})",
    )
    afternoon.refresh_from_db()
    assert afternoon.state == Seance.State.PLANNED


def test_r19_the_director_who_opens_and_closes_is_named_on_the_seance_and_in_its_history(casino, director, codir):
    afternoon, _evening = services.plan_seances(director, casino, DATE)
    opened = services.change_seance_state(director, afternoon, Seance.State.OPEN)
    assert (opened.state, opened.opened_by, opened.closed_by) == (Seance.State.OPEN, director, None)
    assert afternoon.history.latest().history_user == director
    closed = services.change_seance_state(codir, afternoon, Seance.State.CLOSED)
    assert (closed.state, closed.opened_by, closed.closed_by) == (Seance.State.CLOSED, director, codir)
    assert afternoon.history.latest().history_user == codir
    afternoon.refresh_from_db()
    assert afternoon.state == Seance.State.CLOSED and afternoon.actual_end is not None


def test_transition_another_open_seance_of_the_same_day_only_blocks_opening(casino, other_casino, director, outsider):
    afternoon, evening = services.plan_seances(director, casino, DATE)
    services.change_seance_state(director, afternoon, Seance.State.OPEN)
    # Another day's séance, and another casino's séance of the same date, open beside it.
    next_afternoon, _ = services.plan_seances(director, casino, DATE + datetime.timedelta(days=1))
    assert services.change_seance_state(director, next_afternoon, Seance.State.OPEN).state == Seance.State.OPEN
    elsewhere, _ = services.plan_seances(outsider, other_casino, DATE)
    assert services.change_seance_state(outsider, elsewhere, Seance.State.OPEN).state == Seance.State.OPEN
    with pytest.raises(DomainError) as caught:
        services.change_seance_state(director, evening, Seance.State.OPEN)
    assert (type(caught.value), caught.value.rule) == (DomainError, "transition")
    assert caught.value.message == "Une autre séance de la journée est encore ouverte : fermez-la d'abord."
    evening.refresh_from_db()
    assert evening.state == Seance.State.PLANNED


def test_transition_an_open_seance_opened_again_is_refused_by_its_own_state_not_as_another(casino, director):
    afternoon, _evening = services.plan_seances(director, casino, DATE)
    services.change_seance_state(director, afternoon, Seance.State.OPEN)
    with pytest.raises(InvalidTransition) as caught:
        services.change_seance_state(director, afternoon, Seance.State.OPEN)
    assert caught.value.rule == "transition"
    assert caught.value.message == "La séance est ouverte : impossible de passer à « ouverte »."


def r4_refusal(name):
    return cite(
        "R4",
        "La séance ne peut s'ouvrir avant la publication de l'ordre de roulement de chaque appareil en jeu ; "
        f"manque : {name}",
    )


def test_r4_a_seance_opens_only_once_each_apparatus_in_play_has_its_published_roster(
    casino, director, chef, croupier, croupier2, boule, boule_tableau, vingt_trois, vingt_trois_tableau
):
    afternoon, _evening = services.plan_seances(director, casino, GamingDay.date_at(casino))
    with pytest.raises(InvalidTransition) as caught:
        services.change_seance_state(director, afternoon, Seance.State.OPEN)
    assert caught.value.rule == "R4"
    assert caught.value.message == r4_refusal("Boule, Vingt-trois")
    assert caught.value.details == [
        {"rule": "R4", "apparatus": boule.pk, "name": "Boule"},
        {"rule": "R4", "apparatus": vingt_trois.pk, "name": "Vingt-trois"},
    ]
    roster = roster_services.create_roster(director, afternoon, boule, chef.username, ["croupier1", "croupier2"])
    roster_services.publish_roster(director, roster, director.username, PASSWORD)
    with pytest.raises(InvalidTransition) as caught:
        services.change_seance_state(director, afternoon, Seance.State.OPEN)
    assert caught.value.rule == "R4" and caught.value.message == r4_refusal("Vingt-trois")
    assert caught.value.details == [{"rule": "R4", "apparatus": vingt_trois.pk, "name": "Vingt-trois"}]
    afternoon.refresh_from_db()
    assert afternoon.state == Seance.State.PLANNED
    publish_rosters(director, afternoon)
    assert services.change_seance_state(director, afternoon, Seance.State.OPEN).state == Seance.State.OPEN


def test_r18_r20_a_seance_closes_only_without_blockers_and_names_them_all_under_the_lowest_rule(
    casino, director, chef, caissier, open_day, boule_tableau, vingt_trois_tableau
):
    for tableau in (boule_tableau, vingt_trois_tableau):
        amount = casino.advance_amount(tableau.game)
        cash.record_advance(
            director,
            cash.main_cashbox(tableau),
            open_day,
            "initial",
            chips_for(amount),
            "croupier1",
            "directeur",
            PASSWORD,
            brought_by="caissier",
        )
    cash.interrupt_short(chef, boule_tableau, open_day, "chef", PASSWORD, True, True, True)
    blockers = [
        ("R20", cite("R20", "La caisse n° 1 n'a pas d'encaisse finale comptée et certifiée exacte")),
        ("R20", cite("R20", "La caisse n° 5 n'a pas d'encaisse finale comptée et certifiée exacte")),
        ("R18", cite("R18", "Le tableau n° 1 a sa boîte encore fermée à clé")),
    ]
    assert cash.closing_blockers(open_day) == blockers
    with pytest.raises(InvalidTransition) as caught:
        services.change_seance_state(director, open_day, Seance.State.CLOSED)
    assert caught.value.rule == "R18"
    assert caught.value.message == cite(
        "R18", "La séance ne peut être close : " + " ; ".join(message.rstrip(".") for _, message in blockers) + "."
    )
    assert caught.value.message.count(" ; ") == 2 and ".) ; " not in caught.value.message
    assert caught.value.details == [{"rule": rule, "message": message} for rule, message in blockers]
    open_day.refresh_from_db()
    assert open_day.state == Seance.State.OPEN and open_day.closed_by is None


def test_r4_another_casinos_apparatus_in_play_is_never_ours(casino, other_casino, boule, boule_tableau):
    theirs = Apparatus.objects.create(casino=other_casino, game="boule", name="Aa boule")
    Tableau.objects.create(table=Table.objects.create(apparatus=theirs, name="X"), number=30)
    assert list(services.apparatus_in_play(casino)) == [boule]
    assert list(services.apparatus_in_play(other_casino)) == [theirs]


def test_r10_only_the_direction_plans_the_seances_with_the_rule_and_action(casino, chef):
    with pytest.raises(RoleForbidden) as caught:
        services.plan_seances(chef, casino, DATE)
    assert caught.value.rule == "R10"
    assert caught.value.message == cite(
        "R10",
        "Seul le directeur responsable ou un membre du comité de direction peut planifier les séances "
        f"(votre rôle : {Role.CHEF.label})",
    )
    assert not Seance.objects.exists() and not GamingDay.objects.exists()


def test_r10_the_director_who_plans_is_named_in_the_history_of_the_day_and_its_seances(casino, director):
    afternoon, evening = services.plan_seances(director, casino, DATE)
    assert [s.history.get().history_user for s in (afternoon, evening)] == [director, director]
    assert GamingDay.objects.get().history.get().history_user == director


def test_r10_the_planned_hours_are_the_casinos_whatever_time_zone_is_active(casino, director):
    with timezone.override("Asia/Tokyo"):
        afternoon, evening = services.plan_seances(director, casino, DATE)
    assert (afternoon.planned_start, evening.planned_start) == (at(DATE, 14), at(DATE, 21))


def test_r10_a_seance_starting_at_the_day_start_hour_stays_on_that_date(casino, director):
    day = GamingDay.objects.create(
        casino=casino, date=DATE, start=at(DATE, 14), end=at(DATE + datetime.timedelta(days=1), 14)
    )
    afternoon, evening = services.plan_seances(director, casino, DATE)
    assert afternoon.gaming_day == day
    assert (afternoon.planned_start, afternoon.planned_end) == (at(DATE, 14), at(DATE, 20))
    assert evening.planned_start == at(DATE, 21)


def test_r2_a_tableau_out_of_service_is_not_opened(casino, director, boule_tableau):
    boule_tableau.in_service = False
    boule_tableau.save()
    with pytest.raises(DomainError) as caught:
        services.open_tableau(director, boule_tableau, GamingDay.date_at(casino), "2.00", "200.00", "1000.00")
    assert caught.value.rule == "R2"
    assert caught.value.message == cite("R2", "Le tableau n° 1 est hors service")
    assert not Opening.objects.exists()


@pytest.mark.parametrize(
    ("limits", "rule", "words"),
    [
        (
            ("3.00", "200.00", "1000.00"),
            "R10",
            "Le minimum du tableau n° 1 est fixé à {minimum} pour la journée ; "
            "il ne peut être modifié avant la séance du lendemain",
        ),
        (
            ("2.00", "150.00", "1000.00"),
            "R11",
            "Les maximums du tableau n° 1 sont fixés pour la journée ({plein} en plein, {chances} sur les chances "
            "simples) ; ils ne peuvent varier avant la séance du lendemain",
        ),
        (
            ("2.00", "200.00", "800.00"),
            "R11",
            "Les maximums du tableau n° 1 sont fixés pour la journée ({plein} en plein, {chances} sur les chances "
            "simples) ; ils ne peuvent varier avant la séance du lendemain",
        ),
    ],
)
def test_r10_r11_limits_fixed_for_the_day_are_refused_with_the_limits_in_force(
    casino, director, boule_tableau, limits, rule, words
):
    day = GamingDay.date_at(casino)
    services.open_tableau(director, boule_tableau, day, "2.00", "200.00", "1000.00")
    with pytest.raises(DomainError) as caught:
        services.open_tableau(director, boule_tableau, day, *limits)
    assert caught.value.rule == rule
    expected = words.format(
        minimum=euros(Decimal("2.00")), plein=euros(Decimal("200.00")), chances=euros(Decimal("1000.00"))
    )
    assert caught.value.message == cite(rule, expected)
    assert Opening.objects.count() == 1


def test_r10_r15_an_opening_belongs_to_the_open_seance_names_its_director_and_fixes_the_games_advance(
    casino, director, codir, chef, croupier, croupier2, boule_tableau
):
    date = GamingDay.date_at(casino)
    afternoon, _evening = services.plan_seances(director, casino, date)
    before, created = services.open_tableau(director, boule_tableau, date, "2.00", "200.00", "1000.00")
    assert created and before.seance is None
    assert before.history.get().history_user == director
    day = GamingDay.objects.get()
    assert day.advance_boule == day.advance_amount("boule") and day.advance_vingt_trois is None
    publish_rosters(director, afternoon)
    services.change_seance_state(director, afternoon, Seance.State.OPEN)
    second = Tableau.objects.create(table=boule_tableau.table, number=2)
    during, created = services.open_tableau(codir, second, date, "2.00", "200.00", "1000.00")
    assert created and during.seance == afternoon
    assert (during.decided_by, during.decided_role) == (codir, Role.CODIR)
    assert during.history.get().history_user == codir


def test_r24_a_planned_seance_is_declared_not_held_with_its_trimmed_reason_signed_by_the_direction(
    casino, director, codir
):
    _afternoon, evening = services.plan_seances(director, casino, DATE)
    declared = services.declare_not_held(director, evening, "  Grève du personnel \n", "codir", PASSWORD)
    evening.refresh_from_db()
    assert (evening.state, evening.not_held_reason) == (Seance.State.NOT_HELD, "Grève du personnel")
    assert declared.not_held_signature == evening.not_held_signature
    signature = evening.not_held_signature
    assert (signature.signer, signature.casino, signature.purpose) == (codir, casino, "seance_not_held")
    assert signature.statement == "Séance de la soirée du 10/03/2026 déclarée non tenue — motif : Grève du personnel"
    assert evening.history.latest().history_user == director


@pytest.mark.parametrize("reason", ["", "  \n ", None])
def test_r24_a_seance_is_not_declared_not_held_without_a_reason(casino, director, reason):
    _afternoon, evening = services.plan_seances(director, casino, DATE)
    with pytest.raises(ValidationError) as caught:
        services.declare_not_held(director, evening, reason, "directeur", PASSWORD)
    ((field, (error,)),) = caught.value.error_dict.items()
    assert (field, error.code) == ("reason", "R24")
    assert error.message == cite("R24", "Indiquez le motif pour lequel la séance n'a pas été tenue")
    evening.refresh_from_db()
    assert evening.state == Seance.State.PLANNED and not Signature.objects.exists()


@pytest.mark.parametrize(("state", "label"), [("open", "ouverte"), ("closed", "close"), ("not_held", "non tenue")])
def test_r24_only_a_planned_seance_is_declared_not_held(casino, director, state, label):
    afternoon, _evening = services.plan_seances(director, casino, DATE)
    if state == "not_held":
        services.declare_not_held(director, afternoon, "Panne", "directeur", PASSWORD)
    else:
        services.change_seance_state(director, afternoon, Seance.State.OPEN)
        if state == "closed":
            services.change_seance_state(director, afternoon, Seance.State.CLOSED)
    signatures = Signature.objects.count()
    with pytest.raises(InvalidTransition) as caught:
        services.declare_not_held(director, afternoon, "Trop tard", "directeur", PASSWORD)
    assert caught.value.rule == "R24"
    assert caught.value.message == cite(
        "R24",
        f"Seule une séance prévue peut être déclarée non tenue ; Séance de l'après-midi du 10/03/2026 est {label}",
    )
    afternoon.refresh_from_db()
    assert afternoon.state == state and Signature.objects.count() == signatures


def test_r24_only_the_direction_declares_and_signs_a_seance_not_held(casino, director, chef):
    _afternoon, evening = services.plan_seances(director, casino, DATE)
    with pytest.raises(RoleForbidden) as caught:
        services.declare_not_held(chef, evening, "Panne", "directeur", PASSWORD)
    assert caught.value.rule == "R24"
    assert caught.value.message == cite(
        "R24",
        "Seul le directeur responsable ou un membre du comité de direction peut déclarer une séance non tenue "
        f"(votre rôle : {Role.CHEF.label})",
    )
    with pytest.raises(RoleForbidden) as caught:
        services.declare_not_held(director, evening, "Panne", "chef", PASSWORD)
    assert caught.value.rule == "R24" and caught.value.message.startswith("Seul peut signer : ")
    with pytest.raises(ValidationError) as caught:
        services.declare_not_held(director, evening, "Panne", "directeur", "faux")
    ((field, (error,)),) = caught.value.error_dict.items()
    assert (field, error.code) == ("password", "R24")
    evening.refresh_from_db()
    assert evening.state == Seance.State.PLANNED and not Signature.objects.exists()
