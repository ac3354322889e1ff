package contract

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseAppReadsThePrepareHook(t *testing.T) {
	app, err := ParseApp(jobWithMeta(map[string]string{
		KeyPrepareArgs:    `["dsb","social-network","restore","--image-tag","local","--users","962"]`,
		KeyPrepareTimeout: "40m",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"dsb", "social-network", "restore", "--image-tag", "local", "--users", "962"}
	if !reflect.DeepEqual(app.Prepare.Args, want) || app.Prepare.Timeout != 40*time.Minute {
		t.Errorf("prepare %q within %s, want %q within 40m", app.Prepare.Args, app.Prepare.Timeout, want)
	}
	if app.Setup.Args != nil || app.Meta[KeyPrepareArgs] == "" {
		t.Errorf("prepare leaked into setup (%q), or left out of the archived meta (%v)", app.Setup.Args, app.Meta)
	}

	none, err := ParseApp(jobWithMeta(map[string]string{KeySetupArgs: `["dsb","social-network","load"]`}))
	if err != nil || none.Prepare.Args != nil || none.Prepare.Timeout != DefaultPrepareTimeout {
		t.Errorf("no prepare hook declared: %q within %s, %v", none.Prepare.Args, none.Prepare.Timeout, err)
	}
}

// The prepare hook runs before anything is deployed, so an endpoint in it
// could only ever be filled with nothing: refused when the pack is read,
// not when a sweep reaches it.
func TestParseAppRefusesABadPrepareHook(t *testing.T) {
	for _, c := range []struct{ key, value, why string }{
		{KeyPrepareArgs, `["dsb","restore","--frontend","http://{{endpoint}}"]`, "before the job is deployed"},
		{KeyPrepareArgs, `"dsb restore"`, "JSON list"},
		{KeyPrepareArgs, `[]`, "empty list"},
		{KeyPrepareTimeout, "a while", "positive duration"},
	} {
		_, err := ParseApp(jobWithMeta(map[string]string{c.key: c.value}))
		if err == nil || !strings.Contains(err.Error(), "job sn") || !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s = %q: error %v, want one naming the job, the key and %q", c.key, c.value, err, c.why)
		}
	}
}
