package cqlfunc

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
)

// This file holds Cassandra 4.1's TimeFcts and UuidFcts: now() and the
// other current* functions, the timeuuid, timestamp and date conversions,
// minTimeuuid/maxTimeuuid, the deprecated dateOf/unixTimestampOf, and
// uuid(). The floor functions are in floor.go.

// Time constants of Cassandra's temporal types.
const (
	// uuidEpochMillis is 1582-10-15T00:00:00Z, where version 1 uuid time
	// (in 100 ns units) starts; it is also where Java's calendar switches
	// from Julian to Gregorian.
	uuidEpochMillis = -12219292800000
	millisPerDay    = 86400000
	nanosPerMilli   = 1000000
	nanosPerDay     = 86400 * 1000000000
	// dateEpochOffset is the serialized day of 1970-01-01: dates count days
	// as an unsigned int centered on 2^31.
	dateEpochOffset = 1 << 31
)

// timeFunctions returns TimeFcts' functions in Cassandra's order.
func timeFunctions() []*Function {
	ts, tu, date, bigint := scalar(pgschema.Timestamp), scalar(pgschema.Timeuuid), scalar(pgschema.Date),
		scalar(pgschema.Bigint)
	fns := []*Function{
		nowFunction("now", tu), nowFunction("currenttimeuuid", tu), nowFunction("currenttimestamp", ts),
		nowFunction("currentdate", date), nowFunction("currenttime", scalar(pgschema.Time)),
		pureFunction("mintimeuuid", tu, []*pgschema.Type{ts}, func(a [][]byte) ([]byte, error) {
			return timeuuidBound(a[0], false)
		}),
		pureFunction("maxtimeuuid", tu, []*pgschema.Type{ts}, func(a [][]byte) ([]byte, error) {
			return timeuuidBound(a[0], true)
		}),
		pureFunction("dateof", ts, []*pgschema.Type{tu}, timeuuidMillis),
		pureFunction("unixtimestampof", bigint, []*pgschema.Type{tu}, timeuuidMillis),
		temporalConversion("todate", tu, date),
		temporalConversion("totimestamp", tu, ts),
		temporalConversion("tounixtimestamp", tu, bigint),
		temporalConversion("tounixtimestamp", ts, bigint),
		temporalConversion("todate", ts, date),
		temporalConversion("tounixtimestamp", date, bigint),
		temporalConversion("totimestamp", date, ts),
	}
	return append(fns, floorFunctions()...)
}

// uuidFunctions returns UuidFcts' uuid(), a random version 4 uuid.
func uuidFunctions() []*Function {
	return []*Function{{Name: "uuid", Returns: scalar(pgschema.UUID),
		Eval: func(*EvalContext, [][]byte) ([]byte, error) {
			u := make([]byte, 16)
			if _, err := rand.Read(u); err != nil {
				return nil, err
			}
			u[6] = u[6]&0x0f | 0x40
			u[8] = u[8]&0x3f | 0x80
			return u, nil
		}}}
}

// pureFunction declares a deterministic function whose value depends on its
// arguments only.
func pureFunction(name string, ret *pgschema.Type, args []*pgschema.Type, eval func([][]byte) ([]byte, error)) *Function {
	return &Function{Name: name, Args: args, Returns: ret, Deterministic: true,
		Eval: func(_ *EvalContext, a [][]byte) ([]byte, error) { return eval(a) }}
}

// requestTime returns the time a function call sees.
func requestTime(ctx *EvalContext) time.Time {
	if ctx == nil || ctx.Now.IsZero() {
		return time.Now()
	}
	return ctx.Now
}

