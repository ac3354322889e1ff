package wrongsetup

import (
	"context"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// KillLoadJob SIGKILLs the load task of the first dispatched load job
// whose step starts with stepPrefix once it has run for after, and returns
// its allocation's ID; an error when ctx ends first or the kill fails.
func KillLoadJob(ctx context.Context, c *api.Client, stepPrefix string, after time.Duration) (string, error) {
	for ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
		jobs, _, err := c.Jobs().PrefixList("orchbench-loadgen/dispatch-")
		if err != nil {
			continue
		}
		for _, j := range jobs {
			job, _, err := c.Jobs().Info(j.ID, nil)
			if err != nil || !strings.HasPrefix(job.Meta["step"], stepPrefix) {
				continue
			}
			allocs, _, err := c.Jobs().Allocations(j.ID, false, nil)
			if err != nil || len(allocs) == 0 || allocs[0].ClientStatus != "running" {
				continue
			}
			time.Sleep(after)
			alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
			if err != nil {
				return "", err
			}
			if err := c.Allocations().Signal(alloc, nil, "load", "SIGKILL"); err != nil {
				return "", err
			}
			return alloc.ID, nil
		}
	}
	return "", ctx.Err()
}
