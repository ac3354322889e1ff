package hostinfo

import (
	"os"
	"strconv"
	"testing"
)

// On a Linux machine with /proc, the facts are there and well formed.
func TestFactsOfThisMachine(t *testing.T) {
	if _, err := os.Stat("/proc/cpuinfo"); err != nil {
		t.Skip("no /proc/cpuinfo")
	}
	f := Facts()
	if f["cpu.modelname"] == "" {
		t.Errorf("no cpu.modelname in %v", f)
	}
	if mhz, err := strconv.ParseFloat(f["cpu.frequency"], 64); err != nil || mhz <= 0 {
		t.Errorf("cpu.frequency %q is not a positive number", f["cpu.frequency"])
	}
	if _, err := os.Stat("/etc/os-release"); err == nil && (f["os.name"] == "" || f["os.version"] == "") {
		t.Errorf("os facts missing with /etc/os-release present: %v", f)
	}
}
