package exec

import (
	"encoding/binary"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate"
)

// paramOIDs returns the Postgres types of a plan's parameters, which are
// declared when shards prepare the statement.
func paramOIDs(params []translate.Param) []uint32 {
	oids := make([]uint32, len(params))
	for i, p := range params {
		switch p.Kind {
		case translate.ParamNow, translate.ParamExpiry:
			oids[i] = pgschema.OIDInt4
		case translate.ParamEmptyFlag:
			oids[i] = pgschema.OIDBool
		case translate.ParamToken, translate.ParamRangeStart, translate.ParamRangeEnd,
			translate.ParamLimit, translate.ParamWritetime, translate.ParamClock:
			oids[i] = pgschema.OIDInt8
		case translate.ParamKey, translate.ParamValue, translate.ParamAfter:
			oids[i] = valueOID(p)
		case translate.ParamList:
			if p.Form == translate.FormOrderKey {
				oids[i] = pgschema.OIDByteaArray
				continue
			}
			st, _ := pgschema.StorageOf(elementType(&p))
			oids[i] = st.ArrayOID
		}
	}
	return oids
}

// valueOID is the Postgres type a value parameter is sent as.
func valueOID(p translate.Param) uint32 {
	switch p.Form {
	case translate.FormJSON:
		return pgschema.OIDJSONB
	case translate.FormJSONKey:
		return pgschema.OIDText
	case translate.FormJSONKeys:
		return pgschema.OIDTextArray
	case translate.FormOrderKey, translate.FormExact:
		return pgschema.OIDBytea
	}
	st, _ := pgschema.StorageOf(elementType(&p)) // planning checked every type
	return st.OID
}

// elementType is the type of the values a parameter carries: the value's,
// or a tuple element's.
func elementType(p *translate.Param) *pgschema.Type {
	if p.Element >= 0 && p.Kind != translate.ParamKey {
		return p.Column.Type
	}
	return p.ValueType()
}

// rowArgs holds what varies between the executions of one statement: the
// key of the partition or row, its token, a token range, the clustering
// prefix of a page's position, the row limit, and the write's timestamp
// and expiry.
type rowArgs struct {
	key        [][]byte
	token      int64
	rangeStart int64
	rangeEnd   int64
	// after holds CQL values of the leading clustering columns; those
	// past it are null (translate.ParamAfter).
	after [][]byte
	// limit is the SQL row limit; 0 means none.
	limit     int
	timestamp int64
	// expiry is the cells' expiry in seconds since the epoch; 0 means none.
	expiry int32
}

// argBuffer builds the binary parameter values of one statement execution
// in one arena.
type argBuffer struct {
	arena []byte
	args  [][]byte
}

func (a *argBuffer) reset(n int) {
	a.arena = a.arena[:0]
	a.args = a.args[:0]
	if cap(a.args) < n {
		a.args = make([][]byte, 0, n)
	}
}

// add appends a parameter; nil is SQL NULL.
func (a *argBuffer) add(v []byte) {
	if v == nil {
		a.args = append(a.args, nil)
		return
	}
	start := len(a.arena)
	a.arena = append(a.arena, v...)
	a.args = append(a.args, a.arena[start:len(a.arena):len(a.arena)])
}

// addConverted appends a CQL value of type t converted to its storage.
func (a *argBuffer) addConverted(t *pgschema.Type, v []byte) error {
	if v == nil {
		a.args = append(a.args, nil)
		return nil
	}
	st, err := pgschema.StorageOf(t)
	if err != nil {
		return err
	}
	if err := pgschema.Validate(t, v); err != nil {
		return &translate.InvalidError{Msg: err.Error()}
	}
	if st.ToPG == nil {
		a.add(v)
		return nil
	}
	start := len(a.arena)
	if a.arena, err = st.ToPG(a.arena, v); err != nil {
		a.arena = a.arena[:start]
		return &translate.InvalidError{Msg: err.Error()}
	}
	a.args = append(a.args, a.arena[start:len(a.arena):len(a.arena)])
	return nil
}

// addForm appends a value in a parameter's form: storage, jsonb, or a map
// key's text in the jsonb that stores the map.
func (a *argBuffer) addForm(p *translate.Param, t *pgschema.Type, v []byte) error {
	switch {
	case v == nil:
		a.add(nil)
		return nil
	case p.Form == translate.FormStorage:
		if p.Column != nil && p.Column.HasExact() && t.Kind == p.Column.Type.Kind {
			return a.addExact(p.Column, v, false)
		}
		return a.addConverted(t, v)
	case p.Form == translate.FormExact:
		return a.addExact(p.Column, v, true)
	case p.Form == translate.FormJSON:
		j, err := pgschema.StorageJSON(t, v)
		if err != nil {
			return &translate.InvalidError{Msg: err.Error()}
		}
		a.add(append([]byte{1}, j...)) // jsonb's binary form: a version byte, then the text
		return nil
	}
	switch p.Form {
	case translate.FormJSONKeys:
		return a.addJSONKeys(t, v)
	case translate.FormOrderKey:
		return a.addOrderKey(p.Column, t, v)
	}
	key, err := pgschema.JSONKey(t, v)
	if err != nil {
		return &translate.InvalidError{Msg: err.Error()}
	}
	a.add([]byte(key))
	return nil
}

