from django.urls import path

from books import views

urlpatterns = [
    path("observations/", views.ObservationListView.as_view(), name="observation-list"),
    path("observations/<int:pk>/", views.ObservationDetailView.as_view(), name="observation-detail"),
    path("prelevements/", views.LevyIndexView.as_view(), name="levy-index"),
    path("prelevements/bareme/", views.LevyScheduleView.as_view(), name="levy-schedule"),
    path("prelevements/<int:season>/<int:n>/", views.LevySheetView.as_view(), name="levy-sheet"),
    path("situations/", views.StatementListView.as_view(), name="statement-list"),
    path("situations/<int:year>/<int:month>/", views.StatementView.as_view(), name="statement"),
]
