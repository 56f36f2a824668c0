"""Every list of the API has a FilterSet, and every filter of every FilterSet works: generated from the FilterSets.

For each filter, values are taken from the demo day's records (the filter's own column), and at least one must change
the list (a subset, not the whole); a value that does not parse is refused with 400 in French, never a 500.
"""

import pytest
from django.utils import timezone
from django_filters import filters as base_filters
from django_filters.rest_framework import DjangoFilterBackend

from casino.models import JournalEntry
from casino.urls import router
from casino.web.filters import IdFilter, InstantFilter
from seances.models import Seance
from tables.models import Cashbox
from tests.accounts.test_authorization_matrix import demo  # noqa: F401 (the demo day fixture)

LISTS = [(prefix, viewset) for prefix, viewset, _ in router.registry if hasattr(viewset, "list")]
# Filters computed by a method over several columns: the columns their values come from.
METHOD_COLUMNS = {
    ("corrections", "seance"): ["advance__seance", "count__seance"],
    ("corrections", "gaming_day"): ["advance__seance__gaming_day__date", "count__seance__gaming_day__date"],
    ("corrections", "tableau"): ["advance__cashbox__tableau", "count__cashbox__tableau"],
    ("journal", "action"): ["action"],
}
# Values no record has (or bounds that leave every record out): the filter must then give an empty list, where a
# filter ignored would give the whole one. Tried after the records' own values.
UNKNOWN_ID = "1000000000"
OUT_OF_RANGE_DATES = ["2000-01-01", "2100-01-01"]
UNKNOWN_TEXT = "aucun-enregistrement"


def filters_of(prefix):
    viewset = dict(LISTS)[prefix]
    return viewset.filterset_class.base_filters.items()


FILTERS = [(prefix, name) for prefix, _ in LISTS for name, _ in filters_of(prefix)]


def test_every_list_of_the_api_declares_its_filterset():
    missing = [
        prefix
        for prefix, viewset in LISTS
        if getattr(viewset, "filterset_class", None) is None or DjangoFilterBackend not in viewset.filter_backends
    ]
    assert missing == []
    assert len(FILTERS) > 60


