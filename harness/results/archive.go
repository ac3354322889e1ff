package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Archive is a results directory:
//
//	<Dir>/<sweep-id>/sweep.json
//	<Dir>/<sweep-id>/<step-id>/summary.json, raw.txt, histogram.hlog, ..., done
//
// Every file is written to a temporary name and renamed, so a crash leaves
// either the old or the new file, never half of one. The "done" marker is
// written last: a step without it is incomplete and --resume runs it again.
type Archive struct{ Dir string }

const (
	sweepFile   = "sweep.json"
	summaryFile = "summary.json"
	doneFile    = "done"
)

// idRE keeps sweep and step IDs safe as directory names.
var idRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func checkID(kind, id string) error {
	if !idRE.MatchString(id) {
		return fmt.Errorf("invalid %s ID %q", kind, id)
	}
	return nil
}

// NewSweepID names a sweep run after its spec and UTC start time, e.g.
// demo-20250102T150405Z, so runs sort by time and never collide by accident.
func NewSweepID(name string, start time.Time) string {
	return name + "-" + start.UTC().Format("20060102T150405Z")
}

// CreateSweep makes the sweep directory and writes sweep.json. It refuses
// to overwrite an existing sweep: resuming uses LoadSweep instead.
func (a Archive) CreateSweep(rec SweepRecord) error {
	if err := checkID("sweep", rec.ID); err != nil {
		return err
	}
	dir := filepath.Join(a.Dir, rec.ID)
	if _, err := os.Stat(filepath.Join(dir, sweepFile)); err == nil {
		return fmt.Errorf("sweep %s already exists in %s: %w", rec.ID, a.Dir, fs.ErrExist)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, sweepFile), rec)
}

// LoadSweep reads sweep.json.
func (a Archive) LoadSweep(sweepID string) (*SweepRecord, error) {
	if err := checkID("sweep", sweepID); err != nil {
		return nil, err
	}
	var rec SweepRecord
	if err := readJSON(filepath.Join(a.Dir, sweepID, sweepFile), &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// Resolve turns a sweep ID or a sweep name into an ID: an exact directory
// wins, otherwise the newest sweep of that name.
func (a Archive) Resolve(idOrName string) (string, error) {
	if err := checkID("sweep", idOrName); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(a.Dir, idOrName, sweepFile)); err == nil {
		return idOrName, nil
	}
	sweeps, err := a.ListSweeps()
	if err != nil {
		return "", err
	}
	best := ""
	for _, s := range sweeps {
		if s.Name == idOrName && s.ID > best {
			best = s.ID
		}
	}
	if best == "" {
		return "", fmt.Errorf("no sweep %q in %s", idOrName, a.Dir)
	}
	return best, nil
}

// WriteStep stores a step: the extra files (raw.txt, histogram.hlog...) by
// base name, then summary.json, then the done marker. Rewriting a step first
// removes its marker, so an interrupted rewrite counts as incomplete.
func (a Archive) WriteStep(sweepID string, r StepResult, files map[string][]byte) error {
	if err := checkID("sweep", sweepID); err != nil {
		return err
	}
	if err := checkID("step", r.Step); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(a.Dir, sweepID, sweepFile)); err != nil {
		return fmt.Errorf("sweep %s not created: %w", sweepID, err)
	}
	dir := filepath.Join(a.Dir, sweepID, r.Step)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, doneFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := keepEarlierAttempt(dir); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if name != filepath.Base(name) || !idRE.MatchString(name) || name == summaryFile || name == doneFile {
			return fmt.Errorf("step %s: invalid file name %q", r.Step, name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := writeAtomic(filepath.Join(dir, name), files[name]); err != nil {
			return err
		}
	}
	if r.Sweep == "" {
		r.Sweep = sweepID
	}
	if err := writeJSON(filepath.Join(dir, summaryFile), r); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, doneFile), []byte(time.Now().UTC().Format(time.RFC3339Nano)+"\n"))
}

