from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from books import api as books_api
from cashbox import api as cashbox_api
from casino import api as casino_api
from casino import auth, export_views, journal_views, views
from casino.permissions import RolePermission
from sessions import api as sessions_api
from sessions import roster_api
from tables import api as tables_api
from tables import game_api, game_views

router = DefaultRouter()
router.register("casinos", casino_api.CasinoViewSet, basename="casino")
router.register("employees", casino_api.EmployeeViewSet, basename="employee")
router.register("apparatus", tables_api.ApparatusViewSet, basename="apparatus")
router.register("tables", tables_api.TableViewSet, basename="table")
router.register("tableaux", tables_api.TableauViewSet, basename="tableau")
router.register("cashboxes", tables_api.CashboxViewSet, basename="cashbox")
router.register("seances", sessions_api.SeanceViewSet, basename="seance")
router.register("openings", sessions_api.OpeningViewSet, basename="opening")
router.register("rosters", roster_api.RosterViewSet, basename="roster")
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

urlpatterns = [
    path("", views.home, name="home"),
    path("connexion/", auth.LoginView.as_view(), name="login"),
    path("connexion/verification/", auth.otp_verify, name="otp-verify"),
    path("connexion/double-authentification/", auth.otp_setup, name="otp-setup"),
    path("deconnexion/", auth_views.LogoutView.as_view(), name="logout"),
    path("registre/", include("tables.urls")),
    path("seances/", include("sessions.urls")),
    path("roulement/", include("sessions.roster_urls")),
    path("caisse/", include("cashbox.urls")),
    path("livres/", include("books.urls")),
    path("personnel/", views.EmployeeListView.as_view(), name="employee-list"),
    path("personnel/nouveau/", views.EmployeeCreateView.as_view(), name="employee-create"),
    path("personnel/<int:pk>/", views.EmployeeDetailView.as_view(), name="employee-detail"),
    path("personnel/<int:pk>/modifier/", views.EmployeeUpdateView.as_view(), name="employee-update"),
    path("etablissements/<int:pk>/", views.CasinoDetailView.as_view(), name="casino-detail"),
    path("etablissements/<int:pk>/modifier/", views.CasinoUpdateView.as_view(), name="casino-update"),
    path("alertes/<int:pk>/acquitter/", views.AcknowledgeAlertView.as_view(), name="alert-acknowledge"),
    path("journal/", journal_views.JournalView.as_view(), name="journal"),
    path("journal/verification/", journal_views.ChainCheckView.as_view(), name="journal-check"),
    path("exports/", export_views.ExportListView.as_view(), name="export-list"),
    path("exports/<int:pk>/", export_views.ExportDetailView.as_view(), name="export-detail"),
    path("exports/<int:pk>/telecharger/", export_views.ExportDownloadView.as_view(), name="export-download"),
    path("exports/cles/<int:pk>.pem", export_views.PublicKeyView.as_view(), name="export-public-key"),
    path("jeux/", game_views.games_page, name="games"),
    path("jeux/regler/", game_views.settle_page, name="games-settle"),
    path("api/v1/auth/token/", auth.TokenView.as_view(), name="api-token"),
    path("api/v1/games/<str:game>/settle/", game_api.SettleView.as_view(), name="api-settle"),
    path("api/v1/prelevements/<int:season>/<int:n>/", books_api.LevySheetView.as_view(), name="api-levy-sheet"),
    path("api/v1/situations/<int:year>/<int:month>/", books_api.StatementView.as_view(), name="api-statement"),
    path("api/v1/apparatus/<int:pk>/check-stakes/", sessions_api.CheckStakesView.as_view(), name="api-check-stakes"),
    # Namespaced: the router's names ("apparatus-detail", …) would otherwise shadow the pages' names, and
    # get_absolute_url() and every {% url %} of the pages would lead to the API.
    path("api/v1/", include((router.urls, "api"))),
    # The API's map is for the casino's staff, not for anyone who reaches the server (ASVS 14.3).
    path("api/schema/", SpectacularAPIView.as_view(permission_classes=[RolePermission]), name="api-schema"),
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", permission_classes=[RolePermission]),
        name="api-docs",
    ),
    path("admin/", admin.site.urls),
]
