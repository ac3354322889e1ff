app {
  url = "https://github.com/orchbench/orchbench/tree/main/deathstarbench"
}

pack {
  name        = "social-network"
  description = "DeathStarBench's social network (orchbench's Go port): 12 services, FerretDB, Redis and memcached, sized as one of the orchbench variants (baseline, vertical, horizontal, ha, unlimited)."
  version     = "0.1.0"
}
