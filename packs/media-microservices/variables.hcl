variable "job_name" {
  type        = string
  default     = ""
  description = "Nomad job name; empty means media-microservices-<variant>, so variants can run side by side. Consul service names are <job_name>-<group>."
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
  description = "Resource shape: baseline 1 core and 1 GiB per container (4 cores and 4 GiB for the frontend); vertical every container x2; horizontal baseline x scale instances of every stateless service; ha like horizontal with instances spread over distinct nodes where there are several; unlimited baseline reservation with no CPU cap. One of: baseline, vertical, horizontal, ha, unlimited."
}

variable "scale" {
  type        = number
  default     = 0
  description = "Instances of every stateless service (the 14 mediamicro services), whole number. 0 keeps the variant's own: 2 for horizontal and ha, 1 for the others. A value of 1 or more applies to every variant. The datastores (FerretDB, memcached, Redis) are never replicated: replicas would be independent stores, each holding part of the reviews."
}

variable "resource_scale" {
  type        = number
  default     = 1
  description = "Multiplies every declared core and MiB, so a small machine runs a proportional miniature; variants keep their ratios. Memory stops at the floors service_memory_mib and datastore_memory_mib."
}

variable "service_memory_mib" {
  type        = number
  default     = 256
  description = "The least memory (MiB) each mediamicro service gets, doubled for vertical, whatever resource_scale: its connection buffers, Thrift connections and the requests in flight do not shrink with its CPU. 0 lets resource_scale scale them like the rest."
}

variable "datastore_memory_mib" {
  type        = number
  default     = 256
  description = "The least memory (MiB) each FerretDB, memcached and Redis gets, doubled for vertical, whatever resource_scale: the dataset (1000 users, the movies of 1000 titles with their casts and plots, and the reviews composed under load) does not shrink with a miniature. 0 lets resource_scale scale them like the rest."
}

variable "mhz_per_core" {
  type        = number
  default     = 2100
  description = "The node's fingerprinted MHz per core (total cpu MHz / cores); cpu MHz = cores x resource_scale x mhz_per_core. The harness fills it in from the node."
}

variable "datastore_cpu_limit" {
  type        = bool
  default     = false
  description = "Cap FerretDB, memcached and Redis at their declared CPU like the services (true), or give them CPU shares by their declared cores with no cap (false, as DeathStarBench sets no limits on its stores)."
}

variable "image_tag" {
  type        = string
  default     = "local"
  description = "Tag of the orchbench/mediamicro, orchbench/ferretdb, orchbench/memcached and orchbench/redis images; cluster/images.sh dsb tags each build \"local\" (Nomad would try to pull \":latest\")."
}

variable "resources" {
  type = map(object({
    cores      = number
    memory_mib = number
  }))
  default     = {}
  description = "Per-group baseline overrides before the variant and resource_scale apply, e.g. { mongodb-review-storage = { cores = 2, memory_mib = 2048 } }. Keys: frontend, unique-id, movie-id, text, rating, user, compose-review, review-storage, user-review, movie-review, cast-info, plot, movie-info, page, mongodb-movie-id, memcached-movie-id, redis-rating, mongodb-user, memcached-user, memcached-compose-review, mongodb-review-storage, memcached-review-storage, mongodb-user-review, redis-user-review, mongodb-movie-review, redis-movie-review, mongodb-cast-info, memcached-cast-info, mongodb-plot, memcached-plot, mongodb-movie-info, memcached-movie-info."
}

variable "go_maxprocs" {
  type        = number
  default     = 0
  description = "GOMAXPROCS of the Go tasks (the mediamicro services and FerretDB). 0 gives a task declared one core or less a single processor and leaves the others to Go (which takes the CPU quota rounded up but at least 2): the idle processors' wake-ups would cost a small task its quota. -1 leaves Go's default everywhere; a positive number sets it for every Go task."
}

variable "call_timeout" {
  type        = string
  default     = "30s"
  description = "Go duration bounding each Thrift call a service makes to its upstreams (CALL_TIMEOUT), the front end's among them, so that a request queued behind CPU-starved services fails before the loader's timeout."
}

variable "rpc_connections" {
  type        = number
  default     = 512
  description = "Most Thrift connections each mediamicro service opens to each upstream instance (RPC_CONNECTIONS), idle ones kept for reuse. 512 is DeathStarBench's (its service-config.json's connections), so overload shows as latency, not as connect errors."
}

variable "pool_size" {
  type        = number
  default     = 64
  description = "Connections per storage client, MongoDB, memcached and Redis (POOL_SIZE)."
}

variable "machine_id" {
  type        = string
  default     = "index"
  description = "Where each mediamicro instance takes the replica ID in the review and user IDs it generates: \"index\" sets MACHINE_ID to the instance's index (Nomad's alloc index, Swarm's task slot, a StatefulSet's ordinal on Kubernetes, which needs one), \"hostname\" leaves MACHINE_ID unset for the service to derive from its host name, as DeathStarBench's services do, so Kubernetes runs Deployments. A StatefulSet's pods on a lost node are not replaced until the node returns; a Deployment's are."
}
