package pgschema

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	valid := []struct {
		typ string
		v   []byte
	}{
		{"int", i32(1)},
		{"bigint", i64(1)},
		{"smallint", i16(1)},
		{"tinyint", i8(1)},
		{"boolean", []byte{2}},
		{"float", f32(1)},
		{"double", f64(1)},
		{"uuid", uuidv("00000000-0000-4000-8000-000000000000")},
		{"timeuuid", uuidv("6bddc89a-5644-11e4-97fc-56847afe9799")},
		{"timestamp", i64(-1)},
		{"date", cqlDate(0)},
		{"time", i64(-1)}, // Cassandra only checks the size
		{"decimal", dec("1", -3)},
		{"varint", unhex(t, "0000")},
		{"inet", unhex(t, "7f000001")},
		{"duration", dur(1, 2, 3)},
		{"duration", dur(-1, 0, -3)},
		{"text", str("")},
		{"text", str("héllo")},
		{"ascii", str("")},
		{"blob", str("")},
		{"list<int>", list()},
		{"list<int>", list(i32(1), str(""))}, // an empty int is valid inside a list
		{"set<frozen<list<text>>>", list(list(str("a")))},
		{"map<int, text>", mapv(i32(1), str("a"))},
		{"frozen<tuple<int, text>>", tuple(i32(1))}, // components may be missing
		{"frozen<tuple<int, text>>", tuple(nil, nil)},
		{"frozen<address>", tuple(str("x"), nil, list())},
		{"vector<float, 2>", append(f32(1), f32(2)...)},
		{"vector<text, 2>", []byte{1, 'a', 0}},
	}
	for _, tt := range valid {
		if err := Validate(mustType(t, tt.typ), tt.v); err != nil {
			t.Errorf("Validate(%s, %x): %v", tt.typ, tt.v, err)
		}
	}

	invalid := []struct {
		typ  string
		v    []byte
		want string
	}{
		// Cassandra's serializer texts.
		{"int", i16(1), "Expected 4 or 0 byte int (2)"},
		{"bigint", i32(1), "Expected 8 or 0 byte long (4)"},
		{"counter", i32(1), "Expected 8 or 0 byte long (4)"},
		{"smallint", i32(1), "Expected 2 bytes for a smallint (4)"},
		{"smallint", str(""), "Expected 2 bytes for a smallint (0)"},
		{"tinyint", i16(1), "Expected 1 byte for a tinyint (2)"},
		{"boolean", i16(1), "Expected 1 or 0 byte value for a boolean (2)"},
		{"float", f64(1), "Expected 4 or 0 byte value for a float (8)"},
		{"double", f32(1), "Expected 8 or 0 byte value for a double (4)"},
		{"uuid", i64(1), "UUID should be 16 or 0 bytes (8)"},
		{"timeuuid", uuidv("00000000-0000-4000-8000-000000000000"), "Invalid version for TimeUUID type: 0x0"},
		{"timeuuid", uuidv("c0000000-0000-0000-8000-000000000000"), "Invalid version for TimeUUID type: 0xc"},
		{"timestamp", i32(1), "Expected 8 or 0 byte long for date (4)"},
		{"date", i64(1), "Expected 4 byte long for date (8)"},
		{"date", str(""), "Expected 4 byte long for date (0)"},
		{"time", i32(1), "Expected 8 byte long for time (4)"},
		{"decimal", []byte{0, 0, 1}, "Expected 0 or at least 4 bytes (3)"},
		{"inet", unhex(t, "0102"), "Expected 4 or 16 byte inetaddress; got 0102"},
		{"duration", []byte{0, 0}, "Expected at least 3 bytes for a duration (2)"},
		{"duration", dur(1, -1, 0), "The duration months, days and nanoseconds must be all of the same sign (1, -1, 0)"},
		{"duration", dur(1<<31, 0, 0), "The duration months must be a 32 bits integer but was: 2147483648"},
		{"duration", dur(0, -1<<31-1, 0), "The duration days must be a 32 bits integer but was: -2147483649"},
		{"text", []byte{0xff}, "String didn't validate."},
		{"text", []byte{0xc1, 0xbf}, "String didn't validate."},       // overlong
		{"text", []byte{0xe0, 0x80, 0x80}, "String didn't validate."}, // overlong
		{"text", []byte{0xf0, 0x80, 0x80, 0x80}, "String didn't validate."},
		{"text", []byte{0xf8, 0x80, 0x80, 0x80}, "String didn't validate."},
		{"text", []byte{'a', 0xc3}, "String didn't validate."},
		{"text", []byte{0xc0, 0x81}, "String didn't validate."},
		{"ascii", []byte{'a', 0xc3, 0xa9}, "Invalid byte for ascii: -61"},
		{"list<int>", []byte{0, 0}, "Not enough bytes to read a list"},
		{"list<int>", append(list(i32(1)), 0), "Unexpected extraneous bytes after list value"},
		{"list<int>", unhex(t, "0000000200000004"), "Not enough bytes to read a list"},
		{"list<int>", unhex(t, "ffffffff"), "The data cannot be deserialized as a list"},
		{"list<int>", list(i16(1)), "Expected 4 or 0 byte int (2)"},
		{"list<int>", list(nil), "null is not supported inside collections"},
		{"set<text>", []byte{0, 0}, "Not enough bytes to read a set"},
		{"set<text>", append(list(), 1), "Unexpected extraneous bytes after set value"},
		{"map<int, text>", []byte{0, 0}, "Not enough bytes to read a map"},
		{"map<int, text>", mapv(i32(1), []byte{0xff}), "String didn't validate."},
		{"map<int, text>", mapv(i32(1), nil), "null is not supported inside collections"},
		{"map<int, text>", append(mapv(), 9), "Unexpected extraneous bytes after map value"},
		{"frozen<tuple<int, text>>", []byte{0, 0}, "Not enough bytes to read size of 0th component"},
		{"frozen<tuple<int, text>>", unhex(t, "0000000400"), "Not enough bytes to read 0th component"},
		{"frozen<tuple<int, text>>", append(tuple(i32(1), str("a")), 0, 0, 0, 0), "Invalid remaining data after end of tuple value"},
		{"frozen<tuple<int, text>>", tuple(i16(1)), "Expected 4 or 0 byte int (2)"},
		{"frozen<address>", append(tuple(str("x")), 0, 0), "Not enough bytes to read size of 1th field Zip"},
		{"frozen<address>", append(tuple(str("x")), 0, 0, 0, 9), "Not enough bytes to read 1th field Zip"},
		{"frozen<address>", append(tuple(str("x"), nil, list()), 1), "Invalid remaining data after end of UDT value"},
		{"vector<float, 2>", f32(1), "Not enough bytes to read a vector of 2 elements (4)"},
		{"vector<float, 2>", append(f64(1), 1), "Unexpected extraneous bytes after vector value"},
		// What Postgres cannot store.
		{"int", str(""), "Empty values of type int cannot be stored (PostgreSQL has no empty int)"},
		{"uuid", str(""), "Empty values of type uuid cannot be stored (PostgreSQL has no empty uuid)"},
		{"varint", str(""), "Empty values of type varint cannot be stored (PostgreSQL has no empty varint)"},
		{"map<int, int>", str(""), "Not enough bytes to read a map"},
		// Cassandra's validator takes these; they are not UTF-8.
		{"text", []byte{0xc0, 0x80}, "Text values that are not well-formed UTF-8 cannot be stored (PostgreSQL text holds only UTF-8)"},
		{"text", []byte{0xed, 0xa0, 0x80}, "Text values that are not well-formed UTF-8 cannot be stored (PostgreSQL text holds only UTF-8)"},
		{"text", []byte{0xf4, 0x90, 0x80, 0x80}, "Text values that are not well-formed UTF-8 cannot be stored (PostgreSQL text holds only UTF-8)"},
		{"text", []byte{0xe0, 0xc0, 0x80}, "Text values that are not well-formed UTF-8 cannot be stored (PostgreSQL text holds only UTF-8)"},
		{"list<text>", list([]byte{0xf7, 0xbf, 0xbf, 0xbf}), "Text values that are not well-formed UTF-8 cannot be stored (PostgreSQL text holds only UTF-8)"},
	}
	for _, tt := range invalid {
		err := Validate(mustType(t, tt.typ), tt.v)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Validate(%s, %x):\n got %v\nwant %s", tt.typ, tt.v, err, tt.want)
		}
	}
}

