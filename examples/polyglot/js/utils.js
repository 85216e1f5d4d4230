'use strict';

function gcd(a, b) {
  while (b !== 0) {
    [a, b] = [b, a % b];
  }
  return Math.abs(a);
}

function isPrime(n) {
  if (n < 2) return false;
  for (let i = 2; i * i <= n; i++) {
    if (n % i === 0) return false;
  }
  return true;
}

const fibonacci = (n) => {
  let a = 0, b = 1;
  for (let i = 0; i < n; i++) {
    [a, b] = [b, a + b];
  }
  return a;
};

function reverseString(s) {
  return s.split('').reverse().join('');
}

function wordCount(text) {
  const counts = {};
  for (const word of text.toLowerCase().split(/\s+/).filter(Boolean)) {
    counts[word] = (counts[word] || 0) + 1;
  }
  return counts;
}

function fizzBuzz(n) {
  const out = [];
  for (let i = 1; i <= n; i++) {
    if (i % 15 === 0) out.push('FizzBuzz');
    else if (i % 3 === 0) out.push('Fizz');
    else if (i % 5 === 0) out.push('Buzz');
    else out.push(String(i));
  }
  return out;
}

function flatten(nested) {
  const result = [];
  for (const item of nested) {
    if (Array.isArray(item)) result.push(...flatten(item));
    else result.push(item);
  }
  return result;
}

function debounce(fn, waitMs) {
  let timer = null;
  return function (...args) {
    clearTimeout(timer);
    timer = setTimeout(() => fn.apply(this, args), waitMs);
  };
}

class EventBus {
  constructor() {
    this.handlers = {};
  }

  on(event, handler) {
    (this.handlers[event] = this.handlers[event] || []).push(handler);
  }
}

module.exports = { gcd, isPrime, fibonacci, reverseString, wordCount, fizzBuzz, flatten, debounce, EventBus };
