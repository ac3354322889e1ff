app {
  url = "https://github.com/orchbench/orchbench/tree/main/apps/frontier"
}

pack {
  name        = "frontier"
  description = "Study 003's web tier (Express, 1 or 3 instances) with its single-worker remote service, its function pool standing in for Lambda and its Redis cache, sized as one of the orchbench variants (baseline, vertical, horizontal, unlimited)."
  version     = "0.1.0"
}
