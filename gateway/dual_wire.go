package gateway

import (
	"fmt"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/origin"
)

// What dual writes read of the frames they pass between the sides.

// codeProtocolError is the ERROR code of a protocol version refused.
const codeProtocolError = 0x000A

// errorText reads an ERROR frame's message.
func errorText(frame []byte) string {
	d := cqlwire.Decoder{B: origin.Message(frame)}
	code := d.Int()
	return fmt.Sprintf("%s (code 0x%04x)", d.StringBytes(), code)
}

// errorCode reads an ERROR frame's code.
func errorCode(frame []byte) int32 {
	d := cqlwire.Decoder{B: origin.Message(frame)}
	return d.Int()
}

// codeUnprepared is the ERROR code of an unknown prepared id.
const codeUnprepared = 0x2500

// unpreparedID reads the id an UNPREPARED error names.
func unpreparedID(frame []byte) []byte {
	d := cqlwire.Decoder{B: origin.Message(frame)}
	d.Int()
	d.StringBytes()
	return d.ShortBytes()
}

// appendLongString appends a [long string].
func appendLongString(b []byte, s string) []byte {
	return append(cqlwire.AppendInt(b, int32(len(s))), s...)
}

// queryParamsOne is the parameters of a QUERY at consistency ONE with no
// values.
func queryParamsOne(v byte) []byte {
	const one = 0x0001
	b := cqlwire.AppendShort(nil, one)
	if v >= 5 {
		return cqlwire.AppendInt(b, 0)
	}
	return append(b, 0)
}

// hasPagingState reports whether a QUERY or EXECUTE asks for a page
// after the first.
func hasPagingState(op, v byte, body []byte) bool {
	d := cqlwire.Decoder{B: body}
	if op == cqlwire.OpQuery {
		d.LongString()
	} else {
		d.ShortBytes()
		if v >= 5 {
			d.ShortBytes()
		}
	}
	var q cqlwire.QueryParams
	d.QueryParams(&q, v)
	return d.Err != nil || q.PagingState != nil
}

// rowsOf returns a RESULT Rows frame's rows (their count and their
// cells), past the metadata, whose paging state differs between the
// sides even when the rows do not.
func rowsOf(frame []byte, v byte) ([]byte, bool) {
	if frame[4] != cqlwire.OpResult {
		return nil, false
	}
	d := cqlwire.Decoder{B: origin.Message(frame)}
	if d.Int() != cqlwire.ResultRows {
		return nil, false
	}
	flags, n := d.Int(), d.Int()
	if flags&cqlwire.RowsHasMorePages != 0 {
		d.Value()
	}
	if flags&rowsMetadataChanged != 0 {
		d.ShortBytes()
	}
	if flags&cqlwire.RowsNoMetadata == 0 {
		global := flags&rowsGlobalTableSpec != 0
		if global {
			d.StringBytes()
			d.StringBytes()
		}
		for ; n > 0 && d.Err == nil; n-- {
			if !global {
				d.StringBytes()
				d.StringBytes()
			}
			d.StringBytes()
			skipOption(&d)
		}
	}
	return d.B, d.Err == nil
}

// Rows metadata flags rowsOf reads that the gateway's own results leave
// to cqlwire.
const (
	rowsGlobalTableSpec = 0x0001
	rowsMetadataChanged = 0x0008
)

// skipOption skips a column type, as RESULT metadata gives it.
func skipOption(d *cqlwire.Decoder) {
	switch d.Short() {
	case 0x0000: // custom
		d.StringBytes()
	case 0x0020, 0x0022: // list, set
		skipOption(d)
	case 0x0021: // map
		skipOption(d)
		skipOption(d)
	case 0x0030: // user type
		d.StringBytes()
		d.StringBytes()
		for n := d.Short(); n > 0 && d.Err == nil; n-- {
			d.StringBytes()
			skipOption(d)
		}
	case 0x0031: // tuple
		for n := d.Short(); n > 0 && d.Err == nil; n-- {
			skipOption(d)
		}
	}
}
