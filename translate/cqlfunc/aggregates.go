package cqlfunc

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
)

// This file holds Cassandra 4.1's native aggregates (AggregateFcts):
// count(*), and count, min, max, sum and avg over the native types, with
// Cassandra's arithmetic (Java's wrapping integers, Kahan-summed doubles,
// BigDecimal averages).

// Aggregate is a native aggregate function, one overload of a name.
type Aggregate struct {
	// Name is the aggregate's name in the system keyspace: "count", "sum",
	// "avg", "min", "max", or "countRows" for count(*).
	Name    string
	Args    []*pgschema.Type
	Returns *pgschema.Type
	// New starts an aggregation, one per group of rows.
	New func() AggregateState
	// Keyspace is a user-defined aggregate's keyspace; "" for a native
	// one, whose keyspace is system.
	Keyspace string
}

// AggregateState accumulates one group's rows.
type AggregateState interface {
	// Add takes one row's arguments; a nil argument is null, which every
	// native aggregate but count(*) skips.
	Add(args [][]byte) error
	// Result returns the aggregate over the rows added so far: 0 for count,
	// sum and avg of no rows, null for min and max of no rows.
	Result() ([]byte, error)
}

// String returns the signature as Cassandra prints it in overload lists.
func (a *Aggregate) String() string {
	return signatureIn(keyspaceOf(a.Keyspace), a.Name, a.Args, a.Returns)
}

// QualifiedName returns the name as Cassandra prints it in messages.
func (a *Aggregate) QualifiedName() string { return keyspaceOf(a.Keyspace) + "." + a.Name }

// ColumnName returns the result column's name: "count" for count(*) and
// count(1), "system.max(v)" otherwise.
func (a *Aggregate) ColumnName(args []string) string {
	if a == CountRows {
		return "count"
	}
	return a.QualifiedName() + "(" + strings.Join(args, ", ") + ")"
}

// Signature returns the aggregate's name, parameter types and result type.
func (a *Aggregate) Signature() (string, []*pgschema.Type, *pgschema.Type) {
	return a.Name, a.Args, a.Returns
}

// CountRows is count(*), which counts rows whatever their values.
// Cassandra names it countRows, and also uses it for count(1) and count of
// any other constant.
var CountRows = &Aggregate{Name: "countRows", Returns: scalar(pgschema.Bigint),
	New: func() AggregateState { return &countState{rows: true} }}

// Aggregates returns the native aggregates of a name, in Cassandra's
// order.
func Aggregates(name string) []*Aggregate { return aggregates[name] }

// aggregates holds the native aggregates by name, in Cassandra's order.
var aggregates = buildAggregates()

// numericKinds are the types sum and avg are declared for, in Cassandra's
// order.
var numericKinds = []pgschema.Kind{pgschema.Tinyint, pgschema.Smallint, pgschema.Int, pgschema.Bigint,
	pgschema.Float, pgschema.Double, pgschema.Decimal, pgschema.Varint, pgschema.Counter}

// aggregateTypes are CQL3Type.Native in Cassandra's order, without varchar;
// count, max and min are declared for each.
var aggregateTypes = []*pgschema.Type{
	scalar(pgschema.Ascii), scalar(pgschema.Bigint), scalar(pgschema.Blob), scalar(pgschema.Boolean),
	scalar(pgschema.Counter), scalar(pgschema.Date), scalar(pgschema.Decimal), scalar(pgschema.Double),
	scalar(pgschema.Duration), EmptyType, scalar(pgschema.Float), scalar(pgschema.Inet),
	scalar(pgschema.Int), scalar(pgschema.Smallint), scalar(pgschema.Text), scalar(pgschema.Time),
	scalar(pgschema.Timestamp), scalar(pgschema.Timeuuid), scalar(pgschema.Tinyint), scalar(pgschema.UUID),
	scalar(pgschema.Varint),
}

