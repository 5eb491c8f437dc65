package gateway

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/translate"
)

// TestMetricsKinds checks the kind each statement is timed under.
func TestMetricsKinds(t *testing.T) {
	h := newHotServer(t)
	for _, tc := range []struct {
		query string
		want  stmtKind
	}{
		{"SELECT v FROM rf1.t WHERE k = ?", kindSelect},
		{"INSERT INTO rf1.t (k, v) VALUES (?, ?)", kindInsert},
		{"UPDATE rf1.t SET v = ? WHERE k = ?", kindUpdate},
		{"DELETE FROM rf1.t WHERE k = ?", kindDelete},
		{"DELETE v FROM rf1.t WHERE k = ?", kindDelete},
		{"INSERT INTO rf1.t (k, v) VALUES (?, ?) IF NOT EXISTS", kindLWT},
		{"UPDATE rf1.t SET v = ? WHERE k = ? IF v = 'a'", kindLWT},
		{"BEGIN BATCH INSERT INTO rf1.t (k, v) VALUES (1, 'a'); DELETE FROM rf1.t WHERE k = 2; APPLY BATCH", kindBatch},
		{"BEGIN BATCH INSERT INTO rf1.t (k, v) VALUES (1, 'a') IF NOT EXISTS; APPLY BATCH", kindLWT},
		{"USE rf1", kindUse},
		{"CREATE TABLE rf1.u (k int PRIMARY KEY)", kindDDL},
		{"TRUNCATE rf1.t", kindDDL},
	} {
		if got := h.prepare(t, tc.query).kind; got != tc.want {
			t.Errorf("%s: kind %s, want %s", tc.query, got, tc.want)
		}
	}
	if got := batchKind(translate.CounterBatch, false); got != kindCounter {
		t.Errorf("counter batch: kind %s, want counter", got)
	}
	for k := range numKinds {
		if kindNames[k] == "" {
			t.Errorf("kind %d has no name", k)
		}
	}
}

// TestMetricsAsync checks what the requests answered from the pools'
// goroutines count: their latency by kind, and their errors by code.
func TestMetricsAsync(t *testing.T) {
	h := newHotServer(t)
	sel := h.prepare(t, "SELECT v FROM rf1.t WHERE k = ?")
	h.shards.rows = [][][]byte{cannedRow(sel.plan.(*translate.Select))}
	ins := h.prepare(t, "INSERT INTO rf1.t (k, v) VALUES (?, ?)")
	count := func(k stmtKind) uint64 {
		s := h.s.metrics.latency[k].Snapshot()
		return s.Count()
	}
	readTimeouts := func() int { return counterValue(h.s.metrics.errors.WithLabelValues("0x1200")) }
	sels, inss, errs := count(kindSelect), count(kindInsert), readTimeouts()
	cqlwire.PutBuffer(h.roundTrip(executeFrame(sel.id, one)))
	cqlwire.PutBuffer(h.roundTrip(executeFrame(ins.id, one, value)))
	if n := count(kindSelect) - sels; n != 1 {
		t.Errorf("SELECT timed %d times, want 1", n)
	}
	if n := count(kindInsert) - inss; n != 1 {
		t.Errorf("INSERT timed %d times, want 1", n)
	}

	// Every replica fails: the read is answered with a read timeout from
	// the pool's goroutine.
	h.shards.failing = map[int]bool{0: true, 1: true, 2: true}
	resp := h.roundTrip(executeFrame(sel.id, one))
	if (*resp)[4] != cqlwire.OpError {
		t.Fatalf("read on failing shards: opcode %#x, want ERROR", (*resp)[4])
	}
	cqlwire.PutBuffer(resp)
	if n := readTimeouts() - errs; n != 1 {
		t.Errorf("read timeout answered asynchronously counted %d times, want 1", n)
	}
	if n := count(kindSelect) - sels; n != 2 {
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
	cqlwire.PutBuffer(h.roundTrip(executeFrame(ins.id, one, secret)))
	if out.Len() != 0 {
		t.Fatalf("logged with the slow-request log off:\n%s", &out)
	}
	h.s.metrics.slow = 1
	cqlwire.PutBuffer(h.roundTrip(executeFrame(ins.id, one, secret)))
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
	ch := make(chan prometheus.Metric, 2*int(numKinds))
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
