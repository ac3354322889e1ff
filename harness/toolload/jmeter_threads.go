package toolload

import (
	"fmt"
	"strconv"
	"strings"
)

// jmeterBoundSlack is how far short of its bound a JMeter run that its
// scheduler stopped may end: the thread group's clock starts before the
// first request, and a request cut at the bound ends when it is cut.
const jmeterBoundSlack = 2000 // ms

// checkThreads holds each user's samples to the plan: a user is one
// thread, which sends its requests one after another, in the sequence's
// order, loops times. Fewer samples than the plan's are explained only by
// the bound: JMeter stopped the users when it ran out.
func checkThreads(samples []jtlSample, plan jmeterPlan) []string {
	var problems []string
	byThread := map[string][]jtlSample{}
	var names []string
	for _, s := range samples {
		if _, ok := byThread[s.thread]; !ok {
			names = append(names, s.thread)
		}
		byThread[s.thread] = append(byThread[s.thread], s)
	}
	if len(names) > plan.Threads {
		problems = append(problems, fmt.Sprintf("%d threads sampled, the plan has %d", len(names), plan.Threads))
	}
	perUser := plan.Loops * plan.Requests
	first, last := samples[0].start, samples[0].end()
	for _, s := range samples {
		first, last = min(first, s.start), max(last, s.end())
	}
	for _, name := range names {
		ss := byThread[name]
		if n, ok := threadNumber(name); !ok || n > plan.Threads {
			problems = append(problems, fmt.Sprintf("thread %q is not one of the plan's %d", name, plan.Threads))
		}
		if len(ss) > perUser {
			problems = append(problems, fmt.Sprintf("thread %q sent %d requests, more than its %d loops × %d", name, len(ss), plan.Loops, plan.Requests))
		}
		for i, s := range ss {
			if want := i%plan.Requests + 1; s.pos != want {
				problems = append(problems, fmt.Sprintf("sample %d: thread %q's request %d is sampler #%d, the sequence's #%d", s.row, name, i+1, s.pos, want))
				break
			}
			// one request at a time: JMeter's milliseconds are truncated, so
			// a start may read up to 1 ms before the last one's end
			if i > 0 && s.start < ss[i-1].end()-1 {
				problems = append(problems, fmt.Sprintf("sample %d: thread %q's request starts at %d, before its previous one ended (%d)", s.row, name, s.start, ss[i-1].end()))
				break
			}
		}
	}
	want := plan.Threads * perUser
	if len(samples) < want && last-first < plan.Bound.Milliseconds()-jmeterBoundSlack {
		problems = append(problems, fmt.Sprintf("%d of the plan's %d requests (%d threads × %d loops × %d) were recorded, though the run ended after %.1f s, before its %.0f s bound",
			len(samples), want, plan.Threads, plan.Loops, plan.Requests, float64(last-first)/1000, plan.Bound.Seconds()))
	}
	return problems
}

// threadNumber is a JMeter thread's number in its group: threadName is
// "<group name> <group number>-<thread number>".
func threadNumber(name string) (int, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(name[i+1:])
	return n, err == nil && n >= 1
}
