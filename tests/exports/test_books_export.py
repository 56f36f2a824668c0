"""The books beyond the day travel in the regulator's export, hashed in its manifest and verified offline (R24–R27)."""

import datetime
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from books import services as book_services
from cashbox import services
from cashbox.models import Count
from casino.exports.build import request_export, signing_key
from casino.models import Export
from tests.conftest import PASSWORD
from tests.helpers.books_helpers import day_of_play, signed_register, staff_fixture  # noqa: F401
from tests.helpers.cash_helpers import chips_for

pytestmark = pytest.mark.django_db


def test_r24_to_r27_the_export_carries_the_books_beyond_the_day(
    staff, regulator, casino, boule_tableau, vingt_trois_tableau, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.EXPORT_ROOT = tmp_path / "exports"
    date = datetime.date(2025, 1, 15)
    day = day_of_play(staff, casino, date, {"apres_midi": [(boule_tableau, "9000")]}, ["soiree"])
    signed_register(staff, day)
    count = Count.objects.get(seance__gaming_day=day, kind="final")
    services.correct(
        staff["chef"], count, chips_for("8900"), "Erreur", "huit mille neuf cents euros", "directeur", PASSWORD
    )
    book_services.record_observation(
        regulator,
        casino,
        timezone.make_aware(datetime.datetime(2025, 1, 15, 16, 0)),
        "Visite",
        "Afficher les limites",
        PASSWORD,
    )
    with django_capture_on_commit_callbacks(execute=True):
        export = request_export(regulator, casino, date, date)
    export.refresh_from_db()
    assert export.state == Export.State.DONE, export.error
    path = Path(settings.EXPORT_ROOT) / export.file_path
    with zipfile.ZipFile(path) as bag:
        names = {name.split("/", 1)[1]: name for name in bag.namelist()}
        manifest = bag.read(names["manifest-sha256.txt"]).decode()

        def read(relative):
            assert f"  data/{relative}\n" in manifest, relative
            return json.loads(bag.read(names[f"data/{relative}"]))

        assert read("seances-non-tenues.json")[0]["reason"] == "Fermeture exceptionnelle"
        (amendment,) = read("rectificatifs.json")
        assert amendment["difference"] == "-100.00" and amendment["reason"] == "Erreur"
        assert read("observations.json")[0]["injunction"] == "Afficher les limites"
        sheet = read("prelevements/saison-2024-feuille-03.json")
        assert sheet["month_totals"]["total"] == "1000.00" and sheet["levy_schedule_entered"] is False
        statement = read("situations/situation-2025-01.json")
        assert statement["statement"]["registers"][0]["rectified"] is True and statement["signed"] is False
    key = tmp_path / "key.pem"
    key.write_text(signing_key(casino).public_key_pem)
    out = io.StringIO()
    call_command("verify_export", str(path), "--public-key", str(key), stdout=out)
    assert "Export intègre" in out.getvalue()


def test_r27_the_export_s_observations_are_those_of_its_gaming_days_from_paris_midnight(staff, regulator, casino):
    """A visit in the first hour of the period's first day (Paris time, still the previous day in UTC) is in the
    export; one in the first hour of the day after its last day is not."""
    from books.exports import export_documents

    paris = datetime.datetime(2025, 1, 15, 0, 30)
    for moment, text in ((paris, "Visite de la nuit"), (paris + datetime.timedelta(days=2), "Visite d'après")):
        book_services.record_observation(regulator, casino, timezone.make_aware(moment), text, "", PASSWORD)

    documents = export_documents(casino, datetime.date(2025, 1, 15), datetime.date(2025, 1, 16))

    assert [o["text"] for o in documents["observations.json"]] == ["Visite de la nuit"]


def test_r24_the_export_s_seances_not_held_are_its_casino_s_only(staff, casino, other_casino, outsider):
    from books.exports import export_documents
    from seances.services import declare_not_held, plan_seances

    date = datetime.date(2025, 1, 15)
    day_of_play(staff, casino, date, {}, ["soiree", "apres_midi"])
    for seance in plan_seances(outsider, other_casino, date):
        declare_not_held(outsider, seance, "Fermeture d'ailleurs", "directeur2", PASSWORD)

    documents = export_documents(casino, date, date)

    assert [(s["kind"], s["reason"]) for s in documents["seances-non-tenues.json"]] == [
        ("apres_midi", "Fermeture exceptionnelle"),
        ("soiree", "Fermeture exceptionnelle"),
    ]
