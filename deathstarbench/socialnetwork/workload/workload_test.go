package workload

import (
	"math/rand/v2"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/loadgen"
)

func TestMixedProportions(t *testing.T) {
	w, err := FromSpec("social-network:mixed@962")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 20000
	counts := map[string]int{}
	for range n {
		counts[w.Next(rng).Label]++
	}
	// Binomial standard deviation is under 0.4 %; bounds are ±2 %.
	for label, want := range map[string]float64{
		EndpointReadHomeTimeline: 0.60, EndpointReadUserTimeline: 0.30, EndpointComposePost: 0.10,
	} {
		got := float64(counts[label]) / n
		if got < want-0.02 || got > want+0.02 {
			t.Errorf("%s share %.3f, want %.2f ± 0.02 (counts %v)", label, got, want, counts)
		}
	}
}

func TestSingleEndpointWorkloads(t *testing.T) {
	for name, label := range map[string]string{
		"compose-post": EndpointComposePost, "read-home-timeline": EndpointReadHomeTimeline, "read-user-timeline": EndpointReadUserTimeline,
	} {
		w, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		for range 200 {
			if got := w.Next(rng).Label; got != label {
				t.Fatalf("%s produced %s", name, got)
			}
		}
	}
}

func TestReadParameters(t *testing.T) {
	w, _ := New("read-home-timeline", 50)
	rng := rand.New(rand.NewPCG(7, 8))
	seen := map[int]bool{}
	for range 2000 {
		req := w.Next(rng)
		u, err := url.Parse(req.Path)
		if err != nil || req.Method != "GET" || u.Path != EndpointReadHomeTimeline {
			t.Fatalf("bad request %+v", req)
		}
		q := u.Query()
		user, _ := strconv.Atoi(q.Get("user_id"))
		start, _ := strconv.Atoi(q.Get("start"))
		stop, _ := strconv.Atoi(q.Get("stop"))
		if user < 0 || user >= 50 || start < 0 || start > 100 || stop != start+10 {
			t.Fatalf("parameters out of range: %s", req.Path)
		}
		seen[user] = true
	}
	// The scripts' math.random(0, max_user_index - 1): both ends drawn.
	if !seen[0] || !seen[49] || len(seen) != 50 {
		t.Fatalf("drew %d distinct users (0: %v, 49: %v), want all of 0..49", len(seen), seen[0], seen[49])
	}
}

func TestComposeBody(t *testing.T) {
	w, _ := New("compose-post", 962)
	rng := rand.New(rand.NewPCG(9, 10))
	authors, mentioned := map[int]bool{}, map[int]bool{}
	mention := regexp.MustCompile(`@username_(\d+)`)
	for range 20000 {
		req := w.Next(rng)
		if req.Method != "POST" || req.Path != EndpointComposePost {
			t.Fatalf("bad request line %s %s", req.Method, req.Path)
		}
		form, err := url.ParseQuery(string(req.Body))
		if err != nil {
			t.Fatalf("body does not parse as a form: %v", err)
		}
		user := form.Get("user_id")
		if form.Get("username") != "username_"+user || form.Get("post_type") != "0" {
			t.Fatalf("user fields: %v", form)
		}
		id, _ := strconv.Atoi(user)
		authors[id] = true
		for _, m := range mention.FindAllStringSubmatch(form.Get("text"), -1) {
			n, _ := strconv.Atoi(m[1])
			mentioned[n] = true
		}
		text := form.Get("text")
		mentions := strings.Count(text, " @username_")
		urls := strings.Count(text, " http://")
		if mentions < 1 || mentions > 6 || urls < 1 || urls > 6 || strings.Contains(text, "@username_"+user+" ") {
			t.Fatalf("text has %d mentions, %d urls: %q", mentions, urls, text)
		}
		media := strings.Count(form.Get("media_ids"), ",") + 1
		if media < 1 || media > 5 || strings.Count(form.Get("media_types"), `"png"`) != media {
			t.Fatalf("media: %s / %s", form.Get("media_ids"), form.Get("media_types"))
		}
	}
	for name, ids := range map[string]map[int]bool{"authors": authors, "mentions": mentioned} {
		if !ids[0] || !ids[961] || ids[962] {
			t.Errorf("%s: 0 drawn %v, 961 drawn %v, 962 drawn %v; want 0..961 only", name, ids[0], ids[961], ids[962])
		}
	}
}

func TestFromSpec(t *testing.T) {
	for spec, users := range map[string]int{"mixed": DefaultUsers, "social-network:read-user-timeline@10": 10, "compose-post@3": 3} {
		w, err := FromSpec(spec)
		if err != nil || w.Users != users {
			t.Errorf("FromSpec(%q) = %+v, %v", spec, w, err)
		}
	}
	for _, spec := range []string{"social-network:nope", "mixed@x", "mixed@0"} {
		if _, err := FromSpec(spec); err == nil {
			t.Errorf("FromSpec(%q) accepted", spec)
		}
	}
}

func TestRegisteredWithLoadgen(t *testing.T) {
	w, err := loadgen.WorkloadByName("social-network:mixed@962")
	if err != nil {
		t.Fatal(err)
	}
	if sn, ok := w.(*SocialNetwork); !ok || sn.Users != 962 {
		t.Errorf("got %#v", w)
	}
	if _, err := loadgen.WorkloadByName("social-network:nope"); err == nil {
		t.Error("an unknown mix should fail")
	}
}
