package udf

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// UUID, Date, Random, ByteBuffer, InetAddress, and the exceptions bodies
// may create, throw and catch.

// More exception classes, thrown by the library.
var (
	clsArrayStore         = newClass("java.lang.ArrayStoreException", "", "RuntimeException")
	clsStackOverflow      = newClass("java.lang.StackOverflowError", "", "Error")
	clsBufferUnderflow    = newClass("java.nio.BufferUnderflowException", "", "RuntimeException")
	clsBufferOverflow     = newClass("java.nio.BufferOverflowException", "", "RuntimeException")
	clsMissingFormatArg   = newClass("java.util.MissingFormatArgumentException", "", "IllegalFormatException")
	clsUnknownFormatConv  = newClass("java.util.UnknownFormatConversionException", "", "IllegalFormatException")
	clsMissingFormatWidth = newClass("java.util.MissingFormatWidthException", "", "IllegalFormatException")
	clsIllegalFormatConv  = newClass("java.util.IllegalFormatConversionException", "", "IllegalFormatException")
	clsIllegalFormatPrec  = newClass("java.util.IllegalFormatPrecisionException", "", "IllegalFormatException")
	clsInvalidRequest     = newClass("org.apache.cassandra.exceptions.InvalidRequestException", "", "RuntimeException")
	clsSyntax             = newClass("org.apache.cassandra.exceptions.SyntaxException", "", "RuntimeException")
)

// inetRefused are InetAddress's methods Cassandra's byte code verifier
// refuses, as they look names up or reach the network.
var inetRefused = map[string]bool{
	"getByName": true, "getAllByName": true, "getByAddress": true, "getLocalHost": true,
	"getHostName": true, "getCanonicalHostName": true, "isReachable": true, "getLoopbackAddress": true,
}

// inetText is InetAddress.getHostAddress: dotted quads, or eight groups of
// hexadecimal digits as Java writes IPv6 addresses (0:0:0:0:0:0:0:1).
func inetText(a jinet) string {
	b := []byte(a)
	if len(b) == 16 && strings.HasPrefix(string(b), "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff") {
		b = b[12:]
	}
	if len(b) == 4 {
		return strconv.Itoa(int(b[0])) + "." + strconv.Itoa(int(b[1])) + "." + strconv.Itoa(int(b[2])) + "." + strconv.Itoa(int(b[3]))
	}
	parts := make([]string, 0, 8)
	for i := 0; i+1 < len(b); i += 2 {
		parts = append(parts, strconv.FormatUint(uint64(binary.BigEndian.Uint16(b[i:])), 16))
	}
	return strings.Join(parts, ":")
}

// parseJavaUUID is UUID.fromString as Java 11 reads it: five groups of
// hexadecimal digits separated by dashes, each of any length that fits.
func parseJavaUUID(v val) juuid {
	if v.r == nil {
		npe()
	}
	s := v.str()
	if len(s) > 36 {
		throw(clsIllegalArgument, "UUID string too large")
	}
	parts := strings.Split(s, "-")
	if len(parts) != 5 {
		throw(clsIllegalArgument, "Invalid UUID string: %s", s)
	}
	var n [5]uint64
	for i, p := range parts {
		x, err := strconv.ParseUint(p, 16, 64)
		if err != nil || p == "" || strings.ContainsAny(p, "+_") {
			throw(clsNumberFormat, "Error at index %d in: \"%s\"", 0, p)
		}
		n[i] = x
	}
	msb := (n[0]&0xffffffff)<<32 | (n[1]&0xffff)<<16 | n[2]&0xffff
	lsb := (n[3]&0xffff)<<48 | n[4]&0xffffffffffff
	var u juuid
	binary.BigEndian.PutUint64(u[:8], msb)
	binary.BigEndian.PutUint64(u[8:], lsb)
	return u
}

// jrandom is java.util.Random: Java's 48-bit linear congruential
// generator, so that a seeded Random gives Java's numbers.
type jrandom struct{ seed int64 }

const randMask = 1<<48 - 1

func newRandom(seed int64) *jrandom { return &jrandom{seed: (seed ^ 0x5DEECE66D) & randMask} }

func (r *jrandom) next(bits uint) int32 {
	r.seed = (r.seed*0x5DEECE66D + 0xB) & randMask
	return int32(uint64(r.seed) >> (48 - bits))
}

