[[- /*
  Helpers for the taewa pack. Every orchbench pack keeps the same shape:
  a validate helper that fails early with the valid choices, and a sizing
  helper that computes resources once so the job spec and the job meta the
  harness reads can never disagree.
*/ -]]

[[- define "taewa.job_name" -]]
[[- if eq (var "job_name" .) "" -]]
[[- printf "%s-%s" (meta "pack.name" .) (var "variant" .) -]]
[[- else -]]
[[- var "job_name" . -]]
[[- end -]]
[[- end -]]

[[- /* The Consul service keeps the app's name unless the job is renamed. */ -]]
[[- define "taewa.service_name" -]]
[[- if eq (var "job_name" .) "" -]]
[[- meta "pack.name" . -]]
[[- else -]]
[[- var "job_name" . -]]
[[- end -]]
[[- end -]]

[[- define "taewa.validate" -]]
[[- $variants := list "baseline" "vertical" "horizontal" "unlimited" -]]
[[- if not (has (var "variant" .) $variants) -]]
[[- fail (printf "taewa: unknown variant %q; valid variants are: %s" (var "variant" .) (join ", " $variants)) -]]
[[- end -]]
[[- $drivers := list "docker" "exec" -]]
[[- if not (has (var "driver" .) $drivers) -]]
[[- fail (printf "taewa: unknown driver %q; valid drivers are: %s" (var "driver" .) (join ", " $drivers)) -]]
[[- end -]]
[[- $scale := var "scale" . -]]
[[- if not (and (kindIs "int" $scale) (ge $scale 0)) -]]
[[- fail (printf "taewa: scale must be a whole number of instances (0 keeps the variant's own), got %v" $scale) -]]
[[- end -]]
[[- if not (gt (float64 (var "resource_scale" .)) 0.0) -]]
[[- fail (printf "taewa: resource_scale must be > 0, got %v" (var "resource_scale" .)) -]]
[[- end -]]
[[- if not (gt (float64 (var "mhz_per_core" .)) 0.0) -]]
[[- fail (printf "taewa: mhz_per_core must be > 0, got %v" (var "mhz_per_core" .)) -]]
[[- end -]]
[[- $as := var "autoscale" . -]]
[[- if $as.enabled -]]
[[- if not (and (eq (float64 $as.min) (floor (float64 $as.min))) (ge (float64 $as.min) 1.0)) -]]
[[- fail (printf "taewa: autoscale.min must be a whole number of instances >= 1, got %v" $as.min) -]]
[[- end -]]
[[- if not (and (eq (float64 $as.max) (floor (float64 $as.max))) (ge (float64 $as.max) (float64 $as.min))) -]]
[[- fail (printf "taewa: autoscale.max must be a whole number >= autoscale.min (%v), got %v" $as.min $as.max) -]]
[[- end -]]
[[- if not (and (gt (float64 $as.target_cpu) 0.0) (le (float64 $as.target_cpu) 1.0)) -]]
[[- fail (printf "taewa: autoscale.target_cpu is a share of each instance's reserved CPU, above 0 and at most 1, got %v" $as.target_cpu) -]]
[[- end -]]
[[- if gt $scale 0 -]]
[[- fail (printf "taewa: autoscale sets the instance count (from autoscale.min); scale must be 0 with it, got %v" $scale) -]]
[[- end -]]
[[- end -]]
[[- $difficulty := var "difficulty" . -]]
[[- if not (and (kindIs "int" $difficulty) (ge $difficulty 1)) -]]
[[- fail (printf "taewa: difficulty must be a whole number >= 1, got %v" $difficulty) -]]
[[- end -]]
[[- end -]]

[[- /*
  taewa.sizing fills the dict it is given (which must hold the pack context
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
[[- define "taewa.sizing" -]]
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
[[- if (var "autoscale" $ctx).enabled -]]
[[- $count = int (var "autoscale" $ctx).min -]]
[[- else if gt (var "scale" $ctx) 0 -]]
[[- $count = var "scale" $ctx -]]
[[- else if eq $variant "horizontal" -]]
[[- $count = 2 -]]
[[- end -]]
[[- $cores := mulf $base_cores $rs -]]
[[- $memory := round (mulf $base_gib 1024 $rs) 0 | int -]]
[[- if lt $memory 10 -]]
[[- fail (printf "taewa: resource_scale %v leaves %d MiB per instance; Nomad needs at least 10" $rs $memory) -]]
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

[[- /*
  taewa.names fills the dict it is given (the pack context under "ctx"):
    service  the measured service (the entry's, with autoscale)
    web      the instances' service (the same without autoscale)
    query    the autoscaling metric: the instances' mean CPU use as a
             percentage of what each reserves (cores), from the CPU time the
             node probes publish per task and VictoriaMetrics scrapes (the
             Nomad Autoscaler's Prometheus source); the harness runs the
             same query to learn whether the autoscaler had samples
*/ -]]
[[- define "taewa.names" -]]
[[- $ctx := .ctx -]]
[[- $job := printf "%s-%s" (meta "pack.name" $ctx) (var "variant" $ctx) -]]
[[- $svc := meta "pack.name" $ctx -]]
[[- if ne (var "job_name" $ctx) "" -]]
[[- $job = var "job_name" $ctx -]]
[[- $svc = var "job_name" $ctx -]]
[[- end -]]
[[- $_ := set . "service" $svc -]]
[[- $_ = set . "web" $svc -]]
[[- if (var "autoscale" $ctx).enabled -]]
[[- $_ = set . "web" (printf "%s-web" $svc) -]]
[[- end -]]
[[- $size := dict "ctx" $ctx -]]
[[- template "taewa.sizing" $size -]]
[[- $_ = set . "query" (printf "100 * avg(rate(orchbench_task_cpu_seconds_total{nomad_job=\"%s\",task_group=\"taewa\"}[15s])) / %v" $job $size.cores) -]]
[[- end -]]
