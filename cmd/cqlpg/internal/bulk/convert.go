package bulk

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/pgschema/cqltext"
	"github.com/cqlpg/cqlpg/sharding"
)

// converter turns a file row into staged tuples, in Postgres's binary
// COPY form.
type converter struct {
	t     *pgschema.Table
	cols  []*pgschema.Column
	st    *statements
	pos   map[*pgschema.Column]int
	vals  [][]byte
	pk    [][]byte
	nrows int
	nstat int
	// times and marker are the cells' and the row marker's write times
	// and expiries, when the statements stage them (perCell).
	times  []CellTime
	marker CellTime
}

// CellTime is when a cell was written and when it expires.
type CellTime struct {
	// Writetime is in microseconds since the epoch; a cell without one
	// (Set false) is left as the target holds it.
	Writetime int64
	Set       bool
	// Expiry is in seconds since the epoch, 0 for none.
	Expiry int32
}

func newConverter(t *pgschema.Table, cols []*pgschema.Column, st *statements) *converter {
	cv := &converter{t: t, cols: cols, st: st, pos: map[*pgschema.Column]int{}, vals: make([][]byte, len(cols)),
		nrows: len(st.rows.names), nstat: len(st.static.names)}
	for i, c := range cols {
		cv.pos[c] = i
	}
	if st.perCell {
		cv.times = make([]CellTime, len(cols))
	}
	return cv
}

// timeOf returns the write time and expiry to stage with column i's
// cell, or nil when the load has one for all.
func (cv *converter) timeOf(i int) *CellTime {
	if cv.times == nil {
		return nil
	}
	return &cv.times[i]
}

// appendTime appends a write time and expiry, when staged.
func appendTime(tup []byte, tm *CellTime) []byte {
	if tm == nil {
		return tup
	}
	if !tm.Set {
		return appendField(appendField(tup, nil), nil)
	}
	tup = appendField(tup, binary.BigEndian.AppendUint64(nil, uint64(tm.Writetime)))
	if tm.Expiry == 0 {
		return appendField(tup, nil)
	}
	return appendField(tup, binary.BigEndian.AppendUint32(nil, uint32(tm.Expiry)))
}

func (cv *converter) row(rec []Field, line int, placement *sharding.Placement) (row, string, string, string, error) {
	for i, f := range rec {
		c := cv.cols[i]
		if f.Text == "" && !f.Quoted {
			cv.vals[i] = nil
			continue
		}
		v, err := cqltext.Parse(c.Type, f.Text)
		if err != nil {
			return row{}, "", "", "", &CSVError{Line: line, Column: c.Name, Err: err}
		}
		cv.vals[i] = v
	}
	return cv.stage(line, placement)
}

