package gateway_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/compression/lz4"
	"github.com/datastax/go-cassandra-native-protocol/compression/snappy"
	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/datastax/go-cassandra-native-protocol/segment"
)

// segConn talks protocol v5 after the handshake: requests go out in
// segments and responses come back in them, with the protocol library's
// segment and frame codecs as the independent encoders and decoders.
type segConn struct {
	*rawConn
	seg segment.Codec
	// frames holds response frames read out of segments, not yet returned.
	frames bytes.Buffer
}

// startupV5 performs OPTIONS and STARTUP in v5's unframed envelopes,
// asking for compression (none when empty), and switches to segments.
func startupV5(t *testing.T, compression string) *segConn {
	t.Helper()
	return startupV5On(t, dialRaw(t), compression)
}

// startupV5On is startupV5 on a connection of the caller's.
func startupV5On(t *testing.T, c *rawConn, compression string) *segConn {
	t.Helper()
	c.sendMessage(5, 1, &message.Options{})
	if _, ok := c.receive().Body.Message.(*message.Supported); !ok {
		t.Fatal("OPTIONS not answered by SUPPORTED")
	}
	opts := map[string]string{"CQL_VERSION": "3.0.0"}
	if compression != "" {
		opts["COMPRESSION"] = compression
	}
	c.sendMessage(5, 2, &message.Startup{Options: opts})
	f := c.receive()
	if _, ok := f.Body.Message.(*message.Ready); !ok {
		t.Fatalf("STARTUP answered %v", f.Body.Message)
	}
	s := &segConn{rawConn: c, seg: segment.NewCodec()}
	if compression == "lz4" {
		s.seg = segment.NewCodecWithCompression(lz4.Compressor{})
	}
	return s
}

// encode encodes a request frame.
func (s *segConn) encode(stream int16, msg message.Message, flags primitive.HeaderFlag) []byte {
	s.t.Helper()
	f := frame.NewFrame(5, stream, msg)
	f.Header.Flags = f.Header.Flags.Add(flags)
	return s.encodeFrame(f)
}

func (s *segConn) encodeFrame(f *frame.Frame) []byte {
	s.t.Helper()
	var b bytes.Buffer
	if err := s.codec.EncodeFrame(f, &b); err != nil {
		s.t.Fatal(err)
	}
	return b.Bytes()
}

// sendSegment writes a payload as one segment.
func (s *segConn) sendSegment(payload []byte, selfContained bool) {
	s.t.Helper()
	if err := s.seg.EncodeSegment(&segment.Segment{Header: &segment.Header{IsSelfContained: selfContained},
		Payload: &segment.Payload{UncompressedData: payload}}, s.nc); err != nil {
		s.t.Fatal(err)
	}
}

// sendFrames writes frames in one self-contained segment, or one frame
// too large for a segment across several.
func (s *segConn) sendFrames(frames ...[]byte) {
	s.t.Helper()
	payload := bytes.Join(frames, nil)
	if len(payload) <= segment.MaxPayloadLength {
		s.sendSegment(payload, true)
		return
	}
	for len(payload) > 0 {
		n := min(len(payload), segment.MaxPayloadLength)
		s.sendSegment(payload[:n], false)
		payload = payload[n:]
	}
}

func (s *segConn) send(stream int16, msg message.Message) {
	s.t.Helper()
	s.sendFrames(s.encode(stream, msg, 0))
}

// receive returns the next response frame, reading segments as needed and
// gathering a frame that spans several.
func (s *segConn) receive() *frame.Frame {
	s.t.Helper()
	for !s.frameBuffered() {
		sg, err := s.seg.DecodeSegment(s.nc)
		if err != nil {
			s.t.Fatalf("decode segment: %v", err)
		}
		s.frames.Write(sg.Payload.UncompressedData)
	}
	f, err := s.codec.DecodeFrame(&s.frames)
	if err != nil {
		s.t.Fatalf("decode frame: %v", err)
	}
	return f
}

func (s *segConn) frameBuffered() bool {
	b := s.frames.Bytes()
	return len(b) >= 9 && len(b) >= 9+int(binary.BigEndian.Uint32(b[5:9]))
}