func (r *jrandom) nextInt(bound int32) int32 {
	if bound <= 0 {
		throw(clsIllegalArgument, "bound must be positive")
	}
	x := r.next(31)
	m := bound - 1
	if bound&m == 0 {
		return int32((int64(bound) * int64(x)) >> 31)
	}
	for u := x; ; u = r.next(31) {
		x = u % bound
		if u-x+m >= 0 {
			return x
		}
	}
}

func declareMisc() {
	u := clsUUID
	uuid := func(r val) juuid { return r.r.(juuid) }
	def(u, "static UUID fromString(String)", func(_ *frame, _ val, a []val) val { return refval(parseJavaUUID(a[0])) })
	def(u, "static UUID randomUUID()", func(*frame, val, []val) val {
		var x juuid
		binary.BigEndian.PutUint64(x[:8], rand.Uint64())
		binary.BigEndian.PutUint64(x[8:], rand.Uint64())
		x[6] = x[6]&0x0f | 0x40
		x[8] = x[8]&0x3f | 0x80
		return refval(x)
	})
	ctor(u, "(long,long)", func(_ *frame, _ val, a []val) val {
		var x juuid
		binary.BigEndian.PutUint64(x[:8], a[0].n)
		binary.BigEndian.PutUint64(x[8:], a[1].n)
		return refval(x)
	})
	def(u, "long getMostSignificantBits()", func(_ *frame, r val, _ []val) val {
		x := uuid(r)
		return jval(int64(binary.BigEndian.Uint64(x[:8])))
	})
	def(u, "long getLeastSignificantBits()", func(_ *frame, r val, _ []val) val {
		x := uuid(r)
		return jval(int64(binary.BigEndian.Uint64(x[8:])))
	})
	def(u, "int version()", func(_ *frame, r val, _ []val) val { return ival(int32(uuid(r)[6] >> 4)) })
	def(u, "int variant()", func(_ *frame, r val, _ []val) val {
		x := uuid(r)
		lsb := binary.BigEndian.Uint64(x[8:])
		return ival(int32((lsb >> (64 - (lsb >> 62))) & uint64(int64(lsb)>>63)))
	})
	def(u, "long timestamp()", func(_ *frame, r val, _ []val) val {
		x := uuid(r)
		if x[6]>>4 != 1 {
			throw(clsUnsupported, "Not a time-based UUID")
		}
		msb := binary.BigEndian.Uint64(x[:8])
		return jval(int64((msb&0x0fff)<<48 | (msb>>16&0xffff)<<32 | msb>>32))
	})
	def(u, "int compareTo(UUID)", func(_ *frame, r val, a []val) val { return ival(int32(javaCompare(r, a[0]))) })

	d := clsDate
	ms := func(r val) int64 { return int64(r.r.(jdate)) }
	ctor(d, "()", func(*frame, val, []val) val { return refval(jdate(time.Now().UnixMilli())) })
	ctor(d, "(long)", func(_ *frame, _ val, a []val) val { return refval(jdate(a[0].j())) })
	def(d, "long getTime()", func(_ *frame, r val, _ []val) val { return jval(ms(r)) })
	def(d, "boolean before(Date)", func(_ *frame, r val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		return zval(ms(r) < ms(a[0]))
	})
	def(d, "boolean after(Date)", func(_ *frame, r val, a []val) val {
		if a[0].r == nil {
			npe()
		}
		return zval(ms(r) > ms(a[0]))
	})
	def(d, "int compareTo(Date)", func(_ *frame, r val, a []val) val { return ival(int32(javaCompare(r, a[0]))) })

	rc := clsRandom
	rnd := func(r val) *jrandom { return r.r.(*jrandom) }
	ctor(rc, "()", func(*frame, val, []val) val { return refval(newRandom(rand.Int64())) })
	ctor(rc, "(long)", func(_ *frame, _ val, a []val) val { return refval(newRandom(a[0].j())) })
	def(rc, "int nextInt()", func(_ *frame, r val, _ []val) val { return ival(rnd(r).next(32)) })
	def(rc, "int nextInt(int)", func(_ *frame, r val, a []val) val { return ival(rnd(r).nextInt(a[0].i())) })
	def(rc, "long nextLong()", func(_ *frame, r val, _ []val) val {
		g := rnd(r)
		hi := int64(g.next(32))
		return jval(hi<<32 + int64(g.next(32)))
	})
	def(rc, "boolean nextBoolean()", func(_ *frame, r val, _ []val) val { return zval(rnd(r).next(1) != 0) })
	def(rc, "double nextDouble()", func(_ *frame, r val, _ []val) val {
		g := rnd(r)
		hi := int64(g.next(26))
		return dval(float64(hi<<27+int64(g.next(27))) * 0x1.0p-53)
	})
	def(rc, "float nextFloat()", func(_ *frame, r val, _ []val) val {
		return fval(float32(rnd(r).next(24)) / float32(1<<24))
	})

	declareBuffer()
	declareInet()
}

