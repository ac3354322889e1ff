package gates

import (
	"fmt"
	"strings"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// HealthyGate passes a deployment whose every job came up running and
// passing its health checks on the orchestrator named; deployErr is what
// stopped it from doing so.
func HealthyGate(orchestratorName string, jobs []*orchestrator.Deployment, deployErr error) results.Gate {
	if deployErr != nil {
		return results.Gate{Name: Healthy, Detail: deployErr.Error()}
	}
	var parts []string
	for _, d := range jobs {
		parts = append(parts, fmt.Sprintf("%s v%d", d.Job, d.Version))
	}
	return results.Gate{Name: Healthy, Passed: true, Detail: "every instance running and passing its health checks on " + orchestratorName + ": " + strings.Join(parts, ", ")}
}
