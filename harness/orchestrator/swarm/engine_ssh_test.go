package swarm

import (
	"strings"
	"testing"
)

// DOCKER_HOST=ssh://... is refused with what to set instead, not left to
// fail later as an unknown scheme.
func TestNewEngineRefusesSSH(t *testing.T) {
	t.Setenv("DOCKER_HOST", "ssh://debian@10.0.0.11")
	_, err := NewEngine("")
	if err == nil || !strings.Contains(err.Error(), "DOCKER_TLS_VERIFY") || !strings.Contains(err.Error(), "ssh://debian@10.0.0.11") {
		t.Errorf("NewEngine with DOCKER_HOST=ssh://: %v", err)
	}
}