// query runs a statement at ONE and returns the response.
func (s *segConn) query(stream int16, q string, opts *message.QueryOptions) *frame.Frame {
	s.t.Helper()
	if opts == nil {
		opts = &message.QueryOptions{}
	}
	opts.Consistency = primitive.ConsistencyLevelOne
	s.send(stream, &message.Query{Query: q, Options: opts})
	f := s.receive()
	if f.Header.StreamId != stream {
		s.t.Fatalf("%s: answered on stream %d, want %d", q, f.Header.StreamId, stream)
	}
	if e, ok := f.Body.Message.(message.Error); ok {
		s.t.Fatalf("%s: %v", q, e)
	}
	return f
}

// mustRows returns a Rows result's rows.
func mustRows(t *testing.T, f *frame.Frame) *message.RowsResult {
	t.Helper()
	rows, ok := f.Body.Message.(*message.RowsResult)
	if !ok {
		t.Fatalf("got %v, want rows", f.Body.Message)
	}
	return rows
}

func TestV5Handshake(t *testing.T) {
	for _, compression := range []string{"", "lz4"} {
		t.Run("compression="+compression, func(t *testing.T) {
			s := startupV5(t, compression)
			f := s.query(3, "SELECT release_version, native_protocol_version FROM system.local WHERE key = 'local'", nil)
			rows := mustRows(t, f)
			if f.Header.Version != 5 || len(rows.Data) != 1 || string(rows.Data[0][1]) != "5" {
				t.Errorf("answer in v%d: %v", f.Header.Version, rows.Data)
			}
			// OPTIONS after the handshake is framed like everything else.
			s.send(4, &message.Options{})
			if _, ok := s.receive().Body.Message.(*message.Supported); !ok {
				t.Error("OPTIONS after STARTUP not answered")
			}
			// Several frames in one segment are each answered.
			opts := func() *message.QueryOptions {
				return &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}
			}
			s.sendFrames(
				s.encode(10, &message.Query{Query: "SELECT key FROM system.local", Options: opts()}, 0),
				s.encode(11, &message.Query{Query: "SELECT cluster_name FROM system.local", Options: opts()}, 0),
				s.encode(12, &message.Options{}, 0))
			seen := map[int16]bool{}
			for range 3 {
				seen[s.receive().Header.StreamId] = true
			}
			if !seen[10] || !seen[11] || !seen[12] {
				t.Errorf("answered streams %v, want 10, 11 and 12", seen)
			}
		})
	}
}

// TestV5LargeFrames sends a request and reads a response too large for one
// segment: both are cut across segments that are not self-contained.
func TestV5LargeFrames(t *testing.T) {
	exec(t, session(t, ""),
		"CREATE KEYSPACE v5large WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE v5large.t (k int PRIMARY KEY, v text)")
	for _, compression := range []string{"", "lz4"} {
		t.Run("compression="+compression, func(t *testing.T) {
			s := startupV5(t, compression)
			// Incompressible text, so that LZ4 segments stay large too.
			big := make([]byte, 300_000)
			x := uint32(1)
			for i := range big {
				x = x*1664525 + 1013904223
				big[i] = 'a' + byte(x>>24)%26
			}
			s.query(2, "INSERT INTO v5large.t (k, v) VALUES (?, ?)", &message.QueryOptions{
				PositionalValues: []*primitive.Value{primitive.NewValue([]byte{0, 0, 0, 1}), primitive.NewValue(big)}})
			rows := mustRows(t, s.query(3, "SELECT v FROM v5large.t WHERE k = 1", nil))
			if len(rows.Data) != 1 || !bytes.Equal(rows.Data[0][0], big) {
				t.Fatalf("read back %d rows", len(rows.Data))
			}
			// The connection goes on in self-contained segments.
			s.query(4, "SELECT key FROM system.local", nil)
		})
	}
}

