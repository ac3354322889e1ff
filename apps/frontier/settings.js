// The web tier's settings, from the environment. A bad value stops the
// server with a message naming the variable, never a silent default.
'use strict';

const DEFAULTS = {
  HOST: '0.0.0.0',
  PORT: '8080',
  // the study's cache had 1, 10 or 20 keys
  CACHE_KEYS: '10',
  CACHE_TTL: '60',
  // the study's ELB idle timeout (see README: how the entry is modelled)
  IDLE_TIMEOUT: '60',
  UPSTREAM_TIMEOUT: '60',
};

class SettingError extends Error {}

function number(env, name, { low, high, whole }) {
  const raw = env[name] === undefined || env[name] === '' ? DEFAULTS[name] : env[name];
  const value = Number(raw);
  if (raw === undefined || String(raw).trim() === '' || !Number.isFinite(value) || value < low || value > high || (whole && !Number.isInteger(value))) {
    throw new SettingError(`${name} must be ${whole ? 'a whole number' : 'a number'} from ${low} to ${high}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

// address reads host:port (an upstream's address as the orchestrator
// gives it).
function address(env, name) {
  const raw = env[name];
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})$/.exec(raw || '');
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) {
    throw new SettingError(`${name} must be the upstream's host:port, got ${JSON.stringify(raw === undefined ? '' : raw)}`);
  }
  return { host: m[1].replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

// read returns the settings, or throws a SettingError naming the variable.
function read(env = process.env) {
  return {
    host: env.HOST || DEFAULTS.HOST,
    port: number(env, 'PORT', { low: 0, high: 65535, whole: true }),
    remote: address(env, 'REMOTE_ADDR'),
    pool: address(env, 'POOL_ADDR'),
    redis: address(env, 'REDIS_ADDR'),
    cacheKeys: number(env, 'CACHE_KEYS', { low: 1, high: 100000, whole: true }),
    cacheTTL: number(env, 'CACHE_TTL', { low: 1, high: 86400, whole: true }),
    idleTimeoutMs: 1000 * number(env, 'IDLE_TIMEOUT', { low: 0.1, high: 3600, whole: false }),
    upstreamTimeoutMs: 1000 * number(env, 'UPSTREAM_TIMEOUT', { low: 0.1, high: 3600, whole: false }),
  };
}

module.exports = { read, SettingError, DEFAULTS };
