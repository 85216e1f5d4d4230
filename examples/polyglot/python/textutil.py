"""Text utilities."""

import json


def reverse_string(s):
    return s[::-1]


def word_count(text):
    counts = {}
    for word in text.lower().split():
        counts[word] = counts.get(word, 0) + 1
    return counts


def flatten(nested):
    result = []
    for item in nested:
        if isinstance(item, list):
            result.extend(flatten(item))
        else:
            result.append(item)
    return result


def load_config(path):
    with open(path, encoding="utf-8") as fh:
        config = json.load(fh)
    config.setdefault("debug", False)
    return config