func buildAggregates() map[string][]*Aggregate {
	var all []*Aggregate
	all = append(all, CountRows)
	for _, k := range numericKinds {
		t := scalar(k)
		all = append(all, &Aggregate{Name: "sum", Args: []*pgschema.Type{t}, Returns: t,
			New: func() AggregateState { return newSum(k) }})
	}
	for _, k := range numericKinds {
		t := scalar(k)
		all = append(all, &Aggregate{Name: "avg", Args: []*pgschema.Type{t}, Returns: t,
			New: func() AggregateState { return newAvg(k) }})
	}
	for _, t := range aggregateTypes {
		all = append(all,
			&Aggregate{Name: "count", Args: []*pgschema.Type{t}, Returns: scalar(pgschema.Bigint),
				New: func() AggregateState { return &countState{} }},
			&Aggregate{Name: "max", Args: []*pgschema.Type{t}, Returns: t,
				New: func() AggregateState { return &extremeState{t: t, max: true} }},
			&Aggregate{Name: "min", Args: []*pgschema.Type{t}, Returns: t,
				New: func() AggregateState { return &extremeState{t: t} }})
	}
	m := map[string][]*Aggregate{}
	for _, a := range all {
		m[a.Name] = append(m[a.Name], a)
	}
	return m
}

// countState counts rows (count(*)) or non-null values (count(x)).
type countState struct {
	rows bool
	n    int64
}

func (s *countState) Add(args [][]byte) error {
	if s.rows || args[0] != nil {
		s.n++
	}
	return nil
}

func (s *countState) Result() ([]byte, error) {
	return binary.BigEndian.AppendUint64(nil, uint64(s.n)), nil
}

// extremeState keeps the smallest or largest value under the type's
// comparator. It copies the value it keeps: a row's values live in buffers
// the next row reuses.
type extremeState struct {
	t   *pgschema.Type
	max bool
	v   []byte
}

func (s *extremeState) Add(args [][]byte) error {
	v := args[0]
	if v == nil {
		return nil
	}
	if s.v == nil {
		s.v = append([]byte{}, v...)
		return nil
	}
	c, err := compareValues(s.t, s.v, v)
	if err != nil {
		return err
	}
	if (s.max && c < 0) || (!s.max && c > 0) {
		s.v = append(s.v[:0], v...)
	}
	return nil
}

func (s *extremeState) Result() ([]byte, error) { return s.v, nil }

// compareValues orders two values of type t as Cassandra's comparator for
// t does, refusing numbers too short for their type; floating point
// compares by Java's Double.compare, which puts -0.0 before 0.0.
func compareValues(t *pgschema.Type, a, b []byte) (int, error) {
	if len(a) == 0 || len(b) == 0 {
		return pgschema.Compare(t, a, b), nil
	}
	switch t.Kind {
	case pgschema.Decimal:
		if err := decimalLength(a); err != nil {
			return 0, err
		}
		if err := decimalLength(b); err != nil {
			return 0, err
		}
		return pgschema.Compare(t, a, b), nil // by value, as BigDecimal.compareTo
	case pgschema.Float, pgschema.Double:
		x, err := decodeNumber(t.Kind, a)
		if err != nil {
			return 0, err
		}
		y, err := decodeNumber(t.Kind, b)
		if err != nil {
			return 0, err
		}
		return pgschema.CompareJavaFloat(x.f, y.f), nil
	}
	return pgschema.Compare(t, a, b), nil
}

// aggNumber decodes an aggregate's numeric argument. An empty value has no
// number: Cassandra fails on it.
func aggNumber(k pgschema.Kind, b []byte) (javaNumber, error) {
	if len(b) == 0 {
		return javaNumber{}, fmt.Errorf("cannot aggregate an empty %s value", scalar(k))
	}
	return decodeNumber(k, b)
}

// encodeInteger serializes an integer result at the width of kind k,
// keeping the low bits as Java's narrowing casts do.
func encodeInteger(k pgschema.Kind, v int64) []byte {
	switch k {
	case pgschema.Tinyint:
		return []byte{byte(v)}
	case pgschema.Smallint:
		return binary.BigEndian.AppendUint16(nil, uint16(v))
	case pgschema.Int:
		return binary.BigEndian.AppendUint32(nil, uint32(v))
	}
	return binary.BigEndian.AppendUint64(nil, uint64(v))
}

