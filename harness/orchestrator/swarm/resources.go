package swarm

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/moby/moby/api/types/swarm"
)

// CPU modes a Swarm service can have: a CFS quota of the declared cores, or
// no cap at all (Swarm has no cpuset and no relative shares).
const (
	CPUModeQuota  = "quota"
	CPUModeShares = "shares"
)

// resources turns the pack's declaration into limits and reservations,
// both equal to it, so the kernel enforces exactly what the pack intends and
// Swarm places a task only where the declaration fits.
//
// The declaration is the orchbench_cores / orchbench_memory_mib /
// orchbench_cpu_mode meta (task, then group, then job). Without it, memory is
// resources.memory_max when set, else resources.memory; CPU is
// resources.cpu ÷ Options.MHzPerCore when the docker config has
// cpu_hard_limit = true, else no limit (Nomad's docker driver only weighs
// shares then). Cores 0, or cpu mode "shares", means no CPU limit; memory 0
// means no memory limit.
func (t *translator) resources(w where, g *api.TaskGroup, task *api.Task) (Declaration, *swarm.ResourceRequirements, error) {
	lookup := func(key string) (value, level string, ok bool) {
		for _, m := range []struct {
			level string
			meta  map[string]string
		}{{"task", task.Meta}, {"group", g.Meta}, {"job", t.job.Meta}} {
			if v, ok := m.meta[key]; ok {
				return v, m.level, true
			}
		}
		return "", "", false
	}
	var d Declaration
	res := task.Resources
	if res == nil {
		res = &api.Resources{}
	}
	mode, modeLevel, hasMode := lookup(metaCPUMode)
	if hasMode {
		switch mode {
		case CPUModeQuota, CPUModeShares:
		case "cpuset", "unenforced":
			return d, nil, w.errorf("%s meta %s = %q cannot be honoured: Swarm enforces a CPU quota or nothing", modeLevel, metaCPUMode, mode)
		default:
			return d, nil, w.errorf("%s meta %s = %q is not a CPU mode (valid: quota, shares)", modeLevel, metaCPUMode, mode)
		}
	}
	if v, level, ok := lookup(metaCores); ok {
		c, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || c < 0 || math.IsInf(c, 0) || math.IsNaN(c) {
			return d, nil, w.errorf("%s meta %s = %q is not a number of cores >= 0", level, metaCores, v)
		}
		d.Cores = c
	} else {
		hard, _ := task.Config["cpu_hard_limit"].(bool)
		switch {
		case res.Cores != nil && *res.Cores > 0:
			return d, nil, w.errorf("resources.cores = %d (an exclusive cpuset) is not supported: Swarm has no cpuset; declare meta %s for a quota", *res.Cores, metaCores)
		case hard && res.CPU != nil && *res.CPU > 0:
			if t.opts.MHzPerCore <= 0 {
				return d, nil, w.errorf("resources.cpu = %d MHz with cpu_hard_limit needs the node's MHz per core to become cores (Options.MHzPerCore)", *res.CPU)
			}
			d.Cores = float64(*res.CPU) / t.opts.MHzPerCore
		}
	}
	if hasMode && mode == CPUModeShares {
		d.Cores = 0
	}
	d.CPUMode = CPUModeShares
	if d.Cores > 0 {
		d.CPUMode = CPUModeQuota
	}
	if v, level, ok := lookup(metaMemory); ok {
		m, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || m < 0 {
			return d, nil, w.errorf("%s meta %s = %q is not a whole number of MiB >= 0", level, metaMemory, v)
		}
		d.MemoryMiB = m
	} else if res.MemoryMaxMB != nil && *res.MemoryMaxMB > 0 {
		d.MemoryMiB = *res.MemoryMaxMB
	} else if res.MemoryMB != nil {
		d.MemoryMiB = *res.MemoryMB
	}
	if res.DiskMB != nil || res.SecretsMB != nil || res.IOPS != nil {
		t.remark(w, "resources.disk/secrets", RemarkIgnored, "Docker volumes and the container filesystem have no size cap here")
	}
	nano := int64(math.Round(d.Cores * 1e9))
	mem := int64(d.MemoryMiB) << 20
	if d.Cores > 0 && nano < 1e6 {
		return d, nil, w.errorf("%g cores is below Docker's minimum CPU quota (0.001 cores)", d.Cores)
	}
	if mem > 0 && mem < 6<<20 {
		return d, nil, w.errorf("%d MiB is below Docker's minimum memory limit (6 MiB)", d.MemoryMiB)
	}
	rr := &swarm.ResourceRequirements{}
	if nano > 0 || mem > 0 {
		rr.Limits = &swarm.Limit{NanoCPUs: nano, MemoryBytes: mem}
		rr.Reservations = &swarm.Resources{NanoCPUs: nano, MemoryBytes: mem}
	}
	return d, rr, nil
}

// String renders a declaration for messages.
func (d Declaration) String() string {
	cpu := "no CPU limit"
	if d.Cores > 0 {
		cpu = fmt.Sprintf("%g cores (%s)", d.Cores, d.CPUMode)
	}
	mem := "no memory limit"
	if d.MemoryMiB > 0 {
		mem = fmt.Sprintf("%d MiB", d.MemoryMiB)
	}
	return cpu + ", " + mem
}
