[[- /*
  Helpers for the frontier pack: validation that fails early with the valid
  choices, the web tier's sizing computed once so the job spec and the meta
  the harness reads can never disagree, each route's probe, and the
  consul-template lookup of an upstream's address.
*/ -]]

[[- define "frontier.validate" -]]
[[- $pack := meta "pack.name" . -]]
[[- $variants := list "baseline" "vertical" "horizontal" "unlimited" -]]
[[- if not (has (var "variant" .) $variants) -]]
[[- fail (printf "%s: unknown variant %q; valid variants are: %s" $pack (var "variant" .) (join ", " $variants)) -]]
[[- end -]]
[[- $routes := list "/" "/remote" "/alternate" "/cached" -]]
[[- if not (has (var "route" .) $routes) -]]
[[- fail (printf "%s: unknown route %q; valid routes are: %s" $pack (var "route" .) (join ", " $routes)) -]]
[[- end -]]
[[- $scale := var "scale" . -]]
[[- if not (and (kindIs "int" $scale) (ge $scale 0)) -]]
[[- fail (printf "%s: scale must be a whole number of web tier instances (0 keeps the variant's own), got %v" $pack $scale) -]]
[[- end -]]
[[- if not (gt (float64 (var "resource_scale" .)) 0.0) -]]
[[- fail (printf "%s: resource_scale must be > 0, got %v" $pack (var "resource_scale" .)) -]]
[[- end -]]
[[- if not (gt (float64 (var "mhz_per_core" .)) 0.0) -]]
[[- fail (printf "%s: mhz_per_core must be > 0, got %v" $pack (var "mhz_per_core" .)) -]]
[[- end -]]
[[- range $name := list "cache_keys" "cache_ttl" "pool_concurrency" "remote_backlog" -]]
[[- $v := var $name $ -]]
[[- if not (and (kindIs "int" $v) (ge $v 1)) -]]
[[- fail (printf "%s: %s must be a whole number >= 1, got %v" $pack $name $v) -]]
[[- end -]]
[[- end -]]
[[- range $name := list "remote_seconds" "pool_cold_start" "pool_idle_reap" -]]
[[- if lt (float64 (var $name $)) 0.0 -]]
[[- fail (printf "%s: %s must be a number of seconds >= 0, got %v" $pack $name (var $name $)) -]]
[[- end -]]
[[- end -]]
[[- range $name := list "idle_timeout" "upstream_timeout" -]]
[[- if lt (float64 (var $name $)) 0.1 -]]
[[- fail (printf "%s: %s must be a number of seconds >= 0.1, got %v" $pack $name (var $name $)) -]]
[[- end -]]
[[- end -]]
[[- $mem := var "redis_memory_mib" . -]]
[[- if not (and (kindIs "int" $mem) (ge $mem 16)) -]]
[[- fail (printf "%s: redis_memory_mib must be a whole number >= 16, got %v" $pack $mem) -]]
[[- end -]]
[[- if not (gt (float64 (var "support_cores" .)) 0.0) -]]
[[- fail (printf "%s: support_cores must be > 0, got %v" $pack (var "support_cores" .)) -]]
[[- end -]]
[[- end -]]

[[- /*
  frontier.sizing fills the dict it is given (which must hold the pack
  context under "ctx") with the per-instance resources of the web tier:
    cores        cores after resource_scale (may be fractional)
    cpu          MHz = cores x mhz_per_core, rounded
    memory       MiB: 1024, 2048 for vertical; not scaled (see variables.hcl)
    memory_max   0, or the burst ceiling for the unlimited variant (8x)
    count        instances (scale when set, else 3 for horizontal, 1 otherwise)
    cpu_mode     quota (docker CFS) or shares (unlimited: no cap)
    limit_cores  the CPU cap the limits gate must find; 0 = no cap
    limit_memory the memory hard limit the limits gate must find
*/ -]]
[[- define "frontier.sizing" -]]
[[- $ctx := .ctx -]]
[[- $variant := var "variant" $ctx -]]
[[- $rs := float64 (var "resource_scale" $ctx) -]]
[[- $base_cores := 1.0 -]]
[[- $memory := 1024 -]]
[[- $count := 1 -]]
[[- if eq $variant "vertical" -]]
[[- $base_cores = 2.0 -]]
[[- $memory = 2048 -]]
[[- end -]]
[[- if gt (var "scale" $ctx) 0 -]]
[[- $count = var "scale" $ctx -]]
[[- else if eq $variant "horizontal" -]]
[[- $count = 3 -]]
[[- end -]]
[[- $cores := mulf $base_cores $rs -]]
[[- $memory_max := 0 -]]
[[- if eq $variant "unlimited" -]]
[[- $memory_max = mul $memory 8 -]]
[[- end -]]
[[- $_ := set . "cores" $cores -]]
[[- $_ = set . "cpu" (max 1 (round (mulf $cores (var "mhz_per_core" $ctx)) 0 | int)) -]]
[[- $_ = set . "memory" $memory -]]
[[- $_ = set . "memory_max" $memory_max -]]
[[- $_ = set . "count" $count -]]
[[- $_ = set . "cpu_mode" (ternary "shares" "quota" (eq $variant "unlimited")) -]]
[[- $_ = set . "limit_cores" (ternary 0 $cores (eq $variant "unlimited")) -]]
[[- $_ = set . "limit_memory" (ternary $memory_max $memory (eq $variant "unlimited")) -]]
[[- end -]]

[[- /*
  frontier.probe fills the dict it is given (holding "route") with the
  probe of that route: the smallest right answer's size and a pattern that
  only a right answer matches. /remote and /cached answer what the remote
  service said (a hit what an earlier miss stored), /alternate what a pool
  instance said.
*/ -]]
[[- define "frontier.probe" -]]
[[- $remote := "^\\{\"from\":\"remote\",\"request\":[0-9]+,\"work_ms\":[0-9]+\\}$" -]]
[[- if eq .route "/" -]]
[[- $_ := set . "regex" "^hello from frontier$" -]]
[[- $_ = set . "min_bytes" 19 -]]
[[- else if eq .route "/alternate" -]]
[[- $_ := set . "regex" "^\\{\"from\":\"pool\",\"request\":[0-9]+,\"work_ms\":[0-9]+,\"instance\":[0-9]+,\"cold\":(true|false)\\}$" -]]
[[- $_ = set . "min_bytes" 64 -]]
[[- else -]]
[[- $_ := set . "regex" $remote -]]
[[- $_ = set . "min_bytes" 41 -]]
[[- end -]]
[[- end -]]

[[- /* frontier.address: host:port of the named Consul service's first
  instance (registered, healthy or not), or an unreachable placeholder
  before it registers; the task restarts when it changes. */ -]]
[[- define "frontier.address" -]]
{{ with service "[[ . ]]|any" }}{{ with index . 0 }}{{ .Address }}:{{ .Port }}{{ end }}{{ else }}127.0.0.1:1{{ end }}
[[- end -]]
