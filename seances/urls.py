from django.urls import path

from seances import views

urlpatterns = [
    path("", views.DayView.as_view(), name="day"),
    path("planifier/", views.PlanSeancesView.as_view(), name="seance-plan"),
    path("<int:pk>/", views.SeanceDetailView.as_view(), name="seance-detail"),
    path("<int:pk>/ouvrir/", views.SeanceTransitionView.as_view(target="open"), name="seance-open"),
    path("<int:pk>/fermer/", views.SeanceCloseView.as_view(), name="seance-close"),
    path("tableaux/<int:pk>/ouvrir/", views.OpeningCreateView.as_view(), name="opening-create"),
    path("ouvertures/<int:pk>/", views.OpeningDetailView.as_view(), name="opening-detail"),
    path("ouvertures/<int:pk>/affiche/", views.LimitsNoticeView.as_view(), name="opening-notice"),
]
