package exec

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate"
)

// rowWriter turns the rows a SELECT reads, as slot values, into its Rows
// result: it applies PER PARTITION LIMIT, folds groups for aggregates,
// sorts the rows of several partitions for ORDER BY, computes the outputs
// and encodes them, up to LIMIT.
type rowWriter struct {
	e    *Execution
	st   *Statement
	plan *translate.Select
	out  *[]byte
	// rows counts the rows written; limit and perPartition are -1 when
	// not given.
	rows         int
	limit        int
	perPartition int
	ctx          translate.EvalContext
	// vals and conv hold one row's slot values in CQL form.
	vals [][]byte
	conv []byte
	// partition and inPartition track PER PARTITION LIMIT.
	partition   [][]byte
	inPartition int
	// group folds the current group of an aggregate query, whose key is
	// groupKey and stored token groupToken (scans); groups counts the
	// groups started.
	group      *translate.Group
	groupKey   [][]byte
	groupToken int64
	groups     int
	// sorted collects rows to sort before writing (IN with ORDER BY).
	sorted [][][]byte
	outs   [][]byte
	// best keeps an ANN query's LIMIT most similar rows so far.
	best *annBest

	// page is the page size, -1 when the query is not paged. Once the page
	// is full, last is the position of its last row or group; next is set
	// once a row beyond the page shows that there is more, and says where
	// the next page starts: after last.
	page int
	last position
	next *pageState
	// metaAt and countAt are where the result's metadata and row count
	// start in out.
	metaAt, countAt int
}

// newRowWriter returns the execution's row writer, ready for a SELECT;
// the buffers of the execution's previous one are kept.
func newRowWriter(e *Execution, st *Statement, p *translate.Select, out *[]byte, limit, perPartition int) *rowWriter {
	w := &e.rw
	vals, conv, outs := w.vals[:0], w.conv[:0], w.outs[:0]
	*w = rowWriter{e: e, st: st, plan: p, out: out, limit: limit, perPartition: perPartition,
		ctx: translate.NewEvalContext(e.Now), page: -1, vals: vals, conv: conv, outs: outs}
	return w
}

// clear drops the rows the writer refers to, keeping its buffers for the
// next execution, which newRowWriter readies. vals and outs grow only by
// append from empty, by one row's values: their lengths cover every value
// they held since the last clear.
func (w *rowWriter) clear() {
	if w.e == nil {
		return // not used since the last clear
	}
	clear(w.vals)
	clear(w.outs)
	w.e, w.st, w.plan, w.out, w.partition, w.group, w.groupKey, w.sorted, w.next = nil, nil, nil, nil, nil, nil, nil, nil, nil
	w.best = nil
	w.last = position{}
}

// resume starts the writer where a paging state says the page starts:
// PER PARTITION LIMIT goes on counting in the position's partition, which
// the page may go on reading.
func (w *rowWriter) resume(s *pageState) {
	if w.perPartition > 0 {
		w.partition, w.inPartition = s.key, int(s.inPartition)
	}
}

// full reports whether LIMIT has been reached.
func (w *rowWriter) full() bool { return w.limit >= 0 && w.rows >= w.limit }

// done reports whether the writer wants no more rows: LIMIT is reached, or
// the page is and a row beyond it has been seen.
func (w *rowWriter) done() bool {
	return w.next != nil || w.full() && len(w.plan.SortSlots) == 0 && !w.plan.Aggregate
}

// pageFull reports whether the page holds all the rows (or groups) it can.
func (w *rowWriter) pageFull() bool { return w.page > 0 && w.rows >= w.page }

// Row implements sharding.RowSink: it converts one row from Postgres's
// binary form to CQL's and processes it.
func (w *rowWriter) Row(values [][]byte) error {
	if w.done() {
		return nil
	}
	if err := convertSlots(w.st, values, &w.vals, &w.conv); err != nil {
		return err
	}
	return w.accept(w.vals)
}

// convertSlots converts a row's slot values into vals, using conv as the
// arena for converted values.
func convertSlots(st *Statement, values [][]byte, vals *[][]byte, conv *[]byte) error {
	// Size the arena so that no conversion moves it: converted values are
	// at most a few bytes longer than Postgres's.
	need := 0
	for _, v := range values {
		need += len(v)*2 + 16
	}
	if cap(*conv) < need {
		*conv = make([]byte, 0, need)
	}
	*conv, *vals = (*conv)[:0], (*vals)[:0]
	for i, v := range values {
		if f := st.slotConv[i]; f != nil && len(v) > 0 {
			start := len(*conv)
			var err error
			if *conv, err = f(*conv, v); err != nil {
				return err
			}
			v = (*conv)[start:len(*conv):len(*conv)]
		}
		*vals = append(*vals, v)
	}
	return nil
}

