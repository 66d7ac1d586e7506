"""Rounds: a round's lifecycle on the worker's side, from its job kind to its finish.

`jobs` registers the `round` job kind with lab.jobs (task `compare.run_round`, defined in compare's `tasks`, where
Celery finds it); `dispatch` sends a round's message to its lane's path (`round_dispatch`); `execution` runs a
claimed round on the engine; `worker` claims it, records each answer and finishes or fails it readably; `batches`
claims and finishes many batch rounds together for one caller (the experiment command, or a worker process's
batch rounds through `dispatch`); `stops` is the batch rounds' one cancel poll. `start` is the user's side:
starting and cancelling rounds (`round_start`, `round_cancel`); a round's reads are in compare's `selectors`.
"""
