"""The safe calculator: grammar, limits, classified rejections, and the tool spec."""

from __future__ import annotations

import ast
import math
import warnings
from pathlib import Path

import pytest

from agent_contract.app.builtin_tools import calculator as calculator_module
from agent_contract.app.builtin_tools import calculator_tool, evaluate
from agent_contract.errors import InvalidArgumentsError
from agent_contract.tools import ToolSpec

GOOD = [
    pytest.param("12 * (3 + 2)", 60, id="seed-example"),
    pytest.param("7 / 2", 3.5, id="true-division"),
    pytest.param("4 / 2", 2.0, id="true-division-exact-is-float"),
    pytest.param("7 // 2", 3, id="floor-division"),
    pytest.param("-7 // 2", -4, id="floor-division-negative"),
    pytest.param("7.5 // 2", 3.0, id="floor-division-float"),
    pytest.param("-7 % 3", 2, id="modulo-sign-of-divisor"),
    pytest.param("+-3", -3, id="unary-plus-minus"),
    pytest.param("  42  ", 42, id="surrounding-whitespace"),
    pytest.param("1_000 * 3", 3000, id="underscore-literal"),
    pytest.param("0x10 + 1", 17, id="hex-literal"),
    pytest.param("1000000000000000", 10**15, id="literal-at-bound"),
    pytest.param("-1000000000000000", -(10**15), id="negative-literal-at-bound"),
    pytest.param("999999999999999 + 1", 10**15, id="result-at-bound"),
    pytest.param("1e15", 1e15, id="float-literal-at-bound"),
    pytest.param("(" * 32 + "1" + ")" * 32, 1, id="brackets-at-depth-limit"),
    pytest.param("-" * 31 + "1", -1, id="unary-chain-at-depth-limit"),
    pytest.param("1e-300 * 1e-300", 0.0, id="float-underflow-is-finite"),
]


@pytest.mark.parametrize(("expression", "expected"), GOOD)
def test_evaluates_arithmetic(expression: str, expected: int | float) -> None:
    result = evaluate(expression)
    assert result == expected
    assert type(result) is type(expected)


def test_float_addition_is_approximate() -> None:
    result = evaluate("0.1 + 0.2")
    assert isinstance(result, float)
    assert result == pytest.approx(0.3)


