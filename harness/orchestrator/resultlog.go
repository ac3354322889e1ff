package orchestrator

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/orchbench/orchbench/harness/loadgen"
)

// A load job whose result file the harness cannot reach (a Kubernetes pod
// on another machine: the API serves its log, not its filesystem) writes
// the result into its own output once the generator has ended
// (`orchbench loadjob --result-to-log`): gzipped, base64 in numbered lines
// of resultLogPrefix. The lines carry their own number because the runtime
// reads stdout and stderr apart, so a late line of the generator's stderr
// may land between them; the count in the first line and gzip's checksum
// catch a log that lost or mangled any of them.
const (
	resultLogPrefix = "orchbench-load-result "
	// resultLogChunk keeps each line far below the 16 KiB at which a
	// container runtime splits a log line in two.
	resultLogChunk = 4096
)

// ErrNoResultInLog is returned when a log holds no result block at all:
// a load image too old to write one, or a job that never got that far.
var ErrNoResultInLog = errors.New("the log carries no load result")

// ErrResultIncomplete is returned when the block lacks lines: a log read
// before the runtime wrote all of it, or one cut short.
var ErrResultIncomplete = errors.New("the log's load result is incomplete")

// WriteResultToLog copies the result file at path into w as the log block
// ResultFromLog reads. A missing file is said in the block's place, so the
// harness can tell a generator that wrote nothing from an image that does
// not know the flag.
func WriteResultToLog(w io.Writer, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		_, werr := fmt.Fprintf(w, "%snone: %v\n", resultLogPrefix, err)
		return errors.Join(err, werr)
	}
	var packed bytes.Buffer
	zw := gzip.NewWriter(&packed)
	if _, err := zw.Write(raw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	text := base64.StdEncoding.EncodeToString(packed.Bytes())
	n := (len(text) + resultLogChunk - 1) / resultLogChunk
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%sbegin %d\n", resultLogPrefix, n)
	for i := 0; i < n; i++ {
		fmt.Fprintf(bw, "%s%d %s\n", resultLogPrefix, i, text[i*resultLogChunk:min(len(text), (i+1)*resultLogChunk)])
	}
	return bw.Flush()
}

// ResultFromLog takes the result block out of a load job's log: the
// result, and the log without the block (the generator's own output, as
// archived). name says whose log it is, for the errors.
func ResultFromLog(log []byte, name string) (*loadgen.Result, []byte, error) {
	var rest bytes.Buffer
	chunks := map[int]string{}
	want, none := -1, ""
	for _, line := range strings.SplitAfter(string(log), "\n") {
		body, ok := strings.CutPrefix(line, resultLogPrefix)
		if !ok {
			rest.WriteString(line)
			continue
		}
		body = strings.TrimRight(body, "\r\n")
		if why, ok := strings.CutPrefix(body, "none: "); ok {
			none = why
			continue
		}
		if count, ok := strings.CutPrefix(body, "begin "); ok {
			n, err := strconv.Atoi(count)
			if err != nil || n < 1 {
				return nil, rest.Bytes(), fmt.Errorf("%s: result block opened with %q", name, line)
			}
			want = n
			continue
		}
		num, chunk, ok := strings.Cut(body, " ")
		i, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, rest.Bytes(), fmt.Errorf("%s: a result line without its number: %.80q", name, line)
		}
		chunks[i] = chunk
	}
	switch {
	case none != "":
		return nil, rest.Bytes(), fmt.Errorf("%s: the job wrote no result: %s", name, none)
	case want < 0:
		return nil, rest.Bytes(), fmt.Errorf("%s: %w", name, ErrNoResultInLog)
	}
	var text strings.Builder
	for i := 0; i < want; i++ {
		c, ok := chunks[i]
		if !ok {
			return nil, rest.Bytes(), fmt.Errorf("%s: %w: line %d of %d missing", name, ErrResultIncomplete, i, want)
		}
		text.WriteString(c)
	}
	if len(chunks) != want {
		return nil, rest.Bytes(), fmt.Errorf("%s: %d result lines in the log, the block announced %d", name, len(chunks), want)
	}
	packed, err := base64.StdEncoding.DecodeString(text.String())
	if err != nil {
		return nil, rest.Bytes(), fmt.Errorf("%s: result block: %w", name, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		return nil, rest.Bytes(), fmt.Errorf("%s: result block: %w", name, err)
	}
	res, err := loadgen.ReadResult(zr, name)
	if err != nil {
		return nil, rest.Bytes(), err
	}
	return res, rest.Bytes(), nil
}
