"""Path converters shared by the apps' URLs, registered once when this module is first imported."""

import datetime

from django.urls import register_converter


class DateConverter:
    """A gaming day in a URL: 2026-12-05."""

    regex = r"\d{4}-\d{2}-\d{2}"

    def to_python(self, value):
        return datetime.date.fromisoformat(value)

    def to_url(self, value):
        return value.isoformat() if isinstance(value, datetime.date) else value


register_converter(DateConverter, "date")