// TestV5CorruptSegments checks that a segment failing its CRC is answered
// with a protocol error and ends the connection, and that the gateway
// carries on for others.
func TestV5CorruptSegments(t *testing.T) {
	for _, tc := range []struct {
		name, part string
		corrupt    func(seg []byte)
	}{
		{"header", "header", func(seg []byte) { seg[1] ^= 0x40 }},
		{"payload", "body", func(seg []byte) { seg[10] ^= 0x01 }},
		{"header crc", "header", func(seg []byte) { seg[4] ^= 0x80 }},
		{"payload crc", "body", func(seg []byte) { seg[len(seg)-1] ^= 0x01 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startupV5(t, "")
			var seg bytes.Buffer
			s.seg.EncodeSegment(&segment.Segment{Header: &segment.Header{IsSelfContained: true},
				Payload: &segment.Payload{UncompressedData: s.encode(3, &message.Options{}, 0)}}, &seg)
			b := seg.Bytes()
			tc.corrupt(b)
			if _, err := s.nc.Write(b); err != nil {
				t.Fatal(err)
			}
			f := s.receive()
			perr, ok := f.Body.Message.(*message.ProtocolError)
			if !ok {
				t.Fatalf("got %v, want a protocol error", f.Body.Message)
			}
			if want := "invalid, unrecoverable CRC mismatch detected in frame " + tc.part; !strings.Contains(perr.ErrorMessage, want) {
				t.Errorf("error %q lacks %q", perr.ErrorMessage, want)
			}
			if _, err := s.nc.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("connection still open after a corrupt segment: %v", err)
			}
		})
	}
	startupV5(t, "").query(1, "SELECT key FROM system.local", nil)
}

