"""A whole day through the pages, as people do it in the browser: open, advance, top-up, interruptions, counts,
close, carnet, control register signed twice (R10–R23)."""

import pytest

from cashbox.models import Advance, ControlRegister, Count, Interruption
from seances.models import GamingDay, Roster, Seance
from tables.models import Apparatus
from tests.conftest import PASSWORD
from tests.helpers.days import reach_opening

pytestmark = pytest.mark.django_db


def ok(response):
    assert response.status_code == 302, response.content.decode()[:2000]
    return response


def publish_rosters_through_pages(client, casino, seance):
    """R4: the rotation order of each apparatus in play, built and published on the roster pages."""
    for apparatus in Apparatus.objects.filter(casino=casino):
        data = {"seance": seance.pk, "apparatus": apparatus.pk, "chef": "chef", "members": ["croupier1", "croupier2"]}
        ok(client.post("/roulement/nouveau/", data))
        roster = Roster.objects.get(seance=seance, apparatus=apparatus)
        ok(client.post(f"/roulement/{roster.pk}/publier/", {"signer": "directeur", "password": PASSWORD}))
        assert Roster.objects.get(pk=roster.pk).state == "published"


def test_a_whole_day_runs_through_the_pages(client, cash_staff, casino, boule_tableau, vingt_trois_tableau):
    director, chef = cash_staff["director"], cash_staff["chef"]
    day = GamingDay.date_at(casino)

    client.force_login(director)
    ok(client.post("/seances/planifier/", {"casino": casino.pk, "date": day.isoformat()}))
    afternoon = Seance.objects.get(kind="apres_midi")
    publish_rosters_through_pages(client, casino, afternoon)
    reach_opening(afternoon)  # R30: at its planned start if the clock is earlier; the idle session then ends
    client.force_login(director)
    ok(client.post(f"/seances/{afternoon.pk}/ouvrir/"))
    limits = {boule_tableau: ("2.00", "200.00", "1000.00"), vingt_trois_tableau: ("1.00", "50.00", "250.00")}
    for tableau, (minimum, plein, chances) in limits.items():
        data = {"gaming_day": day.isoformat(), "minimum": minimum, "max_plein": plein, "max_chances": chances}
        ok(client.post(f"/seances/tableaux/{tableau.pk}/ouvrir/", data))

    client.force_login(chef)
    signed = {"counted_by": "croupier1", "brought_by": "caissier", "signer": "directeur", "password": PASSWORD}
    ok(client.post(f"/caisse/tableaux/{boule_tableau.pk}/avance/", {"chips_100_00": "80", **signed}))
    ok(client.post(f"/caisse/tableaux/{vingt_trois_tableau.pk}/avance/", {"chips_1000_00": "10", **signed}))
    ok(client.post(f"/caisse/tableaux/{boule_tableau.pk}/avance/?kind=top_up", {"chips_500_00": "16", **signed}))

    attest = {"key_holder": "chef", "password": PASSWORD, "short": "on", "boxes_at_table": "on", "staff_at_post": "on"}
    ok(client.post(f"/caisse/tableaux/{boule_tableau.pk}/interruption-momentanee/", attest))
    short = Interruption.objects.get(kind="short")
    ok(
        client.post(
            f"/caisse/interruptions/{short.pk}/reprise/",
            {"unlocked_by": "chef", "password": PASSWORD, "lids_off": "on"},
        )
    )

    counted = {"chips_100_00": "95", "counted_by": "croupier1", "witnesses": ["croupier2"]}
    ok(client.post(f"/caisse/tableaux/{vingt_trois_tableau.pk}/interruption-comptage/", counted))
    full = Interruption.objects.get(kind="full")
    ok(client.post(f"/caisse/interruptions/{full.pk}/reprise/", {}))

    final = {
        "counted_by": "croupier1",
        "witnesses": ["croupier2"],
        "caissier": "caissier",
        "password": PASSWORD,
        "confirm": "1",
    }
    ok(
        client.post(
            f"/caisse/tableaux/{boule_tableau.pk}/comptage-final/", {"chips_100_00": "170", "signer": "codir", **final}
        )
    )
    ok(
        client.post(
            f"/caisse/tableaux/{vingt_trois_tableau.pk}/comptage-final/",
            {"chips_100_00": "97", "signer": "directeur", **final},
        )
    )
    assert sorted(Count.objects.filter(kind="final").values_list("result", flat=True)) == [-300, 1000]

    client.force_login(director)
    ok(client.post(f"/seances/{afternoon.pk}/fermer/", {"confirm": "1"}))
    evening = Seance.objects.get(kind="soiree")
    publish_rosters_through_pages(client, casino, evening)
    reach_opening(evening)  # R30: at its planned start if the clock is earlier; the idle session then ends
    client.force_login(director)
    ok(client.post(f"/seances/{evening.pk}/ouvrir/"))
    ok(client.post(f"/seances/{evening.pk}/fermer/", {"confirm": "1"}))

    carnet = client.get(f"/caisse/carnets/{Advance.objects.filter(kind='top_up').get().cashbox_id}/").content.decode()
    assert "16\u202f000,00\u00a0€" in carnet and "1\u202f000,00\u00a0€" in carnet

    register_url = f"/caisse/registres/{day.isoformat()}/?casino={casino.pk}"
    ok(client.post(register_url, {"action": "draw_up"}))
    assert "sept cents euros" in client.get(register_url).content.decode()
    ok(client.post(register_url, {"action": "sign", "confirm": "1", "signer": "directeur", "password": PASSWORD}))
    ok(client.post(register_url, {"action": "sign", "confirm": "1", "signer": "codir", "password": PASSWORD}))
    assert ControlRegister.objects.get().signed
