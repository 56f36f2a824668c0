from django.urls import path

from sessions import spin_views as views

urlpatterns = [
    path("<int:pk>/", views.SpinEntryView.as_view(), name="spin-entry"),
    path("<int:pk>/statistiques/", views.SpinStatisticsView.as_view(), name="spin-statistics"),
]
