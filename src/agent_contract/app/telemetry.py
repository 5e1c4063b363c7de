"""``--otel console|otlp`` for ``run`` and ``check``: the OpenTelemetry set-up of the CLI.

:func:`tracer_provider` builds an SDK ``TracerProvider`` with one exporter:

- ``console``: the SDK's ``ConsoleSpanExporter``, writing each span as JSON to the
  stream given (the CLI gives its stderr, so stdout keeps the command's own output), as
  each span ends;
- ``otlp``: the OTLP/HTTP exporter (``opentelemetry-exporter-otlp-proto-http``), batched;
  it reads its endpoint from the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` (base URL,
  ``/v1/traces`` appended) or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (full URL) itself,
  default ``http://localhost:4318/v1/traces``, and its headers and timeout from the
  other ``OTEL_EXPORTER_OTLP_*`` variables.

The provider's resource is the SDK's (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``)
with ``service.name`` ``agent-contract`` when neither names a service. The provider is
never made the process's global one. :func:`otel_sink` wraps it in the
``agent_contract.trace.otel.OTelSink`` that the command's contracts get as their
``trace_sink``; the command calls the returned ``shutdown`` before it exits, which
exports every span still buffered.

The ``otel`` extra (``pip install 'agent-contract[otel]'``) provides the packages; when
it is missing, both functions raise :class:`~agent_contract.errors.DependencyMissingError`
(exit 4, ``dependency_missing``) before anything runs.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator
from typing import Any, Final, Literal, TextIO, get_args

from ..errors import ConfigurationError, DependencyMissingError
from ..trace import TraceSink

__all__ = [
    "OTEL_EXTRA",
    "OTEL_TARGETS",
    "SERVICE_NAME",
    "OtelTarget",
    "SinkFactory",
    "add_otel_argument",
    "exporting",
    "otel_sink",
    "tracer_provider",
]

OtelTarget = Literal["console", "otlp"]
"""Where ``--otel`` sends spans."""
OTEL_TARGETS: Final[tuple[str, ...]] = get_args(OtelTarget)
OTEL_EXTRA: Final = "agent-contract[otel]"
"""What to install for ``--otel``."""
SERVICE_NAME: Final = "agent-contract"
"""The ``service.name`` of the spans unless ``OTEL_SERVICE_NAME`` or
``OTEL_RESOURCE_ATTRIBUTES`` names one."""

SinkFactory = Callable[[Any], TraceSink]
"""``factory(tracer_provider) -> TraceSink``."""


def add_otel_argument(parser: Any) -> None:
    """Add ``--otel console|otlp`` to a command's ``argparse`` parser."""
    parser.add_argument(
        "--otel",
        choices=OTEL_TARGETS,
        default=None,
        help="also export the runs' traces as OpenTelemetry spans: console (JSON on stderr) "
        "or otlp (OTLP/HTTP to $OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318); "
        f"needs {OTEL_EXTRA}",
    )


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise DependencyMissingError(
            OTEL_EXTRA, f"--otel needs the otel extra: cannot import {exc.name or module}"
        ) from exc


def tracer_provider(target: str, *, stream: TextIO) -> tuple[Any, Callable[[], None]]:
    """An SDK ``TracerProvider`` exporting to ``target``, and the callable that flushes
    and shuts it down (call it once, before the process exits; later calls do nothing).

    Args:
        target: ``"console"`` (spans as JSON on ``stream``, each as it ends) or
            ``"otlp"`` (OTLP/HTTP, batched, endpoint from ``OTEL_EXPORTER_OTLP_ENDPOINT``).
        stream: where the console exporter writes (the CLI's stderr); unused by otlp.

    Returns:
        ``(provider, shutdown)``: an ``opentelemetry.sdk.trace.TracerProvider`` (not
        installed as the global one) and its shutdown.

    Raises:
        ConfigurationError: ``target`` is neither ``console`` nor ``otlp``.
        DependencyMissingError: the ``otel`` extra is not installed.
    """
    if target not in OTEL_TARGETS:
        raise ConfigurationError(f"--otel takes {' or '.join(OTEL_TARGETS)}, got {target!r}")
    sdk_trace = _import("opentelemetry.sdk.trace")
    export = _import("opentelemetry.sdk.trace.export")
    resources = _import("opentelemetry.sdk.resources")
    resource = resources.Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(resources.Resource({"service.name": SERVICE_NAME}))
    provider = sdk_trace.TracerProvider(resource=resource)
    if target == "console":
        exporter = export.ConsoleSpanExporter(out=stream)
        provider.add_span_processor(export.SimpleSpanProcessor(exporter))
    else:
        http = _import("opentelemetry.exporter.otlp.proto.http.trace_exporter")
        provider.add_span_processor(export.BatchSpanProcessor(http.OTLPSpanExporter()))
    done: list[bool] = []

    def shutdown() -> None:
        if done:
            return
        done.append(True)
        provider.force_flush()
        provider.shutdown()

    return provider, shutdown


def _otel_sink_class(provider: Any) -> TraceSink:
    """The real sink: :class:`agent_contract.trace.otel.OTelSink` over ``provider``
    (imported here, so the CLI loads OpenTelemetry only with ``--otel``)."""
    module = _import("agent_contract.trace.otel")
    sink: TraceSink = module.OTelSink(tracer_provider=provider)
    return sink


def otel_sink(
    target: str, *, stream: TextIO, factory: SinkFactory | None = None
) -> tuple[TraceSink, Callable[[], None]]:
    """The trace sink of ``--otel target`` and the shutdown that exports what is left:
    it calls the sink's ``close()``, if it has one (``OTelSink`` ends the spans of a run
    still open), then flushes and shuts the provider down.

    Args:
        target: as :func:`tracer_provider`.
        stream: as :func:`tracer_provider`.
        factory: builds the sink from the provider; default:
            ``OTelSink(tracer_provider=provider)``.

    Raises:
        ConfigurationError, DependencyMissingError: as :func:`tracer_provider`.
    """
    provider, shutdown = tracer_provider(target, stream=stream)
    try:
        sink = (factory or _otel_sink_class)(provider)
    except BaseException:
        shutdown()
        raise
    close = getattr(sink, "close", None)

    def close_and_shutdown() -> None:
        try:
            if callable(close):
                close()  # the spans of a run cut short (a signal) end, marked abandoned
        finally:
            shutdown()

    return sink, close_and_shutdown


@contextlib.contextmanager
def exporting(target: str | None, *, stream: TextIO) -> Iterator[TraceSink | None]:
    """For a command's body: the ``--otel`` sink (None when ``target`` is None), its
    spans exported before the block is left, whether it returns or raises.

    Raises:
        ConfigurationError, DependencyMissingError: as :func:`tracer_provider` (on entry).
    """
    if target is None:
        yield None
        return
    sink, shutdown = otel_sink(target, stream=stream)
    try:
        yield sink
    finally:
        shutdown()
