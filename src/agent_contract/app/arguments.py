"""Checks on ``agent-contract``'s arguments that argparse cannot make: valid UTF-8,
non-empty text, sane run ids and ``--as`` names, a usable ``--data-dir``; each problem
is named as the user typed it and reported with the command's own usage line."""

from __future__ import annotations

import argparse
import unicodedata
from collections.abc import Callable

from ..registry import missing_bindings
from .folder import folder_problem

__all__ = ["MAX_NAME_CHARS", "MAX_RUN_ID_CHARS", "argument_problem", "command_parser"]

MAX_RUN_ID_CHARS = 200
"""A run id longer than this is refused as a usage error (run ids are ``run-`` and 12
hex digits; a longer one is a paste error, and it would be echoed in every message)."""
MAX_NAME_CHARS = 200
"""The longest ``approve --as NAME`` (recorded in the trace and the stored run)."""

_LABELS = {"text": "the request text", "thread_id": "the run id", "decided_by": "--as"}
"""How an argument is named in an error: as the user typed it, not argparse's ``dest``."""


def _label(name: str) -> str:
    return _LABELS.get(name, f"--{name.replace('_', '-')}")


def _has_control_characters(value: str) -> bool:
    """Whether ``value`` holds a control character (a newline, an ANSI escape, ...)."""
    return any(unicodedata.category(c) == "Cc" for c in value)


def argument_problem(
    args: argparse.Namespace, durable_harnesses: Callable[[], list[str]]
) -> str | None:
    """A usage problem argparse cannot see: text that is not valid UTF-8 (the shell
    passed raw bytes; ``--secret`` values included), an empty request, a run id or
    ``--as`` name that is blank, too long or holds control characters, a data folder
    that is not a folder, or a ``run --harness`` that no installed harness can run
    durably (``durable_harnesses()``; unless a binding agent-contract declares is
    missing: the run then reports ``dependency_missing``)."""
    for name, value in vars(args).items():
        values = value if isinstance(value, list) else [value]
        for item in values:
            if not isinstance(item, str):
                continue
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return f"{_label(name)} is not valid UTF-8 text"
    if getattr(args, "text", None) is not None and not args.text.strip():
        return "the request text is empty"
    for name, limit in (("thread_id", MAX_RUN_ID_CHARS), ("decided_by", MAX_NAME_CHARS)):
        value = getattr(args, name, None)
        if value is None:
            continue
        if not value.strip():
            return f"{_label(name)} is empty"
        if len(value) > limit:
            return f"{_label(name)} is too long ({len(value):,} characters; at most {limit})"
        if _has_control_characters(value):
            return f"{_label(name)} holds control characters (a newline, an escape, ...)"
    folder = getattr(args, "data_dir", None)
    if folder is not None:
        if not folder.strip():
            return "--data-dir is empty"
        unusable = folder_problem(folder)
        if unusable is not None:
            return f"--data-dir: {unusable}"
    if getattr(args, "command", None) == "run":
        durable = durable_harnesses()
        if args.harness not in durable and not missing_bindings():
            choices = ", ".join(repr(name) for name in durable)
            return f"argument --harness: invalid choice: {args.harness!r} (choose from {choices})"
    return None


def command_parser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser:
    """The sub-parser of ``command`` (its usage line is the one a problem with its
    arguments should print), else ``parser``."""
    for action in parser._actions:  # argparse keeps its sub-parsers here
        if isinstance(action, argparse._SubParsersAction):
            found = action.choices.get(command or "")
            if isinstance(found, argparse.ArgumentParser):
                return found
    return parser
