package nodes

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestParseEtcdLeader(t *testing.T) {
	members := `{"header":{"cluster_id":"1"},"members":[{"ID":"111","name":"ks-server1"},{"ID":"222","name":"ks-server2"},{"ID":"333","name":""}]}`
	for _, c := range []struct {
		status, want, err string
	}{
		{`{"header":{"member_id":"111"},"leader":"222"}`, "ks-server2", ""},
		{`{"header":{"member_id":"111"},"leader":"0"}`, "", ""},
		{`{"header":{"member_id":"111"}}`, "", ""},
		{`{"leader":"444"}`, "", "not in the member list"},
		{`{"leader":"333"}`, "", "has not started"},
		{`not json`, "", "etcd status"},
	} {
		got, err := parseEtcdLeader(c.status + "\n" + members + "\n")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want one saying %q", c.status, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.status, got, err, c.want)
		}
	}
	if _, err := parseEtcdLeader(`{"leader":"1"}`); err == nil {
		t.Error("a status without a member list was accepted")
	}
}

func TestParseLease(t *testing.T) {
	now := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		out, want string
		bad       bool
	}{
		{"ks-server2_6f1c-aa 2026-11-27T05:59:55.000000Z 15", "ks-server2", false},
		// a dead holder's lease, not renewed for longer than its duration
		{"ks-server2_6f1c-aa 2026-11-27T05:59:40.000000Z 15", "", false},
		{"", "", false},
		{"ks-server2_x 2026-11-27T05:59:55Z", "", true},
		{"ks-server2_x yesterday 15", "", true},
	} {
		got, err := parseLease(c.out, now)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("parseLease(%q) = %q, %v; want %q (error: %v)", c.out, got, err, c.want, c.bad)
		}
	}
}

// A kill-leader on Kubernetes finds the etcd leader's node through a
// server's own etcd, and the controller manager's through kubectl there.
func TestKubernetesLeaders(t *testing.T) {
	inspect := "/ks-server1|server|true|10.82.0.11\n/ks-server2|server|true|10.82.0.12\n/ks-worker1|worker|true|10.82.0.21\n/ks-client|client|true|10.82.0.10"
	renew := time.Now().UTC().Format(time.RFC3339Nano)
	e := &Emulated{Name: "ks", Docker: func(_ context.Context, args ...string) (string, error) {
		switch {
		case args[0] == "ps":
			return "a b c d", nil
		case args[0] == "inspect":
			return inspect, nil
		case args[0] == "exec" && args[2] == "sh":
			return `{"leader":"22"}` + "\n" + `{"members":[{"ID":"11","name":"ks-server1"},{"ID":"22","name":"ks-server2"}]}`, nil
		case args[0] == "exec" && args[2] == k8sKubectl:
			return "ks-server1_abc " + renew + " 15", nil
		}
		t.Fatalf("unexpected docker %v", args)
		return "", nil
	}}
	for cp, want := range map[ControlPlane]string{PlaneEtcd: "ks-server2", PlaneKubeControllerManager: "ks-server1"} {
		n, err := e.Leader(context.Background(), cp)
		if err != nil || n.Name != want {
			t.Errorf("Leader(%s) = %q, %v; want %s", cp, n.Name, err, want)
		}
	}
}
