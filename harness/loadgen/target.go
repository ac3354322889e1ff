package loadgen

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Target is the parsed URL a run is aimed at, in the shape wrk's Lua `wrk`
// table exposes it.
type Target struct {
	// Raw is the URL as the user gave it, unparsed: DeathStarBench's wrk2
	// hands it to scripts as the global url, and its scripts build their
	// request targets from it.
	Raw    string
	Scheme string
	Host   string // without brackets or port
	Port   string // empty when the URL has none
	Path   string // path and query, at least "/"
}

// ParseTarget accepts http:// URLs only: the generator speaks plain HTTP/1.1
// because the testbed's gateways do, and TLS would dominate the CPU figures.
func ParseTarget(raw string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, fmt.Errorf("bad URL %q: %w", raw, err)
	}
	if u.Scheme != "http" {
		return Target{}, fmt.Errorf("bad URL %q: only http:// is supported", raw)
	}
	if u.Hostname() == "" {
		return Target{}, fmt.Errorf("bad URL %q: no host", raw)
	}
	path := u.RequestURI()
	if path == "" {
		path = "/"
	}
	return Target{Raw: raw, Scheme: u.Scheme, Host: u.Hostname(), Port: u.Port(), Path: path}, nil
}

// DialAddr is host:port with the scheme's default port filled in.
func (t Target) DialAddr() string {
	port := t.Port
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(t.Host, port)
}

// HostHeader is what wrk puts in Host: the host, and the port only if the
// URL named one.
func (t Target) HostHeader() string {
	h := t.Host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if t.Port != "" {
		h += ":" + t.Port
	}
	return h
}

// checkAllowed keeps load on loopback unless the caller opted in: a load
// generator pointed at a wrong address is a denial-of-service tool.
// allowed entries may be host names, IP addresses or CIDR prefixes.
func checkAllowed(dialAddr string, allowRemote bool, allowed []string) error {
	if allowRemote {
		return nil
	}
	host, _, err := net.SplitHostPort(dialAddr)
	if err != nil {
		host = dialAddr
	}
	for _, a := range allowed {
		if strings.EqualFold(a, host) {
			return nil
		}
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		addrs, err := net.LookupHost(host)
		if err != nil {
			return fmt.Errorf("target %s: %w", host, err)
		}
		for _, a := range addrs {
			if ip, err := netip.ParseAddr(a); err == nil {
				ips = append(ips, ip)
			}
		}
	}
	if len(ips) == 0 {
		return fmt.Errorf("target %s resolves to no address", host)
	}
	for _, ip := range ips {
		if !ip.Unmap().IsLoopback() && !inAllowed(ip, allowed) {
			return fmt.Errorf("target %s (%s) is not loopback; pass --allow-remote or list it in the allowed hosts", host, ip)
		}
	}
	return nil
}

func inAllowed(ip netip.Addr, allowed []string) bool {
	for _, a := range allowed {
		if p, err := netip.ParsePrefix(a); err == nil && p.Contains(ip.Unmap()) {
			return true
		}
		if x, err := netip.ParseAddr(a); err == nil && x.Unmap() == ip.Unmap() {
			return true
		}
	}
	return false
}

// Header is one request header line; a slice keeps wrk's order and allows
// repeats, which a map would not.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ParseHeader splits a -H argument "Name: value".
func ParseHeader(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return Header{}, fmt.Errorf("bad header %q: want 'Name: value'", s)
	}
	return Header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)}, nil
}

// appendRequest formats an HTTP/1.1 request into dst the way wrk.format
// does: Host is added unless given, Content-Length is set from the body.
func appendRequest(dst []byte, method, path, host string, headers []Header, body []byte, closeConn bool) []byte {
	dst = append(dst, method...)
	dst = append(dst, ' ')
	dst = append(dst, path...)
	dst = append(dst, " HTTP/1.1\r\n"...)
	hasHost := false
	for _, h := range headers {
		if strings.EqualFold(h.Name, "Host") {
			hasHost = true
		}
		if strings.EqualFold(h.Name, "Content-Length") {
			continue // recomputed below from the real body
		}
		dst = append(dst, h.Name...)
		dst = append(dst, ": "...)
		dst = append(dst, h.Value...)
		dst = append(dst, "\r\n"...)
	}
	if !hasHost && host != "" {
		dst = append(dst, "Host: "...)
		dst = append(dst, host...)
		dst = append(dst, "\r\n"...)
	}
	if body != nil {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(body)), 10)
		dst = append(dst, "\r\n"...)
	}
	if closeConn {
		dst = append(dst, "Connection: close\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, body...)
}

// EndpointLabel is the default per-endpoint key: method and path with the
// query dropped, an absolute-form target reduced to its path, and segments
// that look like identifiers replaced by {id}, so /user/42 and /user/43 are
// one endpoint.
func EndpointLabel(method, target string) string {
	if i := strings.Index(target, "://"); i >= 0 {
		rest := target[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			target = rest[j:]
		} else {
			target = "/"
		}
	}
	if i := strings.IndexAny(target, "?#"); i >= 0 {
		target = target[:i]
	}
	segs := strings.Split(target, "/")
	for i, s := range segs {
		if looksLikeID(s) {
			segs[i] = "{id}"
		}
	}
	return method + " " + strings.Join(segs, "/")
}

func looksLikeID(s string) bool {
	if s == "" {
		return false
	}
	digits, hex, other := 0, 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'):
			hex++
		case c == '-':
		default:
			other++
		}
	}
	if other > 0 {
		return false
	}
	if digits == len(s) {
		return true
	}
	// UUIDs and long hex digests are identifiers; short words such as "dead"
	// or "cafe" that happen to be hex are not.
	return digits > 0 && digits+hex >= 16
}

// labelFromRequest derives the default label from raw request bytes.
func labelFromRequest(raw []byte) string {
	line := raw
	for i, c := range raw {
		if c == '\r' || c == '\n' {
			line = raw[:i]
			break
		}
	}
	method, rest, ok := strings.Cut(string(line), " ")
	if !ok {
		return "(unparsable)"
	}
	target, _, _ := strings.Cut(rest, " ")
	return EndpointLabel(method, target)
}
