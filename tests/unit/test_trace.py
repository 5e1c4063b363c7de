"""Redaction and the append-only trace: redacted before storage, exported as JSONL."""

from __future__ import annotations

import io
import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_contract.errors import ConfigurationError
from agent_contract.trace import (
    DEFAULT_PATTERNS,
    MIN_SECRET_CHARS,
    REDACTED,
    JsonlSink,
    MemorySink,
    RedactionPolicy,
    Trace,
    TraceEvent,
)

SECRET = "hunter2-swordfish"


def test_exact_secret_is_redacted_everywhere() -> None:
    policy = RedactionPolicy(secrets=(SECRET,))
    text = f"pw={SECRET}; again {SECRET}."
    assert policy.redact(text) == f"pw={REDACTED}; again {REDACTED}."


@pytest.mark.parametrize(
    "secret",
    [
        pytest.param('pa"ss\\word', id="quote-and-backslash"),
        pytest.param("tab\there", id="tab"),
        pytest.param("pässwört", id="non-ascii"),
        pytest.param("密码很长很长", id="cjk"),
    ],
)
def test_json_escaped_variants_are_redacted(secret: str) -> None:
    policy = RedactionPolicy(secrets=(secret,))
    for text in (secret, json.dumps({"v": secret}), json.dumps({"v": secret}, ensure_ascii=False)):
        redacted = policy.redact(text)
        assert REDACTED in redacted
        assert secret not in redacted
        assert json.dumps(secret)[1:-1] not in redacted
        assert json.dumps(secret, ensure_ascii=False)[1:-1] not in redacted


def test_longer_secret_wins_over_its_prefix() -> None:
    policy = RedactionPolicy(secrets=("abcd", "abcdefgh"))
    assert policy.redact("xabcdefghx") == f"x{REDACTED}x"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("key sk-" + "A1b2C3d4E5f6G7h8I9", id="sk-key"),
        pytest.param("key sk-proj-abcdefghij_KLMNOPQRST", id="sk-proj-key"),
        pytest.param("Authorization: Bearer abcdefghijklmnop.qrstuv", id="bearer"),
        pytest.param("authorization: bearer ABCDEFGHIJKLMNOPQRST==", id="bearer-lowercase"),
        pytest.param("aws AKIAABCDEFGHIJKLMNOP", id="aws-key-id"),
        pytest.param("gh ghp_" + "a" * 36, id="github-token"),
        pytest.param("slack xoxb-1234567890-abc", id="slack-token"),
    ],
)
def test_default_patterns_redact_secret_shapes(text: str) -> None:
    redacted = RedactionPolicy().redact(text)
    assert REDACTED in redacted
    assert redacted.split(" ")[0] == text.split(" ")[0]  # the surrounding text survives


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("sk-short", id="short-sk"),
        pytest.param("the bearer of good news", id="bearer-word"),
        pytest.param("ask-me-anything", id="ask-prefix"),
        pytest.param("", id="empty"),
    ],
)
def test_default_patterns_leave_ordinary_text(text: str) -> None:
    assert RedactionPolicy().redact(text) == text


def test_default_patterns_are_on_by_default() -> None:
    assert RedactionPolicy().patterns == DEFAULT_PATTERNS


@pytest.mark.parametrize(
    "secret",
    [
        pytest.param("abc", id="3-chars"),
        pytest.param("", id="empty"),
        pytest.param(1234, id="int"),
    ],
)
def test_short_or_non_str_secret_rejected(secret: Any) -> None:
    with pytest.raises(ConfigurationError, match=f"at least {MIN_SECRET_CHARS} characters"):
        RedactionPolicy(secrets=(secret,))


def test_four_char_secret_accepted() -> None:
    assert RedactionPolicy(secrets=("abcd",)).redact("xabcdx") == f"x{REDACTED}x"


def test_bad_pattern_rejected() -> None:
    with pytest.raises(ConfigurationError, match="bad redaction pattern"):
        RedactionPolicy(patterns=("(unclosed",))


def test_no_secrets_no_patterns_is_identity() -> None:
    policy = RedactionPolicy(patterns=())
    assert policy.redact("sk-" + "x" * 30) == "sk-" + "x" * 30


