package gateway

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/pgschema"
)

// Events the gateway pushes to the clients registered for them: other
// gateways coming and going (TOPOLOGY_CHANGE, STATUS_CHANGE), which the
// registry reports, and the schema changes other gateways make
// (SCHEMA_CHANGE), which the gateway reads from the reloaded schema.

// startGateways registers the gateway with the other gateways on the
// shards (cluster.Registry), which tell its clients when gateways come
// and go and when another one changes the schema.
func (s *Server) startGateways(ctx context.Context) {
	s.gateways = cluster.StartRegistry(ctx, s.cluster, s.cfg.Gateways, cluster.Self{HostID: s.hostID,
		Datacenter: s.cfg.Datacenter, Rack: s.cfg.Rack, Release: exec.ReleaseVersion, Started: s.started,
		Listen: s.listener.Addr(), Origin: s.originAddr()}, s.log, cluster.RegistryHooks{Event: s.broadcastGatewayEvent, SchemaChanged: s.followSchema})
}

// broadcastGatewayEvent pushes the registry's news of a gateway to the
// clients registered for that kind of event.
func (s *Server) broadcastGatewayEvent(event, change string, addr netip.AddrPort) {
	kind := uint32(eventTopology)
	if event == "STATUS_CHANGE" {
		kind = eventStatus
	}
	s.broadcastEvent(kind, event, change, addr)
}

// broadcastTopologyChange pushes a TOPOLOGY_CHANGE event to every
// connection registered for it.
func (s *Server) broadcastTopologyChange(change string, addr netip.AddrPort) {
	s.broadcastEvent(eventTopology, "TOPOLOGY_CHANGE", change, addr)
}

// broadcastEvent pushes a topology or status event to every connection
// registered for its kind.
func (s *Server) broadcastEvent(kind uint32, event, change string, addr netip.AddrPort) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.events.Load()&kind == 0 {
			continue
		}
		b := cqlwire.GetBuffer(0)
		*b = cqlwire.AppendHeader((*b)[:0], c.version, -1, cqlwire.OpEvent)
		*b = appendInet(cqlwire.AppendString(cqlwire.AppendString(*b, event), change), addr)
		cqlwire.FinishFrame(*b)
		c.sendEvent(b)
	}
}

// appendInet writes an [inet]: the address's length and bytes, then the
// port as an [int].
func appendInet(b []byte, addr netip.AddrPort) []byte {
	ip := addr.Addr().Unmap().AsSlice()
	b = append(append(b, byte(len(ip))), ip...)
	return cqlwire.AppendInt(b, int32(addr.Port()))
}

// followSchema reloads the schema that another gateway changed and pushes
// the changes it finds to the connections registered for SCHEMA_CHANGE.
func (s *Server) followSchema(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	old, cur, err := s.cluster.SwapSchema(ctx)
	if err != nil {
		s.log.Warn("cannot reload the schema another gateway changed", "err", err)
		return
	}
	if old.Version == cur.Version {
		return
	}
	events := schemaEvents(old, cur)
	s.log.Debug("followed a schema change", "version", pgschema.UUIDText(cur.Version[:]), "events", len(events))
	for _, ev := range events {
		s.broadcastSchemaChange(ev.change, ev.target, ev.keyspace, ev.name)
	}
}

// schemaEvent is one SCHEMA_CHANGE event's content.
type schemaEvent struct {
	change, target, keyspace, name string
}

// schemaEvents derives the SCHEMA_CHANGE events that lead from one schema
// snapshot to another, as the gateway that made the changes sent them:
// keyspaces, user types and tables created, dropped or changed, a table
// counting as changed when its definition or its indexes are. A dropped
// keyspace gives one event, as in Cassandra; a created one is followed by
// what it was created with.
func schemaEvents(old, cur *pgschema.Schema) []schemaEvent {
	var out []schemaEvent
	for _, k := range cur.Keyspaces() {
		if k.Virtual {
			continue
		}
		was := old.Keyspace(k.Name)
		switch {
		case was == nil:
			out = append(out, schemaEvent{"CREATED", "KEYSPACE", k.Name, ""})
			was = &pgschema.Keyspace{}
		case was.CreateStatement() != k.CreateStatement():
			out = append(out, schemaEvent{"UPDATED", "KEYSPACE", k.Name, ""})
		}
		out = append(out, elementEvents(k.Name, "TYPE", typeDefinitions(was), typeDefinitions(k))...)
		out = append(out, elementEvents(k.Name, "TABLE", tableDefinitions(was), tableDefinitions(k))...)
	}
	for _, k := range old.Keyspaces() {
		if !k.Virtual && cur.Keyspace(k.Name) == nil {
			out = append(out, schemaEvent{"DROPPED", "KEYSPACE", k.Name, ""})
		}
	}
	return out
}

// elementEvents compares a keyspace's elements of one kind, given by name
// as their definitions.
func elementEvents(keyspace, target string, old, cur map[string]string) []schemaEvent {
	var out []schemaEvent
	for _, name := range sortedKeys(cur) {
		switch def, ok := old[name]; {
		case !ok:
			out = append(out, schemaEvent{"CREATED", target, keyspace, name})
		case def != cur[name]:
			out = append(out, schemaEvent{"UPDATED", target, keyspace, name})
		}
	}
	for _, name := range sortedKeys(old) {
		if _, ok := cur[name]; !ok {
			out = append(out, schemaEvent{"DROPPED", target, keyspace, name})
		}
	}
	return out
}

func typeDefinitions(k *pgschema.Keyspace) map[string]string {
	out := make(map[string]string, len(k.Types))
	for name, t := range k.Types {
		out[name] = t.CreateStatement()
	}
	return out
}

// tableDefinitions gives each table's full definition: DESCRIBE's with
// the internals (id, dropped columns) and the indexes.
func tableDefinitions(k *pgschema.Keyspace) map[string]string {
	out := make(map[string]string, len(k.Tables))
	for name, t := range k.Tables {
		var b strings.Builder
		b.WriteString(t.Describe(true))
		for _, idx := range t.SortedIndexes() {
			b.WriteString(idx.CreateStatement(t))
		}
		out[name] = b.String()
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// parseUUID reads a uuid's canonical text.
func parseUUID(s string) ([16]byte, error) {
	u, ok := pgschema.ParseUUID(s)
	if !ok {
		return u, fmt.Errorf("malformed uuid %q", s)
	}
	return u, nil
}
