package loadgen

import (
	"net/netip"
	"sort"
	"syscall"
)

// peerTally counts one connection's connects per remote address. A
// connection nearly always reaches one address, so a short slice beats a
// map and costs nothing on a reconnect to the same peer.
type peerTally struct {
	addrs  []netip.AddrPort
	counts []int64
}

func (p *peerTally) add(a netip.AddrPort) {
	a = netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
	for i := range p.addrs {
		if p.addrs[i] == a {
			p.counts[i]++
			return
		}
	}
	p.addrs = append(p.addrs, a)
	p.counts = append(p.counts, 1)
}

// mergePeers sums the connections' tallies into Result.Peers, by address.
func mergePeers(conns []*conn) []Peer {
	byAddr := map[string]int64{}
	for _, c := range conns {
		for i, a := range c.peers.addrs {
			byAddr[a.String()] += c.peers.counts[i]
		}
	}
	out := make([]Peer, 0, len(byAddr))
	for a, n := range byAddr {
		out = append(out, Peer{Addr: a, Connections: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out
}

// sockaddrPort converts what getpeername returns; other families are the
// zero AddrPort.
func sockaddrPort(sa syscall.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *syscall.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port))
	}
	return netip.AddrPort{}
}
