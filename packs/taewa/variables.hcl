variable "job_name" {
  type        = string
  default     = ""
  description = "Nomad job name; empty means taewa-<variant>, so variants can run side by side."
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
  description = "Resource shape: baseline 1 core and 1 GiB; vertical 2 cores and 2 GiB; horizontal baseline x scale instances; unlimited baseline reservation with no CPU cap and memory bursting to 8x. One of: baseline, vertical, horizontal, unlimited."
}

variable "scale" {
  type        = number
  default     = 0
  description = "Instance count, whole number. 0 keeps the variant's own: 2 for horizontal, 1 for the others. A value of 1 or more applies to every variant."
}

variable "resource_scale" {
  type        = number
  default     = 1
  description = "Multiplies every declared core and MiB, so a small machine runs a proportional miniature; variants keep their ratios."
}

variable "mhz_per_core" {
  type        = number
  default     = 2100
  description = "The node's fingerprinted MHz per core (total cpu MHz / cores); cpu MHz = cores x resource_scale x mhz_per_core."
}

variable "driver" {
  type        = string
  default     = "docker"
  description = "Task driver: docker (image, CFS quota) or exec (the base image's node, the exec chroot's userland (cluster/embedded.sh), with the app_source shipped in the job; whole cores become a cpuset)."
}

variable "image" {
  type        = string
  default     = "orchbench/taewa:local"
  description = "Docker image for the docker driver; cluster/images.sh tags each build \"local\" (Nomad would try to pull \":latest\")."
}

variable "app_source" {
  type        = string
  default     = "apps/taewa/server.js"
  description = "The server's source for the exec driver, relative to the directory nomad-pack or orchbench runs in (the repository root); it is shipped inside the job, so no host path is mounted."
}

variable "difficulty" {
  type        = number
  default     = 1000
  description = "The n the correctness probe and the load generator send as GET /?n=<difficulty>."
}

variable "autoscale" {
  type = object({
    enabled    = optional(bool, false)
    min        = optional(number, 1)
    max        = optional(number, 4)
    target_cpu = optional(number, 0.7)
    cooldown   = optional(string, "30s")
    evaluation = optional(string, "10s")
  })
  default     = {}
  description = "Autoscaling: when enabled, the instances (from min up to max, starting at min) are scaled by the Nomad Autoscaler to keep their mean CPU use at target_cpu of what each reserves, checked every evaluation, waiting cooldown after each change; an entry (orchbench tcp-balance) in front learns the instances as they come and go, and is what the load reaches. Translated to a HorizontalPodAutoscaler on Kubernetes and to orchbench's own scaler on Swarm. scale must be 0 with it."
}

variable "entry_image" {
  type        = string
  default     = "orchbench/orchbench:local"
  description = "With autoscale enabled: the entry's image, whose orchbench tcp-balance relays each connection to the next instance that passes its health check (cluster/images.sh orchbench)."
}

variable "entry_cores" {
  type        = number
  default     = 0
  description = "With autoscale enabled: the entry's CPU. 0 (default): CPU shares and no cap, a managed balancer as a cloud's, which needs a node with no CPU budget of its own; above 0: a CFS quota of that many cores, reserved too, for nodes whose budget would otherwise cap it unseen (the emulated nodes: node_cpus)."
}
