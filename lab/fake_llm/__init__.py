"""A fake LLM server speaking the OpenAI, Anthropic and Gemini wire formats, for tests, benchmarks and demos.

Run it with `python -m lab.fake_llm --port 8765`, then point a connection at it: OpenAI-compatible, OpenAI,
OpenRouter or Anthropic at `http://127.0.0.1:8765/v1`, Gemini at `http://127.0.0.1:8765/v1beta`, any key.
The model name chooses the behaviour (see `scenario`): `fake?ttft_ms=300&tokens=60&token_ms=20`,
`fake?fault=429&fail_times=1&retry_after_ms=200`, `fake?fault=mid_stream`; a marker `[fake?tokens=80]` in the prompt
sets that answer's timing. `GET /_stats` shows the counters
(requests, completed, disconnected, faults, in flight and the most at once, per scenario); `POST /_reset`
clears them. `fake?refuse=temperature` answers 400 to a request that sets the temperature, `POST /_script`
queues exact replies for a scenario (see `script`), and `fake?hold=1` keeps each answer waiting until
`POST /_release {"model": …, "count": n}` lets the oldest n go.
"""