// accept processes one row of slot values in CQL form.
func (w *rowWriter) accept(vals [][]byte) error {
	if w.done() {
		return nil
	}
	return w.process(vals)
}

// process applies PER PARTITION LIMIT to a row, then folds, keeps or
// writes it. A row that would start the next page ends this one instead.
func (w *rowWriter) process(vals [][]byte) error {
	p := w.plan
	if p.Aggregate {
		return w.fold(vals)
	}
	if p.ANN != nil {
		return w.keepBest(vals)
	}
	if w.partitionFull(vals) {
		return nil
	}
	if w.pageFull() && !w.full() {
		w.next = w.nextPage()
		return nil
	}
	w.countIn(vals)
	if len(p.SortSlots) > 0 {
		w.sorted = append(w.sorted, copyValues(vals, nil))
		return nil
	}
	if err := w.emit(vals); err != nil {
		return err
	}
	if w.page > 0 && w.rows == w.page {
		w.markRow(vals)
	}
	return nil
}

// markRow records a row as the page's last: the next page starts after
// it. Its position holds the stored token of a scan, the partition key
// and the clustering columns the query's positions record, down to the
// first null: the row of a partition holding only static data has none,
// and the page after it starts at the next partition.
func (w *rowWriter) markRow(vals [][]byte) {
	p := w.plan
	w.last = position{key: copyValues(vals, p.PartitionSlots)}
	if p.TokenSlot >= 0 {
		w.last.token = int8Of(vals[p.TokenSlot])
	}
	for _, s := range p.PositionSlots {
		if vals[s] == nil {
			break
		}
		w.last.clustering = append(w.last.clustering, bytes.Clone(vals[s]))
	}
}

// markGroup records the group just written as the page's last: its key
// is the partition key and the clustering prefix a position records.
func (w *rowWriter) markGroup() {
	n := len(w.plan.PartitionSlots)
	w.last = position{token: w.groupToken, key: w.groupKey[:n:n]}
	for _, v := range w.groupKey[n:] {
		if v == nil {
			break
		}
		w.last.clustering = append(w.last.clustering, v)
	}
}

