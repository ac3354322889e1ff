[[- /*
  Helpers for the media-microservices pack, in the shape every orchbench
  pack keeps: validate fails early with the valid choices; sizing computes
  every task's resources once so that the job spec and the meta the
  harness reads can never disagree.
*/ -]]

[[- define "media_microservices.validate" -]]
[[- $variants := list "baseline" "vertical" "horizontal" "ha" "unlimited" -]]
[[- if not (has (var "variant" .) $variants) -]]
[[- fail (printf "media-microservices: unknown variant %q; valid variants are: %s" (var "variant" .) (join ", " $variants)) -]]
[[- end -]]
[[- $scale := var "scale" . -]]
[[- if not (and (kindIs "int" $scale) (ge $scale 0)) -]]
[[- fail (printf "media-microservices: scale must be a whole number of instances (0 keeps the variant's own), got %v" $scale) -]]
[[- end -]]
[[- if not (gt (float64 (var "resource_scale" .)) 0.0) -]]
[[- fail (printf "media-microservices: resource_scale must be > 0, got %v" (var "resource_scale" .)) -]]
[[- end -]]
[[- if not (gt (float64 (var "mhz_per_core" .)) 0.0) -]]
[[- fail (printf "media-microservices: mhz_per_core must be > 0, got %v" (var "mhz_per_core" .)) -]]
[[- end -]]
[[- range $floor := list "service_memory_mib" "datastore_memory_mib" -]]
[[- $value := var $floor $ -]]
[[- if not (and (kindIs "int" $value) (ge $value 0)) -]]
[[- fail (printf "media-microservices: %s must be a whole number of MiB >= 0, got %v" $floor $value) -]]
[[- end -]]
[[- end -]]
[[- $maxprocs := var "go_maxprocs" . -]]
[[- if not (and (kindIs "int" $maxprocs) (ge $maxprocs -1)) -]]
[[- fail (printf "media-microservices: go_maxprocs must be -1 (Go's default), 0 (one processor for a task declared a core or less) or a whole number of processors, got %v" $maxprocs) -]]
[[- end -]]
[[- range $count := list "rpc_connections" "pool_size" -]]
[[- $value := var $count $ -]]
[[- if not (and (kindIs "int" $value) (ge $value 1)) -]]
[[- fail (printf "media-microservices: %s must be a whole number >= 1, got %v" $count $value) -]]
[[- end -]]
[[- end -]]
[[- $timeout := var "call_timeout" . -]]
[[- if or (not (regexMatch "^([0-9]*[.]?[0-9]+(ns|us|µs|ms|s|m|h))+$" $timeout)) (regexMatch "^([0.]+(ns|us|µs|ms|s|m|h))+$" $timeout) -]]
[[- fail (printf "media-microservices: call_timeout must be a positive Go duration such as 30s or 1m30s, got %q" $timeout) -]]
[[- end -]]
[[- if not (has (var "machine_id" .) (list "index" "hostname")) -]]
[[- fail (printf "media-microservices: machine_id must be \"index\" (the instance's index) or \"hostname\" (derived from the host name), got %q" (var "machine_id" .)) -]]
[[- end -]]
[[- $known := list "frontend" "unique-id" "movie-id" "text" "rating" "user" "compose-review" "review-storage" "user-review" "movie-review" "cast-info" "plot" "movie-info" "page" "mongodb-movie-id" "memcached-movie-id" "redis-rating" "mongodb-user" "memcached-user" "memcached-compose-review" "mongodb-review-storage" "memcached-review-storage" "mongodb-user-review" "redis-user-review" "mongodb-movie-review" "redis-movie-review" "mongodb-cast-info" "memcached-cast-info" "mongodb-plot" "memcached-plot" "mongodb-movie-info" "memcached-movie-info" -]]
[[- range $name, $_ := var "resources" . -]]
[[- if not (has $name $known) -]]
[[- fail (printf "media-microservices: resources names unknown group %q; known: %s" $name (join ", " $known)) -]]
[[- end -]]
[[- end -]]
[[- end -]]

