# The load generator as a parameterized Nomad batch job. The harness dispatches
# it once per step with the step's load arguments as meta, then reads the
# result the task leaves in the allocation directory:
#   nomad job run -var image=orchbench/orchbench:<tag> jobs/loadgen.nomad.hcl
#   nomad job dispatch -meta args='["-t2","-c16","-d10s","-R500","http://127.0.0.1:24000/"]' -meta step=... orchbench-loadgen
variable "image" {
  type        = string
  description = "The orchbench image (FROM scratch, built by cluster/images.sh orchbench)."
}

variable "cpu" {
  type        = number
  default     = 500
  description = "MHz reserved for the load generator, so the scheduler keeps that much off the measured tasks."
}

variable "cpu_hard_limit" {
  type        = bool
  default     = false
  description = "Cap the generator at cpu MHz (the harness registers a capped copy of this job when a spec sets generator_cores)."
}

job "orchbench-loadgen" {
  type = "batch"

  # the payload, when given, is the step's wrk Lua script
  parameterized {
    payload       = "optional"
    meta_required = ["args", "step"]
    meta_optional = ["timeout"]
  }

  group "load" {
    # never on a worker, whose CPU the measured tasks own: on the emulated
    # cluster that leaves the client node (harness/placement); a single node
    # carries no role and takes it as before
    constraint {
      attribute = "${meta.orchbench.role}"
      operator  = "!="
      value     = "worker"
    }

    # a failed load step is recorded as failed by the harness; retrying would
    # silently change what was measured
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "load" {
      driver = "docker"

      dispatch_payload {
        file = "script.lua"
      }

      config {
        image = var.image
        # the load goes straight to the instances' addresses from Consul, without
        # a NAT hop of its own in between
        network_mode   = "host"
        args           = ["loadjob", "--out", "/alloc/result.json"]
        cpu_hard_limit = var.cpu_hard_limit
      }

      resources {
        cpu    = var.cpu
        memory = 256
      }
    }
  }
}
