# A study's own load tool (Fortio, ...) as a one-shot Nomad batch job: the
# alternative to jobs/loadgen.nomad.hcl for a step whose spec names a runner.
# The harness registers one job per step with the tool's arguments, renames
# it, waits for it and reads the result the tool leaves in /alloc:
#   nomad job run -var image=orchbench/fortio:v1.66.5 \
#     -var 'args=["load","-qps","-1","-c","15","-t","30s","-json","/alloc/result.json","http://127.0.0.1:24000/"]' \
#     jobs/loadtool.nomad.hcl
variable "image" {
  type        = string
  description = "The tool's image (cluster/images.sh fortio)."
}

variable "args" {
  type        = list(string)
  description = "The tool's arguments for the measured run; it writes its result to /alloc/result.json."
}

variable "warmup_args" {
  type        = list(string)
  default     = []
  description = "The tool's arguments for an unrecorded warm-up run before the measured one (none when empty)."
}

variable "files" {
  type        = map(string)
  default     = {}
  description = "Input files of the tool (a Locust locustfile) by name, written to each task's local/ directory."
}

variable "cpu" {
  type        = number
  default     = 500
  description = "MHz reserved for the tool, as for orchbench's generator."
}

variable "cpu_hard_limit" {
  type        = bool
  default     = false
  description = "Cap the tool at cpu MHz (a spec's generator_cores)."
}

variable "memory" {
  type        = number
  default     = 256
  description = "MiB, a hard limit, the same as orchbench's generator."
}

job "orchbench-loadtool" {
  type = "batch"

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

    dynamic "task" {
      for_each = length(var.warmup_args) > 0 ? ["warmup"] : []
      labels   = ["warmup"]
      content {
        driver = "docker"
        lifecycle {
          hook    = "prestart"
          sidecar = false
        }
        dynamic "template" {
          for_each = var.files
          content {
            data        = template.value
            destination = "local/${template.key}"
            # the files are the tool's, verbatim: no template syntax in them
            left_delimiter  = "[[orchbench-no-template["
            right_delimiter = "]orchbench-no-template]]"
          }
        }
        config {
          image          = var.image
          network_mode   = "host"
          args           = var.warmup_args
          cpu_hard_limit = var.cpu_hard_limit
        }
        resources {
          cpu    = var.cpu
          memory = var.memory
        }
      }
    }

    task "load" {
      driver = "docker"
      dynamic "template" {
        for_each = var.files
        content {
          data        = template.value
          destination = "local/${template.key}"
          # the files are the tool's, verbatim: no template syntax in them
          left_delimiter  = "[[orchbench-no-template["
          right_delimiter = "]orchbench-no-template]]"
        }
      }
      config {
        image = var.image
        # straight to the instances' addresses, as orchbench's generator
        network_mode   = "host"
        args           = var.args
        cpu_hard_limit = var.cpu_hard_limit
      }
      resources {
        cpu    = var.cpu
        memory = var.memory
      }
    }
  }
}
