"""Dataset pages, added to compare's URLs (namespace `compare`)."""

from django.urls import path

from . import views

urlpatterns = [
    path("w/<int:pk>/datasets/", views.dataset_list, name="datasets"),
    path("w/<int:pk>/datasets/preview/", views.dataset_preview, name="dataset_preview"),
    path("w/<int:pk>/datasets/import/", views.dataset_import, name="dataset_import"),
    path("datasets/<int:pk>/", views.dataset_detail, name="dataset"),
    path("datasets/<int:pk>/rename/", views.dataset_rename, name="dataset_rename"),
    path("datasets/<int:pk>/delete/", views.dataset_delete, name="dataset_delete"),
    path("datasets/<int:pk>/rows/", views.dataset_row_add, name="dataset_row_add"),
    path("datasets/<int:pk>/rows/<int:position>/", views.dataset_row_save, name="dataset_row_save"),
    path("datasets/<int:pk>/rows/<int:position>/delete/", views.dataset_row_delete, name="dataset_row_delete"),
]
