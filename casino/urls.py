from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.views import obtain_auth_token
from rest_framework.routers import DefaultRouter

from casino import api as casino_api
from casino import views
from tables import api as tables_api

router = DefaultRouter()
router.register("casinos", casino_api.CasinoViewSet, basename="casino")
router.register("employees", casino_api.EmployeeViewSet, basename="employee")
router.register("apparatus", tables_api.ApparatusViewSet, basename="apparatus")
router.register("tables", tables_api.TableViewSet, basename="table")
router.register("tableaux", tables_api.TableauViewSet, basename="tableau")
router.register("cashboxes", tables_api.CashboxViewSet, basename="cashbox")

urlpatterns = [
    path("", views.home, name="home"),
    path("connexion/", auth_views.LoginView.as_view(), name="login"),
    path("deconnexion/", auth_views.LogoutView.as_view(), name="logout"),
    path("registre/", include("tables.urls")),
    path("personnel/", views.EmployeeListView.as_view(), name="employee-list"),
    path("personnel/<int:pk>/", views.EmployeeDetailView.as_view(), name="employee-detail"),
    path("etablissements/<int:pk>/", views.CasinoDetailView.as_view(), name="casino-detail"),
    path("alertes/<int:pk>/acquitter/", views.AcknowledgeAlertView.as_view(), name="alert-acknowledge"),
    path("api/v1/auth/token/", obtain_auth_token, name="api-token"),
    path("api/v1/", include(router.urls)),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("admin/", admin.site.urls),
]
