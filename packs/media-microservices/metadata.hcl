app {
  url = "https://github.com/orchbench/orchbench/tree/main/deathstarbench"
}

pack {
  name        = "media-microservices"
  description = "DeathStarBench's media microservices (orchbench's Go port): 13 Thrift services behind an HTTP front end, with the eight FerretDB, seven memcached and three Redis the original deploys, its dataset loaded through the API by a setup hook, sized as one of the orchbench variants (baseline, vertical, horizontal, ha, unlimited)."
  version     = "0.1.0"
}
