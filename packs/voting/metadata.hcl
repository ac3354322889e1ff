app {
  url = "https://github.com/orchbench/orchbench/tree/main/apps/voting"
}

pack {
  name        = "voting"
  description = "Study 001's Django voting app in one of its five storage modes (v0 Redis pub/sub with a worker, v1 psycopg2, v2 ORM, v3 Redis hashes, v4 v3 cached), with its PostgreSQL and/or Redis, served by runserver as the study did or by gunicorn, sized as one of the orchbench variants (baseline, vertical, horizontal, unlimited)."
  version     = "0.1.0"
}
