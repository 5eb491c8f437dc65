package gateway

import (
	"sort"
	"strings"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/exec"
)

// handleOptions answers SUPPORTED: the CQL version, the compression
// algorithms offered and the protocol versions.
func (c *conn) handleOptions(resp *[]byte) error {
	(*resp)[4] = cqlwire.OpSupported
	options := map[string][]string{
		"CQL_VERSION":       {exec.CqlVersion},
		"COMPRESSION":       cqlwire.CompressionNames,
		"PROTOCOL_VERSIONS": strings.Split(cqlwire.SupportedVersions, ", "),
	}
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	*resp = cqlwire.AppendShort(*resp, uint16(len(keys)))
	for _, k := range keys {
		*resp = cqlwire.AppendShort(cqlwire.AppendString(*resp, k), uint16(len(options[k])))
		for _, v := range options[k] {
			*resp = cqlwire.AppendString(*resp, v)
		}
	}
	return nil
}

// handleStartup checks STARTUP's options and answers READY, or
// AUTHENTICATE when authentication is on.
func (c *conn) handleStartup(d *cqlwire.Decoder, resp *[]byte) error {
	opts := startupOptions(d)
	if err := cqlwire.DecodeError(d, "STARTUP"); err != nil {
		return err
	}
	if _, ok := opts["CQL_VERSION"]; !ok {
		return &cqlwire.ProtocolError{Msg: "Missing value CQL_VERSION in STARTUP message"}
	}
	if err := c.negotiateCompression(opts["COMPRESSION"]); err != nil {
		return err
	}
	c.log.Debug("client started", "driver", opts["DRIVER_NAME"], "driver_version", opts["DRIVER_VERSION"],
		"protocol", c.version)
	c.options.Store(&opts)
	c.started.Store(true)
	if c.srv.auth != nil {
		return c.srv.auth.Challenge(c, resp) // AUTHENTICATE: log in first (package auth)
	}
	(*resp)[4] = cqlwire.OpReady
	return nil
}

// startupOptions reads STARTUP's [string map], keys in upper case.
func startupOptions(d *cqlwire.Decoder) map[string]string {
	opts := map[string]string{}
	for n := d.Short(); n > 0 && d.Err == nil; n-- {
		k := string(d.StringBytes())
		opts[strings.ToUpper(k)] = string(d.StringBytes())
	}
	return opts
}

// negotiateCompression checks STARTUP's COMPRESSION option, as Cassandra
// does: snappy or cqlwire.Lz4 in any case, and only cqlwire.Lz4 on v5, which compresses
// segments. The algorithm applies once STARTUP is answered (startFraming).
func (c *conn) negotiateCompression(name string) error {
	if name == "" {
		return nil
	}
	switch name = strings.ToLower(name); name {
	case "lz4":
		c.negotiated = cqlwire.CompressLZ4
	case "snappy":
		if c.version >= 5 {
			return &cqlwire.ProtocolError{Msg: "Snappy compression is not supported in protocol V5"}
		}
		c.negotiated = cqlwire.CompressSnappy
	default:
		return &cqlwire.ProtocolError{Msg: "Unknown compression algorithm: " + name}
	}
	return nil
}

// handleRegister records the events the client wants pushed.
func (c *conn) handleRegister(d *cqlwire.Decoder, resp *[]byte) error {
	mask, err := registerMask(d)
	if err != nil {
		return err
	}
	c.events.Store(c.events.Load() | mask)
	(*resp)[4] = cqlwire.OpReady
	return nil
}

// registerMask reads REGISTER's [string list] of event types as a set of
// event bits.
func registerMask(d *cqlwire.Decoder) (uint32, error) {
	var mask uint32
	for n := d.Short(); n > 0 && d.Err == nil; n-- {
		switch string(d.StringBytes()) {
		case "TOPOLOGY_CHANGE":
			mask |= eventTopology
		case "STATUS_CHANGE":
			mask |= eventStatus
		case "SCHEMA_CHANGE":
			mask |= eventSchema
		default:
			if d.Err == nil {
				return 0, &cqlwire.ProtocolError{Msg: "Invalid event type in REGISTER message"}
			}
		}
	}
	return mask, cqlwire.DecodeError(d, "REGISTER")
}