def test_custom_replacement_and_with_secrets() -> None:
    policy = RedactionPolicy(secrets=("alpha-1",), replacement="***")
    wider = policy.with_secrets(["beta-22"])
    assert wider.redact("alpha-1 beta-22") == "*** ***"
    assert policy.redact("beta-22") == "beta-22"  # the original is unchanged
    assert wider.patterns == policy.patterns


def test_redact_value_walks_keys_values_and_containers() -> None:
    policy = RedactionPolicy(secrets=(SECRET,))

    class Holder:
        def __repr__(self) -> str:
            return f"Holder({SECRET})"

    value = {
        SECRET: [SECRET, ("x", SECRET)],
        "n": 1,
        "f": 1.5,
        "b": True,
        "none": None,
        "obj": Holder(),
        3: "int key",
    }
    redacted = policy.redact_value(value)
    assert redacted == {
        REDACTED: [REDACTED, ["x", REDACTED]],
        "n": 1,
        "f": 1.5,
        "b": True,
        "none": None,
        "obj": f"Holder({REDACTED})",
        "3": "int key",
    }
    assert SECRET in value  # the input is not modified


def test_numeric_values_equal_to_a_secret_are_redacted() -> None:
    # A secret handed over as text ("12345678") must not survive as a JSON number.
    policy = RedactionPolicy(secrets=("12345678",))
    redacted = policy.redact_value({"account": 12345678, "other": 7, "ratio": 0.5, "ok": True})
    assert "12345678" not in json.dumps(redacted)
    assert redacted["other"] == 7
    assert redacted["ratio"] == 0.5
    assert redacted["ok"] is True


# -- the trace ------------------------------------------------------------------------------


def test_events_are_redacted_before_storage() -> None:
    trace = Trace(RedactionPolicy(secrets=(SECRET,)))
    stored = trace.append("tool_call", arguments={"password": SECRET, SECRET: "as a key"})
    assert (stored.seq, stored.type) == (0, "tool_call")
    assert dict(stored.fields) == {"arguments": {"password": REDACTED, REDACTED: "as a key"}}
    assert SECRET not in json.dumps(trace.events)
    assert SECRET not in trace.to_jsonl()
    assert SECRET not in repr(trace._lines)  # nothing unredacted is kept internally


def test_default_trace_redacts_default_patterns() -> None:
    trace = Trace()
    key = "sk-" + "Z" * 24
    trace.append("note", text=f"using {key}", headers={"Authorization": "Bearer " + "t" * 20})
    jsonl = trace.to_jsonl()
    assert key not in jsonl
    assert "t" * 20 not in jsonl


def test_seq_and_type_are_set_by_the_trace() -> None:
    trace = Trace()
    trace.append("a")
    trace.append("b", x=1)
    assert [(e["seq"], e["type"]) for e in trace.events] == [(0, "a"), (1, "b")]
    [b] = trace.of_type("b")
    assert (b["seq"], b["type"], b["x"]) == (1, "b", 1)
    assert len(trace) == 2


def test_each_event_carries_a_utc_time_and_the_run_offset() -> None:
    ticks = iter([0.25, 1.5])
    before = datetime.now(UTC)
    trace = Trace(clock=lambda: next(ticks))
    first, second = trace.append("a"), trace.append("b")
    after = datetime.now(UTC)
    assert before <= first.time <= second.time <= after
    assert first.time.tzinfo is UTC
    assert (first.offset_seconds, second.offset_seconds) == (0.25, 1.5)
    event = trace.events[0]
    assert event["time"].endswith("Z")
    assert len(event["time"]) == 27
    assert event["offset_seconds"] == 0.25
    assert TraceEvent.from_dict(event) == trace.records[0]


@pytest.mark.parametrize("name", ["seq", "type", "time", "offset_seconds"])
def test_header_keys_are_reserved(name: str) -> None:
    with pytest.raises(ConfigurationError, match="may not be named"):
        Trace().append("a", **{name: 1})


@pytest.mark.parametrize(
    "event",
    [
        pytest.param({"seq": 0, "type": "a"}, id="no-time"),
        pytest.param({"seq": 0, "type": "a", "time": "x", "offset_seconds": 0}, id="bad-time"),
        pytest.param(
            {"seq": 0, "type": "a", "time": "2025-01-01T00:00:00", "offset_seconds": 0},
            id="naive-time",
        ),
        pytest.param(
            {"seq": 0, "type": "a", "time": "2025-01-01T00:00:00Z", "offset_seconds": "0"},
            id="offset-text",
        ),
        pytest.param({"seq": "0", "type": "a"}, id="seq-text"),
    ],
)
def test_malformed_earlier_events_are_refused(event: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="trace event"):
        Trace(events=[event])


