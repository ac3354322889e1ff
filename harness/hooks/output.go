package hooks

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// maxProblems bounds what a hook's problem lines cost in memory: a
// verification of a large, empty dataset can print one per record.
const maxProblems = 1000

// outputWriter shows a hook's output line by line under a prefix, and
// keeps what the result needs of it. It holds back a line until its end
// arrives, since the hook's writes need not end at line ends.
type outputWriter struct {
	w        io.Writer
	prefix   string
	partial  []byte
	last     string
	problems []Problem
}

func (o *outputWriter) Write(b []byte) (int, error) {
	o.partial = append(o.partial, b...)
	for {
		i := bytes.IndexByte(o.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		o.line(string(o.partial[:i]))
		o.partial = o.partial[i+1:]
	}
}

func (o *outputWriter) line(line string) {
	trimmed := strings.TrimSpace(line)
	if trimmed != "" {
		o.last = line
	}
	if rest, ok := strings.CutPrefix(trimmed, "problem:"); ok && len(o.problems) < maxProblems {
		o.problems = append(o.problems, Problem(strings.TrimSpace(rest)))
	}
	// the hook is not to fail because the harness's own output is gone
	fmt.Fprintf(o.w, "%s%s\n", o.prefix, line)
}

// flush takes a last line the hook left without a newline.
func (o *outputWriter) flush() {
	if len(o.partial) > 0 {
		o.line(string(o.partial))
		o.partial = nil
	}
}
