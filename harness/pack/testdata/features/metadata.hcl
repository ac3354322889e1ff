app {
  url = "https://example.invalid/features"
}

pack {
  name        = "features"
  description = "Exercises every renderer feature the tests check."
  version     = "1.2.3"
}
