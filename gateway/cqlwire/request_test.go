package cqlwire

import (
	"bytes"
	"testing"
)

// TestWithTimestamp gives QUERY, EXECUTE and BATCH bodies of v4 and v5 a
// default timestamp and reads them back: the timestamp is there, and
// everything else, values, paging, serial consistency and v5's keyspace,
// is as it was. A body with a timestamp already is left alone.
func TestWithTimestamp(t *testing.T) {
	const ts = 1_700_000_000_123_456
	for _, v := range []byte{4, 5} {
		flags := func(f uint32) []byte {
			if v >= 5 {
				return AppendInt(nil, int32(f))
			}
			return []byte{byte(f)}
		}
		tail := func(f uint32) []byte { // values, page size, serial consistency, keyspace
			b := AppendShort(nil, 6) // consistency LOCAL_QUORUM
			b = append(b, flags(f)...)
			b = AppendBytes(AppendShort(b, 2), []byte("ab"))
			b = AppendInt(b, -1)
			b = AppendInt(b, 100)
			b = AppendShort(b, 9)
			if v >= 5 {
				b = AppendString(b, "ks")
			}
			return b
		}
		f := uint32(QfValues | QfPageSize | qfSerialConsistency)
		if v >= 5 {
			f |= qfKeyspace
		}
		query := append(append(AppendInt(nil, 5), "hello"...), tail(f)...)
		id := AppendShortBytes(nil, []byte{1, 2, 3})
		if v >= 5 {
			id = AppendShortBytes(id, []byte{4, 5})
		}
		execute := append(id, tail(f)...)
		for _, c := range []struct {
			op   byte
			body []byte
		}{{OpQuery, query}, {OpExecute, execute}} {
			got, ok := WithTimestamp(c.op, v, c.body, ts)
			if !ok {
				t.Fatalf("v%d %s: not given a timestamp", v, OpNames[c.op])
			}
			d := Decoder{B: got}
			if c.op == OpQuery {
				d.LongString()
			} else {
				d.ShortBytes()
				if v >= 5 {
					d.ShortBytes()
				}
			}
			var q QueryParams
			d.QueryParams(&q, v)
			if d.Err != nil || len(d.B) != 0 || !q.HasTimestamp || q.Timestamp != ts || q.Consistency != 6 ||
				len(q.Values) != 2 || string(q.Values[0]) != "ab" || q.Values[1] != nil || q.PageSize != 100 ||
				q.SerialConsistency != 9 || (v >= 5) != (string(q.Keyspace) == "ks") {
				t.Errorf("v%d %s: read back %+v, %v, %d bytes left", v, OpNames[c.op], q, d.Err, len(d.B))
			}
			if again, ok := WithTimestamp(c.op, v, got, ts+1); ok || !bytes.Equal(again, got) {
				t.Errorf("v%d %s: a body with a timestamp was given another", v, OpNames[c.op])
			}
		}

		batch := []byte{0}
		batch = AppendShort(batch, 2)
		batch = AppendShort(append(append(append(batch, 0), AppendInt(nil, 3)...), "q;1"...), 0)
		batch = AppendBytes(AppendShort(AppendShortBytes(append(batch, 1), []byte{7, 7}), 1), []byte("x"))
		batch = AppendShort(batch, 1)
		batch = append(batch, flags(qfSerialConsistency)...)
		batch = AppendShort(batch, 8)
		got, ok := WithTimestamp(OpBatch, v, batch, ts)
		var b BatchParams
		d := Decoder{B: got}
		d.Batch(&b, v)
		if !ok || d.Err != nil || len(d.B) != 0 || len(b.Items) != 2 || string(b.Items[0].Query) != "q;1" ||
			string(b.Items[1].Values[0]) != "x" || !b.HasTimestamp || b.Timestamp != ts || b.SerialConsistency != 8 {
			t.Errorf("v%d BATCH: read back %+v, %v", v, b, d.Err)
		}
	}
	if got, ok := WithTimestamp(OpQuery, 4, []byte{0, 0, 0, 9, 'x'}, ts); ok || len(got) != 5 {
		t.Errorf("a truncated QUERY was given a timestamp")
	}
}
