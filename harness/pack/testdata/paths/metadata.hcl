pack {
  name    = "paths"
  version = "0.1.0"
}
