"""promptfoo configs (`promptfooconfig.yaml`) run unchanged on the lab's experiment engine.

`detect` tells a promptfoo config from the lab's own file; `translate` turns one into the lab's experiment data
(and keeps what only the promptfoo output needs: tests, columns, assertions); `prompts` reads prompts and
`templates` refuses Nunjucks beyond `{{ var }}`; `providers` maps provider ids to connections; `cases` reads tests,
vars and CSV; `connections` makes the runner's private connections from promptfoo's variables; `output` prints the
pass/fail table and writes promptfoo's JSON; `command` is what `manage.py experiment run` calls.
"""
