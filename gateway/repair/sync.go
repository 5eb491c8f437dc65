package repair

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// The engine of anti-entropy repair: it brings the replicas of one token
// range of one table to the reconciled union of their data. It compares
// digests of the range split into buckets (one statement per replica,
// reading the range once) and goes down into the buckets that differ:
// a bucket small enough on every replica is read whole from each, the
// rows are compared in Go, and each replica gets, in one transaction, only
// the rows it lacks or holds otherwise (pgschema.MergeSQL reconciles them
// with its own). A bucket too large to read at once is split again, or,
// when it is one token or a replica holds nothing there, copied in pages.
// Ranges are inclusive here, [lo, hi], as pgschema's statements take them.
//
// A replica that fails or does not answer within the timeout is left out
// of the range; one that is unreachable is left out of the rest of the
// run too, so that a dead shard costs one timeout, not one per range.

// reconcile repairs [lo, hi] of a table among replicas, and reports
// whether they differed. bulked is set once a range has been copied in
// bulk, which is not done twice.
func (r *repairRun) reconcile(ctx context.Context, st *repairStmts, lo, hi int64, replicas []int, bulked bool) (bool, error) {
	replicas = r.up(replicas)
	if len(replicas) < 2 {
		return false, nil
	}
	starts := bucketStarts(lo, hi, repairBuckets)
	sums := make([]map[digestKey]digestRow, len(replicas))
	answered, err := r.each(ctx, replicas, func(i, shard int) (err error) {
		sums[i], err = r.digest(ctx, shard, st, lo, hi, starts)
		return err
	})
	if err != nil || len(answered) < 2 {
		return false, err
	}
	live := pick(replicas, answered)
	got := make([]map[digestKey]digestRow, len(answered))
	for i, a := range answered {
		got[i] = sums[a]
	}
	// What each bucket holds: whether the replicas agree, the rows of
	// its largest part on the fullest replica, each replica's rows, and
	// the tokens its rows lie between on every replica.
	type bucket struct {
		same        bool
		largest     int64
		totals      []int64
		first, last int64
	}
	buckets := make([]bucket, len(starts))
	span, spanRows := [2]int{-1, -1}, int64(0)
	for b := range buckets {
		k := &buckets[b]
		k.same, k.totals, k.first, k.last = true, make([]int64, len(live)), math.MaxInt64, math.MinInt64
		for _, p := range st.parts {
			key := digestKey{int16(p), int32(b + 1)}
			for i, m := range got {
				d, ok := m[key]
				if d.sum != got[0][key].sum {
					k.same = false
				}
				if ok {
					k.largest = max(k.largest, d.sum.rows)
					k.totals[i] += d.sum.rows
					k.first, k.last = min(k.first, d.first), max(k.last, d.last)
				}
			}
		}
		if !k.same {
			if span[0] < 0 {
				span[0] = b
			}
			span[1] = b
		}
	}
	if span[0] < 0 {
		return false, nil
	}
	// The buckets that differ, and those between them, small enough
	// together to be read at once: one read and one write per replica.
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for _, k := range buckets[span[0] : span[1]+1] {
		spanRows += k.largest
		if k.largest > 0 {
			first, last = min(first, k.first), max(last, k.last)
		}
	}
	if spanRows <= int64(r.leafRows) {
		return true, r.leaf(ctx, st, first, last, live, r.leafRows)
	}
	for _, k := range buckets {
		if k.same {
			continue
		}
		if err := r.settle(ctx, st, k.first, k.last, live, k.largest, k.totals, bulked); err != nil {
			return true, err
		}
	}
	return true, nil
}

