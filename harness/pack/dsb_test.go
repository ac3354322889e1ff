package pack

import (
	"slices"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// The hotel reservation and the media microservices share one pack shape
// (a group per task, host networking, upstreams from Consul), so their
// tests read a rendered job the same way.

// dsbTask is one rendered group as these tests read it.
type dsbTask struct {
	socialTask
	image  string
	spread bool
	// disk is the group's ephemeral_disk size in MB; 0 when it has none.
	disk int64
}

type dsbJob struct {
	name  string
	meta  map[string]string
	tasks map[string]dsbTask
}

// renderDSB renders packs/<name> with the overrides (mhz_per_core 2000
// unless given) and reads its one job file <name>.nomad.
func renderDSB(t *testing.T, name string, overrides map[string]string) (dsbJob, error) {
	t.Helper()
	job, text, err := renderedJob(t, name, overrides)
	if err != nil {
		return dsbJob{}, err
	}
	out := dsbJob{name: job.Labels[0], meta: literalStrings(t, only(t, job.Body, "meta").Body), tasks: map[string]dsbTask{}}
	for _, group := range job.Body.Blocks {
		if group.Type != "group" {
			continue
		}
		task := only(t, group.Body, "task")
		if task.Labels[0] != group.Labels[0] {
			t.Errorf("group %s holds task %s", group.Labels[0], task.Labels[0])
		}
		if _, dup := out.tasks[group.Labels[0]]; dup {
			t.Errorf("group %s twice", group.Labels[0])
		}
		res := only(t, task.Body, "resources").Body
		ht := dsbTask{socialTask: socialTask{
			count:  intAttr(t, group.Body, "count"),
			cpu:    intAttr(t, res, "cpu"),
			memory: intAttr(t, res, "memory"),
			meta:   literalStrings(t, only(t, task.Body, "meta").Body),
		}}
		for _, b := range group.Body.Blocks {
			switch b.Type {
			case "spread":
				ht.spread = true
			case "ephemeral_disk":
				ht.disk = intAttr(t, b.Body, "size")
			}
		}
		config := only(t, task.Body, "config").Body
		if v, diags := config.Attributes["cpu_hard_limit"].Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.Bool {
			ht.hardLimit = v.True()
		}
		if v, diags := config.Attributes["image"].Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.String {
			ht.image = v.AsString()
		}
		if attr, ok := config.Attributes["args"]; ok {
			ht.args = argWords(t, text, attr.Expr)
		}
		for _, b := range task.Body.Blocks {
			switch b.Type {
			case "env":
				ht.env = literalEnv(t, b.Body)
				ht.envSource = map[string]string{}
				for name, attr := range b.Body.Attributes {
					ht.envSource[name] = string(attr.Expr.Range().SliceBytes([]byte(text)))
				}
			case "template":
				if ht.hasTemplate {
					t.Errorf("group %s has two templates", group.Labels[0])
				}
				ht.hasTemplate = true
				v, _ := b.Body.Attributes["data"].Expr.Value(nil)
				ht.templateData = v.AsString()
			}
		}
		svc := only(t, group.Body, "service")
		name, _ := svc.Body.Attributes["name"].Expr.Value(nil)
		ht.serviceName = name.AsString()
		check, _ := only(t, svc.Body, "check").Body.Attributes["type"].Expr.Value(nil)
		ht.serviceChecks = check.AsString()
		out.tasks[group.Labels[0]] = ht
	}
	return out, nil
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
