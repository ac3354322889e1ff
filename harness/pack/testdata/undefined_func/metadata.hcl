app {
  url = "https://example.invalid/undefined_func"
}

pack {
  name        = "undefined_func"
  description = "Broken on purpose: exercises error locations."
  version     = "0.0.1"
}