func declareBuffer() {
	c := clsByteBuffer
	buf := func(r val) *jbuffer { return r.r.(*jbuffer) }
	def(c, "static ByteBuffer allocate(int)", func(fr *frame, _ val, a []val) val {
		n := int(a[0].i())
		if n < 0 {
			throw(clsIllegalArgument, "capacity < 0: (%d < 0)", n)
		}
		fr.alloc(n)
		return refval(&jbuffer{b: make([]byte, n), lim: n})
	})
	def(c, "static ByteBuffer wrap(byte[])", func(fr *frame, _ val, a []val) val {
		vals := elements(a[0])
		fr.alloc(len(vals))
		b := make([]byte, len(vals))
		for i, v := range vals {
			b[i] = byte(v.n)
		}
		return refval(&jbuffer{b: b, lim: len(b)})
	})
	def(c, "int remaining()", func(_ *frame, r val, _ []val) val { b := buf(r); return ival(int32(b.lim - b.pos)) })
	def(c, "boolean hasRemaining()", func(_ *frame, r val, _ []val) val { b := buf(r); return zval(b.pos < b.lim) })
	def(c, "int limit()", func(_ *frame, r val, _ []val) val { return ival(int32(buf(r).lim)) })
	def(c, "int position()", func(_ *frame, r val, _ []val) val { return ival(int32(buf(r).pos)) })
	def(c, "int capacity()", func(_ *frame, r val, _ []val) val { return ival(int32(len(buf(r).b))) })
	def(c, "ByteBuffer position(int)", func(_ *frame, r val, a []val) val {
		b, p := buf(r), int(a[0].i())
		if p < 0 || p > b.lim {
			throw(clsIllegalArgument, "newPosition > limit: (%d > %d)", p, b.lim)
		}
		b.pos = p
		return r
	})
	def(c, "ByteBuffer limit(int)", func(_ *frame, r val, a []val) val {
		b, l := buf(r), int(a[0].i())
		if l < 0 || l > len(b.b) {
			throw(clsIllegalArgument, "newLimit > capacity: (%d > %d)", l, len(b.b))
		}
		b.lim, b.pos = l, min(b.pos, l)
		return r
	})
	def(c, "ByteBuffer flip()", func(_ *frame, r val, _ []val) val { b := buf(r); b.lim, b.pos = b.pos, 0; return r })
	def(c, "ByteBuffer rewind()", func(_ *frame, r val, _ []val) val { buf(r).pos = 0; return r })
	def(c, "ByteBuffer clear()", func(_ *frame, r val, _ []val) val { b := buf(r); b.pos, b.lim = 0, len(b.b); return r })
	def(c, "ByteBuffer duplicate()", func(_ *frame, r val, _ []val) val { b := *buf(r); return refval(&b) })
	def(c, "byte[] array()", func(fr *frame, r val, _ []val) val {
		b := buf(r)
		fr.alloc(valSize * len(b.b))
		vals := make([]val, len(b.b))
		for i, x := range b.b {
			vals[i] = byval(int8(x))
		}
		return refval(&jarray{elem: tByte, vals: vals})
	})
	read := func(name, ret string, n int, conv func([]byte) val) {
		def(c, ret+" "+name+"()", func(_ *frame, r val, _ []val) val {
			b := buf(r)
			if b.lim-b.pos < n {
				throwBare(clsBufferUnderflow)
			}
			b.pos += n
			return conv(b.b[b.pos-n : b.pos])
		})
		def(c, ret+" "+name+"(int)", func(_ *frame, r val, a []val) val {
			b, i := buf(r), int(a[0].i())
			if i < 0 || i+n > b.lim {
				throwBare(clsIndexOutOfBounds)
			}
			return conv(b.b[i : i+n])
		})
	}
	read("get", "byte", 1, func(b []byte) val { return byval(int8(b[0])) })
	read("getShort", "short", 2, func(b []byte) val { return sval(int16(binary.BigEndian.Uint16(b))) })
	read("getChar", "char", 2, func(b []byte) val { return cval(binary.BigEndian.Uint16(b)) })
	read("getInt", "int", 4, func(b []byte) val { return ival(int32(binary.BigEndian.Uint32(b))) })
	read("getLong", "long", 8, func(b []byte) val { return jval(int64(binary.BigEndian.Uint64(b))) })
	read("getFloat", "float", 4, func(b []byte) val { return fval(math.Float32frombits(binary.BigEndian.Uint32(b))) })
	read("getDouble", "double", 8, func(b []byte) val { return dval(math.Float64frombits(binary.BigEndian.Uint64(b))) })
	write := func(name, arg string, n int, put func([]byte, val)) {
		def(c, "ByteBuffer "+name+"("+arg+")", func(_ *frame, r val, a []val) val {
			b := buf(r)
			if b.lim-b.pos < n {
				throwBare(clsBufferOverflow)
			}
			put(b.b[b.pos:b.pos+n], a[0])
			b.pos += n
			return r
		})
	}
	write("put", "byte", 1, func(b []byte, v val) { b[0] = byte(v.n) })
	write("putShort", "short", 2, func(b []byte, v val) { binary.BigEndian.PutUint16(b, uint16(v.n)) })
	write("putInt", "int", 4, func(b []byte, v val) { binary.BigEndian.PutUint32(b, uint32(v.n)) })
	write("putLong", "long", 8, func(b []byte, v val) { binary.BigEndian.PutUint64(b, v.n) })
	write("putFloat", "float", 4, func(b []byte, v val) { binary.BigEndian.PutUint32(b, math.Float32bits(v.f())) })
	write("putDouble", "double", 8, func(b []byte, v val) { binary.BigEndian.PutUint64(b, v.n) })
	def(c, "int compareTo(ByteBuffer)", func(_ *frame, r val, a []val) val { return ival(int32(javaCompare(r, a[0]))) })
}

