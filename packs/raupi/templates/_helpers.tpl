[[- /*
  Helpers for the raupi pack. Every orchbench pack keeps the same shape:
  a validate helper that fails early with the valid choices, and a sizing
  helper that computes resources once so the job spec and the job meta the
  harness reads can never disagree.
*/ -]]

[[- define "raupi.job_name" -]]
[[- if eq (var "job_name" .) "" -]]
[[- printf "%s-%s" (meta "pack.name" .) (var "variant" .) -]]
[[- else -]]
[[- var "job_name" . -]]
[[- end -]]
[[- end -]]

[[- /* The Consul service keeps the app's name unless the job is renamed. */ -]]
[[- define "raupi.service_name" -]]
[[- if eq (var "job_name" .) "" -]]
[[- meta "pack.name" . -]]
[[- else -]]
[[- var "job_name" . -]]
[[- end -]]
[[- end -]]

[[- define "raupi.validate" -]]
[[- $variants := list "baseline" "vertical" "horizontal" "unlimited" -]]
[[- if not (has (var "variant" .) $variants) -]]
[[- fail (printf "raupi: unknown variant %q; valid variants are: %s" (var "variant" .) (join ", " $variants)) -]]
[[- end -]]
[[- $drivers := list "docker" "exec" -]]
[[- if not (has (var "driver" .) $drivers) -]]
[[- fail (printf "raupi: unknown driver %q; valid drivers are: %s" (var "driver" .) (join ", " $drivers)) -]]
[[- end -]]
[[- $scale := var "scale" . -]]
[[- if not (and (kindIs "int" $scale) (ge $scale 0)) -]]
[[- fail (printf "raupi: scale must be a whole number of instances (0 keeps the variant's own), got %v" $scale) -]]
[[- end -]]
[[- if not (gt (float64 (var "resource_scale" .)) 0.0) -]]
[[- fail (printf "raupi: resource_scale must be > 0, got %v" (var "resource_scale" .)) -]]
[[- end -]]
[[- if not (gt (float64 (var "mhz_per_core" .)) 0.0) -]]
[[- fail (printf "raupi: mhz_per_core must be > 0, got %v" (var "mhz_per_core" .)) -]]
[[- end -]]
[[- $difficulty := var "difficulty" . -]]
[[- if not (and (kindIs "int" $difficulty) (ge $difficulty 1)) -]]
[[- fail (printf "raupi: difficulty must be a whole number >= 1, got %v" $difficulty) -]]
[[- end -]]
[[- end -]]

[[- /*
  raupi.sizing fills the dict it is given (which must hold the pack context
  under "ctx") with the per-instance resources of the chosen variant:
    cores        cores reserved after resource_scale (may be fractional)
    cpu          MHz = cores x mhz_per_core, rounded; Nomad derives the CFS
                 quota from it as cpu / node MHz x node cores
    memory       MiB = GiB x 1024 x resource_scale, rounded; the hard limit
    memory_max   0, or the burst ceiling for the unlimited variant (8x)
    count        instances (scale when set, else 2 for horizontal and 1 otherwise)
    cpu_mode     how the CPU limit is enforced, for the harness's limits gate:
                 quota (docker CFS), shares (no cap), cpuset (exec cores),
                 unenforced (exec with fractional cores: reservation only)
    limit_cores  the CPU cap the harness must find enforced; 0 = no cap
    limit_memory the memory hard limit the harness must find enforced
*/ -]]
[[- define "raupi.sizing" -]]
[[- $ctx := .ctx -]]
[[- $variant := var "variant" $ctx -]]
[[- $rs := float64 (var "resource_scale" $ctx) -]]
[[- $base_cores := 1.0 -]]
[[- $base_gib := 1.0 -]]
[[- $count := 1 -]]
[[- if eq $variant "vertical" -]]
[[- $base_cores = 2.0 -]]
[[- $base_gib = 2.0 -]]
[[- end -]]
[[- if gt (var "scale" $ctx) 0 -]]
[[- $count = var "scale" $ctx -]]
[[- else if eq $variant "horizontal" -]]
[[- $count = 2 -]]
[[- end -]]
[[- $cores := mulf $base_cores $rs -]]
[[- $memory := round (mulf $base_gib 1024 $rs) 0 | int -]]
[[- if lt $memory 10 -]]
[[- fail (printf "raupi: resource_scale %v leaves %d MiB per instance; Nomad needs at least 10" $rs $memory) -]]
[[- end -]]
[[- $memory_max := 0 -]]
[[- if eq $variant "unlimited" -]]
[[- $memory_max = mul $memory 8 -]]
[[- end -]]
[[- $cpu_mode := "quota" -]]
[[- if eq $variant "unlimited" -]]
[[- $cpu_mode = "shares" -]]
[[- else if eq (var "driver" $ctx) "exec" -]]
[[- if and (eq $cores (floor $cores)) (ge $cores 1.0) -]]
[[- $cpu_mode = "cpuset" -]]
[[- else -]]
[[- $cpu_mode = "unenforced" -]]
[[- end -]]
[[- end -]]
[[- $_ := set . "cores" $cores -]]
[[- $_ = set . "cpu" (max 1 (round (mulf $cores (var "mhz_per_core" $ctx)) 0 | int)) -]]
[[- $_ = set . "memory" $memory -]]
[[- $_ = set . "memory_max" $memory_max -]]
[[- $_ = set . "count" $count -]]
[[- $_ = set . "cpu_mode" $cpu_mode -]]
[[- $_ = set . "limit_cores" (ternary 0 $cores (eq $variant "unlimited")) -]]
[[- $_ = set . "limit_memory" (ternary $memory_max $memory (eq $variant "unlimited")) -]]
[[- end -]]
