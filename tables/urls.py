from django.urls import path

from tables import views

urlpatterns = [
    path("", views.ApparatusListView.as_view(), name="apparatus-list"),
    path("appareils/nouveau/", views.ApparatusCreateView.as_view(), name="apparatus-create"),
    path("appareils/<int:pk>/", views.ApparatusDetailView.as_view(), name="apparatus-detail"),
    path("appareils/<int:pk>/modifier/", views.ApparatusUpdateView.as_view(), name="apparatus-update"),
    path("tables/", views.TableListView.as_view(), name="table-list"),
    path("tables/nouvelle/", views.TableCreateView.as_view(), name="table-create"),
    path("tables/<int:pk>/", views.TableDetailView.as_view(), name="table-detail"),
    path("tables/<int:pk>/modifier/", views.TableUpdateView.as_view(), name="table-update"),
    path("tableaux/", views.TableauListView.as_view(), name="tableau-list"),
    path("tableaux/nouveau/", views.TableauCreateView.as_view(), name="tableau-create"),
    path("tableaux/<int:pk>/", views.TableauDetailView.as_view(), name="tableau-detail"),
    path("tableaux/<int:pk>/modifier/", views.TableauUpdateView.as_view(), name="tableau-update"),
    path("caisses/", views.CashboxListView.as_view(), name="cashbox-list"),
    path("caisses/nouvelle/", views.CashboxCreateView.as_view(), name="cashbox-create"),
    path("caisses/<int:pk>/", views.CashboxDetailView.as_view(), name="cashbox-detail"),
]
