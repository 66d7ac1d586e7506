"""lab: what every app stands on: workspaces and roles, provider connections and adapters, the model catalog, prompt
templating, the run engine, background jobs and realtime broadcast, pure statistics.

Roles, by module name: `models` the rows (`roles` the role order); `services` writes, `access` the one way to reach a
workspace-scoped object; `views` the pages, `forms` their inputs, `api/` the REST API (`inputs` every input's base;
one module per resource with its In/Out serializers: workspaces, connections, tokens, invitations, audit); packages
`accounts/`, `audit/`, `invitations/`, `tokens/` with their own models, services and views. Shared parts: `engine/`
runs many answers at once, `providers/` one adapter per protocol, `jobs/` the one job lifecycle, `realtime` the one
broadcast helper and `events` the event names, `consumers` and `routing` the websockets, `catalog` the model catalog,
`templating`, `markdown`, `values` (what may be stored), `crypto`, `stats/` the pure statistics every app reports
with, `cancellation` (a cancel Python 3.11 lost, raised again); `fake_llm/` the local fake LLM server.
"""
