package cqlwire

import (
	"encoding/binary"
	"fmt"
)

// Opcodes of the native protocol.
const (
	OpError         byte = 0x00
	OpStartup       byte = 0x01
	OpReady         byte = 0x02
	OpAuthenticate  byte = 0x03
	OpOptions       byte = 0x05
	OpSupported     byte = 0x06
	OpQuery         byte = 0x07
	OpResult        byte = 0x08
	OpPrepare       byte = 0x09
	OpExecute       byte = 0x0A
	OpRegister      byte = 0x0B
	OpEvent         byte = 0x0C
	OpBatch         byte = 0x0D
	opAuthChallenge byte = 0x0E
	OpAuthResponse  byte = 0x0F
	OpAuthSuccess   byte = 0x10
)

// OpNames names opcodes for logs and metrics.
var OpNames = map[byte]string{
	OpError: "ERROR", OpStartup: "STARTUP", OpReady: "READY", OpAuthenticate: "AUTHENTICATE",
	OpOptions: "OPTIONS", OpSupported: "SUPPORTED", OpQuery: "QUERY", OpResult: "RESULT",
	OpPrepare: "PREPARE", OpExecute: "EXECUTE", OpRegister: "REGISTER", OpEvent: "EVENT",
	OpBatch: "BATCH", opAuthChallenge: "AUTH_CHALLENGE", OpAuthResponse: "AUTH_RESPONSE",
	OpAuthSuccess: "AUTH_SUCCESS",
}

// Frame header flags.
const (
	FlagCompression   byte = 0x01
	FlagTracing       byte = 0x02
	FlagCustomPayload byte = 0x04
	FlagWarning       byte = 0x08
	flagBeta          byte = 0x10
)

// HeaderSize is the length of a frame header (an envelope's, in v5):
// version, flags, a two-byte stream id, opcode and a four-byte body length.
const HeaderSize = 9

// Protocol versions cqlpg speaks. None is a beta version, so the beta flag
// is never required; like Cassandra, cqlpg ignores it where it is set.
const (
	MinVersion = 3
	MaxVersion = 5
)

// SupportedVersions lists the versions as Cassandra's error text and
// SUPPORTED's PROTOCOL_VERSIONS show them.
const SupportedVersions = "3/v3, 4/v4, 5/v5"

// ResponseBit marks a frame sent by the server.
const ResponseBit = 0x80

// Header is a decoded frame header.
type Header struct {
	Version byte
	Flags   byte
	Stream  int16
	Opcode  byte
	Length  int32
}

func ParseHeader(b []byte) Header {
	return Header{
		Version: b[0] &^ ResponseBit,
		Flags:   b[1],
		Stream:  int16(binary.BigEndian.Uint16(b[2:4])),
		Opcode:  b[4],
		Length:  int32(binary.BigEndian.Uint32(b[5:9])),
	}
}

// AppendHeader starts a response frame; FinishFrame fills in its length.
func AppendHeader(b []byte, version byte, stream int16, opcode byte) []byte {
	return append(b, version|ResponseBit, 0, byte(uint16(stream)>>8), byte(stream), opcode, 0, 0, 0, 0)
}

// FinishFrame writes the body length of the frame starting at b[0].
func FinishFrame(b []byte) {
	binary.BigEndian.PutUint32(b[5:9], uint32(len(b)-HeaderSize))
}

// ProtocolError is a request the gateway cannot make sense of (CQL
// ProtocolError, 0x000A). fatal means the framing itself cannot be trusted
// any more and the connection closes after the answer.
type ProtocolError struct {
	Msg   string
	Fatal bool
	// Version is the protocol version to answer in.
	Version byte
}

func (e *ProtocolError) Error() string { return e.Msg }

// DecodeError turns a malformed body, one d failed to decode, into a
// protocol error naming the message (what).
func DecodeError(d *Decoder, what string) error {
	if d.Err == nil {
		return nil
	}
	return &ProtocolError{Msg: fmt.Sprintf("Invalid %s message: %v", what, d.Err)}
}

// UnsupportedVersion builds the error that makes drivers step down to a
// version cqlpg speaks; it is answered in the highest such version.
func UnsupportedVersion(v byte) *ProtocolError {
	answer := byte(MaxVersion)
	if v < MinVersion {
		answer = MinVersion
	}
	return &ProtocolError{Msg: fmt.Sprintf("Invalid or unsupported protocol version (%d); supported versions are (%s)",
		v, SupportedVersions), Fatal: true, Version: answer}
}
