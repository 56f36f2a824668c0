"""Checks after each spin, off the request (queued with transaction.on_commit by seances.spins.services)."""

from celery import shared_task
from django.contrib.auth import get_user_model
from django.utils import timezone

from casino.rules import article
from casino.services import raise_alert
from seances.models import Roster, Spin
from seances.rosters import services as roster_services
from seances.spins import stats as spin_stats

# The séance's shares are judged once the séance has this many spins: before, one turn of the rotation is all.
SEANCE_MINIMUM_SPINS = 20
# The 30-day shares read many spins: judged every this many spins of the apparatus, and by the report page.
RECENT_EVERY = 50
RECENT_MINIMUM_SPINS = 100


def _name(user):
    return user.get_full_name() or user.username


@shared_task
def check_spin(spin_id):
    """After a spin: the launcher the roster named (R4), launch shares (R4), and the apparatus's bias (R1).

    Returns the number of alerts raised.
    """
    spin = Spin.objects.select_related("apparatus__casino", "launcher", "seance__gaming_day").get(pk=spin_id)
    raised = check_launcher_named(spin) + check_seance_shares(spin)
    if spin.sequence % RECENT_EVERY == 0:
        raised += check_recent_shares(spin.apparatus, timezone.now())
    raised += check_bias(spin.apparatus)
    return raised


def _roster(spin):
    roster = Roster.objects.published().filter(seance_id=spin.seance_id, apparatus_id=spin.apparatus_id)
    return roster_services.rosters_with_everything(roster).first()


def check_launcher_named(spin):
    """R4: an alert when the launcher of a spin is not the one the roster named at that moment."""
    roster = _roster(spin)
    if roster is None:
        return 0
    named = spin_stats.named_launchers(roster, [spin.launched_at])[0]
    if named is None or named == spin.launcher_id:
        return 0
    users = roster_services.users_of(roster)
    expected = users.get(named)
    message = (
        f"{spin.apparatus.name}, coup n° {spin.sequence} de {timezone.localtime(spin.launched_at):%H:%M} : lancé par "
        f"{_name(spin.launcher)} alors que l'ordre de roulement désignait {_name(expected) if expected else '—'} "
        f"({article('R4')})."
    )
    # One open alert per roster, launcher and launcher named: a whole turn launched by the wrong person is one alert.
    key = f"spin-launcher:{roster.pk}:{spin.launcher_id}:{named}"
    return int(raise_alert(spin.apparatus.casino, "launcher", key, message, "R4") is not None)


def _share_alerts(casino, apparatus, shares, over, scope, key, factor):
    users = {u.pk: u for u in get_user_model().objects.filter(pk__in=over)}
    raised = 0
    for user_id in over:
        share = shares["shares"][user_id]
        message = (
            f"{apparatus.name}, {scope} : {_name(users[user_id])} a lancé {share['actual']} coups sur "
            f"{shares['total']} ({share['actual_share']:.0%}) pour une part prévue de {share['planned_share']:.0%} ; "
            f"au-delà de {factor} fois la part équitable, nul ne peut être spécialisé "
            f"({article('R4')})."
        )
        raised += raise_alert(casino, "launch_share", f"{key}:{user_id}", message, "R4") is not None
    return raised


def check_seance_shares(spin):
    """R4: an alert when someone's actual share of the séance's spins exceeds the factor × their planned share."""
    roster = _roster(spin)
    if roster is None:
        return 0
    shares = spin_stats.launch_shares(spin_stats.spins_by_roster([roster]))
    casino = spin.apparatus.casino
    # The factor in force on the spin's gaming day (R29: a signed change applies from the next day).
    factor = casino.setting("launch_share_factor", spin.seance.gaming_day.date)
    over = spin_stats.over_share(shares, factor, SEANCE_MINIMUM_SPINS)
    return _share_alerts(casino, spin.apparatus, shares, over, str(spin.seance), f"share:{roster.pk}", factor)


def check_recent_shares(apparatus, moment):
    """R4: the same over the last 30 days of the apparatus."""
    shares = spin_stats.launch_shares(spin_stats.spins_by_roster(spin_stats.recent_rosters(apparatus, moment)))
    casino = apparatus.casino
    factor = casino.setting("launch_share_factor", casino.gaming_date(moment))
    over = spin_stats.over_share(shares, factor, RECENT_MINIMUM_SPINS)
    key = f"share30:{apparatus.pk}:{timezone.localdate(moment).isoformat()}"
    return _share_alerts(casino, apparatus, shares, over, "30 derniers jours", key, factor)


def check_bias(apparatus):
    """R1: an alert for the director and the police des jeux when the last N spins do not fit the plateau."""
    casino = apparatus.casino
    # The thresholds in force today (R29: a change the director signed applies from the next gaming day).
    in_force = casino.settings_on(casino.gaming_date())
    threshold = in_force.value("spin_bias_p_value")
    numbers = spin_stats.last_window(apparatus, in_force.value("spin_bias_window"))
    fit = spin_stats.biased(apparatus.game, numbers, threshold)
    if fit is None:
        return 0
    message = (
        f"Appareil {apparatus.name} : les {len(numbers)} derniers coups s'écartent des probabilités du plateau "
        f"(khi-deux {fit.statistic:.1f}, {fit.degrees} degrés de liberté, p = {fit.p_value:.2g} < "
        f"{threshold}) ; vérifiez l'appareil ({article('R1')})."
    )
    return int(raise_alert(casino, "spin_bias", f"spin-bias:{apparatus.pk}", message, "R1") is not None)
