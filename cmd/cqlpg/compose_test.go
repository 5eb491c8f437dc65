package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeFile is the part of a compose file the checks read.
type composeFile struct {
	Services map[string]struct {
		Image     string         `yaml:"image"`
		Build     any            `yaml:"build"`
		Command   []string       `yaml:"command"`
		Ports     []string       `yaml:"ports"`
		Volumes   []string       `yaml:"volumes"`
		DependsOn any            `yaml:"depends_on"`
		Env       map[string]any `yaml:"environment"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// TestComposeFile checks docker-compose.yml as far as it can be without
// a container engine: it parses, with its anchors merged; every service
// has an image or a build; what services depend on exists; named volumes
// are declared and mounted files are in the repository; published host
// ports are unique; the gateways' shards are services of the file and
// sit in two racks; Prometheus scrapes both gateways; Grafana's dashboard
// is valid JSON.
func TestComposeFile(t *testing.T) {
	root := filepath.Join("..", "..")
	raw, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("docker-compose.yml does not parse: %v", err)
	}
	hostPorts := map[string]string{}
	shardURL := regexp.MustCompile(`^--shard=([^:=]+):([^:=]+)=postgres://[^@]+@([^:/]+):`)
	var gateways []string
	racks := map[string]bool{}
	for name, s := range f.Services {
		if s.Image == "" && s.Build == nil {
			t.Errorf("service %s has neither image nor build", name)
		}
		for _, dep := range dependencies(s.DependsOn) {
			if _, ok := f.Services[dep]; !ok {
				t.Errorf("service %s depends on %s, which is not a service", name, dep)
			}
		}
		for _, p := range s.Ports {
			host, _, ok := strings.Cut(p, ":")
			if !ok {
				t.Errorf("service %s: port %q publishes no host port", name, p)
			}
			if other, dup := hostPorts[host]; dup {
				t.Errorf("host port %s published by %s and %s", host, other, name)
			}
			hostPorts[host] = name
		}
		for _, v := range s.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if strings.HasPrefix(src, ".") {
				if _, err := os.Stat(filepath.Join(root, src)); err != nil {
					t.Errorf("service %s mounts %s: %v", name, src, err)
				}
			} else if _, ok := f.Volumes[src]; !ok {
				t.Errorf("service %s mounts volume %s, which is not declared", name, src)
			}
		}
		isGateway := false
		for _, arg := range s.Command {
			if m := shardURL.FindStringSubmatch(arg); m != nil {
				isGateway = true
				racks[m[2]] = true
				if _, ok := f.Services[m[3]]; !ok {
					t.Errorf("service %s uses shard host %s, which is not a service", name, m[3])
				}
				if !slices.Contains(dependencies(s.DependsOn), m[3]) {
					t.Errorf("service %s does not wait for its shard %s", name, m[3])
				}
			}
		}
		if isGateway {
			gateways = append(gateways, name)
		}
	}
	if len(gateways) != 2 || len(racks) != 2 {
		t.Errorf("gateways %v over racks %v, want two gateways over shards in two racks", gateways, racks)
	}
	for _, want := range []string{"prometheus", "grafana"} {
		if _, ok := f.Services[want]; !ok {
			t.Errorf("no %s service", want)
		}
	}
	prom, err := os.ReadFile(filepath.Join(root, "docs", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gateways {
		if !strings.Contains(string(prom), g+":9180") {
			t.Errorf("docs/prometheus.yml does not scrape %s:9180", g)
		}
	}
	dashboard, err := os.ReadFile(filepath.Join(root, "docs", "grafana", "cqlpg.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(dashboard) {
		t.Error("docs/grafana/cqlpg.json is not valid JSON")
	}
}

// dependencies returns the services of a depends_on, given as a list or
// as a map of conditions.
func dependencies(v any) []string {
	var deps []string
	switch d := v.(type) {
	case []any:
		for _, x := range d {
			if s, ok := x.(string); ok {
				deps = append(deps, s)
			}
		}
	case map[string]any:
		for k := range d {
			deps = append(deps, k)
		}
	}
	return deps
}
