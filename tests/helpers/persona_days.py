"""The day of each persona of the demo, walked in Chromium by tests/browser/test_browser_persona_days.py and
photographed for the French guides (docs/guides/img): which pages, in which order, at which size. The guides' test
(tests/web/test_guides.py) reads the same list to check that every image exists, at that size, in a guide."""

TABLET = ("chef2", "croupier1", "caissier1")  # the floor, on a 1024 × 768 touch tablet; the others at a desk, 1366 px
# Two walks of about the same length (14 pages and 3 logins, 12 pages and 4 logins), so that `-n 2` ends them together.
WALKS = {
    "directeur, controleur, caissier": ("directeur", "controleur", "caissier1"),
    "codir, chef, croupier, admin": ("codir1", "chef2", "croupier1", "admin"),
}


def day_of(persona, objects):
    """(image name, url) of the pages each persona reads in a day, in the order of the day."""
    o = objects
    return {
        "directeur": [
            ("direction-accueil", "/"),
            ("direction-registres", "/caisse/registres/"),
            ("direction-registre-du-jour", f"/caisse/registres/{o['yesterday']:%Y-%m-%d}/"),
            ("direction-carnet", f"/caisse/carnets/{o['carnet']}/"),
            ("direction-prelevements", "/livres/prelevements/"),
            ("direction-situations", "/livres/situations/"),
            ("direction-roulement", "/roulement/rapport/"),
        ],
        # A CoDir member stands in for the director: the day's séances, closing one (no signature: R19's
        # formalities are the signed counts, R20), and the deputy of the day for the control register (R22).
        "codir1": [
            ("codir-journee", "/seances/"),
            ("codir-fermeture", f"/seances/{o['open_seance']}/fermer/"),
            ("codir-suppleant", f"/caisse/registres/{o['today']:%Y-%m-%d}/suppleant/"),
        ],
        "chef2": [
            ("chef-plancher", "/caisse/plancher/"),
            ("chef-coups", f"/coups/{o['vingt_trois']}/"),
            ("chef-statistiques", f"/coups/{o['vingt_trois']}/statistiques/"),
        ],
        "croupier1": [("croupier-plancher", "/caisse/plancher/"), ("croupier-tableaux", "/registre/tableaux/")],
        "caissier1": [
            ("caissier-plancher", "/caisse/plancher/"),
            ("caissier-carnet", f"/caisse/carnets/{o['carnet']}/"),
        ],
        "controleur": [
            ("controleur-accueil", "/"),
            ("controleur-journal", "/journal/"),
            ("controleur-observations", "/livres/observations/"),
            ("controleur-statistiques", f"/coups/{o['boule']}/statistiques/"),
            ("controleur-scellements", "/exports/scellements/"),
        ],
        # The administrator manages accounts and the registry, and signs nothing (R28, R29).
        "admin": [
            ("administrateur-personnel", "/personnel/"),
            ("administrateur-fiche", f"/personnel/{o['croupier1']}/"),
            ("administrateur-nouveau", "/personnel/nouveau/"),
            ("administrateur-registre", "/registre/"),
        ],
    }[persona]


def viewport(persona):
    """The floor on a 1024 × 768 touch tablet, the others at a desk, 1366 px wide."""
    return {"width": 1024, "height": 768} if persona in TABLET else {"width": 1366, "height": 900}