// encodeFloat serializes a floating point result as a float or a double.
func encodeFloat(k pgschema.Kind, f float64) []byte {
	if k == pgschema.Float {
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(f)))
	}
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(f))
}

func newSum(k pgschema.Kind) AggregateState {
	switch k {
	case pgschema.Float, pgschema.Double:
		return &floatSumState{kind: k}
	case pgschema.Decimal:
		return &decimalSumState{sum: pgschema.BigDecimal{Unscaled: new(big.Int)}}
	case pgschema.Varint:
		return &varintSumState{sum: new(big.Int)}
	}
	return &intSumState{kind: k}
}

func newAvg(k pgschema.Kind) AggregateState {
	switch k {
	case pgschema.Float, pgschema.Double:
		return &floatAvgState{kind: k}
	case pgschema.Decimal:
		return &decimalAvgState{avg: pgschema.BigDecimal{Unscaled: new(big.Int)}}
	case pgschema.Varint:
		return &varintAvgState{sum: new(big.Int)}
	}
	return &intAvgState{kind: k}
}

// intSumState sums tinyints, smallints, ints, bigints or counters in the
// type's own width, wrapping on overflow as Java does.
type intSumState struct {
	kind pgschema.Kind
	sum  int64
}

func (s *intSumState) Add(args [][]byte) error {
	if args[0] == nil {
		return nil
	}
	n, err := aggNumber(s.kind, args[0])
	if err != nil {
		return err
	}
	s.sum += n.i
	return nil
}

func (s *intSumState) Result() ([]byte, error) { return encodeInteger(s.kind, s.sum), nil }

// intAvgState averages integers over a long sum that switches to a big
// integer on overflow, then divides rounding toward zero and narrows the
// quotient to the type (AvgAggregate).
type intAvgState struct {
	kind  pgschema.Kind
	sum   int64
	big   *big.Int
	count int32
}

func (s *intAvgState) Add(args [][]byte) error {
	if args[0] == nil {
		return nil
	}
	n, err := aggNumber(s.kind, args[0])
	if err != nil {
		return err
	}
	s.count++
	if s.big != nil {
		s.big.Add(s.big, big.NewInt(n.i))
		return nil
	}
	prev := s.sum
	s.sum += n.i
	if (prev^s.sum)&(n.i^s.sum) < 0 {
		s.big = new(big.Int).Add(big.NewInt(prev), big.NewInt(n.i))
	}
	return nil
}

func (s *intAvgState) Result() ([]byte, error) {
	var avg int64
	switch {
	case s.big != nil:
		avg = pgschema.LowInt64(new(big.Int).Quo(s.big, big.NewInt(int64(s.count))))
	case s.count != 0:
		avg = s.sum / int64(s.count)
	}
	return encodeInteger(s.kind, avg), nil
}

// kahan is Kahan summation over doubles, as Cassandra's floating point
// aggregates do it, with the plain sum kept to recover infinities.
type kahan struct {
	sum, compensation, simple float64
}

func (k *kahan) add(x float64) {
	k.simple += x
	tmp := x - k.compensation
	rounded := k.sum + tmp
	k.compensation = (rounded - k.sum) - tmp
	k.sum = rounded
}

// result corrects a NaN that came from adding infinities of one sign.
func (k *kahan) result() float64 {
	tmp := k.sum + k.compensation
	if math.IsNaN(tmp) && math.IsInf(k.simple, 0) {
		return k.simple
	}
	return tmp
}

// floatSumState sums floats or doubles in double precision (FloatSumAggregate).
type floatSumState struct {
	kind pgschema.Kind
	k    kahan
}

func (s *floatSumState) Add(args [][]byte) error {
	if args[0] == nil {
		return nil
	}
	n, err := aggNumber(s.kind, args[0])
	if err != nil {
		return err
	}
	s.k.add(n.f)
	return nil
}

