"""Roman numerals: both ways, and whether a text is one."""

NUMERALS = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
            (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def to_roman(number):
    """Write a number from 1 to 3999 in Roman numerals."""
    if number < 1 or number > 3999:
        raise ValueError(f"out of range: {number}")
    parts = []
    for value, symbol in NUMERALS:
        while number >= value:
            parts.append(symbol)
            number -= value
    return "".join(parts)


def from_roman(text):
    """The value of a Roman numeral; a smaller symbol before a larger one is subtracted (IV = 4)."""
    total = 0
    for i, symbol in enumerate(text):
        value = VALUES[symbol]
        if i + 1 < len(text) and VALUES[text[i + 1]] > value:
            total -= value
        else:
            total += value
    return total


def is_roman(text):
    """True when the text is a Roman numeral written the usual way."""
    if not text or any(symbol not in VALUES for symbol in text):
        return False
    value = from_roman(text)
    return 1 <= value <= 3999 and to_roman(value) == text
