'use strict';
const test = require('node:test');
const assert = require('node:assert');
const net = require('node:net');
const { createClient } = require('redis');
const settings = require('./settings');
const { HELLO } = require('./server');
const { freePort, startRedis, startService, startWeb } = require('./testenv');

// get times one request: status, body, headers and when it ended (ms since began).
async function get(url, began = performance.now(), init = {}) {
  const res = await fetch(url, init);
  const body = await res.text();
  return { status: res.status, body, headers: res.headers, ended: performance.now() - began };
}

const REMOTE_BODY = /^\{"from":"remote","request":[0-9]+,"work_ms":[0-9]+\}$/;

test('frontier against real Redis, remote service and pool', async (t) => {
  const redis = await startRedis();
  const remote = await startService('remote.py');
  const pool = await startService('pool.py', { POOL_CONCURRENCY: '2', POOL_COLD_START: '0.3', POOL_IDLE_REAP: '0' });
  const web = await startWeb({ REMOTE_ADDR: remote.addr, POOL_ADDR: pool.addr, REDIS_ADDR: redis.addr, CACHE_KEYS: '1' });
  t.after(async () => {
    await web.stop();
    await Promise.all([redis.stop(), remote.stop(), pool.stop()]);
  });

  await t.test('/ says hello', async () => {
    const r = await get(`${web.base}/`);
    assert.strictEqual(r.status, 200);
    assert.strictEqual(r.body, HELLO);
    assert.strictEqual(r.headers.get('x-powered-by'), null);
    assert.strictEqual(r.headers.get('x-served-by'), new URL(web.base).host, 'the instance names its own listening address');
  });

  await t.test('/remote serves one request at a time: the second waits for the first', async () => {
    const began = performance.now();
    const both = await Promise.all([get(`${web.base}/remote`, began), get(`${web.base}/remote`, began)]);
    both.sort((a, b) => a.ended - b.ended);
    for (const r of both) {
      assert.strictEqual(r.status, 200);
      assert.match(r.body, REMOTE_BODY);
      assert.match(r.headers.get('content-type'), /^application\/json/);
    }
    const [first, second] = both.map((r) => JSON.parse(r.body));
    assert.strictEqual(second.request, first.request + 1, 'served in turn by the one worker');
    assert.ok(both[0].ended >= 740 && both[0].ended < 1100, `first answered after ${both[0].ended} ms, want about 750`);
    const gap = both[1].ended - both[0].ended;
    assert.ok(gap >= 650 && gap < 1000, `second answered ${gap} ms after the first, want about 750`);
  });

  await t.test('/cached counts hits and misses in Redis; /flush resets them', async () => {
    let r = await get(`${web.base}/flush`, undefined, { method: 'POST' });
    assert.strictEqual(r.status, 200);
    assert.deepStrictEqual(JSON.parse(r.body).cache, { hits: 0, misses: 0, keys: 1, ttl_s: 60 });
    const miss = await get(`${web.base}/cached`);
    assert.strictEqual(miss.status, 200);
    assert.strictEqual(miss.headers.get('x-cache'), 'miss');
    assert.match(miss.body, REMOTE_BODY);
    assert.ok(miss.ended >= 740, `a miss calls the remote service (${miss.ended} ms)`);
    for (let i = 0; i < 3; i++) {
      const hit = await get(`${web.base}/cached`);
      assert.strictEqual(hit.headers.get('x-cache'), 'hit');
      assert.strictEqual(hit.body, miss.body, 'a hit answers what the miss stored');
      assert.ok(hit.ended < 200, `a hit does not wait for the remote service (${hit.ended} ms)`);
    }
    r = await get(`${web.base}/stats`);
    assert.strictEqual(r.status, 200);
    assert.deepStrictEqual(JSON.parse(r.body).cache, { hits: 3, misses: 1, keys: 1, ttl_s: 60 });
    r = await get(`${web.base}/flush`, undefined, { method: 'POST' });
    assert.deepStrictEqual(JSON.parse(r.body).cache, { hits: 0, misses: 0, keys: 1, ttl_s: 60 });
    const again = await get(`${web.base}/cached`);
    assert.strictEqual(again.headers.get('x-cache'), 'miss', 'the flush emptied the cache');
    assert.deepStrictEqual(JSON.parse((await get(`${web.base}/stats`)).body).cache, { hits: 0, misses: 1, keys: 1, ttl_s: 60 });
    r = await get(`${web.base}/flush`);
    assert.strictEqual(r.status, 405);
    assert.strictEqual(r.headers.get('allow'), 'POST');
  });

  await t.test('/alternate: one invocation per request, cold starts, the concurrency limit as a 429', async () => {
    await get(`${web.base}/flush`, undefined, { method: 'POST' });
    const began = performance.now();
    const three = await Promise.all([1, 2, 3].map(() => get(`${web.base}/alternate`, began)));
    const served = three.filter((r) => r.status === 200);
    const throttled = three.filter((r) => r.status !== 200);
    assert.strictEqual(served.length, 2, three.map((r) => `${r.status} ${r.body}`).join('; '));
    assert.strictEqual(throttled.length, 1);
    assert.strictEqual(throttled[0].status, 429);
    assert.match(throttled[0].body, /^alternate: the function pool throttled the invocation/);
    assert.ok(throttled[0].ended < 300, `a throttle answers at once (${throttled[0].ended} ms)`);
    for (const r of served) {
      const a = JSON.parse(r.body);
      assert.strictEqual(a.from, 'pool');
      assert.strictEqual(a.cold, true);
      // a cold start of 0.3 s before the 0.75 s of work, side by side
      assert.ok(r.ended >= 1040 && r.ended < 1500, `a cold invocation took ${r.ended} ms, want about 1050`);
    }
    const warm = await get(`${web.base}/alternate`);
    assert.strictEqual(warm.status, 200);
    assert.strictEqual(JSON.parse(warm.body).cold, false);
    assert.ok(warm.ended >= 740 && warm.ended < 1000, `a warm invocation took ${warm.ended} ms, want about 750`);
    const g = JSON.parse((await get(`${web.base}/stats`)).body).pool;
    assert.strictEqual(g.peak_in_flight, 2);
    assert.strictEqual(g.peak_instances, 2);
    assert.strictEqual(g.in_flight, 0);
    assert.strictEqual(g.invocations, 3);
    assert.strictEqual(g.cold_starts, 2);
    assert.strictEqual(g.throttles, 1);
    assert.strictEqual(g.concurrency_limit, 2);
  });
});

