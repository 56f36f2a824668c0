from django.urls import path

from seances.spins import views

urlpatterns = [
    path("<int:pk>/", views.SpinEntryView.as_view(), name="spin-entry"),
    path("<int:pk>/rien-ne-va-plus/", views.AnnounceView.as_view(), name="spin-announce"),
    path("<int:pk>/mise-repoussee/", views.PushBackStakeView.as_view(), name="spin-push-back"),
    path("<int:pk>/statistiques/", views.SpinStatisticsView.as_view(), name="spin-statistics"),
]
