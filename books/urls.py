from django.urls import path

from books import views

urlpatterns = [
    path("observations/", views.ObservationListView.as_view(), name="observation-list"),
    path("observations/<int:pk>/", views.ObservationDetailView.as_view(), name="observation-detail"),
]
