[[- /*
  Helpers for the voting pack: a validate helper that fails early naming the
  variable and the valid choices, the job name, and a sizing helper that
  computes the app's (and v0's worker's) resources once, so the job spec and
  the meta the harness reads can never disagree.
*/ -]]

[[- define "voting.validate" -]]
[[- $pack := meta "pack.name" . -]]
[[- $variants := list "baseline" "vertical" "horizontal" "unlimited" -]]
[[- if not (has (var "variant" .) $variants) -]]
[[- fail (printf "%s: unknown variant %q; valid variants are: %s" $pack (var "variant" .) (join ", " $variants)) -]]
[[- end -]]
[[- $modes := list "v0" "v1" "v2" "v3" "v4" -]]
[[- if not (has (var "storage_mode" .) $modes) -]]
[[- fail (printf "%s: unknown storage_mode %q; valid storage modes are: %s" $pack (var "storage_mode" .) (join ", " $modes)) -]]
[[- end -]]
[[- $servers := list "runserver" "gunicorn" -]]
[[- if not (has (var "server" .) $servers) -]]
[[- fail (printf "%s: unknown server %q; valid servers are: %s" $pack (var "server" .) (join ", " $servers)) -]]
[[- end -]]
[[- $scale := var "scale" . -]]
[[- if not (and (kindIs "int" $scale) (ge $scale 0)) -]]
[[- fail (printf "%s: scale must be a whole number of instances (0 keeps the variant's own), got %v" $pack $scale) -]]
[[- end -]]
[[- if not (gt (float64 (var "resource_scale" .)) 0.0) -]]
[[- fail (printf "%s: resource_scale must be > 0, got %v" $pack (var "resource_scale" .)) -]]
[[- end -]]
[[- if not (gt (float64 (var "mhz_per_core" .)) 0.0) -]]
[[- fail (printf "%s: mhz_per_core must be > 0, got %v" $pack (var "mhz_per_core" .)) -]]
[[- end -]]
[[- $workers := var "gunicorn_workers" . -]]
[[- if not (and (kindIs "int" $workers) (ge $workers 0)) -]]
[[- fail (printf "%s: gunicorn_workers must be a whole number (0 derives it from the cores), got %v" $pack $workers) -]]
[[- end -]]
[[- $threads := var "gunicorn_threads" . -]]
[[- if not (and (kindIs "int" $threads) (ge $threads 1)) -]]
[[- fail (printf "%s: gunicorn_threads must be a whole number >= 1, got %v" $pack $threads) -]]
[[- end -]]
[[- if not (gt (float64 (var "cache_seconds" .)) 0.0) -]]
[[- fail (printf "%s: cache_seconds must be > 0, got %v" $pack (var "cache_seconds" .)) -]]
[[- end -]]
[[- $parties := var "parties" . -]]
[[- if eq (len $parties) 0 -]]
[[- fail (printf "%s: parties must name at least one party" $pack) -]]
[[- end -]]
[[- range $parties -]]
[[- if or (eq . "") (contains "," .) (gt (len .) 100) -]]
[[- fail (printf "%s: parties: %q is not a party name (1 to 100 characters, no comma)" $pack .) -]]
[[- end -]]
[[- end -]]
[[- range $name := list "postgres_memory_mib" "redis_memory_mib" -]]
[[- $mib := var $name $ -]]
[[- if not (and (kindIs "int" $mib) (ge $mib 128)) -]]
[[- fail (printf "%s: %s must be a whole number >= 128, got %v" $pack $name $mib) -]]
[[- end -]]
[[- end -]]
[[- range $name := list "postgres_cores" "redis_cores" -]]
[[- if not (gt (float64 (var $name $)) 0.0) -]]
[[- fail (printf "%s: %s must be > 0, got %v" $pack $name (var $name $)) -]]
[[- end -]]
[[- end -]]
[[- $checks := list "pg_isready" "tcp" -]]
[[- if not (has (var "postgres_check" .) $checks) -]]
[[- fail (printf "%s: unknown postgres_check %q; valid checks are: %s" $pack (var "postgres_check" .) (join ", " $checks)) -]]
[[- end -]]
[[- if eq (var "db_password" .) "" -]]
[[- fail (printf "%s: db_password must not be empty (the app connects over TCP with a password)" $pack) -]]
[[- end -]]
[[- end -]]

