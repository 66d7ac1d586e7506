"""Datasets: a workspace's named rows of variables that comparisons and experiments run over.

`rows` holds the limits and the rules every way of writing rows asks, `files` reads dataset files (CSV, JSON,
JSONL, YAML) into rows and previews an import, `services` the writes (create, import, rename, add, edit, delete
rows, delete; reuse the dataset of given rows), `round_rows` saves rounds as rows; `views`, `forms` and `urls` the
dataset pages. Reading them is in compare's `selectors`.
"""
