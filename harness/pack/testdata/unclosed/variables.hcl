variable "enabled" {
  type    = bool
  default = true
}
