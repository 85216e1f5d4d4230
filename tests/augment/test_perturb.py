"""Perturbations: parseability where claimed, the stated fraction, consistency, determinism, bad input."""

from __future__ import annotations

import re

import pytest

import conba.augment as P
from conba.augment import parses_cleanly, perturb
from conba.augment.syntax import leaves, parse
from helpers import TASKS

PY = """import sys
from math import gcd
input = sys.stdin.readline
def solve(values, k=2):
    total = 0
    for item in values:
        total += item * k
    values.append(total)
    return total
n = int(input())
arr = list(map(int, input().split()))
best = solve(arr)
print(f"{best} {n}", sorted(arr, key=len), gcd(n, best))
"""

JAVA = """import java.util.*;
public class Main {
    static int limit = 10;
    public static void main(String[] args) {
        Scanner sc = new Scanner(System.in);
        int n = sc.nextInt();
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = sc.nextInt();
        }
        int best = Math.max(a[0], limit);
        long sum = helper(a, best);
        System.out.println(sum + a.length);
    }
    static long helper(int[] xs, int cap) {
        long acc = 0;
        for (int x : xs) acc += Math.min(x, cap);
        return acc;
    }
}
"""

SNIPPETS = {
    "python": PY, "java": JAVA,
    "c": "#include <stdio.h>\n#define N 100\nint main(void) {\n  int n, s = 0;\n"
         "  scanf(\"%d\", &n);\n  int a = 3;\n  int b = N;\n  for (int j = 0; j < n; j++) s += j;\n"
         "  printf(\"%d\\n\", s + a + b);\n  return 0;\n}\n",
    "cpp": "#include <bits/stdc++.h>\nusing namespace std;\nint main() {\n  long long n; cin >> n;\n"
           "  vector<int> v(n);\n  int lo = 0;\n  int hi = 5;\n  for (auto &x : v) cin >> x;\n"
           "  sort(v.begin(), v.end());\n  cout << max(lo, hi) + v[0] << endl;\n}\n",
    "csharp": "using System;\nclass Program {\n  static void Main() {\n    var n = int.Parse(Console.ReadLine());\n"
              "    int total = 0;\n    int step = 2;\n    for (int i = 0; i < n; i++) total += i * step;\n"
              "    Console.WriteLine(total);\n  }\n}\n",
    "javascript": "function f(arr, n) {\n  let s = 0;\n  let t = 1;\n  for (const x of arr) { s += x; }\n"
                  "  console.log(s, t, n);\n  return s;\n}\n",
}

KEYWORDS_AND_LIBRARY = {
    "python": ["import", "def", "return", "print", "sorted", "len", "input", "append", "sys", "stdin", "gcd"],
    "java": ["public", "static", "Scanner", "nextInt", "Math", "max", "min", "System", "println", "length", "main"],
}


def _tokens(code: str, language: str) -> list[tuple[str, str]]:
    tree, src = parse(code, language)
    return [(leaf.type, src[leaf.start_byte:leaf.end_byte].decode()) for leaf in leaves(tree.root_node)]


@pytest.mark.parametrize("language", ["python", "java"])
@pytest.mark.parametrize("seed", range(5))
def test_renaming_keeps_python_and_java_parseable_and_is_consistent(language, seed):
    code = SNIPPETS[language]
    assert parses_cleanly(code, language)
    res = perturb(code, language, "synonym", 1.0, seed=seed)
    assert res.status == "ok" and res.applied == res.total > 3
    assert parses_cleanly(res.code, language)
    old, new = _tokens(code, language), _tokens(res.code, language)
    assert [t for t, _ in old] == [t for t, _ in new]  # same token kinds: only names changed
    mapping: dict[str, str] = {}
    for (_, a), (_, b) in zip(old, new):
        if a != b:
            assert mapping.setdefault(a, b) == b  # every occurrence renamed the same way
    assert len(set(mapping.values())) == len(mapping) == res.applied  # one new name per renamed name
    assert not set(mapping.values()) & {text for _, text in old}  # new names are fresh
    for kept in KEYWORDS_AND_LIBRARY[language]:
        assert kept not in mapping, f"{kept} must not be renamed"


