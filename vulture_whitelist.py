"""Names the dead-code check (vulture, `make lint`) cannot see used: each is read by name by a framework, a
template, a JSON consumer or the ORM. Conventions that hold everywhere (Meta and admin options, form and serializer
hooks, management commands, pytest's names) are `ignore_names` in pyproject.toml instead; migrations and settings
are not scanned. Add a name here only with the reason it is read; a name that is truly unused is deleted instead.

Not Python to run: vulture counts every name below as used.
"""

# Found by their dotted path in settings: app configs, middleware, allauth adapters, DRF authentication and
# permission, drf-spectacular's postprocessing hook, the 404 handler.
(CompareConfig, JudgingConfig, LabConfig, VotingConfig, BodyLimitMiddleware, AccountAdapter, SocialAccountAdapter)
(ApiTokenAuthentication, TokenScopeAllows, document_error_responses, not_found)
(LimitedPasswordBackend, PasswordLimitMiddleware, OutageMiddleware, Scheduler)

# Called by name by their base class or protocol: Django middleware, allauth, DRF, Channels, asyncio.Protocol,
# httpcore's network backend, channels_redis (lab/channel_layer.py), http.server and importlib in tests.
(process_exception, pre_social_login, authenticate_credentials, receive_json)
(connection_made, data_received, eof_received, connection_lost, pause_writing, resume_writing, connect_unix_socket)
(_brpop_with_clean, _clean_receive_backup, do_GET, do_POST, log_message, find_spec)
# Attributes and parameters a caller reads or passes by name: a Django widget's, drf-spectacular's hook arguments,
# a DRF renderer's.
(allow_multiple_selected, generator, public, accepted_media_type, renderer_context)
# A DRF exception's texts, read by its base class (lab/accounts/limits.py's 429).
(default_detail, extra_detail_singular, extra_detail_plural)

# Serializer fields: the API's input and output, read by DRF by name.
(baseline_answer, current_answer, answer_changed, baseline_html, current_html, regression, old_html, new_html)
(row_count, dry_run, temperature, top_p, top_k, presence_penalty, frequency_penalty, has_api_key, model_count)
(mean_score, minimum_decisive_per_pair, minimum_expected_wins, which_p_to_trust, only_with, few_matches, resamples)
(minimum_matches, rows_added, without_winner, chance_first, evidence, exclusion_reason, verbosity)
# Form fields of the experiment page (promptfoo's parameter names).
(topP, maxOutputTokens, other_models, evaluation_type, evaluator_prompt, output_format)
# …and the tool choices the build form offers, read by its template.
(output_mode, tool_choices)
# Model columns kept for the record, or read through the ORM by name (`values_list`, lookups, the job kind's
# `queued_since`); a choice that is only ever stored.
(pinned_by, pinned_at, accepted_by, excluded_by, requested_at, estimated_input_tokens, NON_TARGET, beating_since)
# Read by templates only.
(vars_json, round_number, last_number, is_winner, judge_cost, share_interval, kappa_interval, can_win)
(continuable, follow_up, parent_number)
(bar_start, bar_width, bar_point, answers_cost, answers_unpriced, judge_unpriced, heading)
# Serializer fields of the report's API.
(variant_figures,)
# Read by a serializer's `source` or a browser script (static/js/voting/inbox.js): blind mode's names and input.
(variant_label, own_prompts, input, timeout_step_ms)
# Twisted's HTTP channel hooks that promptlab/daphne_http.py overrides: Twisted calls them by name.
(_parsePOSTFormSubmission, requestFactory, lineLengthExceeded, _respondToBadRequestAndDisconnect)
# The fake LLM server's counters, read from its JSON stats; the end-to-end benchmark's parts, read by field name.
(completed, disconnected, to_first_call, to_done)

# Settings the tests set through pytest-django's `settings` fixture; fixtures asked for by name for their effect.
(CACHES, SOCIALACCOUNT_PROVIDERS, wide, openrouter)

# Fields of the realtime events' payload types (lab/events.py TypedDicts), read by key by the browser scripts and
# tests only.
(answers_total,)

# Workspace files: who uploaded (kept for the record), DRF's exception code, the test media root, a template tag.
(uploaded_by, default_code, MEDIA_ROOT, file_thumbs)
# Serializer fields of the conversation-vote and leaderboard APIs (voting/api/conversation_votes.py, reports.py).
(counting, turn_counting)

# Serializer fields of tools and tool results (compare/api/groups.py, conversations.py), read by DRF by name.
(tool_call_id,)
# The experiment averages' Wilson interval of the valid share, read by templates/compare/experiments/detail.html.
(valid_low, valid_high)
# Read by templates only: the pass-rate section's "anything graded yet" and each answer's assertion results
# (templates/compare/_pass_rates.html, _column.html).
(any_graded, assertion_list)
# Output.assertions_score: read by the API's output serializer by name.
(assertions_score,)
# Serializer fields of the conversation-vote and leaderboard APIs (voting/api/conversation_votes.py, reports.py).
(counting, turn_counting)
# The experiment build form's parameter fields, named as the file names them and read by Django's form machinery.
(topK, presencePenalty, frequencyPenalty, stopSequences)
# Workspace files: the uploader (kept for the record), DRF's exception code, the test media root, a template
# tag, a signal receiver.
(uploaded_by, default_code, MEDIA_ROOT, file_thumbs, bytes_deleted)
# The inbox's conversation fields (voting/api/inbox.py): serializer fields, and the attribute its output
# serializer reads by `source`.
(vote_choice, vote_output, earlier_answers)
