[[- template "social_network.validate" . -]]
[[- $job := var "job_name" . -]]
[[- if eq $job "" ]][[ $job = printf "%s-%s" (meta "pack.name" .) (var "variant" .) ]][[ end -]]
[[- $variant := var "variant" . -]]
[[- $tag := var "image_tag" . -]]
[[- $external_mongo := ne (var "mongodb_uri" .) "" -]]
[[- /* FerretDB on PostgreSQL: a postgres task beside it (ferretdb_backend). */ -]]
[[- $pg := and (not $external_mongo) (eq (var "ferretdb_backend" .) "postgresql") -]]
[[- /* With a snapshot, FerretDB, Redis and memcached run images that carry
  the loaded dataset (made by the prepare hook: orchbench dsb social-network
  restore): FerretDB and Redis copy its files into their empty data dirs at
  start, memcached is sent the items the load left in it. An external
  MongoDB is loaded through the API, as it cannot be seeded from an image,
  and so is PostgreSQL: a snapshot carries FerretDB's SQLite files. */ -]]
[[- $snapshot := and (var "dataset_snapshot" .) (not $external_mongo) (not $pg) -]]
[[- $dataset := printf `--users\",\"%d\",\"--posts-per-user\",\"%d\",\"--seed\",\"%d` (var "dataset_users" .) (var "dataset_posts_per_user" .) (var "dataset_seed" .) -]]
[[- /* The same name as snapshot.ImageRef (harness/pack's tests check it). */ -]]
[[- $store_tag := $tag -]]
[[- if $snapshot ]][[ $store_tag = printf "%s-ds-u%d-p%d-s%d" $tag (var "dataset_users" .) (var "dataset_posts_per_user" .) (var "dataset_seed" .) ]][[ end -]]
[[- /* What each socialnet service calls and which stores it uses (deathstarbench/README.md). */ -]]
[[- $upstreams := dict
  "frontend"      (list "compose-post" "user" "social-graph" "user-timeline" "home-timeline")
  "compose-post"  (list "unique-id" "user" "text" "media" "post-storage" "user-timeline" "home-timeline")
  "text"          (list "url-shorten" "user-mention")
  "url-shorten"   (list)
  "user-mention"  (list)
  "media"         (list)
  "unique-id"     (list)
  "user"          (list "social-graph")
  "social-graph"  (list "user")
  "post-storage"  (list)
  "user-timeline" (list "post-storage")
  "home-timeline" (list "social-graph" "post-storage") -]]
[[- $stores := dict
  "frontend"      (list)
  "compose-post"  (list)
  "text"          (list)
  "url-shorten"   (list "mongodb" "memcached")
  "user-mention"  (list "mongodb" "memcached")
  "media"         (list)
  "unique-id"     (list)
  "user"          (list "mongodb" "memcached")
  "social-graph"  (list "mongodb" "redis")
  "post-storage"  (list "mongodb" "memcached")
  "user-timeline" (list "mongodb" "redis")
  "home-timeline" (list "redis") -]]