// TestV5Keyspace runs QUERY, PREPARE and BATCH in the keyspace they name,
// on a connection without one.
func TestV5Keyspace(t *testing.T) {
	exec(t, session(t, ""),
		"CREATE KEYSPACE v5ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE v5ks.t (k int PRIMARY KEY, v int)")
	s := startupV5(t, "")
	s.query(1, "INSERT INTO t (k, v) VALUES (1, 10)", &message.QueryOptions{Keyspace: "v5ks"})
	s.send(2, &message.Prepare{Query: "SELECT v FROM t WHERE k = ?", Keyspace: "v5ks"})
	prep, ok := s.receive().Body.Message.(*message.PreparedResult)
	if !ok {
		t.Fatal("PREPARE with a keyspace not answered by PREPARED")
	}
	s.send(3, &message.Batch{Type: primitive.BatchTypeLogged, Keyspace: "v5ks", Consistency: primitive.ConsistencyLevelOne,
		Children: []*message.BatchChild{{Query: "INSERT INTO t (k, v) VALUES (2, 20)"}, {Query: "INSERT INTO t (k, v) VALUES (3, 30)"}}})
	if _, ok := s.receive().Body.Message.(*message.VoidResult); !ok {
		t.Fatal("BATCH with a keyspace failed")
	}
	for k, want := range map[int32]int32{1: 10, 2: 20, 3: 30} {
		s.send(4, &message.Execute{QueryId: prep.PreparedQueryId, ResultMetadataId: prep.ResultMetadataId,
			Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne,
				PositionalValues: []*primitive.Value{primitive.NewValue(binary.BigEndian.AppendUint32(nil, uint32(k)))}}})
		rows := mustRows(t, s.receive())
		if len(rows.Data) != 1 || int32(binary.BigEndian.Uint32(rows.Data[0][0])) != want {
			t.Errorf("k=%d: %v", k, rows.Data)
		}
	}
	// Without it, the unqualified table is unknown as before.
	s.send(5, &message.Query{Query: "SELECT v FROM t WHERE k = 1", Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
	if _, ok := s.receive().Body.Message.(*message.Invalid); !ok {
		t.Error("a query without a keyspace found the table")
	}
}

// TestV5NowInSeconds checks that now_in_seconds is the request's clock for
// TTLs and expiry, and not for write times.
func TestV5NowInSeconds(t *testing.T) {
	exec(t, session(t, ""),
		"CREATE KEYSPACE v5now WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE v5now.t (k int PRIMARY KEY, v int)")
	s := startupV5(t, "")
	now := time.Now()
	past := int32(now.Unix() - 50)
	s.query(1, "INSERT INTO v5now.t (k, v) VALUES (1, 1) USING TTL 100", &message.QueryOptions{NowInSeconds: &past})
	rows := mustRows(t, s.query(2, "SELECT TTL(v), WRITETIME(v) FROM v5now.t WHERE k = 1", nil))
	if len(rows.Data) != 1 {
		t.Fatalf("rows %v", rows.Data)
	}
	// Written 50 s "ago" with a TTL of 100 s: about 50 s remain.
	if ttl := int32(binary.BigEndian.Uint32(rows.Data[0][0])); ttl < 40 || ttl > 50 {
		t.Errorf("TTL %d, want about 50", ttl)
	}
	if wt := time.UnixMicro(int64(binary.BigEndian.Uint64(rows.Data[0][1]))); wt.Sub(now).Abs() > time.Minute {
		t.Errorf("write time %v, want the clock's (%v)", wt, now)
	}
	// Read as of 200 s from now, the row has expired; as of now it has not.
	future := int32(now.Unix() + 200)
	if rows := mustRows(t, s.query(3, "SELECT v FROM v5now.t WHERE k = 1", &message.QueryOptions{NowInSeconds: &future})); len(rows.Data) != 0 {
		t.Errorf("rows read in the future: %v", rows.Data)
	}
	present := int32(now.Unix())
	if rows := mustRows(t, s.query(4, "SELECT v FROM v5now.t WHERE k = 1", &message.QueryOptions{NowInSeconds: &present})); len(rows.Data) != 1 {
		t.Errorf("rows read now: %v", rows.Data)
	}
	// The batch's clock too.
	s.send(5, &message.Batch{Consistency: primitive.ConsistencyLevelOne, NowInSeconds: &past,
		Children: []*message.BatchChild{{Query: "INSERT INTO v5now.t (k, v) VALUES (2, 2) USING TTL 60"}}})
	if _, ok := s.receive().Body.Message.(*message.VoidResult); !ok {
		t.Fatal("BATCH with now_in_seconds failed")
	}
	rows = mustRows(t, s.query(6, "SELECT TTL(v) FROM v5now.t WHERE k = 2", nil))
	if ttl := int32(binary.BigEndian.Uint32(rows.Data[0][0])); ttl > 10 {
		t.Errorf("TTL %d after a batch 50 s in the past with TTL 60, want at most 10", ttl)
	}
}

// TestV5ResultMetadataID checks PREPARED's result metadata id and the
// METADATA_CHANGED answer once the table gains a column.
func TestV5ResultMetadataID(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE v5md WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE v5md.t (k int PRIMARY KEY, a int)",
		"INSERT INTO v5md.t (k, a) VALUES (1, 1)")
	s := startupV5(t, "")
	s.send(1, &message.Prepare{Query: "SELECT * FROM v5md.t WHERE k = ?"})
	prep := s.receive().Body.Message.(*message.PreparedResult)
	if len(prep.ResultMetadataId) == 0 {
		t.Fatal("PREPARED without a result metadata id")
	}
	execute := func(stream int16, id []byte) *message.RowsResult {
		s.send(stream, &message.Execute{QueryId: prep.PreparedQueryId, ResultMetadataId: id,
			Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne, SkipMetadata: true,
				PositionalValues: []*primitive.Value{primitive.NewValue([]byte{0, 0, 0, 1})}}})
		return mustRows(t, s.receive())
	}
	rows := execute(2, prep.ResultMetadataId)
	if rows.Metadata.Columns != nil || rows.Metadata.NewResultMetadataId != nil || rows.Metadata.ColumnCount != 2 {
		t.Errorf("unchanged metadata: %+v", rows.Metadata)
	}
	// A column added to the table reshapes the statement: EXECUTE is
	// answered UNPREPARED, as Cassandra does, and preparing it again gives
	// a new result metadata id.
	exec(t, sess, "ALTER TABLE v5md.t ADD b text")
	s.send(3, &message.Execute{QueryId: prep.PreparedQueryId, ResultMetadataId: prep.ResultMetadataId,
		Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
	if _, ok := s.receive().Body.Message.(*message.Unprepared); !ok {
		t.Fatal("EXECUTE of a reshaped statement not answered UNPREPARED")
	}
	s.send(4, &message.Prepare{Query: "SELECT * FROM v5md.t WHERE k = ?"})
	again := s.receive().Body.Message.(*message.PreparedResult)
	if bytes.Equal(again.ResultMetadataId, prep.ResultMetadataId) || len(again.ResultMetadata.Columns) != 3 {
		t.Fatalf("prepared again: id %x (was %x), %d columns", again.ResultMetadataId, prep.ResultMetadataId,
			len(again.ResultMetadata.Columns))
	}
	// A client still holding the old id (another connection prepared the
	// statement again) gets the new metadata and its id with the rows.
	rows = execute(5, prep.ResultMetadataId)
	md := rows.Metadata
	if !bytes.Equal(md.NewResultMetadataId, again.ResultMetadataId) {
		t.Fatalf("new metadata id %x, want %x", md.NewResultMetadataId, again.ResultMetadataId)
	}
	if len(md.Columns) != 3 || md.Columns[2].Name != "b" || len(rows.Data) != 1 || len(rows.Data[0]) != 3 {
		t.Fatalf("metadata %d columns, rows %v", len(md.Columns), rows.Data)
	}
	// With the new id the metadata is skipped again.
	if rows := execute(6, md.NewResultMetadataId); rows.Metadata.Columns != nil || rows.Metadata.NewResultMetadataId != nil {
		t.Errorf("metadata with the new id: %+v", rows.Metadata)
	}
	// A paged result keeps its paging state before the new id.
	exec(t, sess, "INSERT INTO v5md.t (k, a) VALUES (2, 2)")
	s.send(7, &message.Prepare{Query: "SELECT k FROM v5md.t"})
	scan := s.receive().Body.Message.(*message.PreparedResult)
	s.send(8, &message.Execute{QueryId: scan.PreparedQueryId, ResultMetadataId: []byte("stale"),
		Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne, SkipMetadata: true, PageSize: 1}})
	rows = mustRows(t, s.receive())
	if rows.Metadata.PagingState == nil || !bytes.Equal(rows.Metadata.NewResultMetadataId, scan.ResultMetadataId) ||
		len(rows.Metadata.Columns) != 1 || len(rows.Data) != 1 {
		t.Errorf("paged result with a stale id: %+v", rows.Metadata)
	}
}

