[[- template "hotel_reservation.validate" . -]]
[[- $job := var "job_name" . -]]
[[- if eq $job "" ]][[ $job = printf "%s-%s" (meta "pack.name" .) (var "variant" .) ]][[ end -]]
[[- $variant := var "variant" . -]]
[[- $tag := var "image_tag" . -]]
[[- /* Whom each hotelres service calls (deathstarbench/hotelreservation). */ -]]
[[- $upstreams := dict
  "frontend"       (list "search" "profile" "recommendation" "user" "reservation")
  "search"         (list "geo" "rate")
  "geo"            (list)
  "rate"           (list)
  "profile"        (list)
  "recommendation" (list)
  "user"           (list)
  "reservation"    (list) -]]
[[- /* Each service's own stores, as the original deploys them: a MongoDB
  per service (FerretDB here) and a memcached for profile, rate and
  reservation (memcached-reserve, the original's name). */ -]]
[[- $mongo := dict
  "geo" "ferretdb-geo" "rate" "ferretdb-rate" "profile" "ferretdb-profile"
  "recommendation" "ferretdb-recommendation" "user" "ferretdb-user" "reservation" "ferretdb-reservation" -]]
[[- $memcached := dict "rate" "memcached-rate" "profile" "memcached-profile" "reservation" "memcached-reserve" -]]
[[- $services := keys $upstreams | sortAlpha -]]
[[- $datastores := concat (values $mongo) (values $memcached) | sortAlpha -]]
[[- $fe := dict "ctx" . "name" "frontend" "stateless" true -]]
[[- template "hotel_reservation.sizing" $fe -]]
job "[[ $job ]]" {
  region      = [[ var "region" . | quote ]]
  datacenters = [[ var "datacenters" . | toStringList ]]
  type        = "service"

  # What the orchbench harness reads back from the job. The limits per task
  # (orchbench_cores, orchbench_memory_mib) are in each task's meta.
  meta {
    orchbench_app             = "hotel-reservation"
    orchbench_variant         = "[[ $variant ]]"
    orchbench_driver          = "docker"
    orchbench_resource_scale  = "[[ var "resource_scale" . ]]"
    orchbench_count           = "[[ $fe.count ]]"
    orchbench_service         = "[[ $job ]]-frontend"
    # The hotels near the wrk2 script's first point for one night: three
    # hotels (ids 2, 1, 3) in ~520 bytes when geo, rate and profile hold
    # their seeded data; a deployment that lost it answers an empty
    # FeatureCollection (43 bytes), which fails both the size and the regex.
    orchbench_probe_path      = "/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=37.7867&lon=-122.4112"
    orchbench_probe_min_bytes = "300"
    orchbench_probe_regex     = "^\\{\"features\":\\[\\{\"geometry\""
    orchbench_load_path       = "/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=37.7867&lon=-122.4112"
    # The mixed workload searches /hotels at random points and dates, most
    # answering fewer hotels than the probe's (~210 bytes on average): the
    # probe's answer is no size for theirs, which are held to their own
    # (a lower rate's, the warm-up's) instead.
    orchbench_probe_load_reference = "false"
    # No setup or prepare hook: every service seeds its own collections
    # when it starts and listens only then. Before measuring a fresh or
    # reused deployment, and after every load, the seeded data must answer
    # as the original's does ({{endpoint}}: the deployment's own front end
    # as its orchestrator registered it).
    orchbench_verify_args     = "[\"dsb\",\"hotel-reservation\",\"verify\",\"--allow-remote\",\"--frontend\",\"http://{{endpoint}}\"]"
    orchbench_verify_timeout  = "2m"
  }
[[- range $name := concat $datastores $services -]]
[[- $stateless := has $name $services -]]
[[- $size := dict "ctx" $ "name" $name "stateless" $stateless -]]
[[- template "hotel_reservation.sizing" $size -]]
[[- $port := ternary "http" "rpc" (eq $name "frontend") -]]
[[- $ferret := hasPrefix "ferretdb-" $name -]]
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
        # A hotelres service listens only once its data is seeded, so the
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
[[- if $ferret ]]

    # FerretDB's SQLite files live in the allocation's data dir: a task
    # restart keeps them, a new allocation starts empty and its service
    # seeds it again.
    ephemeral_disk {
      size = 300
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
[[- else if hasPrefix "memcached-" $name ]]
        image = "orchbench/memcached:[[ $tag ]]"
        # The item memory stays under the task's hard limit (75 %).
        args  = ["-l", "${NOMAD_IP_rpc}", "-p", "${NOMAD_PORT_rpc}", "-U", "0", "-m", "[[ max 1 (div (mul $size.memory 3) 4) ]]"]
[[- else ]]
        image = "orchbench/hotelres:[[ $tag ]]"
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
[[- if eq $name "frontend" ]]
        CALL_TIMEOUT = [[ var "call_timeout" $ | quote ]]
[[- end ]]
[[- if get $upstreams $name ]]
        GRPC_CHANNELS = "[[ var "grpc_channels" $ ]]"
[[- end ]]
[[- if hasKey $mongo $name ]]
        POOL_SIZE = "[[ var "pool_size" $ ]]"
[[- end ]]
      }
[[- if and $stateless (or (get $upstreams $name) (hasKey $mongo $name)) ]]

      # Upstream and store addresses from Consul: every registered instance
      # (healthy or not, so a health blip does not move the callers) but
      # those on a failed node (hotel_reservation.instances), comma-separated:
      # the service spreads calls over them. An upstream or store not
      # registered yet renders as an unreachable placeholder. Nomad changes
      # nothing when the file does (noop): the service watches it
      # (UPSTREAMS_FILE, the docker driver's path of local/), re-points its
      # gRPC channels at an upstream's new instances in place, and runs
      # itself again for a store's new address. Each service has its own
      # FerretDB and, for profile, rate and reservation, its own memcached.
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
[[ printf "%s_ADDR" ($up | upper) ]]=[[ template "hotel_reservation.instances" (dict "svc" (printf "%s-%s" $job $up) "first" false) ]]
[[- end ]]
[[- if hasKey $mongo $name ]]
MONGODB_URI=mongodb://[[ template "hotel_reservation.instances" (dict "svc" (printf "%s-%s" $job (get $mongo $name)) "first" true) ]]/
[[- end ]]
[[- if hasKey $memcached $name ]]
MEMCACHED_ADDR=[[ template "hotel_reservation.instances" (dict "svc" (printf "%s-%s" $job (get $memcached $name)) "first" false) ]]
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
