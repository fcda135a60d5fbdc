from __future__ import annotations

from fractions import Fraction

import pytest

from bot.kube.quantity import QuantityError, format_quantity, parse_quantity


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("250m", Fraction(1, 4)),
        ("0.25", Fraction(1, 4)),
        (".25", Fraction(1, 4)),
        ("1.", Fraction(1)),
        ("16Mi", Fraction(16 * 2**20)),
        ("16777216", Fraction(16777216)),
        ("1Gi", Fraction(2**30)),
        ("1G", Fraction(10**9)),
        ("1e3", Fraction(1000)),
        ("1E3", Fraction(1000)),
        ("1e-3", Fraction(1, 1000)),
        ("1.5e+2", Fraction(150)),
        ("100k", Fraction(100_000)),
        ("1Ki", Fraction(1024)),
        ("2Ti", Fraction(2 * 2**40)),
        ("1Pi", Fraction(2**50)),
        ("1Ei", Fraction(2**60)),
        ("1E", Fraction(10**18)),
        ("5n", Fraction(5, 10**9)),
        ("5u", Fraction(5, 10**6)),
        ("3M", Fraction(3 * 10**6)),
        ("3T", Fraction(3 * 10**12)),
        ("3P", Fraction(3 * 10**15)),
        ("+2", Fraction(2)),
        ("-2", Fraction(-2)),
        ("0", Fraction(0)),
        ("0m", Fraction(0)),
        ("0.1", Fraction(1, 10)),
        # apimachinery reads a missing number as zero: `{{ .Values.mem }}Mi` with no value is 0
        ("Mi", Fraction(0)),
    ],
)
def test_parses_kubernetes_quantities(text: str, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        (2, Fraction(2)),
        (0, Fraction(0)),
        (0.5, Fraction(1, 2)),
        (0.1, Fraction(1, 10)),
        (1e3, 1000),
    ],
)
def test_yaml_numbers_are_exact(raw: int | float, value: Fraction) -> None:
    assert parse_quantity(raw) == value


def test_equal_values_in_different_notations_compare_equal() -> None:
    assert parse_quantity("250m") == parse_quantity("0.25") == parse_quantity(0.25)
    assert parse_quantity("16Mi") == parse_quantity("16777216") == parse_quantity(16777216)
    assert parse_quantity("1e3") == parse_quantity("1k") == parse_quantity(1000)
    assert parse_quantity("1Gi") != parse_quantity("1G")


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("1.5cores", "unknown suffix 'cores'"),
        ("1K", "unknown suffix 'K'"),
        ("1mi", "unknown suffix 'mi'"),
        ("1e", "unknown suffix 'e'"),
        ("1.2.3", "unknown suffix '.3'"),
        (" 1", "unknown suffix ' 1'"),
        ("1 Gi", "unknown suffix ' Gi'"),
        ("", "the value is empty"),
        ("1e999999", "exponent 999999 is out of range"),
    ],
)
def test_malformed_text_raises_with_the_reason(raw: str, reason: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(raw)
    assert info.value.reason.startswith(reason)
    assert str(info.value).startswith(f"{raw!r} is not a Kubernetes quantity: {reason}")


@pytest.mark.parametrize("raw", [True, float("nan"), float("inf"), [1], {"a": 1}])
def test_non_quantity_values_raise(raw: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(raw)  # type: ignore[arg-type]


def test_quantity_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not a Kubernetes quantity"):
        parse_quantity("lots")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Fraction(1, 4), "250m"),
        (Fraction(16 * 2**20), "16Mi"),
        (Fraction(2**30), "1Gi"),
        (Fraction(3), "3"),
        (Fraction(0), "0"),
        (Fraction(1, 3), "0.3333333333333333333333333333"),
        (Fraction(10**9), "1000000000"),
    ],
)
def test_format_quantity(value: Fraction, text: str) -> None:
    assert format_quantity(value) == text
