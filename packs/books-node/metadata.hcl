app {
  url = "https://github.com/orchbench/orchbench/tree/main/apps/books-node"
}

pack {
  name        = "books-node"
  description = "Study 004's books-node (Express + sequelize) with its PostgreSQL, sized as one of the orchbench variants (baseline, vertical, horizontal, unlimited)."
  version     = "0.1.0"
}
