[[- template "media_microservices.validate" . -]]
[[- $job := var "job_name" . -]]
[[- if eq $job "" ]][[ $job = printf "%s-%s" (meta "pack.name" .) (var "variant" .) ]][[ end -]]
[[- $variant := var "variant" . -]]
[[- $tag := var "image_tag" . -]]
[[- /* The movie_id the dataset (deathstarbench/mediamicroservices/dataset,
  MovieIDFor) gives the first distinct title of DeathStarBench's
  compose-review.lua, "Avengers: Endgame". */ -]]
[[- $probe_movie_id := "tt0000001" -]]
[[- $probe_path := printf "/orchbench/page?movie_id=%s&review_start=0&review_stop=10" $probe_movie_id -]]
[[- /* Whom each mediamicro service calls, and below which stores it owns:
  deathstarbench/mediamicroservices' Upstreams and Storage, which the
  pack's tests hold these to. */ -]]
[[- $upstreams := dict
  "frontend"       (list "user" "movie-id" "text" "unique-id" "cast-info" "plot" "movie-info" "page" "user-review" "rating")
  "unique-id"      (list "compose-review")
  "movie-id"       (list "compose-review" "rating")
  "text"           (list "compose-review")
  "rating"         (list "compose-review")
  "user"           (list "compose-review")
  "compose-review" (list "review-storage" "user-review" "movie-review")
  "review-storage" (list)
  "user-review"    (list "review-storage")
  "movie-review"   (list "review-storage")
  "cast-info"      (list)
  "plot"           (list)
  "movie-info"     (list)
  "page"           (list "movie-info" "cast-info" "plot" "movie-review") -]]
[[- /* A store's group is <kind>-<service> ("mongodb-*" run FerretDB), one
  per service and kind as the original deploys them. */ -]]
[[- $stores := dict
  "movie-id"       (list "mongodb" "memcached")
  "rating"         (list "redis")
  "user"           (list "mongodb" "memcached")
  "compose-review" (list "memcached")
  "review-storage" (list "mongodb" "memcached")
  "user-review"    (list "mongodb" "redis")
  "movie-review"   (list "mongodb" "redis")
  "cast-info"      (list "mongodb" "memcached")
  "plot"           (list "mongodb" "memcached")
  "movie-info"     (list "mongodb" "memcached") -]]
[[- $services := keys $upstreams | sortAlpha -]]
[[- $datastores := list -]]
[[- range $svc, $kinds := $stores ]][[ range $kind := $kinds ]][[ $datastores = append $datastores (printf "%s-%s" $kind $svc) ]][[ end ]][[ end -]]
[[- $datastores = sortAlpha $datastores -]]
[[- /* The stores every compose adds to: their files outgrow a small disk
  over a sweep, the others hold the loaded dataset only. */ -]]
