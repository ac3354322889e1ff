variable "network" {
  type = object({
    mode = string
    ports = list(object({
      name = string
      port = number
    }))
  })
  default = {
    mode  = "bridge"
    ports = [{ name = "db", port = 6379 }]
  }
  description = "An object variable shaped like the community redis pack's."
}

variable "labels" {
  type        = map(string)
  default     = { team = "bench" }
  description = "A map variable."
}

variable "where" {
  type        = string
  default     = "network.mode"
  description = "A path the path template reads, so a test can point it anywhere."
}