test('/cached spreads over K keys and a key expires after its TTL', async (t) => {
  const redis = await startRedis();
  const remote = await startService('remote.py', { REMOTE_SECONDS: '0.02' });
  const pool = await startService('pool.py', { POOL_COLD_START: '0' });
  const web = await startWeb({ REMOTE_ADDR: remote.addr, POOL_ADDR: pool.addr, REDIS_ADDR: redis.addr, CACHE_KEYS: '20', CACHE_TTL: '1' });
  t.after(async () => {
    await web.stop();
    await Promise.all([redis.stop(), remote.stop(), pool.stop()]);
  });
  const bodies = new Set();
  for (let i = 0; i < 200; i++) bodies.add((await get(`${web.base}/cached`)).body);
  let c = JSON.parse((await get(`${web.base}/stats`)).body).cache;
  assert.strictEqual(c.hits + c.misses, 200);
  // each key misses once while it lives (1 s): 20 keys make up to 20 misses
  // in the first second; 200 draws miss a given key with probability 3.5e-5
  assert.ok(c.misses >= 20 && c.misses <= 60, `${c.misses} misses`);
  assert.ok(bodies.size >= 20, `${bodies.size} distinct answers, want one per key at least`);
  await new Promise((r) => setTimeout(r, 1100));
  await get(`${web.base}/flush`, undefined, { method: 'POST' });
  for (let i = 0; i < 20; i++) await get(`${web.base}/cached`);
  c = JSON.parse((await get(`${web.base}/stats`)).body).cache;
  assert.ok(c.misses >= 1 && c.misses <= 20, `${c.misses} misses`);
  assert.strictEqual(c.keys, 20);
});

