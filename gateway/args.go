package gateway

import (
	"encoding/binary"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate"
)

// Postgres OIDs of the parameters the executor fills in itself.
const (
	oidInt4 = 23
	oidInt8 = 20
)

// paramOIDs returns the Postgres types of a plan's parameters, which are
// declared when shards prepare the statement.
func paramOIDs(params []translate.Param) []uint32 {
	oids := make([]uint32, len(params))
	for i, p := range params {
		switch p.Kind {
		case translate.ParamNow, translate.ParamExpiry:
			oids[i] = oidInt4
		case translate.ParamToken, translate.ParamRangeStart, translate.ParamRangeEnd,
			translate.ParamLimit, translate.ParamWritetime:
			oids[i] = oidInt8
		case translate.ParamKey, translate.ParamValue:
			st, _ := pgschema.StorageOf(p.Column.Type) // planning checked every type
			oids[i] = st.OID
		case translate.ParamList:
			st, _ := pgschema.StorageOf(p.Column.Type)
			oids[i] = st.ArrayOID
		}
	}
	return oids
}

// rowArgs holds what varies between the executions of one statement: the
// key of the partition or row, its token, a token range, and the write's
// timestamp and expiry.
type rowArgs struct {
	key        [][]byte
	token      int64
	rangeStart int64
	rangeEnd   int64
	timestamp  int64
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

// addConverted appends a CQL value converted to its column's storage.
func (a *argBuffer) addConverted(c *pgschema.Column, v []byte) error {
	if v == nil {
		a.args = append(a.args, nil)
		return nil
	}
	st, err := pgschema.StorageOf(c.Type)
	if err != nil {
		return err
	}
	if err := pgschema.Validate(c.Type, v); err != nil {
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
func (a *argBuffer) build(e *execution, params []translate.Param, r *rowArgs) error {
	a.reset(len(params))
	for _, p := range params {
		switch p.Kind {
		case translate.ParamNow:
			a.addInt4(e.nowSeconds)
		case translate.ParamToken:
			a.addInt8(r.token)
		case translate.ParamRangeStart:
			a.addInt8(r.rangeStart)
		case translate.ParamRangeEnd:
			a.addInt8(r.rangeEnd)
		case translate.ParamKey:
			if err := a.addConverted(p.Column, r.key[p.Key]); err != nil {
				return err
			}
		case translate.ParamValue:
			v, unset := e.bound.Get(p.Value)
			if unset {
				if p.Column.IsKey() {
					return invalidf("Invalid unset value for column %s", p.Column.Name)
				}
				v = nil // an unset cell is left alone: its write time is null too
			}
			if err := a.addConverted(p.Column, v); err != nil {
				return err
			}
		case translate.ParamList:
			if err := a.addList(e, p); err != nil {
				return err
			}
		case translate.ParamLimit:
			v, _ := e.bound.Get(p.Value)
			a.addInt8(int64(int32(binary.BigEndian.Uint32(v))))
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
		}
	}
	return nil
}

// unsetCell reports whether a write-time or expiry parameter belongs to a
// cell whose value the client left unset.
func (e *execution) unsetCell(p translate.Param) bool {
	if !p.Cell {
		return false
	}
	_, unset := e.bound.Get(p.Value)
	return unset
}

// addList appends a one-dimensional Postgres array of the column's storage
// type, holding an IN list's values.
func (a *argBuffer) addList(e *execution, p translate.Param) error {
	st, err := pgschema.StorageOf(p.Column.Type)
	if err != nil {
		return err
	}
	values, err := e.listValues(p.Values, p.ListMarker, p.Column)
	if err != nil {
		return err
	}
	// Header: dimensions, has-nulls flag, element type, then the length
	// and lower bound of the one dimension.
	var elems [][]byte
	tmp := argBuffer{}
	for _, v := range values {
		if err := tmp.addConverted(p.Column, v); err != nil {
			return err
		}
	}
	elems = tmp.args
	start := len(a.arena)
	a.arena = binary.BigEndian.AppendUint32(a.arena, 1)
	a.arena = binary.BigEndian.AppendUint32(a.arena, 0)
	a.arena = binary.BigEndian.AppendUint32(a.arena, st.OID)
	a.arena = binary.BigEndian.AppendUint32(a.arena, uint32(len(elems)))
	a.arena = binary.BigEndian.AppendUint32(a.arena, 1)
	for _, el := range elems {
		a.arena = binary.BigEndian.AppendUint32(a.arena, uint32(len(el)))
		a.arena = append(a.arena, el...)
	}
	a.args = append(a.args, a.arena[start:len(a.arena):len(a.arena)])
	return nil
}
