"""judging: judge configurations, the judge a comparison names, verdicts (LLM-as-judge) and experiment scoring.

Roles, by module name: `models` the rows; `services` writes, `selectors` reads, `access` the one way to reach a judge;
`views` the pages, `forms` their inputs, `api/` the REST API (judges, verdicts); `tasks` the Celery entry points,
`jobs` the verdict's job kind, `verdicts` the worker's side of a verdict, `receivers` judging a finished round. The
judging itself, free of the ORM: `rubric` (metrics, scales, weights), `prompts` (what the judge is asked), `calls`
(one judge call), `replies` (reading its reply), `judgement` (a set of answers judged and the winner), `pointwise`
(one answer scored), `classification` and `classify` (classification judges), `families` (a judge may not grade its
own family); `experiment_scoring` the scorer compare's experiments use.
"""
