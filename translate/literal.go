package translate

import (
	"math/big"
	"strings"

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
	// A string is parsed by the receiving type's fromString for the types
	// that are not native, collections or user types: a tuple, as
	// '0:1', fields split on ':' (Cassandra's TupleType.fromString).
	ok := lit.Kind == LitString && t.Kind == pgschema.Tuple
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

// parseConstant turns a constant's text into the serialization of t as
// Cassandra's Constants.Literal.parsedValue does: the receiving type's
// fromString, except that a HEX constant is read as a blob without its 0x
// and a counter as a bigint. Its errors carry Cassandra's MarshalException
// texts.
func parseConstant(lit *Literal, t *pgschema.Type) ([]byte, error) {
	s := lit.Text
	switch t.Kind {
	case pgschema.Blob:
		return pgschema.FromString(t, strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"))
	case pgschema.Counter:
		return pgschema.FromString(pgschema.Scalar(pgschema.Bigint), s)
	case pgschema.Float, pgschema.Double:
		// The grammar's NaN and Infinity keywords, in any case.
		switch strings.ToLower(s) {
		case "nan", "-nan":
			s = "NaN"
		case "infinity":
			s = "Infinity"
		case "-infinity":
			s = "-Infinity"
		}
	case pgschema.Timestamp, pgschema.Date, pgschema.Time, pgschema.Duration:
		return temporalConstant(s, t)
	}
	return pgschema.FromString(t, s)
}

// varintBytes returns n in CQL's varint serialization.
func varintBytes(n *big.Int) []byte { return pgschema.VarintBytes(n) }
