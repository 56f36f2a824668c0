"""Workflows of the books beyond the day (R25–R27), called alike by the pages, the API and the tasks."""

import datetime
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.utils import timezone

from books.models import LevyBracket, LevySchedule, MonthlyStatement, Observation, ObservationAction
from books.statements import content_hash, month_bounds, next_month, statement_of
from cashbox.models import Signature
from cashbox.signatures import DIRECTING, act_of, key_signing_options, require_keys, sign
from casino.accounts.passkeys import signing_options, verify_assertion
from casino.accounts.roles import role_of
from casino.accounts.security import check_secrets
from casino.models import Casino, Role
from casino.rules import InvalidTransition, RoleForbidden, invalid
from casino.web.formats import euros


def regulator_signature(user, password, casino, purpose, statement, rule, otp=None, act=None, assertion=None):
    """The regulator signs their own entry with their own secrets (R27, R28).

    Beside cashbox.signatures.sign(), which asks every signer for a ministerial approval: the police des jeux holds
    none, and signs only as the logged-in writer, never in anyone else's name. Their password, and their TOTP code
    outside demo mode, go through the lockout shared by every secret (casino.accounts.security.check_secrets). In a
    casino that signs with keys, their own confirmed key signs `act` instead (casino.accounts.passkeys).
    """
    signed_with = {}
    if act is not None and casino.signature_method == Casino.SignatureMethod.PASSKEY:
        if not isinstance(assertion, dict) or not assertion:
            raise invalid(
                "assertion", rule, "Signature refusée : l'établissement signe avec les clés, signez avec votre clé"
            )
        signed_with = verify_assertion(casino.pk, user, act, assertion, "R28")
    else:
        check_secrets(user, password, otp, rule)
    return Signature.objects.create(
        signer=user, role=Role.CONTROLEUR, casino=casino, purpose=purpose, statement=statement, **signed_with
    )


def observation_act(casino, signer, visited_at, text, injunction):
    """The canonical statement of the regulator's entry (R27, R28), as observations.json lets them rebuild it."""
    figures = {"visited_at": visited_at, "text": text, "injunction": injunction}
    return act_of("books.observation", Signature.Purpose.OBSERVATION.value, casino.pk, signer, figures)


def observation_entered(user, casino, visited_at, text, injunction, now):
    """The entry as the regulator writes it, checked (R27): their role and district, the text, the visit's date."""
    if role_of(user) != Role.CONTROLEUR:
        raise RoleForbidden("R27", "Seule la police des jeux inscrit ses observations au registre spécial")
    if not Casino.objects.for_user(user).filter(pk=casino.pk).exists():
        raise RoleForbidden("R27", "Cet établissement n'est pas dans votre ressort")
    text, injunction = (text or "").strip(), (injunction or "").strip()
    if not text:
        raise invalid("text", "R27", "Inscrivez les observations de la visite")
    if visited_at is None or visited_at > now:
        raise invalid("visited_at", "R27", "La visite est datée, et ne peut être postérieure à son inscription")
    return text, injunction


def observation_signing_options(user, casino, visited_at, text, injunction):
    """The first step of the regulator's entry signed with their key (R27, R28)."""
    text, injunction = observation_entered(user, casino, visited_at, text, injunction, timezone.now())
    require_keys(casino)
    return signing_options(casino, user, observation_act(casino, user.username, visited_at, text, injunction))


@transaction.atomic
def record_observation(user, casino, visited_at, text, injunction, password, otp=None, assertion=None):
    """The police des jeux records a visit and any injunction in the registre spécial d'observations (R27)."""
    now = timezone.now()
    text, injunction = observation_entered(user, casino, visited_at, text, injunction, now)
    statement = f"Observation de la visite du {timezone.localtime(visited_at):%d/%m/%Y %H:%M} — {text}" + (
        f" — injonction : {injunction}" if injunction else ""
    )
    act = observation_act(casino, user.username, visited_at, text, injunction)
    signature = regulator_signature(
        user, password, casino, Signature.Purpose.OBSERVATION, statement, "R27", otp, act=act, assertion=assertion
    )
    return Observation.objects.create(
        casino=casino,
        visited_at=visited_at,
        text=text,
        injunction=injunction,
        deadline=Observation.deadline_from(timezone.localdate(now)) if injunction else None,
        written_by=user,
        signature=signature,
        recorded_at=now,
    )


def key_options(casino, signer, act, rule):
    """The first step of a book's act signed with a key (R28): the act's canonical statement and the options of
    navigator.credentials.get() for the signer's key; nothing of the act is written. Refused in a casino that signs
    with passwords."""
    return key_signing_options(casino, signer, act, rule)


