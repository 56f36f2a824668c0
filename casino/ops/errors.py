"""Errors to Sentry (sentry-sdk, with its Django and Celery integrations) when SENTRY_DSN is set, no personal data."""

import sentry_sdk
from sentry_sdk.integrations.celery import CeleryIntegration
from sentry_sdk.integrations.django import DjangoIntegration

from casino.ops.request_id import NONE, current


def tag_request_id(event, hint):
    """Each event names its request (or task) id: the operator finds its log lines, the person quotes it."""
    request_id = current.get()
    if request_id != NONE:
        event.setdefault("tags", {})["request_id"] = request_id
    return event


def sentry_init(dsn, environment):
    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        integrations=[DjangoIntegration(), CeleryIntegration()],
        # No user, cookie, header, query, request body nor local variable is sent: these are people's records
        # (RGPD), and a signer's password or TOTP code sits in a frame's locals. `data_collection` supersedes
        # send_default_pii=False in this sentry-sdk (which deprecates it) and says each category.
        data_collection={
            "user_info": False,
            "cookies": {"mode": "off"},
            "http_headers": {"request": {"mode": "off"}},
            "http_bodies": [],
            "url_query_params": {"mode": "off"},
            "database_query_data": False,
            "stack_frame_variables": False,
        },
        max_request_body_size="never",
        traces_sample_rate=0,
        before_send=tag_request_id,
    )
