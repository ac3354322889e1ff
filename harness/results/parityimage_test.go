package results

import "testing"

// On many nodes Kubernetes names a pulled image by its repository digest
// and a Docker node reports the same digest (nodeprobe's imageRefOf): the
// same image is equal; another digest is still a mismatch.
func TestParityComparesRepositoryDigests(t *testing.T) {
	const pulled = "10.77.0.10:5000/orchbench/taewa@sha256:4f1c2e9ab07d55aa0e6b2f0e8a1d3c4b5a6978877665544332211ffeeddccbb"
	withImage := func(nomad, swarm string) []StepResult {
		steps := paritySteps(func(s *StepResult) { s.Metadata["limits"].([]any)[0].(map[string]any)["image_id"] = swarm })
		steps[0].Metadata["limits"].([]any)[0].(map[string]any)["image_id"] = nomad
		return steps
	}
	if m := Mismatches(Parity(withImage(pulled, pulled))); len(m) != 0 {
		t.Errorf("one repository digest on both: mismatches %+v", m)
	}
	rows := Parity(withImage(pulled, "sha256:4f1c2e9ab07d55aa0e6b2f0e8a1d3c4b5a6978877665544332211ffeeddccbb"))
	for _, r := range rows {
		if r.Aspect == "image taewa/taewa" && (r.Mismatch || r.Values["nomad"] != "4f1c2e9ab07d") {
			t.Errorf("a digest written two ways: %+v", r)
		}
	}
	m := Mismatches(Parity(withImage(pulled, "10.77.0.10:5000/orchbench/taewa@sha256:0000aaaa")))
	if len(m) != 1 || m[0].Aspect != "image taewa/taewa" {
		t.Errorf("two digests: mismatches %+v, want the image", m)
	}
}
