[[- /*
  Helpers for the books-kotlin pack (packs/books-node has the same shape):
  a validate helper that fails early with the valid choices, and a sizing
  helper that computes the app's resources once so the job spec and the
  meta the harness reads can never disagree.
*/ -]]

[[- define "books.validate" -]]
[[- $pack := meta "pack.name" . -]]
[[- $variants := list "baseline" "vertical" "horizontal" "unlimited" -]]
[[- if not (has (var "variant" .) $variants) -]]
[[- fail (printf "%s: unknown variant %q; valid variants are: %s" $pack (var "variant" .) (join ", " $variants)) -]]
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
[[- $pgmem := var "postgres_memory_mib" . -]]
[[- if not (and (kindIs "int" $pgmem) (ge $pgmem 128)) -]]
[[- fail (printf "%s: postgres_memory_mib must be a whole number >= 128, got %v" $pack $pgmem) -]]
[[- end -]]
[[- if not (gt (float64 (var "postgres_cores" .)) 0.0) -]]
[[- fail (printf "%s: postgres_cores must be > 0, got %v" $pack (var "postgres_cores" .)) -]]
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
  books.sizing fills the dict it is given (which must hold the pack context
  under "ctx") with the per-instance resources of the app:
    cores        cores after resource_scale (may be fractional)
    cpu          MHz = cores x mhz_per_core, rounded
    memory       MiB: 1024, 2048 for vertical; not scaled (see variables.hcl)
    memory_max   0, or the burst ceiling for the unlimited variant (8x)
    count        instances (scale when set, else 2 for horizontal, 1 otherwise)
    cpu_mode     quota (docker CFS) or shares (unlimited: no cap)
    limit_cores  the CPU cap the limits gate must find; 0 = no cap
    limit_memory the memory hard limit the limits gate must find
*/ -]]
[[- define "books.sizing" -]]
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
[[- $_ := set . "cores" $cores -]]
[[- $_ = set . "cpu" (max 1 (round (mulf $cores (var "mhz_per_core" $ctx)) 0 | int)) -]]
[[- $_ = set . "memory" $memory -]]
[[- $_ = set . "memory_max" $memory_max -]]
[[- $_ = set . "count" $count -]]
[[- $_ = set . "cpu_mode" (ternary "shares" "quota" (eq $variant "unlimited")) -]]
[[- $_ = set . "limit_cores" (ternary 0 $cores (eq $variant "unlimited")) -]]
[[- $_ = set . "limit_memory" (ternary $memory_max $memory (eq $variant "unlimited")) -]]
[[- end -]]
