package gateway_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/compression/lz4"
	"github.com/datastax/go-cassandra-native-protocol/compression/snappy"
	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
	pierrec "github.com/pierrec/lz4/v4"
)

// compressedConn is a raw v3/v4 connection that negotiated compression;
// the protocol library's compressors are the independent codecs.
type compressedConn struct {
	*rawConn
	version primitive.ProtocolVersion
}

func startupCompressed(t *testing.T, v primitive.ProtocolVersion, algorithm string) *compressedConn {
	t.Helper()
	c := dialRaw(t)
	switch algorithm {
	case "lz4":
		c.codec = frame.NewCodecWithCompression(lz4.Compressor{})
	case "snappy":
		c.codec = frame.NewCodecWithCompression(snappy.Compressor{})
	}
	c.sendMessage(v, 1, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0", "COMPRESSION": algorithm}})
	f := c.receive()
	if _, ok := f.Body.Message.(*message.Ready); !ok {
		t.Fatalf("STARTUP with %s answered %v", algorithm, f.Body.Message)
	}
	// READY answers STARTUP before compression applies.
	if f.Header.Flags.Contains(primitive.HeaderFlagCompressed) {
		t.Error("READY compressed")
	}
	return &compressedConn{rawConn: c, version: v}
}

// query sends a QUERY, compressed or not, and returns the answer.
func (c *compressedConn) query(stream int16, compressed bool, q string, values ...[]byte) *frame.Frame {
	c.t.Helper()
	opts := &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}
	for _, v := range values {
		opts.PositionalValues = append(opts.PositionalValues, primitive.NewValue(v))
	}
	f := frame.NewFrame(c.version, stream, &message.Query{Query: q, Options: opts})
	if compressed {
		f.Header.Flags = f.Header.Flags.Add(primitive.HeaderFlagCompressed)
	}
	if err := c.codec.EncodeFrame(f, c.nc); err != nil {
		c.t.Fatal(err)
	}
	return c.receive()
}

// TestCompressedFrames checks LZ4 and Snappy frame compression on v3 and
// v4: compressed requests are read, uncompressed ones still are, and every
// answer with a body comes compressed.
func TestCompressedFrames(t *testing.T) {
	exec(t, session(t, ""),
		"CREATE KEYSPACE compressed WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE compressed.t (k int PRIMARY KEY, v text)")
	// Words in a random order compress a few times over: the library's
	// LZ4 decoder, the oracle here, gives up beyond eight.
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa")
	var sb strings.Builder
	x := uint32(7)
	for sb.Len() < 200_000 {
		x = x*1664525 + 1013904223
		sb.WriteString(words[x>>28])
		sb.WriteByte(' ')
	}
	big := sb.String()
	for _, v := range []primitive.ProtocolVersion{3, 4} {
		for _, algorithm := range []string{"lz4", "snappy"} {
			t.Run(fmt.Sprintf("v%d/%s", v, algorithm), func(t *testing.T) {
				c := startupCompressed(t, v, algorithm)
				key := binary.BigEndian.AppendUint32(nil, uint32(v)*10+uint32(len(algorithm)))
				f := c.query(2, true, "INSERT INTO compressed.t (k, v) VALUES (?, ?)", key, []byte(big))
				if _, ok := f.Body.Message.(*message.VoidResult); !ok {
					t.Fatalf("compressed INSERT: %v", f.Body.Message)
				}
				for i, compressed := range []bool{true, false} {
					f = c.query(int16(3+i), compressed, "SELECT v FROM compressed.t WHERE k = ?", key)
					rows := mustRows(t, f)
					if !f.Header.Flags.Contains(primitive.HeaderFlagCompressed) {
						t.Error("rows not compressed")
					}
					if len(rows.Data) != 1 || string(rows.Data[0][0]) != big {
						t.Errorf("read back %d rows", len(rows.Data))
					}
				}
				// A body that does not decompress is refused; the framing
				// holds, so the connection goes on.
				c.send(byte(v), 0x01, 5, 0x07, []byte{0, 0, 0, 9, 0xff, 0xff, 0xff})
				if _, ok := c.receive().Body.Message.(*message.ProtocolError); !ok {
					t.Error("corrupt compressed body not answered by a protocol error")
				}
				mustRows(t, c.query(6, true, "SELECT key FROM system.local"))
			})
		}
	}
}

