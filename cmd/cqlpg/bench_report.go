package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// compareReport is what bench compare prints and writes as JSON.
type compareReport struct {
	Config     compareConfig      `json:"config"`
	Throughput []throughputResult `json:"throughput"`
	Ratios     []ratioResult      `json:"ratios"`
	Latency    []latencyResult    `json:"latency"`
	AddedP99   []addedP99         `json:"p99_added_by_gateway"`
}

// throughputResult is one arm's closed-loop figures on one workload,
// medians over the repetitions. CPU is per operation: ProcessCPU is the
// benchmark process's (load generator, drivers and, for G and N, the
// gateway unless it runs as a process of its own), GatewayCPU that
// process's when it does, PostgresCPU that of the shards' server
// processes.
type throughputResult struct {
	Workload    string    `json:"workload"`
	Arm         string    `json:"arm"`
	OpsSec      float64   `json:"ops_per_sec"`
	Micros      float64   `json:"us_per_op"`
	ProcessCPU  float64   `json:"process_cpu_us_per_op"`
	GatewayCPU  float64   `json:"gateway_cpu_us_per_op,omitempty"`
	PostgresCPU float64   `json:"postgres_cpu_us_per_op"`
	Reps        []float64 `json:"ops_per_sec_reps"`
}

// ratioResult compares the gateway with the direct arms on one workload.
type ratioResult struct {
	Workload string  `json:"workload"`
	GOverD1  float64 `json:"g_over_d1"`
	GOverD2  float64 `json:"g_over_d2"`
}

// latencyResult is one arm's fixed-rate latency, Load being the fraction
// of D1's peak throughput asked for.
type latencyResult struct {
	Workload     string  `json:"workload"`
	Arm          string  `json:"arm"`
	Load         float64 `json:"load"`
	TargetRate   float64 `json:"target_ops_per_sec"`
	AchievedRate float64 `json:"achieved_ops_per_sec"`
	P50Micros    float64 `json:"p50_us"`
	P99Micros    float64 `json:"p99_us"`
	P999Micros   float64 `json:"p999_us"`
}

// addedP99 is G's p99 less D1's at one load.
type addedP99 struct {
	Load   float64 `json:"load"`
	Micros float64 `json:"us"`
}

func summarize(wl, arm string, workers int, samples []throughputSample) throughputResult {
	ops, proc, gw, pg := make([]float64, len(samples)), make([]float64, len(samples)), make([]float64, len(samples)),
		make([]float64, len(samples))
	for i, s := range samples {
		ops[i] = s.opsSec
		n := float64(max(s.ops, 1))
		proc[i], gw[i], pg[i] = 1e6*s.procCPU/n, 1e6*s.gatewayCPU/n, 1e6*s.postgresCPU/n
	}
	m := median(ops)
	return throughputResult{Workload: wl, Arm: arm, OpsSec: m, Micros: 1e6 * float64(workers) / max(m, 1e-9),
		ProcessCPU: median(proc), GatewayCPU: median(gw), PostgresCPU: median(pg), Reps: ops}
}

func (rep *compareReport) find(wl, arm string) *throughputResult {
	for i := range rep.Throughput {
		if r := &rep.Throughput[i]; r.Workload == wl && r.Arm == arm {
			return r
		}
	}
	return nil
}

func (rep *compareReport) latency(arm string, load float64) *latencyResult {
	for i := range rep.Latency {
		if r := &rep.Latency[i]; r.Arm == arm && r.Load == load {
			return r
		}
	}
	return nil
}

func (rep *compareReport) ratios() {
	for _, wl := range rep.Config.Workloads {
		g, d1, d2 := rep.find(wl, "G"), rep.find(wl, "D1"), rep.find(wl, "D2")
		if g == nil || d1 == nil || d2 == nil {
			continue
		}
		rep.Ratios = append(rep.Ratios, ratioResult{Workload: wl, GOverD1: g.OpsSec / d1.OpsSec, GOverD2: g.OpsSec / d2.OpsSec})
	}
}

func (rep *compareReport) print(w io.Writer) {
	// The gateway's own column appears only when it ran apart; in process
	// its CPU is part of proc's.
	gwHead, gwCell := "", func(throughputResult) string { return "" }
	if rep.Config.GatewayProcess {
		gwHead = fmt.Sprintf(" %12s", "gw CPU µs")
		gwCell = func(r throughputResult) string {
			if r.Arm == "G" || r.Arm == "N" {
				return fmt.Sprintf(" %12.1f", r.GatewayCPU)
			}
			return fmt.Sprintf(" %12s", "-")
		}
	}
	fmt.Fprintf(w, "%-10s %-3s %10s %9s %12s%s %12s\n", "workload", "arm", "ops/s", "µs/op", "proc CPU µs", gwHead, "pg CPU µs")
	for _, r := range rep.Throughput {
		fmt.Fprintf(w, "%-10s %-3s %10.0f %9.1f %12.1f%s %12.1f\n", r.Workload, r.Arm, r.OpsSec, r.Micros, r.ProcessCPU,
			gwCell(r), r.PostgresCPU)
	}
	if len(rep.Ratios) > 0 {
		fmt.Fprintf(w, "\n%-10s %6s %6s\n", "workload", "G/D1", "G/D2")
	}
	for _, r := range rep.Ratios {
		fmt.Fprintf(w, "%-10s %6.2f %6.2f\n", r.Workload, r.GOverD1, r.GOverD2)
	}
	if len(rep.Latency) > 0 {
		fmt.Fprintf(w, "\nfixed rate, %s (latency from intended send time)\n", rep.Config.RateWorkload)
		fmt.Fprintf(w, "%-5s %-3s %9s %9s %9s %9s %9s\n", "load", "arm", "target/s", "done/s", "p50 µs", "p99 µs", "p99.9 µs")
		for _, r := range rep.Latency {
			fmt.Fprintf(w, "%4.0f%% %-3s %9.0f %9.0f %9.0f %9.0f %9.0f\n", 100*r.Load, r.Arm, r.TargetRate, r.AchievedRate,
				r.P50Micros, r.P99Micros, r.P999Micros)
		}
		for _, a := range rep.AddedP99 {
			fmt.Fprintf(w, "p99 added by the gateway at %.0f%% of D1's peak: %.0f µs\n", 100*a.Load, a.Micros)
		}
	}
}

// procCPU returns a process's user and system CPU seconds so far, from
// /proc/<pid>/stat, or 0 when it has gone.
func procCPU(pid int) float64 {
	fields := procStat(pid)
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	// Linux reports these in USER_HZ ticks, 100 a second on every
	// architecture it runs on.
	return (utime + stime) / 100
}

func pidsCPU(pids []int) float64 {
	var sum float64
	for _, pid := range pids {
		sum += procCPU(pid)
	}
	return sum
}

// postgresPIDs returns a function listing the postmaster of the cluster
// in dir and its children, the backends among them. Backends that exit
// during a run take their CPU with them; the arms keep their connections
// open, so that loses nothing measured.
func postgresPIDs(dir string) func() []int {
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return func() []int { return nil }
	}
	pm, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		return func() []int { return nil }
	}
	return func() []int {
		pids := []int{pm}
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if fields := procStat(pid); len(fields) > 1 && fields[1] == strconv.Itoa(pm) {
				pids = append(pids, pid)
			}
		}
		return pids
	}
}

// procStat returns the fields of /proc/<pid>/stat after the command name,
// the process's state first, or nil when it has gone. The command name,
// field 2, may hold spaces: the fields are counted from its end.
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}
