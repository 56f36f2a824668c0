from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from books import api as books_api
from books import urls as books_urls
from cashbox import api as cashbox_api
from casino import api as casino_api
from casino import views
from casino.accounts import api as accounts_api
from casino.accounts import auth, passkey_views
from casino.accounts import views as accounts_views
from casino.accounts.permissions import RolePermission
from casino.audit import api as journal_api
from casino.audit import views as journal_views
from casino.exports import api as export_api
from casino.exports import views as export_views
from casino.ops import health, metrics
from casino.web.schema_views import CachedSchemaView
from seances import api as seances_api
from seances.rosters import api as roster_api
from seances.spins import api as spin_api
from tables import api as tables_api
from tables.games import api as game_api
from tables.games import views as game_views

router = DefaultRouter()
router.register("casinos", casino_api.CasinoViewSet, basename="casino")
router.register("employees", casino_api.EmployeeViewSet, basename="employee")
router.register("account-changes", accounts_api.AccountChangeViewSet, basename="account-change")
router.register("passkeys", accounts_api.PasskeyViewSet, basename="passkey")
router.register("apparatus", tables_api.ApparatusViewSet, basename="apparatus")
router.register("tables", tables_api.TableViewSet, basename="table")
router.register("tableaux", tables_api.TableauViewSet, basename="tableau")
router.register("cashboxes", tables_api.CashboxViewSet, basename="cashbox")
router.register("seances", seances_api.SeanceViewSet, basename="seance")
router.register("openings", seances_api.OpeningViewSet, basename="opening")
router.register("rosters", roster_api.RosterViewSet, basename="roster")
router.register("spins", spin_api.SpinViewSet, basename="spin")
router.register("announcements", spin_api.AnnouncementViewSet, basename="announcement")
router.register("pushed-back-stakes", spin_api.PushedBackStakeViewSet, basename="pushed-back-stake")
router.register("advances", cashbox_api.AdvanceViewSet, basename="advance")
router.register("counts", cashbox_api.CountViewSet, basename="count")
router.register("interruptions", cashbox_api.InterruptionViewSet, basename="interruption")
router.register("corrections", cashbox_api.CorrectionViewSet, basename="correction")
router.register("carnets", cashbox_api.CarnetViewSet, basename="carnet")
router.register("control-registers", cashbox_api.ControlRegisterViewSet, basename="control-register")
router.register("register-amendments", cashbox_api.RegisterAmendmentViewSet, basename="register-amendment")
router.register("deputies", cashbox_api.DeputyViewSet, basename="deputy")
router.register("observations", books_api.ObservationViewSet, basename="observation")
router.register("alerts", cashbox_api.AlertViewSet, basename="alert")
# The regulator's API (R23): the journal and the signed exports; the seals are at /api/v1/seals/.
router.register("journal", journal_api.JournalViewSet, basename="journal-entry")
router.register("exports", export_api.ExportViewSet, basename="export")

