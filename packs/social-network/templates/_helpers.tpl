[[- /*
  Helpers for the social-network pack, in the shape every orchbench pack
  keeps: validate fails early with the valid choices; sizing computes every
  task's resources once so the job spec and the meta the harness reads can
  never disagree.
*/ -]]

[[- define "social_network.job_name" -]]
[[- if eq (var "job_name" .) "" -]]
[[- printf "%s-%s" (meta "pack.name" .) (var "variant" .) -]]
[[- else -]]
[[- var "job_name" . -]]
[[- end -]]
[[- end -]]

[[- define "social_network.validate" -]]
[[- $variants := list "baseline" "vertical" "horizontal" "ha" "unlimited" -]]
[[- if not (has (var "variant" .) $variants) -]]
[[- fail (printf "social-network: unknown variant %q; valid variants are: %s" (var "variant" .) (join ", " $variants)) -]]
[[- end -]]
[[- if eq (var "driver" .) "exec" -]]
[[- fail "social-network: driver exec is not supported: the services ship as FROM scratch images (cluster/images.sh dsb); use driver docker" -]]
[[- end -]]
[[- if ne (var "driver" .) "docker" -]]
[[- fail (printf "social-network: unknown driver %q; valid drivers are: docker" (var "driver" .)) -]]
[[- end -]]
[[- $scale := var "scale" . -]]
[[- if not (and (kindIs "int" $scale) (ge $scale 0)) -]]
[[- fail (printf "social-network: scale must be a whole number of instances (0 keeps the variant's own), got %v" $scale) -]]
[[- end -]]
[[- $dscale := var "datastore_scale" . -]]
[[- if not (and (kindIs "int" $dscale) (ge $dscale 1)) -]]
[[- fail (printf "social-network: datastore_scale must be a whole number of instances >= 1, got %v" $dscale) -]]
[[- end -]]
[[- $users := var "dataset_users" . -]]
[[- if not (and (kindIs "int" $users) (ge $users 2)) -]]
[[- fail (printf "social-network: dataset_users must be a whole number >= 2, got %v" $users) -]]
[[- end -]]
[[- $seed := var "dataset_seed" . -]]
[[- if not (and (kindIs "int" $seed) (ge $seed 0)) -]]
[[- fail (printf "social-network: dataset_seed must be a whole number >= 0, got %v" $seed) -]]
[[- end -]]
[[- $posts := var "dataset_posts_per_user" . -]]
[[- if not (and (kindIs "int" $posts) (ge $posts 0)) -]]
[[- fail (printf "social-network: dataset_posts_per_user must be a whole number >= 0, got %v" $posts) -]]
[[- end -]]
[[- if and (var "dataset_snapshot" .) (eq (var "mongodb_uri" .) "") (lt $posts 1) -]]
[[- fail "social-network: dataset_snapshot needs dataset_posts_per_user >= 1 (a snapshot is verified, and verification expects every user to have posted); set dataset_snapshot = false for a dataset without posts" -]]
[[- end -]]
[[- if or (lt (var "probe_user" .) 0) (ge (var "probe_user" .) $users) -]]
[[- fail (printf "social-network: probe_user %v is not one of the dataset's users 0..%v" (var "probe_user" .) (sub $users 1)) -]]
[[- end -]]
[[- $conns := var "rpc_connections" . -]]
[[- if not (and (kindIs "int" $conns) (ge $conns 1)) -]]
[[- fail (printf "social-network: rpc_connections must be a whole number of connections >= 1, got %v" $conns) -]]
[[- end -]]
[[- $maxprocs := var "go_maxprocs" . -]]
[[- if not (and (kindIs "int" $maxprocs) (ge $maxprocs -1)) -]]
[[- fail (printf "social-network: go_maxprocs must be -1 (Go's default), 0 (one processor for a task declared a core or less) or a whole number of processors, got %v" $maxprocs) -]]
[[- end -]]
[[- if not (has (var "machine_id" .) (list "index" "hostname")) -]]
[[- fail (printf "social-network: machine_id must be \"index\" (the instance's index) or \"hostname\" (derived from the host name), got %q" (var "machine_id" .)) -]]
[[- end -]]
[[- range $timeout := list "rpc_timeout" "rpc_call_timeout" -]]
[[- $value := var $timeout $ -]]
[[- if or (not (regexMatch "^([0-9]*[.]?[0-9]+(ns|us|µs|ms|s|m|h))+$" $value)) (regexMatch "^([0.]+(ns|us|µs|ms|s|m|h))+$" $value) -]]
[[- fail (printf "social-network: %s must be a positive Go duration such as 10s or 1m30s, got %q" $timeout $value) -]]
[[- end -]]
[[- end -]]
[[- if not (gt (float64 (var "resource_scale" .)) 0.0) -]]
[[- fail (printf "social-network: resource_scale must be > 0, got %v" (var "resource_scale" .)) -]]
[[- end -]]
[[- if not (gt (float64 (var "mhz_per_core" .)) 0.0) -]]
[[- fail (printf "social-network: mhz_per_core must be > 0, got %v" (var "mhz_per_core" .)) -]]
[[- end -]]
[[- $backends := list "sqlite" "postgresql" -]]
[[- if not (has (var "ferretdb_backend" .) $backends) -]]
[[- fail (printf "social-network: unknown ferretdb_backend %q; valid backends are: %s" (var "ferretdb_backend" .) (join ", " $backends)) -]]
[[- end -]]
[[- $known := list "frontend" "compose-post" "text" "url-shorten" "user-mention" "media" "unique-id" "user" "social-graph" "post-storage" "user-timeline" "home-timeline" "ferretdb" "postgres" "redis" "memcached" -]]
[[- range $name, $_ := var "resources" . -]]
[[- if not (has $name $known) -]]
[[- fail (printf "social-network: resources names unknown service %q; known: %s" $name (join ", " $known)) -]]
[[- end -]]
[[- end -]]
[[- end -]]

