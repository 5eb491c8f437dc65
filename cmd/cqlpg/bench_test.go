package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestBenchStorage runs a short storage benchmark end to end and checks
// that both arms report figures.
func TestBenchStorage(t *testing.T) {
	var results []struct {
		Arm         string  `json:"arm"`
		WriteOpsSec float64 `json:"write_ops_per_sec"`
		ReadOpsSec  float64 `json:"read_ops_per_sec"`
		BytesPerRow float64 `json:"bytes_per_row"`
		ShardWrite  float64 `json:"shard_cpu_us_per_write"`
		ShardRead   float64 `json:"shard_cpu_us_per_read"`
	}
	runBench(t, &results, "storage", "--duration", "300ms", "--reps", "1", "--rows", "200", "--workers", "2")
	if len(results) != 2 || results[0].Arm != "cqlpg" || results[1].Arm != "plain" {
		t.Fatalf("results: %+v", results)
	}
	for _, r := range results {
		if r.WriteOpsSec <= 0 || r.ReadOpsSec <= 0 || r.BytesPerRow <= 0 || r.ShardWrite <= 0 || r.ShardRead <= 0 {
			t.Errorf("%s: %+v", r.Arm, r)
		}
	}
}

// TestBenchCompare runs a short compare benchmark end to end and checks
// that the JSON holds figures for every arm on every workload, and the
// fixed-rate latencies.
func TestBenchCompare(t *testing.T) {
	chart := filepath.Join(t.TempDir(), "compare.svg")
	var report struct {
		Throughput []struct {
			Workload string  `json:"workload"`
			Arm      string  `json:"arm"`
			OpsSec   float64 `json:"ops_per_sec"`
		} `json:"throughput"`
		Ratios []struct {
			Workload string  `json:"workload"`
			GOverD1  float64 `json:"g_over_d1"`
		} `json:"ratios"`
		Latency []struct {
			Arm    string  `json:"arm"`
			P99    float64 `json:"p99_us"`
			Target float64 `json:"target_ops_per_sec"`
		} `json:"latency"`
	}
	runBench(t, &report, "compare", "--duration", "150ms", "--reps", "1", "--partitions", "30", "--workers", "2",
		"--svg", chart)
	workloads := []string{"insert", "select", "slice", "in8", "batch10", "mix"}
	arms := []string{"G", "D1", "D2", "N"}
	seen := map[string]float64{}
	for _, r := range report.Throughput {
		seen[r.Workload+"/"+r.Arm] = r.OpsSec
	}
	for _, wl := range workloads {
		for _, arm := range arms {
			if ops, ok := seen[wl+"/"+arm]; !ok || ops <= 0 {
				t.Errorf("%s %s: ops/s %v (reported: %v)", wl, arm, ops, ok)
			}
		}
	}
	if len(report.Ratios) != len(workloads) {
		t.Errorf("ratios: %+v", report.Ratios)
	}
	if len(report.Latency) != 12 {
		t.Errorf("latency: %+v", report.Latency)
	}
	for _, l := range report.Latency {
		if l.P99 <= 0 || l.Target <= 0 {
			t.Errorf("latency: %+v", l)
		}
	}
	if svg, err := os.ReadFile(chart); err != nil || !bytes.HasPrefix(svg, []byte("<svg")) {
		t.Errorf("chart: %v, %.40q", err, svg)
	}
}

// TestBenchCompareArms runs chosen arms alone, with the fixed-rate runs at
// rates given rather than measured.
func TestBenchCompareArms(t *testing.T) {
	var report struct {
		Throughput []struct {
			Arm string `json:"arm"`
		} `json:"throughput"`
		Ratios  []struct{} `json:"ratios"`
		Latency []struct {
			Arm    string  `json:"arm"`
			Target float64 `json:"target_ops_per_sec"`
		} `json:"latency"`
	}
	runBench(t, &report, "compare", "--duration", "100ms", "--reps", "1", "--partitions", "30", "--workers", "2",
		"--arms", "G,D1", "--workloads", "select", "--rate-peak", "400")
	if len(report.Throughput) != 2 || report.Throughput[0].Arm != "G" || report.Throughput[1].Arm != "D1" {
		t.Errorf("throughput of arms G and D1 alone: %+v", report.Throughput)
	}
	if len(report.Ratios) != 0 {
		t.Errorf("ratios without D2: %+v", report.Ratios)
	}
	var targets []float64
	for _, l := range report.Latency {
		if l.Arm == "G" {
			targets = append(targets, l.Target)
		}
	}
	if !slices.Equal(targets, []float64{100, 200, 300}) || len(report.Latency) != 6 {
		t.Errorf("fixed-rate runs at 25/50/75%% of 400 ops/s, G and D1: %+v", report.Latency)
	}
}

