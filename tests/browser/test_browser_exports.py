"""R23: the regulator requests an export in a real Chromium, sees it complete and downloads it."""

import re
import zipfile

import pytest

from casino.models import Export
from tests.helpers.browser import log_in
from tools.verify_export import verify

try:
    from playwright.sync_api import expect
except ImportError:  # pragma: no cover - the browser fixture skips first
    expect = None

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"


def test_r23_the_regulator_requests_an_export_and_downloads_it(page, regulator, casino, tmp_path):  # noqa: F811
    log_in(page, regulator)
    page.get_by_role("link", name="Exports", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Exports pour le contrôle")
    page.fill("#id_date_from", "2025-06-01")
    page.fill("#id_date_to", "2025-06-30")
    page.get_by_role("button", name="Demander l'export").click()

    expect(page).to_have_url(re.compile(r"/exports/\d+/$"))
    # The task runs in-process here; on a real worker the page refreshes itself until the export is ready.
    expect(page.locator("#export-state")).to_have_attribute("data-state", "done", timeout=15_000)
    expect(page.locator("#public-key")).to_contain_text("BEGIN PUBLIC KEY")

    with page.expect_download() as download_info:
        page.locator("#download").click()
    path = tmp_path / "export.zip"
    download_info.value.save_as(path)
    export = Export.objects.get()
    assert zipfile.is_zipfile(path)
    # Checked against the key the casino publishes (the page shows it), not only the one the bag carries.
    assert verify(str(path), public_key=export.casino.signing_key.public_key_pem.encode()) == []
    assert download_info.value.suggested_filename == export.file_path
