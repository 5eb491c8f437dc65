package translate

import "github.com/cqlpg/cqlpg/pgschema"

// temporalConstant reads a timestamp, date, time or duration constant. The
// parsing lives in pgschema, which fromJson() shares, and follows Cassandra
// 4.1 exactly:
//
//   - timestamp ('2015-05-03 13:30:54.234+0200', '2015-05-03T13:30Z',
//     '2015-05-03', 'now', or milliseconds as a number or string):
//     TimestampSerializer's patterns, read with Java's calendar, which is
//     Julian before 1582-10-15; without a zone the time is UTC;
//   - date ('2015-05-03', or the serialized day count where 2^31 is
//     1970-01-01): strict ISO, proleptic Gregorian;
//   - time ('08:12:54.123456789', or nanoseconds since midnight);
//   - duration (12h30m, 1y2mo3w4d5h6m7s8ms9us10ns, P1Y2M3DT4H5M6S, P2W,
//     P0001-02-03T04:05:06, each optionally negated).
func temporalConstant(s string, t *pgschema.Type) ([]byte, error) {
	return pgschema.FromString(t, s)
}
