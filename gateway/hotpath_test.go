package gateway

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// The hot path without a network or Postgres: a gateway whose shard pools
// run each op in the submitting goroutine, answering reads with canned
// rows in Postgres's binary form, so that what is measured is the
// gateway's own work from an EXECUTE frame's bytes to its RESULT frame:
// decoding, plan look-up, token and replicas, the bound arguments and the
// encoded rows.

// fakeShards answers the ops of a hot-path gateway.
type fakeShards struct {
	mu sync.Mutex
	// rows are the rows every read returns.
	rows [][][]byte
	// ops counts the ops run, and args holds copies of the arguments of
	// the last one, as a connection would send them.
	ops  int
	args [][]byte
	// keep makes run record args.
	keep bool
	// late, when set, takes every op unfinished, as from a shard that
	// does not answer in time.
	late chan *sharding.Op
	// failing, when set, names shards whose connections fail every op,
	// and perShard counts the ops each shard was sent.
	failing  map[int]bool
	perShard [4]int
}

// on returns the run of shard i.
func (f *fakeShards) on(i int) func(*sharding.Op) error {
	return func(op *sharding.Op) error { return f.run(op, i) }
}

// run runs op on shard i, taking the lock once.
func (f *fakeShards) run(op *sharding.Op, i int) error {
	f.mu.Lock()
	f.perShard[i]++
	if f.failing[i] {
		f.mu.Unlock()
		return &sharding.ShardError{Shard: fmt.Sprint(i), Err: io.ErrUnexpectedEOF}
	}
	f.ops++
	if f.keep {
		f.args = f.args[:0]
		for _, a := range op.Args {
			f.args = append(f.args, append([]byte(nil), a...))
		}
	}
	rows, late := f.rows, f.late
	f.mu.Unlock()
	if late != nil {
		late <- op
		return sharding.ErrDeferred
	}
	if op.Rows != nil {
		for _, r := range rows {
			if err := op.Rows.Row(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// hotServer is a gateway on three fake shards with keyspaces rf1 and rf3,
// each holding t (k int PRIMARY KEY, v text), and one started v4
// connection.
type hotServer struct {
	s      *Server
	c      *conn
	shards *fakeShards
}

func newHotServer(tb testing.TB) *hotServer {
	tb.Helper()
	f := &fakeShards{}
	infos := fakeShardInfos(3, 16, func(i int) (string, string, string) { return fmt.Sprintf("pg%d", i), "datacenter1", "rack1" })
	s := newFakeServer(tb, infos, func(i int) *sharding.Pool { return sharding.NewFuncPool(infos[i].Name, f.on(i)) })
	return &hotServer{s: s, c: newFakeConn(s), shards: f}
}

// newFakeConn returns a started v4 connection to s, with no socket.
func newFakeConn(s *Server) *conn {
	c := &conn{srv: s, log: s.log, version: 4, out: make(chan *[]byte, 256), work: make(chan job), closed: make(chan struct{})}
	c.started.Store(true)
	empty := ""
	c.keyspace.Store(&empty)
	return c
}

// fakeShardInfos returns n shards joined to a ring in turn, with vnodes
// tokens each, named and placed by place.
func fakeShardInfos(n, vnodes int, place func(i int) (name, dc, rack string)) []sharding.ShardInfo {
	var infos []sharding.ShardInfo
	var existing [][]sharding.Token
	for i := range n {
		toks := sharding.AllocateTokens(existing, vnodes, int64(i))
		existing = append(existing, toks)
		name, dc, rack := place(i)
		infos = append(infos, sharding.ShardInfo{HostID: [16]byte{byte(i + 1)}, Name: name, DC: dc, Rack: rack, Tokens: toks})
	}
	return infos
}

// newFakeServer returns a gateway on the shards infos, whose pools pool
// makes, with keyspaces rf1 and rf3 (SimpleStrategy) each holding
// t (k int PRIMARY KEY, v text).
func newFakeServer(tb testing.TB, infos []sharding.ShardInfo, pool func(i int) *sharding.Pool) *Server {
	tb.Helper()
	cfg := Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	cfg.setDefaults()
	s := newServer(cfg)
	ring, err := sharding.NewRing(infos)
	if err != nil {
		tb.Fatal(err)
	}
	var shards []*sharding.Shard
	for i, in := range infos {
		shards = append(shards, &sharding.Shard{Info: in, Pool: pool(i)})
	}
	keyspace := func(name string, rf int) *pgschema.Keyspace {
		cols := []*pgschema.Column{
			{Name: "k", Type: pgschema.Scalar(pgschema.Int), Kind: pgschema.PartitionKey, Position: 0},
			{Name: "v", Type: pgschema.Scalar(pgschema.Text), Kind: pgschema.Regular, Position: -1},
		}
		t := pgschema.NewTable(name, "t", [16]byte{byte(rf)}, cols, map[string]string{})
		return &pgschema.Keyspace{Name: name, DurableWrites: true, PGSchema: pgschema.PGSchemaName(name),
			Replication: sharding.Replication{Class: sharding.SimpleStrategyClass, Factor: rf},
			Tables:      map[string]*pgschema.Table{"t": t}, Types: map[string]*pgschema.Type{}}
	}
	s.cluster = cluster.NewStatic(s.log, sharding.NewTopology(ring, shards), pgschema.NewSchema([16]byte{1},
		map[string]*pgschema.Keyspace{"rf1": keyspace("rf1", 1), "rf3": keyspace("rf3", 3)}))
	s.env.Cluster = s.cluster
	return s
}

// setTimeouts sets the read and write timeouts the executions use (0
// leaves one as it is).
func (h *hotServer) setTimeouts(read, write time.Duration) {
	if read > 0 {
		h.s.cfg.ReadTimeout, h.s.env.Config.ReadTimeout = read, read
	}
	if write > 0 {
		h.s.cfg.WriteTimeout, h.s.env.Config.WriteTimeout = write, write
	}
}

// prepare plans query as PREPARE does and returns its statement.
func (h *hotServer) prepare(tb testing.TB, query string) *exec.Statement {
	tb.Helper()
	st, err := h.s.env.Prepare("", []byte(query))
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// cannedRow returns a row of a SELECT's slots as a shard sends it: "one"
// for text, and numbers for the rest.
func cannedRow(p *translate.Select) [][]byte {
	row := make([][]byte, len(p.Slots))
	for i, sl := range p.Slots {
		switch {
		case sl.Kind == translate.SlotValue && sl.Column.Type.Kind == pgschema.Text:
			row[i] = []byte("one")
		case sl.Kind == translate.SlotValue && sl.Column.Type.Kind == pgschema.Int, sl.Kind == translate.SlotTTL:
			row[i] = []byte{0, 0, 0, 1}
		default:
			row[i] = []byte{0, 0, 0, 0, 0, 0, 0, 1}
		}
	}
	return row
}

// executeFrame returns an EXECUTE frame of v4, as drivers send it
// (skip_metadata, consistency ONE), binding values.
func executeFrame(id [16]byte, values ...[]byte) []byte {
	b := cqlwire.AppendHeader(nil, 4, 7, cqlwire.OpExecute)
	b[0] &^= cqlwire.ResponseBit
	b = cqlwire.AppendShortBytes(b, id[:])
	b = cqlwire.AppendShort(b, uint16(sharding.One))
	b = append(b, cqlwire.QfValues|cqlwire.QfSkipMetadata|cqlwire.QfPageSize) // flags
	b = cqlwire.AppendShort(b, uint16(len(values)))
	for _, v := range values {
		b = cqlwire.AppendBytes(b, v)
	}
	b = cqlwire.AppendInt(b, 5000) // page size
	cqlwire.FinishFrame(b)
	return b
}

// atLevel sets the consistency of an executeFrame.
func atLevel(frame []byte, level sharding.Consistency) []byte {
	binary.BigEndian.PutUint16(frame[cqlwire.HeaderSize+2+16:], uint16(level))
	return frame
}

// queryFrame returns a QUERY frame of v4 for a text with no values.
func queryFrame(query string) []byte {
	b := cqlwire.AppendHeader(nil, 4, 7, cqlwire.OpQuery)
	b[0] &^= cqlwire.ResponseBit
	b = cqlwire.AppendInt(b, int32(len(query)))
	b = append(b, query...)
	b = cqlwire.AppendShort(b, uint16(sharding.One))
	b = append(b, cqlwire.QfSkipMetadata)
	cqlwire.FinishFrame(b)
	return b
}

// roundTrip runs one request frame through the connection as its reader
// does, and returns the response frame as its writer receives it, which
// the caller puts back.
func (h *hotServer) roundTrip(frame []byte) *[]byte {
	hdr := cqlwire.ParseHeader(frame)
	body := cqlwire.GetBuffer(int(hdr.Length))
	copy(*body, frame[cqlwire.HeaderSize:])
	h.c.arrived = time.Now() // a read from the socket per request
	h.c.run(hdr, body)
	return <-h.c.out
}

var (
	one   = []byte{0, 0, 0, 1}
	value = []byte("one")
)

// TestHotPath checks the answers and shard arguments of the requests the
// hot-path benchmarks run.
func TestHotPath(t *testing.T) {
	h := newHotServer(t)
	h.shards.keep = true
	sel := h.prepare(t, "SELECT v FROM rf1.t WHERE k = ?")
	h.shards.rows = [][][]byte{cannedRow(sel.Plan.(*translate.Select))}
	resp := h.roundTrip(executeFrame(sel.Id, one))
	want := cqlwire.AppendHeader(nil, 4, 7, cqlwire.OpResult)
	want = cqlwire.AppendInt(want, cqlwire.ResultRows)
	want = cqlwire.AppendInt(cqlwire.AppendInt(want, cqlwire.RowsNoMetadata), 1) // flags, one column
	want = cqlwire.AppendInt(want, 1)                                            // one row
	want = cqlwire.AppendBytes(want, value)
	cqlwire.FinishFrame(want)
	if string(*resp) != string(want) {
		t.Errorf("SELECT answered\n%x\nwant\n%x", *resp, want)
	}
	cqlwire.PutBuffer(resp)
	token := sharding.KeyToken([][]byte{one})
	if !hasArg(h.shards.args, one) || !hasArg(h.shards.args, binary.BigEndian.AppendUint64(nil, uint64(token))) {
		t.Errorf("SELECT sent %x, want the key and its token", h.shards.args)
	}
	for _, ks := range []string{"rf1", "rf3"} {
		ins := h.prepare(t, "INSERT INTO "+ks+".t (k, v) VALUES (?, ?)")
		before := h.shards.ops
		resp := h.roundTrip(executeFrame(ins.Id, one, value))
		want := cqlwire.AppendInt(cqlwire.AppendHeader(nil, 4, 7, cqlwire.OpResult), cqlwire.ResultVoid)
		cqlwire.FinishFrame(want)
		if string(*resp) != string(want) {
			t.Errorf("INSERT into %s answered %x, want %x", ks, *resp, want)
		}
		cqlwire.PutBuffer(resp)
		if n, rf := h.shards.ops-before, int(ks[2]-'0'); n != rf {
			t.Errorf("INSERT into %s ran %d ops, want %d", ks, n, rf)
		}
		if !hasArg(h.shards.args, one) || !hasArg(h.shards.args, value) {
			t.Errorf("INSERT into %s sent %x, want the key and the value", ks, h.shards.args)
		}
	}
}

func hasArg(args [][]byte, v []byte) bool {
	for _, a := range args {
		if string(a) == string(v) {
			return true
		}
	}
	return false
}

// BenchmarkHotPath measures one request from its frame's bytes to its
// response frame, on shards that answer at once: the gateway's own cost
// per request, which the goal of issue 8 bounds (2 allocations, 0.5 µs)
// and issue 21 (0 allocations, TestHotPathAllocations).
func BenchmarkHotPath(b *testing.B) {
	h := newHotServer(b)
	for _, r := range hotRequests(b, h) {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				cqlwire.PutBuffer(h.roundTrip(r.frame))
			}
		})
	}
}

// hotRequest is a request of the hot-path benchmark.
type hotRequest struct {
	name  string
	frame []byte
	// quorum marks a read of two replicas, which allocates its scratch.
	quorum bool
}

// hotRequests prepares the hot-path benchmark's requests on h, whose
// shards answer the SELECTs with a row.
func hotRequests(tb testing.TB, h *hotServer) []hotRequest {
	sel := h.prepare(tb, "SELECT v FROM rf1.t WHERE k = ?")
	h.shards.rows = [][][]byte{cannedRow(sel.Plan.(*translate.Select))}
	return []hotRequest{
		{name: "select", frame: executeFrame(sel.Id, one)},
		{name: "insert-rf1", frame: executeFrame(h.prepare(tb, "INSERT INTO rf1.t (k, v) VALUES (?, ?)").Id, one, value)},
		{name: "insert-rf3", frame: executeFrame(h.prepare(tb, "INSERT INTO rf3.t (k, v) VALUES (?, ?)").Id, one, value)},
		// Two replicas to ask: bound by the reader, run by a handler.
		{name: "select-rf3-quorum", quorum: true,
			frame: atLevel(executeFrame(h.prepare(tb, "SELECT v FROM rf3.t WHERE k = ?").Id, one), sharding.Quorum)},
	}
}

// TestHotPathAllocations checks that a point request, EXECUTE to RESULT
// on shards that answer at once, allocates nothing once warm: a success
// must not pay for what only an error needs (a shard error's type check
// allocated 8 bytes on every request until this test).
func TestHotPathAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes pooled buffers allocate")
	}
	h := newHotServer(t)
	for _, r := range hotRequests(t, h) {
		if r.quorum {
			continue
		}
		for range 100 { // pools and caches warm
			cqlwire.PutBuffer(h.roundTrip(r.frame))
		}
		if n := testing.AllocsPerRun(1000, func() { cqlwire.PutBuffer(h.roundTrip(r.frame)) }); n > 0 {
			t.Errorf("%s: %.2f allocations per request", r.name, n)
		}
	}
}

