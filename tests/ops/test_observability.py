"""What the operator sees (casino/ops): a request id on every response, log line and error page; Prometheus metrics
for a bearer of METRICS_TOKEN only (requests, signed writes by kind, refusals by rule, export durations, the last
seal, the queue); errors to Sentry without personal data."""

import datetime
import logging
import re

import pytest
from django.template.loader import render_to_string
from django.utils import timezone

from casino.audit.seals import seal
from casino.models import Export, Seal
from casino.ops import errors
from casino.ops.request_id import HEADER, NONE, RequestIdFilter, current
from tests.helpers.cash_helpers import post_advance

pytestmark = pytest.mark.django_db

TOKEN = "m" * 40


@pytest.fixture
def metrics_on(settings):
    settings.METRICS_TOKEN = TOKEN
    return {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}


def scrape(client, auth):
    response = client.get("/metrics/", **auth)
    assert response.status_code == 200
    return response.content.decode()


def value(text, name, **labels):
    """The sample `name{labels}` of a scrape, 0 when absent."""
    wanted = ",".join(f'{key}="{label}"' for key, label in labels.items())
    pattern = "(?m)^" + re.escape(name) + (r"\{" + re.escape(wanted) + r"\}" if labels else "") + r" (\S+)"
    found = re.search(pattern, text)
    return float(found.group(1)) if found else 0.0


# Request ids --------------------------------------------------------------------------------------------------


def test_every_response_carries_a_new_request_id(client):
    first, second = client.get("/connexion/"), client.get("/connexion/")
    assert re.fullmatch(r"[0-9a-f]{32}", first[HEADER])
    assert first[HEADER] != second[HEADER]


def test_the_proxys_request_id_is_kept_when_it_is_a_plain_token(client):
    assert client.get("/connexion/", HTTP_X_REQUEST_ID="lb-7f3a.01_x")[HEADER] == "lb-7f3a.01_x"


@pytest.mark.parametrize("given", ["two words", "x" * 65, "a\u00e9", "<script>", ""])
def test_a_request_id_that_is_not_a_plain_token_is_replaced(client, given):
    assert re.fullmatch(r"[0-9a-f]{32}", client.get("/connexion/", HTTP_X_REQUEST_ID=given)[HEADER])


def test_the_error_pages_show_the_request_id(client):
    response = client.get("/nulle-part/", HTTP_X_REQUEST_ID="req-404")
    assert response.status_code == 404
    assert "Référence de la demande" in response.content.decode() and "req-404" in response.content.decode()
    # The 500 page is rendered by Django with an empty context: the id comes from the request being answered.
    token = current.set("req-500")
    try:
        assert "req-500" in render_to_string("500.html")
    finally:
        current.reset(token)
    assert "Référence de la demande" not in render_to_string("500.html")


class Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []
        self.addFilter(RequestIdFilter())

    def emit(self, record):
        self.records.append(record)


def test_the_lines_django_logs_after_the_middleware_carry_the_request_id_and_none_after_the_response(client):
    # The "django" loggers do not propagate (casino/ops/logs.py): listen on django.request itself.
    handler, logger = Records(), logging.getLogger("django.request")
    logger.addHandler(handler)
    try:
        client.get("/nulle-part/", HTTP_X_REQUEST_ID="req-log")
    finally:
        logger.removeHandler(handler)
    [record] = handler.records
    assert record.getMessage() == "Not Found: /nulle-part/" and record.request_id == "req-log"
    assert current.get() == NONE


def test_every_log_record_gets_the_request_id_or_a_dash_outside_a_request():
    record = logging.LogRecord("casino", logging.INFO, __file__, 1, "m", (), None)
    RequestIdFilter().filter(record)
    assert record.request_id == NONE
    token = current.set("abc")
    try:
        record = logging.LogRecord("casino", logging.INFO, __file__, 1, "m", (), None)
        RequestIdFilter().filter(record)
        assert record.request_id == "abc"
    finally:
        current.reset(token)


def test_a_task_queued_by_a_request_carries_its_id_to_the_worker():
    from casino.celery import _carry_the_request_id, _end_task_request_id, _task_request_id

    headers = {}
    token = current.set("req-9")
    try:
        _carry_the_request_id(headers=headers)
    finally:
        current.reset(token)
    assert headers["request_id"] == "req-9"

    class Task:
        class request:  # noqa: N801 (Celery's task.request)
            request_id = "req-9"

    _task_request_id(task_id="t-1", task=Task)
    assert current.get() == "req-9"
    _end_task_request_id(task_id="t-1")
    assert current.get() == NONE
    Task.request.request_id = None
    _task_request_id(task_id="t-2", task=Task)  # queued by beat: the task's own id
    assert current.get() == "t-2"
    _end_task_request_id(task_id="t-2")


# Metrics ------------------------------------------------------------------------------------------------------