// nowFunction declares a function returning the request's time as a value
// of type t (Cassandra's TemporalType.now()).
func nowFunction(name string, t *pgschema.Type) *Function {
	return &Function{Name: name, Returns: t, Eval: func(ctx *EvalContext, _ [][]byte) ([]byte, error) {
		now := requestTime(ctx)
		switch t.Kind {
		case pgschema.Timeuuid:
			return timeUUIDs.next(now), nil
		case pgschema.Timestamp:
			return binary.BigEndian.AppendUint64(nil, uint64(now.UnixMilli())), nil
		case pgschema.Date:
			return binary.BigEndian.AppendUint32(nil, millisToDay(now.UnixMilli())), nil
		}
		// LocalTime.now(UTC).toNanoOfDay(), at the microsecond precision of
		// Java's system clock.
		ns := now.UTC().Sub(now.UTC().Truncate(24 * time.Hour)).Truncate(time.Microsecond)
		return binary.BigEndian.AppendUint64(nil, uint64(ns)), nil
	}}
}

// temporalConversion declares todate, totimestamp or tounixtimestamp from
// type from: the value's time in milliseconds, converted to type to. Null
// and empty values give null.
func temporalConversion(name string, from, to *pgschema.Type) *Function {
	return pureFunction(name, to, []*pgschema.Type{from}, func(a [][]byte) ([]byte, error) {
		if len(a[0]) == 0 {
			return nil, nil
		}
		ms, err := temporalMillis(from, a[0])
		if err != nil {
			return nil, err
		}
		if to.Kind == pgschema.Date {
			return binary.BigEndian.AppendUint32(nil, millisToDay(ms)), nil
		}
		return binary.BigEndian.AppendUint64(nil, uint64(ms)), nil
	})
}

// temporalMillis is TemporalType.toTimeInMillis for timeuuid, timestamp and
// date values.
func temporalMillis(t *pgschema.Type, b []byte) (int64, error) {
	switch t.Kind {
	case pgschema.Timeuuid:
		if len(b) != 16 {
			return 0, fmt.Errorf("expected 16 bytes for a timeuuid, got %d", len(b))
		}
		return timeuuidUnixMillis(b), nil
	case pgschema.Timestamp:
		if len(b) != 8 {
			return 0, fmt.Errorf("expected 8 bytes for a timestamp, got %d", len(b))
		}
		return int64(binary.BigEndian.Uint64(b)), nil
	case pgschema.Date:
		if len(b) != 4 {
			return 0, fmt.Errorf("expected 4 bytes for a date, got %d", len(b))
		}
		return dayToMillis(binary.BigEndian.Uint32(b)), nil
	}
	return 0, fmt.Errorf("type %s is not temporal", t)
}

// millisToDay is SimpleDateSerializer.timeInMillisToDay: whole seconds
// (rounded down) divided into days rounding toward zero, so a time before
// 1970 that is not midnight lands on the following day, as in Cassandra.
func millisToDay(ms int64) uint32 {
	secs := floorDiv(ms, 1000)
	return uint32(secs/86400 + dateEpochOffset)
}

// dayToMillis is SimpleDateSerializer.dayToTimeInMillis.
func dayToMillis(day uint32) int64 {
	return (int64(day) - dateEpochOffset) * millisPerDay
}

// floorDiv divides rounding toward minus infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// A version 1 uuid's "raw" timestamp counts 100 ns units from
// uuidEpochMillis; these convert it as Cassandra's TimeUUID does, with
// Java's wrapping long arithmetic.

// unixMicrosToRaw is TimeUUID.unixMicrosToRawTimestamp.
func unixMicrosToRaw(us int64) int64 { return us*10 - uuidEpochMillis*10000 }

// unixMillisToRaw is TimeUUID.unixMillisToRawTimestamp.
func unixMillisToRaw(ms, tenthsOfMicro int64) int64 {
	return ms*10000 - uuidEpochMillis*10000 + tenthsOfMicro
}

// rawToMSB is TimeUUID.rawTimestampToMsb: the uuid's first 8 bytes.
func rawToMSB(raw int64) uint64 {
	r := uint64(raw)
	return 0x1000 | r>>48 | (r&0xFFFF00000000)>>16 | r<<32
}

