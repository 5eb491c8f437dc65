package gateway

import (
	"sort"
	"strings"
)

// cqlVersion is the CQL version cqlpg speaks: Cassandra 4.1's.
const cqlVersion = "3.4.6"

// handleOptions answers SUPPORTED: the CQL version, the compression
// algorithms offered and the protocol versions.
func (c *conn) handleOptions(resp *[]byte) error {
	(*resp)[4] = opSupported
	options := map[string][]string{
		"CQL_VERSION":       {cqlVersion},
		"COMPRESSION":       compressionNames,
		"PROTOCOL_VERSIONS": strings.Split(supportedVersions, ", "),
	}
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	*resp = appendShort(*resp, uint16(len(keys)))
	for _, k := range keys {
		*resp = appendShort(appendString(*resp, k), uint16(len(options[k])))
		for _, v := range options[k] {
			*resp = appendString(*resp, v)
		}
	}
	return nil
}

// handleStartup checks STARTUP's options and answers READY, or
// AUTHENTICATE when authentication is on.
func (c *conn) handleStartup(d *decoder, resp *[]byte) error {
	opts := startupOptions(d)
	if err := decodeError(d, "STARTUP"); err != nil {
		return err
	}
	if _, ok := opts["CQL_VERSION"]; !ok {
		return &protocolError{msg: "Missing value CQL_VERSION in STARTUP message"}
	}
	if err := c.negotiateCompression(opts["COMPRESSION"]); err != nil {
		return err
	}
	c.log.Debug("client started", "driver", opts["DRIVER_NAME"], "driver_version", opts["DRIVER_VERSION"],
		"protocol", c.version)
	c.options.Store(&opts)
	c.started.Store(true)
	if c.srv.auth != nil {
		return c.srv.auth.challenge(c, resp) // AUTHENTICATE: log in first (auth.go)
	}
	(*resp)[4] = opReady
	return nil
}

// startupOptions reads STARTUP's [string map], keys in upper case.
func startupOptions(d *decoder) map[string]string {
	opts := map[string]string{}
	for n := d.short(); n > 0 && d.err == nil; n-- {
		k := string(d.stringBytes())
		opts[strings.ToUpper(k)] = string(d.stringBytes())
	}
	return opts
}

// negotiateCompression checks STARTUP's COMPRESSION option, as Cassandra
// does: snappy or lz4 in any case, and only lz4 on v5, which compresses
// segments. The algorithm applies once STARTUP is answered (startFraming).
func (c *conn) negotiateCompression(name string) error {
	if name == "" {
		return nil
	}
	switch name = strings.ToLower(name); name {
	case "lz4":
		c.negotiated = compressLZ4
	case "snappy":
		if c.version >= 5 {
			return &protocolError{msg: "Snappy compression is not supported in protocol V5"}
		}
		c.negotiated = compressSnappy
	default:
		return &protocolError{msg: "Unknown compression algorithm: " + name}
	}
	return nil
}

// handleRegister records the events the client wants pushed.
func (c *conn) handleRegister(d *decoder, resp *[]byte) error {
	mask, err := registerMask(d)
	if err != nil {
		return err
	}
	c.events.Store(c.events.Load() | mask)
	(*resp)[4] = opReady
	return nil
}

// registerMask reads REGISTER's [string list] of event types as a set of
// event bits.
func registerMask(d *decoder) (uint32, error) {
	var mask uint32
	for n := d.short(); n > 0 && d.err == nil; n-- {
		switch string(d.stringBytes()) {
		case "TOPOLOGY_CHANGE":
			mask |= eventTopology
		case "STATUS_CHANGE":
			mask |= eventStatus
		case "SCHEMA_CHANGE":
			mask |= eventSchema
		default:
			if d.err == nil {
				return 0, &protocolError{msg: "Invalid event type in REGISTER message"}
			}
		}
	}
	return mask, decodeError(d, "REGISTER")
}