test('a failing upstream is a clear non-2xx, never an empty 200', async (t) => {
  const redis = await startRedis();
  const remote = await startService('remote.py');
  const closed = await freePort();
  const unreachableRedis = await freePort();
  // the remote answers in 0.75 s, after the 0.3 s upstream timeout
  const slow = await startWeb({ REMOTE_ADDR: remote.addr, POOL_ADDR: `127.0.0.1:${closed}`, REDIS_ADDR: redis.addr, UPSTREAM_TIMEOUT: '0.3' });
  const noRedis = await startWeb({ REMOTE_ADDR: `127.0.0.1:${closed}`, POOL_ADDR: `127.0.0.1:${closed}`, REDIS_ADDR: `127.0.0.1:${unreachableRedis}` });
  t.after(async () => {
    await slow.stop();
    await noRedis.stop();
    await Promise.all([redis.stop(), remote.stop()]);
  });
  const cases = [
    [slow, '/remote', 504, /^remote: no answer from 127\.0\.0\.1:[0-9]+ within 0\.3 s\n$/],
    [slow, '/alternate', 502, new RegExp(`^alternate: connection refused by 127\\.0\\.0\\.1:${closed}\\n$`)],
    [slow, '/cached', 504, /^remote: no answer from .* within 0\.3 s\n$/],
    [noRedis, '/remote', 502, new RegExp(`^remote: connection refused by 127\\.0\\.0\\.1:${closed}\\n$`)],
    [noRedis, '/cached', 503, new RegExp(`^cached: redis 127\\.0\\.0\\.1:${unreachableRedis} is not connected`)],
    [noRedis, '/stats', 502, /^pool: connection refused/],
  ];
  for (const [web, route, status, body] of cases) {
    const r = await get(`${web.base}${route}`);
    assert.strictEqual(r.status, status, `${route}: ${r.status} ${r.body}`);
    assert.match(r.body, body, route);
    assert.match(r.headers.get('content-type'), /^text\/plain/, route);
  }
  // a miss whose remote call failed stores nothing, but counts as a miss
  const direct = createClient({ socket: { host: '127.0.0.1', port: redis.port } });
  await direct.connect();
  assert.deepStrictEqual(await direct.keys('frontier:cache:*'), []);
  assert.strictEqual(await direct.get('frontier:misses'), '1');
  await direct.disconnect();
  // any other status of an upstream is an error too
  const remoteAsPool = await startWeb({ REMOTE_ADDR: remote.addr, POOL_ADDR: remote.addr, REDIS_ADDR: redis.addr });
  t.after(() => remoteAsPool.stop());
  const wrong = await get(`${remoteAsPool.base}/alternate`);
  assert.strictEqual(wrong.status, 502);
  assert.match(wrong.body, /^alternate: the upstream answered 501\n$/);
});

test('an idle connection is closed after the idle timeout, as the study\'s ELB did', async (t) => {
  const web = await startWeb({ REMOTE_ADDR: '127.0.0.1:1', POOL_ADDR: '127.0.0.1:1', REDIS_ADDR: '127.0.0.1:1', IDLE_TIMEOUT: '1' });
  t.after(() => web.stop());
  assert.strictEqual(web.server.keepAliveTimeout, 1000);
  const port = Number(new URL(web.base).port);
  const { closedAfter, answer } = await new Promise((resolve, reject) => {
    const c = net.connect(port, '127.0.0.1');
    let answeredAt = 0;
    let text = '';
    c.on('error', reject);
    c.on('connect', () => c.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    c.on('data', (d) => {
      text += d;
      if (!answeredAt) answeredAt = performance.now();
    });
    c.on('close', () => resolve({ closedAfter: performance.now() - answeredAt, answer: text }));
  });
  assert.match(answer, /\r\nKeep-Alive: timeout=1\r\n/);
  // Node keeps an idle connection one second past the timeout it advertises
  assert.ok(closedAfter >= 950 && closedAfter < 2300, `closed ${closedAfter} ms after the answer, want 1 to 2 s`);
  // the default is the ELB's 60 s
  assert.strictEqual(settings.read({ REMOTE_ADDR: 'a:1', POOL_ADDR: 'b:2', REDIS_ADDR: 'c:3' }).idleTimeoutMs, 60000);
});

test('a bad setting names the variable', () => {
  const good = { REMOTE_ADDR: 'remote:8080', POOL_ADDR: '10.0.0.2:9000', REDIS_ADDR: '[::1]:6379' };
  const s = settings.read(good);
  assert.deepStrictEqual([s.remote, s.pool, s.redis, s.cacheKeys, s.cacheTTL, s.upstreamTimeoutMs],
    [{ host: 'remote', port: 8080 }, { host: '10.0.0.2', port: 9000 }, { host: '::1', port: 6379 }, 10, 60, 60000]);
  for (const [env, want] of [
    [{ CACHE_KEYS: '0' }, /^CACHE_KEYS must be a whole number from 1 to 100000, got "0"$/],
    [{ CACHE_KEYS: '2.5' }, /^CACHE_KEYS must be a whole number/],
    [{ CACHE_TTL: 'soon' }, /^CACHE_TTL must be a whole number/],
    [{ UPSTREAM_TIMEOUT: '-1' }, /^UPSTREAM_TIMEOUT must be a number from 0\.1 to 3600/],
    [{ IDLE_TIMEOUT: ' ' }, /^IDLE_TIMEOUT must be a number/],
    [{ REMOTE_ADDR: 'remote' }, /^REMOTE_ADDR must be the upstream's host:port, got "remote"$/],
    [{ POOL_ADDR: '' }, /^POOL_ADDR must be the upstream's host:port, got ""$/],
    [{ REDIS_ADDR: 'redis:99999' }, /^REDIS_ADDR must be the upstream's host:port/],
  ]) {
    assert.throws(() => settings.read({ ...good, ...env }), (e) => e instanceof settings.SettingError && want.test(e.message), JSON.stringify(env));
  }
});