// batchWarning is Cassandra's warning for a large batch.
var batchWarning = regexp.MustCompile(`^Batch for \[(.*)\] is of size (\d+), exceeding specified threshold of 5120 by (\d+)\.$`)

// TestBatchWarnings checks the warning a batch of more than 5 KiB over
// several partitions draws, on v4 and v5.
func TestBatchWarnings(t *testing.T) {
	exec(t, session(t, ""),
		"CREATE KEYSPACE bwarn WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE bwarn.t (k int PRIMARY KEY, v text)")
	batch := func(n, size int) *message.Batch {
		b := &message.Batch{Type: primitive.BatchTypeUnlogged, Consistency: primitive.ConsistencyLevelOne}
		for i := range n {
			b.Children = append(b.Children, &message.BatchChild{Query: "INSERT INTO bwarn.t (k, v) VALUES (?, ?)",
				Values: []*primitive.Value{primitive.NewValue(binary.BigEndian.AppendUint32(nil, uint32(i))),
					primitive.NewValue(bytes.Repeat([]byte("x"), size))}})
		}
		return b
	}
	for _, v := range []primitive.ProtocolVersion{4, 5} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			run := func(stream int16, b *message.Batch) *frame.Frame {
				if v == 5 {
					s := startupV5(t, "")
					s.send(stream, b)
					return s.receive()
				}
				c := dialRaw(t)
				c.startup(v)
				c.sendMessage(v, stream, b)
				return c.receive()
			}
			f := run(1, batch(3, 2000))
			if _, ok := f.Body.Message.(*message.VoidResult); !ok {
				t.Fatalf("big batch: %v", f.Body.Message)
			}
			if len(f.Body.Warnings) != 1 {
				t.Fatalf("warnings %q, want one", f.Body.Warnings)
			}
			m := batchWarning.FindStringSubmatch(f.Body.Warnings[0])
			if m == nil {
				t.Fatalf("warning %q", f.Body.Warnings[0])
			}
			size, _ := strconv.Atoi(m[2])
			over, _ := strconv.Atoi(m[3])
			if m[1] != "bwarn.t" || size < 6000 || over != size-5120 {
				t.Errorf("warning %q", f.Body.Warnings[0])
			}
			// Small batches, and big ones in one partition, draw none.
			if f := run(2, batch(3, 100)); len(f.Body.Warnings) != 0 {
				t.Errorf("small batch warned %q", f.Body.Warnings)
			}
			if f := run(3, batch(1, 8000)); len(f.Body.Warnings) != 0 {
				t.Errorf("one-partition batch warned %q", f.Body.Warnings)
			}
			// An unlogged batch over more than ten partitions draws
			// Cassandra's other warning.
			f = run(4, batch(12, 10))
			want := "Unlogged batch covering 12 partitions detected against table [bwarn.t]. " +
				"You should use a logged batch for atomicity, or asynchronous writes for performance."
			if len(f.Body.Warnings) != 1 || f.Body.Warnings[0] != want {
				t.Errorf("unlogged batch over 12 partitions warned %q", f.Body.Warnings)
			}
		})
	}
}

