// Package hostinfo reads facts of this machine the way Nomad's fingerprint
// words them (os-release's ID, Debian's point release, the CPU's model and
// maximum frequency), so adapters that have no fingerprint of their own
// record the same facts under the same keys, and a parity table compares
// like with like.
package hostinfo

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// OS is the distribution ID and version: os-release's ID; Debian's point
// release from /etc/debian_version, else VERSION_ID.
func OS() (id, version string) { return OSAt("/") }

// OSAt is OS of the file system at root: a node's, read by a probe that
// runs in a container of its own through its init's root.
func OSAt(root string) (id, version string) {
	b, err := os.ReadFile(filepath.Join(root, "etc", "os-release"))
	if err != nil {
		return "", ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"`)
		switch k {
		case "ID":
			id = v
		case "VERSION_ID":
			if version == "" {
				version = v
			}
		}
	}
	if d, err := os.ReadFile(filepath.Join(root, "etc", "debian_version")); err == nil && id == "debian" {
		version = strings.TrimSpace(string(d))
	}
	return id, version
}

// MHz is the maximum CPU frequency (cpufreq), else the first "cpu MHz" of
// /proc/cpuinfo; 0 when neither is there.
func MHz() float64 {
	if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); err == nil {
		if khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && khz > 0 {
			return khz / 1000
		}
	}
	v, _ := strconv.ParseFloat(cpuinfo("cpu MHz"), 64)
	return v
}

// CPUModel is /proc/cpuinfo's model name.
func CPUModel() string { return cpuinfo("model name") }

// Facts are the machine facts every adapter records, under Nomad's keys:
// cpu.modelname, cpu.frequency, os.name, os.version. Missing ones are left out.
func Facts() map[string]string { return FactsAt("/") }

// FactsAt is Facts with the OS read from the file system at root (the CPU
// is the kernel's, the same from anywhere).
func FactsAt(root string) map[string]string {
	f := map[string]string{}
	if m := CPUModel(); m != "" {
		f["cpu.modelname"] = m
	}
	if mhz := MHz(); mhz > 0 {
		f["cpu.frequency"] = strconv.FormatFloat(mhz, 'f', 0, 64)
	}
	if id, version := OSAt(root); id != "" {
		f["os.name"], f["os.version"] = id, version
	}
	return f
}

func cpuinfo(key string) string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
