"""``--otel console|otlp`` on ``run`` and ``check`` (issue 26): the exporter set-up of
:mod:`agent_contract.app.telemetry`, spans on stderr or at an OTLP/HTTP endpoint on
127.0.0.1, stdout unchanged, the missing extra refused with exit 4.

Most tests inject the sink the CLI builds through the set-up's sink factory
(``telemetry._otel_sink_class``): a small sink that ends one span per trace event (named
``event.<type>``, with the run id and seq), so they prove the CLI's wiring and export
path whatever sink turns events into spans; the last one runs the real ``OTelSink``
(its span tree is tested in ``tests/trace/test_otel.py``).
"""

from __future__ import annotations

import io
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agent_contract import exitcodes
from agent_contract.app import cli, telemetry
from agent_contract.errors import ConfigurationError
from agent_contract.trace import TraceEvent

CALC = "calculate 12 * (3 + 2)"
REAL_SINK_CLASS = telemetry._otel_sink_class
"""The set-up's own factory (``OTelSink``), before the fixture replaces it."""


class SpanPerEvent:
    """A stand-in for the OpenTelemetry sink: one ended span per event."""

    def __init__(self, provider: Any) -> None:
        self.tracer = provider.get_tracer("test-sink")

    def emit(self, run_id: str, event: TraceEvent) -> None:
        span = self.tracer.start_span(
            f"event.{event.type}",
            attributes={"agent_contract.run_id": run_id, "agent_contract.seq": event.seq},
        )
        span.end()


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's data folder in tmp, the test sink as the CLI's, no OTel variables
    from the environment."""
    monkeypatch.setenv("AGENT_CONTRACT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(telemetry, "_otel_sink_class", SpanPerEvent)
    for name in ("OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPORTER_OTLP_HEADERS"):
        monkeypatch.delenv(name, raising=False)


def invoke(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def console_spans(text: str) -> tuple[list[dict[str, Any]], str]:
    """The JSON spans the ConsoleSpanExporter wrote into ``text``, and the rest of it."""
    decoder = json.JSONDecoder()
    spans: list[dict[str, Any]] = []
    rest: list[str] = []
    index = 0
    while index < len(text):
        start = text.find("{", index)
        if start < 0:
            rest.append(text[index:])
            break
        rest.append(text[index:start])
        value, index = decoder.raw_decode(text, start)
        spans.append(value)
    return spans, "".join(rest)


def test_run_otel_console_writes_one_span_per_event_to_stderr_and_leaves_stdout_alone() -> None:
    code, plain_out, plain_err = invoke("run", CALC)
    assert (code, plain_err) == (0, "")
    code, out, err = invoke("run", CALC, "--otel", "console")
    assert code == 0
    assert out == plain_out
    spans, rest = console_spans(err)
    assert rest.strip() == ""
    code, traced_out, traced_err = invoke("run", CALC, "--trace", "--otel", "console")
    trace = [json.loads(line) for line in traced_out.splitlines() if line.startswith('{"')]
    spans, _ = console_spans(traced_err)
    assert trace, "the --trace output holds the run's events"
    assert [s["name"] for s in spans] == [f"event.{e['type']}" for e in trace]
    assert [s["attributes"]["agent_contract.seq"] for s in spans] == [e["seq"] for e in trace]
    assert {s["resource"]["attributes"]["service.name"] for s in spans} == {"agent-contract"}


def test_otel_service_name_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SERVICE_NAME", "refunds-agent")
    _, _, err = invoke("run", CALC, "--otel", "console")
    spans, _ = console_spans(err)
    assert {s["resource"]["attributes"]["service.name"] for s in spans} == {"refunds-agent"}


class Collector:
    """An OTLP/HTTP trace endpoint on 127.0.0.1 keeping each request's spans."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, ExportTraceServiceRequest]] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                collector.requests.append((self.path, request))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def endpoint(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def spans(self) -> list[tuple[dict[str, Any], Any]]:
        """``(resource attributes, span)`` for every span received."""
        found = []
        for _, request in self.requests:
            for resource_spans in request.resource_spans:
                resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                for scope in resource_spans.scope_spans:
                    found.extend((resource, span) for span in scope.spans)
        return found

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def collector() -> Iterator[Collector]:
    running = Collector()
    yield running
    running.close()


