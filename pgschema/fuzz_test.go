package pgschema_test

import (
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/pgschema/cqltext"
)

// The fuzz targets here feed the value codecs any bytes a client could
// bind, and any text a client could write as a literal or as JSON, for
// a type of every kind. The seed corpora, in testdata/fuzz, hold values of
// every type.

// fuzzTypes are the types the fuzz targets pick from by index: every
// scalar, and collections, tuples, user types and vectors nested a few
// levels deep.
var fuzzTypes = func() []*pgschema.Type {
	s := pgschema.Scalar
	var ts []*pgschema.Type
	for _, k := range []pgschema.Kind{pgschema.Ascii, pgschema.Bigint, pgschema.Blob, pgschema.Boolean, pgschema.Counter,
		pgschema.Decimal, pgschema.Double, pgschema.Float, pgschema.Int, pgschema.Timestamp, pgschema.UUID, pgschema.Text,
		pgschema.Varint, pgschema.Timeuuid, pgschema.Inet, pgschema.Date, pgschema.Time, pgschema.Smallint,
		pgschema.Tinyint, pgschema.Duration} {
		ts = append(ts, s(k))
	}
	addr := pgschema.NewUDT("ks", "addr", []string{"street", "Zip", "loc"},
		[]*pgschema.Type{s(pgschema.Text), s(pgschema.Int), pgschema.NewTuple(s(pgschema.Double), s(pgschema.Double))}, true)
	return append(ts,
		pgschema.NewList(s(pgschema.Int), false),
		pgschema.NewList(s(pgschema.Text), false),
		pgschema.NewList(s(pgschema.Duration), false),
		pgschema.NewSet(s(pgschema.Text), false),
		pgschema.NewSet(s(pgschema.Double), false),
		pgschema.NewSet(s(pgschema.Timeuuid), true),
		pgschema.NewMap(s(pgschema.Text), s(pgschema.Int), false),
		pgschema.NewMap(s(pgschema.Timestamp), s(pgschema.Blob), false),
		pgschema.NewMap(s(pgschema.Inet), s(pgschema.Decimal), true),
		pgschema.NewList(pgschema.NewSet(s(pgschema.Varint), true), true),
		pgschema.NewList(pgschema.NewMap(s(pgschema.Int), s(pgschema.Text), true), false),
		pgschema.NewMap(pgschema.NewTuple(s(pgschema.Int), s(pgschema.Int)), pgschema.NewSet(s(pgschema.Text), true), false),
		pgschema.NewTuple(s(pgschema.Int), s(pgschema.Text), s(pgschema.Boolean)),
		pgschema.NewTuple(s(pgschema.Timestamp), pgschema.NewList(s(pgschema.Varint), true), s(pgschema.Date)),
		addr,
		pgschema.NewUDT("ks", "addr", []string{"street", "Zip", "loc"}, addr.Elem, false),
		pgschema.NewList(addr, false),
		pgschema.NewVector(s(pgschema.Float), 3),
		pgschema.NewVector(s(pgschema.Text), 2),
		pgschema.NewVector(s(pgschema.Varint), 2),
		pgschema.NewMap(s(pgschema.UUID), pgschema.NewVector(s(pgschema.Double), 2), false),
	)
}()

// heapAllocated returns the bytes allocated on the heap so far. The
// runtime counts large allocations at once, small ones in batches: a
// decoder that allocates a length it was told rather than one it
// checked shows at once.
func heapAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// fuzzAllocLimit is more than decoding v can need: a generous multiple of
// its length, and room for the runtime's batches of small allocations.
func fuzzAllocLimit(v []byte) uint64 { return 1<<20 + 64*uint64(len(v)) }

func fuzzType(i uint8) *pgschema.Type { return fuzzTypes[int(i)%len(fuzzTypes)] }