// BenchmarkQueryUncached measures a QUERY whose text is not cached: it is
// parsed and planned each time.
func BenchmarkQueryUncached(b *testing.B) {
	h := newHotServer(b)
	q := "SELECT v FROM rf1.t WHERE k = 1"
	st := h.prepare(b, q)
	h.shards.rows = [][][]byte{cannedRow(st.Plan.(*translate.Select))}
	frame := queryFrame(q)
	b.ReportAllocs()
	for b.Loop() {
		h.s.env.Cache.Mu.Lock()
		clear(h.s.env.Cache.ByID)
		clear(h.s.env.Cache.ByText)
		h.s.env.Cache.Mu.Unlock()
		cqlwire.PutBuffer(h.roundTrip(frame))
	}
}

// TestHotPathLateOps checks that ops a request gave up on at its timeout,
// which finish later, touch nothing a later request uses: the execution
// they belong to is not reused. Run it under -race.
func TestHotPathLateOps(t *testing.T) {
	h := newHotServer(t)
	h.setTimeouts(20*time.Millisecond, 20*time.Millisecond)
	sel := h.prepare(t, "SELECT v FROM rf1.t WHERE k = ?")
	row := cannedRow(sel.Plan.(*translate.Select))
	h.shards.rows = [][][]byte{row}
	ins := h.prepare(t, "INSERT INTO rf3.t (k, v) VALUES (?, ?)")
	selFrame, insFrame := executeFrame(sel.Id, one), executeFrame(ins.Id, one, value)

	late := make(chan *sharding.Op, 16)
	h.shards.mu.Lock()
	h.shards.late = late
	h.shards.mu.Unlock()
	for _, f := range [][]byte{selFrame, insFrame} {
		resp := h.roundTrip(f)
		if (*resp)[4] != cqlwire.OpError {
			t.Fatalf("request on shards that do not answer: opcode %#x, want ERROR", (*resp)[4])
		}
		cqlwire.PutBuffer(resp)
	}
	h.shards.mu.Lock()
	h.shards.late = nil
	h.shards.mu.Unlock()
	if len(late) != 4 {
		t.Fatalf("%d ops left unfinished, want 4 (a read, three writes)", len(late))
	}

	// The late ops finish while other requests run: the read's rows go to
	// the result its expired request never sent, which its execution
	// keeps until the op has finished, and the writes' failures are
	// hinted; neither may touch the requests that run meanwhile.
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for range 4 {
			op := <-late
			for _, a := range op.Args {
				_ = append([]byte(nil), a...)
			}
			if op.Rows != nil {
				if err := op.Rows.Row(row); err != nil {
					t.Errorf("late row: %v", err)
				}
				op.Finish(nil)
				continue
			}
			op.Finish(&sharding.ShardError{Shard: "late", Err: sharding.ErrShardDown})
		}
	}()
	wantSel := *h.roundTrip(selFrame)
	for i := 0; ; i++ {
		for _, f := range [][]byte{selFrame, insFrame} {
			resp := h.roundTrip(f)
			if (*resp)[4] != cqlwire.OpResult {
				t.Fatalf("request %d answered opcode %#x", i, (*resp)[4])
			}
			if &f[0] == &selFrame[0] && string(*resp) != string(wantSel) {
				t.Fatalf("request %d answered %x, want %x", i, *resp, wantSel)
			}
			cqlwire.PutBuffer(resp)
		}
		select {
		case <-finished:
		default:
			continue
		}
		break
	}
	// The drain hints the failed writes after their ops finish.
	for deadline := time.Now().Add(5 * time.Second); h.s.HintsWritten() < 3 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if h.s.HintsWritten() != 3 {
		t.Errorf("%d hints written, want 3", h.s.HintsWritten())
	}
}

