from django.urls import path

from seances.spins import views

urlpatterns = [
    path("<int:pk>/", views.SpinEntryView.as_view(), name="spin-entry"),
    path("<int:pk>/statistiques/", views.SpinStatisticsView.as_view(), name="spin-statistics"),
]