// settle repairs a bucket whose replicas differ, given the rows of its
// largest part on the fullest replica and each replica's rows; its rows
// lie in [first, last] on every replica.
func (r *repairRun) settle(ctx context.Context, st *repairStmts, first, last int64, live []int, largest int64, totals []int64, bulked bool) error {
	fullest, empty := 0, []int(nil)
	for i, n := range totals {
		if n > totals[fullest] {
			fullest = i
		}
		if n == 0 {
			empty = append(empty, live[i])
		}
	}
	var others []int
	for i, s := range live {
		if i != fullest {
			others = append(others, s)
		}
	}
	switch {
	case largest <= int64(r.leafRows):
		return r.leaf(ctx, st, first, last, live, r.leafRows)
	case !bulked && (len(empty) > 0 || first == last):
		// A replica holding nothing here (new, or long down) would have
		// the range split down to its rows, and a partition too large to
		// read at once cannot be split: copy the fullest replica's rows
		// to the others, then settle the rest.
		dsts := empty
		if first == last {
			dsts = others
		}
		if err := r.bulk(ctx, st, first, last, []int{live[fullest]}, dsts); err != nil {
			return err
		}
		_, err := r.reconcile(ctx, st, first, last, live, true)
		return err
	case first == last:
		// Still differing after that: every replica's rows to every
		// other.
		return r.bulk(ctx, st, first, last, live, live)
	}
	_, err := r.reconcile(ctx, st, first, last, live, bulked)
	return err
}

// repairRow is one row of a part as a replica sent it: its key, and its
// JSON text, which is the same on replicas holding the same row.
type repairRow struct {
	key string
	raw json.RawMessage
}

// parseRows splits a json array of rows, keying each by the named
// columns.
func parseRows(data []byte, key []string) ([]repairRow, error) {
	if data == nil {
		return nil, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, err
	}
	rows := make([]repairRow, len(raws))
	for i, raw := range raws {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, err
		}
		var k []byte
		for _, name := range key {
			k = append(append(k, fields[name]...), 0)
		}
		rows[i] = repairRow{key: string(k), raw: raw}
	}
	return rows, nil
}

// leaf repairs [lo, hi] among replicas by reading it whole from each,
// comparing the rows, and sending each replica the rows it lacks or holds
// otherwise: one statement per replica to read and, where something
// differs, one transaction per replica to write. When a replica holds
// more than limit rows of a part there, the range is copied in pages
// instead.
func (r *repairRun) leaf(ctx context.Context, st *repairStmts, lo, hi int64, replicas []int, limit int) error {
	replicas = r.up(replicas)
	if len(replicas) < 2 {
		return nil
	}
	read := make([][pgschema.NumRepairParts][]repairRow, len(replicas))
	var overflow atomic.Bool
	answered, err := r.each(ctx, replicas, func(i, shard int) error {
		rows, err := r.exec(ctx, shard, sharding.Step{Stmt: st.read,
			Args: [][]byte{textInt(lo), textInt(hi), textInt(int64(limit) + 1)}})
		if err != nil {
			return err
		}
		row := rows[len(rows)-1]
		for _, p := range st.parts {
			parsed, err := parseRows(row[p], st.key[p])
			if err != nil {
				err = fmt.Errorf("shard %s sent rows that do not parse: %w", r.topo.Shards[shard].Info.Name, err)
				r.fail(shard, err, false)
				return err
			}
			read[i][p] = parsed
			if len(parsed) > limit {
				overflow.Store(true)
			}
		}
		return nil
	})
	if err != nil || len(answered) < 2 {
		return err
	}
	live := pick(replicas, answered)
	if overflow.Load() {
		return r.bulk(ctx, st, lo, hi, live, live)
	}
	have := make([][pgschema.NumRepairParts][]repairRow, len(answered))
	for i, a := range answered {
		have[i] = read[a]
	}
	_, err = r.each(ctx, live, func(i, shard int) error {
		steps, rows := missing(st, have, i)
		if len(steps) == 0 {
			return nil
		}
		if _, err := r.execMerges(ctx, shard, st, steps); err != nil {
			return err
		}
		r.moved.Add(int64(rows))
		for _, s := range steps {
			for _, a := range s.Args {
				r.bytes.Add(int64(len(a)))
			}
		}
		return nil
	})
	return err
}

