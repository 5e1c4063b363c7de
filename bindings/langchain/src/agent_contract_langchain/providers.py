"""Real chat models for the contract: ``ChatOpenAI`` pointed at any OpenAI-compatible
server (OpenAI, vLLM, llama.cpp, LM Studio, Ollama's ``/v1``, the kit's replay server).

:func:`build_chat_model` is the one helper: the chat model it returns goes wherever a
model does (``create_agent`` with the contract's middleware,
:func:`~agent_contract_langchain.harness.run_agent`, ``run_graph``), on every mode, and
one instance serves any number of runs, sync and async
(:func:`agent_contract.pools.run_async` keeps one event loop for every synchronous
``ainvoke``). It needs the binding's ``openai`` extra
(``pip install 'agent-contract-langchain[openai]'``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from agent_contract.errors import ConfigurationError, DependencyMissingError
from agent_contract.http_model import resolve_api_key
from agent_contract.pools import run_async

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI

__all__ = ["build_chat_model", "close_chat_model"]


def build_chat_model(
    model: str,
    *,
    base_url: str,
    api_key: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    timeout: float = 60.0,
    max_retries: int = 2,
    streaming: bool = False,
    temperature: float | None = 0.0,
    **options: Any,
) -> ChatOpenAI:
    """A ``ChatOpenAI`` talking to the OpenAI-compatible server at ``base_url``.

    The key is forgiving for local servers, strict elsewhere: ``api_key``, else the
    environment variable ``api_key_env``, else, only when ``base_url``'s host is this
    machine (127.0.0.1, localhost, ::1), a placeholder (local servers ignore the key and
    must not fail client construction). An empty key is refused.

    Args:
        model: the model name the server serves.
        base_url: the API root, e.g. ``http://127.0.0.1:8000/v1``.
        api_key: the key; None: see above.
        api_key_env: the environment variable read when ``api_key`` is None.
        timeout: seconds a request may take (the client's ``timeout``, > 0).
        max_retries: the client's own retries (429, 5xx, connection errors; >= 0).
        streaming: stream every reply (``invoke`` joins the chunks).
        temperature: sampling temperature; None leaves it to the server.
        **options: more ``ChatOpenAI`` fields (``max_tokens``, ``model_kwargs``, ...).

    Raises:
        DependencyMissingError: ``langchain-openai`` is not installed.
        ConfigurationError: no key for a server that is not local, an empty key, or a
            bad ``timeout`` / ``max_retries``.
    """
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as exc:
        raise DependencyMissingError(
            "agent-contract-langchain[openai]", "build_chat_model needs langchain-openai"
        ) from exc
    if timeout <= 0 or max_retries < 0:
        raise ConfigurationError("timeout must be > 0 seconds and max_retries >= 0")
    api_key = resolve_api_key(api_key, base_url, api_key_env)
    if temperature is not None:
        options["temperature"] = temperature
    return ChatOpenAI(
        model=model,
        base_url=base_url,
        api_key=SecretStr(api_key),
        timeout=timeout,
        max_retries=max_retries,
        streaming=streaming,
        **options,
    )


def close_chat_model(chat: Any) -> None:
    """Close the httpx clients a chat model was handed (``ChatOpenAI``'s
    ``http_client`` and ``http_async_client`` fields): the sync one at once, the async
    one on the process's run loop (:func:`agent_contract.pools.run_async`, where the
    binding's synchronous entry points run ``ainvoke``). Call it from synchronous code.

    A chat model built without its own clients is left alone: ``ChatOpenAI`` and
    ``ChatAnthropic`` then use their package's process-wide cached httpx client, shared by
    every instance with the same base URL and timeout, which closing would break for the
    others.
    """
    client = getattr(chat, "http_client", None)
    if client is not None and callable(getattr(client, "close", None)):
        client.close()
    aclient = getattr(chat, "http_async_client", None)
    if aclient is not None and callable(getattr(aclient, "aclose", None)):
        run_async(aclient.aclose())
