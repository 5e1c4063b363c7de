"""A bounded arithmetic calculator that never executes code.

The expression is parsed with :func:`ast.parse` (``mode="eval"``), every node is
checked against an allowlist, and the allowed tree is walked by a small
interpreter. Nothing is compiled to a code object and nothing is executed.

Grammar (Python syntax, Python semantics)::

    expr    := number | "(" expr ")" | unary | binary
    unary   := ("+" | "-") expr
    binary  := expr ("+" | "-" | "*" | "/" | "//" | "%") expr
    number  := a finite int or float literal (``12``, ``0.5``, ``1e3``, ``0x1f``, ``1_000``)

``/`` always returns a float; ``+ - * // %`` on two ints return an int. ``//`` floors
and ``%`` takes the sign of the divisor, as in Python (``-7 % 3 == 2``).

Limits:

- at most :data:`MAX_EXPRESSION_CHARS` (200) characters, checked before parsing;
- bracket nesting (counted in the text, before parsing) and syntax-tree depth (each
  operator or sign is one level) of at most :data:`MAX_DEPTH` (32) levels;
- every literal and the result of every single operation must be finite with a
  magnitude of at most :data:`MAX_MAGNITUDE` (``10**15``). The check runs at each
  step, so no step ever builds a number larger than ``10**30``.

Every rejection raises :class:`~agent_contract.errors.InvalidArgumentsError`
(kind ``invalid_arguments``) with a short public message, never a raw
``ZeroDivisionError``, ``OverflowError`` or ``SyntaxError``:

- ``"expression must be a string"`` / ``"expression is empty"``
- ``"expression is longer than 200 characters"``
- ``"expression is nested deeper than 32 levels"``
- ``"not a valid arithmetic expression"`` (syntax error, or the parser gave up)
- ``"function calls are not allowed"``, ``"names are not allowed"``,
  ``"attribute access is not allowed"``, ``"subscripts are not allowed"``,
  ``"comparisons are not allowed"``, ``"boolean operators are not allowed"``,
  ``"conditional expressions are not allowed"``, ``"exponentiation is not allowed"``,
  ``"strings are not allowed"``, ``"bytes are not allowed"``,
  ``"complex numbers are not allowed"``, ``"booleans are not allowed"``,
  ``"None is not allowed"``, ``"lambdas are not allowed"``,
  ``"comprehensions are not allowed"``, ``"lists are not allowed"`` (and similar for
  other containers), ``"operator '<<' is not allowed"`` (and similar for other
  operators), ``"<node> is not allowed"`` for any other syntax
- ``"division by zero"`` (for ``/``, ``//`` and ``%``)
- ``"number is not finite"`` (``nan`` or ``inf``, from a literal or an operation)
- ``"magnitude exceeds 10**15"`` (a literal or any intermediate or final result)
"""

from __future__ import annotations

import ast
import io
import itertools
import math
import tokenize
from typing import Any, Final

from ...errors import InvalidArgumentsError
from ...tools import ToolSpec

__all__ = [
    "MAX_DEPTH",
    "MAX_EXPRESSION_CHARS",
    "MAX_MAGNITUDE",
    "Number",
    "calculator_tool",
    "evaluate",
]

MAX_EXPRESSION_CHARS: Final = 200
"""Longest accepted expression, in characters (checked before parsing)."""

MAX_DEPTH: Final = 32
"""Deepest accepted nesting: brackets in the text, and levels in the syntax tree."""

MAX_MAGNITUDE: Final = 10**15
"""Largest accepted absolute value of any literal, intermediate or final result."""

Number = int | float

_OPEN_BRACKETS: Final = frozenset("([{")
_CLOSE_BRACKETS: Final = frozenset(")]}")

_BINARY_OPERATORS: Final[tuple[type[ast.operator], ...]] = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
)
_UNARY_OPERATORS: Final[tuple[type[ast.unaryop], ...]] = (ast.UAdd, ast.USub)

_OPERATOR_SYMBOLS: Final[dict[type[ast.AST], str]] = {
    ast.MatMult: "@",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.BitAnd: "&",
    ast.Invert: "~",
    ast.Not: "not",
}

