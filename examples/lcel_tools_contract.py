"""A keyless LCEL chain with a chat model bound to tools, and the contract.

``prompt | chat model bound to tools | parser``: the chat model is a scripted
``ContractChatModel`` (swap in any chat model with a key), bound to a ``@tool`` function
adopted unchanged with ``from_langchain_tool``; the parser hands the model's tool calls
to the contract, which validates them against the tool's JSON Schema, allowlists them,
runs the admitted ones under their timeout and answers each call by its id.

Usage::

    python examples/lcel_tools_contract.py

Output::

    {"id": "c1", "tool": "get_weather", "status": "success", "error": null, "content": "Oslo: sunny for 2 day(s)"}
    {"id": "c2", "tool": "get_weather", "status": "error", "error": "invalid_arguments", "content": null}
    {"id": "c3", "tool": "delete_all", "status": "error", "error": "unknown_tool", "content": null}
    tools run: 1 of 3 calls

Exit codes: 0 success; 4 a dependency (``langchain-core`` or the binding) is missing.
"""

from __future__ import annotations

import json
import sys
from typing import Any

EXIT_OK = 0
EXIT_DEPENDENCY_MISSING = 4


def main() -> int:
    """Run the chain once and print one JSON line per tool call; return the exit code."""
    try:
        from langchain_core.messages import AIMessage
        from langchain_core.prompts import ChatPromptTemplate
        from langchain_core.runnables import RunnableLambda
        from langchain_core.tools import tool

        from agent_contract import Budget, Contract
        from agent_contract.messages import Message
        from agent_contract.testing import FakeModel, tool_calls
        from agent_contract_langchain import ContractChatModel, from_langchain_tool
        from agent_contract_langchain.messages import ai_message_to_completion
    except ImportError as exc:
        print(f"dependency_missing: {exc}", file=sys.stderr)
        return EXIT_DEPENDENCY_MISSING

    ran: list[str] = []

    @tool
    def get_weather(city: str, days: int = 1) -> str:
        """The weather for a city, for a number of days."""
        ran.append(city)
        return f"{city}: sunny for {days} day(s)"

    contract = Contract(
        [from_langchain_tool(get_weather, effect="read", timeout_seconds=5.0)],
        budget=Budget(max_tool_calls=5),
    )
    # A scripted model (no key): one good call, one with a wrong type, one unknown tool.
    model = ContractChatModel(
        model=FakeModel(
            [
                tool_calls(
                    ("get_weather", {"city": "Oslo", "days": 2}, "c1"),
                    ("get_weather", {"city": 3}, "c2"),
                    ("delete_all", {}, "c3"),
                )
            ]
        )
    )
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You answer weather questions."), ("human", "{question}")]
    )

    def under_the_contract(message: AIMessage) -> list[dict[str, Any]]:
        """The parser: the contract judges the reply and answers every call by its id."""
        state = contract.start()
        state.check_before_model_call([Message(role="user", content="weather?")])
        verdict = state.accept_response(ai_message_to_completion(message))
        if verdict.shape == "final":
            return [{"answer": verdict.text}]
        plan = state.plan_tool_calls(verdict.calls)
        answers = []
        for planned in plan.calls:
            result = state.execute(planned)
            answers.append(
                {
                    "id": result.tool_call_id,
                    "tool": result.name,
                    "status": result.status,
                    "error": result.error_kind,
                    "content": result.content if result.status == "success" else None,
                }
            )
        return answers

    chain = prompt | model.bind_tools([get_weather]) | RunnableLambda(under_the_contract)
    answers = chain.invoke({"question": "What is the weather in Oslo?"})
    for answer in answers:
        print(json.dumps(answer, ensure_ascii=False))
    print(f"tools run: {len(ran)} of {len(answers)} calls")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
