'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { createApp, iterations, work, MAX_N } = require('./server');

async function withServer(fn) {
  const server = createApp().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    await fn(`http://127.0.0.1:${server.address().port}`);
  } finally {
    server.close();
  }
}

test('answers the first 44 characters of the result sentence through Express', async () => {
  await withServer(async (base) => {
    const res = await fetch(`${base}/?n=1000`);
    assert.strictEqual(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/plain/);
    assert.strictEqual(res.headers.get('x-powered-by'), null);
    const body = await res.text();
    assert.strictEqual(body.length, 44);
    assert.match(body, /^The result of this run is :  \d+\.\d+/);
    // 1000 products of two uniforms average 0.25 each, so the sum is near 250
    const value = Number(body.slice('The result of this run is :  '.length));
    assert.ok(value > 150 && value < 350, `sum ${value} out of range`);
  });
});

test('bad n is a 400 naming the parameter and the value', async () => {
  await withServer(async (base) => {
    for (const q of ['n=abc', 'n=-5', 'n=1.5', `n=${MAX_N + 1}`, 'n=1&n=2']) {
      const res = await fetch(`${base}/?${q}`);
      assert.strictEqual(res.status, 400, q);
      assert.match(await res.text(), /^riwai: query parameter n must be a whole number/, q);
    }
    assert.strictEqual((await fetch(`${base}/nope`)).status, 404);
  });
});

test('missing or empty n means zero iterations', () => {
  assert.strictEqual(iterations(undefined), 0);
  assert.strictEqual(iterations(''), 0);
  assert.strictEqual(iterations('12'), 12);
  assert.throws(() => iterations(['1', '2']), /whole number/);
  assert.strictEqual(work(0), 'The result of this run is :  0');
});