func TestCompressionNegotiation(t *testing.T) {
	for _, tc := range []struct {
		version     primitive.ProtocolVersion
		compression string
		want        string
	}{
		{4, "zstd", "Unknown compression algorithm: zstd"},
		{4, "LZ4X", "Unknown compression algorithm: lz4x"},
		{5, "snappy", "Snappy compression is not supported in protocol V5"},
	} {
		c := dialRaw(t)
		c.sendMessage(tc.version, 1, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0", "COMPRESSION": tc.compression}})
		perr, ok := c.receive().Body.Message.(*message.ProtocolError)
		if !ok || perr.ErrorMessage != tc.want {
			t.Errorf("v%d %s: got %v, want %q", tc.version, tc.compression, perr, tc.want)
		}
	}
	// Names are matched regardless of case, as Cassandra does.
	startupCompressed(t, 4, "LZ4")
	// A compressed frame without compression negotiated breaks the framing.
	c := dialRaw(t)
	c.startup(4)
	c.send(4, 0x01, 3, 0x05, nil)
	if perr, ok := c.receive().Body.Message.(*message.ProtocolError); !ok ||
		perr.ErrorMessage != "Received a compressed frame, but no compression was negotiated" {
		t.Errorf("compressed frame without compression: %v", perr)
	}
}

// countingCompressor counts the frames a driver compressed and
// decompressed, to show that compression is in use both ways.
type countingCompressor struct {
	gocql.Compressor
	encoded, decoded atomic.Int64
}

func (c *countingCompressor) Encode(b []byte) ([]byte, error) {
	c.encoded.Add(1)
	return c.Compressor.Encode(b)
}

func (c *countingCompressor) Decode(b []byte) ([]byte, error) {
	c.decoded.Add(1)
	return c.Compressor.Decode(b)
}

// lz4Compressor is LZ4 for gocql 1.7, whose own LZ4 package is a module
// of its own that the module proxy does not serve: the uncompressed
// length as a big-endian int, then the block, as Cassandra frames it.
type lz4Compressor struct{}

func (lz4Compressor) Name() string { return "lz4" }

func (lz4Compressor) Encode(b []byte) ([]byte, error) {
	out := make([]byte, 4+pierrec.CompressBlockBound(len(b)))
	binary.BigEndian.PutUint32(out, uint32(len(b)))
	var c pierrec.Compressor
	n, err := c.CompressBlock(b, out[4:])
	return out[:4+n], err
}

func (lz4Compressor) Decode(b []byte) ([]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("lz4 body of %d bytes", len(b))
	}
	out := make([]byte, binary.BigEndian.Uint32(b))
	if len(out) == 0 {
		return out, nil
	}
	n, err := pierrec.UncompressBlock(b[4:], out)
	return out[:n], err
}

// TestGocqlCompression runs gocql 1.7 on v4 with Snappy, built in, and
// LZ4: DDL, prepared statements, paging and a batch.
func TestGocqlCompression(t *testing.T) {
	exec(t, session(t, ""), "CREATE KEYSPACE gocqlz WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	for _, comp := range []gocql.Compressor{gocql.SnappyCompressor{}, lz4Compressor{}} {
		t.Run(comp.Name(), func(t *testing.T) {
			counting := &countingCompressor{Compressor: comp}
			cfg := clusterConfig(gw, "gocqlz")
			cfg.Compressor = counting
			cfg.ProtoVersion = 4
			sess, err := cfg.CreateSession()
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			table := "t_" + comp.Name()
			exec(t, sess, "CREATE TABLE "+table+" (k int, c int, v text, PRIMARY KEY (k, c))")
			text := strings.Repeat("x", 3000)
			b := sess.NewBatch(gocql.UnloggedBatch)
			for c := range 10 {
				b.Query("INSERT INTO "+table+" (k, c, v) VALUES (?, ?, ?)", 1, c, text)
			}
			if err := sess.ExecuteBatch(b); err != nil {
				t.Fatal(err)
			}
			iter := sess.Query("SELECT c, v FROM "+table+" WHERE k = ?", 1).PageSize(3).Iter()
			var c, n int
			var v string
			for iter.Scan(&c, &v) {
				if c != n || v != text {
					t.Fatalf("row %d: c=%d, %d bytes", n, c, len(v))
				}
				n++
			}
			if err := iter.Close(); err != nil || n != 10 {
				t.Fatalf("read %d rows: %v", n, err)
			}
			if counting.encoded.Load() == 0 || counting.decoded.Load() == 0 {
				t.Errorf("frames compressed %d, decompressed %d: compression not in use",
					counting.encoded.Load(), counting.decoded.Load())
			}
		})
	}
}

// TestLZ4EmptyBody checks that an empty body compressed as Cassandra does
// (length 0 and an empty block) is read.
func TestLZ4EmptyBody(t *testing.T) {
	c := startupCompressed(t, 4, "lz4")
	var body bytes.Buffer
	if err := (lz4.Compressor{}).CompressWithLength(&bytes.Buffer{}, &body); err != nil {
		t.Fatal(err)
	}
	c.send(4, 0x01, 3, 0x05, body.Bytes()) // OPTIONS, compressed
	if _, ok := c.receive().Body.Message.(*message.Supported); !ok {
		t.Error("compressed empty OPTIONS not answered by SUPPORTED")
	}
}
