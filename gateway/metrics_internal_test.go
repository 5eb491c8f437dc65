package gateway

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/translate"
)

// TestMetricsKinds checks the kind each statement is timed under.
func TestMetricsKinds(t *testing.T) {
	h := newHotServer(t)
	for _, tc := range []struct {
		query string
		want  exec.Kind
	}{
		{"SELECT v FROM rf1.t WHERE k = ?", exec.KindSelect},
		{"INSERT INTO rf1.t (k, v) VALUES (?, ?)", exec.KindInsert},
		{"UPDATE rf1.t SET v = ? WHERE k = ?", exec.KindUpdate},
		{"DELETE FROM rf1.t WHERE k = ?", exec.KindDelete},
		{"DELETE v FROM rf1.t WHERE k = ?", exec.KindDelete},
		{"INSERT INTO rf1.t (k, v) VALUES (?, ?) IF NOT EXISTS", exec.KindLWT},
		{"UPDATE rf1.t SET v = ? WHERE k = ? IF v = 'a'", exec.KindLWT},
		{"BEGIN BATCH INSERT INTO rf1.t (k, v) VALUES (1, 'a'); DELETE FROM rf1.t WHERE k = 2; APPLY BATCH", exec.KindBatch},
		{"BEGIN BATCH INSERT INTO rf1.t (k, v) VALUES (1, 'a') IF NOT EXISTS; APPLY BATCH", exec.KindLWT},
		{"USE rf1", exec.KindUse},
		{"CREATE TABLE rf1.u (k int PRIMARY KEY)", exec.KindDDL},
		{"TRUNCATE rf1.t", exec.KindDDL},
	} {
		if got := h.prepare(t, tc.query).Kind; got != tc.want {
			t.Errorf("%s: kind %s, want %s", tc.query, got, tc.want)
		}
	}
	if got := exec.BatchKind(translate.CounterBatch, false); got != exec.KindCounter {
		t.Errorf("counter batch: kind %s, want counter", got)
	}
	for k := range exec.NumKinds {
		if exec.KindNames[k] == "" {
			t.Errorf("kind %d has no name", k)
		}
	}
}

// TestMetricsAsync checks what the requests answered from the pools'
// goroutines count: their latency by kind, and their errors by code.
func TestMetricsAsync(t *testing.T) {
	h := newHotServer(t)
	sel := h.prepare(t, "SELECT v FROM rf1.t WHERE k = ?")
	h.shards.rows = [][][]byte{cannedRow(sel.Plan.(*translate.Select))}
	ins := h.prepare(t, "INSERT INTO rf1.t (k, v) VALUES (?, ?)")
	count := func(k exec.Kind) uint64 {
		s := h.s.metrics.latency[k].Snapshot()
		return s.Count()
	}
	readTimeouts := func() int { return counterValue(h.s.metrics.errors.WithLabelValues("0x1200")) }
	sels, inss, errs := count(exec.KindSelect), count(exec.KindInsert), readTimeouts()
	cqlwire.PutBuffer(h.roundTrip(executeFrame(sel.Id, one)))
	cqlwire.PutBuffer(h.roundTrip(executeFrame(ins.Id, one, value)))
	if n := count(exec.KindSelect) - sels; n != 1 {
		t.Errorf("SELECT timed %d times, want 1", n)
	}
	if n := count(exec.KindInsert) - inss; n != 1 {
		t.Errorf("INSERT timed %d times, want 1", n)
	}

	// Every replica fails: the read is answered with a read timeout from
	// the pool's goroutine.
	h.shards.failing = map[int]bool{0: true, 1: true, 2: true}
	resp := h.roundTrip(executeFrame(sel.Id, one))
	if (*resp)[4] != cqlwire.OpError {
		t.Fatalf("read on failing shards: opcode %#x, want ERROR", (*resp)[4])
	}
	cqlwire.PutBuffer(resp)
	if n := readTimeouts() - errs; n != 1 {
		t.Errorf("read timeout answered asynchronously counted %d times, want 1", n)
	}
	if n := count(exec.KindSelect) - sels; n != 2 {
		t.Errorf("SELECTs timed %d times, want 2", n)
	}
}

// TestSlowQueryAsync checks the slow-request log of requests answered
// from the pools' goroutines and of those the reader refuses.
func TestSlowQueryAsync(t *testing.T) {
	h := newHotServer(t)
	var out bytes.Buffer
	h.c.log = slog.New(slog.NewTextHandler(&out, nil))
	ins := h.prepare(t, "INSERT INTO rf3.t (k, v) VALUES (?, ?)")
	secret := []byte("never-in-the-log")
	cqlwire.PutBuffer(h.roundTrip(executeFrame(ins.Id, one, secret)))
	if out.Len() != 0 {
		t.Fatalf("logged with the slow-request log off:\n%s", &out)
	}
	h.s.metrics.slow = 1
	cqlwire.PutBuffer(h.roundTrip(executeFrame(ins.Id, one, secret)))
	want := `level=WARN msg="slow request" opcode=EXECUTE kind=insert keyspace=rf3 cql="INSERT INTO rf3.t (k, v) VALUES (?, ?)" duration=`
	if !strings.Contains(out.String(), want) {
		t.Errorf("slow-request log\n%s\nwant a line with\n%s", &out, want)
	}
	// An unknown id, refused by the reader: the log names the id.
	out.Reset()
	cqlwire.PutBuffer(h.roundTrip(executeFrame([16]byte{0xab}, one, secret)))
	if want := `opcode=EXECUTE kind=none keyspace="" cql="prepared statement ab000000000000000000000000000000"`; !strings.Contains(out.String(), want) {
		t.Errorf("slow-request log\n%s\nwant a line with\n%s", &out, want)
	}
	if strings.Contains(out.String(), string(secret)) {
		t.Errorf("the slow-request log shows a bound value:\n%s", &out)
	}
}

// TestMetricsHistogram checks the histogram built from the requests'
// latency counts.
func TestMetricsHistogram(t *testing.T) {
	h := newHotServer(t)
	cqlwire.PutBuffer(h.roundTrip(queryFrame("SELECT v FROM rf1.t WHERE k = 1")))
	ch := make(chan prometheus.Metric, 2*int(exec.NumKinds))
	requestCollector{h.s.metrics}.Collect(ch)
	close(ch)
	found := false
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		if hist := d.GetHistogram(); hist != nil && d.GetLabel()[0].GetValue() == "select" {
			found = true
			bs := hist.GetBucket()
			if hist.GetSampleCount() != 1 || len(bs) == 0 || bs[len(bs)-1].GetCumulativeCount() > 1 {
				t.Errorf("select histogram: %v", hist)
			}
		}
	}
	if !found {
		t.Error("no histogram of SELECTs")
	}
}