// missing returns the merge statements that bring the replica at place i
// of have up to the others, and the rows they send: statement n holds,
// of each row that other replicas hold otherwise than i does (or that i
// lacks), the n-th distinct version. Rows of one key go to different
// statements, since one statement cannot change a row twice.
func missing(st *repairStmts, have [][pgschema.NumRepairParts][]repairRow, i int) ([]sharding.Step, int) {
	var versions [][pgschema.NumRepairParts][]json.RawMessage
	sent := 0
	for _, p := range st.parts {
		mine := make(map[string]json.RawMessage, len(have[i][p]))
		for _, row := range have[i][p] {
			mine[row.key] = row.raw
		}
		seen := map[string][]json.RawMessage{}
		for j := range have {
			if j == i {
				continue
			}
			for _, row := range have[j][p] {
				if m, ok := mine[row.key]; ok && string(m) == string(row.raw) {
					continue
				}
				n := 0
				for _, v := range seen[row.key] {
					if string(v) == string(row.raw) {
						n = -1
						break
					}
					n++
				}
				if n < 0 {
					continue
				}
				seen[row.key] = append(seen[row.key], row.raw)
				for len(versions) <= n {
					versions = append(versions, [pgschema.NumRepairParts][]json.RawMessage{})
				}
				versions[n][p] = append(versions[n][p], row.raw)
				sent++
			}
		}
	}
	steps := make([]sharding.Step, len(versions))
	for n, v := range versions {
		args := make([][]byte, pgschema.NumRepairParts)
		for p, rows := range v {
			args[p] = jsonArray(rows)
		}
		steps[n] = sharding.Step{Stmt: st.merge, Args: args}
	}
	return st.locked(steps), sent
}

// jsonArray joins rows into a json array, or returns nil for none.
func jsonArray(rows []json.RawMessage) []byte {
	if len(rows) == 0 {
		return nil
	}
	n := 2
	for _, r := range rows {
		n += len(r) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, r := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return append(b, ']')
}

// bulk copies [lo, hi] from each of srcs to each of dsts but itself, in
// pages, without comparing: for ranges too large to compare row by row.
// Copying is merging, so a page a replica already holds changes nothing.
func (r *repairRun) bulk(ctx context.Context, st *repairStmts, lo, hi int64, srcs, dsts []int) error {
	for _, src := range srcs {
		if err := ctx.Err(); err != nil {
			return err
		}
		var targets []int
		for _, d := range r.up(dsts) {
			if d != src {
				targets = append(targets, d)
			}
		}
		for _, p := range st.parts {
			if len(targets) == 0 || r.isDown(src) {
				break
			}
			var err error
			if targets, err = r.copyPart(ctx, st, p, lo, hi, src, targets); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyPart copies one part of [lo, hi] in pages from src to targets, and
// returns the targets that took every page. It stops early when src
// fails; its error is the context's only.
func (r *repairRun) copyPart(ctx context.Context, st *repairStmts, p pgschema.RepairPart, lo, hi int64, src int, targets []int) ([]int, error) {
	var after []byte
	for {
		args := [][]byte{textInt(lo), textInt(hi), textInt(repairPageRows)}
		if p == pgschema.RepairRows {
			args = append(args, after)
		}
		rows, err := r.exec(ctx, src, sharding.Step{Stmt: st.page[p], Args: args})
		if err != nil {
			return targets, ctx.Err()
		}
		row := rows[len(rows)-1]
		if row[0] == nil {
			return targets, nil
		}
		var page []json.RawMessage
		if err := json.Unmarshal(row[0], &page); err != nil {
			r.fail(src, fmt.Errorf("shard %s sent rows that do not parse: %w", r.topo.Shards[src].Info.Name, err), false)
			return targets, nil
		}
		margs := make([][]byte, pgschema.NumRepairParts)
		margs[p] = row[0]
		done, err := r.each(ctx, targets, func(_, shard int) error {
			_, err := r.execMerges(ctx, shard, st, st.locked([]sharding.Step{{Stmt: st.merge, Args: margs}}))
			return err
		})
		if err != nil {
			return nil, err
		}
		r.moved.Add(int64(len(page) * len(done)))
		r.bytes.Add(int64(len(row[0]) * len(done)))
		if targets = pick(targets, done); len(targets) == 0 {
			return nil, nil
		}
		if p == pgschema.RepairRows {
			if len(page) < repairPageRows {
				return targets, nil
			}
			after = page[len(page)-1]
			continue
		}
		end := int64(binary.BigEndian.Uint64(row[1]))
		if end >= hi {
			return targets, nil
		}
		lo = end + 1
	}
}
