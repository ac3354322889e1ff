variable "job_name" {
  type        = string
  default     = ""
  description = "Nomad job name; empty means voting-<storage_mode>-<variant>, with -gunicorn appended for that server, so modes and servers can run side by side. It also names the Consul services: <job_name> (the app), <job_name>-postgres and <job_name>-redis."
}

variable "datacenters" {
  type        = list(string)
  default     = ["dc1"]
  description = "Datacenters the job may be placed in."
}

variable "region" {
  type        = string
  default     = "global"
  description = "Nomad region to deploy to."
}

variable "variant" {
  type        = string
  default     = "baseline"
  description = "Resource shape of each app instance (and of v0's worker); PostgreSQL and Redis are never scaled nor capped. baseline 1 core and 1 GiB; vertical 2 cores and 2 GiB; horizontal baseline x scale instances; unlimited baseline reservation with no CPU cap and memory bursting to 8x (study 001's GKE runs: no limits, scale 1, 2, 5, 10). One of: baseline, vertical, horizontal, unlimited."
}

variable "scale" {
  type        = number
  default     = 0
  description = "App instance count, whole number. 0 keeps the variant's own: 2 for horizontal, 1 for the others. A value of 1 or more applies to every variant. v0's worker stays one, as the study's subscriber was."
}

variable "resource_scale" {
  type        = number
  default     = 1
  description = "Multiplies every app and worker core, so a small machine runs a proportional miniature; memory keeps the variant's size (a Django process needs its memory whatever the CPU)."
}

variable "mhz_per_core" {
  type        = number
  default     = 2100
  description = "The node's fingerprinted MHz per core (total cpu MHz / cores); cpu MHz = cores x resource_scale x mhz_per_core."
}

variable "storage_mode" {
  type        = string
  default     = "v2"
  description = "Where votes are kept (the study's versions): v0 the view publishes on a Redis channel and a worker group writes PostgreSQL; v1 psycopg2 with a new connection per call; v2 Django's ORM in one transaction per ballot; v3 Redis hashes read with KEYS scans; v4 v3 with a 60 s cache on the two GETs (v0, v1, v2, v3 or v4). v0, v1 and v2 deploy PostgreSQL; v0, v3 and v4 deploy Redis."
}

variable "server" {
  type        = string
  default     = "runserver"
  description = "What serves the app: runserver (the study's: Django's development server, a thread per request, DEBUG on) or gunicorn (a production WSGI server: gunicorn_workers processes of gunicorn_threads threads, DEBUG off)."
}

variable "gunicorn_workers" {
  type        = number
  default     = 0
  description = "gunicorn's worker processes per instance, whole number; 0 means twice the instance's cores, rounded up, at least 1."
}

variable "gunicorn_threads" {
  type        = number
  default     = 4
  description = "Threads of each gunicorn worker (gthread), whole number >= 1."
}

variable "parties" {
  type        = list(string)
  default     = ["party1", "party2", "party3", "party4", "party5", "party6"]
  description = "The parties a ballot may name (the study seeded party1 to party6); a ballot naming another is a 400. The study's Locust flow also sends party7: add it here to accept those ballots."
}

variable "cache_seconds" {
  type        = number
  default     = 60
  description = "v4: how long each instance serves its cached see-all and see-cities answers (the study's 60 s)."
}

variable "image" {
  type        = string
  default     = "orchbench/voting:local"
  description = "The app's Docker image (cluster/images.sh voting); v0's worker runs the same image."
}

variable "postgres_image" {
  type        = string
  default     = "orchbench/postgres:local"
  description = "PostgreSQL's Docker image (cluster/images.sh postgres)."
}

variable "redis_image" {
  type        = string
  default     = "orchbench/redis:local"
  description = "Redis's Docker image (cluster/images.sh dsb builds it)."
}

variable "postgres_memory_mib" {
  type        = number
  default     = 512
  description = "PostgreSQL's memory hard limit in MiB, sized for the votes, not by resource_scale."
}

variable "postgres_cores" {
  type        = number
  default     = 0.1
  description = "Cores reserved for PostgreSQL (CPU shares, never capped: it may use any idle core)."
}

variable "redis_memory_mib" {
  type        = number
  default     = 256
  description = "Redis's memory hard limit in MiB (maxmemory is 75 % of it, noeviction), not scaled by resource_scale."
}

variable "redis_cores" {
  type        = number
  default     = 0.1
  description = "Cores reserved for Redis (CPU shares, never capped)."
}

variable "postgres_check" {
  type        = string
  default     = "pg_isready"
  description = "PostgreSQL's health check: pg_isready (a script check in the task: the server accepts connections) or tcp (its port is open; for orchestrators that cannot run script checks, such as Swarm and Kubernetes through orchbench's translation)."
}

variable "db_password" {
  type        = string
  default     = "voting"
  description = "Password of the database user voting, which the app and the worker connect as."
}
