package workload

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/loadgen"
)

// Each user runs ballot, see-all, see-cities, pausing 1-3 s after the
// third only; users share the city counter; every ballot is one the app's
// rules accept, with every party in it.
func TestStudy001Flow(t *testing.T) {
	w, err := FromSpec("voting:study-001")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	users := []loadgen.User{w.NewUser(0), w.NewUser(1)}
	var cities []int
	for round := 0; round < 100; round++ {
		for _, u := range users {
			for i, want := range []string{LabelVote, LabelSeeAll, LabelSeeCities} {
				r := u.Next(rng)
				if r.Label != want || r.Method+" "+r.Path != want {
					t.Fatalf("round %d request %d: %s %s labelled %q, want %s", round, i, r.Method, r.Path, r.Label, want)
				}
				pause := u.Pause(rng)
				if i < 2 && pause != 0 {
					t.Fatalf("a pause of %s after %s", pause, want)
				}
				if i == 2 && (pause < PauseMin || pause > PauseMax) {
					t.Fatalf("pause %s after the flow, want 1-3 s", pause)
				}
				if i > 0 {
					continue
				}
				var b ballot
				if err := json.Unmarshal(r.Body, &b); err != nil {
					t.Fatal(err)
				}
				total := 0
				for _, n := range b.Votes {
					if n < 0 {
						t.Fatalf("negative count in %s", r.Body)
					}
					total += n
				}
				if len(b.Votes) != 7 || b.Votes["party7"] < 0 || total < 1 || total > 400 || b.BoxNo != 1 || b.ElectionSize != 1 {
					t.Fatalf("ballot %s: want 7 parties, a total of 1-400, box 1 of size 1", r.Body)
				}
				if len(r.Headers) != 1 || r.Headers[0].Value != "application/json" {
					t.Fatalf("headers %v", r.Headers)
				}
				cities = append(cities, b.CityNo)
			}
		}
	}
	for i, c := range cities {
		if c != i%81+1 {
			t.Fatalf("ballot %d went to city %d, want %d (a counter shared by the users)", i, c, i%81+1)
		}
	}
}

func TestStudy001Spec(t *testing.T) {
	w, err := FromSpec("voting:study-001,parties=6")
	if err != nil || w.Parties != 6 {
		t.Fatalf("parties=6: %+v %v", w, err)
	}
	var b ballot
	if err := json.Unmarshal(w.NewUser(0).Next(rand.New(rand.NewPCG(1, 1))).Body, &b); err != nil || len(b.Votes) != 6 {
		t.Fatalf("ballot of %d parties, %v", len(b.Votes), err)
	}
	for spec, want := range map[string]string{
		"voting:study-002":            `unknown voting flow "study-002"`,
		"voting:study-001,parties=0":  `bad option "parties=0"`,
		"voting:study-001,boxes=1000": `bad option "boxes=1000"`,
	} {
		if _, err := FromSpec(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
	// registered with the generator under its name
	if _, err := loadgen.WorkloadByName("voting:study-001"); err != nil {
		t.Fatal(err)
	}
}
