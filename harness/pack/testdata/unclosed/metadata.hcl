app {
  url = "https://example.invalid/unclosed"
}

pack {
  name        = "unclosed"
  description = "Broken on purpose: exercises error locations."
  version     = "0.0.1"
}
