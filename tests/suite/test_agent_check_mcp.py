"""MCP tools as teams use them (issue 22, items 5 and 6): a stdio MCP server started from
an agent factory works under ``check --agent`` (the command line's stderr has a real
file descriptor, and what the server writes there is passed on redacted), and an MCP
tool's result reaches the model under the contract as its text, as a plain
``create_agent`` shows it (not the JSON of LangChain's content blocks with a random
``lc_<uuid>`` each)."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agent_contract.app.cli import main
from agent_contract.app.redacting import RedactingStream

pytestmark = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")

SERVER = '''
import sys

from mcp.server.fastmcp import FastMCP

print("orders server ready, key sk-server0a1b2c3d4e5f6a7b8c9d", file=sys.stderr, flush=True)
server = FastMCP("orders")


@server.tool()
def order_status(order_id: str) -> str:
    """The status of one order."""
    return f"order {order_id}: shipped"


if __name__ == "__main__":
    server.run()
'''

FACTORY = '''
import asyncio
import os
import sys

from langchain.agents import create_agent
from langchain_mcp_adapters.client import MultiServerMCPClient

from agent_contract import Budget, Contract
from agent_contract_langchain import ContractMiddleware, from_langchain_tool

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "orders_server.py")
_TOOLS = []
STARTS = []


def load_tools():
    """The server's tools, listed once per process over stdio (the MCP client starts
    the server with the process's stderr as the server's)."""
    if not _TOOLS:
        client = MultiServerMCPClient(
            {"orders": {"command": sys.executable, "args": [SERVER], "transport": "stdio"}}
        )
        _TOOLS.extend(asyncio.run(client.get_tools()))
        STARTS.append(1)
    return list(_TOOLS)


def build(model):
    tools = load_tools()
    contract_mw = ContractMiddleware(
        Contract(
            [from_langchain_tool(t, effect="read", timeout_seconds=2.0) for t in tools],
            budget=Budget(max_model_steps=6, max_tool_calls=3, max_identical_calls=2),
        )
    )
    return create_agent(model, tools=tools, middleware=contract_mw.around())
'''


@pytest.fixture
def mcp_team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``mcp_team`` (the factory above) and its stdio server script, importable."""
    (tmp_path / "orders_server.py").write_text(SERVER, encoding="utf-8")
    (tmp_path / "mcp_team.py").write_text(FACTORY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "mcp_team", raising=False)
    return tmp_path


def test_the_cli_stderr_has_a_real_descriptor_and_redacts_a_child_process() -> None:
    target = io.StringIO()
    stream = RedactingStream(target, ["hunter2-secret-value"])
    code = textwrap.dedent(
        """
        import sys
        sys.stderr.write("child says hunter2-secret-value and sk-abcdefghijklmnopqrstu\\n")
        """
    )
    subprocess.run([sys.executable, "-c", code], stderr=stream.fileno(), check=True)
    stream.write("parent line\n")
    stream.close()
    text = target.getvalue()
    assert "child says" in text
    assert "parent line" in text
    assert "hunter2-secret-value" not in text
    assert "sk-abcdefghijklmnopqrstu" not in text
    stream.write("after close\n")  # still usable
    stream.flush()
    assert target.getvalue().endswith("after close\n")


def test_a_stdio_mcp_server_started_from_the_factory_works_under_check(mcp_team: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", "--agent", "mcp_team:build", "--mode", "ainvoke"], out=out, err=err)
    report, log = out.getvalue(), err.getvalue()
    assert "fileno" not in log, log
    assert code == 0, report + log
    assert "its tools: order_status (read)" in report
    assert "valid_call" in report
    assert "orders server ready" in log  # the server's stderr reached ours...
    assert "sk-server0a1b2c3d4e5f6a7b8c9d" not in log  # ... redacted
    assert sys.modules["mcp_team"].STARTS == [1]


def _tool_messages(graph: Any, config: dict[str, Any]) -> list[Any]:
    out = asyncio.run(graph.ainvoke({"messages": [{"role": "user", "content": "hi"}]}, config))
    return [m.content for m in out["messages"] if m.type == "tool"]


def test_an_mcp_result_reaches_the_model_as_its_text_under_the_contract(mcp_team: Path) -> None:
    import mcp_team as team  # type: ignore[import-not-found]
    from langchain.agents import create_agent

    from agent_contract import Contract
    from agent_contract.testing import FakeModel, tool_call
    from agent_contract_langchain import ContractMiddleware, contract_config, from_langchain_tool
    from agent_contract_langchain.chat_model import ContractChatModel

    tools = team.load_tools()

    def model() -> ContractChatModel:
        script = [tool_call("order_status", {"order_id": "A-1"}, id="c1"), "done"]
        return ContractChatModel(model=FakeModel(script))

    plain = _tool_messages(create_agent(model(), tools=tools), {})
    (blocks,) = plain
    assert [b["text"] for b in blocks] == ["order A-1: shipped"]  # LangChain's blocks
    assert blocks[0]["id"].startswith("lc_")
    contract_mw = ContractMiddleware(
        Contract([from_langchain_tool(t, effect="read") for t in tools])
    )
    graph = create_agent(model(), tools=tools, middleware=contract_mw.around())
    config = contract_config(contract_mw.contract.start(), {})
    assert _tool_messages(graph, config) == ["order A-1: shipped"]


def test_a_content_block_list_keeps_its_shape_without_the_random_ids() -> None:
    from agent_contract_langchain.messages import tool_message_value

    image = {"type": "image", "url": "https://example.invalid/a.png", "id": "lc_1234"}
    text = {"type": "text", "text": "caption", "id": "lc_5678"}
    assert tool_message_value([image, text]) == [
        {"type": "image", "url": "https://example.invalid/a.png"},
        {"type": "text", "text": "caption"},
    ]
    assert tool_message_value(["mug", "tee"]) == ["mug", "tee"]  # a plain list stays
    assert tool_message_value("text") == "text"
    assert tool_message_value([]) == []
