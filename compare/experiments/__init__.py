"""Experiments: models × parameter sets × prompts × dataset rows from a file or a form, run as a custom comparison.

Reading a file: `config` checks it section by section (`reader` the shared readers, `read_combinations`,
`read_dataset`, `read_evaluation`, `files` for the files it names) into the data classes of `spec`.
Planning and writing: `plan` expands it into the group's variants, `estimate` what it will cost, `services` creates
and starts it, `budget` holds its cap call by call (and stops it there), `announce` tells its page, `models` its
rows, `jobs` its evaluation job kind, `receivers` evaluates a finished round.
Judging: `evaluation` scores each answer (through the scorer judging registers in `scoring`), `structured` checks a
structured answer. Reading back: `selectors` progress and spend, `results` the cells and averages, `naming` the
combinations' names, `costs` how costs read, `report` the command line's text, `export` a file that runs it again.
Baselines: `baseline` checks a run against an earlier one, `baseline_text` prints that, `run_baseline` checks a
comparison's dataset run the same way. `runner` runs it in the calling process for the command line.
Pages: `views` (list, new from a file or the form in `forms`, estimate, live page, export), `baseline_views` (a
run's baseline page), `urls` both.
"""