// addExact appends a value of a column with an exact companion: its
// natural storage, or the placeholder there when that cannot hold it
// exactly; or, when companion is set, the companion's value: null, or
// the CQL bytes when the natural column cannot hold them.
func (a *argBuffer) addExact(c *pgschema.Column, v []byte, companion bool) error {
	t := c.Type
	if err := pgschema.Validate(t, v); err != nil {
		return &translate.InvalidError{Msg: err.Error()}
	}
	st, err := pgschema.StorageOf(t)
	if err != nil {
		return err
	}
	start := len(a.arena)
	var inexact bool
	a.arena, inexact = c.Placeholder(a.arena, v)
	switch {
	case companion && inexact:
		a.arena = a.arena[:start]
		a.add(v)
	case companion:
		a.add(nil)
	case inexact:
		a.args = append(a.args, a.arena[start:len(a.arena):len(a.arena)])
	case st.ToPG == nil:
		a.add(v)
	default:
		if a.arena, err = st.ToPG(a.arena, v); err != nil {
			a.arena = a.arena[:start]
			return &translate.InvalidError{Msg: err.Error()}
		}
		a.args = append(a.args, a.arena[start:len(a.arena):len(a.arena)])
	}
	return nil
}

// addOrderKey appends the order key of a value of type t, cut to a
// stand-in when it is too long for the key index of column c.
func (a *argBuffer) addOrderKey(c *pgschema.Column, t *pgschema.Type, v []byte) error {
	if err := pgschema.Validate(t, v); err != nil {
		return &translate.InvalidError{Msg: err.Error()}
	}
	key, err := pgschema.OrderKey(t, v)
	if err != nil {
		return &translate.InvalidError{Msg: err.Error()}
	}
	if c != nil && c.IsKey() && t == c.Type {
		key = c.BoundOrderKey(key)
	}
	a.add(key)
	return nil
}

// addJSONKeys appends a set of map keys, of set type t, as the text[] of
// the texts the keys have in the jsonb that stores the map.
func (a *argBuffer) addJSONKeys(t *pgschema.Type, v []byte) error {
	if err := pgschema.Validate(t, v); err != nil {
		return &translate.InvalidError{Msg: err.Error()}
	}
	elems, err := pgschema.Elements(t, v)
	if err != nil {
		return &translate.InvalidError{Msg: err.Error()}
	}
	// Header: dimensions (none for an empty array), has-nulls flag,
	// element type, then the length and lower bound of the one dimension.
	start := len(a.arena)
	a.arena = binary.BigEndian.AppendUint32(a.arena, uint32(min(len(elems), 1)))
	a.arena = binary.BigEndian.AppendUint32(a.arena, 0)
	a.arena = binary.BigEndian.AppendUint32(a.arena, pgschema.OIDText)
	if len(elems) > 0 {
		a.arena = binary.BigEndian.AppendUint32(a.arena, uint32(len(elems)))
		a.arena = binary.BigEndian.AppendUint32(a.arena, 1)
	}
	for _, e := range elems {
		key, err := pgschema.JSONKey(t.Elem[0], e)
		if err != nil {
			a.arena = a.arena[:start]
			return &translate.InvalidError{Msg: err.Error()}
		}
		a.arena = binary.BigEndian.AppendUint32(a.arena, uint32(len(key)))
		a.arena = append(a.arena, key...)
	}
	a.args = append(a.args, a.arena[start:len(a.arena):len(a.arena)])
	return nil
}

func (a *argBuffer) addInt4(v int32) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(v))
	a.add(b[:])
}

func (a *argBuffer) addInt8(v int64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(v))
	a.add(b[:])
}

