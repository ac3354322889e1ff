variable "job_name" {
  type        = string
  default     = ""
  description = "Nomad job name; empty means social-network-<variant>, so variants can run side by side. Consul service names are <job_name>-<service>."
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
  description = "Resource shape: baseline 1 core and 1 GiB per service (4 cores and 4 GiB for the frontend); vertical every service x2; horizontal baseline x scale instances of every stateless service; ha like horizontal with instances spread over distinct nodes where there are several; unlimited baseline reservation with no CPU cap. One of: baseline, vertical, horizontal, ha, unlimited."
}

variable "scale" {
  type        = number
  default     = 0
  description = "Instances of every stateless service (the 12 socialnet services), whole number. 0 keeps the variant's own: 2 for horizontal and ha, 1 for the others. A value of 1 or more applies to every variant, so `--var scale=2` on the baseline runs two baseline-sized instances of each service."
}

variable "datastore_scale" {
  type        = number
  default     = 1
  description = "Instances of memcached, whose clients shard keys over all of them. Redis and FerretDB stay single: their replicas here would be independent stores, each holding part of the data, so reads would miss writes made through another replica."
}

variable "resource_scale" {
  type        = number
  default     = 1
  description = "Multiplies every declared core and MiB, so a small machine runs a proportional miniature; variants keep their ratios."
}

variable "datastore_memory_mib" {
  type        = number
  default     = 1024
  description = "The least memory (MiB) FerretDB, Redis and memcached get, doubled for vertical, whatever resource_scale: they hold the dataset, which a miniature does not shrink. 1024 fits the default 962-user dataset under the loader's 200 concurrent clients (at 123 MiB FerretDB was OOM-killed loading it). 0 lets resource_scale scale them like the rest."
}

variable "service_memory_mib" {
  type        = number
  default     = 256
  description = "The least memory (MiB) each socialnet service gets, doubled for vertical, whatever resource_scale: its connection buffers and the requests in flight do not shrink with its CPU. At resource_scale 0.03 the declared 1 GiB became 31 MiB and the user service was OOM-killed under the loader's 200 concurrent clients. 0 lets resource_scale scale them like the rest."
}

variable "mhz_per_core" {
  type        = number
  default     = 2100
  description = "The node's fingerprinted MHz per core (total cpu MHz / cores); cpu MHz = cores x resource_scale x mhz_per_core. The harness fills it in from the node."
}

variable "driver" {
  type        = string
  default     = "docker"
  description = "Task driver. Only docker is supported (the services are FROM scratch images); exec fails while rendering."
}

variable "image_tag" {
  type        = string
  default     = "local"
  description = "Tag of the orchbench/socialnet, orchbench/ferretdb, orchbench/redis and orchbench/memcached images; cluster/images.sh dsb tags each build \"local\" (Nomad would try to pull \":latest\")."
}

variable "mongodb_uri" {
  type        = string
  default     = ""
  description = "An external MongoDB (or FerretDB) URI, e.g. mongodb://10.0.0.5:27017/; empty runs the FerretDB task of the pack."
}

variable "ferretdb_backend" {
  type        = string
  default     = "sqlite"
  description = "FerretDB's storage: sqlite (SQLite files in the FerretDB task's data dir) or postgresql (a PostgreSQL 15 task of its own, image postgres_image, which FerretDB's PostgreSQL backend uses). Measured with deathstarbench/cmd/socialbench on one machine, SQLite cost 0.5 ms of datastore CPU per user-timeline read and 2.5 ms per compose, PostgreSQL with FerretDB in front 1.9 ms and 7.5 ms, hence the default. With postgresql the dataset is loaded through the API after deploying: dataset snapshots carry SQLite files. Ignored with mongodb_uri."
}

variable "postgres_image" {
  type        = string
  default     = "orchbench/postgres:local"
  description = "PostgreSQL's Docker image for ferretdb_backend = postgresql (cluster/images.sh postgres, the image study 004 uses)."
}

variable "postgres_password" {
  type        = string
  default     = "orchbench-social-network"
  description = "Password of the ferretdb role in the PostgreSQL task (ferretdb_backend = postgresql); FerretDB connects over TCP with it."
}

