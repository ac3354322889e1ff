package dockerimg

import "testing"

// The kubelet asks containerd for the normalized name of a pod's image, so
// the check for an imported image must ask for the same one.
func TestNormalizedIsWhatTheKubeletAsksFor(t *testing.T) {
	for ref, want := range map[string]string{
		"orchbench/redis:local-ds-u962-p10-s1": "docker.io/orchbench/redis:local-ds-u962-p10-s1",
		"redis:7":                              "docker.io/library/redis:7",
		"host:5000/orchbench/redis:local":      "host:5000/orchbench/redis:local",
		"registry.example/x/y:1":               "registry.example/x/y:1",
		"localhost/x:1":                        "localhost/x:1",
	} {
		if got := normalized(ref); got != want {
			t.Errorf("normalized(%q) = %q, want %q", ref, got, want)
		}
	}
}

func TestDemuxStripsFrameHeaders(t *testing.T) {
	framed := append([]byte{2, 0, 0, 0, 0, 0, 0, 6}, "error\n"...)
	framed = append(framed, append([]byte{1, 0, 0, 0, 0, 0, 0, 3}, "ok\n"...)...)
	if got := demux(framed); got != "error\nok\n" {
		t.Errorf("demux = %q", got)
	}
}