// TestHotPathReplicaFails checks the requests answered from the pools'
// goroutines when a replica's connection fails: a read at ONE moves on to
// the next replica, and a write at ONE is answered by the others while the
// failed replica gets a hint.
func TestHotPathReplicaFails(t *testing.T) {
	h := newHotServer(t)
	sel := h.prepare(t, "SELECT v FROM rf3.t WHERE k = ?")
	h.shards.rows = [][][]byte{cannedRow(sel.Plan.(*translate.Select))}
	ins := h.prepare(t, "INSERT INTO rf3.t (k, v) VALUES (?, ?)")
	// A partition whose first replica is shard 0, which fails.
	var key []byte
	for k := range uint32(1000) {
		key = binary.BigEndian.AppendUint32(nil, k)
		if replicas, err := h.s.PartitionReplicas("rf3", "t", key); err != nil {
			t.Fatal(err)
		} else if replicas[0] == 0 {
			break
		}
	}
	h.shards.failing = map[int]bool{0: true}
	past := *h.roundTrip(executeFrame(sel.Id, key))
	if past[4] != cqlwire.OpResult {
		t.Fatalf("read past a failed replica: opcode %#x, want RESULT", past[4])
	}
	if n := h.shards.perShard[0] + h.shards.perShard[1] + h.shards.perShard[2]; h.shards.perShard[0] != 1 || n != 2 {
		t.Errorf("read sent ops to shards %v, want one to the failed replica and one more", h.shards.perShard)
	}
	h.shards.failing = nil
	if healthy := *h.roundTrip(executeFrame(sel.Id, key)); string(past) != string(healthy) {
		t.Errorf("read past a failed replica answered %x, want %x as when every replica is up", past, healthy)
	}

	h.shards.failing = map[int]bool{0: true}
	h.shards.perShard = [4]int{}
	hints := h.s.HintsWritten()
	if resp := h.roundTrip(executeFrame(ins.Id, key, value)); (*resp)[4] != cqlwire.OpResult {
		t.Fatalf("write at ONE with one replica failing: opcode %#x, want RESULT", (*resp)[4])
	}
	if got := h.s.HintsWritten() - hints; got != 1 {
		t.Errorf("%d hints written for the failed replica, want 1", got)
	}
	// Three writes, and the hint on one of the two replicas up.
	if n := h.shards.perShard[0]; n != 1 {
		t.Errorf("failed replica sent %d ops, want 1", n)
	}
	if n := h.shards.perShard[1] + h.shards.perShard[2]; n != 3 {
		t.Errorf("replicas up sent %d ops, want 3 (two writes and a hint)", n)
	}
}