def test_renaming_changes_the_stated_fraction_of_names():
    code = "".join(f"v{i} = {i}\n" for i in range(10)) + "print(" + " + ".join(f"v{i}" for i in range(10)) + ")\n"
    res = perturb(code, "python", "synonym", 0.3, seed=1)
    assert (res.applied, res.total) == (3, 10) and res.fraction == pytest.approx(0.3)
    changed = {a for a, b in zip(re.findall(r"\w+", code), re.findall(r"\w+", res.code)) if a != b}
    assert len(changed) == 3


def test_renaming_skips_members_keyword_arguments_and_called_library_names():
    code = "def f(key, max):\n    key.key = max\n    return sorted([], key=key)\nx = max(1, 2)\n"
    res = perturb(code, "python", "synonym", 1.0)
    # 'key' is also a member and a keyword argument; 'max' is called but is no function declared here
    assert res.total == 2  # only f and x
    assert re.findall(r"\bkey\b", res.code) == re.findall(r"\bkey\b", code)
    assert res.code.count("max") == code.count("max")
    assert not re.search(r"\bf\(|\bx =", res.code)


@pytest.mark.parametrize("language", sorted(SNIPPETS))
@pytest.mark.parametrize("kind", ["synonym", "insertion", "swap"])
@pytest.mark.parametrize("level", [0.05, 0.2, 0.5, 1.0])
def test_structural_perturbations_keep_clean_code_clean(language, kind, level):
    for seed in range(3):
        res = perturb(SNIPPETS[language], language, kind, level, seed=seed)
        assert res.status in ("ok", "unchanged")
        assert parses_cleanly(res.code, language), res.code


@pytest.mark.parametrize("task", sorted(TASKS))
@pytest.mark.parametrize("kind", ["synonym", "insertion", "swap"])
def test_tiny_tasks_in_every_language_stay_parseable(task, kind):
    for language, code in TASKS[task].items():
        res = perturb(code, language, kind, 1.0)
        assert parses_cleanly(res.code, language) == parses_cleanly(code, language)


@pytest.mark.parametrize("language,code", [
    ("kotlin", "fun f(xs: List<Int>, n: Int): Int {\n    val a = xs.size\n    var b = 0\n    return a + b + n\n}\n"),
    ("php", "<?php\nfunction f($xs, $n) {\n    $a = count($xs);\n    $b = 0;\n    return $a + $b + $n;\n}\n"),
    ("ruby", "def f(xs, n)\n  a = xs.size\n  b = 0\n  a + b + n\nend\n"),
    ("typescript", "function f(xs: number[], n: number): number {\n  const a = xs.length;\n  let b = 0;\n"
                   "  return a + b + n;\n}\n"),
])
def test_other_languages(language, code):
    assert parses_cleanly(code, language)
    for kind in ("synonym", "insertion", "swap"):
        res = perturb(code, language, kind, 1.0)
        assert res.status == "ok" and parses_cleanly(res.code, language), (kind, res.code)


def test_insertion_adds_the_stated_number_of_statements():
    code = "a = 1\nb = 2\nc = 3\nprint(a + b + c)\n"
    res = perturb(code, "python", "insertion", 0.5, seed=3)
    assert (res.applied, res.total) == (2, 4)
    tree, _ = parse(res.code, "python")
    assert len(tree.root_node.named_children) == 6  # module-level statements (if-blocks count as one)
    assert all(line in res.code for line in code.splitlines())  # nothing else changed
    java = perturb(JAVA, "java", "insertion", 1.0)
    assert java.applied == java.total and parses_cleanly(java.code, "java")


