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
[[- fail (printf "social-network: unknown driver %q; the only supported driver is docker" (var "driver" .)) -]]
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
[[- if or (lt (var "probe_user" .) 0) (ge (var "probe_user" .) $users) -]]
[[- fail (printf "social-network: probe_user %v is not one of the dataset's users 0..%v" (var "probe_user" .) (sub $users 1)) -]]
[[- end -]]
[[- if not (gt (float64 (var "resource_scale" .)) 0.0) -]]
[[- fail (printf "social-network: resource_scale must be > 0, got %v" (var "resource_scale" .)) -]]
[[- end -]]
[[- if not (gt (float64 (var "mhz_per_core" .)) 0.0) -]]
[[- fail (printf "social-network: mhz_per_core must be > 0, got %v" (var "mhz_per_core" .)) -]]
[[- end -]]
[[- $known := list "frontend" "compose-post" "text" "url-shorten" "user-mention" "media" "unique-id" "user" "social-graph" "post-storage" "user-timeline" "home-timeline" "ferretdb" "redis" "memcached" -]]
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
                 hard limit; for the datastores at least datastore_memory_mib
                 (x 2 for vertical), which resource_scale does not shrink
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
[[- else if has $name (list "ferretdb" "redis" "memcached") -]]
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
[[- if has $name (list "ferretdb" "redis" "memcached") -]]
[[- $floor := var "datastore_memory_mib" $ctx | int -]]
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