LONG = "1" * 201
REJECTED = [
    # code execution and names
    pytest.param("__import__('os').getcwd()", "function calls", id="import-call"),
    pytest.param("abs(-1)", "function calls", id="builtin-call"),
    pytest.param("x", "names", id="name"),
    pytest.param("\uff58", "names", id="fullwidth-name"),
    pytest.param("a.b", "attribute", id="attribute"),
    pytest.param("(1).real", "attribute", id="attribute-on-literal"),
    pytest.param("a[0]", "subscripts", id="subscript"),
    pytest.param("lambda: 1", "lambdas", id="lambda"),
    pytest.param("[x for x in ()]", "comprehensions", id="list-comprehension"),
    pytest.param("(x for x in ())", "comprehensions", id="generator"),
    pytest.param("(x := 1)", "assignment", id="walrus"),
    # other operators and expression kinds
    pytest.param("2 ** 1000000", "exponentiation", id="pow-huge"),
    pytest.param("9**9**9", "exponentiation", id="pow-tower"),
    pytest.param("1 < 2", "comparisons", id="comparison"),
    pytest.param("1 and 2", "boolean operators", id="bool-op"),
    pytest.param("not 1", "'not'", id="not"),
    pytest.param("1 if 1 else 2", "conditional", id="if-expression"),
    pytest.param("1 << 2", "'<<'", id="shift"),
    pytest.param("6 & 3", "'&'", id="bit-and"),
    pytest.param("~1", "'~'", id="invert"),
    # literals that are not finite int/float
    pytest.param("'a'*3", "strings", id="string-repeat"),
    pytest.param("f'{1}'", "strings", id="f-string"),
    pytest.param("b'a'", "bytes", id="bytes"),
    pytest.param("True + 1", "booleans", id="bool"),
    pytest.param("1j", "complex", id="complex"),
    pytest.param("None", "None", id="none"),
    pytest.param("...", "'...'", id="ellipsis"),
    pytest.param("[1,2]", "lists", id="list"),
    pytest.param("(1, 2)", "tuples", id="tuple"),
    pytest.param("{1}", "sets", id="set"),
    pytest.param("{1: 2}", "dicts", id="dict"),
    # division by zero
    pytest.param("1/0", "division by zero", id="div-zero"),
    pytest.param("5 % 0", "division by zero", id="mod-zero"),
    pytest.param("5 // 0", "division by zero", id="floordiv-zero"),
    pytest.param("1 / 0.0", "division by zero", id="div-float-zero"),
    pytest.param("1 / -0.0", "division by zero", id="div-negative-zero"),
    pytest.param("1 % (2 - 2)", "division by zero", id="mod-computed-zero"),
    # magnitude and finiteness, at every step
    pytest.param("(1e308*10)", "magnitude", id="float-literal-huge"),
    pytest.param("1" + "0" * 16, "magnitude", id="int-literal-10-pow-16"),
    pytest.param("1" + "0" * 199, "magnitude", id="int-literal-200-digits"),
    pytest.param("1e20", "magnitude", id="float-literal-1e20"),
    pytest.param("1000000000000001", "magnitude", id="literal-just-above-bound"),
    pytest.param("999999999999999 + 2", "magnitude", id="sum-just-above-bound"),
    pytest.param("-1000000000000000 - 1", "magnitude", id="difference-below-bound"),
    pytest.param("99999999 * 99999999 * 99999999", "magnitude", id="product-first-step"),
    pytest.param("99999999 * 99999999 // 99999999", "magnitude", id="intermediate-only"),
    pytest.param("(1e15 + 1e15) - 1e15", "magnitude", id="float-intermediate"),
    pytest.param("1e15 / 1e-300", "not finite", id="division-overflows-to-inf"),
    pytest.param("1e15 // 1e-300", "not finite", id="floordiv-overflows-to-inf"),
    pytest.param("1e999", "not finite", id="inf-literal"),
    # size and nesting
    pytest.param(LONG, "longer than 200", id="too-long"),
    pytest.param("1+" * 100 + "1", "longer than 200", id="too-long-sum"),
    pytest.param("(" * 100 + "1" + ")" * 100, "longer than 200", id="brackets-100"),
    pytest.param("-" * 1000 + "1", "longer than 200", id="unary-1000"),
    pytest.param("(" * 33 + "1" + ")" * 33, "nested deeper", id="brackets-33"),
    pytest.param("[" * 40 + "]" * 40, "nested deeper", id="square-brackets-40"),
    pytest.param("-" * 32 + "1", "nested deeper", id="unary-33-levels"),
    pytest.param("+".join(["1"] * 40), "nested deeper", id="long-flat-sum"),
    # not an expression at all
    pytest.param("", "empty", id="empty"),
    pytest.param("   ", "empty", id="blank"),
    pytest.param("1 +", "not a valid", id="incomplete"),
    pytest.param("1 = 2", "not a valid", id="assignment"),
    pytest.param("import os", "not a valid", id="statement"),
    pytest.param("1; 2", "not a valid", id="two-statements"),
    pytest.param("1\x00", "not a valid", id="nul-byte"),
    pytest.param("\uff11\uff12", "not a valid", id="fullwidth-digits"),
    pytest.param("1 +\n2", "not a valid", id="newline"),
]


@pytest.mark.parametrize(("expression", "fragment"), REJECTED)
def test_rejects_with_classified_error(expression: str, fragment: str) -> None:
    with pytest.raises(InvalidArgumentsError) as info:
        evaluate(expression)
    error = info.value
    assert type(error) is InvalidArgumentsError
    assert error.kind == "invalid_arguments"
    assert error.message
    assert fragment in error.message
    assert len(error.message) < 100


