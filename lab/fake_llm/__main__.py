"""Command line: `python -m lab.fake_llm [--host 127.0.0.1] [--port 8765]` serves until interrupted."""

import argparse
import asyncio
import contextlib

from .server import FakeLLMServer, serve


async def main(host: str, port: int) -> None:
    listener = await serve(FakeLLMServer(), host, port)
    print(f"Fake LLM server on http://{host}:{port}: OpenAI and Anthropic at /v1, Gemini at /v1beta.", flush=True)
    async with listener:
        await listener.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m lab.fake_llm", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is the way to stop it
        asyncio.run(main(args.host, args.port))
