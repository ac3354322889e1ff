package kubernetes

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
)

func TestAPIServersCountsDistinctAddresses(t *testing.T) {
	slice := func(addrs ...string) discoveryv1.EndpointSlice {
		var eps []discoveryv1.Endpoint
		for _, a := range addrs {
			eps = append(eps, discoveryv1.Endpoint{Addresses: []string{a}})
		}
		return discoveryv1.EndpointSlice{Endpoints: eps}
	}
	for _, c := range []struct {
		slices []discoveryv1.EndpointSlice
		want   int
	}{
		{nil, 0},
		{[]discoveryv1.EndpointSlice{slice("10.250.0.1")}, 1},
		{[]discoveryv1.EndpointSlice{slice("10.82.0.11", "10.82.0.12", "10.82.0.13")}, 3},
		// an address in two slices (one per address family or a mirror) counts once
		{[]discoveryv1.EndpointSlice{slice("10.82.0.11", "10.82.0.12"), slice("10.82.0.12")}, 2},
	} {
		if got := apiServers(c.slices); got != c.want {
			t.Errorf("apiServers(%v) = %d, want %d", c.slices, got, c.want)
		}
	}
}
