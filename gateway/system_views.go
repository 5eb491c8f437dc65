package gateway

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// authRows answers system_auth's tables from the roles every shard's
// catalog holds, as Cassandra's CassandraRoleManager and
// CassandraAuthorizer keep them: password hashes in their bcrypt form.
// Reading them needs SELECT on them, which superusers hold.
func (e *execution) authRows(table string) ([]virtualRow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), e.env.cfg.ReadTimeout)
	defer cancel()
	var rows []virtualRow
	err := e.env.cluster.ReadCatalog(ctx, func(q pgschema.Querier) error {
		rows = rows[:0]
		var role, other string
		var login, super bool
		var names []string
		var hash *string
		var sql string
		var scans []any
		var row func() virtualRow
		switch table {
		case "roles":
			sql = `SELECT role, can_login, is_superuser, member_of, salted_hash FROM cqlpg.roles`
			scans = []any{&role, &login, &super, &names, &hash}
			row = func() virtualRow {
				r := virtualRow{"role": textValue(role), "can_login": boolValue(login), "is_superuser": boolValue(super)}
				if len(names) > 0 {
					r["member_of"] = textSetValue(names)
				}
				if hash != nil {
					r["salted_hash"] = textValue(*hash)
				}
				return r
			}
		case "role_members":
			sql = `SELECT m, r.role FROM cqlpg.roles r, unnest(r.member_of) AS m`
			scans = []any{&role, &other}
			row = func() virtualRow { return virtualRow{"role": textValue(role), "member": textValue(other)} }
		default:
			sql = `SELECT role, resource, permissions FROM cqlpg.role_permissions`
			scans = []any{&role, &other, &names}
			row = func() virtualRow {
				slices.Sort(names)
				return virtualRow{"role": textValue(role), "resource": textValue(other), "permissions": textSetValue(names)}
			}
		}
		result, err := q.Query(ctx, sql)
		if err != nil {
			return err
		}
		_, err = pgx.ForEachRow(result, scans, func() error {
			rows = append(rows, row())
			return nil
		})
		return err
	})
	return rows, err
}

// clientRows answers system_views.clients: this gateway's connections.
func (s *Server) clientRows() []virtualRow {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var rows []virtualRow
	for _, c := range conns {
		addr, _ := c.nc.RemoteAddr().(*net.TCPAddr)
		if addr == nil {
			continue
		}
		stage := "established"
		if c.started.Load() {
			stage = "ready"
		}
		row := virtualRow{"address": inetValue(addr.IP), "port": intValue(int32(addr.Port)),
			"hostname": textValue(addr.IP.String()), "connection_stage": textValue(stage),
			"protocol_version": intValue(int32(c.version)), "request_count": bigintValue(c.requests.Load())}
		if s.auth != nil {
			if role := s.auth.RoleOf(c); role != "" {
				row["username"] = textValue(role)
			}
		}
		if opts := c.options.Load(); opts != nil {
			row["client_options"] = textMapValue(*opts)
			if v, ok := (*opts)["DRIVER_NAME"]; ok {
				row["driver_name"] = textValue(v)
			}
			if v, ok := (*opts)["DRIVER_VERSION"]; ok {
				row["driver_version"] = textValue(v)
			}
		}
		tc, ssl := c.nc.(*tls.Conn)
		row["ssl_enabled"] = boolValue(ssl)
		if ssl {
			st := tc.ConnectionState()
			row["ssl_protocol"] = textValue(tls.VersionName(st.Version))
			row["ssl_cipher_suite"] = textValue(tls.CipherSuiteName(st.CipherSuite))
		}
		rows = append(rows, row)
	}
	return rows
}

// settingRows answers system_views.settings: the gateway's settings, by
// Cassandra's names where one means the same, with secrets redacted.
func (s *Server) settingRows() []virtualRow {
	c := s.cfg
	settings := map[string]string{
		"native_transport_port":                        portOf(c.Listen),
		"rpc_address":                                  hostOf(c.Listen),
		"write_request_timeout":                        durationSetting(c.WriteTimeout),
		"counter_write_request_timeout":                durationSetting(c.CounterWriteTimeout),
		"read_request_timeout":                         durationSetting(c.ReadTimeout),
		"range_request_timeout":                        durationSetting(c.RangeTimeout),
		"request_timeout":                              durationSetting(c.RequestTimeout),
		"native_transport_max_frame_size":              fmt.Sprintf("%dB", c.MaxFrameSize),
		"native_transport_max_concurrent_connections":  fmt.Sprint(c.MaxConnections),
		"native_transport_max_requests_per_connection": fmt.Sprint(c.MaxRequestsPerConn),
		"batch_size_warn_threshold":                    fmt.Sprintf("%dKiB", c.BatchSizeWarn>>10),
		"batch_size_fail_threshold":                    fmt.Sprintf("%dKiB", c.BatchSizeFail>>10),
		"authenticator":                                "AllowAllAuthenticator",
		"authorizer":                                   "AllowAllAuthorizer",
		"client_encryption_options_enabled":            fmt.Sprint(c.TLS != nil),
		"num_tokens":                                   fmt.Sprint(c.NumTokens),
		"cluster_name":                                 c.ClusterName,
		"endpoint_snitch":                              "GossipingPropertyFileSnitch",
		"dc":                                           c.Datacenter,
		"rack":                                         c.Rack,
		"partitioner":                                  partitioner,
	}
	if c.Auth.Enabled {
		settings["authenticator"], settings["authorizer"] = "PasswordAuthenticator", "CassandraAuthorizer"
		settings["credentials_validity"] = durationSetting(c.Auth.CredentialsValidity)
		settings["permissions_validity"] = durationSetting(c.Auth.PermissionsValidity)
	}
	for i, sh := range c.Shards {
		settings[fmt.Sprintf("cqlpg_shard_%d", i)] = sharding.Redact(sh.URL)
	}
	var rows []virtualRow
	for _, name := range slices.Sorted(maps.Keys(settings)) {
		rows = append(rows, virtualRow{"name": textValue(name), "value": textValue(settings[name])})
	}
	return rows
}

func durationSetting(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

func portOf(hostport string) string {
	_, port, _ := net.SplitHostPort(hostport)
	return port
}

func hostOf(hostport string) string {
	host, _, _ := net.SplitHostPort(hostport)
	return strings.Trim(host, "[]")
}
