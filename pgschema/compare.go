package pgschema

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
)

// Compare orders two serialized values of type t as Cassandra 4.1's
// comparator for t does (AbstractType.compare): numbers by value (decimal
// and varint too), text, blobs, inet, date, time and duration by unsigned
// bytes, booleans false first, floats as Java's Float.compare (-0.0 before
// 0.0, NaN last), uuids by version then time, and frozen collections,
// tuples, user types and vectors component by component. An empty value
// sorts before every other. Cassandra sorts IN lists of partition keys and
// clustering values, set elements and map keys this way. Compare does not
// allocate except for decimals too large for 64-bit arithmetic, and does
// not panic on malformed values, which it orders by bytes.
func Compare(t *Type, a, b []byte) int {
	if len(a) == 0 || len(b) == 0 {
		return cmpInt(len(a), len(b))
	}
	switch t.Kind {
	case Int, Bigint, Smallint, Tinyint, Counter, Timestamp:
		return cmpSigned(a, b)
	case Boolean:
		return cmpBool(a[0] != 0, b[0] != 0)
	case Float:
		if len(a) == 4 && len(b) == 4 {
			return CompareJavaFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(a))),
				float64(math.Float32frombits(binary.BigEndian.Uint32(b))))
		}
	case Double:
		if len(a) == 8 && len(b) == 8 {
			return CompareJavaFloat(math.Float64frombits(binary.BigEndian.Uint64(a)),
				math.Float64frombits(binary.BigEndian.Uint64(b)))
		}
	case Varint:
		return cmpVarint(a, b)
	case Decimal:
		return cmpDecimal(a, b)
	case UUID:
		return cmpUUID(a, b)
	case Timeuuid:
		return cmpTimeUUID(a, b)
	case List, Set:
		return cmpListOrSet(t.Elem[0], a, b)
	case Map:
		return cmpMap(t.Elem[0], t.Elem[1], a, b)
	case Tuple, UDT:
		return cmpTuple(t.Elem, a, b)
	case Vector:
		return cmpVector(t, a, b)
	}
	// ascii, text, blob, inet, date, time and duration compare their bytes
	// (ComparisonType.BYTE_ORDER); time values are never negative, so this
	// is also their numeric order.
	return bytes.Compare(a, b)
}