[[- $growing := list "mongodb-review-storage" "mongodb-user-review" "mongodb-movie-review" "redis-user-review" "redis-movie-review" -]]
[[- $fe := dict "ctx" . "name" "frontend" "stateless" true -]]
[[- template "media_microservices.sizing" $fe -]]
job "[[ $job ]]" {
  region      = [[ var "region" . | quote ]]
  datacenters = [[ var "datacenters" . | toStringList ]]
  type        = "service"

  # What the orchbench harness reads back from the job. The limits per task
  # (orchbench_cores, orchbench_memory_mib) are in each task's meta.
  meta {
    orchbench_app             = "media-microservices"
    orchbench_variant         = "[[ $variant ]]"
    orchbench_driver          = "docker"
    orchbench_resource_scale  = "[[ var "resource_scale" . ]]"
    orchbench_count           = "[[ $fe.count ]]"
    orchbench_service         = "[[ $job ]]-frontend"
    # The page of the dataset's first movie, read through page from
    # movie-info, cast-info, plot and movie-review: its movie_info, its
    # cast and its plot once loaded (1757 bytes before any review); a
    # deployment without the dataset answers 404, and a store that lost
    # its part leaves the cast (then ~870 bytes) or the plot empty, which
    # the regex refuses.
    orchbench_probe_path      = "[[ $probe_path ]]"
    orchbench_probe_min_bytes = "1000"
    orchbench_probe_regex     = "^\\{\"movie_info\":\\{\"movie_id\":\"[[ $probe_movie_id ]]\".*\"cast_infos\":\\[\\{.*\"plot\":\"[^\"]"
    # What a load without a workload of its own requests: the same page.
    # The compose-review workload sends its own POSTs instead.
    orchbench_load_path       = "[[ $probe_path ]]"
    # The probe's page is no size for the load's answers: a compose is a
    # POST answered by an empty 200, and a page's reviews grow with the
    # composes. Each endpoint is held to its own reference (a lower
    # rate's, the warm-up's) instead.
    orchbench_probe_load_reference = "false"
    # The harness loads the dataset after a fresh deployment, and on a
    # reused one that has no completion marker in Consul (a load was
    # interrupted); the loader counts what is registered already as
    # present, so a re-run is cheap. {{endpoint}} is the deployment's own
    # front end as its orchestrator registered it, on a node's address when
    # the cluster has many (hence --allow-remote).
    orchbench_setup_args      = "[\"dsb\",\"media-microservices\",\"load\",\"--allow-remote\",\"--frontend\",\"http://{{endpoint}}\"]"
    orchbench_setup_timeout   = "15m"
    # Before measuring a fresh or reused deployment, after every dataset load
    # and whenever a task restarted, the dataset must read back as loaded: a
    # failure makes the step invalid and the dataset is loaded again. It
    # reads the first and last user and movie and 50 drawn of each: every
    # one takes 80 s at resource_scale 0.02 (`orchbench dsb
    # media-microservices verify` by hand reads them all).
    orchbench_verify_args     = "[\"dsb\",\"media-microservices\",\"verify\",\"--allow-remote\",\"--frontend\",\"http://{{endpoint}}\",\"--sampled-users\",\"50\",\"--sampled-movies\",\"50\"]"
    orchbench_verify_timeout  = "5m"
  }
[[- range $name := concat $datastores $services -]]
[[- $stateless := has $name $services -]]
[[- $size := dict "ctx" $ "name" $name "stateless" $stateless -]]
[[- template "media_microservices.sizing" $size -]]
[[- $port := ternary "http" "rpc" (eq $name "frontend") -]]
[[- $ferret := hasPrefix "mongodb-" $name -]]
[[- $redis := hasPrefix "redis-" $name -]]
[[- $own := get $stores $name | default list -]]
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
[[- else if $stateless ]]
        # A mediamicro service listens only once its stores answer, so the
        # check passes only then.
        type     = "tcp"
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
[[- if or $ferret $redis ]]

    # The store's files live in the allocation's data dir: a task restart
    # keeps them, a new allocation starts empty and the verification after
    # it has the setup hook load the dataset again.
    ephemeral_disk {
      size = [[ ternary 1024 300 (has $name $growing) ]]
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
[[- if $ferret ]]
        image = "orchbench/ferretdb:[[ $tag ]]"
        args  = ["--listen-addr", "${NOMAD_ADDR_rpc}", "--data-dir", "/alloc/data/ferretdb"]
[[- else if $redis ]]
        image = "orchbench/redis:[[ $tag ]]"
        # Ratings and review lists must survive a restart: an append-only
        # file fsynced every second, kept in the alloc dir. A full Redis
        # refuses writes loudly (noeviction) rather than dropping reviews.
        args  = ["--bind", "${NOMAD_IP_rpc}", "--port", "${NOMAD_PORT_rpc}", "--dir", "/alloc/data/redis",
                 "--appendonly", "yes", "--appendfsync", "everysec",
                 "--maxmemory", "[[ max 1 (div (mul $size.memory 3) 4) ]]mb", "--maxmemory-policy", "noeviction"]
[[- else if hasPrefix "memcached-" $name ]]
        image = "orchbench/memcached:[[ $tag ]]"
        # The item memory stays under the task's hard limit (75 %).
        args  = ["-l", "${NOMAD_IP_rpc}", "-p", "${NOMAD_PORT_rpc}", "-U", "0", "-m", "[[ max 1 (div (mul $size.memory 3) 4) ]]"]
[[- else ]]
        image = "orchbench/mediamicro:[[ $tag ]]"
        args  = ["--service", "[[ $name ]]", "--listen-addr", "${NOMAD_ADDR_[[ $port ]]}"]
[[- end ]]
      }

      env {
        # The Go runtime collects before the hard limit rather than being
        # killed at it.
        GOMEMLIMIT = "[[ max 1 (div (mul $size.memory 85) 100) ]]MiB"
[[- $maxprocs := var "go_maxprocs" $ | int ]]
[[- $goTask := or $stateless $ferret ]]
[[- if and $goTask (gt $maxprocs 0) ]]
        GOMAXPROCS = "[[ $maxprocs ]]"
[[- else if and $goTask (eq $maxprocs 0) (le $size.cores 1.0) ]]
        # One processor for a Go task declared a core or less (go_maxprocs).
        GOMAXPROCS = "1"
[[- end ]]
[[- if $stateless ]]
        STORAGE = "external"
[[- end ]]
[[- if get $upstreams $name ]]
        CALL_TIMEOUT    = [[ var "call_timeout" $ | quote ]]
        RPC_CONNECTIONS = "[[ var "rpc_connections" $ ]]"
[[- end ]]
[[- if $own ]]
        POOL_SIZE = "[[ var "pool_size" $ ]]"
[[- end ]]
[[- if and $stateless (eq (var "machine_id" $) "index") ]]
        # Distinct generated IDs per replica (review and user IDs); with
        # machine_id = "hostname" the service derives one from its host name.
        MACHINE_ID = "${NOMAD_ALLOC_INDEX}"
[[- end ]]
      }
[[- if and $stateless (or (get $upstreams $name) $own) ]]

      # Upstream and store addresses from Consul: every registered instance
      # (healthy or not, so a health blip does not move the callers) but
      # those on a failed node (media_microservices.instances),
      # comma-separated: the service spreads calls over them. An upstream
      # or store not registered yet renders as an unreachable placeholder.
      # Nomad changes nothing when the file does (noop): the service watches
      # it (UPSTREAMS_FILE, the docker driver's path of local/), re-points
      # its Thrift clients at an upstream's new instances in place, and runs
      # itself again for a store's new address. Each service has its own
      # stores, named after it.
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
[[- range $up := get $upstreams $name ]]
[[ printf "%s_ADDR" ($up | replace "-" "_" | upper) ]]=[[ template "media_microservices.instances" (dict "svc" (printf "%s-%s" $job $up) "first" false) ]]
[[- end ]]
[[- range $kind := $own ]]
[[- $svc := printf "%s-%s-%s" $job $kind $name ]]
[[- if eq $kind "mongodb" ]]
MONGODB_URI=mongodb://[[ template "media_microservices.instances" (dict "svc" $svc "first" true) ]]/
[[- else if eq $kind "redis" ]]
REDIS_ADDR=[[ template "media_microservices.instances" (dict "svc" $svc "first" true) ]]
[[- else ]]
MEMCACHED_ADDR=[[ template "media_microservices.instances" (dict "svc" $svc "first" false) ]]
[[- end ]]
[[- end ]]
EOT
      }
[[- end ]]

      resources {
        cpu    = [[ $size.cpu ]]
        memory = [[ $size.memory ]]
      }
    }
  }
[[- end ]]
}
