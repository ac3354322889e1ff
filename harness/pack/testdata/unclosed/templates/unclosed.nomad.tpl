job "unclosed" {
  type = "batch"
[[- if var "enabled" . ]]
  meta {
    enabled = "yes"
  }
}
