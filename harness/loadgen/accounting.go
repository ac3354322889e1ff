package loadgen

import (
	"fmt"
	"strings"
)

// Accounting says where every request due in the measured window ended up.
// Each due request ends in exactly one bucket, whatever the engine, so
//
//	Due = Completed + Errors + Timeouts + Unsent
//
// holds for every result; Balanced checks it. In closed loop nothing is due
// on a schedule: Due counts the requests the users started in the window and
// Unsent is 0.
//
// A request is due when its scheduled time falls in [start, end) of the
// measured window; warm-up requests are left out (see Result.Warmup). Both
// engines count Due from the schedule alone, so on the same fixed-arrival
// schedule, or the same exp seed, they give the same Due.
//
// An interrupted run (Result.Interrupted) closes the window at the
// interruption: requests scheduled after it are not due; those overdue and
// not sent are Unsent; those in flight are cut at once and counted as
// Timeouts (error class "cancelled").
//
// The wrk-style counters agree with it: Completed + HTTPErrors =
// Result.Requests, HTTPErrors = Errors.Status, Timeouts = Errors.Timeout +
// Errors.Classes["connect_timeout"], and SocketErrors = Errors.Connect +
// Errors.Read + Errors.Write - Errors.Classes["connect_timeout"].
type Accounting struct {
	Due int64 `json:"due"`
	// Completed are responses with a status below 400; their latency is
	// measured from the intended send time.
	Completed int64 `json:"completed"`
	// Errors are HTTPErrors (responses with a status of 400 or more) plus
	// SocketErrors (connect, write and read failures other than timeouts).
	Errors       int64 `json:"errors"`
	HTTPErrors   int64 `json:"http_errors"`
	SocketErrors int64 `json:"socket_errors"`
	// Timeouts were sent (or being connected) and not answered within the
	// timeout, including requests still in flight when the window closed,
	// which are waited for up to the timeout, and connects that timed out.
	Timeouts int64 `json:"timeouts"`
	// Unsent were due in the window but never sent, because their
	// connection was still busy with earlier requests when it closed (the
	// backlog an overloaded server builds up).
	Unsent int64 `json:"unsent"`
}

// Balanced reports whether every due request is accounted for exactly once.
func (a Accounting) Balanced() bool {
	return a.Errors == a.HTTPErrors+a.SocketErrors &&
		a.Due == a.Completed+a.Errors+a.Timeouts+a.Unsent
}

// String is the one-line form of the text report.
func (a Accounting) String() string {
	eq := "="
	if !a.Balanced() {
		eq = "!="
	}
	return fmt.Sprintf("%d due %s %d completed + %d errors (%d HTTP status, %d socket) + %d timeouts + %d unsent",
		a.Due, eq, a.Completed, a.Errors, a.HTTPErrors, a.SocketErrors, a.Timeouts, a.Unsent)
}

// GeneratorStats is the generator measuring itself. Lag is the time from a
// request being due with its connection free to its actual send: the delay
// the generator adds on its own (the backlog a slow server causes is not
// lag; the corrected latency covers it). A generator whose lag p99 is
// milliseconds measured itself, not the application.
type GeneratorStats struct {
	// LagSamples counts the sends the lag was measured on (measured window only).
	LagSamples int64 `json:"lag_samples"`
	LagP50Us   int64 `json:"lag_p50_us"`
	LagP99Us   int64 `json:"lag_p99_us"`
	LagMaxUs   int64 `json:"lag_max_us"`
	// LagMeanUs is what a closed loop loses: each user's cycle is its
	// response time plus this (plus think), so it sets the throughput lost.
	LagMeanUs float64 `json:"lag_mean_us"`
	// CPUSeconds is the process's user+system CPU over the measured window
	// (from getrusage), and CPUCores that divided by the window's wall time.
	CPUSeconds float64 `json:"cpu_seconds"`
	CPUCores   float64 `json:"cpu_cores"`
}

// Peer is one remote address the generator's connections really reached,
// read from the socket (getpeername) after each connect, with the number of
// connections opened to it: the load path as the wire saw it.
type Peer struct {
	Addr        string `json:"addr"`
	Connections int64  `json:"connections"`
}

// String is the one-line form of the text report: "lag p99 85us, max
// 1.20ms; CPU 0.31 cores".
func (g GeneratorStats) String() string {
	lag := "no sends"
	if g.LagSamples > 0 {
		lag = fmt.Sprintf("lag p99 %s, max %s", strings.TrimSpace(formatTimeUs(float64(g.LagP99Us))), strings.TrimSpace(formatTimeUs(float64(g.LagMaxUs))))
	}
	return fmt.Sprintf("%s; CPU %.2f cores", lag, g.CPUCores)
}
