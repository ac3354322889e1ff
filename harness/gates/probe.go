package gates

import (
	"fmt"

	"github.com/orchbench/orchbench/harness/contract"
)

// ProbeAnswer judges one instance's answer to the application's probe: the
// status, the fewest body bytes and the pattern the pack (or the
// experiment) declares. It returns "" for a right answer, else what makes
// it wrong, naming url. One wrong instance is enough to make a measurement
// meaningless: the testbed we replace measured empty timelines for months.
func ProbeAnswer(rule contract.Probe, url string, status int, body []byte) string {
	switch {
	case status != rule.Status:
		return fmt.Sprintf("GET %s: status %d, want %d", url, status, rule.Status)
	case len(body) < rule.MinBytes:
		return fmt.Sprintf("GET %s: %d bytes, want at least %d (dataset not loaded?)", url, len(body), rule.MinBytes)
	case rule.Regex != nil && !rule.Regex.Match(body):
		return fmt.Sprintf("GET %s: body %q does not match %s", url, clip(body, 80), rule.Regex)
	}
	return ""
}

// clip keeps the start of a body for a message.
func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
