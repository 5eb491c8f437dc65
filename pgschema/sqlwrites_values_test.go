package pgschema_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// The SQL functions of migration 0006 against their Go counterparts: the
// token, the CQL bytes of stored key values, and order keys.

func TestSQLTokenVectors(t *testing.T) {
	conn := connect(t)
	// Cassandra's token() of these keys (reference §2.3).
	vectors := []struct {
		sql  string
		want int64
	}{
		{`cqlpg.token('\x41d01b63244e435dbd6d5dc8a0addb8c')`, -2767158835560740559},
		{`cqlpg.token(uuid_send('41d01b63-244e-435d-bd6d-5dc8a0addb8c'))`, -2767158835560740559},
		{`cqlpg.token('\x0004000007d00000013100')`, -108427357362698080},
		{`cqlpg.token(cqlpg.partition_key(int4send(2000), convert_to('1', 'UTF8')))`, -108427357362698080},
		{`cqlpg.token(convert_to('best', 'UTF8'))`, 8664726657035972693},
		{`cqlpg.token(int4send(1))`, -4069959284402364209},
		{`cqlpg.token(cqlpg.partition_key(int4send(1)))`, -4069959284402364209},
		{`cqlpg.token('')`, -1 << 63},
	}
	for _, v := range vectors {
		var got int64
		if err := conn.QueryRow(context.Background(), "SELECT "+v.sql).Scan(&got); err != nil {
			t.Fatalf("%s: %v", v.sql, err)
		}
		if got != v.want {
			t.Errorf("%s = %d, want %d", v.sql, got, v.want)
		}
	}
}

// TestSQLTokenRandom compares cqlpg.token with sharding.TokenOf on random
// keys of every tail length, bytes biased to the sign-extended range, and
// composite keys built by cqlpg.partition_key with sharding.KeyToken.
func TestSQLTokenRandom(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 8))
	keys := make([][]byte, 3000)
	for i := range keys {
		keys[i] = randomBytes(r, i%80)
	}
	rows, err := conn.Query(ctx, `SELECT cqlpg.token(k) FROM unnest($1::bytea[]) WITH ORDINALITY AS u (k, n) ORDER BY n`, keys)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for rows.Next() {
		var got int64
		if err := rows.Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := sharding.TokenOf(keys[i]); sharding.Token(got) != want {
			t.Fatalf("token(%x) = %d, Go says %d", keys[i], got, want)
		}
		i++
	}
	if rows.Err() != nil || i != len(keys) {
		t.Fatalf("%d tokens: %v", i, rows.Err())
	}

	for range 300 {
		parts := make([][]byte, 1+r.IntN(4))
		for j := range parts {
			parts[j] = randomBytes(r, r.IntN(30))
		}
		var got int64
		if err := conn.QueryRow(ctx, `SELECT cqlpg.token(cqlpg.partition_key(VARIADIC $1::bytea[]))`, parts).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := sharding.KeyToken(parts); sharding.Token(got) != want {
			t.Fatalf("token of key %x = %d, Go says %d", parts, got, want)
		}
	}
	var n int
	err = conn.QueryRow(ctx, `SELECT length(cqlpg.partition_key(int4send(1), convert_to(repeat('x', 65536), 'UTF8')))`).Scan(&n)
	if err == nil {
		t.Errorf("a key component of 65536 bytes was accepted")
	}
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
		if r.IntN(3) == 0 {
			b[i] |= 0x80
		}
	}
	return b
}

