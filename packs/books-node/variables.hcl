variable "job_name" {
  type        = string
  default     = ""
  description = "Nomad job name; empty means books-node-<variant>. It also names the Consul services: <job_name> (the app) and <job_name>-postgres."
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
  description = "Resource shape of each app instance: baseline 1 core and 1 GiB; vertical 2 cores and 2 GiB; horizontal baseline x scale instances; unlimited baseline reservation with no CPU cap and memory bursting to 8x. One of: baseline, vertical, horizontal, unlimited. PostgreSQL is never scaled."
}

variable "scale" {
  type        = number
  default     = 0
  description = "App instance count, whole number. 0 keeps the variant's own: 2 for horizontal, 1 for the others. A value of 1 or more applies to every variant (study 004: unlimited with scale 1, 2, 5)."
}

variable "resource_scale" {
  type        = number
  default     = 1
  description = "Multiplies every app core, so a small machine runs a proportional miniature; memory keeps the variant's size (the JVM and Node need it whatever the CPU)."
}

variable "mhz_per_core" {
  type        = number
  default     = 2100
  description = "The node's fingerprinted MHz per core (total cpu MHz / cores); cpu MHz = cores x resource_scale x mhz_per_core."
}

variable "image" {
  type        = string
  default     = "orchbench/books-node:local"
  description = "The app's Docker image (cluster/images.sh books-node)."
}

variable "postgres_image" {
  type        = string
  default     = "orchbench/postgres:local"
  description = "PostgreSQL's Docker image (cluster/images.sh postgres)."
}

variable "postgres_memory_mib" {
  type        = number
  default     = 512
  description = "PostgreSQL's memory hard limit in MiB, sized for the books table, not by resource_scale."
}

variable "postgres_cores" {
  type        = number
  default     = 0.1
  description = "Cores reserved for PostgreSQL (CPU shares, never capped: it may use any idle core)."
}

variable "postgres_check" {
  type        = string
  default     = "pg_isready"
  description = "PostgreSQL's health check: pg_isready (a script check in the task: the server accepts connections) or tcp (its port is open; for orchestrators that cannot run script checks, such as Swarm and Kubernetes through orchbench's translation)."
}

variable "db_password" {
  type        = string
  default     = "books"
  description = "Password of the database user books, which the app connects as."
}
