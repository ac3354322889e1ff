variable "job_name" {
  type        = string
  default     = ""
  description = "Nomad job name; empty means myapp-<variant>, so variants can run side by side."
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
  description = "Resource shape: baseline 1 core and 1 GiB; vertical 2 cores and 2 GiB; horizontal baseline x scale instances; unlimited baseline reservation with no CPU cap. One of: baseline, vertical, horizontal, unlimited."
}

variable "scale" {
  type        = number
  default     = 0
  description = "Instance count, whole number. 0 keeps the variant's own: 2 for horizontal, 1 for the others."
}

variable "resource_scale" {
  type        = number
  default     = 1
  description = "Multiplies every declared core and MiB, so a small machine runs a proportional miniature."
}

variable "mhz_per_core" {
  type        = number
  default     = 2100
  description = "The node's MHz per core; the harness fills it from the node's fingerprint. cpu MHz = cores x resource_scale x mhz_per_core."
}

variable "image" {
  type        = string
  default     = "orchbench/myapp:local"
  description = "Docker image, built locally by cluster/images.sh (no registry is reachable)."
}

variable "port" {
  type        = number
  default     = 8080
  description = "The port the app listens on inside its container."
}
