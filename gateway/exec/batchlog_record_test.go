package exec

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

func sampleRecord() *batchRecord {
	ins := sharding.NewStatement("INSERT INTO t VALUES ($1, $2)", []uint32{pgschema.OIDInt8, pgschema.OIDBytea})
	del := sharding.NewStatement("DELETE FROM t WHERE k = $1", []uint32{pgschema.OIDInt8})
	now := sharding.NewStatement("SELECT 1", nil)
	return &batchRecord{parts: []batchPart{
		{shard: [16]byte{1, 2, 3}, steps: []sharding.Step{
			{Stmt: ins, Args: [][]byte{{0, 0, 0, 0, 0, 0, 0, 7}, nil}, Formats: []int16{1}},
			{Stmt: del, Args: [][]byte{{0, 0, 0, 0, 0, 0, 0, 7}}, Formats: []int16{1}},
			{Stmt: ins, Args: [][]byte{make([]byte, 300), {}}, Formats: nil},
		}},
		{shard: [16]byte{15: 9}, steps: []sharding.Step{{Stmt: now}}},
	}}
}

// TestBatchRecordRoundTrip encodes a record and decodes it back: the same
// statements (each written once), arguments with NULL told from empty,
// and formats.
func TestBatchRecordRoundTrip(t *testing.T) {
	rec := sampleRecord()
	b := appendBatchRecord(nil, rec)
	if n := bytes.Count(b, []byte("INSERT INTO t")); n != 1 {
		t.Fatalf("statement written %d times, want once", n)
	}
	got, err := decodeBatchRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.parts) != len(rec.parts) {
		t.Fatalf("parts: %d, want %d", len(got.parts), len(rec.parts))
	}
	for i, p := range rec.parts {
		g := got.parts[i]
		if g.shard != p.shard || len(g.steps) != len(p.steps) {
			t.Fatalf("part %d: %x with %d steps, want %x with %d", i, g.shard, len(g.steps), p.shard, len(p.steps))
		}
		for j, s := range p.steps {
			gs := g.steps[j]
			if gs.Stmt.Name != s.Stmt.Name || gs.Stmt.SQL != s.Stmt.SQL || !slices.Equal(gs.Stmt.ParamOIDs, s.Stmt.ParamOIDs) {
				t.Errorf("part %d step %d: statement %+v, want %+v", i, j, gs.Stmt, s.Stmt)
			}
			if len(gs.Args) != len(s.Args) {
				t.Fatalf("part %d step %d: %d args, want %d", i, j, len(gs.Args), len(s.Args))
			}
			for k, a := range s.Args {
				if (a == nil) != (gs.Args[k] == nil) || !bytes.Equal(a, gs.Args[k]) {
					t.Errorf("part %d step %d arg %d: %v, want %v", i, j, k, gs.Args[k], a)
				}
			}
			if !slices.Equal(gs.Formats, s.Formats) {
				t.Errorf("part %d step %d: formats %v, want %v", i, j, gs.Formats, s.Formats)
			}
		}
	}
}

// TestBatchRecordMalformed checks that every truncation of a record, an
// unknown version and trailing bytes are refused.
func TestBatchRecordMalformed(t *testing.T) {
	b := appendBatchRecord(nil, sampleRecord())
	for n := range len(b) {
		if _, err := decodeBatchRecord(b[:n]); !errors.Is(err, errBatchRecord) {
			t.Fatalf("record cut to %d of %d bytes: %v, want malformed", n, len(b), err)
		}
	}
	bad := append([]byte{batchRecordVersion + 1}, b[1:]...)
	if _, err := decodeBatchRecord(bad); !errors.Is(err, errBatchRecord) {
		t.Fatalf("unknown version: %v", err)
	}
	if _, err := decodeBatchRecord(append(b, 0)); !errors.Is(err, errBatchRecord) {
		t.Fatalf("trailing byte: %v", err)
	}
}

// FuzzBatchRecord checks that decoding never panics, and that what
// decodes encodes back to the same bytes.
func FuzzBatchRecord(f *testing.F) {
	f.Add(appendBatchRecord(nil, sampleRecord()))
	f.Add(appendBatchRecord(nil, &batchRecord{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := decodeBatchRecord(b)
		if err != nil {
			return
		}
		// A statement decoded twice is encoded once, so compare the
		// decodings rather than the bytes.
		again, err := decodeBatchRecord(appendBatchRecord(nil, rec))
		if err != nil {
			t.Fatalf("re-encoded record: %v", err)
		}
		if len(again.parts) != len(rec.parts) {
			t.Fatalf("parts: %d, want %d", len(again.parts), len(rec.parts))
		}
		for i := range rec.parts {
			for j, s := range rec.parts[i].steps {
				a := again.parts[i].steps[j]
				if a.Stmt.SQL != s.Stmt.SQL || !reflect.DeepEqual(a.Args, s.Args) {
					t.Fatalf("part %d step %d differs", i, j)
				}
			}
		}
	})
}