func (s *floatSumState) Result() ([]byte, error) { return encodeFloat(s.kind, s.k.result()), nil }

// floatAvgState averages floats or doubles: a Kahan sum, switching to
// BigDecimal when the sum overflows a double (FloatAvgAggregate).
type floatAvgState struct {
	kind  pgschema.Kind
	k     kahan
	count int32
	big   *pgschema.BigDecimal
}

func (s *floatAvgState) Add(args [][]byte) error {
	if args[0] == nil {
		return nil
	}
	n, err := aggNumber(s.kind, args[0])
	if err != nil {
		return err
	}
	s.count++
	x := n.f
	if s.big != nil {
		d, err := pgschema.BigDecimalOfFloat(x, 64)
		if err != nil {
			return err
		}
		sum := s.big.Add(d)
		s.big = &sum
		return nil
	}
	prev := s.k.sum
	s.k.add(x)
	if math.IsInf(s.k.sum, 0) && !math.IsInf(x, 0) {
		p, err := pgschema.BigDecimalOfFloat(prev, 64)
		if err != nil {
			return err
		}
		d, err := pgschema.BigDecimalOfFloat(x, 64)
		if err != nil {
			return err
		}
		sum := p.Add(d)
		s.big = &sum
	}
	return nil
}

func (s *floatAvgState) Result() ([]byte, error) {
	var avg float64
	switch {
	case s.count == 0:
	case s.big != nil:
		avg = s.big.DivHalfEven(int64(s.count)).Float(64)
	default:
		avg = s.k.result() / float64(s.count)
	}
	return encodeFloat(s.kind, avg), nil
}

// decimalSumState sums decimals exactly; the result has the largest scale
// added.
type decimalSumState struct{ sum pgschema.BigDecimal }

func (s *decimalSumState) Add(args [][]byte) error {
	if args[0] == nil {
		return nil
	}
	n, err := aggNumber(pgschema.Decimal, args[0])
	if err != nil {
		return err
	}
	s.sum = s.sum.Add(n.d)
	return nil
}

func (s *decimalSumState) Result() ([]byte, error) { return s.sum.Bytes(), nil }

// decimalAvgState keeps a running average, avg += (value - avg) / count,
// each division rounded half to even at the difference's scale, as
// Cassandra does; the average of 1 and 2 is therefore 1.
type decimalAvgState struct {
	avg   pgschema.BigDecimal
	count int32
}

func (s *decimalAvgState) Add(args [][]byte) error {
	if args[0] == nil {
		return nil
	}
	n, err := aggNumber(pgschema.Decimal, args[0])
	if err != nil {
		return err
	}
	s.count++
	s.avg = s.avg.Add(n.d.Sub(s.avg).DivHalfEven(int64(s.count)))
	return nil
}

func (s *decimalAvgState) Result() ([]byte, error) { return s.avg.Bytes(), nil }

// varintSumState sums varints exactly.
type varintSumState struct{ sum *big.Int }

func (s *varintSumState) Add(args [][]byte) error {
	if args[0] == nil {
		return nil
	}
	n, err := aggNumber(pgschema.Varint, args[0])
	if err != nil {
		return err
	}
	s.sum.Add(s.sum, n.v)
	return nil
}

func (s *varintSumState) Result() ([]byte, error) { return pgschema.VarintBytes(s.sum), nil }

// varintAvgState divides the exact sum by the count, rounding toward zero.
type varintAvgState struct {
	sum   *big.Int
	count int32
}

func (s *varintAvgState) Add(args [][]byte) error {
	if args[0] == nil {
		return nil
	}
	n, err := aggNumber(pgschema.Varint, args[0])
	if err != nil {
		return err
	}
	s.count++
	s.sum.Add(s.sum, n.v)
	return nil
}

func (s *varintAvgState) Result() ([]byte, error) {
	if s.count == 0 {
		return pgschema.VarintBytes(new(big.Int)), nil
	}
	return pgschema.VarintBytes(new(big.Int).Quo(s.sum, big.NewInt(int64(s.count)))), nil
}
