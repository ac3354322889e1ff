'use strict';
// books-node: study 004's Node/Express + sequelize service on PostgreSQL.
// Routes: POST/GET /books, GET/PATCH/DELETE /books/:id, GET /cpu-intensive?num=N.
// Every error is {"error": "<message>"}; see README.md for the table.
const express = require('express');
const { Sequelize, DataTypes } = require('sequelize');
const { ApiError, parseId, parseFields, parseNum, cpuIntensive, toJson } = require('./books');

const env = process.env;
const port = Number(env.PORT || 8080);
// HOST: the address to listen on (the pack gives the instance's own); all by default
const host = env.HOST || undefined;
const waitSeconds = Number(env.DB_WAIT_SECONDS || 120);

// dbAddress: DB_ADDR (host:port, as the pack's template renders it) or
// DB_HOST and DB_PORT.
function dbAddress() {
  if (env.DB_ADDR) {
    const i = env.DB_ADDR.lastIndexOf(':');
    if (i <= 0) throw new Error(`DB_ADDR ${JSON.stringify(env.DB_ADDR)} is not host:port`);
    return { host: env.DB_ADDR.slice(0, i), port: Number(env.DB_ADDR.slice(i + 1)) };
  }
  return { host: env.DB_HOST || '127.0.0.1', port: Number(env.DB_PORT || 5432) };
}
const db = dbAddress();

const sequelize = new Sequelize(env.DB_NAME || 'books', env.DB_USER || 'books', env.DB_PASSWORD || 'books', {
  host: db.host,
  port: db.port,
  dialect: 'postgres',
  logging: false,
  // the same pool size as books-kotlin's Hikari pool
  pool: { max: Number(env.DB_POOL || 10), min: 0, idle: 10000 },
});

// The one table, as books-kotlin's JPA entity declares it.
const Book = sequelize.define('Book', {
  id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
  title: { type: DataTypes.TEXT, allowNull: false },
  author: { type: DataTypes.TEXT, allowNull: true },
  year: { type: DataTypes.INTEGER, allowNull: true },
}, { tableName: 'books', timestamps: false });

function app() {
  const a = express();
  a.disable('x-powered-by');
  // The body is kept as text and parsed by parseFields whatever its
  // Content-Type, so both apps judge the same bytes the same way.
  a.use(express.text({ type: () => true, limit: '100kb' }));
  const route = (fn) => (req, res, next) => Promise.resolve(fn(req, res)).catch(next);
  const find = async (id) => {
    const b = await Book.findByPk(id);
    if (!b) throw new ApiError(404, `book ${id} not found`);
    return b;
  };

  a.post('/books', route(async (req, res) => {
    const f = parseFields(req.body, false);
    res.status(201).json(toJson(await Book.create(f)));
  }));
  a.get('/books', route(async (req, res) => {
    res.json((await Book.findAll({ order: [['id', 'ASC']] })).map(toJson));
  }));
  a.get('/books/:id', route(async (req, res) => {
    res.json(toJson(await find(parseId(req.params.id))));
  }));
  a.patch('/books/:id', route(async (req, res) => {
    const id = parseId(req.params.id);
    const f = parseFields(req.body, true);
    const b = await find(id);
    res.json(toJson(await b.update(f)));
  }));
  a.delete('/books/:id', route(async (req, res) => {
    const b = await find(parseId(req.params.id));
    await b.destroy();
    res.status(204).end();
  }));
  a.get('/cpu-intensive', route(async (req, res) => {
    res.type('application/json').send(cpuIntensive(parseNum(req.query.num)));
  }));
  // a known path with another method, then any other path
  a.all(['/books', '/books/:id', '/cpu-intensive'], (req, res) => {
    res.status(405).json({ error: `method ${req.method} is not allowed on ${req.path}` });
  });
  a.use((req, res) => {
    res.status(404).json({ error: `no route ${req.method} ${req.path}` });
  });
  // eslint-disable-next-line no-unused-vars
  a.use((err, req, res, next) => {
    if (err instanceof ApiError) return res.status(err.status).json({ error: err.message });
    if (err.type === 'entity.too.large') return res.status(413).json({ error: 'request body is larger than 100kb' });
    console.error(`books-node: ${req.method} ${req.path}:`, err);
    res.status(500).json({ error: `internal error: ${err.message}` });
  });
  return a;
}

// connect retries until PostgreSQL answers (it may start after the app in
// a Nomad group), then creates the table when it is missing.
async function connect() {
  const deadline = Date.now() + waitSeconds * 1000;
  for (let attempt = 1; ; attempt++) {
    try {
      await sequelize.authenticate();
      if (attempt > 1) console.log(`books-node: database answered after ${attempt} attempts`);
      break;
    } catch (e) {
      if (Date.now() > deadline) {
        throw new Error(`database still unreachable after ${waitSeconds}s: ${e.message}`);
      }
      console.error(`books-node: waiting for database (attempt ${attempt}): ${e.message}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  await Book.sync();
}

if (require.main === module) {
  connect().then(() => {
    const server = app().listen(port, host, () => console.log(`books-node listening on ${host || '*'}:${port}`));
    const stop = () => server.close(() => sequelize.close().then(() => process.exit(0)));
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  }).catch((e) => {
    console.error(`books-node: ${e.message}`);
    process.exit(1);
  });
}

module.exports = { app, connect, sequelize, Book };