// stage turns the row in cv.vals (and cv.times) into staged tuples, and
// returns with them the row's key, its partition's and its static
// cells', which tell rows a batch must not hold twice.
func (cv *converter) stage(line int, placement *sharding.Placement) (row, string, string, string, error) {
	fail := func(c *pgschema.Column, err error) (row, string, string, string, error) {
		return row{}, "", "", "", &CSVError{Line: line, Column: c.Name, Err: err}
	}
	cv.pk = cv.pk[:0]
	for _, c := range cv.t.PartitionKey {
		v := cv.vals[cv.pos[c]]
		if v == nil {
			return fail(c, errors.New("null value in a partition key column"))
		}
		// A partition key of one column may not be empty; a composite
		// one never is, holding each part's length.
		if len(v) == 0 && len(cv.t.PartitionKey) == 1 {
			return fail(c, errors.New("Key may not be empty"))
		}
		if len(cv.t.PartitionKey) > 1 && len(v) > sharding.MaxKeyComponentLen {
			return fail(c, errors.New("partition key component too long"))
		}
		cv.pk = append(cv.pk, v)
	}
	token := sharding.KeyToken(cv.pk)
	rw := row{replicas: placement.Replicas(token)}
	var key bytes.Buffer
	binary.Write(&key, binary.BigEndian, int64(token))
	for _, v := range cv.pk {
		appendKeyPart(&key, v)
	}
	skey := key.String()
	staticOnly, nullClustering := true, (*pgschema.Column)(nil)
	for _, c := range cv.t.Clustering {
		i, ok := cv.pos[c]
		if ok && cv.vals[i] != nil {
			staticOnly = false
		} else if nullClustering == nil {
			nullClustering = c
		}
	}
	if len(cv.t.Clustering) == 0 {
		staticOnly = false
	}
	if staticOnly && len(cv.st.statIdx) == 0 {
		staticOnly = false
	}
	if !staticOnly && nullClustering != nil {
		return fail(nullClustering, errors.New("null value in a clustering column"))
	}
	tok := binary.BigEndian.AppendUint64(nil, uint64(token))
	if !staticOnly {
		tup := tupleHeader(nil, cv.nrows)
		tup = appendField(tup, tok)
		for _, c := range cv.t.KeyColumns() {
			v := cv.vals[cv.pos[c]]
			if c.Kind == pgschema.Clustering {
				appendKeyPart(&key, v)
			}
			pg, exact, err := toPG(c, v)
			if err != nil {
				return fail(c, err)
			}
			tup = appendField(tup, pg)
			if c.OrderColumn() != "" {
				o, err := pgschema.OrderKey(c.Type, v)
				if err != nil {
					return fail(c, err)
				}
				tup = appendField(tup, c.BoundOrderKey(o))
			}
			if c.HasExact() {
				tup = appendField(tup, exact)
			}
		}
		for _, c := range cv.st.rowsIdx {
			var err error
			if tup, err = appendCell(tup, c, cv.vals[cv.pos[c]]); err != nil {
				return fail(c, err)
			}
			tup = appendTime(tup, cv.timeOf(cv.pos[c]))
		}
		if cv.times != nil {
			tup = appendTime(tup, &cv.marker)
		}
		rw.rows = tup
	}
	var sval bytes.Buffer
	if len(cv.st.statIdx) > 0 {
		tup := tupleHeader(nil, cv.nstat)
		tup = appendField(tup, tok)
		for _, c := range cv.t.PartitionKey {
			pg, exact, err := toPG(c, cv.vals[cv.pos[c]])
			if err != nil {
				return fail(c, err)
			}
			tup = appendField(tup, pg)
			if c.HasExact() {
				tup = appendField(tup, exact)
			}
		}
		for _, c := range cv.st.statIdx {
			v := cv.vals[cv.pos[c]]
			appendKeyPart(&sval, v)
			var err error
			if tup, err = appendCell(tup, c, v); err != nil {
				return fail(c, err)
			}
			tup = appendTime(tup, cv.timeOf(cv.pos[c]))
		}
		rw.static = tup
	}
	return rw, key.String(), skey, sval.String(), nil
}

// appendKeyPart appends a value to a key made of several, unambiguously.
func appendKeyPart(b *bytes.Buffer, v []byte) {
	if v == nil {
		b.Write([]byte{0xff, 0xff, 0xff, 0xff})
		return
	}
	binary.Write(b, binary.BigEndian, uint32(len(v)))
	b.Write(v)
}

// toPG converts a value to its stored binary form, as the gateway binds
// it, and gives its exact companion's value: for a column that has one
// and a value its natural column cannot hold exactly, the placeholder
// stored instead and the CQL bytes; else null.
func toPG(c *pgschema.Column, v []byte) (pg, exact []byte, err error) {
	if v == nil {
		return nil, nil, nil
	}
	s, err := pgschema.StorageOf(c.Type)
	if err != nil {
		return nil, nil, err
	}
	if err := pgschema.Validate(c.Type, v); err != nil {
		return nil, nil, err
	}
	if p, inexact := c.Placeholder(nil, v); inexact {
		return p, v, nil
	}
	if s.ToPG == nil {
		return v, nil, nil
	}
	pg, err = s.ToPG(nil, v)
	return pg, nil, err
}

// appendCell appends a cell's staged fields: the value (null for the
// empty value of a column with an empty flag), the flag and the exact
// companion.
func appendCell(tup []byte, c *pgschema.Column, v []byte) ([]byte, error) {
	flag, hasExact := c.EmptyColumn() != "", c.HasExact()
	if flag && v != nil && len(v) == 0 {
		tup = appendField(appendField(tup, nil), []byte{1})
		if hasExact {
			tup = appendField(tup, nil)
		}
		return tup, nil
	}
	pg, exact, err := toPG(c, v)
	if err != nil {
		return nil, err
	}
	if pg == nil && v != nil {
		pg = []byte{}
	}
	tup = appendField(tup, pg)
	if flag {
		tup = appendField(tup, nil)
	}
	if hasExact {
		tup = appendField(tup, exact)
	}
	return tup, nil
}

// Binary COPY framing: a header, then per tuple its field count and each
// field's length (-1 for null) and bytes, then a trailer.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

func tupleHeader(dst []byte, n int) []byte { return binary.BigEndian.AppendUint16(dst, uint16(n)) }

func appendField(dst, v []byte) []byte {
	if v == nil {
		return binary.BigEndian.AppendUint32(dst, 0xffffffff)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
	return append(dst, v...)
}
