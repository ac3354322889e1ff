// /cached's Redis side: cache-aside over K keys, hits and misses counted in
// Redis itself so that every instance of the web tier adds to the same two
// counters, which GET /stats reads and POST /flush empties with the cache.
'use strict';
const { createClient } = require('redis');
const { UpstreamError } = require('./upstream');

const HITS = 'frontier:hits';
const MISSES = 'frontier:misses';
// A command Redis has not answered in this long fails the request: a cache
// that hangs must not hold the client for the upstream timeout.
const COMMAND_TIMEOUT_MS = 5000;

class Cache {
  constructor({ host, port }, { keys, ttl }) {
    this.keys = keys;
    this.ttl = ttl;
    this.where = `${host}:${port}`;
    this.lastError = '';
    // Without an offline queue a command fails at once while Redis is
    // unreachable instead of waiting for it; reconnects back off to 1 s.
    this.client = createClient({
      socket: { host, port, connectTimeout: 2000, reconnectStrategy: (n) => Math.min(100 * (n + 1), 1000) },
      disableOfflineQueue: true,
    });
    this.client.on('error', (e) => {
      if (e.message !== this.lastError) console.error(`cached: redis ${this.where}: ${e.message}`);
      this.lastError = e.message;
    });
    this.client.on('ready', () => {
      this.lastError = '';
    });
  }

  // connect starts connecting (and reconnecting for as long as it takes)
  // without waiting: the web tier serves its other routes meanwhile.
  connect() {
    this.client.connect().catch((e) => console.error(`cached: redis ${this.where}: ${e.message}`));
  }

  close() {
    return this.client.isOpen ? this.client.disconnect() : Promise.resolve();
  }

  // key picks one of the K keys at random, as the study's load did.
  key() {
    return `frontier:cache:${1 + Math.floor(Math.random() * this.keys)}`;
  }

  // lookup answers the cached value of key, or null on a miss, counting
  // the hit or the miss.
  async lookup(key) {
    const value = await this.command((c) => c.get(key));
    await this.command((c) => c.incr(value === null ? MISSES : HITS));
    return value;
  }

  store(key, value) {
    return this.command((c) => c.set(key, value, { EX: this.ttl }));
  }

  async stats() {
    const [hits, misses] = await this.command((c) => c.mGet([HITS, MISSES]));
    return { hits: Number(hits || 0), misses: Number(misses || 0), keys: this.keys, ttl_s: this.ttl };
  }

  flush() {
    return this.command((c) => c.flushDb());
  }

  async command(fn) {
    if (!this.client.isReady) throw new UpstreamError(503, `cached: redis ${this.where} is not connected${this.lastError ? ` (${this.lastError})` : ''}`);
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new UpstreamError(504, `cached: no answer from redis ${this.where} within ${COMMAND_TIMEOUT_MS / 1000} s`)), COMMAND_TIMEOUT_MS);
    });
    try {
      return await Promise.race([fn(this.client), timeout]);
    } catch (e) {
      if (e instanceof UpstreamError) throw e;
      // the client still counted as ready when Redis went away under the
      // command (its socket ended mid-command): Redis is unavailable, as
      // when the client already knew it
      throw new UpstreamError(503, `cached: redis ${this.where} failed: ${e.message}`);
    } finally {
      clearTimeout(timer);
    }
  }
}

module.exports = { Cache, HITS, MISSES };
