"""Voting pages, and the partials other pages fetch by URL: a round's vote panel, the report tab, judge agreement."""

from django.urls import path

from . import judge_views, prompt_views, round_row_views, views
from .inbox.views import inbox_page
from .reports.views import leaderboard_page, report_page
from .voters.views import voter_exclude_page, voter_readmit_page, voters_page

app_name = "voting"

urlpatterns = [
    path("votes/rounds/<int:pk>/panel/", views.vote_panel, name="panel"),
    path("votes/groups/<int:pk>/report/", views.report_tab, name="report"),
    path("votes/judges/<int:pk>/agreement/", judge_views.judge_agreement_partial, name="judge_agreement"),
    path("votes/groups/<int:pk>/rows/", round_row_views.rounds_to_rows, name="rounds_to_rows"),
    path("votes/prompts/<int:pk>/standing/", prompt_views.prompt_standing_partial, name="prompt_standing"),
    path("compare/<int:pk>/report/", report_page, name="report_page"),
    path("w/<int:pk>/leaderboard/", leaderboard_page, name="leaderboard"),
    path("w/<int:pk>/inbox/", inbox_page, name="inbox"),
    path("w/<int:pk>/voters/", voters_page, name="voters"),
    path("w/<int:pk>/voters/<int:user_id>/exclude/", voter_exclude_page, name="voter_exclude"),
    path("w/<int:pk>/voters/<int:user_id>/readmit/", voter_readmit_page, name="voter_readmit"),
]