def test_swap_only_exchanges_independent_statements():
    dependent = "a = int(input())\nb = int(input())\nc = a + b\nd = c\nprint(d)\n"
    assert perturb(dependent, "python", "swap", 1.0).code == dependent  # I/O order and def/use
    independent = "x = 1\ny = 2\n"
    res = perturb(independent, "python", "swap", 1.0)
    assert res.code == "y = 2\nx = 1\n" and (res.applied, res.total) == (2, 2)
    heap = "a[0] = 1\nb = a[0]\n"
    assert perturb(heap, "python", "swap", 1.0).code == heap
    local_call = "def f():\n    return x\nx = 1\ny = f()\n"
    assert perturb(local_call, "python", "swap", 1.0).code == local_call
    java = "class A { void f() { int p = 1; int q = 2; System.out.println(p + q); } }\n"
    out = perturb(java, "java", "swap", 1.0).code
    assert "int q = 2; int p = 1;" in out and parses_cleanly(out, "java")


def test_deletion_removes_the_stated_fraction_without_gluing_tokens():
    code = "total = alpha+beta*gamma-delta/eps+zeta%eta\n"  # 15 tokens: nothing may merge when one goes
    n_tokens = len(re.findall(r"\w+|[^\w\s]", code))
    for seed in range(10):
        res = perturb(code, "python", "deletion", 0.2, seed=seed)
        assert res.total == n_tokens == 15 and res.applied == 3
        left = re.findall(r"\w+|[^\w\s]", res.code)
        assert len(left) == n_tokens - 3
        it = iter(re.findall(r"\w+|[^\w\s]", code))
        assert all(tok in it for tok in left)  # a subsequence of the original tokens


def test_macro_bodies_block_renaming_but_macro_parameters_do_not():
    code = ("#define rep(i,n) for(int i=0;i<n;i++)\n#define SQ(x) ((x)*(x)*k)\nint k = 2;\n"
            "int main() {\n  int n = 3, t = 0;\n  rep(j, n) t += SQ(j);\n  return t;\n}\n")
    res = perturb(code, "c", "synonym", 1.0)
    assert res.status == "ok"
    assert "int k = 2;" in res.code  # k is used inside a macro body: never renamed
    assert "#define rep(i,n) for(int i=0;i<n;i++)" in res.code  # macro text untouched
    assert not re.search(r"\bint n = 3\b", res.code) and res.applied >= 1  # the macro parameter n does not block


def test_deterministic_given_seed_and_level_zero_is_identity():
    for kind in P.PERTURBATIONS:
        a = perturb(PY, "python", kind, 0.2, seed=7)
        assert a == perturb(PY, "python", kind, 0.2, seed=7)
        assert perturb(PY, "python", kind, 0.0).code == PY
    outs = {perturb(PY, "python", "deletion", 0.2, seed=s).code for s in range(5)}
    assert len(outs) > 1


def test_unsupported_language_and_bad_input():
    res = perturb("some code here", "cobol", "synonym", 0.5)
    assert res.status == "unsupported" and res.code == "some code here"
    d = perturb("alpha beta gamma delta", "cobol", "deletion", 0.5)
    assert d.applied == 2 and d.total == 4 and len(d.code.split()) == 2
    with pytest.raises(ValueError, match="unknown perturbation"):
        perturb(PY, "python", "shuffle", 0.1)
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match="between 0 and 1"):
            perturb(PY, "python", "swap", bad)
    with pytest.raises(TypeError):
        perturb(b"x = 1", "python", "swap", 0.1)  # type: ignore[arg-type]


def test_an_edit_that_breaks_the_parse_is_reverted(monkeypatch):
    import conba.augment as mod

    monkeypatch.setattr(mod, "insert", lambda root, src, spec, level, rng: ("def (:\n", 1, 4))
    res = mod.perturb("a = 1\nb = 2\n", "python", "insertion", 0.5)
    assert res.status == "reverted" and res.code == "a = 1\nb = 2\n" and res.applied == 0
