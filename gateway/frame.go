package gateway

import (
	"encoding/binary"
	"fmt"
)

// Opcodes of the native protocol.
const (
	opError         byte = 0x00
	opStartup       byte = 0x01
	opReady         byte = 0x02
	opAuthenticate  byte = 0x03
	opOptions       byte = 0x05
	opSupported     byte = 0x06
	opQuery         byte = 0x07
	opResult        byte = 0x08
	opPrepare       byte = 0x09
	opExecute       byte = 0x0A
	opRegister      byte = 0x0B
	opEvent         byte = 0x0C
	opBatch         byte = 0x0D
	opAuthChallenge byte = 0x0E
	opAuthResponse  byte = 0x0F
	opAuthSuccess   byte = 0x10
)

// opNames names opcodes for logs and metrics.
var opNames = map[byte]string{
	opError: "ERROR", opStartup: "STARTUP", opReady: "READY", opAuthenticate: "AUTHENTICATE",
	opOptions: "OPTIONS", opSupported: "SUPPORTED", opQuery: "QUERY", opResult: "RESULT",
	opPrepare: "PREPARE", opExecute: "EXECUTE", opRegister: "REGISTER", opEvent: "EVENT",
	opBatch: "BATCH", opAuthChallenge: "AUTH_CHALLENGE", opAuthResponse: "AUTH_RESPONSE",
	opAuthSuccess: "AUTH_SUCCESS",
}

// Frame header flags.
const (
	flagCompression   byte = 0x01
	flagTracing       byte = 0x02
	flagCustomPayload byte = 0x04
	flagWarning       byte = 0x08
	flagBeta          byte = 0x10
)

// headerSize is the length of a frame header (an envelope's, in v5):
// version, flags, a two-byte stream id, opcode and a four-byte body length.
const headerSize = 9

// Protocol versions cqlpg speaks. None is a beta version, so the beta flag
// is never required; like Cassandra, cqlpg ignores it where it is set.
const (
	minVersion = 3
	maxVersion = 5
)

// supportedVersions lists the versions as Cassandra's error text and
// SUPPORTED's PROTOCOL_VERSIONS show them.
const supportedVersions = "3/v3, 4/v4, 5/v5"

// responseBit marks a frame sent by the server.
const responseBit = 0x80

// header is a decoded frame header.
type header struct {
	version byte
	flags   byte
	stream  int16
	opcode  byte
	length  int32
}

func parseHeader(b []byte) header {
	return header{
		version: b[0] &^ responseBit,
		flags:   b[1],
		stream:  int16(binary.BigEndian.Uint16(b[2:4])),
		opcode:  b[4],
		length:  int32(binary.BigEndian.Uint32(b[5:9])),
	}
}

// appendHeader starts a response frame; finishFrame fills in its length.
func appendHeader(b []byte, version byte, stream int16, opcode byte) []byte {
	return append(b, version|responseBit, 0, byte(uint16(stream)>>8), byte(stream), opcode, 0, 0, 0, 0)
}

// finishFrame writes the body length of the frame starting at b[0].
func finishFrame(b []byte) {
	binary.BigEndian.PutUint32(b[5:9], uint32(len(b)-headerSize))
}

// protocolError is a request the gateway cannot make sense of (CQL
// ProtocolError, 0x000A). fatal means the framing itself cannot be trusted
// any more and the connection closes after the answer.
type protocolError struct {
	msg   string
	fatal bool
	// version is the protocol version to answer in.
	version byte
}

func (e *protocolError) Error() string { return e.msg }

// unsupportedVersion builds the error that makes drivers step down to a
// version cqlpg speaks; it is answered in the highest such version.
func unsupportedVersion(v byte) *protocolError {
	answer := byte(maxVersion)
	if v < minVersion {
		answer = minVersion
	}
	return &protocolError{msg: fmt.Sprintf("Invalid or unsupported protocol version (%d); supported versions are (%s)",
		v, supportedVersions), fatal: true, version: answer}
}
