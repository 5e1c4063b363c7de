"""An OpenTelemetry trace sink: each run's events as spans, by the GenAI conventions.

:class:`OTelSink` is a :class:`~agent_contract.trace.TraceSink`: give it to
``Contract(trace_sink=OTelSink())`` and every run of that contract becomes one span tree,
exported by whatever the tracer provider is configured with (the console, OTLP to
Jaeger, Grafana, Logfire or LangSmith):

- ``invoke_agent`` (one per run, and one per child scope: a sub-agent's span is a child
  of the ``execute_tool`` span of the call that started it);
- ``chat`` (one per model call, from ``model_call`` to its ``model_response``);
- ``execute_tool {name}`` (one per tool call, from ``tool_call`` to its ``tool_result``).

Attributes follow the OpenTelemetry GenAI semantic conventions
(``gen_ai.operation.name``, ``gen_ai.agent.name``, ``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``gen_ai.usage.input_tokens`` / ``output_tokens`` when the model
reported them, ``gen_ai.response.finish_reasons``, ``error.type``), plus the contract's own
under ``agent_contract.*``: ``run_id``, ``stop_reason``, ``stop_detail``, ``paused``,
``resumed``, ``decision``, ``error_kind``, ``outcome``, ``side_effects_possible``,
``approval_state`` (``pending``, ``approve``, ``reject``, ``edit``), ``response_shape``,
``step``, ``call_path``. A contract stop other than an answer or a pause, a refused or
failed tool call, and an invalid or unfinished model reply set the span's status to
``ERROR`` with a description. Other events (violations, retries, rewritten arguments,
progress, approval requests) are span events on the span they belong to.

Every value comes from the event the sink receives, which the run has already redacted;
the tool call's arguments (``gen_ai.tool.call.arguments``) and the first characters of
its result (``gen_ai.tool.call.result``) are those redacted values too, as in the JSONL
trace.

A run span whose run starts while a span is current in the caller's context (a
framework's own instrumentation, a request handler's span) is that span's child, so the
contract's spans and the framework's land in one trace. A run that pauses for approval
ends its span (``agent_contract.paused = true``); its resume, in this process or another,
is a new ``invoke_agent`` span with ``agent_contract.resumed = true``. An event recorded
after its run's stop (``refused_after_stop``) is a span of its own,
``agent_contract.<type>``, ended at once. The sink keeps state
only for runs in progress and drops it at the run's stop; at most ``max_open_runs`` runs
are held, the oldest ended (``agent_contract.abandoned = true``) past that.

OpenTelemetry is an optional dependency: install ``agent-contract[otel]``. Only this
module imports it, when an :class:`OTelSink` is made.
"""

from __future__ import annotations

import importlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any, Final

from ..errors import PAUSE_REASONS, DependencyMissingError
from .events import TraceEvent

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider

__all__ = ["DESCRIPTION_CHARS", "EXTRA", "NAMESPACE", "OTelSink"]

EXTRA: Final = "agent-contract[otel]"
"""What to install for :class:`OTelSink`."""

NAMESPACE: Final = "agent_contract"
"""The prefix of the contract's own span attributes."""

DESCRIPTION_CHARS: Final = 500
"""Characters of a stop's detail an ERROR status description keeps."""

_INSTRUMENTATION: Final = "agent_contract"


def _otel() -> tuple[Any, Any]:
    """``(opentelemetry.trace, opentelemetry.context)``.

    Raises:
        DependencyMissingError: OpenTelemetry's API is not installed.
    """
    try:
        api = importlib.import_module("opentelemetry.trace")
        context = importlib.import_module("opentelemetry.context")
    except ImportError as exc:
        raise DependencyMissingError(
            EXTRA, f"OTelSink needs opentelemetry-api: cannot import {exc.name or exc}"
        ) from exc
    return api, context


def _version() -> str | None:
    """The installed agent-contract's version, or ``None`` when it is not installed."""
    try:
        return metadata.version("agent-contract")
    except metadata.PackageNotFoundError:
        return None


def _ns(event: TraceEvent) -> int:
    """The event's time in nanoseconds since the epoch (what span times are)."""
    return int(event.time.timestamp() * 1_000_000) * 1_000


