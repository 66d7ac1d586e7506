"""Experiments: models × parameter sets × prompts × dataset rows from a file or a form, run as a custom comparison.

`config` reads and checks a file into the data classes of `spec`, `plan` expands it into the group's variants and
estimates it, `services` creates and starts it, `evaluation` scores each answer (through the scorer judging
registers), `runner` runs it in the calling process for the command line, `results` and `report` read and print it,
`export` writes it back.
"""
