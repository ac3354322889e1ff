app {
  url = "https://example.org/myapp"
}

pack {
  name        = "myapp"
  description = "MyApp, one HTTP service, sized as one of the orchbench variants (baseline, vertical, horizontal, unlimited)."
  version     = "0.1.0"
}