[[- /*
  voting.env: the env entries the app and v0's worker share (a dict of ctx,
  size and worker).
*/ -]]
[[- define "voting.env" -]]
[[- $ctx := .ctx ]]
        STORAGE_MODE         = "[[ var "storage_mode" $ctx ]]"
        VOTING_SERVER        = "[[ var "server" $ctx ]]"
        # the study ran runserver with DEBUG on; gunicorn runs as in production
        DJANGO_DEBUG         = "[[ and (not .worker) (eq (var "server" $ctx) "runserver") ]]"
        GUNICORN_WORKERS     = "[[ .size.workers ]]"
        GUNICORN_THREADS     = "[[ var "gunicorn_threads" $ctx ]]"
        VOTING_PARTIES       = "[[ join "," (var "parties" $ctx) ]]"
        VOTING_CACHE_SECONDS = "[[ var "cache_seconds" $ctx ]]"
        # the stores may still be starting: the app retries this long, then exits so it shows
        VOTING_WAIT_SECONDS  = "180"
        POSTGRES_DB          = "voting"
        POSTGRES_USER        = "voting"
        POSTGRES_PASSWORD    = [[ var "db_password" $ctx | quote ]]
[[- end -]]

[[- /*
  voting.stores: the stores' host:port from Consul (registered, healthy or
  not: the app retries until they answer). Before a store is registered an
  unreachable placeholder renders, and the task restarts once it is.
*/ -]]
[[- define "voting.stores" -]]
[[- $mode := var "storage_mode" .ctx ]]
      template {
        destination = "local/stores.env"
        env         = true
        change_mode = "restart"
        splay       = "1s"
        data        = <<EOT
[[- if has $mode (list "v0" "v1" "v2") ]]
POSTGRES_ADDR={{ with service "[[ .job ]]-postgres|any" }}{{ with index . 0 }}{{ .Address }}:{{ .Port }}{{ end }}{{ else }}127.0.0.1:1{{ end }}
[[- end ]]
[[- if has $mode (list "v0" "v3" "v4") ]]
REDIS_ADDR={{ with service "[[ .job ]]-redis|any" }}{{ with index . 0 }}{{ .Address }}:{{ .Port }}{{ end }}{{ else }}127.0.0.1:1{{ end }}
[[- end ]]
EOT
      }
[[- end -]]

[[- /*
  voting.sizing fills the dict it is given (which must hold the pack context
  under "ctx") with the per-instance resources of the app, which v0's
  worker shares:
    cores        cores after resource_scale (may be fractional)
    cpu          MHz = cores x mhz_per_core, rounded
    memory       MiB: 1024, 2048 for vertical; not scaled (see variables.hcl)
    memory_max   0, or the burst ceiling for the unlimited variant (8x)
    count        app instances (scale when set, else 2 for horizontal, 1 otherwise)
    cpu_mode     quota (docker CFS) or shares (unlimited: no cap)
    limit_cores  the CPU cap the limits gate must find; 0 = no cap
    limit_memory the memory hard limit the limits gate must find
    workers      gunicorn processes: gunicorn_workers, or twice the cores rounded up
*/ -]]
[[- define "voting.sizing" -]]
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
[[- $count = 2 -]]
[[- end -]]
[[- $cores := mulf $base_cores $rs -]]
[[- $memory_max := 0 -]]
[[- if eq $variant "unlimited" -]]
[[- $memory_max = mul $memory 8 -]]
[[- end -]]
[[- $workers := var "gunicorn_workers" $ctx -]]
[[- if eq $workers 0 -]]
[[- $workers = max 1 (ceil (mulf $cores 2) | int) -]]
[[- end -]]
[[- $_ := set . "cores" $cores -]]
[[- $_ = set . "cpu" (max 1 (round (mulf $cores (var "mhz_per_core" $ctx)) 0 | int)) -]]
[[- $_ = set . "memory" $memory -]]
[[- $_ = set . "memory_max" $memory_max -]]
[[- $_ = set . "count" $count -]]
[[- $_ = set . "cpu_mode" (ternary "shares" "quota" (eq $variant "unlimited")) -]]
[[- $_ = set . "limit_cores" (ternary 0 $cores (eq $variant "unlimited")) -]]
[[- $_ = set . "limit_memory" (ternary $memory_max $memory (eq $variant "unlimited")) -]]
[[- $_ = set . "workers" $workers -]]
[[- end -]]