[[- /*
  social_network.sizing fills the dict it is given (holding the pack context
  under "ctx", the task under "name" and whether it is one of the 12
  stateless socialnet services under "stateless") with that task's resources:
    cores        cores declared after the variant and resource_scale
    cpu          MHz = cores x mhz_per_core, rounded (Nomad derives the CFS
                 quota as cpu / node MHz x node cores)
    memory       MiB = declared MiB x variant factor x resource_scale, the
                 hard limit; at least datastore_memory_mib for the datastores
                 and service_memory_mib for the services (x 2 for vertical),
                 which resource_scale does not shrink
    count        instances
    limit_cores  the CPU cap the harness's limits gate must find; 0 = none
  Baseline: 1 core / 1 GiB per service, 4 cores / 4 GiB for the frontend
  (seed study 002); the datastores 1 core / 4 GiB, since they hold the
  dataset (FerretDB's SQLite pages, the Redis timelines, the memcached
  cache) and FerretDB needs ~90 MiB under the load already. Overridable per
  task by the resources variable.
*/ -]]
[[- define "social_network.sizing" -]]
[[- $ctx := .ctx -]]
[[- $name := .name -]]
[[- $variant := var "variant" $ctx -]]
[[- $rs := float64 (var "resource_scale" $ctx) -]]
[[- $cores := 1.0 -]]
[[- $mib := 1024.0 -]]
[[- if eq $name "frontend" -]]
[[- $cores = 4.0 -]]
[[- $mib = 4096.0 -]]
[[- else if has $name (list "ferretdb" "postgres" "redis" "memcached") -]]
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
[[- /* a store holds the dataset whatever the miniature's CPU: below its floor it is OOM-killed and measures nothing */ -]]
[[- if has $name (list "ferretdb" "postgres" "redis" "memcached") -]]
[[- $floor := var "datastore_memory_mib" $ctx | int -]]
[[- if eq $variant "vertical" -]][[- $floor = mul $floor 2 -]][[- end -]]
[[- $memory = max $memory $floor -]]
[[- else -]]
[[- /* nor is a service starved: connection buffers and requests in flight do not shrink with its CPU (at 31 MiB the user service was OOM-killed under the loader's 200 concurrent clients) */ -]]
[[- $floor := var "service_memory_mib" $ctx | int -]]
[[- if eq $variant "vertical" -]][[- $floor = mul $floor 2 -]][[- end -]]
[[- $memory = max $memory $floor -]]
[[- end -]]
[[- if lt $memory 10 -]]
[[- fail (printf "social-network: resource_scale %v leaves %s %d MiB; Nomad needs at least 10" $rs $name $memory) -]]
[[- end -]]
[[- $count := 1 -]]
[[- if .stateless -]]
[[- if gt (var "scale" $ctx) 0 -]]
[[- $count = var "scale" $ctx -]]
[[- else if has $variant (list "horizontal" "ha") -]]
[[- $count = 2 -]]
[[- end -]]
[[- end -]]
[[- if eq $name "memcached" -]]
[[- $count = var "datastore_scale" $ctx -]]
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
  failed (its serfHealth not passing). A dead worker's instances stay
  registered until its agent returns: listed, they kept the callers dialing
  them after a kill-node, up to 69 % of a step's requests failing, and the
  dataset unreadable after it. first: the first such instance only (a
  store's URI). 127.0.0.1:1, which refuses, when there is none. */ -]]
[[- define "social_network.instances" -]]
{{ $n := 0 }}{{ range $s := service "[[ .svc ]]|any" }}{{ $up := true }}{{ range $s.Checks }}{{ if and (eq .CheckID "serfHealth") (ne .Status "passing") }}{{ $up = false }}{{ end }}{{ end }}{{ if [[ if .first ]]and $up (not $n)[[ else ]]$up[[ end ]] }}[[ if not .first ]]{{ if $n }},{{ end }}[[ end ]]{{ $n = 1 }}{{ $s.Address }}:{{ $s.Port }}{{ end }}{{ end }}{{ if not $n }}127.0.0.1:1{{ end }}
[[- end -]]
