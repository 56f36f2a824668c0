"""Workflows of the books beyond the day (R25–R27), called alike by the pages, the API and the tasks."""

from django.contrib.auth import authenticate
from django.db import transaction
from django.utils import timezone

from books.models import Observation, ObservationAction
from cashbox.models import Signature
from cashbox.services import DIRECTING, sign
from casino.models import Casino, Role
from casino.roles import role_of
from casino.rules import RoleForbidden, invalid


def regulator_signature(user, password, casino, purpose, statement, rule):
    """The regulator signs their own entry with their own password (R27, R28).

    Hand-written beside cashbox.services.sign(), which asks every signer for a ministerial approval: the police des
    jeux holds none, and signs only as the logged-in writer, never in anyone else's name.
    """
    if authenticate(username=user.username, password=password or "") is None:
        raise invalid("password", rule, "Signature refusée : mot de passe incorrect")
    return Signature.objects.create(
        signer=user, role=Role.CONTROLEUR, casino=casino, purpose=purpose, statement=statement
    )


@transaction.atomic
def record_observation(user, casino, visited_at, text, injunction, password):
    """The police des jeux records a visit and any injunction in the registre spécial d'observations (R27)."""
    if role_of(user) != Role.CONTROLEUR:
        raise RoleForbidden("R27", "Seule la police des jeux inscrit ses observations au registre spécial")
    if not Casino.objects.for_user(user).filter(pk=casino.pk).exists():
        raise RoleForbidden("R27", "Cet établissement n'est pas dans votre ressort")
    text, injunction = (text or "").strip(), (injunction or "").strip()
    if not text:
        raise invalid("text", "R27", "Inscrivez les observations de la visite")
    now = timezone.now()
    if visited_at is None or visited_at > now:
        raise invalid("visited_at", "R27", "La visite est datée, et ne peut être postérieure à son inscription")
    statement = f"Observation de la visite du {timezone.localtime(visited_at):%d/%m/%Y %H:%M} — {text}" + (
        f" — injonction : {injunction}" if injunction else ""
    )
    signature = regulator_signature(user, password, casino, Signature.Purpose.OBSERVATION, statement, "R27")
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


@transaction.atomic
def record_action(user, observation, text, signer, password):
    """The direction records what was done about an observation, in a signed follow-up entry (R27)."""
    if role_of(user) not in DIRECTING:
        raise RoleForbidden("R27", "Seule la direction inscrit la suite donnée aux observations")
    # Lock the observation: its follow-ups are written one after the other, never interleaved.
    observation = Observation.objects.select_for_update().select_related("casino").get(pk=observation.pk)
    text = (text or "").strip()
    if not text:
        raise invalid("text", "R27", "Inscrivez la suite donnée à l'observation")
    statement = f"Suite donnée à l'{observation} — {text}"
    signature = sign(
        observation.casino, signer, password, Signature.Purpose.OBSERVATION_ACTION, statement, DIRECTING, "R27"
    )
    return ObservationAction.objects.create(
        casino=observation.casino, observation=observation, text=text, signature=signature, recorded_by=user
    )
