"""The prompt library: named prompts with numbered versions, their lineage, diffs and YAML import/export.

`models` the rows, `services` writes, `selectors` reads, `library` YAML import/export, `diff` and `picking`; `views`
and `urls` the library pages (and the comparison page's answer-diff partial).
"""
