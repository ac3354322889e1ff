[[- template "myapp.validate" . -]]
[[- $size := dict "ctx" . -]]
[[- template "myapp.sizing" $size -]]
job "[[ template "myapp.job_name" . ]]" {
  region      = [[ var "region" . | quote ]]
  datacenters = [[ var "datacenters" . | toStringList ]]
  type        = "service"

  # The contract the harness reads: what to verify, probe and load.
  meta {
    orchbench_app             = "myapp"
    orchbench_variant         = "[[ var "variant" . ]]"
    orchbench_resource_scale  = "[[ var "resource_scale" . ]]"
    orchbench_cores           = "[[ $size.limit_cores ]]"
    orchbench_memory_mib      = "[[ $size.memory ]]"
    orchbench_cpu_mode        = "[[ $size.cpu_mode ]]"
    orchbench_service         = "[[ template "myapp.job_name" . ]]"
    orchbench_probe_path      = "/"
    orchbench_probe_min_bytes = "2"
    orchbench_load_path       = "/"
  }

  group "myapp" {
    count = [[ $size.count ]]

    network {
      mode = "bridge"
      port "http" {
        to = [[ var "port" . ]]
      }
    }

    service {
      provider = "consul"
      name     = "[[ template "myapp.job_name" . ]]"
      port     = "http"

      check {
        type     = "http"
        path     = "/"
        interval = "2s"
        timeout  = "1s"
      }
    }

    task "myapp" {
      driver = "docker"

      config {
        image          = [[ var "image" . | quote ]]
        ports          = ["http"]
        cpu_hard_limit = [[ ne (var "variant" .) "unlimited" ]]
      }

      resources {
        cpu    = [[ $size.cpu ]]
        memory = [[ $size.memory ]]
      }
    }
  }
}
