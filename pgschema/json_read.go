package pgschema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// fromJSONNode converts a decoded JSON value to the serialization of t,
// following each Cassandra type's fromJSONObject. A JSON null gives nil.
// lossless is set for the values cqlpg stored itself (jsonb columns).
func fromJSONNode(t *Type, n *jsonNode, lossless bool) ([]byte, error) {
	if n.kind == jsonNull {
		return nil, nil
	}
	switch t.Kind {
	case Ascii, Text:
		if n.kind != jsonString {
			return nil, n.expected(map[Kind]string{Ascii: "an ascii string", Text: "a UTF-8 string"}[t.Kind])
		}
		if lossless {
			// Stored text is escaped as in text columns (escapeText).
			// Unescaping never lengthens it, so it is done in place, in
			// the copy of the string.
			b := []byte(n.s)
			return unescapeText(b[:0], b)
		}
		if t.Kind == Ascii {
			return FromString(t, n.s)
		}
		return []byte(n.s), nil
	case Blob:
		var err error
		if n.kind != jsonString {
			err = fmt.Errorf("class %[1]s cannot be cast to class java.lang.String (%[1]s and java.lang.String are in module java.base of loader 'bootstrap')",
				n.javaClassName())
		} else if !strings.HasPrefix(n.s, "0x") {
			err = fmt.Errorf("String representation of blob is missing 0x prefix: %s", n.s)
		} else if b, ok := parseHexBytes(n.s[2:]); !ok {
			err = fmt.Errorf("cannot parse '%s' as hex bytes", n.s[2:])
		} else {
			return b, nil
		}
		return nil, fmt.Errorf("Value '%s' is not a valid blob representation: %v", n.javaString(), err)
	case Boolean:
		switch n.kind {
		case jsonString:
			return FromString(t, n.s)
		case jsonBool:
			if n.b {
				return []byte{1}, nil
			}
			return []byte{0}, nil
		}
		return nil, n.expected("a boolean value")
	case Int, Bigint, Counter:
		if n.kind == jsonString {
			return FromString(t, n.s)
		}
		class := n.javaClass()
		if t.Kind == Int {
			if n.kind != jsonNumber || class != "Integer" {
				return nil, n.expected("an int value")
			}
		} else if n.kind != jsonNumber || (class != "Integer" && class != "Long") {
			return nil, n.expected("a bigint value")
		}
		return FromString(t, n.s)
	case Smallint, Tinyint:
		if n.kind != jsonString && n.kind != jsonNumber {
			return nil, n.expected(map[Kind]string{Smallint: "a short value", Tinyint: "a byte value"}[t.Kind])
		}
		// String.valueOf(parsed): 1.0 is "1.0" and no short.
		return FromString(t, n.javaString())
	case Varint:
		s := n.javaString()
		if lossless && n.kind == jsonNumber && !n.float {
			s = n.s
		}
		v, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("Value '%s' is not a valid representation of a varint value", n.javaString())
		}
		return VarintBytes(v), nil
	case Decimal:
		s := n.javaString()
		if lossless && n.kind == jsonNumber {
			s = n.s // exact, not through a double
		}
		b, err := FromString(t, s)
		if err != nil && lossless {
			if v, scale, ok := parseDecimalExp(s, 64); ok {
				b, err = DecimalBytes(v, scale), nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("Value '%s' is not a valid representation of a decimal value", n.javaString())
		}
		return b, nil
	case Float, Double:
		bits, what := 64, "a double value"
		if t.Kind == Float {
			bits, what = 32, "a float value"
		}
		switch n.kind {
		case jsonString:
			return FromString(t, n.s)
		case jsonNumber:
			var f float64
			if bits == 32 && n.float && !lossless {
				// Jackson reads a Double, then floatValue() rounds it.
				d, _ := strconv.ParseFloat(n.s, 64)
				f = float64(float32(d))
			} else {
				f, _ = strconv.ParseFloat(n.s, bits)
			}
			return floatBytes(f, bits), nil
		}
		return nil, n.expected(what)
	case UUID, Timeuuid, Date, Inet, Duration:
		if t.Kind == Duration && lossless && n.kind == jsonArray {
			return durationFromJSONArray(n)
		}
		if n.kind != jsonString {
			return nil, n.expected(map[Kind]string{UUID: "a string representation of a uuid",
				Timeuuid: "a string representation of a timeuuid", Date: "a string representation of a date value",
				Inet:     "a string representation of an inet value",
				Duration: "a string representation of a duration"}[t.Kind])
		}
		if t.Kind == Inet && lossless {
			if n.s == "" {
				return []byte{}, nil
			}
			if b, ok := parseInetString(n.s, true); ok {
				return b, nil
			}
		}
		return FromString(t, n.s)
	case Time:
		if lossless && n.kind == jsonNumber && !n.float {
			if v, err := strconv.ParseInt(n.s, 10, 64); err == nil {
				return binary.BigEndian.AppendUint64(nil, uint64(v)), nil
			}
		}
		if n.kind != jsonString {
			return nil, n.expected("a string representation of a time value")
		}
		return FromString(t, n.s)
	case Timestamp:
		if n.kind == jsonNumber && (n.javaClass() == "Long" || (lossless && !n.float)) {
			return FromString(t, n.s)
		}
		if n.kind != jsonString {
			return nil, n.expected("a long or a datestring representation of a timestamp value")
		}
		return FromString(t, n.s)
	}
	// Collections, tuples, user types and vectors also accept a string
	// holding their JSON.
	if n.kind == jsonString {
		inner, err := parseJSON([]byte(n.s))
		if err != nil {
			return nil, errJSONDecode(err)
		}
		if inner.kind == jsonNull {
			return nil, errors.New("Error decoding JSON string: null")
		}
		n = inner
	}
	switch t.Kind {
	case List, Set, Vector:
		what, null := "a list", "Invalid null element in list"
		if t.Kind == Set {
			what, null = "a list (representing a set)", "Invalid null element in set"
		}
		if n.kind != jsonArray {
			return nil, n.expected(what)
		}
		if t.Kind == Vector && len(n.elems) != t.Dim {
			return nil, fmt.Errorf("List had incorrect size: expected %d but given %d; %s", t.Dim, len(n.elems),
				n.javaString())
		}
		elems := make([][]byte, len(n.elems))
		for i, e := range n.elems {
			if e.kind == jsonNull {
				return nil, errors.New(null)
			}
			v, err := fromJSONNode(t.Elem[0], e, lossless)
			if err != nil {
				return nil, err
			}
			elems[i] = v
		}
		switch t.Kind {
		case Set:
			return SerializeCollection(sortUnique(t.Elem[0], elems)), nil
		case Vector:
			return SerializeVector(t.Elem[0], elems), nil
		}
		return SerializeCollection(elems), nil
	case Map:
		if n.kind != jsonObject {
			return nil, n.expected("a map")
		}
		keys := make([][]byte, len(n.keys))
		values := make([][]byte, len(n.keys))
		for i, k := range n.keys {
			if n.vals[i].kind == jsonNull {
				return nil, errors.New("Invalid null value in map")
			}
			kv, err := fromJSONNode(t.Elem[0], &jsonNode{kind: jsonString, s: k}, lossless)
			if err != nil {
				return nil, err
			}
			vv, err := fromJSONNode(t.Elem[1], n.vals[i], lossless)
			if err != nil {
				return nil, err
			}
			keys[i], values[i] = kv, vv
		}
		keys, values = sortMap(t.Elem[0], keys, values)
		return SerializeMap(keys, values), nil
	case Tuple:
		if n.kind != jsonArray {
			return nil, n.expected("a list representation of a tuple")
		}
		if len(n.elems) > len(t.Elem) {
			return nil, fmt.Errorf("Tuple contains extra items (expected %d): %s", len(t.Elem), n.javaString())
		}
		if len(n.elems) < len(t.Elem) {
			return nil, fmt.Errorf("Tuple is missing items (expected %d): %s", len(t.Elem), n.javaString())
		}
		elems := make([][]byte, len(n.elems))
		for i, e := range n.elems {
			v, err := fromJSONNode(t.Elem[i], e, lossless)
			if err != nil {
				return nil, err
			}
			elems[i] = v
		}
		return SerializeTuple(elems), nil
	case UDT:
		if n.kind != jsonObject {
			return nil, n.expected("a map")
		}
		// Json.handleCaseSensitivity: a quoted key keeps its case, others
		// are lower-cased.
		fields := map[string]*jsonNode{}
		var order []string
		for i, k := range n.keys {
			name := k
			if len(k) >= 2 && strings.HasPrefix(k, `"`) && strings.HasSuffix(k, `"`) {
				name = k[1 : len(k)-1]
			} else {
				name = strings.ToLower(k)
			}
			if _, ok := fields[name]; !ok {
				order = append(order, name)
			}
			fields[name] = n.vals[i]
		}
		elems := make([][]byte, len(t.Elem))
		found := 0
		for i, name := range t.Fields {
			f, ok := fields[name]
			if !ok || f.kind == jsonNull {
				continue
			}
			v, err := fromJSONNode(t.Elem[i], f, lossless)
			if err != nil {
				return nil, err
			}
			elems[i] = v
			found++
		}
		// A stored value may hold a field its type no longer has: written
		// by a request planned before an ALTER TYPE renamed it, or read by
		// one planned before an ALTER TYPE added it. Like a cell of a
		// dropped column, it is not part of the value.
		if found != len(fields) && !lossless {
			known := map[string]bool{}
			for _, name := range t.Fields {
				known[name] = true
			}
			for _, name := range order {
				if !known[name] {
					return nil, fmt.Errorf("Unknown field '%s' in value of user defined type %s", name, t.Name)
				}
			}
		}
		return SerializeTuple(elems), nil
	}
	return nil, fmt.Errorf("type %s has no JSON form", t)
}

// durationFromJSONArray reads the [months, days, nanoseconds] form jsonb
// gives a duration that has no text form.
func durationFromJSONArray(n *jsonNode) ([]byte, error) {
	if len(n.elems) != 3 {
		return nil, errors.New("a duration array holds months, days and nanoseconds")
	}
	var parts [3]int64
	for i, e := range n.elems {
		v, err := strconv.ParseInt(e.s, 10, 64)
		if e.kind != jsonNumber || e.float || err != nil {
			return nil, fmt.Errorf("invalid duration part %s", e.javaString())
		}
		parts[i] = v
	}
	d := DurationValue{parts[0], parts[1], parts[2]}
	b := d.Append(nil)
	if err := validateDuration(b); err != nil {
		return nil, err
	}
	return b, nil
}
