package translate

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cqlpg/cqlpg/pgschema"
)

// assignable lists the CQL types each literal kind may be assigned to
// (Cassandra's Constants.Literal.testAssignment).
var assignable = map[LiteralKind][]pgschema.Kind{
	LitString: {pgschema.Ascii, pgschema.Text, pgschema.Inet, pgschema.Date, pgschema.Time,
		pgschema.Timestamp},
	LitInteger: {pgschema.Bigint, pgschema.Counter, pgschema.Date, pgschema.Decimal, pgschema.Double,
		pgschema.Duration, pgschema.Float, pgschema.Int, pgschema.Smallint, pgschema.Time,
		pgschema.Timestamp, pgschema.Tinyint, pgschema.Varint},
	LitFloat:    {pgschema.Decimal, pgschema.Double, pgschema.Float},
	LitBoolean:  {pgschema.Boolean},
	LitUUID:     {pgschema.UUID, pgschema.Timeuuid},
	LitHex:      {pgschema.Blob},
	LitDuration: {pgschema.Duration},
}

// literalValue serializes a constant for a receiver of type t named name,
// with Cassandra's errors for a literal of the wrong kind or a value that
// does not parse. A null literal serializes to nil.
func literalValue(lit *Literal, t *pgschema.Type, name string) ([]byte, error) {
	if lit.Kind == LitNull {
		return nil, nil
	}
	ok := false
	for _, k := range assignable[lit.Kind] {
		if t.Kind == k {
			ok = true
		}
	}
	if !ok {
		return nil, invalidf("Invalid %s constant (%s) for \"%s\" of type %s", lit.Kind, lit.Text, name, t)
	}
	b, err := parseConstant(lit, t)
	if err != nil {
		return nil, &InvalidError{Msg: err.Error()}
	}
	return b, nil
}

// parseConstant turns a constant's text into the CQL serialization of t. Its
// errors carry Cassandra's MarshalException texts.
func parseConstant(lit *Literal, t *pgschema.Type) ([]byte, error) {
	s := lit.Text
	switch t.Kind {
	case pgschema.Ascii:
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return nil, fmt.Errorf("Invalid ASCII character in string literal")
			}
		}
		return []byte(s), nil
	case pgschema.Text:
		if !utf8.ValidString(s) {
			return nil, fmt.Errorf("String didn't validate.")
		}
		return []byte(s), nil
	case pgschema.Int, pgschema.Smallint, pgschema.Tinyint, pgschema.Bigint, pgschema.Counter:
		return parseInteger(s, t)
	case pgschema.Varint:
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("Unable to make varint from '%s'", s)
		}
		return varintBytes(n), nil
	case pgschema.Float, pgschema.Double:
		return parseFloat(s, t)
	case pgschema.Boolean:
		switch strings.ToLower(s) {
		case "true":
			return []byte{1}, nil
		case "false":
			return []byte{0}, nil
		}
		return nil, fmt.Errorf("Unable to make boolean from '%s'", s)
	case pgschema.UUID, pgschema.Timeuuid:
		u, err := parseUUID(s)
		if err != nil {
			return nil, fmt.Errorf("Unable to make UUID from '%s'", s)
		}
		if t.Kind == pgschema.Timeuuid && u[6]>>4 != 1 {
			return nil, fmt.Errorf("TimeUUID supports only version 1 UUIDs")
		}
		return u[:], nil
	case pgschema.Blob:
		b, err := hex.DecodeString(s[2:])
		if err != nil {
			return nil, fmt.Errorf("cannot parse '%s' as hex bytes", s[2:])
		}
		return b, nil
	case pgschema.Timestamp:
		if lit.Kind == LitInteger {
			return parseInteger(s, pgschema.Scalar(pgschema.Bigint))
		}
		ms, err := parseTimestamp(s)
		if err != nil {
			return nil, err
		}
		return binary.BigEndian.AppendUint64(nil, uint64(ms)), nil
	case pgschema.Date:
		return parseDate(s, lit.Kind == LitInteger)
	}
	return nil, fmt.Errorf("type %s is not supported yet", t)
}

func parseInteger(s string, t *pgschema.Type) ([]byte, error) {
	bits := map[pgschema.Kind]int{pgschema.Int: 32, pgschema.Smallint: 16, pgschema.Tinyint: 8,
		pgschema.Bigint: 64, pgschema.Counter: 64}[t.Kind]
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		name := map[int]string{32: "int", 16: "short", 8: "byte", 64: "long"}[bits]
		return nil, fmt.Errorf("Unable to make %s from '%s'", name, s)
	}
	out := make([]byte, bits/8)
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = byte(n)
		n >>= 8
	}
	return out, nil
}

// javaNaN is Java's Double.NaN, the NaN Cassandra serializes; Go's
// math.NaN() has other bits.
var javaNaN = math.Float64frombits(0x7ff8000000000000)

func parseFloat(s string, t *pgschema.Type) ([]byte, error) {
	bits := 64
	if t.Kind == pgschema.Float {
		bits = 32
	}
	var f float64
	switch strings.ToLower(s) {
	case "nan", "-nan":
		f = javaNaN
	case "infinity":
		f = math.Inf(1)
	case "-infinity":
		f = math.Inf(-1)
	default:
		// Java parses a number too large for the type as an infinity.
		var err error
		if f, err = strconv.ParseFloat(s, bits); err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("Unable to make %s from '%s'", map[int]string{32: "float", 64: "double"}[bits], s)
		}
	}
	if bits == 32 {
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(f))), nil
	}
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)), nil
}

// varintBytes returns n in two's complement, big-endian, in as few bytes as
// hold it: the varint serialization.
func varintBytes(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n - 1 has the complement bits of n.
	m := new(big.Int).Not(n)
	b := m.Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xff}, b...)
	}
	return b
}

func parseUUID(s string) ([16]byte, error) {
	var u [16]byte
	h := strings.ReplaceAll(s, "-", "")
	if len(h) != 32 || len(s) != 36 {
		return u, fmt.Errorf("bad uuid")
	}
	_, err := hex.Decode(u[:], []byte(h))
	return u, err
}
