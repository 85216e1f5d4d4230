"""The input view per language on small realistic files: license header, imports, comments, docs, a
helper that is called, one that is not, and a main. ``KEEP`` must survive both views, ``DROP`` neither,
``DOCS`` only ``code+docs``."""

import pytest

from conba.syntax import apply_view, apply_views

CASES = {
    "python": ('''#!/usr/bin/env python3
# Copyright (c) 2024 Jane Doe. Licensed under the MIT License.
"""Solves the task."""
import sys
from collections import deque  # queue


def gcd(a, b):
    """Greatest common divisor."""
    while b:
        a, b = b, a % b  # step
    return a


def unused(x):
    return x * 2


class UF:
    def __init__(self, n):
        self.p = list(range(n))

    def find(self, x):
        return x

    def size(self):
        return len(self.p)


if __name__ == "__main__":
    print(gcd(int(sys.argv[1]), 6), UF(3).find(1))
''', ["def gcd(a, b):", "def __init__", "def find", 'if __name__ == "__main__":'],
        ["Copyright", "import sys", "deque", "def unused", "def size", "#!"],
        ['"""Greatest common divisor."""', "# step"]),
    "java": ('''/*
 * Copyright 2024 Jane Doe
 * Licensed under the Apache License, Version 2.0
 */
package com.example;

import java.util.*;

/** Solution driver. */
public class Main {
    /** Greatest common divisor. */
    static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b); // recursion
    }

    static long unused(long x) { return x * 2; }

    public static void main(String[] args) {
        Scanner sc = new Scanner(System.in);
        System.out.println(gcd(sc.nextLong(), 6) + new Pair(1, 2).sum());
    }
}

class Pair {
    int x, y;
    Pair(int x, int y) { this.x = x; this.y = y; }
    int sum() { return x + y; }
    int diff() { return x - y; }
    @Override
    public String toString() { return x + " " + y; }
}
''', ["static long gcd", "public static void main", "Pair(int x, int y)", "int sum()", "toString"],
        ["Copyright", "package com.example", "import java", "unused", "int diff()"],
        ["/** Greatest common divisor. */", "// recursion"]),
    "c": ('''/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include "util.h"
#ifndef GUARD_H
#define GUARD_H
#endif
#define MAXN 100005
#define UNUSED_MACRO 42
typedef long long ll;
typedef unsigned long long ull;

/* Greatest common divisor. */
ll gcd(ll a, ll b) { return b ? gcd(b, a % b) : a; }
int unused(int x);
int unused(int x) { return x * 2; }

int main(void) {
    static ll a[MAXN];
    scanf("%lld", &a[0]);
    printf("%lld\\n", gcd(a[0], 6)); // answer
    return 0;
}
''', ["ll gcd(ll a, ll b)", "int main(void)", "typedef long long ll;", "#define MAXN", "#define GUARD_H"],
        ["SPDX", "#include", "UNUSED_MACRO", "ull", "unused"],
        ["/* Greatest common divisor. */", "// answer"]),
    "cpp": ('''// Copyright (c) 2024 Jane Doe
#include <bits/stdc++.h>
using namespace std;
using vi = vector<int>;
using pii = pair<int, int>;
#define rep(i, n) for (int i = 0; i < (n); i++)

/// Greatest common divisor.
template <typename T>
T gcd(T a, T b) { return b == 0 ? a : gcd(b, a % b); }

int unused(int x) { return x * 2; }

struct UF {
    vi p;
    UF(int n) : p(n) {}
    int find(int x) { return p[x] == x ? x : p[x] = find(p[x]); }
    int size() { return 0; }
    bool operator<(const UF& o) const { return false; }
};

int main() {
    UF uf(3);
    rep(i, 3) cout << gcd(i, 6) + uf.find(1) << endl;
}
''', ["T gcd(T a, T b)", "UF(int n)", "int find", "operator<", "using vi", "#define rep", "int main()"],
        ["Copyright", "#include", "using namespace std", "unused", "int size()", "pii"],
        ["/// Greatest common divisor."]),
    "csharp": ('''// Licensed under the MIT License.
using System;
using System.Linq;

namespace Contest;

/// <summary>Solution.</summary>
public static class Program
{
    static long Gcd(long a, long b) => b == 0 ? a : Gcd(b, a % b); // recursive

    static long Unused(long x) { return x * 2; }

    public static void Main(string[] args)
    {
        Console.WriteLine(Gcd(long.Parse(Console.ReadLine()), 6));
    }
}
''', ["static long Gcd", "public static void Main", "public static class Program"],
        ["Licensed", "using System", "namespace Contest", "Unused"],
        ["/// <summary>Solution.</summary>", "// recursive"]),
    "javascript": ('''/**
 * @license MIT
 * Copyright (c) 2024 Jane Doe
 */
import fs from 'fs'
const util = require('util')
const { inspect } = require('util')
const input = require('fs').readFileSync('/dev/stdin', 'utf8')

/** Greatest common divisor. */
function gcd(a, b) {
  return b === 0 ? a : gcd(b, a % b) // recursive
}

const unused = (x) => x * 2

function main() {
  console.log(gcd(Number(input), 6))
}

main()
''', ["function gcd(a, b)", "function main()", "main()", "readFileSync"],
        ["@license", "import fs", "require('util')", "unused"],
        ["/** Greatest common divisor. */", "// recursive"]),
    "typescript": ('''// Copyright (c) 2024 Jane Doe. MIT License.
import * as fs from 'fs';
import type { Foo } from './foo';

/** Greatest common divisor. */
export function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

function helper(x: number): number { return x + 1; }
function unused(x: number): number { return x * 2; }

console.log(gcd(helper(+fs.readFileSync(0, 'utf8')), 6));
''', ["export function gcd", "function helper", "console.log"],
        ["Copyright", "import", "unused"],
        ["/** Greatest common divisor. */"]),
    "go": ('''// Copyright 2024 Jane Doe. All rights reserved.

// Package main solves the task.
package main

import (
	"fmt"
)

// gcd returns the greatest common divisor.
func gcd(a, b int) int {
	if b == 0 {
		return a
	}
	return gcd(b, a%b)
}

func unused(x int) int { return x * 2 }

func main() {
	fmt.Println(gcd(12, 18))
}
''', ["func gcd(a, b int) int", "func main()"],
        ["Copyright", "package main", "import", '"fmt"\n', "unused"],
        ["// Package main solves the task.", "// gcd returns the greatest common divisor."]),
    "rust": ('''// Copyright 2024 Jane Doe
// Licensed under the MIT license
use std::io::{self, Read};
#[macro_use]
extern crate lazy_static;
mod util;

/// Greatest common divisor.
fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[inline]
fn unused(x: u64) -> u64 { x * 2 }

fn main() {
    let mut s = String::new();
    io::stdin().read_to_string(&mut s).unwrap();
    println!("{}", gcd(12, 18));
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn t() { assert_eq!(gcd(4, 6), 2); }
}
''', ["fn gcd(a: u64, b: u64)", "fn main()"],
        ["Copyright", "use std", "extern crate", "macro_use", "mod util", "unused", "#[inline]", "cfg(test)",
         "assert_eq"],
        ["/// Greatest common divisor."]),
    "kotlin": ('''/*
 * Copyright 2024 Jane Doe
 * Licensed under the Apache License 2.0
 */
package contest

import java.util.Scanner

/** Greatest common divisor. */
fun gcd(a: Long, b: Long): Long = if (b == 0L) a else gcd(b, a % b)

fun unused(x: Long): Long {
    return x * 2 // never called
}

fun main() {
    println(gcd(Scanner(System.`in`).nextLong(), 6L))
}
''', ["fun gcd(a: Long, b: Long)", "fun main()"],
        ["Copyright", "package contest", "import java", "unused", "never called"],
        ["/** Greatest common divisor. */"]),
    "php": ('''<?php
/**
 * Copyright (c) 2024 Jane Doe
 * @license MIT
 */
namespace App\\Contest;

use App\\Util\\Reader;
require_once __DIR__ . '/vendor/autoload.php';

/** Greatest common divisor. */
function gcd($a, $b) {
    return $b == 0 ? $a : gcd($b, $a % $b); // recursive
}

# never called
function unused($x) {
    return $x * 2;
}

$n = intval(trim(fgets(STDIN)));
echo gcd($n, 6), PHP_EOL;
''', ["<?php", "function gcd($a, $b)", "echo gcd($n, 6)"],
        ["Copyright", "namespace App", "use App", "require_once", "unused", "never called"],
        ["/** Greatest common divisor. */", "// recursive"]),
    "ruby": ('''# Copyright (c) 2024 Jane Doe
# Released under the MIT License.
require 'set'
require_relative 'lib/util'

# Greatest common divisor.
def gcd(a, b)
  b.zero? ? a : gcd(b, a % b) # recursive
end

def unused(x)
  x * 2
end

n = gets.to_i
puts gcd(n, 6)
''', ["def gcd(a, b)", "puts gcd(n, 6)", "n = gets.to_i"],
        ["Copyright", "require", "unused"],
        ["# Greatest common divisor.", "# recursive"]),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_view_per_language(language):
    source, keep, drop, docs = CASES[language]
    code = apply_view(source, language, "code")
    with_docs = apply_view(source, language, "code+docs")
    for text in keep:
        assert text in code and text in with_docs, f"{language}: lost {text!r}"
    for text in drop:
        assert text not in code and text not in with_docs, f"{language}: kept {text!r}"
    for text in docs:
        assert text not in code and text in with_docs, f"{language}: {text!r} wrong in one view"
    for out in (code, with_docs):
        assert out.endswith("\n") and not out.endswith("\n\n") and "\n\n\n\n" not in out
        assert all(line == line.rstrip() for line in out.split("\n"))
        assert apply_view(out, language, "code" if out is code else "code+docs") == out  # idempotent
    assert len(code) < len(with_docs) < len(source)


def test_python_exact_output():
    source, *_ = CASES["python"]
    assert apply_view(source, "python") == '''def gcd(a, b):
    while b:
        a, b = b, a % b
    return a


class UF:
    def __init__(self, n):
        self.p = list(range(n))

    def find(self, x):
        return x


if __name__ == "__main__":
    print(gcd(int(sys.argv[1]), 6), UF(3).find(1))
'''


def test_counts_and_determinism():
    languages = sorted(CASES)
    sources = [CASES[lang][0] for lang in languages]
    first, stats = apply_views(sources, languages, "code")
    again, stats2 = apply_views(sources, languages, "code")
    assert first == again and stats == stats2
    assert first == [apply_view(s, lang) for s, lang in zip(sources, languages)]
    assert stats.snippets == len(sources) and stats.fallbacks == 0
    # python: unused, UF.size; java: unused, diff; c: unused + its prototype; cpp: unused, size; csharp:
    # Unused; js: unused; ts: unused; go: unused; rust: unused; kotlin: unused; php: unused; ruby: unused
    assert stats.helpers_dropped == 2 + 2 + 2 + 2 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1
    assert stats.macros_dropped == 2 + 1  # c: UNUSED_MACRO, ull; cpp: pii
    assert stats.chars_before == sum(map(len, sources)) > stats.chars_after == sum(map(len, first))