// build fills in the parameters of one execution.
func (a *argBuffer) build(e *Execution, params []translate.Param, r *rowArgs) error {
	a.reset(len(params))
	for i := range params {
		p := &params[i] // a Param is large: no copy per parameter
		if p.Readded && r.timestamp <= p.DroppedAt {
			a.add(nil) // hidden by the column's drop: left alone, as if unset
			continue
		}
		switch p.Kind {
		case translate.ParamNow:
			a.addInt4(e.nowSeconds)
		case translate.ParamClock:
			a.addInt8(e.Now.UnixMicro())
		case translate.ParamToken:
			a.addInt8(r.token)
		case translate.ParamRangeStart:
			a.addInt8(r.rangeStart)
		case translate.ParamRangeEnd:
			a.addInt8(r.rangeEnd)
		case translate.ParamKey:
			if err := a.addForm(p, p.Column.Type, r.key[p.Key]); err != nil {
				return err
			}
		case translate.ParamAfter:
			var v []byte
			if p.Key < len(r.after) {
				v = r.after[p.Key]
			}
			if err := a.addForm(p, p.Column.Type, v); err != nil {
				return err
			}
		case translate.ParamValue:
			if err := a.addValue(e, p); err != nil {
				return err
			}
		case translate.ParamList:
			if err := a.addList(e, p); err != nil {
				return err
			}
		case translate.ParamLimit:
			if r.limit <= 0 {
				a.add(nil) // LIMIT NULL: no limit
				continue
			}
			a.addInt8(int64(r.limit))
		case translate.ParamWritetime:
			if e.unsetCell(p) {
				a.add(nil)
				continue
			}
			a.addInt8(r.timestamp)
		case translate.ParamExpiry:
			if e.unsetCell(p) || r.expiry == 0 {
				a.add(nil)
				continue
			}
			a.addInt4(r.expiry)
		case translate.ParamEmptyFlag:
			if v, unset := e.bound.Get(p.Value); !unset && v != nil && len(v) == 0 {
				a.add([]byte{1})
				continue
			}
			a.add(nil)
		}
	}
	return nil
}

// addValue appends a statement value, or one element of a tuple value.
func (a *argBuffer) addValue(e *Execution, p *translate.Param) error {
	v, unset := e.bound.Get(p.Value)
	if p.Increment && v == nil && !unset {
		return invalidf("Invalid null value for counter increment")
	}
	if p.EmptyAsNull && v != nil && len(v) == 0 {
		a.add(nil) // the cell's empty flag records it
		return nil
	}
	if unset {
		if p.Column != nil && p.Column.IsKey() {
			return invalidf("Invalid unset value for column %s", p.Column.Name)
		}
		v = nil // an unset cell is left alone: its write time is null too
	}
	t := p.ValueType()
	if p.Element >= 0 && v != nil {
		elems, err := splitTuple(v)
		if err != nil || p.Element >= len(elems) {
			return invalidf("Invalid tuple value for column %s", p.Column.Name)
		}
		v, t = elems[p.Element], p.Column.Type
	}
	return a.addForm(p, t, v)
}

// splitTuple splits a tuple value into its elements, each [int length]
// [bytes], null when the length is negative.
func splitTuple(v []byte) ([][]byte, error) {
	d := cqlwire.Decoder{B: v}
	var out [][]byte
	for len(d.B) > 0 && d.Err == nil {
		e, _ := d.Value()
		out = append(out, e)
	}
	return out, d.Err
}

// unsetCell reports whether a write-time or expiry parameter belongs to a
// cell whose value the client left unset.
func (e *Execution) unsetCell(p *translate.Param) bool {
	if !p.Cell {
		return false
	}
	_, unset := e.bound.Get(p.Value)
	return unset
}

// addList appends a one-dimensional Postgres array of a type's storage,
// holding an IN list's values (or one element of each of its tuples).
func (a *argBuffer) addList(e *Execution, p *translate.Param) error {
	t := elementType(p)
	st, err := pgschema.StorageOf(t)
	if err != nil {
		return err
	}
	values, err := e.listValues(p.Values, p.ListMarker, p.Column)
	if err != nil {
		return err
	}
	tmp := argBuffer{}
	for _, v := range values {
		if p.Element >= 0 {
			elems, err := splitTuple(v)
			if err != nil || p.Element >= len(elems) {
				return invalidf("Invalid tuple value for column %s", p.Column.Name)
			}
			v = elems[p.Element]
		}
		if err := tmp.addForm(p, t, v); err != nil {
			return err
		}
	}
	elemOID := st.OID
	if p.Form == translate.FormOrderKey {
		elemOID = pgschema.OIDBytea
	}
	// Header: dimensions, has-nulls flag, element type, then the length
	// and lower bound of the one dimension.
	start := len(a.arena)
	a.arena = binary.BigEndian.AppendUint32(a.arena, 1)
	a.arena = binary.BigEndian.AppendUint32(a.arena, 0)
	a.arena = binary.BigEndian.AppendUint32(a.arena, elemOID)
	a.arena = binary.BigEndian.AppendUint32(a.arena, uint32(len(tmp.args)))
	a.arena = binary.BigEndian.AppendUint32(a.arena, 1)
	for _, el := range tmp.args {
		a.arena = binary.BigEndian.AppendUint32(a.arena, uint32(len(el)))
		a.arena = append(a.arena, el...)
	}
	a.args = append(a.args, a.arena[start:len(a.arena):len(a.arena)])
	return nil
}
