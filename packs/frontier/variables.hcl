variable "job_name" {
  type        = string
  default     = ""
  description = "Nomad job name; empty means frontier-<variant>. It also names the Consul services: <job_name> (the entry the load is aimed at), <job_name>-web (the web tier instances), <job_name>-remote, <job_name>-pool and <job_name>-redis."
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
  description = "Resource shape of each web tier instance: baseline 1 core and 1 GiB; vertical 2 cores and 2 GiB; horizontal baseline x scale instances (3, the study's second shape); unlimited baseline reservation with no CPU cap and memory bursting to 8x. One of: baseline, vertical, horizontal, unlimited. The remote service, the pool and Redis are never scaled."
}

variable "scale" {
  type        = number
  default     = 0
  description = "Web tier instances, whole number: the study ran 1 and 3. 0 keeps the variant's own: 3 for horizontal, 1 for the others. The remote service always runs exactly one."
}

variable "resource_scale" {
  type        = number
  default     = 1
  description = "Multiplies the web tier's cores, so a small machine runs a proportional miniature; memory keeps the variant's size (Node needs it whatever the CPU). The remote service's and the pool's 0.75 s are a wait, which no CPU cap stretches."
}

variable "mhz_per_core" {
  type        = number
  default     = 2100
  description = "The node's fingerprinted MHz per core (total cpu MHz / cores); cpu MHz = cores x resource_scale x mhz_per_core."
}

variable "route" {
  type        = string
  default     = "/"
  description = "The route the load generator is aimed at (orchbench_load_path) and the correctness probe checks, with a pattern only that route's right answer matches. One of: /, /remote, /alternate, /cached."
}

variable "cache_keys" {
  type        = number
  default     = 10
  description = "How many keys /cached picks from at random (CACHE_KEYS); the study ran 1, 10 and 20."
}

variable "cache_ttl" {
  type        = number
  default     = 60
  description = "Seconds a cached answer lives in Redis (CACHE_TTL), whole number."
}

variable "remote_seconds" {
  type        = number
  default     = 0.75
  description = "Seconds the remote service and every pool invocation take per request (REMOTE_SECONDS, POOL_SECONDS): a wait, not CPU work (apps/frontier/README.md says why)."
}

variable "remote_backlog" {
  type        = number
  default     = 2048
  description = "The remote service's listen backlog (REMOTE_BACKLOG): requests waiting for its one worker; the kernel caps it at net.core.somaxconn."
}

variable "pool_concurrency" {
  type        = number
  default     = 1000
  description = "The function pool's concurrency limit (POOL_CONCURRENCY), Lambda's default regional one; an invocation beyond it is throttled with a 429, as Lambda does with synchronous invocations."
}

variable "pool_cold_start" {
  type        = number
  default     = 0.25
  description = "Seconds a new pool instance initialises before its first invocation (POOL_COLD_START); 0 turns cold starts off."
}

variable "pool_idle_reap" {
  type        = number
  default     = 600
  description = "Seconds an idle pool instance lives before it is reaped (POOL_IDLE_REAP), so a later burst starts cold again; 0 keeps instances forever."
}

variable "idle_timeout" {
  type        = number
  default     = 60
  description = "Seconds the web tier keeps an idle client connection (IDLE_TIMEOUT): the study's ELB idle timeout."
}

variable "upstream_timeout" {
  type        = number
  default     = 60
  description = "Seconds the web tier waits for the remote service or the pool before answering 504 (UPSTREAM_TIMEOUT): what the study's ELB answered a request with no reply for its idle timeout."
}

variable "image" {
  type        = string
  default     = "orchbench/frontier:local"
  description = "The image of the web tier, the remote service and the pool (cluster/images.sh frontier)."
}

variable "entry_image" {
  type        = string
  default     = "orchbench/orchbench:local"
  description = "The entry's image, whose orchbench tcp-balance relays each connection to the next web tier instance (cluster/images.sh orchbench)."
}

variable "redis_image" {
  type        = string
  default     = "orchbench/redis:local"
  description = "Redis's image (cluster/images.sh frontier, or redis, or dsb)."
}

variable "redis_memory_mib" {
  type        = number
  default     = 128
  description = "Redis's memory hard limit in MiB (its maxmemory is three quarters of it), sized for the cache, not by resource_scale."
}

variable "support_cores" {
  type        = number
  default     = 0.1
  description = "Cores reserved for each of Redis, the remote service and the pool, as CPU shares, never capped: they stand for the study's managed services (ElastiCache, an EC2 worker, Lambda), which the web tier's CPU did not limit."
}