[[- /*
  media_microservices.sizing fills the dict it is given (holding the pack
  context under "ctx", the group under "name" and whether it is one of the
  14 stateless mediamicro services under "stateless") with that task's
  resources:
    cores        cores declared after the variant and resource_scale
    cpu          MHz = cores x mhz_per_core, rounded (Nomad derives the CFS
                 quota as cpu / node MHz x node cores)
    memory       MiB = declared MiB x variant factor x resource_scale, the
                 hard limit; at least service_memory_mib for the services
                 and datastore_memory_mib for the datastores (x 2 for
                 vertical), which resource_scale does not shrink
    count        instances: the datastores always 1
    limit_cores  the CPU cap the harness's limits gate must find; 0 = none
  Baseline: 1 core / 1 GiB per container, 4 cores / 4 GiB for the frontend,
  as the hotel reservation (seed study 002). Overridable per group by the
  resources variable.
*/ -]]
[[- define "media_microservices.sizing" -]]
[[- $ctx := .ctx -]]
[[- $name := .name -]]
[[- $variant := var "variant" $ctx -]]
[[- $rs := float64 (var "resource_scale" $ctx) -]]
[[- $cores := 1.0 -]]
[[- $mib := 1024.0 -]]
[[- if eq $name "frontend" -]]
[[- $cores = 4.0 -]]
[[- $mib = 4096.0 -]]
[[- end -]]
[[- $override := get (var "resources" $ctx) $name -]]
[[- if $override -]]
[[- $cores = float64 $override.cores -]]
[[- $mib = float64 $override.memory_mib -]]
[[- end -]]
[[- if eq $variant "vertical" -]]
[[- $cores = mulf $cores 2 -]]
[[- $mib = mulf $mib 2 -]]
[[- end -]]
[[- $cores = mulf $cores $rs -]]
[[- $memory := round (mulf $mib $rs) 0 | int -]]
[[- /* a miniature is never OOM-killed: buffers, requests in flight and the dataset do not shrink with its CPU */ -]]
[[- $floor := var (ternary "service_memory_mib" "datastore_memory_mib" .stateless) $ctx | int -]]
[[- if eq $variant "vertical" -]][[- $floor = mul $floor 2 -]][[- end -]]
[[- $memory = max $memory $floor -]]
[[- if lt $memory 10 -]]
[[- fail (printf "media-microservices: resource_scale %v leaves %s %d MiB; Nomad needs at least 10" $rs $name $memory) -]]
[[- end -]]
[[- $count := 1 -]]
[[- if .stateless -]]
[[- if gt (var "scale" $ctx) 0 -]]
[[- $count = var "scale" $ctx -]]
[[- else if has $variant (list "horizontal" "ha") -]]
[[- $count = 2 -]]
[[- end -]]
[[- end -]]
[[- $_ := set . "cores" $cores -]]
[[- $_ = set . "cpu" (max 1 (round (mulf $cores (var "mhz_per_core" $ctx)) 0 | int)) -]]
[[- $_ = set . "memory" $memory -]]
[[- $_ = set . "count" $count -]]
[[- $_ = set . "limit_cores" (ternary 0 $cores (eq $variant "unlimited")) -]]
[[- end -]]

[[- /* An upstream's instances from Consul, comma-separated, for a task's
  upstreams template: every instance registered, healthy or not (a failing
  check must not move the callers), except those on a node Consul holds
  failed (its serfHealth not passing), whose registrations stay until the
  node's agent returns. first: the first such instance only (a MongoDB's or
  Redis's address: a store is never replicated). 127.0.0.1:1, which
  refuses, when there is none. The shape the hotel reservation and the
  social network use, which the Swarm and Kubernetes translators turn into
  one DNS name. */ -]]
[[- define "media_microservices.instances" -]]
{{ $n := 0 }}{{ range $s := service "[[ .svc ]]|any" }}{{ $up := true }}{{ range $s.Checks }}{{ if and (eq .CheckID "serfHealth") (ne .Status "passing") }}{{ $up = false }}{{ end }}{{ end }}{{ if [[ if .first ]]and $up (not $n)[[ else ]]$up[[ end ]] }}[[ if not .first ]]{{ if $n }},{{ end }}[[ end ]]{{ $n = 1 }}{{ $s.Address }}:{{ $s.Port }}{{ end }}{{ end }}{{ if not $n }}127.0.0.1:1{{ end }}
[[- end -]]
