[[- template "voting.validate" . -]]
[[- $size := dict "ctx" . -]]
[[- template "voting.sizing" $size -]]
[[- $job := var "job_name" . -]]
[[- if eq $job "" -]]
[[- $job = printf "%s-%s-%s" (meta "pack.name" .) (var "storage_mode" .) (var "variant" .) -]]
[[- if eq (var "server" .) "gunicorn" ]][[ $job = printf "%s-gunicorn" $job ]][[ end -]]
[[- end -]]
[[- $app := meta "pack.name" . -]]
[[- $variant := var "variant" . -]]
[[- $mode := var "storage_mode" . -]]
[[- $server := var "server" . -]]
[[- $capped := ne $variant "unlimited" -]]
[[- $pg := has $mode (list "v0" "v1" "v2") -]]
[[- $redis := has $mode (list "v0" "v3" "v4") -]]
[[- /* The probe's ballot: box 99999 of city 81 exists only for election_size 3,
  which the study's flow never sends, so its load never overwrites it. */ -]]
[[- $ballot := `{\\\"city_no\\\":81,\\\"box_no\\\":99999,\\\"election_size\\\":3,\\\"votes\\\":{\\\"party1\\\":17,\\\"party2\\\":4}}` -]]
job "[[ $job ]]" {
  region      = [[ var "region" . | quote ]]
  datacenters = [[ var "datacenters" . | toStringList ]]
  type        = "service"

  # What the orchbench harness reads back from the job. The limits each task
  # must show (orchbench_cores, orchbench_memory_mib) are in its own meta:
  # the app's and the worker's follow the variant, the stores' never do.
  meta {
    orchbench_app             = "[[ $app ]]"
    orchbench_variant         = "[[ $variant ]]"
    orchbench_driver          = "docker"
    orchbench_resource_scale  = "[[ var "resource_scale" . ]]"
    orchbench_count           = "[[ $size.count ]]"
    orchbench_reserved_cores  = "[[ $size.cores ]]"
    orchbench_reserved_mib    = "[[ $size.memory ]]"
    orchbench_service         = "[[ $job ]]"
    orchbench_storage_mode    = "[[ $mode ]]"
    orchbench_server          = "[[ $server ]]"
    # The setup hook (once per fresh deployment) casts the probe's ballot
    # through the app; the probe then reads it back from see-all, through
    # the storage mode's own path (in v0: channel, worker, PostgreSQL). An
    # empty store, a lost ballot or an error fails it.
    orchbench_setup_args      = "[\"load\",\"-t\",\"1\",\"-c\",\"1\",\"--closed\",\"--requests\",\"1\",\"--method\",\"POST\",\"-H\",\"Content-Type: application/json\",\"--body\",\"[[ $ballot ]]\",\"--allow-remote\",\"http://{{endpoint}}/voting/vote/\"]"
    orchbench_setup_timeout   = "1m"
    orchbench_probe_path      = "/voting/see-all/"
    orchbench_probe_min_bytes = "90"
    orchbench_probe_regex     = "^\\{\"votes\": \\{.*\"81\": \\{(\"[0-9]+\": \\{[^{}]*\\}, )*\"99999\": \\{\"party1\": 17, \"party2\": 4\\}.*\\}, \"total_votes\": \\{.*\"party1\": [1-9][0-9]*.*\\}\\}$"
    # One of the study's three requests, the read every user makes; the
    # study's whole flow (a ballot, see-all, see-cities) is the experiment's.
    orchbench_load_path       = "/voting/see-all/"
  }
[[- if $pg ]]

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
        args     = ["-q", "-h", "${NOMAD_IP_db}", "-p", "${NOMAD_PORT_db}", "-d", "voting", "-U", "voting"]
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

    # The votes live in the allocation's data dir: a task restart keeps
    # them, a new allocation starts empty (the app makes the schema).
    ephemeral_disk {
      size = 1024
    }

    task "postgres" {
      driver       = "docker"
      kill_timeout = "10s"

      # Sized for the votes, not by the variant: CPU shares, no cap.
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
        # v1 opens two connections per party of a ballot, and runserver a
        # thread per request: room for the study's 100 users.
        args = ["-c", "listen_addresses=${NOMAD_IP_db}", "-p", "${NOMAD_PORT_db}",
                "-c", "max_connections=400", "-c", "shared_buffers=[[ div (var "postgres_memory_mib" .) 4 ]]MB"]
      }

      env {
        PGDATA            = "/alloc/data/postgres"
        POSTGRES_USER     = "voting"
        POSTGRES_DB       = "voting"
        POSTGRES_PASSWORD = [[ var "db_password" . | quote ]]
      }

      resources {
        cpu    = [[ max 1 (round (mulf (float64 (var "postgres_cores" .)) (var "mhz_per_core" .)) 0 | int) ]]
        memory = [[ var "postgres_memory_mib" . ]]
      }
    }
  }
