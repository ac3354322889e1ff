package nomad

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

func TestProbeAddrIsTheProbePortOnItsNode(t *testing.T) {
	alloc := &api.Allocation{ID: "4c2e0d6a-1111", AllocatedResources: &api.AllocatedResources{Shared: api.AllocatedSharedResources{
		Ports: []api.PortMapping{{Label: "http", Value: 8080, HostIP: "10.0.0.21"}, {Label: "probe", Value: 7070, HostIP: "10.0.0.21"}},
	}}}
	if addr, err := probeAddr(alloc); err != nil || addr != "10.0.0.21:7070" {
		t.Errorf("%q, %v; want 10.0.0.21:7070", addr, err)
	}
	alloc.AllocatedResources.Shared.Ports = alloc.AllocatedResources.Shared.Ports[:1]
	if _, err := probeAddr(alloc); err == nil || !strings.Contains(err.Error(), `no port "probe"`) {
		t.Errorf("an allocation without the probe port: %v", err)
	}
}
