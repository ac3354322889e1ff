variable "job_name" {
  type        = string
  default     = ""
  description = "Nomad job name; empty means hotel-reservation-<variant>, so variants can run side by side. Consul service names are <job_name>-<group>."
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
  description = "Instances of every stateless service (the 8 hotelres services), whole number. 0 keeps the variant's own: 2 for horizontal and ha, 1 for the others. A value of 1 or more applies to every variant. The datastores (FerretDB, memcached) are never replicated: replicas would be independent stores, each holding part of the bookings."
}

variable "resource_scale" {
  type        = number
  default     = 1
  description = "Multiplies every declared core and MiB, so a small machine runs a proportional miniature; variants keep their ratios. Memory stops at the floors service_memory_mib and datastore_memory_mib."
}

variable "service_memory_mib" {
  type        = number
  default     = 256
  description = "The least memory (MiB) each hotelres service gets, doubled for vertical, whatever resource_scale: its connection buffers, gRPC channels and the requests in flight do not shrink with its CPU. 0 lets resource_scale scale them like the rest."
}

variable "datastore_memory_mib" {
  type        = number
  default     = 256
  description = "The least memory (MiB) each FerretDB and memcached gets, doubled for vertical, whatever resource_scale: the dataset (80 hotels, 501 users and the bookings made under load) does not shrink with a miniature. 0 lets resource_scale scale them like the rest."
}

variable "mhz_per_core" {
  type        = number
  default     = 2100
  description = "The node's fingerprinted MHz per core (total cpu MHz / cores); cpu MHz = cores x resource_scale x mhz_per_core. The harness fills it in from the node."
}

variable "datastore_cpu_limit" {
  type        = bool
  default     = false
  description = "Cap FerretDB and memcached at their declared CPU like the services (true), or give them CPU shares by their declared cores with no cap (false, as DeathStarBench sets no limits on its stores)."
}

variable "image_tag" {
  type        = string
  default     = "local"
  description = "Tag of the orchbench/hotelres, orchbench/ferretdb and orchbench/memcached images; cluster/images.sh dsb tags each build \"local\" (Nomad would try to pull \":latest\")."
}

variable "resources" {
  type = map(object({
    cores      = number
    memory_mib = number
  }))
  default     = {}
  description = "Per-group baseline overrides before the variant and resource_scale apply, e.g. { ferretdb-rate = { cores = 2, memory_mib = 2048 } }. Keys: frontend, search, geo, rate, profile, recommendation, user, reservation, ferretdb-geo, ferretdb-profile, ferretdb-rate, ferretdb-recommendation, ferretdb-reservation, ferretdb-user, memcached-profile, memcached-rate, memcached-reserve."
}

variable "go_maxprocs" {
  type        = number
  default     = 0
  description = "GOMAXPROCS of the Go tasks (the hotelres services and FerretDB). 0 gives a task declared one core or less a single processor and leaves the others to Go (which takes the CPU quota rounded up but at least 2): the idle processors' wake-ups would cost a small task its quota. -1 leaves Go's default everywhere; a positive number sets it for every Go task."
}

variable "call_timeout" {
  type        = string
  default     = "30s"
  description = "Go duration bounding the front end's gRPC calls behind one HTTP request (CALL_TIMEOUT), so that a request queued behind CPU-starved services fails before the loader's timeout."
}

variable "grpc_channels" {
  type        = number
  default     = 4
  description = "gRPC channels (HTTP/2 connections, round robin over every instance each) each service keeps to each upstream (GRPC_CHANNELS). More than one spreads calls over the pods behind a Kubernetes ClusterIP, which kube-proxy balances per connection."
}

variable "pool_size" {
  type        = number
  default     = 64
  description = "Connections per storage client, MongoDB and memcached (POOL_SIZE)."
}
