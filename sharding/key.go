package sharding

// MaxKeyComponentLen is the largest value a composite partition-key
// component can hold, because its length is serialized in two bytes.
// Callers must reject longer values before building a key: AppendKey and
// KeyToken keep only the low 16 bits of the length, which yields a key that
// Cassandra would never have produced.
const MaxKeyComponentLen = 0xFFFF

// stackKeyLen is the largest composite key KeyToken serializes on the
// stack. Typical keys (a few ids and short strings) are far below it; larger
// ones pay one heap allocation.
const stackKeyLen = 512

// AppendKey appends the serialized partition key made of components, the
// serialized partition-key column values in key order, to dst and returns
// the extended slice.
//
// A single component is appended unchanged. Several components use
// Cassandra's CompositeType layout: for each one a 2-byte big-endian length,
// the bytes, then a 0x00 end-of-component byte. No components yields no
// bytes, the empty key.
func AppendKey(dst []byte, components [][]byte) []byte {
	if len(components) == 1 {
		return append(dst, components[0]...)
	}
	for _, c := range components {
		dst = append(dst, byte(len(c)>>8), byte(len(c)))
		dst = append(dst, c...)
		dst = append(dst, 0)
	}
	return dst
}

// KeyToken returns the token of the partition key made of components; it
// equals TokenOf(AppendKey(nil, components)).
//
// It does not allocate for single-column keys or for composite keys of up
// to a few hundred serialized bytes, because it serializes those into a
// stack buffer.
func KeyToken(components [][]byte) Token {
	if len(components) == 1 {
		return TokenOf(components[0])
	}
	if compositeLen(components) > stackKeyLen {
		return TokenOf(AppendKey(nil, components))
	}
	var buf [stackKeyLen]byte
	return TokenOf(AppendKey(buf[:0], components))
}

// compositeLen is the serialized length of a key with several components.
func compositeLen(components [][]byte) int {
	n := 0
	for _, c := range components {
		n += 3 + len(c)
	}
	return n
}