// randomValues returns serialized CQL values of a scalar type, in the form
// Postgres keeps exactly (minimal varints, decimals with a scale of 0 or
// more, timestamps and dates Postgres can hold).
func randomValues(r *rand.Rand, k pgschema.Kind, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		var v []byte
		switch k {
		case pgschema.Int, pgschema.Float:
			v = randomBytes(r, 4)
		case pgschema.Bigint, pgschema.Double:
			v = randomBytes(r, 8)
		case pgschema.Smallint:
			v = randomBytes(r, 2)
		case pgschema.Tinyint:
			v = randomBytes(r, 1)
		case pgschema.Boolean:
			v = []byte{byte(i % 2)}
		case pgschema.Blob:
			v = randomBytes(r, r.IntN(20))
		case pgschema.UUID:
			v = randomBytes(r, 16)
		case pgschema.Timeuuid:
			v = randomBytes(r, 16)
			v[6] = v[6]&0x0f | 0x10
		case pgschema.Text:
			runes := []rune{'a', 'é', '€', '𝄞', 'z', ' ', 0x7f}
			s := ""
			for range r.IntN(10) {
				s += string(runes[r.IntN(len(runes))])
			}
			v = []byte(s)
		case pgschema.Ascii:
			v = make([]byte, r.IntN(10))
			for j := range v {
				v[j] = byte(1 + r.IntN(127))
			}
		case pgschema.Timestamp:
			// Postgres holds 4714-11-24 BC to 294276-12-31.
			v = binary.BigEndian.AppendUint64(nil, uint64(-210866803200000+r.Int64N(9224318016000000+210866803200000)))
		case pgschema.Date:
			v = binary.BigEndian.AppendUint32(nil, uint32(1<<31-2440588+r.Int64N(2145042905+2440588)))
		case pgschema.Time:
			v = binary.BigEndian.AppendUint64(nil, uint64(r.Int64N(86400000000000)))
		case pgschema.Varint:
			v = pgschema.VarintBytes(randomBig(r))
		case pgschema.Decimal:
			v = pgschema.DecimalBytes(randomBig(r), int32(r.IntN(30)))
		case pgschema.Inet:
			v = randomBytes(r, []int{4, 16}[r.IntN(2)])
		}
		out[i] = v
	}
	return out
}

func randomBig(r *rand.Rand) *big.Int {
	n := new(big.Int).SetBytes(randomBytes(r, r.IntN(20)))
	if r.IntN(2) == 0 {
		n.Neg(n)
	}
	return n
}

// storedArray converts values to their Postgres form and builds the binary
// array parameter of them.
func storedArray(t *testing.T, typ *pgschema.Type, values [][]byte) ([]byte, uint32) {
	t.Helper()
	st, err := pgschema.StorageOf(typ)
	if err != nil {
		t.Fatal(err)
	}
	elems := make([][]byte, len(values))
	for i, v := range values {
		elems[i] = v
		if st.ToPG != nil {
			if elems[i], err = st.ToPG(nil, v); err != nil {
				t.Fatalf("%s %x: %v", typ, v, err)
			}
		}
	}
	return pgArray(st.OID, elems), st.ArrayOID
}

