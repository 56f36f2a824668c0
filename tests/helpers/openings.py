"""The day's date, an opening and a stake check through the API, shared by the tests of openings and limits."""

from seances.models import GamingDay


def today(casino):
    return GamingDay.date_at(casino)


def post_opening(api, user, tableau, day, minimum, max_plein, max_chances):
    api.force_authenticate(user)
    return api.post(
        "/api/v1/openings/",
        {
            "tableau": tableau.pk,
            "gaming_day": day.isoformat(),
            "minimum": minimum,
            "max_plein": max_plein,
            "max_chances": max_chances,
        },
        format="json",
    )


def check_stakes(api, user, apparatus, stakes):
    api.force_authenticate(user)
    return api.post(f"/api/v1/apparatus/{apparatus.pk}/check-stakes/", {"stakes": stakes}, format="json")
