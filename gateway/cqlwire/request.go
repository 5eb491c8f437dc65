package cqlwire

import "errors"

// Query parameter flags of QUERY, EXECUTE and BATCH: a byte up to v4,
// an int from v5, which adds the keyspace and now_in_seconds.
const (
	QfValues            = 0x01
	QfSkipMetadata      = 0x02
	QfPageSize          = 0x04
	qfPagingState       = 0x08
	qfSerialConsistency = 0x10
	qfTimestamp         = 0x20
	QfNamedValues       = 0x40
	qfKeyspace          = 0x80
	qfNowInSeconds      = 0x100
)

// QueryParams holds the parameters of a QUERY or EXECUTE, decoded without
// copying: values are sub-slices of the request body. It is reused between
// requests, so decoding allocates only when a request has more values than
// any before it.
type QueryParams struct {
	Consistency uint16
	Flags       uint32
	Values      [][]byte
	// Unset marks unset values; nil when none is.
	Unset             []bool
	Names             [][]byte
	PageSize          int32
	PagingState       []byte
	SerialConsistency uint16
	Timestamp         int64
	HasTimestamp      bool
	// Keyspace is the keyspace the request names (v5), nil when it names
	// none.
	Keyspace []byte
	// NowInSeconds, when HasNow, is the request's clock (v5): what TTLs
	// count from and cell expiry is judged against.
	NowInSeconds int32
	HasNow       bool
	unsetBuf     []bool
}

func (q *QueryParams) SkipMetadata() bool { return q.Flags&QfSkipMetadata != 0 }

// QueryParams reads <query_parameters> as QUERY and EXECUTE carry
// them after the query string or statement id, in protocol version v.
func (d *Decoder) QueryParams(q *QueryParams, v byte) {
	q.Consistency = d.Short()
	q.Flags = d.flags(v)
	q.Values, q.Unset, q.Names = q.Values[:0], nil, q.Names[:0]
	if q.Flags&QfValues != 0 {
		n := int(d.Short())
		for i := 0; i < n && d.Err == nil; i++ {
			if q.Flags&QfNamedValues != 0 {
				q.Names = append(q.Names, d.StringBytes())
			}
			v, unset := d.Value()
			q.Values = append(q.Values, v)
			if unset {
				q.markUnset(i)
			}
		}
	}
	q.PageSize, q.PagingState = -1, nil
	if q.Flags&QfPageSize != 0 {
		q.PageSize = d.Int()
	}
	if q.Flags&qfPagingState != 0 {
		q.PagingState, _ = d.Value()
	}
	q.SerialConsistency = 0
	if q.Flags&qfSerialConsistency != 0 {
		q.SerialConsistency = d.Short()
	}
	q.HasTimestamp = q.Flags&qfTimestamp != 0
	if q.HasTimestamp {
		q.Timestamp = d.Long()
	}
	d.v5Params(q)
}

// flags reads query flags: a byte before v5, an int from it.
func (d *Decoder) flags(v byte) uint32 {
	if v >= 5 {
		return uint32(d.Int())
	}
	return uint32(d.Byte())
}

// v5Params reads the keyspace and now_in_seconds that end a v5 QUERY,
// EXECUTE or BATCH.
func (d *Decoder) v5Params(q *QueryParams) {
	q.Keyspace, q.HasNow = nil, false
	if q.Flags&qfKeyspace != 0 {
		q.Keyspace = d.StringBytes()
	}
	if q.Flags&qfNowInSeconds != 0 {
		q.NowInSeconds, q.HasNow = d.Int(), true
	}
}

// markUnset records that value i is unset.
func (q *QueryParams) markUnset(i int) {
	if q.Unset == nil {
		q.Unset = q.unsetBuf[:0]
	}
	for len(q.Unset) <= i {
		q.Unset = append(q.Unset, false)
	}
	q.Unset[i] = true
	q.unsetBuf = q.Unset
}