variable "resources" {
  type = map(object({
    cores      = number
    memory_mib = number
  }))
  default     = {}
  description = "Per-service baseline overrides before the variant and resource_scale apply, e.g. { ferretdb = { cores = 2, memory_mib = 2048 } }. Keys: frontend, compose-post, text, url-shorten, user-mention, media, unique-id, user, social-graph, post-storage, user-timeline, home-timeline, ferretdb, postgres, redis, memcached."
}

variable "jwt_secret" {
  type        = string
  default     = "orchbench-social-network"
  description = "HMAC key of the user service's login tokens."
}

variable "rpc_connections" {
  type        = number
  default     = 512
  description = "Most Thrift connections each socialnet service opens to each upstream instance (--rpc-connections), idle ones kept for reuse; a call finding all in use waits for one, up to rpc_timeout. 512 is DeathStarBench's (its service-config.json's connections), so overload shows as latency, not as connect errors."
}

variable "go_maxprocs" {
  type        = number
  default     = 0
  description = "GOMAXPROCS of the Go tasks (the socialnet services and FerretDB). 0 gives a task declared one core or less a single processor and leaves the others to Go, which takes the CPU quota rounded up but at least 2, or the machine's CPU count without a quota: a task declared 0.06 cores would otherwise keep two processors whose wake-ups and idle spinning its quota pays for (on the unlimited variant, one processor each cut the mixed workload's CPU per request from 2.11 to 1.48 ms). -1 leaves Go's default everywhere; a positive number sets it for every Go task."
}

variable "machine_id" {
  type        = string
  default     = "index"
  description = "Where each socialnet instance takes the replica ID in its generated post and user IDs: \"index\" sets MACHINE_ID to the instance's index (Nomad's alloc index, Swarm's task slot, a StatefulSet's ordinal on Kubernetes, which needs one), \"hostname\" leaves it to the service, which hashes its host name as DeathStarBench's services do, so Kubernetes runs Deployments. A StatefulSet's pods on a lost node are not replaced until the node returns; a Deployment's are."
}

variable "rpc_timeout" {
  type        = string
  default     = "10s"
  description = "Go duration bounding, each, the wait for a free Thrift connection and the connect between socialnet services (--rpc-timeout). 10s is DeathStarBench's timeout_ms."
}

variable "rpc_call_timeout" {
  type        = string
  default     = "30s"
  description = "Go duration bounding each Thrift call's socket reads and writes between socialnet services, and the frontend's calls behind one request (--rpc-call-timeout). DeathStarBench's sockets have no bound; 30s lets calls queue behind CPU-starved upstreams (a compose's user-timeline write passed 10s at resource_scale 0.03) while a request still fails before the loader's 60s."
}

variable "probe_user" {
  type        = number
  default     = 0
  description = "User whose home timeline the correctness probe reads, one of the dataset's users 0..dataset_users-1 (DeathStarBench's IDs); after the dataset load every user's home timeline has posts (user 0 of the default dataset has 28 friends)."
}

variable "dataset_users" {
  type        = number
  default     = 962
  description = "Users of the dataset (962 is DeathStarBench's socfb-Reed98; edges scale with it). Workloads should use the same count, e.g. social-network:mixed@962."
}

variable "dataset_posts_per_user" {
  type        = number
  default     = 10
  description = "Mean posts per user of the dataset (each user composes 1..2 x mean - 1)."
}

variable "dataset_seed" {
  type        = number
  default     = 1
  description = "Seed of the dataset's graph and posts; verification derives each timeline's minimum from it."
}

variable "dataset_snapshot" {
  type        = bool
  default     = true
  description = "Start FerretDB and Redis from a snapshot of the loaded dataset (images the prepare hook makes, from ~/.cache/orchbench/snapshots, loading it once per users, posts per user, seed and storage format) instead of loading it through the API after every fresh deployment. Ignored with mongodb_uri, which is always loaded through the API."
}

variable "datastore_cpu_limit" {
  type        = bool
  default     = false
  description = "Cap FerretDB, Redis and memcached at their declared CPU like the services (true), or give them CPU shares by their declared cores with no cap (false, as DeathStarBench sets no limits on its stores): capped at a small resource_scale, the dataset load takes an hour."
}