// TestTracing checks that a traced request is answered with a tracing id
// whose session and events system_traces then shows.
func TestTracing(t *testing.T) {
	for _, v := range []primitive.ProtocolVersion{3, 4, 5} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			// roundTrip sends a request frame, with extra header flags, and
			// returns the answer. The flags are set on the encoded bytes: the
			// library counts a tracing id in a traced request's length.
			var roundTrip func(f *frame.Frame, flags ...primitive.HeaderFlag) *frame.Frame
			encode := func(f *frame.Frame, flags []primitive.HeaderFlag) []byte {
				var b bytes.Buffer
				if err := frame.NewCodec().EncodeFrame(f, &b); err != nil {
					t.Fatal(err)
				}
				for _, fl := range flags {
					b.Bytes()[1] |= byte(fl)
				}
				return b.Bytes()
			}
			if v == 5 {
				s := startupV5(t, "")
				roundTrip = func(f *frame.Frame, flags ...primitive.HeaderFlag) *frame.Frame {
					s.sendFrames(encode(f, flags))
					return s.receive()
				}
			} else {
				c := dialRaw(t)
				c.startup(v)
				roundTrip = func(f *frame.Frame, flags ...primitive.HeaderFlag) *frame.Frame {
					if _, err := c.nc.Write(encode(f, flags)); err != nil {
						t.Fatal(err)
					}
					return c.receive()
				}
			}
			query := func(stream int16, q string, values ...[]byte) *frame.Frame {
				opts := &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}
				for _, v := range values {
					opts.PositionalValues = append(opts.PositionalValues, primitive.NewValue(v))
				}
				return frame.NewFrame(v, stream, &message.Query{Query: q, Options: opts})
			}
			q := "SELECT key FROM system.local WHERE key = 'local'"
			f := roundTrip(query(1, q), primitive.HeaderFlagTracing)
			if !f.Header.Flags.Contains(primitive.HeaderFlagTracing) || f.Body.TracingId == nil {
				t.Fatalf("traced query answered without a tracing id: flags %v", f.Header.Flags)
			}
			mustRows(t, f)
			id := f.Body.TracingId
			if id[6]>>4 != 1 {
				t.Errorf("tracing id %v is not a time uuid", id)
			}
			f = roundTrip(query(2, "SELECT client, command, coordinator, duration, parameters, request, started_at "+
				"FROM system_traces.sessions WHERE session_id = ?", id[:]))
			rows := mustRows(t, f)
			if f.Header.Flags.Contains(primitive.HeaderFlagTracing) {
				t.Error("untraced query answered with a tracing id")
			}
			if len(rows.Data) != 1 {
				t.Fatalf("sessions rows %v", rows.Data)
			}
			r := rows.Data[0]
			if !net.IP(r[0]).IsLoopback() || string(r[1]) != "QUERY" || !net.IP(r[2]).IsLoopback() || len(r[3]) != 4 ||
				string(r[5]) != "Execute CQL3 query" || len(r[6]) != 8 {
				t.Errorf("session row %q", r)
			}
			if !bytes.Contains(r[4], []byte(q)) || !bytes.Contains(r[4], []byte("consistency_level")) {
				t.Errorf("session parameters %q", r[4])
			}
			rows = mustRows(t, roundTrip(query(3, "SELECT activity, source_elapsed FROM system_traces.events WHERE session_id = ?", id[:])))
			if len(rows.Data) < 2 || string(rows.Data[len(rows.Data)-1][0]) != "Request complete" {
				t.Errorf("events %q", rows.Data)
			}
			// Custom payloads (v4 and later) are decoded and ignored.
			if v >= 4 {
				f := query(4, q)
				f.SetCustomPayload(map[string][]byte{"k": []byte("v")})
				mustRows(t, roundTrip(f))
			}
		})
	}
}

// TestV5BetaFlag checks that the beta flag on v5, a released version, is
// ignored as Cassandra ignores it.
func TestV5BetaFlag(t *testing.T) {
	c := dialRaw(t)
	c.send(5, 0x10, 1, 0x05, nil) // OPTIONS with the beta flag
	if _, ok := c.receive().Body.Message.(*message.Supported); !ok {
		t.Fatal("v5 OPTIONS with the beta flag not answered by SUPPORTED")
	}
}