urlpatterns = [
    # The home page and the floor read every app: they live above them, in floor/.
    path("", include("floor.urls")),
    path("favicon.ico", views.FaviconView.as_view(), name="favicon"),
    path("connexion/", auth.LoginView.as_view(), name="login"),
    path("sante/", health.HealthView.as_view(), name="health"),
    # For the operator's Prometheus only: a bearer of METRICS_TOKEN, 404 for anyone else (casino/ops/metrics.py).
    path("metrics/", metrics.metrics_view, name="metrics"),
    path("connexion/verification/", auth.otp_verify, name="otp-verify"),
    path("connexion/double-authentification/", auth.otp_setup, name="otp-setup"),
    path("deconnexion/", auth_views.LogoutView.as_view(), name="logout"),
    path("registre/", include("tables.urls")),
    path("seances/", include("seances.urls")),
    path("seances/", include(books_urls.seance_patterns)),
    path("roulement/", include("seances.rosters.urls")),
    path("coups/", include("seances.spins.urls")),
    path("caisse/", include("cashbox.urls")),
    path("caisse/", include(books_urls.register_patterns)),
    path("livres/", include("books.urls")),
    path("personnel/", views.EmployeeListView.as_view(), name="employee-list"),
    path("personnel/nouveau/", views.EmployeeCreateView.as_view(), name="employee-create"),
    path("personnel/<int:pk>/", views.EmployeeDetailView.as_view(), name="employee-detail"),
    path("personnel/<int:pk>/modifier/", views.EmployeeUpdateView.as_view(), name="employee-update"),
    path(
        "personnel/<int:pk>/code-activation/",
        accounts_views.IssueActivationCodeView.as_view(),
        name="employee-activation-code",
    ),
    path(
        "personnel/<int:pk>/reinitialiser-double-authentification/",
        accounts_views.ProposeSecondFactorResetView.as_view(),
        name="employee-second-factor-reset",
    ),
    path(
        "personnel/<int:pk>/reinitialiser-mot-de-passe/",
        accounts_views.ProposePasswordResetView.as_view(),
        name="employee-password-reset",
    ),
    path("activation/", accounts_views.ActivationView.as_view(), name="activation"),
    path("activation/double-authentification/", accounts_views.ActivationOTPView.as_view(), name="activation-otp"),
    path("compte/cles/", passkey_views.MyKeysView.as_view(), name="passkeys-mine"),
    path("personnel/cles/", passkey_views.DirectionKeysView.as_view(), name="passkeys-direction"),
    path("personnel/propositions/", accounts_views.AccountChangeListView.as_view(), name="account-change-list"),
    path(
        "personnel/propositions/<int:pk>/",
        accounts_views.AccountChangeDetailView.as_view(),
        name="account-change-detail",
    ),
    path("etablissements/<int:pk>/", views.CasinoDetailView.as_view(), name="casino-detail"),
    path("etablissements/<int:pk>/modifier/", views.CasinoUpdateView.as_view(), name="casino-update"),
    path("alertes/<int:pk>/acquitter/", views.AcknowledgeAlertView.as_view(), name="alert-acknowledge"),
    path("journal/", journal_views.JournalView.as_view(), name="journal"),
    path("journal/verification/", journal_views.ChainCheckView.as_view(), name="journal-check"),
    path("exports/", export_views.ExportListView.as_view(), name="export-list"),
    path("exports/<int:pk>/", export_views.ExportDetailView.as_view(), name="export-detail"),
    path("exports/<int:pk>/etat/", export_views.ExportProgressView.as_view(), name="export-progress"),
    path("exports/<int:pk>/relancer/", export_views.ExportRetryView.as_view(), name="export-retry"),
    path("exports/<int:pk>/telecharger/", export_views.ExportDownloadView.as_view(), name="export-download"),
    path("exports/cles/<int:pk>.pem", export_views.PublicKeyView.as_view(), name="export-public-key"),
    path("exports/scellements/", export_views.SealListView.as_view(), name="seal-list"),
    path("jeux/", game_views.games_page, name="games"),
    path("jeux/regler/", game_views.settle_page, name="games-settle"),
    path("compte/jetons/", auth.tokens_page, name="account-tokens"),
    path("api/v1/auth/token/", auth.TokenView.as_view(), name="api-token"),
    path("api/v1/auth/tokens/", auth.TokenListView.as_view(), name="api-token-list"),
    path("api/v1/auth/tokens/<str:key>/revoke/", auth.TokenRevokeView.as_view(), name="api-token-revoke"),
    path("api/v1/seals/", casino_api.SealListView.as_view(), name="api-seals"),
    path("api/v1/seals/files/<int:casino>/", casino_api.SealFileListView.as_view(), name="api-seal-files"),
    path("api/v1/seals/files/<int:casino>/<str:day>/", casino_api.SealFileView.as_view(), name="api-seal-file"),
    path("api/v1/games/<str:game>/settle/", game_api.SettleView.as_view(), name="api-settle"),
    path("api/v1/prelevements/<int:season>/<int:n>/", books_api.LevySheetView.as_view(), name="api-levy-sheet"),
    path("api/v1/situations/<int:year>/<int:month>/", books_api.StatementView.as_view(), name="api-statement"),
    path(
        "api/v1/situations/<int:year>/<int:month>/sign/options/",
        books_api.StatementOptionsView.as_view(),
        name="api-statement-sign-options",
    ),
    path("api/v1/apparatus/<int:pk>/check-stakes/", seances_api.CheckStakesView.as_view(), name="api-check-stakes"),
    path("api/v1/apparatus/<int:pk>/rien-ne-va-plus/", spin_api.AnnounceView.as_view(), name="api-announce"),
    path(
        "api/v1/apparatus/<int:pk>/pushed-back-stakes/",
        spin_api.PushBackStakeView.as_view(),
        name="api-push-back-stake",
    ),
    path(
        "api/v1/apparatus/<int:pk>/statistics/",
        spin_api.ApparatusStatisticsView.as_view(),
        name="api-apparatus-statistics",
    ),
    # Namespaced: the router's names ("apparatus-detail", …) would otherwise shadow the pages' names, and
    # get_absolute_url() and every {% url %} of the pages would lead to the API.
    path("api/v1/", include((router.urls, "api"))),
    # The API's map is for the casino's staff, not for anyone who reaches the server (ASVS 14.3).
    path("api/schema/", CachedSchemaView.as_view(permission_classes=[RolePermission]), name="api-schema"),
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", permission_classes=[RolePermission]),
        name="api-docs",
    ),
    path("admin/", admin.site.urls),
]