// CompareKeys orders two lists of serialized values column by column, as
// CompositeType compares composite partition keys.
func CompareKeys(types []*Type, a, b [][]byte) int {
	for i, t := range types {
		if c := Compare(t, a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// cmpSigned compares big-endian two's complement integers of equal width:
// the first byte signed, the rest unsigned.
func cmpSigned(a, b []byte) int {
	if len(a) != len(b) {
		return bytes.Compare(a, b)
	}
	if c := cmpInt(int(int8(a[0])), int(int8(b[0]))); c != 0 {
		return c
	}
	return bytes.Compare(a[1:], b[1:])
}

// varintSignificant skips the redundant sign bytes of a two's complement
// integer, as IntegerType.findMostSignificantByte does.
func varintSignificant(b []byte) []byte {
	i := 0
	for ; i < len(b)-1; i++ {
		b0, b1 := b[i], b[i+1]
		if b0 == 0 && b1&0x80 == 0 {
			continue
		}
		if b0 == 0xff && b1&0x80 != 0 {
			continue
		}
		break
	}
	return b[i:]
}

// cmpVarint compares two's complement integers of any length, padded or
// not, as IntegerType.compareIntegers does.
func cmpVarint(a, b []byte) int {
	a, b = varintSignificant(a), varintSignificant(b)
	na, nb := a[0]&0x80 != 0, b[0]&0x80 != 0
	switch {
	case na != nb:
		if na {
			return -1
		}
		return 1
	case len(a) != len(b):
		if na { // the longer negative number is the smaller
			return cmpInt(len(b), len(a))
		}
		return cmpInt(len(a), len(b))
	}
	return cmpSigned(a, b)
}

// varintSign returns -1, 0 or 1 for a two's complement integer.
func varintSign(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	if b[0]&0x80 != 0 {
		return -1
	}
	for _, c := range b {
		if c != 0 {
			return 1
		}
	}
	return 0
}

var pow10u64 = func() [20]uint64 {
	var p [20]uint64
	p[0] = 1
	for i := 1; i < 20; i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// cmpDecimal compares decimals by value, as BigDecimal.compareTo does:
// 1.0 and 1.00 are equal.
func cmpDecimal(a, b []byte) int {
	if len(a) < 4 || len(b) < 4 {
		return bytes.Compare(a, b)
	}
	sa, sb := int64(int32(binary.BigEndian.Uint32(a))), int64(int32(binary.BigEndian.Uint32(b)))
	ua, ub := a[4:], b[4:]
	signA, signB := varintSign(ua), varintSign(ub)
	if signA != signB {
		return cmpInt(signA, signB)
	}
	if signA == 0 {
		return 0
	}
	if sa == sb {
		return cmpVarint(ua, ub)
	}
	va, okA := varintInt64(ua)
	vb, okB := varintInt64(ub)
	if okA && okB {
		// Compare the magnitudes with the smaller-scale one multiplied by
		// 10^diff, in 128 bits; then apply the shared sign.
		ma, mb := absU(va), absU(vb)
		var c int
		if sa < sb {
			c = -cmpScaled(mb, ma, sb-sa)
		} else {
			c = cmpScaled(ma, mb, sa-sb)
		}
		return c * signA
	}
	x := new(big.Int).Abs(VarintValue(ua))
	y := new(big.Int).Abs(VarintValue(ub))
	// Compare the decimal exponents first, so that scales far apart
	// (1E-2000000000 against 1) never build a huge power of ten: log10 of
	// a magnitude is its bit length times log10(2), less its scale, give
	// or take one.
	const log10of2 = 0.30102999566398120
	ea := float64(x.BitLen())*log10of2 - float64(sa)
	eb := float64(y.BitLen())*log10of2 - float64(sb)
	if ea-eb > 2 {
		return signA
	}
	if eb-ea > 2 {
		return -signA
	}
	ten := big.NewInt(10)
	if sa < sb {
		x.Mul(x, new(big.Int).Exp(ten, big.NewInt(sb-sa), nil))
	} else {
		y.Mul(y, new(big.Int).Exp(ten, big.NewInt(sa-sb), nil))
	}
	return x.Cmp(y) * signA
}

// cmpScaled compares m with n × 10^diff, for m, n > 0 and diff > 0.
func cmpScaled(m, n uint64, diff int64) int {
	if diff >= int64(len(pow10u64)) {
		return -1 // n × 10^20 exceeds any uint64
	}
	hi, lo := bits.Mul64(n, pow10u64[diff])
	if hi != 0 {
		return -1
	}
	switch {
	case m < lo:
		return -1
	case m > lo:
		return 1
	}
	return 0
}

// CompareJavaFloat orders like Java's Double.compare and Float.compare: -0.0
// before 0.0, NaN after everything and equal to itself.
func CompareJavaFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmpBool(!math.Signbit(a), !math.Signbit(b))
}

// uuidTime returns a version 1 UUID's 60-bit timestamp.
func uuidTime(u []byte) uint64 {
	hi := uint64(binary.BigEndian.Uint16(u[6:8]) & 0x0fff)
	mid := uint64(binary.BigEndian.Uint16(u[4:6]))
	low := uint64(binary.BigEndian.Uint32(u[0:4]))
	return hi<<48 | mid<<32 | low
}

// cmpUUID orders uuids as UUIDType: by version, then version 1 uuids by
// time and others by their high eight bytes, then by the low eight bytes,
// all unsigned.
func cmpUUID(a, b []byte) int {
	if len(a) != 16 || len(b) != 16 {
		return bytes.Compare(a, b)
	}
	if c := cmpInt(int(a[6]>>4), int(b[6]>>4)); c != 0 {
		return c
	}
	if a[6]>>4 == 1 {
		if ta, tb := uuidTime(a), uuidTime(b); ta != tb {
			if ta < tb {
				return -1
			}
			return 1
		}
	} else if c := bytes.Compare(a[:8], b[:8]); c != 0 {
		return c
	}
	return bytes.Compare(a[8:], b[8:])
}

// cmpTimeUUID orders timeuuids by embedded time, then by their low eight
// bytes compared as signed bytes, as TimeUUIDType does.
func cmpTimeUUID(a, b []byte) int {
	if len(a) != 16 || len(b) != 16 {
		return bytes.Compare(a, b)
	}
	ta, tb := uuidTime(a), uuidTime(b)
	if ta != tb {
		if ta < tb {
			return -1
		}
		return 1
	}
	for i := 8; i < 16; i++ {
		if a[i] != b[i] {
			return cmpInt(int(int8(a[i])), int(int8(b[i])))
		}
	}
	return 0
}

// cmpListOrSet compares frozen lists and sets element by element, then by
// size (ListType.compareListOrSet).
func cmpListOrSet(elem *Type, a, b []byte) int {
	na, ra, ok1 := readCount(a)
	nb, rb, ok2 := readCount(b)
	if !ok1 || !ok2 {
		return bytes.Compare(a, b)
	}
	for i := 0; i < min(na, nb); i++ {
		var ea, eb []byte
		if ea, ra, ok1 = readValue(ra); !ok1 {
			return bytes.Compare(a, b)
		}
		if eb, rb, ok2 = readValue(rb); !ok2 {
			return bytes.Compare(a, b)
		}
		if c := Compare(elem, ea, eb); c != 0 {
			return c
		}
	}
	return cmpInt(na, nb)
}

// cmpMap compares frozen maps entry by entry, key then value, then by size
// (MapType.compareMaps).
func cmpMap(key, value *Type, a, b []byte) int {
	na, ra, ok1 := readCount(a)
	nb, rb, ok2 := readCount(b)
	if !ok1 || !ok2 {
		return bytes.Compare(a, b)
	}
	for i := 0; i < 2*min(na, nb); i++ {
		var ea, eb []byte
		if ea, ra, ok1 = readValue(ra); !ok1 {
			return bytes.Compare(a, b)
		}
		if eb, rb, ok2 = readValue(rb); !ok2 {
			return bytes.Compare(a, b)
		}
		t := key
		if i%2 == 1 {
			t = value
		}
		if c := Compare(t, ea, eb); c != 0 {
			return c
		}
	}
	return cmpInt(na, nb)
}

// cmpTuple compares tuples and user types component by component, nulls
// first; missing trailing components count as nulls (TupleType.compareCustom).
func cmpTuple(types []*Type, a, b []byte) int {
	ra, rb := a, b
	for i := 0; len(ra) > 0 && len(rb) > 0 && i < len(types); i++ {
		ea, na, ok1 := readValue(ra)
		eb, nb, ok2 := readValue(rb)
		if !ok1 || !ok2 {
			return bytes.Compare(a, b)
		}
		ra, rb = na, nb
		switch {
		case ea == nil && eb == nil:
			continue
		case ea == nil:
			return -1
		case eb == nil:
			return 1
		}
		if c := Compare(types[i], ea, eb); c != 0 {
			return c
		}
	}
	// Trailing components that are not null make a value the greater.
	for len(ra) >= 4 {
		if int32(binary.BigEndian.Uint32(ra)) > 0 {
			return 1
		}
		_, ra, _ = readValue(ra)
	}
	for len(rb) >= 4 {
		if int32(binary.BigEndian.Uint32(rb)) > 0 {
			return -1
		}
		_, rb, _ = readValue(rb)
	}
	return 0
}

// cmpVector compares vectors element by element.
func cmpVector(t *Type, a, b []byte) int {
	elem := t.Elem[0]
	if size := vectorElemSize(elem); size >= 0 {
		if len(a) != size*t.Dim || len(b) != size*t.Dim {
			return bytes.Compare(a, b)
		}
		for i := 0; i < t.Dim; i++ {
			if c := Compare(elem, a[i*size:(i+1)*size], b[i*size:(i+1)*size]); c != 0 {
				return c
			}
		}
		return 0
	}
	ra, rb := a, b
	for i := 0; i < t.Dim; i++ {
		la, sa, err1 := readUvint(ra)
		lb, sb, err2 := readUvint(rb)
		if err1 != nil || err2 != nil || la > uint64(len(ra)-sa) || lb > uint64(len(rb)-sb) {
			return bytes.Compare(a, b)
		}
		ea, eb := ra[sa:sa+int(la)], rb[sb:sb+int(lb)]
		ra, rb = ra[sa+int(la):], rb[sb+int(lb):]
		if c := Compare(elem, ea, eb); c != 0 {
			return c
		}
	}
	if len(ra) > 0 || len(rb) > 0 {
		// Bytes past the last element: malformed, and equal elements
		// must not make different values equal.
		return bytes.Compare(a, b)
	}
	return 0
}
