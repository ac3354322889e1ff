app {
  url = "https://github.com/orchbench/orchbench/tree/main/apps/riwai"
}

pack {
  name        = "riwai"
  description = "Riwai, study 000's Taewa loop on Node.js Express, sized as one of the orchbench variants (baseline, vertical, horizontal, unlimited)."
  version     = "0.1.0"
}
