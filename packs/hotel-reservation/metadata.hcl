app {
  url = "https://github.com/orchbench/orchbench/tree/main/deathstarbench"
}

pack {
  name        = "hotel-reservation"
  description = "DeathStarBench's hotel reservation (orchbench's Go port): 8 gRPC services behind an HTTP front end, six FerretDB and three memcached as the original deploys them, sized as one of the orchbench variants (baseline, vertical, horizontal, ha, unlimited)."
  version     = "0.1.0"
}