// BenchmarkExecute measures a prepared single-partition SELECT end to end
// over a connection, as drivers send it (skip_metadata, consistency ONE),
// in each protocol version and compression. The client side reuses its
// buffers, so allocs/op is the gateway's (shard pool and pgx included).
func BenchmarkExecute(b *testing.B) {
	exec(b, session(b, ""),
		"CREATE KEYSPACE IF NOT EXISTS bexec WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS bexec.t (k int PRIMARY KEY, v text)",
		"INSERT INTO bexec.t (k, v) VALUES (1, 'one')")
	for _, tc := range []struct {
		version     primitive.ProtocolVersion
		compression string
	}{{4, ""}, {4, "lz4"}, {4, "snappy"}, {5, ""}, {5, "lz4"}, {3, ""}} {
		name := fmt.Sprintf("v%d", tc.version)
		if tc.compression != "" {
			name += "-" + tc.compression
		}
		b.Run(name, func(b *testing.B) {
			nc, err := net.Dial("tcp", gw.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			codec := frame.NewCodec()
			switch {
			case tc.compression == "lz4" && tc.version < 5:
				codec = frame.NewCodecWithCompression(lz4.Compressor{})
			case tc.compression == "snappy":
				codec = frame.NewCodecWithCompression(snappy.Compressor{})
			}
			seg := segment.NewCodec()
			if tc.compression == "lz4" {
				seg = segment.NewCodecWithCompression(lz4.Compressor{})
			}
			framed := false
			// encode returns a request's bytes as they go on the wire.
			encode := func(stream int16, msg message.Message) []byte {
				f := frame.NewFrame(tc.version, stream, msg)
				if tc.compression != "" && tc.version < 5 && msg.GetOpCode() != primitive.OpCodeStartup {
					f.Header.Flags = f.Header.Flags.Add(primitive.HeaderFlagCompressed)
				}
				var fb, sb bytes.Buffer
				if err := codec.EncodeFrame(f, &fb); err != nil {
					b.Fatal(err)
				}
				if !framed {
					return fb.Bytes()
				}
				if err := seg.EncodeSegment(&segment.Segment{Header: &segment.Header{IsSelfContained: true},
					Payload: &segment.Payload{UncompressedData: fb.Bytes()}}, &sb); err != nil {
					b.Fatal(err)
				}
				return sb.Bytes()
			}
			roundTrip := func(stream int16, msg message.Message) *frame.Frame {
				if _, err := nc.Write(encode(stream, msg)); err != nil {
					b.Fatal(err)
				}
				var src io.Reader = nc
				if framed {
					sg, err := seg.DecodeSegment(nc)
					if err != nil {
						b.Fatal(err)
					}
					src = bytes.NewReader(sg.Payload.UncompressedData)
				}
				f, err := codec.DecodeFrame(src)
				if err != nil {
					b.Fatal(err)
				}
				return f
			}
			opts := map[string]string{"CQL_VERSION": "3.0.0"}
			if tc.compression != "" {
				opts["COMPRESSION"] = tc.compression
			}
			if _, ok := roundTrip(1, &message.Startup{Options: opts}).Body.Message.(*message.Ready); !ok {
				b.Fatal("STARTUP not answered by READY")
			}
			framed = tc.version >= 5
			prep, ok := roundTrip(2, &message.Prepare{Query: "SELECT v FROM bexec.t WHERE k = ?"}).Body.Message.(*message.PreparedResult)
			if !ok {
				b.Fatal("PREPARE failed")
			}
			execute := &message.Execute{QueryId: prep.PreparedQueryId, ResultMetadataId: prep.ResultMetadataId,
				Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne, SkipMetadata: true,
					PositionalValues: []*primitive.Value{primitive.NewValue([]byte{0, 0, 0, 1})}}}
			if rows, ok := roundTrip(3, execute).Body.Message.(*message.RowsResult); !ok || len(rows.Data) != 1 {
				b.Fatal("EXECUTE failed")
			}
			req := encode(3, execute)
			// The loop reads each answer's bytes without decoding them:
			// the frame header, or the segment header, gives its length.
			resp := make([]byte, 64<<10)
			headLen := 9
			if framed {
				headLen = 6
				if tc.compression == "lz4" {
					headLen = 8
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := nc.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(nc, resp[:headLen]); err != nil {
					b.Fatal(err)
				}
				var n int
				if framed {
					n = int(uint32(resp[0])|uint32(resp[1])<<8|uint32(resp[2]&1)<<16) + 4
				} else {
					n = int(binary.BigEndian.Uint32(resp[5:9]))
				}
				if _, err := io.ReadFull(nc, resp[headLen:headLen+n]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