def action_act(observation, signer, text):
    """The canonical statement of a follow-up of an observation (R27, R28), as observations.json lets the regulator
    rebuild it: the observation, its visit, its injunction, and the follow-up's text."""
    figures = {
        "observation": observation.pk,
        "visited_at": observation.visited_at,
        "injunction": observation.injunction,
        "text": text,
    }
    return act_of(
        "books.observationaction", Signature.Purpose.OBSERVATION_ACTION.value, observation.casino_id, signer, figures
    )


def action_text(user, text):
    if role_of(user) not in DIRECTING:
        raise RoleForbidden("R27", "Seule la direction inscrit la suite donnée aux observations")
    text = (text or "").strip()
    if not text:
        raise invalid("text", "R27", "Inscrivez la suite donnée à l'observation")
    return text


def action_signing_options(user, observation, text, signer):
    """The first step of a follow-up signed with the signer's key (R27, R28)."""
    text = action_text(user, text)
    return key_options(observation.casino, signer, action_act(observation, signer, text), "R27")


@transaction.atomic
def record_action(user, observation, text, signer, password, otp=None, assertion=None):
    """The direction records what was done about an observation, in a signed follow-up entry (R27); with the signer's
    key in a casino that signs with keys (R28)."""
    text = action_text(user, text)
    # Lock the observation: its follow-ups are written one after the other, never interleaved.
    observation = Observation.objects.select_for_update(of=("self",)).select_related("casino").get(pk=observation.pk)
    statement = f"Suite donnée à l'{observation} — {text}"
    signature = sign(
        observation.casino,
        signer,
        password,
        Signature.Purpose.OBSERVATION_ACTION,
        statement,
        DIRECTING,
        "R27",
        otp=otp,
        act=action_act(observation, signer, text),
        assertion=assertion,
    )
    return ObservationAction.objects.create(
        casino=observation.casino, observation=observation, text=text, signature=signature, recorded_by=user
    )


def parse_brackets(brackets):
    """Normalise a schedule's brackets [{"lower", "upper", "rate"}, …]: contiguous from 0, the last one open,
    rates in percent; Decimal from strings, never float (R25)."""
    if not isinstance(brackets, list) or not brackets:
        raise invalid("brackets", "R25", "Indiquez au moins une tranche (de, à, taux)")
    parsed = []
    for position, bracket in enumerate(brackets, 1):
        try:
            lower = Decimal(str(bracket.get("lower", ""))).quantize(Decimal("0.01"))
            upper_value = bracket.get("upper")
            upper = None if upper_value in (None, "") else Decimal(str(upper_value)).quantize(Decimal("0.01"))
            rate = Decimal(str(bracket.get("rate", ""))).quantize(Decimal("0.0001"))
        except (InvalidOperation, AttributeError, TypeError):
            raise invalid("brackets", "R25", f"Tranche n° {position} : montants et taux en nombres décimaux") from None
        if not (lower.is_finite() and rate.is_finite() and (upper is None or upper.is_finite())):
            raise invalid("brackets", "R25", f"Tranche n° {position} : montants et taux en nombres décimaux")
        if not Decimal(0) <= rate <= Decimal(100):
            raise invalid("brackets", "R25", f"Tranche n° {position} : le taux est un pourcentage entre 0 et 100")
        expected = Decimal("0.00") if not parsed else parsed[-1][1]
        if expected is None or lower != expected:
            raise invalid(
                "brackets",
                "R25",
                f"Tranche n° {position} : les tranches se suivent sans trou ni chevauchement, dès 0 €",
            )
        if upper is not None and upper <= lower:
            raise invalid("brackets", "R25", f"Tranche n° {position} : la borne haute dépasse la borne basse")
        parsed.append((lower, upper, rate))
    if parsed[-1][1] is not None:
        raise invalid("brackets", "R25", "La dernière tranche est ouverte (sans borne haute)")
    return parsed


def levy_schedule_act(casino, signer, season, name, parsed):
    """The canonical statement of a levy schedule (R25, R28), as levy_schedules.csv and levy_brackets.csv let the
    regulator rebuild it: the season, the levy's name, its brackets (from, to, rate in percent)."""
    figures = {
        "season": season,
        "name": name,
        "brackets": [
            [f"{lower:.2f}", None if upper is None else f"{upper:.2f}", f"{rate:.4f}"] for lower, upper, rate in parsed
        ],
    }
    return act_of("books.levyschedule", Signature.Purpose.LEVY_SCHEDULE.value, casino.pk, signer, figures)


