package gateway

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/sharding"
)

// TestCASWriteTimeoutEncoding checks a CAS write timeout on the wire: in
// protocol v5 it carries the contentions, the rounds the write lost to
// others; v4 has no room for them.
func TestCASWriteTimeoutEncoding(t *testing.T) {
	c := &conn{log: slog.New(slog.DiscardHandler)}
	err := &exec.WriteTimeoutError{WriteType: primitive.WriteTypeCas, Consistency: sharding.Serial, Received: 1, BlockFor: 2,
		Contentions: 3}
	for _, tc := range []struct {
		version     byte
		contentions uint16
	}{{4, 0}, {5, 3}} {
		var b []byte
		appendMessage(&b, tc.version, 1, c.errorMessage(err))
		f, derr := frame.NewCodec().DecodeFrame(bytes.NewReader(b))
		if derr != nil {
			t.Fatalf("v%d: %v", tc.version, derr)
		}
		wto, ok := f.Body.Message.(*message.WriteTimeout)
		if !ok || wto.WriteType != primitive.WriteTypeCas || wto.Consistency != primitive.ConsistencyLevelSerial ||
			wto.Received != 1 || wto.BlockFor != 2 || wto.Contentions != tc.contentions {
			t.Errorf("v%d: %#v, want a CAS write timeout at SERIAL, 1 of 2, %d contentions", tc.version, f.Body.Message, tc.contentions)
		}
	}
}
