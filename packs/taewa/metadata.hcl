app {
  url = "https://github.com/orchbench/orchbench/tree/main/apps/taewa"
}

pack {
  name        = "taewa"
  description = "Taewa, a single Node.js HTTP service, sized as one of the orchbench variants (baseline, vertical, horizontal, unlimited)."
  version     = "0.1.0"
}