def test_run_otel_otlp_exports_to_the_endpoint_named_by_the_environment(
    collector: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, plain_out, _ = invoke("run", CALC)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint)
    code, out, err = invoke("run", CALC, "--trace", "--otel", "otlp")
    assert code == 0
    assert err == ""  # nothing on stderr: the spans went to the collector
    trace = [json.loads(line) for line in out.splitlines() if line.startswith('{"')]
    assert out.startswith(plain_out)
    assert {path for path, _ in collector.requests} == {"/v1/traces"}
    spans = collector.spans()
    assert sorted(span.name for _, span in spans) == sorted(f"event.{e['type']}" for e in trace)
    assert {resource["service.name"] for resource, _ in spans} == {"agent-contract"}


def test_check_otel_console_exports_the_scenarios_runs() -> None:
    code, plain_out, _ = invoke("check", "--harness", "offline", "--quiet")
    assert code == 0
    code, out, err = invoke("check", "--harness", "offline", "--quiet", "--otel", "console")
    assert code == 0
    assert out == plain_out
    spans, rest = console_spans(err)
    assert rest.strip() == ""
    runs = {s["attributes"]["agent_contract.run_id"] for s in spans}
    assert len(runs) > 10  # one run per scenario at least (and the reference's)
    assert any(s["name"] == "event.stop" for s in spans)


def test_check_agent_otel_console_exports_the_probes_runs(tmp_path: Path) -> None:
    factory = tmp_path / "otel_probe_agent.py"
    factory.write_text(
        "from langchain.agents import create_agent\n"
        "from langchain_core.tools import tool\n\n"
        "@tool\n"
        "def lookup(order_id: str) -> str:\n"
        '    """Look an order up."""\n'
        "    return order_id\n\n"
        "def build(model):\n"
        "    return create_agent(model, tools=[lookup])\n",
        encoding="utf-8",
    )
    argv = ("check", "--agent", "otel_probe_agent:build", "--effect", "lookup=read", "--quiet")
    sys.path.insert(0, str(tmp_path))
    try:
        plain_code, plain_out, _ = invoke(*argv)
        code, out, err = invoke(*argv, "--otel", "console")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("otel_probe_agent", None)
    # the bare agent breaks boundaries (no ContractMiddleware): the same report either way
    assert code == plain_code == exitcodes.EXIT_CONTRACT_VIOLATION
    assert out == plain_out
    assert "agent: otel_probe_agent:build" in out
    spans, rest = console_spans(err)
    assert rest.strip() == ""
    assert len({s["attributes"]["agent_contract.run_id"] for s in spans}) > 1


def test_otel_without_the_extra_is_dependency_missing_before_anything_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # import fails
    for argv in (
        ("run", CALC, "--otel", "console"),
        ("check", "--harness", "offline", "--otel", "otlp"),
    ):
        code, out, err = invoke(*argv)
        assert code == exitcodes.EXIT_DEPENDENCY_MISSING
        assert out == ""
        assert "agent-contract[otel]" in err
        assert "--otel needs the otel extra" in err


def test_otel_takes_console_or_otlp_only() -> None:
    code, out, err = invoke("run", CALC, "--otel", "jaeger")
    assert code == exitcodes.EXIT_USAGE
    assert out == ""
    assert "--otel" in err


def test_the_set_up_returns_the_provider_and_a_shutdown_that_flushes_once() -> None:
    stream = io.StringIO()
    provider, shutdown = telemetry.tracer_provider("console", stream=stream)
    provider.get_tracer("t").start_span("one").end()
    assert json.loads(stream.getvalue())["name"] == "one"
    shutdown()
    shutdown()  # a second call does nothing
    provider.get_tracer("t").start_span("after").end()
    assert "after" not in stream.getvalue()
    with pytest.raises(ConfigurationError, match="console or otlp"):
        telemetry.tracer_provider("zipkin", stream=stream)