// TestHotPathBoundHandoff checks an EXECUTE the reader binds but cannot
// answer from the pools' goroutines (a QUORUM read of three replicas):
// the handler runs the execution it was handed and answers as for a
// read at ONE, and the request is counted once.
func TestHotPathBoundHandoff(t *testing.T) {
	h := newHotServer(t)
	sel := h.prepare(t, "SELECT v FROM rf3.t WHERE k = ?")
	h.shards.rows = [][][]byte{cannedRow(sel.Plan.(*translate.Select))}
	atOne := *h.roundTrip(executeFrame(sel.Id, one))
	quorum := atLevel(executeFrame(sel.Id, one), sharding.Quorum)
	executes := func() int { return counterValue(h.s.metrics.byOpcode[cqlwire.OpExecute]) }
	before, ops := executes(), h.shards.ops
	if got := *h.roundTrip(quorum); string(got) != string(atOne) {
		t.Errorf("QUORUM read answered %x, want %x as at ONE", got, atOne)
	}
	if n := executes() - before; n != 1 {
		t.Errorf("QUORUM read counted %d times, want 1", n)
	}
	if n := h.shards.ops - ops; n != 2 {
		t.Errorf("QUORUM read of three replicas asked %d, want 2", n)
	}
}

// TestHotPathHandoffKeysOnce: the key the reader computed for an EXECUTE
// it could not start is the one the handler's run takes; it is not keyed
// again from the bound values (which the test changes after the reader
// is done, to tell the two apart).
func TestHotPathHandoffKeysOnce(t *testing.T) {
	h := newHotServer(t)
	sel := h.prepare(t, "SELECT v FROM rf3.t WHERE k = ?")
	frame := atLevel(executeFrame(sel.Id, one), sharding.Quorum)
	hdr := cqlwire.ParseHeader(frame)
	body := cqlwire.GetBuffer(int(hdr.Length))
	copy(*body, frame[cqlwire.HeaderSize:])
	h.c.inflight.Add(1)
	j := job{h: hdr, body: body, at: time.Now()}
	if h.c.executeAsync(&j) || j.e == nil {
		t.Fatalf("a QUORUM read of three replicas was started on the reader (or not bound): %v", j.e)
	}
	e := j.e
	defer func() {
		e.Release()
		h.c.inflight.Done()
	}()
	p := sel.Plan.(*translate.Select)
	keyed := e.Keys[0]
	if len(keyed) != 1 || string(keyed[0]) != string(one) {
		t.Fatalf("the reader keyed %x, want [%x]", keyed, one)
	}
	// The bound value now says 2: keying again would read it.
	e.Query.Values[0] = []byte{0, 0, 0, 2}
	keys, ok, err := e.SingleKey(p.Keys)
	if err != nil || !ok || len(keys) != 1 || string(keys[0][0]) != string(one) {
		t.Errorf("the handler's key: %x %v %v, want the reader's [%x]", keys, ok, err, one)
	}
	if _, ok, _ := e.SingleKey(p.Keys); ok {
		t.Error("a second keying on the execution took the handed-over key again")
	}
}