def test_metrics_are_not_there_without_the_token(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics/").status_code == 404
    assert client.get("/metrics/", HTTP_AUTHORIZATION="Bearer ").status_code == 404
    settings.METRICS_TOKEN = TOKEN
    assert client.get("/metrics/").status_code == 404
    assert client.get("/metrics/", HTTP_AUTHORIZATION=f"Bearer {TOKEN}x").status_code == 404
    assert client.get("/metrics/", HTTP_AUTHORIZATION=f"Token {TOKEN}").status_code == 404


def test_metrics_count_requests_by_method_and_status(client, metrics_on):
    before = value(scrape(client, metrics_on), "casino_http_requests_total", method="GET", status="404")
    client.get("/nulle-part/")
    after = value(scrape(client, metrics_on), "casino_http_requests_total", method="GET", status="404")
    assert after == before + 1


def test_metrics_count_signed_writes_by_kind_and_refusals_by_rule(
    api, client, metrics_on, cash_staff, open_day, boule_tableau, django_capture_on_commit_callbacks
):
    text = scrape(client, metrics_on)
    signed, refused = (
        value(text, "casino_signed_writes_total", kind="advance"),
        value(text, "casino_refusals_total", rule="R15"),
    )
    chef = cash_staff["chef"]
    with django_capture_on_commit_callbacks(execute=True):  # a signature counts once its transaction commits
        assert post_advance(api, chef, boule_tableau, open_day, chips={"100.00": 1}).status_code == 400  # R15
        assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    text = scrape(client, metrics_on)
    assert value(text, "casino_signed_writes_total", kind="advance") == signed + 1
    assert value(text, "casino_refusals_total", rule="R15") == refused + 1


def test_metrics_give_the_export_durations_and_the_last_seal(client, metrics_on, casino, regulator, director):
    now = timezone.now()
    for seconds in (3, 40):
        Export.objects.create(
            casino=casino,
            requested_by=regulator,
            date_from=datetime.date(2026, 1, 1),
            date_to=datetime.date(2026, 1, 1),
            state=Export.State.DONE,
            started_at=now - datetime.timedelta(seconds=seconds),
            finished_at=now,
        )
    text = scrape(client, metrics_on)
    assert value(text, "casino_export_duration_seconds_count") == 2
    assert value(text, "casino_export_duration_seconds_bucket", le="5.0") == 1
    assert value(text, "casino_export_duration_seconds_bucket", le="60.0") == 2
    assert value(text, "casino_export_duration_seconds_sum") == pytest.approx(43)
    assert value(text, "casino_celery_broker_up") == 0  # tests run tasks in-process: no broker to ask
    assert value(text, "casino_last_seal_sequence", casino=casino.pk) == 0
    made = seal(casino, Seal.Reason.DAY_END)
    text = scrape(client, metrics_on)
    assert value(text, "casino_last_seal_sequence", casino=casino.pk) == made.sequence > 0
    assert value(text, "casino_last_seal_timestamp_seconds", casino=casino.pk) == made.sealed_at.timestamp()


class Broker:
    """Stands in for a Redis broker's connection: the length of each queue, or a failure."""

    def __init__(self, lengths=None, error=None):
        self.lengths, self.error, self.asked = lengths or {}, error, []

    def connection_for_read(self, **kwargs):
        if self.error:
            raise self.error
        return self

    def __enter__(self):
        self.default_channel = self
        self.client = self
        return self

    def __exit__(self, *exc_info):
        return False

    def llen(self, queue):
        self.asked.append(queue)
        return self.lengths.get(queue, 0)


def test_metrics_give_the_celery_queue_and_whether_the_broker_answered(client, metrics_on, settings, monkeypatch):
    from casino.ops import metrics

    settings.CELERY_TASK_ALWAYS_EAGER, settings.CELERY_BROKER_URL = False, "redis://:secret@broker:6379/0"
    broker = Broker({"celery": 7})
    monkeypatch.setattr(metrics.app, "connection_for_read", broker.connection_for_read)
    text = scrape(client, metrics_on)
    assert broker.asked == ["celery"]
    assert value(text, "casino_celery_queue_length", queue="celery") == 7
    assert value(text, "casino_celery_broker_up") == 1
    assert "secret" not in text and "broker:6379" not in text

    down = Broker(error=ConnectionError("Error 111 connecting to broker:6379"))
    monkeypatch.setattr(metrics.app, "connection_for_read", down.connection_for_read)
    text = scrape(client, metrics_on)  # a broker down is a 0, not a failed scrape
    assert value(text, "casino_celery_broker_up") == 0
    assert "casino_celery_queue_length{" not in text


def test_metrics_count_the_exports_by_state(client, metrics_on, casino, regulator):
    for state in (Export.State.PENDING, Export.State.FAILED, Export.State.FAILED):
        Export.objects.create(
            casino=casino, requested_by=regulator, date_from=casino.arrete_date, date_to=casino.arrete_date, state=state
        )
    text = scrape(client, metrics_on)
    assert value(text, "casino_exports", state="pending") == 1
    assert value(text, "casino_exports", state="failed") == 2
    assert value(text, "casino_exports", state="running") == 0
    assert 'casino_exports{state="done"} 0.0' in text


# Sentry -------------------------------------------------------------------------------------------------------


def test_sentry_is_set_up_with_django_and_celery_and_sends_no_personal_data():
    import sentry_sdk

    errors.sentry_init("https://public@sentry.invalid/1", "test")
    try:
        client = sentry_sdk.get_client()
        collected = client.options["data_collection"]
        assert collected["user_info"] is False and collected["http_bodies"] == []
        assert collected["stack_frame_variables"] is False  # a signer's password sits in a frame's locals
        assert collected["cookies"]["mode"] == collected["http_headers"]["request"]["mode"] == "off"
        assert not client.options.get("send_default_pii")
        assert client.options["max_request_body_size"] == "never"
        assert {"django", "celery"} <= set(client.integrations)
    finally:
        sentry_sdk.init()  # no DSN: off again


def test_a_sentry_event_names_the_request_id():
    token = current.set("req-1")
    try:
        assert errors.tag_request_id({}, None)["tags"]["request_id"] == "req-1"
    finally:
        current.reset(token)
    assert "tags" not in errors.tag_request_id({}, None)