def as_text(value):
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def candidates(prefix, name, flt, model):
    """Values to try for one filter, from the records' own columns."""
    if isinstance(flt, base_filters.BooleanFilter):
        return ["true", "false"]
    if isinstance(flt, base_filters.ChoiceFilter):
        return [str(key) for key, _ in flt.extra["choices"]]
    if (prefix, name) == ("journal", "record"):
        rows = JournalEntry.objects.exclude(object_type="").values_list("object_type", "object_id").distinct()[:10]
        return [f"{kind}:{pk}" for kind, pk in rows] + [kind for kind, _ in rows][:2]
    columns = METHOD_COLUMNS.get((prefix, name), [flt.field_name])
    values = set()
    for column in columns:
        values |= set(model._default_manager.exclude(**{f"{column}__isnull": True}).values_list(column, flat=True))
    values = sorted(values)
    if isinstance(flt, InstantFilter):
        middle = values[len(values) // 2]
        return [middle.isoformat(), timezone.localtime(middle).date().isoformat(), *OUT_OF_RANGE_DATES]
    found = [as_text(value) for value in values[:12]]
    if isinstance(flt, IdFilter):
        return [*found, UNKNOWN_ID]
    if isinstance(flt, base_filters.DateFilter):
        return [*found, *OUT_OF_RANGE_DATES]
    return [*found, UNKNOWN_TEXT]


def ids(api, url, params=None):
    """The identities of every item of a list, all pages."""
    seen, response = set(), api.get(url, params or {})
    while True:
        assert response.status_code == 200, (url, params, response.content[:300])
        body = response.json()
        items = body["results"] if isinstance(body, dict) else body
        seen |= {item.get("id", item.get("cashbox")) for item in items}
        if not isinstance(body, dict) or not body.get("next"):
            return seen
        response = api.get(body["next"])


@pytest.mark.django_db
def test_every_filter_of_every_list_changes_its_result(api, demo, regulator):  # noqa: F811
    api.force_authenticate(regulator)
    failures = []
    for prefix, viewset in LISTS:
        url = f"/api/v1/{prefix}/"
        everything = ids(api, url)
        if not everything:
            failures.append(f"{url}: the demo day leaves the list empty")
            continue
        model = viewset.queryset.model
        for name, flt in filters_of(prefix):
            values = candidates(prefix, name, flt, model)
            changed = False
            for value in values:
                found = ids(api, url, {name: value})
                if not found <= everything:
                    failures.append(f"{url}?{name}={value}: items outside the unfiltered list")
                changed |= found != everything
            if not changed:
                failures.append(f"{url}?{name}=…: no value among {values[:5]} changes the list")
    assert failures == [], "\n".join(failures)


def invalid_value(flt):
    if isinstance(flt, InstantFilter):
        return "hier"
    if isinstance(flt, (IdFilter, base_filters.NumberFilter)):
        return "douze"
    if isinstance(flt, base_filters.DateFilter):
        return "2026-02-30"
    if isinstance(flt, base_filters.ChoiceFilter):
        return "inconnu"
    return None


@pytest.mark.django_db
def test_an_invalid_filter_value_is_a_400_in_french_on_every_list(api, regulator):
    api.force_authenticate(regulator)
    failures, checked = [], 0
    for prefix, _ in LISTS:
        url = f"/api/v1/{prefix}/"
        for name, flt in filters_of(prefix):
            value = invalid_value(flt)
            if value is None:
                continue
            for wrong in (value, "99999999999999999999999") if isinstance(flt, IdFilter) else (value,):
                checked += 1
                response = api.get(url, {name: wrong})
                body = response.json()
                french = any(
                    word in body.get("message", "") for word in ("Saisissez", "Sélectionnez", "Indiquez", "Assurez")
                )
                if response.status_code != 400 or name not in body.get("errors", {}) or not french:
                    failures.append(f"{url}?{name}={wrong}: {response.status_code} {body}")
    assert failures == [] and checked > 50, "\n".join(failures)


def list_views_outside_the_router():
    """The DRF list views routed by hand (not through the router), with their URL."""
    from django.urls import URLPattern, URLResolver, get_resolver
    from rest_framework.mixins import ListModelMixin
    from rest_framework.views import APIView

    found = []

    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                view = getattr(pattern.callback, "cls", None) or getattr(pattern.callback, "view_class", None)
                if view and issubclass(view, APIView) and not getattr(pattern.callback, "actions", None):
                    found.append((prefix + str(pattern.pattern), view))

    walk(get_resolver().url_patterns)
    return [(url, view) for url, view in found if issubclass(view, ListModelMixin)]


def test_every_list_routed_by_hand_declares_its_filterset_too():
    views = list_views_outside_the_router()
    assert "api/v1/auth/tokens/" in [url for url, _ in views]
    missing = [
        url
        for url, view in views
        if getattr(view, "filterset_class", None) is None or DjangoFilterBackend not in view.filter_backends
    ]
    assert missing == []


def items(api, url, params=None):
    """Every item of a list, all pages."""
    found, response = [], api.get(url, params or {})
    while True:
        assert response.status_code == 200, (url, params, response.content[:300])
        body = response.json()
        found += body["results"] if isinstance(body, dict) else body
        if not isinstance(body, dict) or not body.get("next"):
            return found
        response = api.get(body["next"])


def shown(value):
    """A value of an answer as a filter's query parameter writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return shown(value.get("id"))
    return None if value is None else str(value)


def identity(item):
    return item.get("id", item.get("cashbox"))


def gaming_day_of(item):
    return Seance.objects.get(pk=item["seance"]).gaming_day.date.isoformat() if "seance" in item else None


def tableau_of(item):
    return str(Cashbox.objects.get(pk=item["cashbox"]).tableau_id) if "cashbox" in item else None


# What a filter means, read from the answer where no field bears its name (written from the filters' French help, not
# from the FilterSets): a flag is the presence of a time, a day is the séance's gaming day.
MEANINGS = {
    ("interruptions", "resumed"): lambda item: shown(item["resumed_at"] is not None),
    ("passkeys", "revoked"): lambda item: shown(item["revoked_at"] is not None),
    ("alerts", "open"): lambda item: shown(item["acknowledged_at"] is None),
    ("spins", "gaming_day"): gaming_day_of,
    ("advances", "gaming_day"): gaming_day_of,
    ("counts", "gaming_day"): gaming_day_of,
    ("interruptions", "gaming_day"): gaming_day_of,
    ("advances", "tableau"): tableau_of,
    ("counts", "tableau"): tableau_of,
}


@pytest.mark.django_db
def test_every_filter_named_after_a_field_of_the_answer_keeps_exactly_the_items_showing_that_value(
    api,
    demo,  # noqa: F811
    regulator,
):
    """The oracle is the answer itself, not the FilterSet: `?seance=7` lists exactly the items whose `seance` is 7
    in the unfiltered list, so a filter on the wrong column, inverted, or reading another date, is seen even where
    the list changes."""
    api.force_authenticate(regulator)
    failures, checked = [], set()
    for prefix, viewset in LISTS:
        url = f"/api/v1/{prefix}/"
        everything = items(api, url)
        model = viewset.queryset.model
        for name, flt in filters_of(prefix):
            meaning = MEANINGS.get((prefix, name))
            if meaning is None and everything and name in everything[0] and not isinstance(flt, InstantFilter):
                meaning = lambda item, name=name: shown(item[name])  # noqa: E731
            if meaning is None:
                continue
            for value in candidates(prefix, name, flt, model):
                expected = {identity(item) for item in everything if meaning(item) == value}
                found = {identity(item) for item in items(api, url, {name: value})}
                checked.add((prefix, name))
                if found != expected:
                    failures.append(
                        f"{url}?{name}={value}: {sorted(found - expected)} listed without that {name}, "
                        f"{sorted(expected - found)} with it left out"
                    )
    assert len(checked) > 70, f"only {sorted(checked)} checked: the answers no longer name their filters"
    assert failures == [], "\n".join(failures)