// TestBenchCompareGatewayProcess runs the gateways as child processes and
// the replicated QUORUM insert on shards of its own, and checks that the
// gateway arms report their gateway's CPU apart and the direct arms none.
func TestBenchCompareGatewayProcess(t *testing.T) {
	var report struct {
		Throughput []struct {
			Workload   string  `json:"workload"`
			Arm        string  `json:"arm"`
			OpsSec     float64 `json:"ops_per_sec"`
			GatewayCPU float64 `json:"gateway_cpu_us_per_op"`
		} `json:"throughput"`
		Ratios []struct {
			Workload string `json:"workload"`
		} `json:"ratios"`
	}
	runBench(t, &report, "compare", "--gateway-process", "--duration", "150ms", "--reps", "1", "--partitions", "30",
		"--workers", "2", "--workloads", "select,insert-rf3", "--rate-workload", "")
	if len(report.Throughput) != 8 || len(report.Ratios) != 2 || report.Ratios[1].Workload != "insert-rf3" {
		t.Fatalf("report: %+v", report)
	}
	// CPU time comes in 10 ms ticks, which one short run of one arm may
	// not reach: the gateway arms' sum must, the direct arms have none.
	var gatewayCPU float64
	for _, r := range report.Throughput {
		if r.OpsSec <= 0 {
			t.Errorf("%s %s: %+v", r.Workload, r.Arm, r)
		}
		switch r.Arm {
		case "G", "N":
			gatewayCPU += r.GatewayCPU
		default:
			if r.GatewayCPU != 0 {
				t.Errorf("%s %s: gateway CPU of a direct arm: %+v", r.Workload, r.Arm, r)
			}
		}
	}
	if gatewayCPU <= 0 {
		t.Errorf("no gateway CPU reported: %+v", report.Throughput)
	}
}

// TestBenchPaging loads a few thousand rows, pages through the table and
// its large partition in pages smaller than either, and checks that every
// row came back exactly once and the gateway's memory was sampled.
func TestBenchPaging(t *testing.T) {
	var report struct {
		Reads []struct {
			Read       string  `json:"read"`
			Rows       int64   `json:"rows_read"`
			Distinct   int64   `json:"distinct_rows"`
			Duplicates int64   `json:"duplicate_rows"`
			Expected   int64   `json:"expected_rows"`
			Pages      int64   `json:"pages"`
			Seconds    float64 `json:"elapsed_s"`
			RowsSec    float64 `json:"rows_per_sec"`
			RSSStart   float64 `json:"rss_start_mb"`
			RSSMax     float64 `json:"rss_max_mb"`
			RSSEnd     float64 `json:"rss_end_mb"`
		} `json:"reads"`
	}
	runBench(t, &report, "paging", "--rows", "3000", "--partition-rows", "100", "--large-partition", "1200",
		"--page-size", "250")
	want := map[string]int64{"scan": 3000, "partition": 1200}
	if len(report.Reads) != len(want) {
		t.Fatalf("reads: %+v", report.Reads)
	}
	for _, r := range report.Reads {
		n := want[r.Read]
		if r.Rows != n || r.Distinct != n || r.Duplicates != 0 || r.Expected != n {
			t.Errorf("%s: not every row read exactly once: %+v", r.Read, r)
		}
		// Pages of 250 rows: at least n/250, and one more when the
		// last full page cannot tell that nothing follows it.
		if r.Pages < n/250 || r.Pages > n/250+1 {
			t.Errorf("%s: %d pages of 250 for %d rows", r.Read, r.Pages, n)
		}
		if r.Seconds <= 0 || r.RowsSec <= 0 || r.RSSStart <= 0 || r.RSSMax < r.RSSStart || r.RSSMax < r.RSSEnd ||
			r.RSSEnd <= 0 {
			t.Errorf("%s: %+v", r.Read, r)
		}
	}
}

// runBench runs cqlpg bench with args and the results written as JSON to
// a file of its own, and decodes that file into report.
func runBench(t *testing.T, report any, args ...string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bench.json")
	cmd := exec.Command(buildCqlpg(t), slices.Concat([]string{"bench"}, args, []string{"--json", out})...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cqlpg bench %s: %v\n%s", args[0], err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, report); err != nil {
		t.Fatal(err)
	}
}
