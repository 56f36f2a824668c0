"""The export's message matches its state (issue 40: « préparé en arrière-plan » above « Prêt 100 % »): the request
is acknowledged by its number, and the page it leads to says the state as it is."""

import pytest
from django.contrib.messages import get_messages

from casino.models import Export
from tests.exports.test_exports import demo_day  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


def test_the_request_is_acknowledged_by_its_number_without_claiming_a_state(
    as_user,
    regulator,
    casino,
    demo_day,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    client = as_user(regulator)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/exports/", {"casino": casino.pk, "date_from": demo_day.date, "date_to": demo_day.date})
    export = Export.objects.get()
    assert [str(m) for m in get_messages(response.wsgi_request)] == [f"Export n° {export.pk} demandé."]


def test_a_finished_export_reads_ready(as_user, regulator, casino, settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path
    (tmp_path / "export.zip").write_bytes(b"PK")
    export = Export.objects.create(
        casino=casino,
        requested_by=regulator,
        date_from="2025-01-01",
        date_to="2025-01-02",
        state=Export.State.DONE,
        progress=100,
        file_path="export.zip",
        sha256="0" * 64,
    )
    page = as_user(regulator).get(f"/exports/{export.pk}/").content.decode()
    assert "L'export est prêt." in page and "en préparation" not in page and "arrière-plan" not in page


def test_an_export_in_progress_reads_in_preparation_and_not_ready(as_user, regulator, casino):
    export = Export.objects.create(casino=casino, requested_by=regulator, date_from="2025-01-01", date_to="2025-01-02")
    page = as_user(regulator).get(f"/exports/{export.pk}/").content.decode()
    # Not yet taken by the worker: it waits, and says so (issue 40: the message matches the state).
    assert "attend son tour" in page and "en préparation" not in page and "L'export est prêt." not in page
    Export.objects.filter(pk=export.pk).update(state=Export.State.RUNNING, progress=1)
    page = as_user(regulator).get(f"/exports/{export.pk}/").content.decode()
    assert "est en préparation" in page and "L'export est prêt." not in page


def test_the_progress_endpoint_answers_404_outside_the_readers_casinos(client, regulator, casino, other_casino):
    from casino.models import Role
    from tests.conftest import make_employee

    export = Export.objects.create(casino=casino, requested_by=regulator, date_from="2025-01-01", date_to="2025-01-02")
    stranger = make_employee("controleur2", Role.CONTROLEUR, other_casino, approved=False).user
    client.force_login(stranger)
    assert client.get(f"/exports/{export.pk}/etat/").status_code == 404
