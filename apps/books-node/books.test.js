'use strict';
// Unit tests of the shared rules (no database needed).
const test = require('node:test');
const assert = require('node:assert');
const { ApiError, parseId, parseFields, parseNum, cpuIntensive } = require('./books');

const rejects = (fn, status, re) => assert.throws(fn, (e) => e instanceof ApiError && e.status === status && re.test(e.message));

test('ids', () => {
  assert.strictEqual(parseId('42'), 42);
  rejects(() => parseId('abc'), 400, /id must be an integer .* got "abc"/);
  rejects(() => parseId('-1'), 400, /got "-1"/);
  rejects(() => parseId('2147483648'), 400, /2147483647/);
});

test('bodies', () => {
  assert.deepStrictEqual(parseFields('{"title":"T","author":"A","year":1999}', false), { title: 'T', author: 'A', year: 1999 });
  rejects(() => parseFields('{"title":', false), 400, /not valid JSON/);
  rejects(() => parseFields('', false), 400, /not valid JSON/);
  rejects(() => parseFields('[1]', false), 400, /must be a JSON object/);
  rejects(() => parseFields('{"author":"A","year":1}', false), 400, /missing required field "title"/);
  assert.deepStrictEqual(parseFields('{"title":"something"}', false), { title: 'something' });
  rejects(() => parseFields('{"title":"T","author":"A","year":"x"}', false), 400, /"year" must be an integer/);
  rejects(() => parseFields('{"title":" ","author":"A","year":1}', false), 400, /"title" must be a non-empty string/);
  assert.deepStrictEqual(parseFields('{"year":2001}', true), { year: 2001 });
  rejects(() => parseFields('{}', true), 400, /names no field/);
});

test('cpu-intensive', () => {
  rejects(() => parseNum(undefined), 400, /required/);
  rejects(() => parseNum('x'), 400, /got "x"/);
  rejects(() => parseNum('11'), 400, /between 0 and 10/);
  assert.strictEqual(cpuIntensive(0), '{"num":0,"iterations":0,"result":0.000000}');
  // 2^7 = 128 iterations: the value books-kotlin must print too
  const got = JSON.parse(cpuIntensive(2));
  assert.strictEqual(got.iterations, 128);
  assert.ok(Number.isFinite(got.result) && got.result !== 0);
});
