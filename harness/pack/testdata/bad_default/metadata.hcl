app {
  url = "https://example.invalid/bad_default"
}

pack {
  name        = "bad_default"
  description = "Broken on purpose: exercises error locations."
  version     = "0.0.1"
}