[[- $fe := dict "ctx" . "name" "frontend" "stateless" true -]]
[[- template "social_network.sizing" $fe -]]
job "[[ $job ]]" {
  region      = [[ var "region" . | quote ]]
  datacenters = [[ var "datacenters" . | toStringList ]]
  type        = "service"

  # What the orchbench harness reads back from the job. The limits per task
  # (orchbench_cores, orchbench_memory_mib) are in each task's meta.
  meta {
    orchbench_app             = "social-network"
    orchbench_variant         = "[[ $variant ]]"
    orchbench_driver          = "docker"
    orchbench_resource_scale  = "[[ var "resource_scale" . ]]"
    orchbench_count           = "[[ $fe.count ]]"
    orchbench_service         = "[[ $job ]]-frontend"
    # A user with posts in the home timeline: an empty timeline ("[]", 3
    # bytes) or a short one fails; ten loaded posts are ~5-8 KB.
    orchbench_probe_path      = "/wrk2-api/home-timeline/read?user_id=[[ var "probe_user" . ]]&start=0&stop=10"
    orchbench_probe_min_bytes = "2000"
    orchbench_probe_regex     = "^\\[\\{\"post_id\":\"[0-9]+\",\"creator\""
    orchbench_load_path       = "/wrk2-api/home-timeline/read?user_id=[[ var "probe_user" . ]]&start=0&stop=10"
[[- if $snapshot ]]
    # Before deploying, the harness makes sure the datastores' images carry
    # the dataset: at once when they do, seconds from the snapshot
    # cache, minutes when the snapshot itself must be made first.
    orchbench_prepare_args    = "[\"dsb\",\"social-network\",\"restore\",\"--image-tag\",\"[[ $tag ]]\",\"[[ $dataset ]]\"]"
    orchbench_prepare_timeout = "45m"
[[- else ]]
    # The harness loads the dataset after a fresh deployment, and on a reused
    # one that has no completion marker in Consul (a load was interrupted);
    # the loader skips what exists, so a re-run is cheap.
    orchbench_setup_args      = "[\"dsb\",\"social-network\",\"load\",\"--allow-remote\",\"--frontend\",\"http://{{endpoint}}\",\"[[ $dataset ]]\"]"
    orchbench_setup_timeout   = "45m"
[[- end ]]
    # The hooks' --allow-remote: {{endpoint}} is the deployment's own front
    # end as its orchestrator registered it, on a node's address when the
    # cluster has many (the check is against a mistyped --frontend by hand).
    # Before measuring a fresh or reused deployment, and after every load,
    # sampled timelines must hold what a finished load leaves: home
    # timelines live only in Redis, so a flushed Redis fails here, the step
    # is invalid and (without a snapshot) the dataset is loaded again.
    orchbench_verify_args     = "[\"dsb\",\"social-network\",\"verify\",\"--allow-remote\",\"--frontend\",\"http://{{endpoint}}\",\"--users\",\"[[ var "dataset_users" . ]]\",\"--dataset-seed\",\"[[ var "dataset_seed" . ]]\"]"
    orchbench_verify_timeout  = "5m"
  }
[[- /* The 12 socialnet services: stateless, replicated by horizontal and ha. */ -]]
[[- $names := keys $upstreams | sortAlpha -]]
[[- $datastores := list "redis" "memcached" -]]
[[- if not $external_mongo ]][[ $datastores = prepend $datastores "ferretdb" ]][[ end -]]
[[- if $pg ]][[ $datastores = prepend $datastores "postgres" ]][[ end -]]
[[- range $name := concat $datastores $names -]]
[[- $size := dict "ctx" $ "name" $name "stateless" (has $name $names) -]]
[[- template "social_network.sizing" $size -]]
[[- $stateless := has $name $names -]]
[[- $port := ternary "http" "rpc" (eq $name "frontend") -]]
[[- /* Datastores get CPU shares but no hard cap unless datastore_cpu_limit: see README. */ -]]
[[- $capped := and (ne $variant "unlimited") (or $stateless (var "datastore_cpu_limit" $)) ]]

  group "[[ $name ]]" {
    count = [[ $size.count ]]
[[- if eq $variant "ha" ]]

    # ha: no two instances of a service on one node where there are several.
    spread {
      attribute = "${node.unique.id}"
    }
[[- end ]]

    # Host networking on the node's address (127.0.0.1 on the embedded
    # cluster): every instance is reachable at the address Consul holds, from
    # the other tasks, the harness and the load generator alike.
    network {
      mode = "host"
      port "[[ $port ]]" {}
    }

    service {
      provider = "consul"
      name     = "[[ $job ]]-[[ $name ]]"
      port     = "[[ $port ]]"
      tags     = [[ if eq $name "frontend" ]]["orchbench", "measured", "variant-[[ $variant ]]"][[ else ]]["orchbench-internal", "variant-[[ $variant ]]"][[ end ]]

      check {
        name     = "[[ $name ]]"
[[- if eq $name "frontend" ]]
        type     = "http"
        path     = "/healthz"
[[- else ]]
        type     = "tcp"
[[- end ]]
        interval = "3s"
        timeout  = "2s"
      }
    }

    # All instances at once, judged by the Consul checks.
    update {
      max_parallel      = [[ $size.count ]]
      health_check      = "checks"
      min_healthy_time  = "3s"
      healthy_deadline  = "4m"
      progress_deadline = "5m"
      auto_revert       = false
    }

    # Fail visibly instead of flapping or moving nodes mid-measurement.
    restart {
      attempts = 3
      interval = "2m"
      delay    = "3s"
      mode     = "fail"
    }

    reschedule {
      attempts  = 0
      unlimited = false
    }
[[- if has $name (list "ferretdb" "postgres" "redis") ]]

    # The store's files live in the allocation's data dir: a task restart
    # keeps them, a new allocation starts empty (seeded from the snapshot
    # image, or loaded again by the setup hook).
    ephemeral_disk {
      size = 1024
    }
[[- end ]]

    task "[[ $name ]]" {
      driver       = "docker"
      kill_timeout = "5s"

      meta {
        orchbench_cores      = "[[ ternary $size.cores 0 $capped ]]"
        orchbench_memory_mib = "[[ $size.memory ]]"
        orchbench_cpu_mhz    = "[[ $size.cpu ]]"
        orchbench_cpu_mode   = "[[ ternary "quota" "shares" $capped ]]"
        orchbench_role       = "[[ ternary "service" "datastore" $stateless ]]"
      }

      config {
        network_mode   = "host"
        cpu_hard_limit = [[ $capped ]]
[[- if and (eq $name "ferretdb") $pg ]]
        image = "orchbench/ferretdb:[[ $store_tag ]]"
        # The PostgreSQL URL comes from Consul (template below).
        args  = ["--listen-addr", "${NOMAD_ADDR_rpc}", "--handler", "postgresql"]
[[- else if eq $name "ferretdb" ]]
        image = "orchbench/ferretdb:[[ $store_tag ]]"
        args  = ["--listen-addr", "${NOMAD_ADDR_rpc}", "--data-dir", "/alloc/data/ferretdb"]
[[- else if eq $name "postgres" ]]
        image = [[ var "postgres_image" $ | quote ]]
        # Commits wait for no WAL flush, as FerretDB's SQLite commits wait for
        # no fsync (synchronous=normal): a crash of the node may lose the last
        # commits, a benchmark's data.
        args  = ["-c", "listen_addresses=${NOMAD_IP_rpc}", "-p", "${NOMAD_PORT_rpc}",
                 "-c", "max_connections=200", "-c", "shared_buffers=[[ max 16 (div $size.memory 4) ]]MB",
                 "-c", "synchronous_commit=off"]
[[- else if eq $name "redis" ]]
        image = "orchbench/redis:[[ $store_tag ]]"
        # Timelines must survive a restart: an append-only file fsynced every
        # second (a killed Redis loses at most the last second's writes),
        # kept in the alloc dir. A full Redis refuses writes loudly
        # (noeviction) rather than silently dropping timelines.
        args  = ["--bind", "${NOMAD_IP_rpc}", "--port", "${NOMAD_PORT_rpc}", "--dir", "/alloc/data/redis",
                 "--appendonly", "yes", "--appendfsync", "everysec",
                 "--maxmemory", "[[ max 1 (div (mul $size.memory 3) 4) ]]mb", "--maxmemory-policy", "noeviction"]
[[- else if eq $name "memcached" ]]
        image = "orchbench/memcached:[[ $store_tag ]]"
        # The item memory stays under the task's hard limit (75 %).
        args  = ["-l", "${NOMAD_IP_rpc}", "-p", "${NOMAD_PORT_rpc}", "-U", "0", "-m", "[[ max 1 (div (mul $size.memory 3) 4) ]]"]
[[- else ]]
        image = "orchbench/socialnet:[[ $tag ]]"
        # The Thrift client pools: DeathStarBench's connections and timeout.
        args  = ["--service", "[[ $name ]]", "--listen-addr", "${NOMAD_ADDR_[[ $port ]]}",
                 "--rpc-connections", "[[ var "rpc_connections" $ ]]", "--rpc-timeout", [[ var "rpc_timeout" $ | quote ]],
                 "--rpc-call-timeout", [[ var "rpc_call_timeout" $ | quote ]]]
[[- end ]]
      }

      env {
[[- if eq $name "postgres" ]]
        PGDATA            = "/alloc/data/postgres"
        POSTGRES_USER     = "ferretdb"
        POSTGRES_DB       = "ferretdb"
        POSTGRES_PASSWORD = [[ var "postgres_password" $ | quote ]]
[[- else ]]
        # The Go runtime collects before the hard limit rather than being
        # killed at it.
        GOMEMLIMIT = "[[ max 1 (div (mul $size.memory 85) 100) ]]MiB"
[[- end ]]
[[- $maxprocs := var "go_maxprocs" $ | int ]]
[[- $goTask := or $stateless (eq $name "ferretdb") ]]
[[- if and $goTask (gt $maxprocs 0) ]]
        GOMAXPROCS = "[[ $maxprocs ]]"
[[- else if and $goTask (eq $maxprocs 0) (le $size.cores 1.0) ]]
        # One processor for a Go task declared a core or less (go_maxprocs).
        GOMAXPROCS = "1"
[[- end ]]
[[- if or (eq $name "user") (eq $name "frontend") ]]
        # The user service signs login tokens; the front end verifies them.
        JWT_SECRET = [[ var "jwt_secret" $ | quote ]]
[[- end ]]
[[- if and $snapshot (eq $name "memcached") ]]
        # Items the snapshot's load left are set once per allocation; a
        # restarted memcached starts empty, as any does (the alloc dir, where
        # this marker lives, outlasts a restart).
        MEMCACHED_SEED_MARKER = "/alloc/data/memcached-seeded"
[[- end ]]
[[- if $external_mongo ]]
[[- if has "mongodb" (get $stores $name | default list) ]]
        MONGODB_URI = [[ var "mongodb_uri" $ | quote ]]
[[- end ]]
[[- end ]]
[[- if and $stateless (eq (var "machine_id" $) "index") ]]
        # Distinct generated IDs per replica (unique-id, user, post IDs);
        # with machine_id = "hostname" the service hashes its host name.
        MACHINE_ID = "${NOMAD_ALLOC_INDEX}"
[[- end ]]
      }
[[- if and (eq $name "ferretdb") $pg ]]

      # FerretDB restarts onto PostgreSQL's address when it changes; until
      # PostgreSQL is registered it renders as an unreachable placeholder.
      template {
        destination = "local/postgres.env"
        env         = true
        change_mode = "restart"
        data        = <<EOT
FERRETDB_POSTGRESQL_URL=postgres://ferretdb:[[ var "postgres_password" $ | urlquery ]]@{{ with service "[[ $job ]]-postgres|any" }}{{ with index . 0 }}{{ .Address }}:{{ .Port }}{{ end }}{{ else }}127.0.0.1:1{{ end }}/ferretdb
EOT
      }
[[- end ]]
[[- if $stateless ]]
[[- $needs := concat (get $upstreams $name) (get $stores $name) -]]
[[- if $external_mongo ]][[ $needs = without $needs "mongodb" ]][[ end -]]
[[- if $needs ]]

      # Upstream addresses from Consul, every registered instance (healthy
      # or not, so a health blip does not move the callers) but those on a
      # failed node (social_network.instances), comma-separated: the
      # service spreads calls over them. user and
      # social-graph call each other, so no start order exists: an upstream
      # not registered yet renders as an unreachable placeholder. Nomad
      # changes nothing when the file does (noop): the service watches it
      # (UPSTREAMS_FILE, the docker driver's path of local/), re-points its
      # Thrift clients at an upstream's new instances in place, and runs
      # itself again only for a store's new address. With change_mode
      # "restart", a replica moved by a kill-node restarted every caller of
      # it, the front end too, which failed 88 % of the step's requests.
      template {
        destination = "local/upstreams.env"
        env         = true
        change_mode = "noop"
        splay       = "2s"
        wait {
          min = "1s"
          max = "5s"
        }
        data        = <<EOT
UPSTREAMS_FILE=/local/upstreams.env
[[- range $up := $needs ]]
[[- $svc := printf "%s-%s" $job (ternary "ferretdb" $up (eq $up "mongodb")) ]]
[[- if eq $up "mongodb" ]]
MONGODB_URI=mongodb://[[ template "social_network.instances" (dict "svc" $svc "first" true) ]]/
[[- else ]]
[[ printf "%s_ADDR" ($up | replace "-" "_" | upper) ]]=[[ template "social_network.instances" (dict "svc" $svc "first" false) ]]
[[- end ]]
[[- end ]]
EOT
      }
[[- end ]]
[[- end ]]

      resources {
        cpu    = [[ $size.cpu ]]
        memory = [[ $size.memory ]]
      }
    }
  }
[[- end ]]
}