// keepEarlierAttempt moves the files of a step run before (an invalid step
// run again by --resume) into attempt-N/, so nothing measured is lost.
func keepEarlierAttempt(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, summaryFile)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	n := 1
	for {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("attempt-%d", n))); errors.Is(err, fs.ErrNotExist) {
			break
		}
		n++
	}
	to := filepath.Join(dir, fmt.Sprintf("attempt-%d", n))
	if err := os.Mkdir(to, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			if err := os.Rename(filepath.Join(dir, e.Name()), filepath.Join(to, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// EarlierAttempts reads the summaries a step's earlier runs left in
// attempt-N/ (invalid runs that --resume measured again), oldest first.
func (a Archive) EarlierAttempts(sweepID, stepID string) ([]StepResult, error) {
	if err := checkID("step", stepID); err != nil {
		return nil, err
	}
	var out []StepResult
	for n := 1; ; n++ {
		r, err := readStep(filepath.Join(a.Dir, sweepID, stepID, fmt.Sprintf("attempt-%d", n), summaryFile))
		if errors.Is(err, fs.ErrNotExist) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, *r)
	}
}

// LoadStep reads a step's summary.json, complete or not.
func (a Archive) LoadStep(sweepID, stepID string) (*StepResult, error) {
	if err := checkID("step", stepID); err != nil {
		return nil, err
	}
	return readStep(filepath.Join(a.Dir, sweepID, stepID, summaryFile))
}

// readStep reads one summary.json, giving one from an older archive its
// outcome.
func readStep(path string) (*StepResult, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r StepResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.upgrade(raw)
	return &r, nil
}

// StepFile returns the path of an extra file of a step (e.g. raw.txt).
func (a Archive) StepFile(sweepID, stepID, name string) string {
	return filepath.Join(a.Dir, sweepID, stepID, name)
}

// CompletedSteps returns the IDs of steps with a done marker.
func (a Archive) CompletedSteps(sweepID string) (map[string]bool, error) {
	if err := checkID("sweep", sweepID); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(a.Dir, sweepID))
	if err != nil {
		return nil, err
	}
	done := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(a.Dir, sweepID, e.Name(), doneFile)); err == nil {
			done[e.Name()] = true
		}
	}
	return done, nil
}

// LoadSteps returns every completed step, in plan order (steps not in the
// plan, if any, follow sorted by ID).
func (a Archive) LoadSteps(sweepID string) ([]StepResult, error) {
	rec, err := a.LoadSweep(sweepID)
	if err != nil {
		return nil, err
	}
	done, err := a.CompletedSteps(sweepID)
	if err != nil {
		return nil, err
	}
	var order []string
	for _, st := range rec.Plan {
		if done[st.ID] {
			order = append(order, st.ID)
			delete(done, st.ID)
		}
	}
	var extra []string
	for id := range done {
		extra = append(extra, id)
	}
	sort.Strings(extra)
	order = append(order, extra...)
	out := make([]StepResult, 0, len(order))
	for _, id := range order {
		r, err := a.LoadStep(sweepID, id)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, nil
}

// SweepInfo is one line of ListSweeps.
type SweepInfo struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Start     time.Time `json:"start"`
	Planned   int       `json:"planned"`
	Completed int       `json:"completed"`
}

// ListSweeps lists the sweeps in the archive, oldest first. Directories
// without a readable sweep.json are skipped.
func (a Archive) ListSweeps() ([]SweepInfo, error) {
	entries, err := os.ReadDir(a.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []SweepInfo
	for _, e := range entries {
		if !e.IsDir() || !idRE.MatchString(e.Name()) {
			continue
		}
		rec, err := a.LoadSweep(e.Name())
		if err != nil {
			continue
		}
		done, _ := a.CompletedSteps(e.Name())
		info := SweepInfo{ID: rec.ID, Start: rec.Start, Planned: len(rec.Plan), Completed: len(done)}
		if rec.Spec != nil {
			info.Name = rec.Spec.Name
		} else {
			info.Name = strings.TrimSuffix(rec.ID, "-"+rec.Start.UTC().Format("20060102T150405Z"))
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.Before(out[j].Start)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'))
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// writeAtomic writes data beside path and renames it into place, syncing
// first so the rename never exposes an empty file after a power loss.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
