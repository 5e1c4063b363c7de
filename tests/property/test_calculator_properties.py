"""Calculator properties: for any input, ``evaluate`` returns a finite, bounded number or
raises ``InvalidArgumentsError``; never another exception, never by executing code.
(How fast it is, over an adversarial corpus, is measured in
``benchmarks/bench_calculator.py``: tests assert outcomes, not wall-clock bounds.)"""

from __future__ import annotations

import ast
import builtins
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

from hypothesis import event, given, note
from hypothesis import strategies as st

from agent_contract.app.builtin_tools.calculator import (
    MAX_DEPTH,
    MAX_EXPRESSION_CHARS,
    MAX_MAGNITUDE,
    evaluate,
)
from agent_contract.errors import InvalidArgumentsError

# -- strategies -------------------------------------------------------------------------

_INT_LITERALS = st.integers(min_value=-(10**17), max_value=10**17).map(str)
_FLOAT_LITERALS = st.floats(allow_nan=False, allow_infinity=False).map(repr)
_ODD_LITERALS = st.sampled_from(
    [
        "0",
        "0.0",
        "1e15",
        "1e16",
        "-1e15",
        "1e-300",
        "1e308",
        "1e999",
        "0x1f",
        "0o17",
        "0b101",
        "1_000",
        "9" * 16,
        "9" * 60,
        "1000000000000000",
        "1000000000000001",
        ".5",
        "5.",
        "1j",
        "True",
        "None",
        "...",
    ]
)
_LITERALS = st.one_of(_INT_LITERALS, _FLOAT_LITERALS, _ODD_LITERALS)

_ALLOWED_BINARY = ["+", "-", "*", "/", "//", "%"]
_OTHER_BINARY = ["**", "<<", ">>", "&", "|", "^", "@", "and", "or", "<", "==", "is", "in"]


def _combine(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(
        children,
        st.sampled_from(_ALLOWED_BINARY + _OTHER_BINARY),
        children,
        st.sampled_from(["", " "]),
    ).map(lambda t: f"{t[0]}{t[3]}{t[1]}{t[3]}{t[2]}")
    unary = st.tuples(st.sampled_from(["-", "+", "- ", "~", "not "]), children).map(
        lambda t: f"{t[0]}{t[1]}"
    )
    return st.one_of(binary, unary, children.map(lambda c: f"({c})"))


ARITHMETIC = st.recursive(_LITERALS, _combine, max_leaves=40)
"""Arithmetic-looking syntax trees rendered to text (also with forbidden operators)."""


def _arith_only(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(children, st.sampled_from(_ALLOWED_BINARY), children).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})"
    )
    unary = st.tuples(st.sampled_from(["-", "+"]), children).map(lambda t: f"{t[0]}({t[1]})")
    return st.one_of(binary, unary)


GRAMMAR_ONLY = st.recursive(
    st.one_of(
        st.integers(min_value=0, max_value=10**16).map(str),
        st.floats(min_value=0, max_value=1e16, allow_nan=False).map(repr),
    ),
    _arith_only,
    max_leaves=12,
).filter(lambda s: len(s) <= MAX_EXPRESSION_CHARS)
"""Only the calculator's grammar (fully bracketed), for the agreement property."""

ADVERSARIAL_PIECES = [
    "__import__('os').system('touch /tmp/agent-contract-pwned')",
    "__import__",
    "().__class__.__bases__[0].__subclasses__()",
    "open('/etc/passwd').read()",
    "eval('1+1')",
    "exec('x=1')",
    "compile('1','','eval')",
    "globals()",
    "breakpoint()",
    "lambda: 1",
    "[x for x in ()]",
    "(x for x in ())",
    "{1: 2}",
    "{1}",
    "[1]",
    "1, 2",
    "1; 2",
    "import os",
    "x := 1",
    "*a",
    "await x",
    "(yield)",
    "a.b",
    "a[0]",
    "a[1:2]",
    "f(1)",
    "1 if 1 else 2",
    "'abc'",
    "b'x'",
    "f'{1}'",
    "'\\d'",
    "2 ** 1000000",
    "10**15 * 10**15",
    "1e15 * 1e15",
    "1e15 / 1e-300",
    "1e15 // 1e-300",
    "-1e15 % 1e-300",
    "0 / 0",
    "1 % 0",
    "1 // 0.0",
    "1 / -0.0",
    "١٢",  # Arabic-Indic digits
    "\uff11\uff12",  # fullwidth digits
    "²",
    "½",
    "ⅷ",
    "\x00",
    "\ud800",
    "\u200b1",
    "\n1",
    "\t",
    "#",
    "\\",
    "1__0",
    "0x",
    "9" * MAX_EXPRESSION_CHARS,
    "(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1),
    "(" * MAX_DEPTH + "1" + ")" * MAX_DEPTH,
    "-" * (MAX_EXPRESSION_CHARS - 1) + "1",
    "-(" * 40 + "1" + ")" * 40,
    "1" + "+1" * 99,
    "1" + "*1" * 99,
    "999999999999999*999999999999999*999999999999999",
    "[" * 150,
    "(" * 150,
]
_PIECES = st.sampled_from(ADVERSARIAL_PIECES)

