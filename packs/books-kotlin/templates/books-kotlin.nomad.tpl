[[- template "books.validate" . -]]
[[- $size := dict "ctx" . -]]
[[- template "books.sizing" $size -]]
[[- $job := var "job_name" . -]]
[[- if eq $job "" ]][[ $job = printf "%s-%s" (meta "pack.name" .) (var "variant" .) ]][[ end -]]
[[- $app := meta "pack.name" . -]]
[[- $variant := var "variant" . -]]
[[- $capped := ne $variant "unlimited" -]]
job "[[ $job ]]" {
  region      = [[ var "region" . | quote ]]
  datacenters = [[ var "datacenters" . | toStringList ]]
  type        = "service"

  # What the orchbench harness reads back from the job. The limits each task
  # must show (orchbench_cores, orchbench_memory_mib) are in its own meta:
  # the app's follow the variant, PostgreSQL's never do.
  meta {
    orchbench_app             = "[[ $app ]]"
    orchbench_variant         = "[[ $variant ]]"
    orchbench_driver          = "docker"
    orchbench_resource_scale  = "[[ var "resource_scale" . ]]"
    orchbench_count           = "[[ $size.count ]]"
    orchbench_reserved_cores  = "[[ $size.cores ]]"
    orchbench_reserved_mib    = "[[ $size.memory ]]"
    orchbench_service         = "[[ $job ]]"
    # Book 2 is seeded by PostgreSQL's init SQL and never touched by the
    # study's requests: an empty, wrong or error answer fails the probe.
    orchbench_probe_path      = "/books/2"
    orchbench_probe_min_bytes = "70"
    orchbench_probe_regex     = "^\\{\"id\":2,\"title\":\"The Dispossessed\",\"author\":\"Ursula K\\. Le Guin\",\"year\":1974\\}$"
    # The single path today's load generator sends: a GET by id, as the
    # study's GET /books/1, of the probe's book, so the responses gate can
    # hold every answer to the probe's size (book 1 is PATCHed by the
    # study's sequence below).
    orchbench_load_path       = "/books/2"
    # The study's JMeter plan (TestPlan.jmx): each thread loops over these
    # five requests in order, bodies with Content-Type application/json.
  }

  group "postgres" {
    count = 1

    # Host networking on the node's address, as the app's: the app reaches
    # PostgreSQL at the address Consul holds.
    network {
      mode = "host"
      port "db" {}
    }

    service {
      provider = "consul"
      name     = "[[ $job ]]-postgres"
      port     = "db"
      tags     = ["orchbench-internal", "variant-[[ $variant ]]"]

      check {
[[- if eq (var "postgres_check" .) "pg_isready" ]]
        name     = "pg_isready"
        type     = "script"
        task     = "postgres"
        command  = "/usr/lib/postgresql/15/bin/pg_isready"
        args     = ["-q", "-h", "${NOMAD_IP_db}", "-p", "${NOMAD_PORT_db}", "-d", "books", "-U", "books"]
[[- else ]]
        name     = "postgres-tcp"
        type     = "tcp"
[[- end ]]
        interval = "3s"
        timeout  = "2s"
      }
    }

    update {
      max_parallel      = 1
      health_check      = "checks"
      min_healthy_time  = "3s"
      healthy_deadline  = "3m"
      progress_deadline = "4m"
      auto_revert       = false
    }

    # Fail visibly instead of flapping or moving nodes mid-measurement.
    restart {
      attempts = 2
      interval = "1m"
      delay    = "2s"
      mode     = "fail"
    }

    reschedule {
      attempts  = 0
      unlimited = false
    }

    # The database lives in the allocation's data dir: a task restart keeps
    # it, a new allocation starts from the init SQL again.
    ephemeral_disk {
      size = 1024
    }

    task "postgres" {
      driver       = "docker"
      kill_timeout = "10s"

      # Sized for the books table, not by the variant: CPU shares, no cap.
      meta {
        orchbench_cores      = "0"
        orchbench_memory_mib = "[[ var "postgres_memory_mib" . ]]"
        orchbench_cpu_mode   = "shares"
        orchbench_role       = "datastore"
      }

      config {
        image          = [[ var "postgres_image" . | quote ]]
        network_mode   = "host"
        cpu_hard_limit = false
        args = ["-c", "listen_addresses=${NOMAD_IP_db}", "-p", "${NOMAD_PORT_db}",
                "-c", "max_connections=200", "-c", "shared_buffers=[[ div (var "postgres_memory_mib" .) 4 ]]MB"]
      }

      env {
        PGDATA            = "/alloc/data/postgres"
        POSTGRES_USER     = "books"
        POSTGRES_DB       = "books"
        POSTGRES_PASSWORD = [[ var "db_password" . | quote ]]
        # The schema both apps share, and the books the study's requests
        # and the probe need: book 1 is the one the study PATCHes and GETs,
        # book 2 the probe's. Run once, when the data dir is initialised; an
        # env value rather than a file template, so Swarm and Kubernetes can
        # carry it too.
        POSTGRES_INIT_SCRIPT = <<EOT
CREATE TABLE books (
  id     serial PRIMARY KEY,
  title  text NOT NULL,
  author text,
  year   integer
);
INSERT INTO books (title, author, year) VALUES
  ('The Left Hand of Darkness', 'Ursula K. Le Guin', 1969),
  ('The Dispossessed', 'Ursula K. Le Guin', 1974);
EOT
      }

      resources {
        cpu    = [[ max 1 (round (mulf (float64 (var "postgres_cores" .)) (var "mhz_per_core" .)) 0 | int) ]]
        memory = [[ var "postgres_memory_mib" . ]]
      }
    }
  }

  group "[[ $app ]]" {
    count = [[ $size.count ]]

    network {
      mode = "host"
      port "http" {}
    }

    service {
      provider = "consul"
      name     = "[[ $job ]]"
      port     = "http"
      tags     = ["orchbench", "measured", "variant-[[ $variant ]]"]

      # Reads the seeded book: healthy means the app answers from PostgreSQL.
      check {
        name     = "[[ $app ]]-http"
        type     = "http"
        path     = "/books/2"
        interval = "3s"
        timeout  = "2s"
      }
    }

    # All instances at once, judged by the Consul check; a JVM takes tens of
    # seconds to start on a fraction of a core.
    update {
      max_parallel      = [[ $size.count ]]
      health_check      = "checks"
      min_healthy_time  = "3s"
      healthy_deadline  = "4m"
      progress_deadline = "5m"
      auto_revert       = false
    }

    restart {
      attempts = 2
      interval = "1m"
      delay    = "2s"
      mode     = "fail"
    }

    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "[[ $app ]]" {
      driver       = "docker"
      kill_timeout = "5s"

      meta {
        orchbench_cores      = "[[ $size.limit_cores ]]"
        orchbench_memory_mib = "[[ $size.limit_memory ]]"
        orchbench_cpu_mhz    = "[[ $size.cpu ]]"
        orchbench_cpu_mode   = "[[ $size.cpu_mode ]]"
      }

      config {
        image          = [[ var "image" . | quote ]]
        network_mode   = "host"
        cpu_hard_limit = [[ $capped ]]
      }

      env {
        HOST        = "${NOMAD_IP_http}"
        PORT        = "${NOMAD_PORT_http}"
        DB_NAME     = "books"
        DB_USER     = "books"
        DB_PASSWORD = [[ var "db_password" . | quote ]]
        # The app retries its first connection this long (PostgreSQL may
        # still be starting), then exits so the failure shows.
        DB_WAIT_SECONDS = "180"
      }

      # PostgreSQL's host:port from Consul (registered, healthy or not: the
      # app retries until it answers). Before it is registered an
      # unreachable placeholder renders, and the task restarts once it is.
      template {
        destination = "local/db.env"
        env         = true
        change_mode = "restart"
        splay       = "1s"
        data        = <<EOT
DB_ADDR={{ with service "[[ $job ]]-postgres|any" }}{{ with index . 0 }}{{ .Address }}:{{ .Port }}{{ end }}{{ else }}127.0.0.1:1{{ end }}
EOT
      }

      resources {
        cpu = [[ $size.cpu ]]
[[- if gt $size.memory_max 0 ]]
        memory     = [[ $size.memory ]]
        memory_max = [[ $size.memory_max ]]
[[- else ]]
        memory = [[ $size.memory ]]
[[- end ]]
      }
    }
  }
}
