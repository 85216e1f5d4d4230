"""A documented Python function for the mining tests (tests/train/test_mining.py and the lab's real-code mining
test)."""

PY = '''
def moving_total(values, window):
    """Sum every run of ``window`` consecutive values.

    Args:
        values: the numbers.
    """
    out = []
    for i in range(len(values) - window + 1):
        out.append(sum(values[i:i + window]))
    return out
'''
