package gateway

import "errors"

// Query parameter flags of QUERY, EXECUTE and BATCH: a byte up to v4,
// an int from v5, which adds the keyspace and now_in_seconds.
const (
	qfValues            = 0x01
	qfSkipMetadata      = 0x02
	qfPageSize          = 0x04
	qfPagingState       = 0x08
	qfSerialConsistency = 0x10
	qfTimestamp         = 0x20
	qfNamedValues       = 0x40
	qfKeyspace          = 0x80
	qfNowInSeconds      = 0x100
)

// queryParams holds the parameters of a QUERY or EXECUTE, decoded without
// copying: values are sub-slices of the request body. It is reused between
// requests, so decoding allocates only when a request has more values than
// any before it.
type queryParams struct {
	consistency uint16
	flags       uint32
	values      [][]byte
	// unset marks unset values; nil when none is.
	unset             []bool
	names             [][]byte
	pageSize          int32
	pagingState       []byte
	serialConsistency uint16
	timestamp         int64
	hasTimestamp      bool
	// keyspace is the keyspace the request names (v5), nil when it names
	// none.
	keyspace []byte
	// nowInSeconds, when hasNow, is the request's clock (v5): what TTLs
	// count from and cell expiry is judged against.
	nowInSeconds int32
	hasNow       bool
	unsetBuf     []bool
}

func (q *queryParams) skipMetadata() bool { return q.flags&qfSkipMetadata != 0 }

// queryParams reads <query_parameters> as QUERY and EXECUTE carry
// them after the query string or statement id, in protocol version v.
func (d *decoder) queryParams(q *queryParams, v byte) {
	q.consistency = d.short()
	q.flags = d.flags(v)
	q.values, q.unset, q.names = q.values[:0], nil, q.names[:0]
	if q.flags&qfValues != 0 {
		n := int(d.short())
		for i := 0; i < n && d.err == nil; i++ {
			if q.flags&qfNamedValues != 0 {
				q.names = append(q.names, d.stringBytes())
			}
			v, unset := d.value()
			q.values = append(q.values, v)
			if unset {
				q.markUnset(i)
			}
		}
	}
	q.pageSize, q.pagingState = -1, nil
	if q.flags&qfPageSize != 0 {
		q.pageSize = d.int()
	}
	if q.flags&qfPagingState != 0 {
		q.pagingState, _ = d.value()
	}
	q.serialConsistency = 0
	if q.flags&qfSerialConsistency != 0 {
		q.serialConsistency = d.short()
	}
	q.hasTimestamp = q.flags&qfTimestamp != 0
	if q.hasTimestamp {
		q.timestamp = d.long()
	}
	d.v5Params(q)
}

// flags reads query flags: a byte before v5, an int from it.
func (d *decoder) flags(v byte) uint32 {
	if v >= 5 {
		return uint32(d.int())
	}
	return uint32(d.byte())
}

// v5Params reads the keyspace and now_in_seconds that end a v5 QUERY,
// EXECUTE or BATCH.
func (d *decoder) v5Params(q *queryParams) {
	q.keyspace, q.hasNow = nil, false
	if q.flags&qfKeyspace != 0 {
		q.keyspace = d.stringBytes()
	}
	if q.flags&qfNowInSeconds != 0 {
		q.nowInSeconds, q.hasNow = d.int(), true
	}
}

// markUnset records that value i is unset.
func (q *queryParams) markUnset(i int) {
	if q.unset == nil {
		q.unset = q.unsetBuf[:0]
	}
	for len(q.unset) <= i {
		q.unset = append(q.unset, false)
	}
	q.unset[i] = true
	q.unsetBuf = q.unset
}

// unsetAt reports whether value i is unset.
func (q *queryParams) unsetAt(i int) bool { return i < len(q.unset) && q.unset[i] }

// batchParams holds a BATCH request.
type batchParams struct {
	kind  byte
	items []batchItem
	queryParams
}

// batchItem is one statement of a batch: query text or prepared id, and
// its values.
type batchItem struct {
	query  []byte
	id     []byte
	values [][]byte
	unset  []bool
}

var errNamedBatchValues = errors.New("named values in BATCH are not supported by this protocol version")

// batch reads a BATCH body in protocol version v.
func (d *decoder) batch(b *batchParams, v byte) {
	b.kind = d.byte()
	n := int(d.short())
	b.items = b.items[:0]
	for i := 0; i < n && d.err == nil; i++ {
		var it batchItem
		switch d.byte() {
		case 0:
			it.query = d.longString()
		case 1:
			it.id = d.shortBytes()
		default:
			d.fail(errors.New("invalid batch statement kind"))
		}
		nv := int(d.short())
		for j := 0; j < nv && d.err == nil; j++ {
			v, unset := d.value()
			it.values = append(it.values, v)
			if unset {
				for len(it.unset) <= j {
					it.unset = append(it.unset, false)
				}
				it.unset[j] = true
			}
		}
		b.items = append(b.items, it)
	}
	b.consistency = d.short()
	b.flags = d.flags(v)
	if b.flags&qfNamedValues != 0 {
		d.fail(errNamedBatchValues)
	}
	if b.flags&qfSerialConsistency != 0 {
		b.serialConsistency = d.short()
	}
	b.hasTimestamp = b.flags&qfTimestamp != 0
	if b.hasTimestamp {
		b.timestamp = d.long()
	}
	d.v5Params(&b.queryParams)
}
