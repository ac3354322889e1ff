variable "name" {
  type    = string
  default = "ok"
}

variable "count" {
  type        = number
  default     = "many"
  description = "The default is not a number on purpose."
}
