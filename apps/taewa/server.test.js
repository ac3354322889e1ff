'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { createServer, activityLog, work, iterations, MAX_N, ERROR_LINES_PER_SECOND } = require('./server');

test('answers the first 44 characters of the result sentence', async () => {
  const server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address();
    const res = await fetch(`http://127.0.0.1:${port}/?n=1000`);
    assert.strictEqual(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/plain/);
    const body = await res.text();
    assert.strictEqual(body.length, 44);
    assert.match(body, /^The result of this run is :  \d+\.\d+/);
    // 1000 products of two uniforms average 0.25 each, so the sum is near 250
    const value = Number(body.slice('The result of this run is :  '.length));
    assert.ok(value > 150 && value < 350, `sum ${value} out of range`);
  } finally {
    server.close();
  }
});

test('missing or empty n means zero iterations', () => {
  assert.strictEqual(iterations('/'), 0);
  assert.strictEqual(iterations('/?n='), 0);
  assert.strictEqual(iterations('/?n=12'), 12);
  assert.strictEqual(work(0), 'The result of this run is :  0');
});

test('bad n is a 400 naming the parameter and the value', async () => {
  const server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address();
    for (const q of ['n=abc', 'n=2OOOO', 'n=-5', 'n=1.5', `n=${MAX_N + 1}`, 'n=1&n=2']) {
      const res = await fetch(`http://127.0.0.1:${port}/?${q}`);
      assert.strictEqual(res.status, 400, q);
      assert.match(await res.text(), /^taewa: query parameter n must be a whole number/, q);
    }
  } finally {
    server.close();
  }
});

test('the activity log sums each second and bounds its error lines', async () => {
  const out = [];
  const err = [];
  const at = new Date('2026-11-26T05:00:00.000Z');
  const log = activityLog((l) => out.push(l), (l) => err.push(l), () => at);
  const server = createServer(log);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address();
    for (let i = 0; i < 3; i++) assert.strictEqual((await fetch(`http://127.0.0.1:${port}/?n=1`)).status, 200);
    const bad = ERROR_LINES_PER_SECOND + 5;
    for (let i = 0; i < bad; i++) assert.strictEqual((await fetch(`http://127.0.0.1:${port}/?n=x${i}`)).status, 400);
    log.flush();
    assert.deepStrictEqual(out, [`2026-11-26T05:00:00.000Z taewa: summary #1: ${3 + bad} requests in the last second, ${bad} bad (5 not logged)`]);
    assert.strictEqual(err.length, ERROR_LINES_PER_SECOND);
    assert.match(err[0], /^2026-11-26T05:00:00.000Z taewa: error: 400 for \/\?n=x0: taewa: query parameter n must be a whole number/);
    // a quiet second writes nothing, and the numbering counts written lines only
    log.flush();
    assert.strictEqual(out.length, 1);
    await fetch(`http://127.0.0.1:${port}/?n=1`);
    log.flush();
    assert.match(out[1], /taewa: summary #2: 1 requests in the last second, 0 bad$/);
  } finally {
    server.close();
  }
});
