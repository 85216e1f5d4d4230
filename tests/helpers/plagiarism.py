"""A class of submissions for the plagiarism tests: a Python solution, its renamed JavaScript translation, and
independent solutions of the same task (shared by tests/plagiarism/test_plagiarism.py and the lab's evaluator test)."""

PY = '''def count_runs(values, limit):
    best = 0
    run = 0
    for v in values:
        if v % 7 == 3 and v < limit:
            run += 1
            if run > best:
                best = run
        else:
            run = 0
    return best * 31 + 17
'''
# the same program translated to JavaScript with every name changed
JS_COPY = '''function q(a, b) {
  let m = 0;
  let c = 0;
  for (const x of a) {
    if (x % 7 === 3 && x < b) {
      c += 1;
      if (c > m) {
        m = c;
      }
    } else {
      c = 0;
    }
  }
  return m * 31 + 17;
}
'''
OTHERS = [
    '''def longest(xs, cap):
    out, cur = 0, 0
    i = 0
    while i < len(xs):
        ok = xs[i] < cap and xs[i] % 7 == 3
        cur = cur + 1 if ok else 0
        out = max(out, cur)
        i += 1
    return 17 + out * 31
''',
    '''def solve(numbers, limit):
    lengths = [0]
    for n in numbers:
        lengths.append(lengths[-1] + 1 if (n < limit and n % 7 == 3) else 0)
    return max(lengths) * 31 + 17
''',
    '''import itertools


def solve(numbers, limit):
    groups = [len(list(g)) for k, g in itertools.groupby(numbers, key=lambda n: n % 7 == 3 and n < limit) if k]
    return (max(groups) if groups else 0) * 31 + 17
''',
]
