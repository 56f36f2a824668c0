from django.urls import path

from cashbox import views
from casino.web import converters  # noqa: F401 - registers <date:…>

urlpatterns = [
    path("tableaux/<int:pk>/avance/", views.AdvanceView.as_view(), name="advance-create"),
    path("tableaux/<int:pk>/comptage-final/", views.FinalCountView.as_view(), name="final-count-create"),
    path(
        "tableaux/<int:pk>/interruption-momentanee/", views.ShortInterruptionView.as_view(), name="interruption-short"
    ),
    path("tableaux/<int:pk>/interruption-comptage/", views.FullInterruptionView.as_view(), name="interruption-full"),
    path("interruptions/<int:pk>/reprise/", views.ResumeView.as_view(), name="interruption-resume"),
    path("corrections/<str:kind>/<int:pk>/", views.CorrectionView.as_view(), name="correction-create"),
    path("carnets/<int:pk>/", views.CarnetView.as_view(), name="carnet"),
    path("registres/", views.RegisterListView.as_view(), name="register-list"),
    path("registres/<date:date>/", views.RegisterView.as_view(), name="register-day"),
]
