"""The carnet des prélèvements refuses a season it cannot hold (issue 40: season 0 answered 500, « year 0 is out of
range »): 400 with the rule in the API, 404 in the pages, as the sheet number and the situations' year already are.
"""

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("season", [0, 1, 1999, 2101, 9999])
def test_r25_the_api_refuses_a_season_out_of_range_with_the_rule(api, regulator, season):
    api.force_authenticate(regulator)
    response = api.get(f"/api/v1/prelevements/{season}/1/")
    assert response.status_code == 400
    assert response.json()["rule"] == "R25" and "season" in response.json()["errors"]


@pytest.mark.parametrize("season", [2000, 2100])
def test_r25_the_api_serves_the_seasons_its_schema_announces(api, regulator, season):
    api.force_authenticate(regulator)
    assert api.get(f"/api/v1/prelevements/{season}/12/").status_code == 200


@pytest.mark.parametrize(
    "url", ["/livres/prelevements/0/1/", "/livres/prelevements/9999/12/", "/livres/prelevements/?saison=0"]
)
def test_r25_the_pages_answer_404_for_a_season_out_of_range(as_user, director, url):
    assert as_user(director).get(url).status_code == 404


def test_r25_the_api_serves_no_sheet_of_a_casino_not_the_users(api, regulator, casino, other_casino):
    # Hand-made W2: ?casino= read among every casino of the group served another casino's carnet des prélèvements.
    api.force_authenticate(regulator)
    own = api.get(f"/api/v1/prelevements/2025/1/?casino={casino.pk}")
    assert own.status_code == 200 and own.json()["casino"] == casino.pk
    response = api.get(f"/api/v1/prelevements/2025/1/?casino={other_casino.pk}")
    assert response.status_code == 404
    assert "casino" not in response.json()