_REJECTED_NODES: Final[dict[type[ast.AST], str]] = {
    ast.Call: "function calls are not allowed",
    ast.Name: "names are not allowed",
    ast.Attribute: "attribute access is not allowed",
    ast.Subscript: "subscripts are not allowed",
    ast.Slice: "subscripts are not allowed",
    ast.Compare: "comparisons are not allowed",
    ast.BoolOp: "boolean operators are not allowed",
    ast.IfExp: "conditional expressions are not allowed",
    ast.Lambda: "lambdas are not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "comprehensions are not allowed",
    ast.List: "lists are not allowed",
    ast.Tuple: "tuples are not allowed",
    ast.Set: "sets are not allowed",
    ast.Dict: "dicts are not allowed",
    ast.JoinedStr: "strings are not allowed",
    ast.FormattedValue: "strings are not allowed",
    ast.NamedExpr: "assignment expressions are not allowed",
    ast.Starred: "starred expressions are not allowed",
    ast.Await: "await is not allowed",
    ast.Yield: "yield is not allowed",
    ast.YieldFrom: "yield is not allowed",
}


def _check_text(expression: object) -> str:
    """Validate the raw text before it reaches the parser; return it stripped."""
    if not isinstance(expression, str):
        raise InvalidArgumentsError("expression must be a string")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise InvalidArgumentsError(f"expression is longer than {MAX_EXPRESSION_CHARS} characters")
    text = expression.strip()
    if not text:
        raise InvalidArgumentsError("expression is empty")
    depth = 0
    for char in text:
        if char in _OPEN_BRACKETS:
            depth += 1
            if depth > MAX_DEPTH:
                raise InvalidArgumentsError(f"expression is nested deeper than {MAX_DEPTH} levels")
        elif char in _CLOSE_BRACKETS:
            depth -= 1
    return text


def _check_number(value: Number) -> Number:
    """Reject a non-finite value or one whose magnitude exceeds :data:`MAX_MAGNITUDE`."""
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidArgumentsError("number is not finite")
    if abs(value) > MAX_MAGNITUDE:
        raise InvalidArgumentsError("magnitude exceeds 10**15")
    return value


def _check_constant(value: object) -> Number:
    """Accept only finite, bounded int and float literals."""
    # bool is a subclass of int: test it first.
    if isinstance(value, bool):
        raise InvalidArgumentsError("booleans are not allowed")
    if isinstance(value, int | float):
        return _check_number(value)
    if isinstance(value, str):
        raise InvalidArgumentsError("strings are not allowed")
    if isinstance(value, bytes):
        raise InvalidArgumentsError("bytes are not allowed")
    if isinstance(value, complex):
        raise InvalidArgumentsError("complex numbers are not allowed")
    if value is None:
        raise InvalidArgumentsError("None is not allowed")
    if value is Ellipsis:
        raise InvalidArgumentsError("'...' is not allowed")
    raise InvalidArgumentsError(f"{type(value).__name__} literals are not allowed")


def _operator_message(op: ast.AST) -> str:
    if isinstance(op, ast.Pow):
        return "exponentiation is not allowed"
    symbol = _OPERATOR_SYMBOLS.get(type(op), type(op).__name__)
    return f"operator {symbol!r} is not allowed"


def _node_message(node: ast.AST) -> str:
    for node_type, message in _REJECTED_NODES.items():
        if isinstance(node, node_type):
            return message
    return f"{type(node).__name__} is not allowed"