def test_a_sink_receives_each_new_event_in_order() -> None:
    sink = MemorySink()
    trace = Trace(RedactionPolicy(secrets=(SECRET,)), run_id="run-1", sink=sink)
    trace.append("a", text=SECRET)
    trace.append("b")
    assert [(rid, e.seq, e.type) for rid, e in sink.events] == [
        ("run-1", 0, "a"),
        ("run-1", 1, "b"),
    ]
    assert sink.events[0][1].fields == {"text": REDACTED}  # the sink never sees a secret
    assert [e.seq for e in sink.of_run("run-1")] == [0, 1]
    assert sink.of_run("other") == []
    resumed = Trace(events=trace.events, run_id="run-1", sink=sink)
    resumed.append("c")
    assert [e.type for e in sink.of_run("run-1")] == ["a", "b", "c"]  # earlier ones not resent


def test_jsonl_sink_writes_one_line_per_event(tmp_path: Path) -> None:
    path = tmp_path / "traces" / "runs.jsonl"
    with JsonlSink(path) as sink:
        trace = Trace(run_id="run-1", sink=sink)
        trace.append("a", text="中文")
        trace.append("b")
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines == [{"run_id": "run-1", **event} for event in trace.events]
    stream = io.StringIO()
    JsonlSink(stream).emit("run-2", trace.records[0])
    JsonlSink(stream).close()  # a stream it was given stays open
    assert json.loads(stream.getvalue())["run_id"] == "run-2"


def test_a_failing_sink_is_loud() -> None:
    class Broken:
        def emit(self, run_id: str, event: TraceEvent) -> None:
            raise OSError("disk full")

    trace = Trace(sink=Broken())
    with pytest.raises(OSError, match="disk full"):
        trace.append("a")


def test_events_are_copies() -> None:
    trace = Trace()
    trace.append("a", data={"k": [1]})
    trace.events[0]["data"]["k"].append(2)
    returned = trace.append("b", data={"k": [1]})
    returned.fields["data"]["k"].append(2)
    assert trace.events[0]["data"] == {"k": [1]}
    assert trace.events[1]["data"] == {"k": [1]}


def test_jsonl_one_object_per_line_non_ascii_literal() -> None:
    trace = Trace()
    trace.append("a", text="计算 十二")
    trace.append("b", text="line\nbreak", n=2)
    jsonl = trace.to_jsonl()
    lines = jsonl.splitlines()
    assert jsonl.endswith("\n")
    assert len(lines) == len(trace) == 2
    assert [json.loads(line) for line in lines] == trace.events
    assert "计算 十二" in jsonl
    assert "\\u" not in jsonl


def test_size_bytes_matches_jsonl() -> None:
    trace = Trace()
    assert trace.size_bytes == 0 == len(trace.to_jsonl().encode("utf-8"))
    for i in range(5):
        trace.append("e", i=i, text="é中" * i, nested={"z": 1, "a": [None, True]})
        assert trace.size_bytes == len(trace.to_jsonl().encode("utf-8"))


def test_resumed_trace_keeps_events_and_size() -> None:
    first = Trace()
    first.append("run_started", run_id="r1")
    first.append("stop", reason="answered")
    resumed = Trace(events=first.events)
    assert resumed.events == first.events
    assert resumed.size_bytes == first.size_bytes
    assert resumed.append("next").seq == 2


def test_write_jsonl(tmp_path: Path) -> None:
    trace = Trace()
    trace.append("a", text="中文")
    path = tmp_path / "trace.jsonl"
    trace.write_jsonl(path)
    assert path.read_text(encoding="utf-8") == trace.to_jsonl()


def test_non_serializable_field_is_stringified_not_stored_raw() -> None:
    trace = Trace()
    trace.append("a", value={1, 2})
    assert isinstance(trace.events[0]["value"], str)


def test_concurrent_appends_get_unique_sequence_numbers() -> None:
    trace = Trace()
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait(timeout=5)
        for _ in range(50):
            trace.append("e")

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)
    assert [e["seq"] for e in trace.events] == list(range(400))
    assert trace.size_bytes == len(trace.to_jsonl().encode("utf-8"))
