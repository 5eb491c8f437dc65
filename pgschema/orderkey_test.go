package pgschema

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestOrderKey checks that order keys compare as Cassandra compares the
// values, over the ordered groups of TestCompareOrders.
func TestOrderKey(t *testing.T) {
	for _, tt := range orderCases(t) {
		typ := mustType(t, tt.typ)
		keys := make([][][]byte, len(tt.groups))
		for i, gi := range tt.groups {
			for _, v := range gi {
				k, err := OrderKey(typ, v)
				if err != nil {
					t.Fatalf("%s: OrderKey(%x): %v", tt.typ, v, err)
				}
				keys[i] = append(keys[i], k)
			}
		}
		for i, gi := range keys {
			for j, gj := range keys {
				for a, ka := range gi {
					for b, kb := range gj {
						if got := bytes.Compare(ka, kb); got != cmpInt(i, j) {
							t.Errorf("%s: keys of %x and %x compare %d, want %d", tt.typ,
								tt.groups[i][a], tt.groups[j][b], got, cmpInt(i, j))
						}
					}
				}
			}
		}
	}
}

// TestOrderKeyRandom compares random values both ways.
func TestOrderKeyRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gens := map[string]func() []byte{
		"uuid":     func() []byte { return randBytes(r, 16) },
		"timeuuid": func() []byte { b := randBytes(r, 16); b[6] = b[6]&0x0f | 0x10; return b },
		"double":   func() []byte { return randBytes(r, 8) },
		"float":    func() []byte { return randBytes(r, 4) },
		"inet":     func() []byte { return randBytes(r, []int{4, 16}[r.IntN(2)]) },
		"varint":   func() []byte { return randBytes(r, 1+r.IntN(20)) },
		"decimal":  func() []byte { return append(i32(int32(r.IntN(40)-20)), randBytes(r, 1+r.IntN(12))...) },
		"text":     func() []byte { return randBytes(r, r.IntN(4)) },
		"bigint":   func() []byte { return randBytes(r, 8) },
	}
	for name, gen := range gens {
		typ := mustType(t, name)
		list := mustType(t, "frozen<list<"+name+">>")
		for range 3000 {
			a, b := gen(), gen()
			checkKeyOrder(t, typ, a, b)
			checkKeyOrder(t, list, SerializeCollection([][]byte{a, b}), SerializeCollection([][]byte{b}))
		}
	}
}

func checkKeyOrder(t *testing.T, typ *Type, a, b []byte) {
	t.Helper()
	ka, err1 := OrderKey(typ, a)
	kb, err2 := OrderKey(typ, b)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: %v %v", typ, err1, err2)
	}
	if got, want := bytes.Compare(ka, kb), Compare(typ, a, b); got != want {
		t.Fatalf("%s: %x vs %x: keys compare %d, values %d", typ, a, b, got, want)
	}
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
		if r.IntN(4) == 0 {
			b[i] = []byte{0, 0xff, 0x80, 0x7f}[r.IntN(4)]
		}
	}
	return b
}

func TestNeedsOrderKey(t *testing.T) {
	for typ, want := range map[string]bool{
		"int": false, "text": false, "blob": false, "decimal": false, "timestamp": false,
		"uuid": true, "timeuuid": true, "inet": true, "double": true, "float": true,
		"frozen<list<int>>": true, "frozen<set<text>>": true, "frozen<list<uuid>>": true,
		"frozen<map<int, int>>": true, "frozen<tuple<int, int>>": true, "frozen<list<frozen<list<int>>>>": true,
	} {
		if got := NeedsOrderKey(mustType(t, typ)); got != want {
			t.Errorf("NeedsOrderKey(%s) = %v, want %v", typ, got, want)
		}
	}
}

func TestStorageSend(t *testing.T) {
	for typ, want := range map[string]string{
		"int": "int4send(c)", "bigint": "int8send(c)", "uuid": "uuid_send(c)", "timestamp": "timestamptz_send(c)",
		"decimal": "numeric_send(c)", "inet": "inet_send(c)", "boolean": "boolsend(c)", "double": "float8send(c)",
		"float": "float4send(c)", "frozen<list<int>>": "array_send(c)", "frozen<set<text>>": "array_send(c)",
		"map<int, int>": "jsonb_send(c)", "text": "textsend(c)", "blob": "byteasend(c)",
	} {
		st, err := StorageOf(mustType(t, typ))
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Send("c"); got != want {
			t.Errorf("%s: Send = %s, want %s", typ, got, want)
		}
	}
}

func TestOrderKeyNormalizes(t *testing.T) {
	// A set or map bound in another order, or with repeats, has the key of
	// its sorted form, at any depth.
	set := mustType(t, "frozen<set<int>>")
	nested := mustType(t, "frozen<tuple<int, frozen<map<int, text>>>>")
	for _, c := range []struct {
		typ        *Type
		sent, sort []byte
	}{
		{set, list(i32(3), i32(1), i32(3)), list(i32(1), i32(3))},
		{nested, tuple(i32(1), mapv(i32(2), str("b"), i32(1), str("a"))), tuple(i32(1), mapv(i32(1), str("a"), i32(2), str("b")))},
	} {
		a, err1 := OrderKey(c.typ, c.sent)
		b, err2 := OrderKey(c.typ, c.sort)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: key of %x is %x, of %x is %x (%v %v)", c.typ, c.sent, a, c.sort, b, err1, err2)
		}
	}
}
