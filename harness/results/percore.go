package results

import "fmt"

// MinRatioCores is the least CPU a figure per core may divide by. Below it
// the cgroup counters measure little but noise, and a ratio reads as a
// throughput of thousands of requests per core (the social network's front
// end printed "2069 rps per core used (0.00 cores)").
const MinRatioCores = 0.01

// PerCore is rps per core of cores, and false when cores is under
// MinRatioCores, so nothing is recorded or printed.
func PerCore(rps, cores float64) (float64, bool) {
	if cores < MinRatioCores {
		return 0, false
	}
	return rps / cores, true
}

// AppCPU sums the CPU of every task of the application's deployment (the
// load generator is not one), and of its datastores apart.
func AppCPU(tasks []TaskCPU) (all, datastores float64) {
	for _, t := range tasks {
		all += t.Cores
		if t.Datastore {
			datastores += t.Cores
		}
	}
	return all, datastores
}

// AppCPUOf is the step's application CPU: as recorded, or for an archive
// from before it was, summed from the per-task figures (in which no task
// is known to be a datastore).
func AppCPUOf(r StepResult) (all, datastores float64) {
	if r.AppCores > 0 {
		return r.AppCores, r.DatastoreCores
	}
	return AppCPU(TaskCPUOf(r))
}

// noRatio is what a table shows for a ratio whose cores are too few.
var noRatio = fmt.Sprintf("n/a (<%g cores)", MinRatioCores)

// ServicePerCoreText is the level's rps per core the measured service's
// instances used, "n/a (<0.01 cores)" when they used less than MinRatioCores,
// "-" when unknown.
func (l LevelStats) ServicePerCoreText() string {
	return perCoreText(l.QPSPerCore, l.ServiceCores, Estimate{})
}

// AppPerCoreText is the level's rps per core the application's tasks used,
// with the cores and the datastores' share: "812.0 [..] 96.9 % (2.46 cores,
// 0.61 in datastores)".
func (l LevelStats) AppPerCoreText() string {
	return perCoreText(l.QPSPerAppCore, l.AppCores, l.DatastoreCores)
}

func perCoreText(ratio, cores, datastores Estimate) string {
	switch {
	case cores.N == 0:
		return "-"
	case cores.Median < MinRatioCores || ratio.N == 0:
		return fmt.Sprintf("%s (%.3f cores)", noRatio, cores.Median)
	}
	text := fmt.Sprintf("%s (%.2f cores", ratio, cores.Median)
	if datastores.N > 0 && datastores.Median > 0 {
		text += fmt.Sprintf(", %.2f in datastores", datastores.Median)
	}
	return text + ")"
}

// perCoreFigures gathers a level's CPU and per-core figures over its
// measured repetitions; only ratios over MinRatioCores enter.
type perCoreFigures struct {
	serviceCores, serviceRatio       []float64
	appCores, datastores, appPerCore []float64
}

func (p *perCoreFigures) add(r StepResult) {
	if r.ServiceCores > 0 {
		p.serviceCores = append(p.serviceCores, r.ServiceCores)
		if q, ok := PerCore(r.AchievedRPS, r.ServiceCores); ok {
			p.serviceRatio = append(p.serviceRatio, q)
		}
	}
	if all, ds := AppCPUOf(r); all > 0 {
		p.appCores = append(p.appCores, all)
		p.datastores = append(p.datastores, ds)
		if q, ok := PerCore(r.AchievedRPS, all); ok {
			p.appPerCore = append(p.appPerCore, q)
		}
	}
}

func (p perCoreFigures) fill(l *LevelStats) {
	l.ServiceCores, l.QPSPerCore = MedianCI(p.serviceCores), MedianCI(p.serviceRatio)
	l.AppCores, l.DatastoreCores, l.QPSPerAppCore = MedianCI(p.appCores), MedianCI(p.datastores), MedianCI(p.appPerCore)
}
