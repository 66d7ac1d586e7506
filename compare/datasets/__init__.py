"""Datasets: a workspace's named rows of variables that comparisons and experiments run over.

`files` reads dataset files (CSV, JSON, JSONL, YAML) into rows and previews an import, `services` the writes beyond
creation (import, rename, add, edit, delete rows, delete), `round_rows` saves rounds as rows; `views`, `forms` and
`urls` the dataset pages. Creating a dataset and the row limits stay in compare's `services` (a comparison's run
creates one too); reading them in `selectors`.
"""