// UnsetAt reports whether value i is unset.
func (q *QueryParams) UnsetAt(i int) bool { return i < len(q.Unset) && q.Unset[i] }

// BatchParams holds a BATCH request.
type BatchParams struct {
	Kind  byte
	Items []batchItem
	QueryParams
}

// batchItem is one statement of a batch: query text or prepared id, and
// its values.
type batchItem struct {
	Query  []byte
	Id     []byte
	Values [][]byte
	Unset  []bool
}

var errNamedBatchValues = errors.New("named values in BATCH are not supported by this protocol version")

// Batch reads a BATCH body in protocol version v.
func (d *Decoder) Batch(b *BatchParams, v byte) {
	b.Kind = d.Byte()
	n := int(d.Short())
	b.Items = b.Items[:0]
	for i := 0; i < n && d.Err == nil; i++ {
		var it batchItem
		switch d.Byte() {
		case 0:
			it.Query = d.LongString()
		case 1:
			it.Id = d.ShortBytes()
		default:
			d.Fail(errors.New("invalid batch statement kind"))
		}
		nv := int(d.Short())
		for j := 0; j < nv && d.Err == nil; j++ {
			v, unset := d.Value()
			it.Values = append(it.Values, v)
			if unset {
				for len(it.Unset) <= j {
					it.Unset = append(it.Unset, false)
				}
				it.Unset[j] = true
			}
		}
		b.Items = append(b.Items, it)
	}
	b.Consistency = d.Short()
	b.Flags = d.flags(v)
	if b.Flags&QfNamedValues != 0 {
		d.Fail(errNamedBatchValues)
	}
	if b.Flags&qfSerialConsistency != 0 {
		b.SerialConsistency = d.Short()
	}
	b.HasTimestamp = b.Flags&qfTimestamp != 0
	if b.HasTimestamp {
		b.Timestamp = d.Long()
	}
	d.v5Params(&b.QueryParams)
}

// WithTimestamp returns the QUERY, EXECUTE or BATCH body b, of protocol
// version v, given the default timestamp ts: a gateway writing to two
// clusters gives both the one timestamp. It returns b itself, and false,
// when b carries a timestamp already, or cannot be read (the request then
// fails as it would have).
func WithTimestamp(op, v byte, b []byte, ts int64) ([]byte, bool) {
	d := Decoder{B: b}
	switch op {
	case OpQuery:
		d.LongString()
	case OpExecute:
		d.ShortBytes()
		if v >= 5 {
			d.ShortBytes() // result_metadata_id
		}
	case OpBatch:
		d.Byte()
		for n := d.Short(); n > 0 && d.Err == nil; n-- {
			if d.Byte() == 0 {
				d.LongString()
			} else {
				d.ShortBytes()
			}
			for nv := d.Short(); nv > 0 && d.Err == nil; nv-- {
				d.Value()
			}
		}
	default:
		return b, false
	}
	d.Short() // consistency
	flagsAt := len(b) - len(d.B)
	flags := d.flags(v)
	flagsEnd := len(b) - len(d.B)
	if op != OpBatch {
		if flags&QfValues != 0 {
			for n := d.Short(); n > 0 && d.Err == nil; n-- {
				if flags&QfNamedValues != 0 {
					d.StringBytes()
				}
				d.Value()
			}
		}
		if flags&QfPageSize != 0 {
			d.Int()
		}
		if flags&qfPagingState != 0 {
			d.Value()
		}
	}
	if flags&qfSerialConsistency != 0 {
		d.Short()
	}
	if d.Err != nil || flags&qfTimestamp != 0 {
		return b, false
	}
	at := len(b) - len(d.B)
	out := make([]byte, 0, len(b)+8)
	out = append(out, b[:flagsAt]...)
	if flags |= qfTimestamp; v >= 5 {
		out = AppendInt(out, int32(flags))
	} else {
		out = append(out, byte(flags))
	}
	out = append(out, b[flagsEnd:at]...)
	out = appendLong(out, ts)
	return append(out, b[at:]...), true
}
