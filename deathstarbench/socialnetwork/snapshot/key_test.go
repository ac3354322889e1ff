package snapshot

import (
	"strconv"
	"strings"
	"testing"
)

// A snapshot restored for other parameters, or into services that store
// data another way, would pass off one dataset as another: every parameter
// and the format must change the key.
func TestKeyChangesWithEveryParameterAndTheFormat(t *testing.T) {
	base := Params{Users: 962, PostsPerUser: 10, Seed: 1}
	keys := map[string]string{"base": base.Key()}
	for what, key := range map[string]string{
		"users":  Params{Users: 963, PostsPerUser: 10, Seed: 1}.Key(),
		"posts":  Params{Users: 962, PostsPerUser: 11, Seed: 1}.Key(),
		"seed":   Params{Users: 962, PostsPerUser: 10, Seed: 2}.Key(),
		"format": base.keyFor(FormatVersion + 1),
		// digits that could run together if the fields had no separators
		"users 96, posts 210": Params{Users: 96, PostsPerUser: 210, Seed: 1}.Key(),
	} {
		for other, k := range keys {
			if k == key {
				t.Errorf("changing %s gives the key of %s: %q", what, other, key)
			}
		}
		keys[what] = key
	}
	if again := (Params{Users: 962, PostsPerUser: 10, Seed: 1}).Key(); again != base.Key() {
		t.Errorf("the same parameters give %q and %q", base.Key(), again)
	}
	if want := "u962-p10-s1-f" + strconv.Itoa(FormatVersion); base.Key() != want {
		t.Errorf("key %q is not the readable form the cache's directory names use", base.Key())
	}
}

// The image tag leaves the format out (an image of another format is
// remade under the same name, so the pack needs no change) but keeps every
// parameter, and is a valid Docker tag.
func TestImageTagNamesTheParameters(t *testing.T) {
	p := Params{Users: 60, PostsPerUser: 3, Seed: 7}
	if got := p.ImageTag("local"); got != "local-ds-u60-p3-s7" {
		t.Errorf("image tag %q", got)
	}
	if got := ImageRef(StoreRedis, "snap", p); got != "orchbench/redis:snap-ds-u60-p3-s7" {
		t.Errorf("redis image %q", got)
	}
	if strings.Contains(p.ImageTag("local"), "-f") {
		t.Errorf("the image tag names the format")
	}
}

func TestParamsValidate(t *testing.T) {
	for _, p := range []Params{{Users: 1, PostsPerUser: 1}, {Users: 10, PostsPerUser: 0}} {
		if p.Validate() == nil {
			t.Errorf("%+v passes", p)
		}
	}
	if err := DefaultParams().Validate(); err != nil {
		t.Error(err)
	}
}
