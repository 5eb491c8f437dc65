package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"go.yaml.in/yaml/v3"
)

// shardKeys are the keys of a shard in the file's list of shards.
var shardKeys = []string{"url", "datacenter", "rack"}

// loadFile sets the settings the YAML file at path gives, and notes where
// in from.
func (c *config) loadFile(path string, from origins) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) == 0 {
		return nil // an empty file, or only comments
	}
	f := fileLoader{c: c, path: path, from: from}
	return f.mapping("", doc.Content[0])
}

// fileLoader walks a YAML file's nodes.
type fileLoader struct {
	c    *config
	path string
	from origins
}

func (f *fileLoader) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", f.path, n.Line, fmt.Sprintf(format, args...))
}

// mapping reads the section at prefix ("" for the whole file).
func (f *fileLoader) mapping(prefix string, n *yaml.Node) error {
	name := prefix
	if name == "" {
		name = "the file"
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // a section left empty
	}
	if n.Kind != yaml.MappingNode {
		return f.errorf(n, "%s: want a mapping of keys to settings", name)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		if prefix != "" {
			key = prefix + "." + k.Value
		}
		if seen[key] {
			return f.errorf(k, "%s: given twice", key)
		}
		seen[key] = true
		if s := settingByKey[key]; s != nil {
			if err := f.setting(s, v); err != nil {
				return err
			}
			f.from[s.name] = fmt.Sprintf("%s (%s:%d)", key, f.path, k.Line)
			continue
		}
		if sections[key] {
			if err := f.mapping(key, v); err != nil {
				return err
			}
			continue
		}
		return f.errorf(k, "unknown key %s", key)
	}
	return nil
}

// setting reads the value of s.
func (f *fileLoader) setting(s *setting, v *yaml.Node) error {
	p := s.field(f.c)
	if shards, ok := p.(*[]cluster.ShardConfig); ok {
		return f.shards(s.key, v, shards)
	}
	text, err := f.scalar(s.key, v)
	if err != nil {
		return err
	}
	if err := parseValue(p, text); err != nil {
		return f.errorf(v, "%s: %v", s.key, err)
	}
	return nil
}

// scalar is the text of a single value; null is the empty text.
func (f *fileLoader) scalar(key string, v *yaml.Node) (string, error) {
	if v.Kind == yaml.AliasNode {
		v = v.Alias
	}
	if v.Kind != yaml.ScalarNode {
		return "", f.errorf(v, "%s: want a single value", key)
	}
	if v.Tag == "!!null" {
		return "", nil
	}
	return v.Value, nil
}

// shards reads the list of shards, each a mapping of url, datacenter and
// rack.
func (f *fileLoader) shards(key string, v *yaml.Node, shards *[]cluster.ShardConfig) error {
	*shards = nil
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		return f.errorf(v, "%s: want a list of shards, each with url, datacenter and rack", key)
	}
	for i, item := range v.Content {
		at := fmt.Sprintf("%s[%d]", key, i)
		if item.Kind != yaml.MappingNode {
			return f.errorf(item, "%s: want a mapping with url, datacenter and rack", at)
		}
		var shard cluster.ShardConfig
		fields := map[string]*string{"url": &shard.URL, "datacenter": &shard.Datacenter, "rack": &shard.Rack}
		seen := map[string]bool{}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, val := item.Content[j], item.Content[j+1]
			p, ok := fields[k.Value]
			if !ok {
				return f.errorf(k, "unknown key %s.%s: a shard has %s", at, k.Value, strings.Join(shardKeys, ", "))
			}
			if seen[k.Value] {
				return f.errorf(k, "%s.%s: given twice", at, k.Value)
			}
			seen[k.Value] = true
			text, err := f.scalar(at+"."+k.Value, val)
			if err != nil {
				return err
			}
			*p = text
		}
		if shard.URL == "" {
			return f.errorf(item, "%s: a shard needs a url", at)
		}
		*shards = append(*shards, shard)
	}
	return nil
}

// marshal prints the configuration as a YAML file that loadFile reads back
// to the same configuration, but for secrets, which print as REDACTED.
func (c *config) marshal() ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	for i := range settings {
		s := &settings[i]
		parent, key := root, s.key
		for {
			section, rest, ok := strings.Cut(key, ".")
			if !ok {
				break
			}
			parent, key = subsection(parent, section), rest
		}
		parent.Content = append(parent.Content, str(key), valueNode(s, s.field(c)))
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// subsection is the mapping under key in n, which it adds when missing.
func subsection(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	m := &yaml.Node{Kind: yaml.MappingNode}
	n.Content = append(n.Content, str(key), m)
	return m
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// valueNode is the printed value of setting s, which p points to.
func valueNode(s *setting, p any) *yaml.Node {
	switch p := p.(type) {
	case *[]cluster.ShardConfig:
		list := &yaml.Node{Kind: yaml.SequenceNode}
		if len(*p) == 0 {
			list.Style = yaml.FlowStyle
		}
		for _, shard := range *p {
			url, _ := redactShard(shard.URL)
			list.Content = append(list.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
				str("url"), str(url), str("datacenter"), str(shard.Datacenter), str("rack"), str(shard.Rack)}})
		}
		return list
	case *bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: formatValue(p)}
	case *int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: formatValue(p)}
	}
	text := formatValue(p)
	if s.secret && text != "" {
		text = redacted
	}
	return str(text)
}

// kvPassword matches a password in a keyword/value connection string,
// quoted or not.
var kvPassword = regexp.MustCompile(`(?:^|\s)(?:ssl)?password\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']\S*)`)

// redactShard is a shard's URL or keyword/value connection string with
// every password in it replaced by REDACTED, and whether it held any.
func redactShard(conn string) (string, bool) {
	if strings.HasPrefix(conn, "postgres://") || strings.HasPrefix(conn, "postgresql://") {
		return redactURL(conn)
	}
	found := false
	var out strings.Builder
	last := 0
	for _, m := range kvPassword.FindAllStringSubmatchIndex(conn, -1) {
		found = true
		out.WriteString(conn[last:m[2]])
		out.WriteString(redacted)
		last = m[3]
	}
	out.WriteString(conn[last:])
	return out.String(), found
}

// redactURL redacts the password of a URL's user information and the
// password parameters of its query.
func redactURL(u string) (string, bool) {
	found := false
	scheme, rest, _ := strings.Cut(u, "://")
	// The user information ends at the last @ before the query: a password
	// left unescaped may hold @ or / itself.
	end := len(rest)
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		end = i
	}
	if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
		if user, password, ok := strings.Cut(rest[:at], ":"); ok && password != "" {
			found = true
			rest = user + ":" + redacted + rest[at:]
		}
	}
	if path, query, ok := strings.Cut(rest, "?"); ok {
		query, fragment, hasFragment := strings.Cut(query, "#")
		params := strings.Split(query, "&")
		for i, param := range params {
			if k, v, ok := strings.Cut(param, "="); ok && v != "" && (k == "password" || k == "sslpassword") {
				found = true
				params[i] = k + "=" + redacted
			}
		}
		rest = path + "?" + strings.Join(params, "&")
		if hasFragment {
			rest += "#" + fragment
		}
	}
	return scheme + "://" + rest, found
}
