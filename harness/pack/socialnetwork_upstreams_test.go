package pack

import (
	"strings"
	"testing"
	"text/template"
)

// The consul-template shapes the upstreams template reads (consul-template's
// HealthService and Consul's health check): only the fields it uses.
type consulCheck struct{ CheckID, Status string }

type consulInstance struct {
	Address string
	Port    int
	Checks  []consulCheck
}

func instance(addr string, port int, node, own string) consulInstance {
	return consulInstance{Address: addr, Port: port, Checks: []consulCheck{{"serfHealth", node}, {"service:x", own}}}
}

// The upstreams a task renders leave out the instances of a failed node
// (after a kill-node, Consul keeps them registered until the node's agent
// returns, and callers kept dialing them) and keep the ones whose own check
// fails, so that a health blip does not move the callers. Executed with Go's
// text/template, consul-template's language, over instances as Consul lists
// them.
func TestUpstreamsLeaveOutAFailedNodesInstances(t *testing.T) {
	job, err := renderSocial(t, map[string]string{"variant": "horizontal"})
	if err != nil {
		t.Fatal(err)
	}
	// an upstream's list (compose-post calls user) and a store's URI (user's)
	lines := []string{
		firstLine(t, job.tasks["compose-post"].templateData, "USER_ADDR="),
		firstLine(t, job.tasks["user"].templateData, "MONGODB_URI="),
	}
	cases := []struct {
		name      string
		instances []consulInstance
		addr, uri string
	}{
		{"both up, one failing its own check", []consulInstance{
			instance("10.0.0.21", 2001, "passing", "critical"), instance("10.0.0.22", 2002, "passing", "passing"),
		}, "10.0.0.21:2001,10.0.0.22:2002", "mongodb://10.0.0.21:2001/"},
		{"the first on a failed node", []consulInstance{
			instance("10.0.0.21", 2001, "critical", "passing"), instance("10.0.0.22", 2002, "passing", "passing"),
		}, "10.0.0.22:2002", "mongodb://10.0.0.22:2002/"},
		{"every one on a failed node", []consulInstance{
			instance("10.0.0.21", 2001, "critical", "passing"),
		}, "127.0.0.1:1", "mongodb://127.0.0.1:1/"},
		{"none registered", nil, "127.0.0.1:1", "mongodb://127.0.0.1:1/"},
	}
	for _, c := range cases {
		for _, line := range lines {
			key, text, _ := strings.Cut(line, "=")
			tmpl, err := template.New(key).Funcs(template.FuncMap{
				"service": func(string) []consulInstance { return c.instances },
			}).Parse(text)
			if err != nil {
				t.Fatalf("%s: %v\n%s", key, err, text)
			}
			var out strings.Builder
			if err := tmpl.Execute(&out, nil); err != nil {
				t.Fatalf("%s, %s: %v", c.name, key, err)
			}
			want := c.addr
			if key == "MONGODB_URI" {
				want = c.uri
			}
			if out.String() != want {
				t.Errorf("%s: %s=%s, want %s", c.name, key, out.String(), want)
			}
		}
	}
}

func firstLine(t *testing.T, data, prefix string) string {
	t.Helper()
	for _, line := range strings.Split(data, "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	t.Fatalf("no %s line in:\n%s", prefix, data)
	return ""
}
