"""The shipped default model against formatting and renaming (the real-code issue's acceptance):
the same function reformatted, or with its identifiers renamed, must score above the model's clone
threshold. A handful of real-world functions per language; the variants are written out by hand
(reformatting) or made by renaming whole-word identifiers (renaming).

This loads the shipped model (like the golden-vector tests); it encodes ~60 short snippets (seconds).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from conba.clones.threshold import model_clone_threshold

# language -> list of (original, reformatted, {old identifier: new identifier})
CASES: dict[str, list[tuple[str, str, dict[str, str]]]] = {
    "python": [
        ('def binary_search(items, target):\n    """Index of target in the sorted list, or -1."""\n'
         "    lo, hi = 0, len(items) - 1\n    while lo <= hi:\n        mid = (lo + hi) // 2\n"
         "        if items[mid] == target:\n            return mid\n        if items[mid] < target:\n"
         "            lo = mid + 1\n        else:\n            hi = mid - 1\n    return -1\n",
         'def binary_search( items,target ):\n  """Index of target in the sorted list, or -1."""\n'
         "  lo,hi=0,len(items)-1\n  while lo<=hi:\n    mid=(lo+hi)//2\n    if items[mid]==target: return mid\n"
         "    if items[mid]<target: lo=mid+1\n    else: hi=mid-1\n  return -1\n",
         {"binary_search": "find", "items": "xs", "target": "t", "lo": "a", "hi": "b", "mid": "m"}),
        ("def word_counts(text):\n    counts = {}\n    for word in text.lower().split():\n"
         "        word = word.strip('.,;:!?')\n        if word:\n            counts[word] = counts.get(word, 0) + 1\n"
         "    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))\n",
         "def word_counts(\n    text,\n):\n    counts = {}\n    for word in text.lower().split():\n"
         "        word = word.strip(\n            '.,;:!?'\n        )\n        if word:\n"
         "            counts[word] = (\n                counts.get(word, 0) + 1\n            )\n"
         "    return sorted(\n        counts.items(),\n        key=lambda kv: (-kv[1], kv[0]),\n    )\n",
         {"word_counts": "f", "text": "s", "counts": "d", "word": "w", "kv": "p"}),
    ],
    "java": [
        ("public static int gcd(int a, int b) {\n    while (b != 0) {\n        int t = a % b;\n        a = b;\n"
         "        b = t;\n    }\n    return Math.abs(a);\n}\n",
         "public static int gcd(int a,int b)\n{\n  while(b!=0)\n  {\n    int t=a%b; a=b; b=t;\n  }\n"
         "  return Math.abs(a);\n}\n",
         {"gcd": "g", "a": "x", "b": "y", "t": "tmp"}),
        ("public static boolean isPalindrome(String s) {\n    int i = 0, j = s.length() - 1;\n"
         "    while (i < j) {\n        if (s.charAt(i) != s.charAt(j)) {\n            return false;\n        }\n"
         "        i++;\n        j--;\n    }\n    return true;\n}\n",
         "public static boolean isPalindrome(String s)\n{\n\tint i = 0, j = s.length() - 1;\n\twhile (i < j)\n\t{\n"
         "\t\tif (s.charAt(i) != s.charAt(j)) return false;\n\t\ti++; j--;\n\t}\n\treturn true;\n}\n",
         {"isPalindrome": "check", "s": "str", "i": "left", "j": "right"}),
    ],
    "javascript": [
        ("function bubbleSort(arr) {\n  const a = arr.slice();\n  for (let i = 0; i < a.length; i++) {\n"
         "    for (let j = 0; j < a.length - i - 1; j++) {\n      if (a[j] > a[j + 1]) {\n"
         "        [a[j], a[j + 1]] = [a[j + 1], a[j]];\n      }\n    }\n  }\n  return a;\n}\n",
         "function bubbleSort (arr)\n{\n    const a = arr.slice()\n    for (let i = 0; i < a.length; i++)\n"
         "        for (let j = 0; j < a.length - i - 1; j++)\n            if (a[j] > a[j + 1])\n"
         "                [a[j], a[j + 1]] = [a[j + 1], a[j]]\n    return a\n}\n",
         {"bubbleSort": "sortIt", "arr": "input", "a": "out", "i": "p", "j": "q"}),
        ("function fibonacci(n) {\n  let prev = 0, curr = 1;\n  for (let k = 0; k < n; k++) {\n"
         "    const next = prev + curr;\n    prev = curr;\n    curr = next;\n  }\n  return prev;\n}\n",
         "function fibonacci(n){let prev=0,curr=1;for(let k=0;k<n;k++){const next=prev+curr;prev=curr;curr=next;}"
         "return prev;}\n",
         {"fibonacci": "seq", "n": "count", "prev": "x", "curr": "y", "next": "z", "k": "i"}),
    ],
    "cpp": [
        ("bool isPrime(long long n) {\n    if (n < 2) return false;\n    for (long long d = 2; d * d <= n; ++d) {\n"
         "        if (n % d == 0) return false;\n    }\n    return true;\n}\n",
         "bool isPrime(long long n)\n{\n  if (n < 2)\n  {\n    return false;\n  }\n"
         "  for (long long d = 2; d * d <= n; ++d)\n  {\n    if (n % d == 0)\n    {\n      return false;\n    }\n"
         "  }\n  return true;\n}\n",
         {"isPrime": "check", "n": "value", "d": "divisor"}),
        ("std::vector<int> prefixSums(const std::vector<int>& v) {\n"
         "    std::vector<int> out(v.size() + 1, 0);\n"
         "    for (size_t i = 0; i < v.size(); ++i) {\n        out[i + 1] = out[i] + v[i];\n    }\n"
         "    return out;\n}\n",
         "std::vector<int> prefixSums(const std::vector<int> &v)\n{\n\tstd::vector<int> out(v.size()+1,0);\n"
         "\tfor(size_t i=0;i<v.size();++i) out[i+1]=out[i]+v[i];\n\treturn out;\n}\n",
         {"prefixSums": "scan", "v": "values", "out": "acc", "i": "k"}),
    ],
    "rust": [
        ("fn factorial(n: u64) -> u64 {\n    let mut acc = 1;\n    for k in 2..=n {\n        acc *= k;\n    }\n"
         "    acc\n}\n",
         "fn factorial(n:u64)->u64{let mut acc=1;for k in 2..=n{acc*=k;}acc}\n",
         {"factorial": "fact", "n": "m", "acc": "product", "k": "i"}),
        ("fn reverse_words(s: &str) -> String {\n    s.split_whitespace().rev().collect::<Vec<_>>().join(\" \")\n}\n",
         "fn reverse_words(s: &str) -> String {\n    s.split_whitespace()\n        .rev()\n"
         "        .collect::<Vec<_>>()\n        .join(\" \")\n}\n",
         {"reverse_words": "flip", "s": "line"}),
    ],
}


def _rename(code: str, mapping: dict[str, str]) -> str:
    return re.sub(r"\b(" + "|".join(map(re.escape, mapping)) + r")\b", lambda m: mapping[m.group(1)], code)


def test_rename_helper_renames_whole_words_only():
    assert _rename("int a = ab + a;", {"a": "x"}) == "int x = ab + x;"


@pytest.fixture(scope="module")
def default_model():
    from conba.model import load_model

    return load_model("default")


def _scores(model, language: str, kind: str) -> np.ndarray:
    originals = [original for original, _, _ in CASES[language]]
    if kind == "reformatted":
        variants = [reformatted for _, reformatted, _ in CASES[language]]
    else:
        variants = [_rename(original, mapping) for original, _, mapping in CASES[language]]
        assert all(v != o for v, o in zip(variants, originals))
    a = model.encode(originals, languages=language)
    b = model.encode(variants, languages=language)
    return np.sum(a * b, axis=1)


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(CASES))
def test_reformatted_functions_stay_clones(default_model, language):
    threshold = model_clone_threshold(default_model)
    scores = _scores(default_model, language, "reformatted")
    assert scores.min() >= threshold, f"{language}: reformatted below the clone threshold {threshold:.3f}: {scores}"


# Known limitation of the shipped default (docs/BENCHMARKS.md, "Against the real-code issue's targets"):
# renaming every identifier to unrelated words moves the vector more than the clone threshold allows.
# Closing it needs training with renamed copies (conba experiment augment-data), which needs the GPU. strict:
# a model that passes turns these into failures, so the marker comes off with the fix.
@pytest.mark.xfail(strict=True, reason="renamed identifiers fall below the clone threshold (needs rename-augmented "
                                       "training)")
@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(CASES))
def test_renamed_functions_stay_clones(default_model, language):
    threshold = model_clone_threshold(default_model)
    scores = _scores(default_model, language, "renamed")
    assert scores.min() >= threshold, f"{language}: renamed below the clone threshold {threshold:.3f}: {scores}"

