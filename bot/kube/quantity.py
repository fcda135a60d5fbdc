"""Kubernetes resource quantities (`250m`, `16Mi`, `1e3`) as exact values.

The grammar is apimachinery's `resource.ParseQuantity`: an optionally signed decimal number whose
digits may be omitted (Kubernetes reads `Mi` or `.` as zero), then one suffix: a binary SI suffix
(`Ki` .. `Ei`), a decimal SI suffix (`n u m k M G T P E`), or a decimal exponent (`e3`, `E-2`).
Values are `Fraction`s so that `250m` and `0.25` compare equal and sums never round."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import lru_cache

_NUMBER_RE = re.compile(r"(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?")
_EXPONENT_RE = re.compile(r"[eE](?P<exp>[+-]?[0-9]+)")

BINARY_SUFFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
DECIMAL_SUFFIXES = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}

MAX_EXPONENT = 100
EXPECTED = "expected a number with an optional suffix such as 250m, 0.5, 16Mi, 1Gi, 1G or 1e3"


class QuantityError(ValueError):
    """A value Kubernetes would refuse as a quantity; the message says why."""

    def __init__(self, value: object, reason: str) -> None:
        super().__init__(f"{value!r} is not a Kubernetes quantity: {reason}")
        self.value = value
        self.reason = reason


def parse_quantity(value: str | int | float) -> Fraction:
    """The exact value of a quantity as a manifest writes it (YAML gives a string or a number)."""
    if isinstance(value, bool):  # bool is an int subclass; `cpu: true` is no quantity
        raise QuantityError(value, f"found a boolean; {EXPECTED}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return _from_float(value)
    if not isinstance(value, str):
        raise QuantityError(value, f"found {type(value).__name__}; {EXPECTED}")
    return _from_text(value)


def format_quantity(value: Fraction) -> str:
    """A compact rendering for messages: `250m`, `0.5`, `16Mi`, `3`."""
    if value.denominator == 1:
        whole = value.numerator
        for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
            if whole and whole % BINARY_SUFFIXES[suffix] == 0:
                return f"{whole // BINARY_SUFFIXES[suffix]}{suffix}"
        return str(whole)
    milli = value * 1000
    if milli.denominator == 1:
        return f"{milli.numerator}m"
    return str(Decimal(value.numerator) / Decimal(value.denominator))


def _from_float(value: float) -> Fraction:
    if not math.isfinite(value):
        raise QuantityError(value, f"found {value}; {EXPECTED}")
    # repr() is the shortest text that reads back as the same float: what the YAML said, not its
    # binary approximation (0.1 stays 1/10).
    return Fraction(Decimal(repr(value)))


@lru_cache(maxsize=4096)  # charts repeat a handful of values across every pod and profile
def _from_text(text: str) -> Fraction:
    if not text:
        raise QuantityError(text, f"the value is empty; {EXPECTED}")
    match = _NUMBER_RE.match(text)
    assert match is not None  # every part of the pattern is optional
    number = _number(match)
    suffix = text[match.end() :]
    if match.group("sign") == "-":
        number = -number
    return number * _multiplier(text, suffix)


def _number(match: re.Match[str]) -> Fraction:
    digits = (match.group("int") or "0") + "." + (match.group("frac") or "0")
    try:
        return Fraction(Decimal(digits))
    except InvalidOperation:  # pragma: no cover - the pattern admits only digits
        raise QuantityError(match.string, EXPECTED) from None


def _multiplier(text: str, suffix: str) -> Fraction:
    if suffix in BINARY_SUFFIXES:
        return Fraction(BINARY_SUFFIXES[suffix])
    if suffix in DECIMAL_SUFFIXES:
        return DECIMAL_SUFFIXES[suffix]
    exponent = _EXPONENT_RE.fullmatch(suffix)
    if exponent is not None:
        power = int(exponent.group("exp"))
        if abs(power) > MAX_EXPONENT:  # a hostile `1e999999999` must not stall the review
            raise QuantityError(text, f"exponent {power} is out of range")
        return Fraction(10) ** power
    raise QuantityError(text, f"unknown suffix {suffix!r}; {EXPECTED}")
