"""``run --model``: which model the demo agent runs on.

``--model demo`` (the default) is the deterministic :class:`~agent_contract.testing.DemoModel`;
``--model openai-compatible`` is :class:`~agent_contract.http_model.OpenAICompatibleModel`
pointed at ``--base-url`` (any OpenAI-compatible Chat Completions server: OpenAI, vLLM,
llama.cpp, LM Studio, or the kit's replay server). Its key comes from the environment
(``--api-key-env``, default ``OPENAI_API_KEY``), never from the command line, where
other users of the machine could read it; a local server (127.0.0.1, localhost) needs none.
"""

from __future__ import annotations

import argparse
import os
from typing import Final

from ..errors import ConfigurationError
from ..http_model import OpenAICompatibleModel
from ..model import Model
from ..testing import DemoModel

__all__ = ["MODEL_CHOICES", "MODEL_NAME_ENV", "add_model_arguments", "model_from_arguments"]

MODEL_CHOICES: Final = ("demo", "openai-compatible")
"""The values of ``run --model``."""
MODEL_NAME_ENV: Final = "AGENT_CONTRACT_MODEL_NAME"
"""The environment variable read for ``--model-name`` when it is not given."""
_DEFAULT_NAME: Final = "gpt-4o-mini"


def _seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
    if not number > 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be > 0 seconds")
    return number


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--model``, ``--base-url``, ``--model-name``, ``--api-key-env``,
    ``--model-timeout`` and ``--stream`` to ``parser``."""
    parser.add_argument(
        "--model",
        choices=MODEL_CHOICES,
        default="demo",
        help="the model the agent runs on (default: demo, the deterministic offline model)",
    )
    parser.add_argument(
        "--base-url",
        default=None,
        help="for --model openai-compatible: the API root, e.g. http://127.0.0.1:8000/v1 "
        "(default: https://api.openai.com/v1)",
    )
    parser.add_argument(
        "--model-name",
        default=None,
        help=f"for --model openai-compatible: the model name sent (default: ${MODEL_NAME_ENV}, "
        f"else {_DEFAULT_NAME})",
    )
    parser.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="for --model openai-compatible: the environment variable holding the key "
        "(default OPENAI_API_KEY; a local server needs none)",
    )
    parser.add_argument(
        "--model-timeout",
        type=_seconds,
        default=60.0,
        help="for --model openai-compatible: seconds a request may wait (default 60)",
    )
    parser.add_argument(
        "--stream",
        action="store_true",
        help="for --model openai-compatible: ask for a streamed reply (SSE)",
    )


def model_from_arguments(args: argparse.Namespace) -> Model:
    """The model ``args`` ask for (see the module doc).

    Raises:
        ConfigurationError: ``--base-url`` and friends without ``--model
            openai-compatible``, a bad ``--base-url``, or no key for a server that is not
            local.
    """
    if args.model == "demo":
        given = [
            flag
            for flag, value in (("--base-url", args.base_url), ("--model-name", args.model_name))
            if value is not None
        ]
        if args.stream:
            given.append("--stream")
        if given:
            raise ConfigurationError(
                f"{', '.join(given)} {'go' if len(given) > 1 else 'goes'} with --model openai-compatible"
            )
        return DemoModel()
    name = args.model_name or os.environ.get(MODEL_NAME_ENV) or _DEFAULT_NAME
    return OpenAICompatibleModel(
        name,
        base_url=args.base_url or "https://api.openai.com/v1",
        api_key_env=args.api_key_env,
        timeout=args.model_timeout,
        stream=args.stream,
    )
