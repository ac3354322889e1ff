package names

import "testing"

type kind string

func TestJoin(t *testing.T) {
	if got := Join([]kind{"kill-task", "replace-instance"}); got != "kill-task, replace-instance" {
		t.Fatalf("got %q", got)
	}
	if got := Join([]kind(nil)); got != "" {
		t.Fatalf("nothing joined: %q", got)
	}
}
