app {
  url = "https://github.com/orchbench/orchbench/tree/main/apps/books-kotlin"
}

pack {
  name        = "books-kotlin"
  description = "Study 004's books-kotlin (Kotlin + Spring Boot + JPA) with its PostgreSQL, sized as one of the orchbench variants (baseline, vertical, horizontal, unlimited)."
  version     = "0.1.0"
}
