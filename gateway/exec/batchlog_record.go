package exec

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cqlpg/cqlpg/sharding"
)

// batchRecord is what the batch log keeps of a batch: its writes, grouped
// by the shard that applies them, as the SQL statements and parameters the
// gateway sends. Replaying one needs neither the parser nor the schema,
// and repeats the writes exactly: the parameters already hold everything
// the gateway computed (keys, tokens, the batch's timestamp, expiry times,
// the request's clock).
type batchRecord struct {
	parts []batchPart
}

// batchPart is the writes one shard applies, in one transaction.
type batchPart struct {
	shard [16]byte // the shard's host id
	steps []sharding.Step
}

// batchRecordVersion is the first byte of an encoded record. Its layout,
// with every count and index an unsigned varint:
//
//	version
//	statements: count, then each: SQL length, SQL, parameter count, OIDs
//	parts: count, then each: 16-byte host id, step count, then each step:
//	    statement index, format count, formats, argument count, then each
//	    argument: 0 for NULL or length+1, then its bytes
const batchRecordVersion = 1

// appendBatchRecord encodes a record, writing each distinct statement once.
func appendBatchRecord(b []byte, r *batchRecord) []byte {
	b = append(b, batchRecordVersion)
	index := map[*sharding.Statement]int{}
	var stmts []*sharding.Statement
	for _, p := range r.parts {
		for _, s := range p.steps {
			if _, ok := index[s.Stmt]; !ok {
				index[s.Stmt] = len(stmts)
				stmts = append(stmts, s.Stmt)
			}
		}
	}
	b = binary.AppendUvarint(b, uint64(len(stmts)))
	for _, s := range stmts {
		b = binary.AppendUvarint(b, uint64(len(s.SQL)))
		b = append(b, s.SQL...)
		b = binary.AppendUvarint(b, uint64(len(s.ParamOIDs)))
		for _, oid := range s.ParamOIDs {
			b = binary.AppendUvarint(b, uint64(oid))
		}
	}
	b = binary.AppendUvarint(b, uint64(len(r.parts)))
	for _, p := range r.parts {
		b = append(b, p.shard[:]...)
		b = binary.AppendUvarint(b, uint64(len(p.steps)))
		for _, s := range p.steps {
			b = binary.AppendUvarint(b, uint64(index[s.Stmt]))
			b = binary.AppendUvarint(b, uint64(len(s.Formats)))
			for _, f := range s.Formats {
				b = binary.AppendUvarint(b, uint64(uint16(f)))
			}
			b = binary.AppendUvarint(b, uint64(len(s.Args)))
			for _, a := range s.Args {
				if a == nil {
					b = append(b, 0)
					continue
				}
				b = binary.AppendUvarint(b, uint64(len(a))+1)
				b = append(b, a...)
			}
		}
	}
	return b
}

var errBatchRecord = errors.New("malformed batch log record")

// recordReader decodes a record, remembering the first error.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errBatchRecord
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items each at least size bytes long, refusing
// counts the rest of the record cannot hold.
func (r *recordReader) count(size int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/size) {
		r.err = errBatchRecord
		return 0
	}
	return int(n)
}

func (r *recordReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = errBatchRecord
		return nil
	}
	v := make([]byte, 0, n)
	if n > 0 {
		v = r.b[:n:n]
	}
	r.b = r.b[n:]
	return v
}

// decodeBatchRecord decodes a record; its arguments share b's memory.
func decodeBatchRecord(b []byte) (*batchRecord, error) {
	if len(b) == 0 || b[0] != batchRecordVersion {
		return nil, fmt.Errorf("%w: unknown version", errBatchRecord)
	}
	r := recordReader{b: b[1:]}
	stmts := make([]*sharding.Statement, r.count(2))
	for i := range stmts {
		sql := string(r.bytes(r.count(1)))
		oids := make([]uint32, r.count(1))
		for j := range oids {
			oids[j] = uint32(r.uvarint())
		}
		stmts[i] = sharding.NewStatement(sql, oids)
	}
	rec := &batchRecord{parts: make([]batchPart, r.count(17))}
	for i := range rec.parts {
		p := &rec.parts[i]
		copy(p.shard[:], r.bytes(16))
		p.steps = make([]sharding.Step, r.count(3))
		for j := range p.steps {
			s := &p.steps[j]
			if k := r.uvarint(); k < uint64(len(stmts)) {
				s.Stmt = stmts[k]
			} else {
				r.err = errBatchRecord
			}
			s.Formats = make([]int16, r.count(1))
			for f := range s.Formats {
				s.Formats[f] = int16(r.uvarint())
			}
			s.Args = make([][]byte, r.count(1))
			for a := range s.Args {
				if n := r.uvarint(); n > 0 {
					s.Args[a] = r.bytes(int(min(n-1, uint64(len(r.b)+1))))
				}
			}
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errBatchRecord
	}
	if r.err != nil {
		return nil, r.err
	}
	return rec, nil
}
