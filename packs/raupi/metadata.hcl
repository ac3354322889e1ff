app {
  url = "https://github.com/orchbench/orchbench/tree/main/apps/raupi"
}

pack {
  name        = "raupi"
  description = "Raupi, study 000's Taewa loop on Python Flask 2.0.3 and Waitress 2.1.1, sized as one of the orchbench variants (baseline, vertical, horizontal, unlimited)."
  version     = "0.1.0"
}
