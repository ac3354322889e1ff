package results

import (
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"
)

// SpreadNoise is the smallest difference in imbalance between orchestrators
// that parity flags. The imbalance of a step is the measured service's
// hottest instance's share of the service's CPU times the instance count:
// 1 when every instance worked alike, N when one did all the work. Equal
// connection counts leave only the cost of single requests to differ: with
// at least 100 requests per instance per step (the sweeps' lowest rate, 50
// rps for 8 s over 2 instances, gives 200) and a per-request cost varying
// by up to its own mean, an instance's share strays by about 1/√100 = 10 %
// of its even share. A load spread at random over few connections (16 over
// 2 pods is 8±2 each) strays by 25 % and more.
const SpreadNoise = 0.10

// parityEndpoint is the part of an archived endpoint the spread reads.
type parityEndpoint struct {
	Address  string `json:"address"`
	Port     int    `json:"port"`
	Instance string `json:"instance"`
}

type parityPeer struct {
	Addr        string `json:"addr"`
	Connections int64  `json:"connections"`
}

// stepSpread is how one step's load fell on the measured service's
// instances: the imbalance of their CPU, and each instance's connections
// where the generator's peers name instances (Nomad's and Swarm's host
// ports do; a Kubernetes NodePort is one address for every pod).
type stepSpread struct {
	imbalance   float64
	instances   int
	connections string
}

// spreadOf is a step's spread; false when it has fewer than two instances
// of the measured service, lacks the CPU figure of one, or had a fault that
// replaced one mid-load.
func spreadOf(r StepResult) (stepSpread, bool) {
	if _, faulted := r.Metadata["fault"]; faulted {
		return stepSpread{}, false
	}
	var eps []parityEndpoint
	decodeMeta(r.Metadata["endpoints"], &eps)
	cores := map[string]float64{}
	addrOf := map[string]string{}
	for _, ep := range eps {
		if ep.Instance != "" {
			cores[ep.Instance] = 0
			addrOf[net.JoinHostPort(ep.Address, strconv.Itoa(ep.Port))] = ep.Instance
		}
	}
	if len(cores) < 2 {
		return stepSpread{}, false
	}
	measured, total := map[string]bool{}, 0.0
	for _, t := range TaskCPUOf(r) {
		if c, ok := cores[t.AllocID]; ok {
			cores[t.AllocID] = c + t.Cores
			total += t.Cores
			measured[t.AllocID] = true
		}
	}
	// an instance whose cgroup could not be sampled did not do no work
	if len(measured) < len(cores) || total <= 0 {
		return stepSpread{}, false
	}
	hottest := 0.0
	for _, c := range cores {
		hottest = math.Max(hottest, c)
	}
	s := stepSpread{imbalance: hottest / total * float64(len(cores)), instances: len(cores)}
	var peers []parityPeer
	decodeMeta(r.Metadata["peers"], &peers)
	conns := map[string]int64{}
	for _, p := range peers {
		if in, ok := addrOf[p.Addr]; ok {
			conns[in] += p.Connections
		}
	}
	if len(conns) > 0 {
		var counts []int64
		for in := range cores {
			counts = append(counts, conns[in])
		}
		sort.Slice(counts, func(i, j int) bool { return counts[i] > counts[j] })
		var words []string
		for _, c := range counts {
			words = append(words, strconv.FormatInt(c, 10))
		}
		s.connections = strings.Join(words, "+")
	}
	return s, true
}

// spreadRows are a row per app and variant run on two or more
// orchestrators with instances to spread over. Each orchestrator shows
// the median imbalance of its steps and their range, and the connections
// per instance where they are known. The row is flagged when two medians
// differ by more than the noise: SpreadNoise, or more when even the
// steadiest orchestrator's own steps range wider (the spread seen across
// its repetitions and rates is then what equal work looks like here).
func spreadRows(steps []StepResult, orchs map[[2]string]map[string]bool) []ParityRow {
	imbalances := map[[2]string]map[string][]float64{}
	conns := map[[2]string]map[string]map[string]bool{}
	for _, r := range steps {
		if r.Skipped || !r.Measured() {
			continue
		}
		s, ok := spreadOf(r)
		if !ok {
			continue
		}
		cfg := [2]string{r.App, r.Variant}
		if imbalances[cfg] == nil {
			imbalances[cfg], conns[cfg] = map[string][]float64{}, map[string]map[string]bool{}
		}
		imbalances[cfg][r.Orchestrator] = append(imbalances[cfg][r.Orchestrator], s.imbalance)
		if conns[cfg][r.Orchestrator] == nil {
			conns[cfg][r.Orchestrator] = map[string]bool{}
		}
		if s.connections != "" {
			conns[cfg][r.Orchestrator][s.connections] = true
		}
	}
	var rows []ParityRow
	for cfg, byOrch := range imbalances {
		all := orchs[cfg]
		if len(all) < 2 {
			continue
		}
		row := ParityRow{App: cfg[0], Variant: cfg[1], Aspect: "load spread over instances", Values: map[string]string{},
			Basis: "the steps with two or more instances and their CPU figures, none with a fault; flagged when medians differ by more than " +
				strconv.FormatFloat(SpreadNoise, 'f', -1, 64) + " or the steadiest orchestrator's own range"}
		lo, hi := math.Inf(1), math.Inf(-1)
		steadiest := math.Inf(1)
		for o := range all {
			xs := byOrch[o]
			if len(xs) == 0 {
				row.Values[o] = ""
				row.Mismatch = true
				continue
			}
			sort.Float64s(xs)
			med := medianOfSorted(xs)
			lo, hi = math.Min(lo, med), math.Max(hi, med)
			steadiest = math.Min(steadiest, xs[len(xs)-1]-xs[0])
			row.Values[o] = spreadText(xs, med, conns[cfg][o])
		}
		if hi-lo > math.Max(SpreadNoise, steadiest) {
			row.Mismatch = true
		}
		rows = append(rows, row)
	}
	return rows
}

// medianOfSorted is the middle of sorted xs (the middle pair's mean for an even count).
func medianOfSorted(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func spreadText(sorted []float64, med float64, conns map[string]bool) string {
	text := fmt.Sprintf("imbalance %.2f", med)
	if len(sorted) > 1 {
		text += fmt.Sprintf(" (median of %d steps, %.2f–%.2f)", len(sorted), sorted[0], sorted[len(sorted)-1])
	}
	if len(conns) > 0 {
		text += "; connections per instance " + joinSet(conns)
	} else {
		text += "; connections per instance not seen (one address in front of every instance)"
	}
	return text
}