def _attr(name: str) -> str:
    return f"{NAMESPACE}.{name}"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _scalar(value: Any) -> str | bool | int | float:
    """``value`` as an attribute value: a str, bool, int or float as it is, anything else
    as its JSON text."""
    if isinstance(value, str | bool | int | float):
        return value
    return _json(value)


def _event_attributes(fields: Mapping[str, Any]) -> dict[str, str | bool | int | float]:
    """A span event's attributes from an event's fields (``None`` and ``scope`` left out)."""
    return {
        _attr(key): _scalar(value)
        for key, value in fields.items()
        if value is not None and key != "scope"
    }


@dataclass
class _Scope:
    """The open spans of one scope of a run (the top agent, or a child scope)."""

    span: Span
    path: tuple[str, ...] = ()
    """The scope's call path (``()``: the top agent's)."""
    chat: Span | None = None
    tools: dict[str, Span] = field(default_factory=dict)
    children: list[tuple[str, ...]] = field(default_factory=list)
    """Call paths of the child scopes opened inside this scope's calls."""


@dataclass
class _Run:
    """The open spans of one run: its scopes by call path (``()``: the top agent)."""

    scopes: dict[tuple[str, ...], _Scope] = field(default_factory=dict)


class OTelSink:
    """A :class:`~agent_contract.trace.TraceSink` that turns each run's events into
    OpenTelemetry spans (see the module doc for the tree, names and attributes).
    Thread-safe.

    Args:
        tracer_provider: the provider whose tracer makes the spans; ``None``: the global
            one (``opentelemetry.trace.get_tracer_provider()``, also one set after this
            sink is made).
        max_open_runs: how many runs in progress the sink holds spans for (a run that
            never records its stop, because its process was torn down mid-run, would
            otherwise be held forever); past it, the oldest is ended, marked
            ``agent_contract.abandoned``.

    Raises:
        DependencyMissingError: (an ``ImportError``) OpenTelemetry is not installed:
            install ``agent-contract[otel]``.
        ValueError: ``max_open_runs`` is below 1.
    """

    def __init__(
        self, tracer_provider: TracerProvider | None = None, *, max_open_runs: int = 1_000
    ) -> None:
        if max_open_runs < 1:
            raise ValueError(f"max_open_runs must be at least 1, got {max_open_runs}")
        self._api, self._context = _otel()
        self._tracer: Tracer = self._api.get_tracer(
            _INSTRUMENTATION, _version(), tracer_provider=tracer_provider
        )
        self._max_open_runs = max_open_runs
        self._runs: OrderedDict[str, _Run] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def open_runs(self) -> int:
        """How many runs the sink holds spans for (runs started and not yet stopped)."""
        with self._lock:
            return len(self._runs)

    def emit(self, run_id: str, event: TraceEvent) -> None:
        """Open, annotate or end the spans ``event`` of run ``run_id`` calls for."""
        with self._lock:
            self._handle(run_id, event)

    def close(self) -> None:
        """End the spans of every run still open (marked ``agent_contract.abandoned``),
        and forget them; the sink can be used again after."""
        with self._lock:
            for run_id in list(self._runs):
                self._abandon(run_id)

    # -- dispatch --------------------------------------------------------------------------

    def _handle(self, run_id: str, event: TraceEvent) -> None:
        fields = event.fields
        scope = fields.get("scope")
        path: tuple[str, ...] = ()
        if isinstance(scope, Mapping):
            path = tuple(str(c) for c in scope.get("call_path") or ())
        kind = event.type
        if kind in ("run_started", "run_resumed") and not path:
            self._start_run(run_id, event, resumed=kind == "run_resumed")
            return
        run = self._runs.get(run_id)
        if run is None:  # after the run's stop (a framework asking for more), or unseen
            self._orphan(run_id, event)
            return
        if kind == "child_started":
            self._start_child(run, path, event)
            return
        target = self._scope(run, run_id, path, event)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, run, target, event)
        elif kind == "stop":
            self._stop(run_id, run, path, event)
        else:
            self._annotate(target, event)

    # -- runs and scopes -------------------------------------------------------------------

    def _start_run(self, run_id: str, event: TraceEvent, *, resumed: bool) -> _Run:
        if run_id in self._runs:  # a run id reused before its stop: end the old spans
            self._abandon(run_id)
        while len(self._runs) >= self._max_open_runs:
            self._abandon(next(iter(self._runs)))
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            _attr("run_id"): run_id,
        }
        offered = event.fields.get("tools_offered")
        if isinstance(offered, list):
            attributes[_attr("tools_offered")] = [str(name) for name in offered]
        budget = event.fields.get("budget")
        if isinstance(budget, Mapping):
            for key, value in budget.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    attributes[_attr(f"budget.{key}")] = value
        if resumed:
            attributes[_attr("resumed")] = True
        span = self._tracer.start_span(
            "invoke_agent",
            context=self._context.get_current(),
            kind=self._api.SpanKind.INTERNAL,
            attributes=attributes,
            start_time=_ns(event),
        )
        run = _Run(scopes={(): _Scope(span=span)})
        self._runs[run_id] = run
        return run

    def _orphan(self, run_id: str, event: TraceEvent) -> None:
        """An event of a run with no open span (recorded after its stop, or of a run
        this sink never saw start): a span of its own, ended at once, held nowhere."""
        attributes: dict[str, Any] = {_attr("run_id"): run_id, **_event_attributes(event.fields)}
        span = self._tracer.start_span(
            f"{NAMESPACE}.{event.type}",
            context=self._context.get_current(),
            kind=self._api.SpanKind.INTERNAL,
            attributes=attributes,
            start_time=_ns(event),
        )
        span.end(end_time=_ns(event))

    def _start_child(self, run: _Run, path: tuple[str, ...], event: TraceEvent) -> _Scope:
        agent = str(event.fields.get("agent") or "agent")
        parent = run.scopes.get(path[:-1]) or run.scopes[()]
        parent_span = parent.tools.get(path[-1], parent.span) if path else parent.span
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            _attr("call_path"): list(path),
        }
        offered = event.fields.get("tools_offered")
        if isinstance(offered, list):
            attributes[_attr("tools_offered")] = [str(name) for name in offered]
        span = self._tracer.start_span(
            f"invoke_agent {agent}",
            context=self._api.set_span_in_context(parent_span),
            kind=self._api.SpanKind.INTERNAL,
            attributes=attributes,
            start_time=_ns(event),
        )
        scope = _Scope(span=span, path=path)
        old = run.scopes.get(path)
        if old is not None:
            self._end_scope(old, event, reason=None)
        run.scopes[path] = scope
        if path and path not in parent.children:
            parent.children.append(path)
        return scope

    def _scope(self, run: _Run, run_id: str, path: tuple[str, ...], event: TraceEvent) -> _Scope:
        scope = run.scopes.get(path)
        if scope is None:  # a child whose child_started this sink never saw
            scope = self._start_child(run, path, event)
        return scope

    def _stop(self, run_id: str, run: _Run, path: tuple[str, ...], event: TraceEvent) -> None:
        reason = str(event.fields.get("reason") or "")
        detail = str(event.fields.get("detail") or "")
        if path:
            scope = run.scopes.pop(path, None)
            if scope is not None:
                for inner in list(scope.children):
                    self._end_child(run, inner, event)
                self._mark_stop(scope.span, reason, detail)
                self._end_scope(scope, event, reason=reason)
                parent = run.scopes.get(path[:-1])
                if parent is not None and path in parent.children:
                    parent.children.remove(path)
            return
        del self._runs[run_id]
        for child_path in sorted((p for p in run.scopes if p), key=len, reverse=True):
            self._end_scope(run.scopes[child_path], event, reason=reason)
        top = run.scopes[()]
        self._mark_stop(top.span, reason, detail)
        self._end_scope(top, event, reason=reason)

    def _mark_stop(self, span: Span, reason: str, detail: str) -> None:
        span.set_attribute(_attr("stop_reason"), reason)
        if detail:
            span.set_attribute(_attr("stop_detail"), detail)
        if reason in PAUSE_REASONS:
            span.set_attribute(_attr("paused"), True)
        elif reason != "answered":
            span.set_attribute("error.type", reason)
            text = f"{reason}: {detail}" if detail else reason
            self._error(span, text)

    def _end_scope(self, scope: _Scope, event: TraceEvent, *, reason: str | None) -> None:
        """End a scope's open spans and its own at ``event``'s time."""
        end = _ns(event)
        failed = reason is not None and reason != "answered" and reason not in PAUSE_REASONS
        if scope.chat is not None:
            if failed:
                scope.chat.set_attribute("error.type", str(reason))
                self._error(scope.chat, f"the run stopped during the model call: {reason}")
            scope.chat.end(end_time=end)
            scope.chat = None
        for span in scope.tools.values():
            if reason is not None:
                span.set_attribute(_attr("ended_by_stop"), reason)
            span.end(end_time=end)
        scope.tools.clear()
        scope.span.end(end_time=end)

    def _abandon(self, run_id: str) -> None:
        run = self._runs.pop(run_id)
        for path in sorted(run.scopes, key=len, reverse=True):
            scope = run.scopes[path]
            scope.span.set_attribute(_attr("abandoned"), True)
            for span in (scope.chat, *scope.tools.values()):
                if span is not None:
                    span.end()
            scope.chat = None
            scope.tools.clear()
            scope.span.end()

    def _error(self, span: Span, description: str) -> None:
        status = self._api.Status(self._api.StatusCode.ERROR, description[:DESCRIPTION_CHARS])
        span.set_status(status)

    # -- model calls -----------------------------------------------------------------------

    def _model_call(self, run: _Run, scope: _Scope, event: TraceEvent) -> None:
        if scope.chat is not None:  # a call with no response traced: ends at the next
            scope.chat.end(end_time=_ns(event))
        attributes: dict[str, Any] = {"gen_ai.operation.name": "chat"}
        step = event.fields.get("step")
        if isinstance(step, int):
            attributes[_attr("step")] = step
        scope.chat = self._tracer.start_span(
            "chat",
            context=self._api.set_span_in_context(scope.span),
            kind=self._api.SpanKind.CLIENT,
            attributes=attributes,
            start_time=_ns(event),
        )

    def _model_response(self, run: _Run, scope: _Scope, event: TraceEvent) -> None:
        span = scope.chat
        if span is None:  # a response with no call traced (a framework's own reply)
            self._model_call(run, scope, event)
            span = scope.chat
            if span is None:
                return
        fields = event.fields
        shape = str(fields.get("shape") or "")
        span.set_attribute(_attr("response_shape"), shape)
        calls = fields.get("tool_calls")
        if isinstance(calls, list):
            span.set_attribute(_attr("tool_calls"), len(calls))
        for name in ("input_tokens", "output_tokens"):
            value = fields.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                span.set_attribute(f"gen_ai.usage.{name}", value)
        finish = fields.get("finish_reason")
        if isinstance(finish, str):
            span.set_attribute("gen_ai.response.finish_reasons", [finish])
        if shape == "invalid":
            span.set_attribute("error.type", "invalid_response")
            if isinstance(fields.get("refusal"), str):
                why = f"the model refused: {fields['refusal']}"
            elif isinstance(finish, str):
                why = f"the model's reply is unfinished (finish reason {finish})"
            else:
                why = "the model's reply breaks the contract"
            self._error(span, why)
        elif shape == "refused_answer":
            span.set_attribute("error.type", "invalid_arguments")
            self._error(span, "the structured answer does not match its schema")
        span.end(end_time=_ns(event))
        scope.chat = None

    # -- tool calls ------------------------------------------------------------------------

    def _tool_span(self, scope: _Scope, event: TraceEvent) -> Span:
        fields = event.fields
        call_id = str(fields.get("id") or "")
        name = str(fields.get("name") or "")
        old = scope.tools.pop(call_id, None)
        if old is not None:  # the same id again in this scope (refused as a duplicate)
            old.end(end_time=_ns(event))
        span = self._tracer.start_span(
            f"execute_tool {name}",
            context=self._api.set_span_in_context(scope.span),
            kind=self._api.SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": call_id,
                "gen_ai.tool.type": "function",
            },
            start_time=_ns(event),
        )
        scope.tools[call_id] = span
        return span

    def _tool_call(self, run: _Run, scope: _Scope, event: TraceEvent) -> None:
        fields = event.fields
        span = self._tool_span(scope, event)
        decision = str(fields.get("decision") or "")
        span.set_attribute(_attr("decision"), decision)
        if "arguments" in fields:
            span.set_attribute("gen_ai.tool.call.arguments", _json(fields["arguments"]))
        if decision == "awaiting_approval":
            span.set_attribute(_attr("approval_state"), "pending")
        elif decision == "refused":
            kind = str(fields.get("error_kind") or "refused")
            span.set_attribute(_attr("error_kind"), kind)
            span.set_attribute("error.type", kind)
            self._error(span, f"the contract refused the call: {kind}")

    def _approval_decided(self, run: _Run, scope: _Scope, event: TraceEvent) -> None:
        call_id = str(event.fields.get("id") or "")
        span = scope.tools.get(call_id) or self._tool_span(scope, event)
        span.set_attribute(_attr("approval_state"), str(event.fields.get("decision") or ""))
        self._annotate_span(span, event)

    def _write_settled(self, run: _Run, scope: _Scope, event: TraceEvent) -> None:
        call_id = str(event.fields.get("id") or "")
        span = scope.tools.get(call_id)
        if span is None:
            self._annotate(scope, event)
            return
        if isinstance(event.fields.get("edited"), bool):
            span.set_attribute(_attr("edited"), event.fields["edited"])
        self._annotate_span(span, event)

    def _tool_result(self, run: _Run, scope: _Scope, event: TraceEvent) -> None:
        fields = event.fields
        call_id = str(fields.get("id") or "")
        span = scope.tools.pop(call_id, None) or self._tool_span(scope, event)
        scope.tools.pop(call_id, None)
        status = str(fields.get("status") or "")
        span.set_attribute(_attr("status"), status)
        for key in ("outcome", "error_kind"):
            if isinstance(fields.get(key), str):
                span.set_attribute(_attr(key), fields[key])
        for key in ("side_effects_possible", "truncated"):
            if isinstance(fields.get(key), bool):
                span.set_attribute(_attr(key), fields[key])
        if isinstance(fields.get("chars"), int):
            span.set_attribute(_attr("result_chars"), fields["chars"])
        if isinstance(fields.get("preview"), str):
            span.set_attribute("gen_ai.tool.call.result", fields["preview"])
        if status != "success":
            kind = str(fields.get("error_kind") or "tool_error")
            span.set_attribute("error.type", kind)
            self._error(span, f"tool {fields.get('name')!s} failed: {kind}")
        # A child scope started inside this call ends with it at the latest (a binding's
        # child agent that answered records no stop of its own).
        path = (*scope.path, call_id)
        if path in scope.children:
            scope.children.remove(path)
            self._end_child(run, path, event)
        span.end(end_time=_ns(event))

    def _end_child(self, run: _Run, path: tuple[str, ...], event: TraceEvent) -> None:
        child = run.scopes.pop(path, None)
        if child is None:
            return
        for inner in list(child.children):
            self._end_child(run, inner, event)
        self._end_scope(child, event, reason=None)

    # -- everything else -------------------------------------------------------------------

    def _annotate(self, scope: _Scope, event: TraceEvent) -> None:
        """A span event on the span ``event`` belongs to: its tool call's when it names an
        open one, else the open model call's, else the scope's."""
        call_id = event.fields.get("id", event.fields.get("tool_call_id"))
        span = scope.tools.get(str(call_id)) if call_id is not None else None
        self._annotate_span(span or scope.chat or scope.span, event)

    def _annotate_span(self, span: Span, event: TraceEvent) -> None:
        span.add_event(
            f"{NAMESPACE}.{event.type}",
            attributes=_event_attributes(event.fields),
            timestamp=_ns(event),
        )


_HANDLERS: Final = {
    "model_call": OTelSink._model_call,
    "model_response": OTelSink._model_response,
    "tool_call": OTelSink._tool_call,
    "tool_result": OTelSink._tool_result,
    "approval_decided": OTelSink._approval_decided,
    "write_settled": OTelSink._write_settled,
}
"""Event type -> the method that handles it (``stop``, ``child_started`` and the run's
start are handled apart; every other type becomes a span event)."""
