"""Background work as jobs of one lifecycle: rounds, verdicts and evaluations are each a registered kind.

A job row moves queued → running → finished (whatever the kind calls finished) by conditional UPDATE; a claim
sets a deadline and records the worker (workers.py); a readable reason goes on every failure; a dead worker's jobs
are taken back for a live one; one sweeper (run by beat itself) fails what outlived its deadline, re-sends what seems
lost and gives up on what no worker took; and one path enqueues a job once its transaction commits.
Every kind's model inherits one schema, the abstract `Job` of models.py (fields, constraint, index, transitions).
Kinds register here from their app's `ready()` (lab sits below every app, so it never imports them), and messages
go out by task name, so no module has to import a tasks module to enqueue.
"""
