package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Where cluster/nodes-k8s.sh puts Kubernetes' tools and credentials inside a
// server node.
const (
	k8sKubectl    = "/opt/obn/k8s/kubectl"
	k8sKubeconfig = "/etc/obn/k8s/admin.kubeconfig"
)

// planeList is "nomad, consul, ...", for messages.
func planeList() string {
	var names []string
	for _, cp := range ControlPlanes {
		names = append(names, string(cp))
	}
	return strings.Join(names, ", ")
}

// etcdStatusScript prints etcd's status (the leader's member ID) and its
// member list (ID to name) as two JSON lines, from the member on the node
// itself: the v3 JSON gateway takes POSTs only.
const etcdStatusScript = `set -e
a=$1
curl -sf -m 3 -X POST -d '{}' "http://$a:2379/v3/maintenance/status"; echo
curl -sf -m 3 -X POST -d '{}' "http://$a:2379/v3/cluster/member/list"; echo
`

// etcdLeader is the name of the member server s's etcd calls its leader,
// "" when it knows none (an election, a lost quorum).
func (e *Emulated) etcdLeader(ctx context.Context, s Node) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*apiTimeout)
	defer cancel()
	out, err := e.docker(ctx, "exec", s.Name, "sh", "-c", etcdStatusScript, "etcd-status", s.Address)
	if err != nil {
		return "", err
	}
	return parseEtcdLeader(out)
}

func parseEtcdLeader(out string) (string, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		return "", fmt.Errorf("etcd status: want the status and the member list, got %q", out)
	}
	var status struct {
		Leader string `json:"leader"`
	}
	var members struct {
		Members []struct {
			ID   string `json:"ID"`
			Name string `json:"name"`
		} `json:"members"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &status); err != nil {
		return "", fmt.Errorf("etcd status %q: %w", lines[0], err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &members); err != nil {
		return "", fmt.Errorf("etcd member list %q: %w", lines[1], err)
	}
	if status.Leader == "" || status.Leader == "0" {
		return "", nil
	}
	for _, m := range members.Members {
		if m.ID == status.Leader {
			if m.Name == "" {
				return "", fmt.Errorf("etcd: the leader %s has not started (no name in the member list)", m.ID)
			}
			return m.Name, nil
		}
	}
	return "", fmt.Errorf("etcd: the leader %s is not in the member list", status.Leader)
}

// leaseHolder is the node whose component holds the leader-election lease
// kube-system/<lease>, read through server s's API with kubectl; "" when
// nobody holds it or its holder has not renewed it within its duration (a
// dead holder's lease stays written until another takes it).
func (e *Emulated) leaseHolder(ctx context.Context, s Node, lease string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*apiTimeout)
	defer cancel()
	out, err := e.docker(ctx, "exec", s.Name, k8sKubectl, "--kubeconfig", k8sKubeconfig, "--request-timeout", "5s",
		"-n", "kube-system", "get", "lease", lease, "-o", "jsonpath={.spec.holderIdentity} {.spec.renewTime} {.spec.leaseDurationSeconds}")
	if err != nil {
		return "", err
	}
	return parseLease(out, time.Now())
}

// parseLease reads "holder renewTime duration"; a holder's identity is
// its hostname, an underscore and a unique suffix.
func parseLease(out string, now time.Time) (string, error) {
	f := strings.Fields(out)
	if len(f) == 0 {
		return "", nil
	}
	if len(f) != 3 {
		return "", fmt.Errorf("lease: want holder, renew time and duration, got %q", out)
	}
	renewed, err := time.Parse(time.RFC3339Nano, f[1])
	if err != nil {
		return "", fmt.Errorf("lease renew time %q: %w", f[1], err)
	}
	secs, err := strconv.Atoi(f[2])
	if err != nil {
		return "", fmt.Errorf("lease duration %q: %w", f[2], err)
	}
	if now.After(renewed.Add(time.Duration(secs) * time.Second)) {
		return "", nil
	}
	holder, _, _ := strings.Cut(f[0], "_")
	if holder == "" {
		return "", errors.New("lease: an empty holder identity")
	}
	return holder, nil
}
