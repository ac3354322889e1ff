package orchestrator

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/orchbench/orchbench/harness/loadgen"
)

// LoadImage is the image a load job runs: the one configured, else the
// default every orchestrator's job shares.
func LoadImage(configured string) string {
	if configured != "" {
		return configured
	}
	return DefaultLoadImage
}

// EnvVar is one variable of a load job's environment.
type EnvVar struct {
	Name, Value string
}

// LoadJobEnv is the environment that carries req into a load job that
// cannot take a dispatch payload (a Swarm job, a Kubernetes Job): the
// `orchbench load` arguments and URL as a JSON list, and a -s script's
// text, which the job's `orchbench loadjob` writes to scriptInJob.
func LoadJobEnv(req LoadRequest, scriptInJob string) ([]EnvVar, error) {
	args, script, err := ShipScript(req.Args, scriptInJob)
	if err != nil {
		return nil, err
	}
	encoded, err := json.Marshal(append(args, req.URL))
	if err != nil {
		return nil, err
	}
	env := []EnvVar{{Name: EnvLoadArgs, Value: string(encoded)}}
	if script != nil {
		env = append(env, EnvVar{Name: EnvLoadScript, Value: base64.StdEncoding.EncodeToString(script)})
	}
	return env, nil
}

// LoadJobResult is what a finished load job returns to the sweep. job
// names the job and its instance for the errors (`swarm: load job x (task
// y)`); failure says how it failed, "" when it exited 0; readErr is why
// its result could not be read. A failed job's result is kept for the
// archive, with an error that makes the step invalid: a generator killed
// mid-run may have written a partial result that must not pass for whole.
func LoadJobResult(job string, res *loadgen.Result, readErr error, failure string, raw []byte) (*loadgen.Result, []byte, error) {
	switch {
	case readErr != nil && failure == "":
		return nil, raw, fmt.Errorf("%s left no result: %v: %s", job, readErr, LastLine(string(raw)))
	case readErr != nil:
		return nil, raw, fmt.Errorf("%s %s, and left no readable result (%v)", job, failure, readErr)
	case failure != "":
		return res, raw, fmt.Errorf("%s %s", job, failure)
	}
	return res, raw, nil
}