func TestStorageErrors(t *testing.T) {
	// Values Cassandra accepts that Postgres cannot hold fail with a
	// clear error when converted.
	tests := []struct {
		typ, want string
		v         []byte
	}{
		{"timestamp", "timestamp -4713-11-23T23:59:59.999Z is out of the range PostgreSQL can store", i64(-210866803200001)},
		{"timestamp", "is out of the range PostgreSQL can store (4714-11-24 00:00:00 BC to 294276-12-31 23:59:59.999 UTC)", i64(9224318016000000)},
		{"date", "date -4713-11-23 is out of the range PostgreSQL can store (-4713-11-24 to 5874897-12-31)", cqlDate(-2440589)},
		{"date", "date +5874898-01-01 is out of the range PostgreSQL can store", cqlDate(2145042906)},
		{"decimal", "decimal scale 16384 out of range", dec("1", 16384)},
		{"decimal", "PostgreSQL's numeric holds at most 131072 digits before the decimal point", dec("1", -131072)},
		{"list<int>", "Empty values of type int cannot be stored in a collection", list(str(""))},
		{"list<int>", "null is not supported inside collections", list(nil)},
		{"duration", "1 unexpected bytes after its three vints", append(dur(1, 1, 1), 0)},
	}
	for _, tt := range tests {
		st, err := StorageOf(mustType(t, tt.typ))
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.ToPG(nil, tt.v)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ToPG(%s, %x): %v, want %q", tt.typ, tt.v, err, tt.want)
		}
	}
	// Postgres values with no CQL equivalent.
	fromPG := []struct {
		typ string
		pg  []byte
	}{
		{"decimal", unhex(t, "000000000000c0000000")}, // NaN
		{"varint", unhex(t, "00000000d00000000000")},  // Infinity
		{"varint", unhex(t, "0002000000000001000113880000")},
		{"timestamp", i64(-1 << 63)},
		{"date", i32(1<<31 - 1)},
		{"tinyint", i16(128)},
		{"list<int>", unhex(t, "000000010000000100000017000000010000000100000004ffffffff")[:24]},
		{"duration", unhex(t, "000000010000000000000014000000020000000100000008000000000000000100000008000000000000000a")},
		{"inet", unhex(t, "02200004010203")},
		{"vector<float, 2>", unhex(t, "000000010000000000000700000000010000000100000004"+"3f800000")},
		{"map<int, int>", []byte{2, '{', '}'}},
		{"map<int, int>", []byte{1, '[', ']'}},
	}
	for _, tt := range fromPG {
		st, err := StorageOf(mustType(t, tt.typ))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := st.FromPG(nil, tt.pg); err == nil {
			t.Errorf("FromPG(%s, %x) = %x, want an error", tt.typ, tt.pg, got)
		}
	}
}
