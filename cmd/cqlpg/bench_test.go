package main_test

import (
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
