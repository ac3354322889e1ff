app {
  url = "https://github.com/orchbench/orchbench/tree/main/apps/apache"
}

pack {
  name        = "apache"
  description = "Study 000's Apache, Debian's apache2 serving a 45-byte static page, sized as one of the orchbench variants (baseline, vertical, horizontal, unlimited)."
  version     = "0.1.0"
}