def _check_tree(root: ast.expr) -> None:
    """Check every node against the allowlist and the depth limit, without recursion.

    Runs to completion before anything is evaluated, so a forbidden node anywhere
    (``2 ** 1000000``) is rejected before any arithmetic happens.
    """
    stack: list[tuple[ast.AST, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise InvalidArgumentsError(f"expression is nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, ast.Constant):
            _check_constant(node.value)
        elif isinstance(node, ast.BinOp):
            if not isinstance(node.op, _BINARY_OPERATORS):
                raise InvalidArgumentsError(_operator_message(node.op))
            stack.append((node.right, depth + 1))
            stack.append((node.left, depth + 1))
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, _UNARY_OPERATORS):
                raise InvalidArgumentsError(_operator_message(node.op))
            stack.append((node.operand, depth + 1))
        else:
            raise InvalidArgumentsError(_node_message(node))


def _apply_binary(op: ast.operator, left: Number, right: Number) -> Number:
    """One binary step. Both operands are already within :data:`MAX_MAGNITUDE`."""
    if isinstance(op, ast.Div | ast.FloorDiv | ast.Mod) and right == 0:
        raise InvalidArgumentsError("division by zero")
    try:
        if isinstance(op, ast.Add):
            result: Number = left + right
        elif isinstance(op, ast.Sub):
            result = left - right
        elif isinstance(op, ast.Mult):
            # |left|, |right| <= 10**15, so the product is at most 10**30: cheap to
            # compute exactly, then bounded below.
            result = left * right
        elif isinstance(op, ast.Div):
            result = left / right
        elif isinstance(op, ast.FloorDiv):
            result = left // right
        elif isinstance(op, ast.Mod):
            result = left % right
        else:  # unreachable: _check_tree allows only the operators above
            raise InvalidArgumentsError(_operator_message(op))
    except ZeroDivisionError:
        raise InvalidArgumentsError("division by zero") from None
    except (OverflowError, ValueError):
        raise InvalidArgumentsError("number is not finite") from None
    return _check_number(result)


def _evaluate_node(node: ast.AST) -> Number:
    """Evaluate a tree already accepted by :func:`_check_tree` (depth <= MAX_DEPTH)."""
    if isinstance(node, ast.Constant):
        return _check_constant(node.value)
    if isinstance(node, ast.UnaryOp):
        operand = _evaluate_node(node.operand)
        if isinstance(node.op, ast.USub):
            return _check_number(-operand)
        if isinstance(node.op, ast.UAdd):
            return _check_number(+operand)
        raise InvalidArgumentsError(_operator_message(node.op))
    if isinstance(node, ast.BinOp):
        left = _evaluate_node(node.left)
        right = _evaluate_node(node.right)
        return _apply_binary(node.op, left, right)
    raise InvalidArgumentsError(_node_message(node))


def evaluate(expression: str) -> int | float:
    """Evaluate an arithmetic expression safely; see the module docstring for the contract.

    Args:
        expression: e.g. ``"12 * (3 + 2)"``; at most :data:`MAX_EXPRESSION_CHARS`
            characters. Surrounding whitespace is ignored.

    Returns:
        An ``int`` when only ``+ - * // %`` on ints were used, otherwise a ``float``
        (``/`` always yields a float). Its magnitude is at most :data:`MAX_MAGNITUDE`.

    Raises:
        InvalidArgumentsError: the input is not a string, is too long or too deeply
            nested, does not parse, uses anything outside the grammar, divides by
            zero, or a literal or any step is non-finite or exceeds
            :data:`MAX_MAGNITUDE`.
    """
    text = _check_text(expression)
    _check_tokens(text)
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        raise InvalidArgumentsError("not a valid arithmetic expression") from None
    _check_tree(tree.body)
    return _evaluate_node(tree.body)


def _check_tokens(text: str) -> None:
    """Refuse, before :func:`ast.parse` sees them, what makes the parser print a Python
    ``SyntaxWarning`` on stderr: a number glued to a name (``0x1for 2``: "invalid
    hexadecimal literal") and a string literal with a backslash (an invalid escape
    sequence).

    Raises:
        InvalidArgumentsError: either is present.
    """
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return  # ast.parse refuses it, with no warning
    for token, following in itertools.pairwise(tokens):
        if token.type == tokenize.STRING and "\\" in token.string:  # an escape
            raise InvalidArgumentsError("strings are not allowed")
        glued = token.end == following.start
        if token.type == tokenize.NUMBER and following.type == tokenize.NAME and glued:
            raise InvalidArgumentsError("not a valid arithmetic expression")


def _handle(expression: str) -> dict[str, Any]:
    """Tool handler: ``{"expression": <the input>, "result": <int | float>}``."""
    return {"expression": expression, "result": evaluate(expression)}


def calculator_tool() -> ToolSpec:
    """The ``calculator`` tool: a read-only spec whose handler calls :func:`evaluate`.

    Arguments: ``{"expression": str}`` (1-200 characters; no other properties).
    Result: ``{"expression": str, "result": int | float}``. Errors: kind
    ``invalid_arguments`` for every rejected expression. Limits: 2 s per call,
    1000 result characters.
    """
    return ToolSpec(
        name="calculator",
        description=(
            "Evaluate an arithmetic expression over int and float literals with "
            "+ - * / // % and parentheses, e.g. '12 * (3 + 2)'. No names, functions "
            "or exponentiation; every value must stay within 1e15 in magnitude."
        ),
        parameters={
            "type": "object",
            "properties": {
                "expression": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_EXPRESSION_CHARS,
                    "description": "The arithmetic expression, e.g. '7 / 2' or '-(3 + 4) % 5'.",
                },
            },
            "required": ["expression"],
        },
        handler=_handle,
        effect="read",
        timeout_seconds=2.0,
        max_result_chars=1000,
    )