// msbToRaw is TimeUUID.msbToRawTimestamp.
func msbToRaw(msb uint64) int64 {
	msb &^= 0x1000
	return int64((msb&0xFFFF)<<48 | (msb&0xFFFF0000)<<16 | msb>>32)
}

// timeuuidBytes serializes a timeuuid from its raw time and low 8 bytes.
func timeuuidBytes(raw int64, lsb uint64) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16), rawToMSB(raw))
	return binary.BigEndian.AppendUint64(b, lsb)
}

// timeuuidUnixMillis is TimeUUID.unix(MILLISECONDS): the time in
// microseconds, truncated toward zero to milliseconds.
func timeuuidUnixMillis(b []byte) int64 {
	raw := msbToRaw(binary.BigEndian.Uint64(b))
	us := raw/10 + uuidEpochMillis*1000
	return us / 1000
}

// timeuuidMillis implements dateOf and unixTimestampOf.
func timeuuidMillis(a [][]byte) ([]byte, error) {
	if len(a[0]) == 0 {
		return nil, nil
	}
	if len(a[0]) != 16 {
		return nil, fmt.Errorf("expected 16 bytes for a timeuuid, got %d", len(a[0]))
	}
	return binary.BigEndian.AppendUint64(nil, uint64(timeuuidUnixMillis(a[0]))), nil
}

// The low 8 bytes minTimeuuid and maxTimeuuid use: TimeUUIDType compares
// them as signed bytes, so these are the smallest and largest.
const (
	minClockSeqAndNode = 0x8080808080808080
	maxClockSeqAndNode = 0x7f7f7f7f7f7f7f7f
)

// timeuuidBound implements minTimeuuid and maxTimeuuid: the smallest or
// largest timeuuid of the timestamp's millisecond.
func timeuuidBound(ts []byte, upper bool) ([]byte, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	if len(ts) != 8 {
		return nil, fmt.Errorf("expected 8 bytes for a timestamp, got %d", len(ts))
	}
	ms := int64(binary.BigEndian.Uint64(ts))
	if upper {
		return timeuuidBytes(unixMillisToRaw(ms+1, 0)-1, maxClockSeqAndNode), nil
	}
	return timeuuidBytes(unixMillisToRaw(ms, 0), minClockSeqAndNode), nil
}

// timeuuidGenerator makes now()'s timeuuids as Cassandra's
// TimeUUID.Generator does: the request's time in microseconds, bumped past
// the last one issued so every call differs, and a clock sequence and node
// fixed for the process.
type timeuuidGenerator struct {
	mu         sync.Mutex
	lastMicros int64
	lsb        uint64
}

var timeUUIDs = &timeuuidGenerator{lsb: makeClockSeqAndNode()}

// next returns a new timeuuid for time now.
func (g *timeuuidGenerator) next(now time.Time) []byte {
	us := now.UnixMicro()
	g.mu.Lock()
	if us <= g.lastMicros {
		us = g.lastMicros + 1
	}
	g.lastMicros = us
	g.mu.Unlock()
	return timeuuidBytes(unixMicrosToRaw(us), g.lsb)
}

// makeClockSeqAndNode builds the low 8 bytes of this process's timeuuids:
// the variant, a random 14-bit clock sequence, and a node made of a hash of
// the host's addresses with the multicast bit set, as Cassandra does when
// it has no MAC address.
func makeClockSeqAndNode() uint64 {
	var seed [8]byte
	_, _ = rand.Read(seed[:])
	clock := binary.BigEndian.Uint64(seed[:])
	h := md5.New()
	if addrs, err := net.InterfaceAddrs(); err == nil && len(addrs) > 0 {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				h.Write(n.IP)
			}
		}
	} else {
		h.Write(seed[:])
	}
	sum := h.Sum(nil)
	var node uint64
	for i := 0; i < 6; i++ {
		node |= uint64(sum[i]) << ((5 - i) * 8)
	}
	return 0x8000000000000000 | (clock&0x3FFF)<<48 | node | 0x010000000000
}
