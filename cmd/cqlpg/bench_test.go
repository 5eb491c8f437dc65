package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestBenchStorage runs a short storage benchmark end to end and checks
// that both arms report figures.
func TestBenchStorage(t *testing.T) {
	bin := buildCqlpg(t)
	out := filepath.Join(t.TempDir(), "storage.json")
	cmd := exec.Command(bin, "bench", "storage", "--duration", "300ms", "--reps", "1", "--rows", "200", "--workers", "2", "--json", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cqlpg bench storage: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var results []struct {
		Arm         string  `json:"arm"`
		WriteOpsSec float64 `json:"write_ops_per_sec"`
		ReadOpsSec  float64 `json:"read_ops_per_sec"`
		BytesPerRow float64 `json:"bytes_per_row"`
	}
	if err := json.Unmarshal(data, &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || results[0].Arm != "cqlpg" || results[1].Arm != "plain" {
		t.Fatalf("results: %+v", results)
	}
	for _, r := range results {
		if r.WriteOpsSec <= 0 || r.ReadOpsSec <= 0 || r.BytesPerRow <= 0 {
			t.Errorf("%s: %+v", r.Arm, r)
		}
	}
}

// TestBenchCompare runs a short compare benchmark end to end and checks
// that the JSON holds figures for every arm on every workload, and the
// fixed-rate latencies.
func TestBenchCompare(t *testing.T) {
	bin := buildCqlpg(t)
	dir := t.TempDir()
	out, chart := filepath.Join(dir, "compare.json"), filepath.Join(dir, "compare.svg")
	cmd := exec.Command(bin, "bench", "compare", "--duration", "150ms", "--reps", "1", "--partitions", "30",
		"--workers", "2", "--json", out, "--svg", chart)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cqlpg bench compare: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
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
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatal(err)
	}
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
	if len(report.Latency) != 9 {
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

// TestBenchCompareGatewayProcess runs the gateways as child processes and
// the replicated QUORUM insert on shards of its own, and checks that the
// gateway arms report their gateway's CPU apart and the direct arms none.
func TestBenchCompareGatewayProcess(t *testing.T) {
	bin := buildCqlpg(t)
	out := filepath.Join(t.TempDir(), "compare.json")
	cmd := exec.Command(bin, "bench", "compare", "--gateway-process", "--duration", "150ms", "--reps", "1",
		"--partitions", "30", "--workers", "2", "--workloads", "select,insert-rf3", "--rate-workload", "", "--json", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cqlpg bench compare: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
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
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatal(err)
	}
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
