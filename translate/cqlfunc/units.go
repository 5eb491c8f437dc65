package cqlfunc

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Cassandra 5.0's format_bytes and format_time: a count of bytes or
// milliseconds, or of the unit given second, as text in the unit given
// last, or in the largest unit it reaches.

// formatValue is the parameter both take first: an integer, or text
// holding one.
var formatValue = fixedParam(false, pgschema.Int, pgschema.Tinyint, pgschema.Smallint, pgschema.Bigint, pgschema.Varint,
	pgschema.Ascii, pgschema.Text)

// fixedParam is a parameter taking the types of kinds, printed as
// Cassandra prints a type list.
func fixedParam(optional bool, kinds ...pgschema.Kind) Param {
	p := Param{Optional: optional}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		p.Fixed = append(p.Fixed, scalar(k))
		names[i] = scalar(k).String()
	}
	p.Text = names[0]
	if len(names) > 1 {
		p.Text = "[" + strings.Join(names, "|") + "]"
	}
	p.wants = "an argument of type " + p.Text
	p.Accepts = func(t *pgschema.Type) bool {
		for _, f := range p.Fixed {
			if f.Kind == t.Kind {
				return true
			}
		}
		return false
	}
	return p
}

func formatFactories() []*Factory {
	unit := fixedParam(true, pgschema.Ascii)
	params := []Param{formatValue, unit, unit}
	return []*Factory{
		{Name: "format_bytes", Params: params, Build: func(args []*pgschema.Type) (*Function, error) {
			return formatFunction("format_bytes", args, formatBytes), nil
		}},
		{Name: "format_time", Params: params, Build: func(args []*pgschema.Type) (*Function, error) {
			return formatFunction("format_time", args, formatTime), nil
		}},
	}
}

// formatFunction declares a format function of the arguments' types:
// null for a null value; refused for a null unit, a negative value or
// text that is not a long.
func formatFunction(name string, args []*pgschema.Type, format func(v int64, units []string) ([]byte, error)) *Function {
	return pureFunction(name, scalar(pgschema.Text), args, func(a [][]byte) ([]byte, error) {
		if a[0] == nil {
			return nil, nil
		}
		units := make([]string, 0, 2)
		for _, u := range a[1:] {
			if u == nil {
				return nil, invalidf("none of the arguments may be null")
			}
			units = append(units, string(u))
		}
		v, err := formatArgument(args[0], a[0])
		if err != nil {
			return nil, err
		}
		if v < 0 {
			return nil, invalidf("value must be non-negative")
		}
		return format(v, units)
	})
}

// formatArgument reads the value as a long: text parsed as Java's
// Long.parseLong does, integers as Number.longValue (a varint's low 64
// bits).
func formatArgument(t *pgschema.Type, v []byte) (int64, error) {
	switch t.Kind {
	case pgschema.Ascii, pgschema.Text:
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0, invalidf("unable to convert string '%s' to a value of type long", v)
		}
		return n, nil
	case pgschema.Varint:
		return pgschema.LowInt64(pgschema.VarintValue(v)), nil
	}
	if len(v) == 0 {
		return 0, nil
	}
	return decodeInteger(v), nil
}

// byteUnits are DataStorageSpec's units, in its order.
var byteUnits = []struct {
	symbol string
	bytes  int64
}{{"B", 1}, {"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}}

func byteUnit(s string) (int, error) {
	for i, u := range byteUnits {
		if strings.EqualFold(u.symbol, s) {
			return i, nil
		}
	}
	return 0, invalidf("Unsupported data storage unit: %s. Supported units are: B, KiB, MiB, GiB", s)
}

// formatBytes converts bytes (or units[0]) to units[len-1], saturating at
// the largest long as Cassandra's DataStorageUnit does; with no unit, to
// the largest the value exceeds.
func formatBytes(v int64, units []string) ([]byte, error) {
	from, to := 0, 0
	switch len(units) {
	case 0:
		for i := len(byteUnits) - 1; i > 0; i-- {
			if v > byteUnits[i].bytes {
				to = i
				break
			}
		}
	case 1:
		var err error
		if to, err = byteUnit(units[0]); err != nil {
			return nil, err
		}
	default:
		var err error
		if from, err = byteUnit(units[0]); err != nil {
			return nil, err
		}
		if to, err = byteUnit(units[1]); err != nil {
			return nil, err
		}
	}
	var n int64
	if f, t := byteUnits[from].bytes, byteUnits[to].bytes; f >= t {
		if m := f / t; v > math.MaxInt64/m {
			n = math.MaxInt64
		} else {
			n = v * m
		}
	} else {
		n = v / (t / f)
	}
	return []byte(strconv.FormatInt(n, 10) + " " + byteUnits[to].symbol), nil
}

// timeUnits are the units format_time takes, with their lengths in
// nanoseconds; Java's TimeUnit order names them in its refusal.
var timeUnits = map[string]int64{"d": 86400e9, "h": 3600e9, "m": 60e9, "s": 1e9, "ms": 1e6, "us": 1e3, "µs": 1e3, "ns": 1}

func timeUnit(s string) (int64, error) {
	if n, ok := timeUnits[strings.ToLower(s)]; ok {
		return n, nil
	}
	return 0, invalidf("Unsupported time unit: %s. Supported units are: ns, us, ms, s, m, h, d", s)
}

// formatTime converts milliseconds (or units[0]) to units[len-1] as a
// java.time.Duration does, saturating at the largest long; with no unit,
// to the largest of d, h, m and s the value reaches, else ms.
func formatTime(v int64, units []string) ([]byte, error) {
	if len(units) == 0 {
		for _, u := range []string{"d", "h", "m", "s"} {
			if n := convertTime(v, 1e6, timeUnits[u]); n > 0 {
				return []byte(strconv.FormatInt(n, 10) + " " + u), nil
			}
		}
		return []byte(strconv.FormatInt(v, 10) + " ms"), nil
	}
	from := int64(1e6)
	if len(units) == 2 {
		var err error
		if from, err = timeUnit(units[0]); err != nil {
			return nil, err
		}
	}
	to, err := timeUnit(units[len(units)-1])
	if err != nil {
		return nil, err
	}
	return []byte(strconv.FormatInt(convertTime(v, from, to), 10) + " " + units[len(units)-1]), nil
}

// convertTime is v units of from nanoseconds in units of to, truncated,
// or the largest long past it. Microseconds come from nanoseconds, as
// Cassandra takes them, so they saturate where nanoseconds would.
func convertTime(v, from, to int64) int64 {
	n := new(big.Int).Mul(big.NewInt(v), big.NewInt(from))
	if to == 1e3 && !n.IsInt64() {
		return math.MaxInt64
	}
	n.Quo(n, big.NewInt(to))
	if !n.IsInt64() {
		return math.MaxInt64
	}
	return n.Int64()
}
