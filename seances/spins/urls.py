from django.urls import path

from seances.spins import views

urlpatterns = [
    path("<int:pk>/", views.SpinEntryView.as_view(), name="spin-entry"),
    path("<int:pk>/rien-ne-va-plus/", views.AnnounceView.as_view(), name="spin-announce"),
    path("<int:pk>/controle-mise/", views.CheckStakeView.as_view(), name="spin-check-stake"),
    path("<int:pk>/mise-repoussee/", views.PushBackStakeView.as_view(), name="spin-push-back"),
    path("<int:pk>/registre/", views.SpinRegisterView.as_view(), name="spin-register"),
    path("<int:pk>/statistiques/", views.SpinStatisticsView.as_view(), name="spin-statistics"),
]
