package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// ReadResult reads a result as `orchbench load --json` and `--out` write
// it: one JSON document. name says where it came from (a file, a job's
// copy of one), for the error.
func ReadResult(r io.Reader, name string) (*Result, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("load result %s: %w", name, err)
	}
	var res Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("load result %s: %w", name, err)
	}
	return &res, nil
}

// ReadResultFile reads the result file at path. A file that does not exist
// gives an error satisfying errors.Is(err, fs.ErrNotExist): a generator
// that died before writing leaves none.
func ReadResultFile(path string) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadResult(f, path)
}
