package contract

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// scalingJob is a job whose group "web" has the scaling block given in the
// JSON form Nomad's API returns for it (what `nomad job run -output` prints).
func scalingJob(t *testing.T, scaling string) *api.Job {
	t.Helper()
	var job api.Job
	text := `{"ID": "j", "TaskGroups": [{"Name": "entry"}, {"Name": "web", "Scaling": ` + scaling + `}]}`
	if err := json.Unmarshal([]byte(text), &job); err != nil {
		t.Fatal(err)
	}
	return &job
}

const goodScaling = `{"Min": 1, "Max": 4, "Enabled": true, "Policy": {
  "cooldown": "30s", "evaluation_interval": "10s",
  "check": [{"cpu": [{"source": "prometheus", "query": "up", "strategy": [{"target-value": [{"target": 70}]}]}]}]}}`

func TestParseAutoscaleReadsTheScalingBlock(t *testing.T) {
	a, err := ParseAutoscale(scalingJob(t, goodScaling))
	if err != nil {
		t.Fatal(err)
	}
	want := Autoscale{Group: "web", Min: 1, Max: 4, TargetCPU: 0.7, Cooldown: 30 * time.Second, Evaluation: 10 * time.Second, Source: "prometheus", Query: "up"}
	if a == nil || *a != want {
		t.Fatalf("ParseAutoscale = %+v, want %+v", a, want)
	}
	none, err := ParseAutoscale(scalingJob(t, `null`))
	if err != nil || none != nil {
		t.Fatalf("a job without scaling: %+v, %v; want nil, nil", none, err)
	}
}

func TestParseAutoscaleRefusesPoliciesOtherOrchestratorsCannotRun(t *testing.T) {
	for name, c := range map[string]struct{ from, to, why string }{
		"max below min":   {`"Max": 4`, `"Max": 0`, "max >= min"},
		"no cooldown":     {`"cooldown": "30s",`, ``, "cooldown must be set"},
		"bad evaluation":  {`"10s"`, `"soon"`, `evaluation_interval = "soon"`},
		"other strategy":  {`target-value`, `threshold`, `strategy "threshold"`},
		"target too high": {`"target": 70`, `"target": 170`, "at most 100"},
		"no query":        {`"query": "up",`, ``, "needs a source and a query"},
		"two checks":      {`"check": [{"cpu": [`, `"check": [{"mem": [{}], "cpu": [`, "exactly one check"},
	} {
		t.Run(name, func(t *testing.T) {
			text := strings.Replace(goodScaling, c.from, c.to, 1)
			if text == goodScaling {
				t.Fatalf("the case changes nothing: %q not in the policy", c.from)
			}
			_, err := ParseAutoscale(scalingJob(t, text))
			if err == nil || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), "group web") {
				t.Fatalf("error %v, want one naming group web and %q", err, c.why)
			}
		})
	}
}
