// Package loadgen is orchbench's HTTP/1.1 load generator. It keeps wrk2's
// measurement model (a constant-throughput schedule per connection and
// latency measured from the scheduled send time, which corrects for
// coordinated omission) and ends latency at the kernel's receive stamp of
// the response's last segment (rxstamp_linux.go), not at the generator's
// read of it. It adds what the harness needs around it: closed-loop
// users, rate phases and ramps, a per-endpoint breakdown, error classes, a
// per-second series and an explicit warm-up.
//
// Every request due in the measured window is accounted for, in both
// engines alike (see Accounting), and the generator measures itself: its
// lag, its CPU and the peers its sockets reached (see GeneratorStats, Peer).
//
// The library is split the way vegeta splits its own: schedule.go (pacers),
// target.go (URL, request formatting, endpoint labels), workload.go (Go request
// mixes), registry.go (workloads by name), script.go (wrk's Lua API),
// luastate.go (the Lua states: their sizes, math.random, LuaSocket),
// luaglobals.go (errors that name the nil globals a script used),
// attacker.go (the run and what both engines share), goroutine_engine.go
// (a goroutine per connection), eventloop_linux.go, eventloop_sys_linux.go,
// eventloop_closed_linux.go and wakeup_linux.go (the default engine of both
// loops when it has two or more Ps: epoll loops, as wrk's), window.go (which requests are due, and
// which unsent, for both engines), httpwire.go and wirebuf.go (the
// allocation-free HTTP/1.1 response parsers, blocking and resumable),
// timer_linux.go (timerfd waits that keep low-rate schedules on time),
// recorder.go (histograms and counters), selfstats.go and rusage_*.go (lag
// and CPU), peers.go (remote addresses), series.go (the per-interval
// series), outcome.go and result.go (the archived Result), accounting.go,
// report.go (the wrk2 text report) and wrk2parse.go (reading a real wrk2's
// output).
package loadgen
