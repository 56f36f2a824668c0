from django.urls import path

from seances.rosters import views

urlpatterns = [
    path("", views.RosterListView.as_view(), name="roster-list"),
    path("nouveau/", views.RosterCreateView.as_view(), name="roster-create"),
    path("rapport/", views.RosterReportView.as_view(), name="roster-report"),
    path("rapport.csv", views.RosterReportView.as_view(csv=True), name="roster-report-csv"),
    path("<int:pk>/", views.RosterDetailView.as_view(), name="roster-detail"),
    path("<int:pk>/deplacer/", views.RosterMoveView.as_view(), name="roster-move"),
    path("<int:pk>/tableau/", views.RosterTableauView.as_view(), name="roster-tableau"),
    path("<int:pk>/publier/", views.RosterPublishView.as_view(), name="roster-publish"),
    path("<int:pk>/changement/", views.RosterChangeView.as_view(), name="roster-change"),
    path("<int:pk>/imprimer/", views.RosterPrintView.as_view(), name="roster-print"),
]