func declareInet() {
	c := clsInetAddress
	def(c, "String getHostAddress()", func(_ *frame, r val, _ []val) val { return strval(inetText(r.r.(jinet))) })
	def(c, "byte[] getAddress()", func(fr *frame, r val, _ []val) val {
		b := []byte(r.r.(jinet))
		vals := make([]val, len(b))
		for i, x := range b {
			vals[i] = byval(int8(x))
		}
		fr.alloc(valSize * len(b))
		return refval(&jarray{elem: tByte, vals: vals})
	})
	def(c, "boolean isLoopbackAddress()", func(_ *frame, r val, _ []val) val {
		b := []byte(r.r.(jinet))
		if len(b) == 4 {
			return zval(b[0] == 127)
		}
		return zval(string(b) == "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01")
	})
}

// declareExceptions gives every exception class its constructors and
// Throwable its methods.
func declareExceptions() {
	for _, c := range []*jclass{clsThrowable, clsException, clsError, clsRuntimeException, clsArithmetic, clsNPE,
		clsIllegalArgument, clsNumberFormat, clsIllegalState, clsIndexOutOfBounds, clsArrayIndex, clsStringIndex,
		clsNegativeArray, clsClassCast, clsUnsupported, clsConcurrentMod, clsNoSuchElement, clsArrayStore} {
		c := c
		ctor(c, "()", func(*frame, val, []val) val { return refval(&jthrow{cls: c}) })
		ctor(c, "(String)", func(_ *frame, _ val, a []val) val {
			if a[0].r == nil {
				return refval(&jthrow{cls: c})
			}
			return refval(&jthrow{cls: c, msg: a[0].str(), hasMsg: true})
		})
		ctor(c, "(String,Throwable)", func(_ *frame, _ val, a []val) val {
			if a[0].r == nil {
				return refval(&jthrow{cls: c})
			}
			return refval(&jthrow{cls: c, msg: a[0].str(), hasMsg: true})
		})
		ctor(c, "(Throwable)", func(_ *frame, _ val, a []val) val {
			if a[0].r == nil {
				return refval(&jthrow{cls: c})
			}
			return refval(&jthrow{cls: c, msg: a[0].r.(*jthrow).text(), hasMsg: true})
		})
	}
	t := clsThrowable
	msg := func(_ *frame, r val, _ []val) val {
		e := r.r.(*jthrow)
		if !e.hasMsg {
			return null
		}
		return strval(e.msg)
	}
	def(t, "String getMessage()", msg)
	def(t, "String getLocalizedMessage()", msg)
	def(t, "Throwable getCause()", func(*frame, val, []val) val { return null })
}