EXPRESSIONS = st.one_of(
    ARITHMETIC,
    _PIECES,
    st.lists(st.one_of(_PIECES, _LITERALS, st.sampled_from(_ALLOWED_BINARY)), max_size=12).map(
        " ".join
    ),
    st.text(max_size=MAX_EXPRESSION_CHARS + 20),
    st.text(alphabet="0123456789+-*/%().e_ x", max_size=MAX_EXPRESSION_CHARS + 5),
)
"""Everything a model might send as an expression."""

NOT_STRINGS = st.one_of(
    st.none(), st.integers(), st.floats(), st.lists(st.integers(), max_size=2), st.binary()
)

# -- a guard that records any attempt to run code ----------------------------------------


class _Forbidden(BaseException):
    """Raised by the guard; a BaseException so no ``except Exception`` can swallow it."""


@contextmanager
def code_execution_guard() -> Iterator[list[str]]:
    """Patch the ways to run code; yield the list of attempts made inside the block.

    ``compile`` stays usable for ``ast.parse`` (``PyCF_ONLY_AST``): producing a syntax
    tree is not running code; compiling to a code object is.
    """
    used: list[str] = []
    real_compile = builtins.compile

    def forbid(name: str) -> Callable[..., Any]:
        def guard(*args: Any, **kwargs: Any) -> Any:
            used.append(name)
            raise _Forbidden(name)

        return guard

    def compile_guard(
        source: Any, filename: Any, mode: Any, flags: int = 0, *a: Any, **k: Any
    ) -> Any:
        if flags & ast.PyCF_ONLY_AST:
            return real_compile(source, filename, mode, flags, *a, **k)
        used.append("compile")
        raise _Forbidden("compile")

    real_import = builtins.__import__

    def import_guard(name: str, *args: Any, **kwargs: Any) -> Any:
        # CPython's parser imports unicodedata itself to NFKC-normalize non-ASCII
        # identifiers; that is the parser at work, not the input being run.
        if name == "unicodedata":
            return real_import(name, *args, **kwargs)
        used.append(f"__import__({name})")
        raise _Forbidden(name)

    patches: list[tuple[Any, str, Any]] = [
        (builtins, name, forbid(name)) for name in ("eval", "exec", "open", "breakpoint", "input")
    ]
    patches += [(builtins, "compile", compile_guard), (builtins, "__import__", import_guard)]
    patches += [(os, name, forbid(f"os.{name}")) for name in ("system", "popen", "execv")]
    saved = [(target, name, getattr(target, name)) for target, name, _ in patches]
    for target, name, replacement in patches:
        setattr(target, name, replacement)
    try:
        yield used
    finally:
        for target, name, original in saved:
            setattr(target, name, original)


def _evaluate(expression: Any) -> tuple[int | float | None, str | None]:
    """``(result, rejection message)`` of one call."""
    try:
        return evaluate(expression), None
    except InvalidArgumentsError as exc:
        return None, exc.message


def _check_outcome(expression: Any) -> int | float | None:
    with code_execution_guard() as used:
        result, problem = _evaluate(expression)
    assert not used, f"evaluate tried to run code: {used}"
    if problem is not None:
        note(f"rejected: {problem}")
        event(f"rejected: {problem}")
    if result is not None:
        assert type(result) in (int, float), type(result)
        assert math.isfinite(result)
        assert abs(result) <= MAX_MAGNITUDE
        event(f"accepted: {type(result).__name__}")
    return result


# -- properties ---------------------------------------------------------------------------


@given(expression=EXPRESSIONS)
def test_evaluate_returns_a_bounded_number_or_a_classified_error(expression: str) -> None:
    _check_outcome(expression)


@given(expression=NOT_STRINGS)
def test_evaluate_rejects_non_strings(expression: Any) -> None:
    assert _check_outcome(expression) is None


@given(expression=GRAMMAR_ONLY)
def test_accepted_expressions_mean_what_python_says(expression: str) -> None:
    """When the calculator accepts an expression, its value (and type) is Python's."""
    result = _check_outcome(expression)
    if result is None:
        return
    # The generated text is bracketed arithmetic over literals only: evaluating it with
    # no builtins is the oracle here (the calculator itself never calls eval).
    expected = eval(expression, {"__builtins__": {}}, {})  # noqa: S307
    assert type(result) is type(expected)
    assert result == expected


def test_guard_catches_code_execution() -> None:
    """The guard used above does see attempts to run code (a check of the check)."""
    with code_execution_guard() as used:
        with suppress(_Forbidden):
            eval("1")  # noqa: S307
        with suppress(_Forbidden):
            compile("1", "<x>", "eval")
        with suppress(_Forbidden):
            __import__("os")
        ast.parse("1 + é", mode="eval")
    assert used == ["eval", "compile", "__import__(os)"]