// int8Of reads a Postgres bigint in binary form, 0 for null.
func int8Of(v []byte) int64 {
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// partitionFull reports whether the row's partition has had all the rows
// (or, with GROUP BY, groups) PER PARTITION LIMIT lets through.
func (w *rowWriter) partitionFull(vals [][]byte) bool {
	return w.perPartition > 0 && w.partition != nil && w.inPartition >= w.perPartition &&
		sameValues(vals, w.plan.PartitionSlots, w.partition)
}

// countIn counts a row (or group) of its partition for PER PARTITION LIMIT.
func (w *rowWriter) countIn(vals [][]byte) {
	if w.perPartition <= 0 {
		return
	}
	if w.partition == nil || !sameValues(vals, w.plan.PartitionSlots, w.partition) {
		w.partition, w.inPartition = copyValues(vals, w.plan.PartitionSlots), 0
	}
	w.inPartition++
}

// nextPage is where the page after this one starts: after its last row
// or group. With PER PARTITION LIMIT the state carries the count of the
// position's partition, and once that partition has given all it may, the
// next page starts after the whole partition instead of reading on
// through rows it would leave out.
func (w *rowWriter) nextPage() *pageState {
	s := &pageState{position: w.last, remaining: -1}
	if w.limit >= 0 {
		s.remaining = int32(w.limit - w.rows)
	}
	if w.perPartition > 0 {
		s.inPartition = int32(w.inPartition)
		if w.inPartition >= w.perPartition {
			s.clustering = nil
		}
	}
	return s
}

// fold adds a row to its group, writing out the previous group when the
// row starts a new one. With GROUP BY, PER PARTITION LIMIT and the page
// count groups: a group beyond them is left out, or starts the next page.
func (w *rowWriter) fold(vals [][]byte) error {
	p := w.plan
	if w.group != nil && len(p.GroupSlots) > 0 && !sameValues(vals, p.GroupSlots, w.groupKey) {
		if err := w.flushGroup(); err != nil {
			return err
		}
	}
	if w.group == nil {
		if w.partitionFull(vals) {
			return nil
		}
		if w.pageFull() && !w.full() {
			w.next = w.nextPage()
			return nil
		}
		w.countIn(vals)
		w.group = p.NewGroup()
		w.groupKey = copyValues(vals, p.GroupSlots)
		if p.TokenSlot >= 0 {
			w.groupToken = int8Of(vals[p.TokenSlot])
		}
		w.groups++
	}
	return w.group.Add(vals, &w.e.bound, &w.ctx)
}

func (w *rowWriter) flushGroup() error {
	outs, err := w.group.Result()
	w.group = nil
	if err != nil {
		return err
	}
	if err := w.write(outs); err != nil {
		return err
	}
	if w.page > 0 && w.rows == w.page && len(w.plan.GroupSlots) > 0 {
		w.markGroup()
	}
	return nil
}

// finish writes what the writer still holds: the last group, an empty
// aggregate's one row, or the sorted rows.
func (w *rowWriter) finish() error {
	p := w.plan
	if p.Aggregate {
		if w.group == nil && w.groups == 0 && len(p.GroupSlots) == 0 {
			w.group = p.NewGroup() // aggregates over no rows still give one row
		}
		if w.group != nil {
			return w.flushGroup()
		}
		return nil
	}
	if w.best != nil {
		for _, row := range w.best.sorted() {
			if err := w.emit(row); err != nil {
				return err
			}
		}
		return nil
	}
	if len(p.SortSlots) > 0 {
		slices.SortStableFunc(w.sorted, func(a, b [][]byte) int {
			for i, s := range p.SortSlots {
				t := p.Slots[s].Column.Type
				if c := pgschema.Compare(t, a[s], b[s]); c != 0 {
					if p.SortDesc[i] {
						return -c
					}
					return c
				}
			}
			return 0
		})
		for _, row := range w.sorted {
			if err := w.emit(row); err != nil {
				return err
			}
		}
	}
	return nil
}

// emit computes a row's outputs and writes them.
func (w *rowWriter) emit(vals [][]byte) error {
	if w.full() {
		return nil
	}
	w.outs = w.outs[:0]
	for _, o := range w.plan.Outputs {
		if s, ok := translate.IsPlainSlot(o); ok {
			w.outs = append(w.outs, vals[s])
			continue
		}
		v, err := translate.Eval(o, vals, &w.e.bound, &w.ctx, nil)
		if err != nil {
			return err
		}
		w.outs = append(w.outs, v)
	}
	return w.write(w.outs)
}

// write encodes one result row.
func (w *rowWriter) write(outs [][]byte) error {
	if w.full() {
		return nil
	}
	if c := w.e.collected; c != nil {
		row := make([][]byte, len(outs))
		for i, v := range outs {
			if v != nil {
				row[i] = slices.Clone(v)
			}
		}
		*c = append(*c, row)
		w.rows++
		return nil
	}
	if w.plan.JSON {
		doc, err := jsonRow(w.plan, outs)
		if err != nil {
			return err
		}
		*w.out = cqlwire.AppendBytes(*w.out, doc)
	} else {
		for _, v := range outs {
			*w.out = cqlwire.AppendBytes(*w.out, v)
		}
	}
	w.rows++
	return nil
}

// jsonRow renders a row of SELECT JSON: {"name": value, ...} in Cassandra's
// layout.
func jsonRow(p *translate.Select, outs [][]byte) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, v := range outs {
		if i > 0 {
			b.WriteString(", ")
		}
		key, _ := pgschema.ToJSON(pgschema.Scalar(pgschema.Text), []byte(p.JSONNames[i]))
		b.Write(key)
		b.WriteString(": ")
		if v == nil {
			b.WriteString("null")
			continue
		}
		j, err := pgschema.ToJSON(p.Outputs[i].Type(), v)
		if err != nil {
			return nil, err
		}
		b.Write(j)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// rowBuffer keeps the rows of one partition or token range, converted to
// CQL form, until they can be processed in order with the others.
type rowBuffer struct {
	w    *rowWriter
	data []byte
	vals [][]byte
	conv []byte
	rows int
}

// Row implements sharding.RowSink.
func (b *rowBuffer) Row(values [][]byte) error {
	w := b.w
	if err := convertSlots(w.st, values, &b.vals, &b.conv); err != nil {
		return err
	}
	for _, v := range b.vals {
		b.data = cqlwire.AppendBytes(b.data, v)
	}
	b.rows++
	return nil
}

// replay processes the buffered rows of parts (partitions, or token
// ranges), in order.
func (w *rowWriter) replay(parts []*rowBuffer) error {
	vals := make([][]byte, len(w.plan.Slots))
	for _, part := range parts {
		d := cqlwire.Decoder{B: part.data}
		for n := 0; n < part.rows; n++ {
			for i := range vals {
				vals[i], _ = d.Value()
			}
			if err := w.accept(vals); err != nil {
				return err
			}
		}
	}
	return nil
}

func sameValues(vals [][]byte, slots []int, key [][]byte) bool {
	for i, s := range slots {
		if !bytes.Equal(vals[s], key[i]) {
			return false
		}
	}
	return true
}

// copyValues copies the values at slots (all of them when slots is nil).
func copyValues(vals [][]byte, slots []int) [][]byte {
	if slots == nil {
		out := make([][]byte, len(vals))
		for i, v := range vals {
			if v != nil {
				out[i] = append([]byte{}, v...)
			}
		}
		return out
	}
	out := make([][]byte, len(slots))
	for i, s := range slots {
		if vals[s] != nil {
			out[i] = append([]byte{}, vals[s]...)
		}
	}
	return out
}