// TestDeadlineLists checks that the clock holds only the asynchronous
// requests still in flight: one answered leaves its list at once, and
// one not answered in time is answered with its timeout and leaves too.
func TestDeadlineLists(t *testing.T) {
	h := newHotServer(t)
	h.setTimeouts(20*time.Millisecond, 0)
	sel := h.prepare(t, "SELECT v FROM rf1.t WHERE k = ?")
	h.shards.rows = [][][]byte{cannedRow(sel.Plan.(*translate.Select))}
	waiting := exec.Waiting
	for range 100 {
		cqlwire.PutBuffer(h.roundTrip(executeFrame(sel.Id, one)))
	}
	if n := waiting(); n != 0 {
		t.Fatalf("%d requests wait on the clock after all were answered, want 0", n)
	}

	late := make(chan *sharding.Op, 3)
	h.shards.mu.Lock()
	h.shards.late = late
	h.shards.mu.Unlock()
	start := time.Now()
	for range 3 {
		resp := h.roundTrip(executeFrame(sel.Id, one))
		if (*resp)[4] != cqlwire.OpError || binary.BigEndian.Uint32((*resp)[9:]) != 0x1200 {
			t.Fatalf("request on a shard that does not answer: %x, want a read timeout", *resp)
		}
		cqlwire.PutBuffer(resp)
	}
	if d := time.Since(start); d < 3*h.s.cfg.ReadTimeout || d > time.Second {
		t.Errorf("three read timeouts of %v came after %v", h.s.cfg.ReadTimeout, d)
	}
	if n := waiting(); n != 0 {
		t.Errorf("%d requests wait on the clock after their timeouts, want 0", n)
	}
	for range 3 {
		(<-late).Finish(nil)
	}
}