// TestSQLKeyBytes checks that KeyBytesSQL gives back the CQL bytes of
// stored values of every type a key column can have in SQL.
func TestSQLKeyBytes(t *testing.T) {
	connect(t) // applies the migrations
	pg := pgConnect(t)
	r := rand.New(rand.NewPCG(3, 4))
	kinds := []pgschema.Kind{pgschema.Ascii, pgschema.Text, pgschema.Bigint, pgschema.Int, pgschema.Smallint,
		pgschema.Tinyint, pgschema.Boolean, pgschema.Float, pgschema.Double, pgschema.Blob, pgschema.UUID,
		pgschema.Timeuuid, pgschema.Timestamp, pgschema.Date, pgschema.Time, pgschema.Decimal, pgschema.Varint,
		pgschema.Inet}
	for _, k := range kinds {
		typ := pgschema.Scalar(k)
		values := randomValues(r, k, 400)
		switch k { // edges
		case pgschema.Varint:
			values = append(values, pgschema.VarintBytes(big.NewInt(0)), pgschema.VarintBytes(big.NewInt(-1)),
				pgschema.VarintBytes(big.NewInt(127)), pgschema.VarintBytes(big.NewInt(128)),
				pgschema.VarintBytes(big.NewInt(-128)), pgschema.VarintBytes(big.NewInt(-129)),
				pgschema.VarintBytes(big.NewInt(-256)), pgschema.VarintBytes(big.NewInt(255)))
		case pgschema.Decimal:
			values = append(values, pgschema.DecimalBytes(big.NewInt(150), 2), pgschema.DecimalBytes(big.NewInt(0), 5),
				pgschema.DecimalBytes(big.NewInt(-1), 0))
		case pgschema.Timestamp:
			values = append(values, make([]byte, 8), binary.BigEndian.AppendUint64(nil, ^uint64(0)))
		}
		arr, oid := storedArray(t, typ, values)
		expr, ok := pgschema.KeyBytesSQL(typ, "u.v")
		if !ok {
			t.Fatalf("%s: no key bytes", typ)
		}
		rows := pgExec(t, pg, fmt.Sprintf("SELECT %s FROM unnest($1) WITH ORDINALITY AS u (v, n) ORDER BY u.n", expr),
			[][]byte{arr}, []uint32{oid})
		if len(rows) != len(values) {
			t.Fatalf("%s: %d rows for %d values", typ, len(rows), len(values))
		}
		for i, row := range rows {
			if !bytes.Equal(row[0], values[i]) {
				t.Errorf("%s: stored %x gives %x", typ, values[i], row[0])
			}
		}
	}
	for _, typ := range []string{"list<int>", "frozen<set<text>>", "tuple<int, int>", "duration", "map<int, int>"} {
		if _, ok := pgschema.KeyBytesSQL(testType(t, typ), "v"); ok {
			t.Errorf("%s has key bytes in SQL", typ)
		}
	}
}

// TestSQLOrderKeys checks that OrderKeySQL gives pgschema.OrderKey for the
// clustering column types whose order key SQL can compute.
func TestSQLOrderKeys(t *testing.T) {
	connect(t)
	pg := pgConnect(t)
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range []pgschema.Kind{pgschema.UUID, pgschema.Timeuuid, pgschema.Inet, pgschema.Float, pgschema.Double} {
		typ := pgschema.Scalar(k)
		values := randomValues(r, k, 1000)
		switch k {
		case pgschema.Float:
			values = append(values, unhexT(t, "80000000"), unhexT(t, "00000000"), unhexT(t, "7fc00000"),
				unhexT(t, "ffc00001"), unhexT(t, "7f800000"), unhexT(t, "ff800000"))
		case pgschema.Double:
			values = append(values, unhexT(t, "8000000000000000"), unhexT(t, "0000000000000000"),
				unhexT(t, "7ff8000000000000"), unhexT(t, "fff0000000000000"))
		case pgschema.Inet:
			values = append(values, unhexT(t, "00000000"), unhexT(t, "0a000001"), unhexT(t, "10010000"),
				unhexT(t, "00000000000000000000ffff0a000001"))
		}
		arr, oid := storedArray(t, typ, values)
		expr, ok := pgschema.OrderKeySQL(typ, "u.v")
		if !ok {
			t.Fatalf("%s: no order key in SQL", typ)
		}
		rows := pgExec(t, pg, fmt.Sprintf("SELECT %s FROM unnest($1) WITH ORDINALITY AS u (v, n) ORDER BY u.n", expr),
			[][]byte{arr}, []uint32{oid})
		for i, row := range rows {
			want, err := pgschema.OrderKey(typ, values[i])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(row[0], want) {
				t.Errorf("%s %x: SQL order key %x, Go %x", typ, values[i], row[0], want)
			}
		}
	}
	for _, typ := range []string{"int", "text", "frozen<list<int>>", "tuple<int, int>"} {
		if _, ok := pgschema.OrderKeySQL(testType(t, typ), "v"); ok {
			t.Errorf("%s has an order key in SQL", typ)
		}
	}
}

func unhexT(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
