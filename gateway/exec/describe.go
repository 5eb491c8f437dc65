package exec

import (
	"encoding/binary"
	"net"
	"slices"
	"strings"

	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/translate"
)

// describeSnitch is the snitch a stock Cassandra 4.1 node reports: the
// dynamic snitch wrapping the configured one, named as DESCRIBE CLUSTER
// names it (without the org.apache.cassandra.locator package).
const describeSnitch = "DynamicEndpointSnitch"

// describe answers DESCRIBE with a Rows result, as Cassandra 4.1 does on
// the server: the rows come from the execution's schema snapshot, or for
// DESCRIBE CLUSTER from the gateway's configuration and ring. All rows go
// in one page.
func (e *Execution) describe(p *translate.Describe, resp *[]byte) error {
	var rows [][][]byte
	if p.Kind == translate.DescribeCluster {
		rows = [][][]byte{e.clusterRow(p.RangeOwnership)}
	} else {
		elems, err := p.Elements(e.schema)
		if err != nil {
			return err
		}
		for _, el := range elems {
			row := [][]byte{TextValue(el.Keyspace), TextValue(el.Type), TextValue(el.Name)}
			if !p.Kind.IsListing() {
				row = append(row, TextValue(el.Create))
			}
			rows = append(rows, row)
		}
	}
	*resp = cqlwire.AppendInt(*resp, cqlwire.ResultRows)
	*resp = cqlwire.AppendRowsMetadata(*resp, p.Result, e.params.SkipMetadata(), nil)
	*resp = cqlwire.AppendInt(*resp, int32(len(rows)))
	for _, row := range rows {
		for _, v := range row {
			*resp = cqlwire.AppendBytes(*resp, v)
		}
	}
	return nil
}

// clusterRow is DESCRIBE CLUSTER's row: the cluster name, partitioner and
// snitch without their package names, and with rangeOwnership each token
// range's end token mapped to its replicas. The gateway is the cluster's
// only node, so it owns every range, under the address the client reached.
func (e *Execution) clusterRow(rangeOwnership bool) [][]byte {
	row := [][]byte{
		TextValue(e.env.Config.ClusterName),
		TextValue(strings.TrimPrefix(Partitioner, "org.apache.cassandra.dht.")),
		TextValue(describeSnitch),
	}
	if !rangeOwnership {
		return row
	}
	ip := net.IPv4(127, 0, 0, 1)
	if addr, ok := e.c.LocalAddr().(*net.TCPAddr); ok {
		ip = addr.IP
	}
	// InetAddressAndPort.toString: "/address:port", on the storage port
	// system.local reports.
	endpoint := collectionValue([][]byte{[]byte("/" + net.JoinHostPort(ip.String(), "7000"))})
	var ends []string
	for _, t := range e.topo.Ring.Tokens() {
		ends = append(ends, t.String())
	}
	// Map keys are serialized in their type's order: text sorts bytewise.
	slices.Sort(ends)
	ends = slices.Compact(ends)
	m := binary.BigEndian.AppendUint32(nil, uint32(len(ends)))
	for _, end := range ends {
		m = cqlwire.AppendBytes(cqlwire.AppendBytes(m, []byte(end)), endpoint)
	}
	return append(row, m)
}