def test_exporting_shuts_the_provider_down_when_the_command_raises() -> None:
    stream = io.StringIO()
    used: list[SpanPerEvent] = []

    def command() -> None:
        with telemetry.exporting("console", stream=stream) as sink:
            if not isinstance(sink, SpanPerEvent):
                raise TypeError(f"not the injected sink: {sink!r}")
            used.append(sink)
            sink.tracer.start_span("kept").end()
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        command()
    assert json.loads(stream.getvalue())["name"] == "kept"
    used[0].tracer.start_span("after").end()  # the provider was shut down: not exported
    assert "after" not in stream.getvalue()
    with telemetry.exporting(None, stream=stream) as nothing:
        assert nothing is None


def test_the_shutdown_closes_the_sink_before_the_provider() -> None:
    stream = io.StringIO()
    order: list[str] = []

    class Closing(SpanPerEvent):
        def close(self) -> None:
            self.tracer.start_span("closed").end()  # still exported: the provider is up
            order.append("close")

    sink, shutdown = telemetry.otel_sink("console", stream=stream, factory=Closing)
    assert isinstance(sink, Closing)
    shutdown()
    assert order == ["close"]
    assert json.loads(stream.getvalue())["name"] == "closed"


def test_run_otel_console_with_the_real_sink_gives_one_span_tree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(telemetry, "_otel_sink_class", REAL_SINK_CLASS)
    _, plain_out, _ = invoke("run", CALC)
    code, out, err = invoke("run", CALC, "--otel", "console")
    assert (code, out) == (0, plain_out)
    spans, rest = console_spans(err)
    assert rest.strip() == ""
    names = sorted(s["name"] for s in spans)
    assert names == ["chat", "chat", "execute_tool calculator", "invoke_agent"]
    (root,) = [s for s in spans if s["name"] == "invoke_agent"]
    assert root["parent_id"] is None
    assert root["attributes"]["agent_contract.stop_reason"] == "answered"
    assert {s["context"]["trace_id"] for s in spans} == {root["context"]["trace_id"]}
    children = [s for s in spans if s is not root]
    assert {s["parent_id"] for s in children} == {root["context"]["span_id"]}
    (tool,) = [s for s in spans if s["name"] == "execute_tool calculator"]
    assert tool["attributes"]["gen_ai.tool.name"] == "calculator"
    assert tool["attributes"]["gen_ai.operation.name"] == "execute_tool"


@pytest.mark.parametrize("harness", ["offline", "langchain"])
@pytest.mark.parametrize("command", ["approve", "resume"])
def test_approve_and_resume_export_the_resumed_run(
    harness: str, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``approve --otel`` and ``resume --otel``: the resumed run is one span tree marked
    ``agent_contract.resumed``; stdout is the same as without ``--otel``. (``resume`` of a
    run paused for approval pauses it again, its write still waiting.)"""
    monkeypatch.setattr(telemetry, "_otel_sink_class", REAL_SINK_CLASS)
    code, out, _ = invoke(
        "run", "refund order A-1001", "--caller", "alice", "--harness", harness, "--json"
    )
    assert code == exitcodes.EXIT_CODES["pending_approval"]
    run_id = json.loads(out)["thread_id"]
    decide = ["--decision", "approve"] if command == "approve" else []
    code, out, err = invoke(command, run_id, *decide, "--json", "--otel", "console")
    wanted = "answered" if command == "approve" else "pending_approval"
    assert code == exitcodes.EXIT_CODES[wanted]
    assert json.loads(out)["stop_reason"] == wanted
    spans, rest = console_spans(err)
    assert rest.strip() == ""
    (root,) = [s for s in spans if s["parent_id"] is None]
    assert root["name"] == "invoke_agent"
    assert root["attributes"]["agent_contract.resumed"] is True
    assert root["attributes"]["agent_contract.stop_reason"] == wanted
    assert {s["context"]["trace_id"] for s in spans} == {root["context"]["trace_id"]}
    if command == "approve":
        (tool,) = [s for s in spans if s["name"].startswith("execute_tool refund")]
        assert tool["attributes"]["agent_contract.approval_state"] == "approve"
        assert tool["attributes"]["agent_contract.status"] == "success"