def test_parser_warnings_are_classified() -> None:
    # "1if" makes the 3.11+ tokenizer warn; with warnings as errors (pytest's
    # filterwarnings=error, or -W error) the parser turns the warning into a
    # SyntaxError, otherwise the node check rejects the conditional.
    with pytest.raises(InvalidArgumentsError) as info:
        evaluate("1if 1 else 2")
    assert info.value.kind == "invalid_arguments"


@pytest.mark.parametrize("value", [3, None, b"1+1", ["1"]], ids=["int", "none", "bytes", "list"])
def test_rejects_non_string_input(value: object) -> None:
    with pytest.raises(InvalidArgumentsError, match="must be a string"):
        evaluate(value)  # type: ignore[arg-type]


def test_every_rejection_is_refused_before_computing() -> None:
    # Nothing (9**9**9, huge products, deep nesting) is computed or recursed into: each
    # is refused as an error. How fast: benchmarks/bench_calculator.py.
    for param in REJECTED:
        expression = param.values[0]
        assert isinstance(expression, str)
        with pytest.raises(InvalidArgumentsError):
            evaluate(expression)


def test_results_are_always_finite_and_bounded() -> None:
    for param in GOOD:
        expression = param.values[0]
        assert isinstance(expression, str)
        result = evaluate(expression)
        assert math.isfinite(result)
        assert abs(result) <= calculator_module.MAX_MAGNITUDE


def test_limits_are_as_documented() -> None:
    assert calculator_module.MAX_EXPRESSION_CHARS == 200
    assert calculator_module.MAX_DEPTH == 32
    assert calculator_module.MAX_MAGNITUDE == 10**15


def test_module_source_never_executes_code() -> None:
    source = Path(calculator_module.__file__).read_text(encoding="utf-8")
    forbidden = {"eval", "exec", "compile", "__import__"}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else None
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id in {"builtins", "__builtins__"}
            ):
                name = func.attr
            assert name not in forbidden, f"line {node.lineno} calls {name}"


def test_tool_spec_shape() -> None:
    spec = calculator_tool()
    assert isinstance(spec, ToolSpec)
    assert spec.name == "calculator"
    assert spec.effect == "read"
    assert spec.timeout_seconds == 2.0
    assert spec.max_result_chars == 1000
    assert spec.description.strip()
    definition = spec.definition()
    assert definition["function"]["name"] == "calculator"
    properties = definition["function"]["parameters"]["properties"]
    assert properties["expression"]["maxLength"] == 200
    assert definition["function"]["parameters"]["required"] == ["expression"]


def test_tool_spec_validates_arguments() -> None:
    spec = calculator_tool()
    assert spec.validate({"expression": "1 + 1"}) is None
    wrong_type = spec.validate({"expression": 3})
    assert wrong_type is not None
    assert "$.expression" in wrong_type
    extra = spec.validate({"expression": "1", "extra": 1})
    assert extra is not None
    assert "extra" in extra
    assert spec.validate({}) is not None
    assert spec.validate({"expression": ""}) is not None
    assert spec.validate({"expression": "1" * 201}) is not None


def test_tool_handler_returns_expression_and_result() -> None:
    spec = calculator_tool()
    assert spec.handler(expression="12 * (3 + 2)") == {"expression": "12 * (3 + 2)", "result": 60}
    with pytest.raises(InvalidArgumentsError, match="function calls"):
        spec.handler(expression="__import__('os').getcwd()")


@pytest.mark.parametrize(
    "expression", ["0x1for 2", "1if 2else 3", "1or 2", "'\\d'", "1 + 0b1and 1"]
)
def test_refused_input_prints_no_python_warning(expression: str) -> None:
    """Input the parser would warn about (a number glued to a keyword, an escape in a
    string) is refused before it is parsed: nothing on stderr (issue 24, item 10).

    When it fails: a Python SyntaxWarning reached the user's terminal."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(InvalidArgumentsError):
            evaluate(expression)
    assert [str(w.message) for w in seen] == []
