variable "message" {
  type        = string
  default     = "hello"
  description = "A plain string."
}

variable "count" {
  type    = number
  default = 2
}

variable "ratio" {
  type    = number
  default = 0.5
}

variable "enabled" {
  type    = bool
  default = false
}

variable "datacenters" {
  type    = list(string)
  default = ["dc1"]
}

variable "labels" {
  type    = map(string)
  default = { team = "bench" }
}

variable "port" {
  type = object({
    name = string
    to   = optional(number, 8080)
  })
  default = { name = "http" }
}

variable "mode" {
  type    = string
  default = "ok"
}

variable "extra_file" {
  type    = string
  default = ""
}
