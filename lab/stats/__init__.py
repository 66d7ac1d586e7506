"""Statistics for votes, judge scores, ratings and baseline checks: pure functions on plain data, no Django models.

Every app reports with these (voting's reports and leaderboards, judging's agreement, compare's experiment
categories and baseline checks). Most modules import SciPy or statsmodels at module level: import them where a
figure is computed, not from a module every process loads.
"""
