"""compare: comparisons (groups of variants), their rounds and answers, datasets, the prompt library, experiments.

Roles, by module name: `models` the rows; `services` writes (`<entity>_<verb>`), `selectors` reads,
`page_selectors` reads for the pages; `access` the one way to reach an object; `blind` blind mode, written once;
`views` the comparison pages, `forms` their inputs; `api/` the REST API, one module per resource (groups, datasets,
prompts, experiments, baselines, run_baselines) with its In/Out serializers; `tasks` the Celery entry points;
`response_cache` the opt-in cache of complete answers; `consumers` and `routing` the websocket; `signals` what apps
above hear; `catalog` the models a comparison may use.

Packages by sub-domain, each saying what it owns in its docstring: `rounds/` (a round's lifecycle on the worker's
side), `datasets/` (files, writes, pages), `prompts/` (the library and its pages), `experiments/` (experiments,
baselines and their pages).
"""
