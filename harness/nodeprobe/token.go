package nodeprobe

import (
	"fmt"
	"os"
	"strings"
)

// TokenFileEnv names the file holding the token the harness and the probes
// share; unset means no token.
const TokenFileEnv = "ORCHBENCH_PROBE_TOKEN_FILE"

// ReadToken is the token in file (surrounding whitespace removed); "" for
// no file. An empty or unreadable file is an error, not "no token": a probe
// started with a token it cannot read would otherwise serve anyone.
func ReadToken(file string) (string, error) {
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("probe token: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("probe token: %s is empty", file)
	}
	return t, nil
}