def schedule_entered(user, season, name, brackets):
    # The director alone, as the page (books.add_levyschedule, the director's only) and the signature it carries.
    if role_of(user) != Role.DIRECTOR:
        raise RoleForbidden("R25", "Seul le directeur responsable saisit le barème des prélèvements")
    name = (name or "").strip()
    if not name:
        raise invalid("name", "R25", "Nommez le prélèvement (ex. « prélèvement progressif de l'État »)")
    if not isinstance(season, int) or not 2000 <= season <= 2100:
        raise invalid("season", "R25", "Indiquez la saison (année où elle commence, le 1er novembre)")
    return name, parse_brackets(brackets)


def levy_schedule_signing_options(user, casino, season, name, brackets, signer):
    """The first step of a levy schedule signed with the director's key (R25, R28)."""
    name, parsed = schedule_entered(user, season, name, brackets)
    return key_options(casino, signer, levy_schedule_act(casino, signer, season, name, parsed), "R25")


@transaction.atomic
def enter_levy_schedule(user, casino, season, name, brackets, signer, password, otp=None, assertion=None):
    """The director enters the schedule of a levy for a season; a later one for the same levy supersedes it (R25).
    With the director's key in a casino that signs with keys (R28)."""
    name, parsed = schedule_entered(user, season, name, brackets)
    described = " ; ".join(
        f"{euros(lower)} à {'∞' if upper is None else euros(upper)} : {rate} %" for lower, upper, rate in parsed
    )
    statement = f"Barème « {name} » de la saison {season}-{season + 1} — {described}"
    signature = sign(
        casino,
        signer,
        password,
        Signature.Purpose.LEVY_SCHEDULE,
        statement,
        {Role.DIRECTOR},
        "R25",
        otp=otp,
        act=levy_schedule_act(casino, signer, season, name, parsed),
        assertion=assertion,
    )
    schedule = LevySchedule.objects.create(
        casino=casino, season=season, name=name, signature=signature, entered_by=user
    )
    for lower, upper, rate in parsed:
        LevyBracket.objects.create(casino=casino, schedule=schedule, lower=lower, upper=upper, rate=rate)
    return schedule


def statement_act(casino, signer, year, month, digest):
    """The canonical statement of a situation mensuelle signed (R26, R28), as monthly_statements.csv lets the regulator
    rebuild it: the month and the SHA-256 of its content."""
    figures = {"year": year, "month": month, "content_hash": digest}
    return act_of("books.monthlystatement", Signature.Purpose.MONTHLY_STATEMENT.value, casino.pk, signer, figures)


def month_to_sign(user, year, month):
    if role_of(user) not in DIRECTING:
        raise RoleForbidden("R26", "Seule la direction présente la situation mensuelle à la signature")
    month_bounds(year, month)
    opens = datetime.date(*next_month(year, month), 1)
    if timezone.localdate() < opens:
        raise InvalidTransition(
            "R26", f"La situation de {month:02d}/{year} se signe à partir du {opens:%d/%m/%Y}, le mois écoulé"
        )


def statement_signing_options(user, casino, year, month, signer):
    """The first step of a situation mensuelle signed with the director's key (R26, R28)."""
    month_to_sign(user, year, month)
    digest = content_hash(statement_of(casino, year, month))
    return key_options(casino, signer, statement_act(casino, signer, year, month, digest), "R26")


@transaction.atomic
def sign_statement(user, casino, year, month, signer, password, otp=None, assertion=None):
    """The director signs the situation mensuelle of a past month: a record of its content's hash (R26); with their
    key in a casino that signs with keys (R28)."""
    month_to_sign(user, year, month)
    # Lock the casino: two signatures of the same content at once must not both be recorded.
    casino = Casino.objects.select_for_update().get(pk=casino.pk)
    document = statement_of(casino, year, month)
    digest = content_hash(document)
    latest = (
        MonthlyStatement.objects.filter(casino=casino, year=year, month=month).order_by("-signed_at", "-pk").first()
    )
    if latest is not None and latest.content_hash == digest:
        raise InvalidTransition("R26", f"La situation de {month:02d}/{year} est déjà signée, et inchangée depuis")
    statement = f"Situation mensuelle de {month:02d}/{year} — {casino.name} — contenu SHA-256 {digest}"
    signature = sign(
        casino,
        signer,
        password,
        Signature.Purpose.MONTHLY_STATEMENT,
        statement,
        {Role.DIRECTOR},
        "R26",
        otp=otp,
        act=statement_act(casino, signer, year, month, digest),
        assertion=assertion,
    )
    return MonthlyStatement.objects.create(
        casino=casino, year=year, month=month, content_hash=digest, signature=signature, signed_by=signature.signer
    )