// outOfPGRange reports an error of ToPG for a value Cassandra takes but
// Postgres cannot hold, which the gateway answers as an invalid request
// (TestStorageErrors lists them): timestamps and dates far from now,
// decimals of a scale numeric cannot keep (their texts name PostgreSQL),
// empty elements of a collection (of an array, or of jsonb, where they
// have no JSON form), and durations with bytes after their three vints,
// which Cassandra ignores.
func outOfPGRange(err error) bool {
	for _, s := range []string{"PostgreSQL", "cannot be stored", "has no JSON form", "unexpected bytes after its three vints"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// FuzzValue checks the codecs of a bound value of type typ: validation
// never panics, nor does reading the bytes as a value Postgres sent; a
// value that validates converts to its Postgres form and back to the same
// value, compares equal to itself, has an order key, a JSON form and a
// text form; comparing never panics, valid or not.
func FuzzValue(f *testing.F) {
	f.Add(uint8(8), []byte{0, 0, 0, 1})
	f.Add(uint8(20), []byte{0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 7})
	f.Fuzz(func(t *testing.T, typ uint8, v []byte) {
		ty := fuzzType(typ)
		// Malformed values are ordered by bytes, or as Cassandra orders
		// them: not always equal to themselves, but never a panic.
		pgschema.Compare(ty, v, v)
		pgschema.Compare(ty, v, v[:len(v)/2])
		st, err := pgschema.StorageOf(ty)
		if err != nil {
			t.Fatalf("%s: no storage: %v", ty, err)
		}
		if st.FromPG != nil {
			// As a shard could send it: read back or refused, never
			// taking memory for more elements than the bytes can hold.
			before := heapAllocated()
			st.FromPG(nil, v)
			if n := heapAllocated() - before; n > fuzzAllocLimit(v) {
				t.Fatalf("%s: reading %d bytes from Postgres allocated %d bytes", ty, len(v), n)
			}
		}
		before := heapAllocated()
		err = pgschema.Validate(ty, v)
		if n := heapAllocated() - before; n > fuzzAllocLimit(v) {
			t.Fatalf("%s: validating %d bytes allocated %d bytes", ty, len(v), n)
		}
		if err != nil {
			return
		}
		if c := pgschema.Compare(ty, v, v); c != 0 {
			t.Fatalf("%s: %x compares %d with itself", ty, v, c)
		}
		norm, err := pgschema.Normalize(ty, v)
		if err != nil {
			t.Fatalf("%s: %x validates but does not normalize: %v", ty, v, err)
		}
		pg := v
		if st.ToPG != nil {
			if pg, err = st.ToPG(nil, v); err != nil {
				if outOfPGRange(err) {
					return
				}
				t.Fatalf("%s: %x validates but does not convert: %v", ty, v, err)
			}
		}
		back := pg
		if st.FromPG != nil {
			if back, err = st.FromPG(nil, pg); err != nil {
				t.Fatalf("%s: %x converts to %x, which does not convert back: %v", ty, v, pg, err)
			}
		}
		if pgschema.Compare(ty, back, norm) != 0 && !sameJSON(ty, back, norm) {
			t.Fatalf("%s: %x (normalized %x) converts to %x and back to %x", ty, v, norm, pg, back)
		}
		if pgschema.NeedsOrderKey(ty) {
			if _, err := pgschema.OrderKey(ty, v); err != nil {
				t.Fatalf("%s: %x validates but has no order key: %v", ty, v, err)
			}
		}
		if _, err := pgschema.ToJSON(ty, v); err != nil {
			t.Fatalf("%s: %x validates but has no JSON form: %v", ty, v, err)
		}
		if _, err := pgschema.StorageJSON(ty, v); err != nil {
			t.Fatalf("%s: %x validates but has no stored JSON form: %v", ty, v, err)
		}
		if _, err := cqltext.Format(ty, v); err != nil {
			t.Fatalf("%s: %x validates but has no text form: %v", ty, v, err)
		}
	})
}

// sameJSON reports whether two values have the same JSON form: the same
// value in different bytes, as a duration whose vints were not written
// in their shortest form (Postgres keeps its numbers, not its bytes).
func sameJSON(t *pgschema.Type, a, b []byte) bool {
	ja, err1 := pgschema.ToJSON(t, a)
	jb, err2 := pgschema.ToJSON(t, b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// FuzzValueText checks the readers of values written as text: a CQL
// constant (FromString, scalar types) and JSON (FromJSON). They never
// panic, and what they return validates unless it is empty, which
// Postgres cannot store for most types.
func FuzzValueText(f *testing.F) {
	f.Add(uint8(9), "2024-01-02 03:04:05.678+0000")
	f.Add(uint8(26), `{"a": 1, "b": 2}`)
	f.Fuzz(func(t *testing.T, typ uint8, s string) {
		ty := fuzzType(typ)
		if ty.Kind < pgschema.List && ty.Kind != pgschema.Vector {
			if v, err := pgschema.FromString(ty, s); err == nil && len(v) > 0 {
				if err := pgschema.Validate(ty, v); err != nil && !strings.Contains(s, "\x00") {
					t.Fatalf("%s: %q reads as %x, which does not validate: %v", ty, s, v, err)
				}
			}
		}
		v, err := pgschema.FromJSON(ty, []byte(s))
		if err != nil || len(v) == 0 {
			return
		}
		if err := pgschema.Validate(ty, v); err != nil && !strings.Contains(s, `\u0000`) && !strings.Contains(s, "\x00") &&
			!strings.Contains(s, `""`) {
			t.Fatalf("%s: JSON %q reads as %x, which does not validate: %v", ty, s, v, err)
		}
	})
}