[[- end ]]
[[- if $redis ]]

  group "redis" {
    count = 1

    network {
      mode = "host"
      port "db" {}
    }

    service {
      provider = "consul"
      name     = "[[ $job ]]-redis"
      port     = "db"
      tags     = ["orchbench-internal", "variant-[[ $variant ]]"]

      check {
        name     = "redis-tcp"
        type     = "tcp"
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

    # v3's and v4's votes: an append-only file in the allocation's data dir
    ephemeral_disk {
      size = 1024
    }

    task "redis" {
      driver       = "docker"
      kill_timeout = "5s"

      meta {
        orchbench_cores      = "0"
        orchbench_memory_mib = "[[ var "redis_memory_mib" . ]]"
        orchbench_cpu_mode   = "shares"
        orchbench_role       = "datastore"
      }

      config {
        image          = [[ var "redis_image" . | quote ]]
        network_mode   = "host"
        cpu_hard_limit = false
        # The votes survive a restart (fsynced every second); a full Redis
        # refuses writes loudly (noeviction) rather than dropping votes.
        args = ["--bind", "${NOMAD_IP_db}", "--port", "${NOMAD_PORT_db}", "--dir", "/alloc/data/redis",
                "--appendonly", "yes", "--appendfsync", "everysec",
                "--maxmemory", "[[ div (mul (var "redis_memory_mib" .) 3) 4 ]]mb", "--maxmemory-policy", "noeviction"]
      }

      resources {
        cpu    = [[ max 1 (round (mulf (float64 (var "redis_cores" .)) (var "mhz_per_core" .)) 0 | int) ]]
        memory = [[ var "redis_memory_mib" . ]]
      }
    }
  }
[[- end ]]
[[- if eq $mode "v0" ]]

  # v0's subscriber, one as in the study, sized like an app instance.
  group "worker" {
    count = 1

    network {
      mode = "host"
    }

    # No port and no Consul service: healthy is running. The app's own
    # check fails while no worker listens on the channel.
    update {
      max_parallel      = 1
      health_check      = "task_states"
      min_healthy_time  = "3s"
      healthy_deadline  = "3m"
      progress_deadline = "4m"
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

    task "worker" {
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
        args           = ["vote_worker"]
      }

      env {
[[- template "voting.env" (dict "ctx" . "size" $size "worker" true) ]]
      }
[[ template "voting.stores" (dict "ctx" . "job" $job) ]]

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
[[- end ]]

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
      tags     = ["orchbench", "measured", "variant-[[ $variant ]]", "storage-[[ $mode ]]"]

      # Healthy means the store answers with the party list (and, in v0, a
      # worker is subscribed to the channel).
      check {
        name     = "[[ $app ]]-http"
        type     = "http"
        path     = "/voting/"
        interval = "3s"
        timeout  = "2s"
      }
    }

    # All instances at once, judged by the Consul check.
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
        args           = ["serve"]
      }

      env {
        HOST                 = "${NOMAD_IP_http}"
        PORT                 = "${NOMAD_PORT_http}"
[[- template "voting.env" (dict "ctx" . "size" $size "worker" false) ]]
      }
[[ template "voting.stores" (dict "ctx" . "job" $job) ]]

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
