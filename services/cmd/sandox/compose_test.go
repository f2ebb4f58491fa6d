package main

import (
	"maps"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/sandox/sandox/build"
)

// composeFile is the part of a Compose file the comparison reads.
type composeFile struct {
	Services map[string]composeService
	Networks map[string]struct {
		Name   string
		Labels map[string]string
	}
	Volumes map[string]struct{ Name string }
}

type composeService struct {
	Image             string
	ContainerName     string `yaml:"container_name"`
	Command           []string
	User              string
	Labels            map[string]string
	Environment       map[string]string
	Volumes           []string
	Networks          composeNetworks
	CapAdd            []string `yaml:"cap_add"`
	CapDrop           []string `yaml:"cap_drop"`
	SecurityOpt       []string `yaml:"security_opt"`
	DeviceCgroupRules []string `yaml:"device_cgroup_rules"`
	Ports             []string
	Restart           string
}

// composeNetworks are a service's networks with their aliases, written as
// a list of names or as a map.
type composeNetworks map[string][]string

func (n *composeNetworks) UnmarshalYAML(v *yaml.Node) error {
	*n = composeNetworks{}
	if v.Kind == yaml.SequenceNode {
		var names []string
		if err := v.Decode(&names); err != nil {
			return err
		}
		for _, name := range names {
			(*n)[name] = nil
		}
		return nil
	}
	var m map[string]struct{ Aliases []string }
	if err := v.Decode(&m); err != nil {
		return err
	}
	for name, cfg := range m {
		(*n)[name] = cfg.Aliases
	}
	return nil
}

// composeVar is a Compose interpolation: ${NAME}, ${NAME:-default} or
// ${NAME:?message}.
var composeVar = regexp.MustCompile(`\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}`)

// withDefaults interpolates s as Compose does with none of its variables
// set: each takes its default, or "" (a required one, too).
func withDefaults(s string) string {
	return composeVar.ReplaceAllStringFunc(s, func(m string) string {
		g := composeVar.FindStringSubmatch(m)
		if g[2] == "-" {
			return g[3]
		}
		return ""
	})
}

// readCompose parses a Compose file of the repository.
func readCompose(t *testing.T, name string) composeFile {
	t.Helper()
	data, err := os.ReadFile("../../../" + name)
	require.NoError(t, err)
	var f composeFile
	require.NoError(t, yaml.Unmarshal(data, &f), name)
	return f
}

// mounts maps a list of "source:target[:mode]" to target → "source[:mode]".
func mounts(binds []string) map[string]string {
	out := map[string]string{}
	for _, b := range binds {
		parts := strings.SplitN(b, ":", 3)
		v := parts[0]
		if len(parts) == 3 {
			v += ":" + parts[2]
		}
		out[parts[1]] = v
	}
	return out
}

// TestComposeMatchesTable compares every service of compose.yaml with its
// row of the control-plane table that `sandox up` runs: container name,
// image, command, user, settings (fixed values equal, computed ones taken
// from the variable of the same name, passed-through ones named by the
// row's prefixes), mounts by container path, networks and aliases,
// capabilities, device rules, hardening, ports and restart policy. Rules
// that differ by nature: secrets are the read-only directory
// ${SANDOX_SECRETS_DIR}/<service> bound where `sandox up` copies them, and
// the image is a variable whose default is build.ControlImage. Names are
// compared with every variable at its default (`sandox up`'s names).
func TestComposeMatchesTable(t *testing.T) {
	f := readCompose(t, "compose.yaml")
	table := controlPlane(upSettings{})
	var services []string
	for _, c := range table {
		services = append(services, c.Service)
	}
	assert.ElementsMatch(t, services, slices.Collect(maps.Keys(f.Services)), "compose.yaml's services are the table's")

	for _, n := range controlPlaneNetworks {
		found := false
		for _, cn := range f.Networks {
			if withDefaults(cn.Name) == n.Name {
				found = true
				assert.Equal(t, n.Role, cn.Labels[controlPlaneRole], "network %s", n.Name)
			}
		}
		assert.True(t, found, "compose.yaml declares the network %s", n.Name)
	}

	for _, c := range table {
		t.Run(c.Service, func(t *testing.T) {
			s, ok := f.Services[c.Service]
			require.True(t, ok)
			compareService(t, f, c, s, c.Name, composeExceptions{})
		})
	}
}

// composeExceptions are what a Compose service may set otherwise than its
// row of the table: settings whose values differ (each still set), extra
// settings, mounts whose sources differ (by container path), and whether
// its container name and ports are its own.
type composeExceptions struct {
	values, extra, sources map[string]bool
	ownPorts               bool
}

// compareService compares the Compose service s of f with the table's
// row c, as TestComposeMatchesTable describes, but for except.
func compareService(t *testing.T, f composeFile, c controlPlaneContainer, s composeService, name string, except composeExceptions) {
	assert.Equal(t, name, withDefaults(s.ContainerName))
	assert.Equal(t, "${SANDOX_CONTROL_IMAGE:-"+build.ControlImage+"}", s.Image)
	assert.Equal(t, c.Cmd, s.Command)
	assert.Equal(t, c.User, s.User)
	assert.Equal(t, c.Role, s.Labels[controlPlaneRole])
	assert.Equal(t, "unless-stopped", s.Restart)
	assert.ElementsMatch(t, c.CapAdd, s.CapAdd)
	assert.ElementsMatch(t, c.DeviceRules, s.DeviceCgroupRules)
	if c.Hardened {
		assert.Equal(t, []string{"ALL"}, s.CapDrop)
		assert.Equal(t, []string{"no-new-privileges"}, s.SecurityOpt)
	} else {
		assert.Empty(t, s.CapDrop)
		assert.Empty(t, s.SecurityOpt)
	}
	var ports []string
	for container, host := range c.Publish {
		ports = append(ports, "127.0.0.1:"+host+":"+strings.TrimSuffix(container, "/tcp"))
	}
	var got []string
	for _, p := range s.Ports {
		got = append(got, withDefaults(p))
	}
	if !except.ownPorts {
		assert.ElementsMatch(t, ports, got, "ports")
	}

	// Networks, by their names, with the aliases.
	want := map[string][]string{}
	for i, n := range c.Networks {
		want[n] = nil
		if i == 0 {
			want[n] = c.Aliases
		}
	}
	gotNets := map[string][]string{}
	for key, aliases := range s.Networks {
		gotNets[withDefaults(f.Networks[key].Name)] = aliases
	}
	assert.Equal(t, want, gotNets, "networks")

	// Mounts by container path: the table's binds, and the
	// secrets' directory.
	wantMounts := mounts(c.Binds)
	wantMounts[c.CopyIn.Dir] = "/etc/sandox/" + c.Service + ":ro"
	gotMounts := map[string]string{}
	var expanded []string
	for _, v := range s.Volumes {
		expanded = append(expanded, withDefaults(v))
	}
	for target, source := range mounts(expanded) {
		src, mode, _ := strings.Cut(source, ":")
		if v, ok := f.Volumes[src]; ok {
			src = withDefaults(v.Name)
		}
		if mode != "" {
			src += ":" + mode
		}
		gotMounts[target] = src
	}
	for target := range except.sources {
		_, ok := gotMounts[target]
		assert.True(t, ok, "%s is mounted", target)
		gotMounts[target] = wantMounts[target]
	}
	assert.Equal(t, wantMounts, gotMounts, "mounts")
	assert.Contains(t, s.Volumes, "${SANDOX_SECRETS_DIR:-/etc/sandox}/"+c.Service+":"+c.CopyIn.Dir+":ro", "secrets from SANDOX_SECRETS_DIR")

	// Settings.
	for _, e := range c.Env {
		v, ok := s.Environment[e.Key]
		if !assert.True(t, ok, "%s is set", e.Key) {
			continue
		}
		if except.values[e.Key] {
			continue
		}
		if e.Variable {
			assert.Regexp(t, `^\$\{`+e.Key+`(:[-?][^}]*)?\}$`, v, "%s is computed by sandox up: compose takes it from its variable", e.Key)
			continue
		}
		assert.Equal(t, e.Value, withDefaults(v), e.Key)
	}
	for key, v := range s.Environment {
		if except.extra[key] || slices.ContainsFunc(c.Env, func(e setting) bool { return e.Key == key }) {
			continue
		}
		if c.AWS && strings.HasPrefix(key, "AWS_") {
			// awsenv.ForContainer: a variable naming a file names its
			// copy among the service's secrets; the others pass.
			if !strings.HasPrefix(v, "${") {
				assert.True(t, strings.HasPrefix(v, c.CopyIn.Dir+"/aws-"), "%s names a copy among the secrets in %s, not %s", key, c.CopyIn.Dir, v)
				continue
			}
			assert.Equal(t, "${"+key+":-}", v, "a passed-through variable is the operator's, unset by default")
			continue
		}
		passed := slices.ContainsFunc(c.Pass, func(p string) bool {
			return strings.HasPrefix(key+"=", p)
		})
		assert.True(t, passed, "%s is neither a setting of the table's %s nor passed through by it", key, c.Service)
		assert.Equal(t, "${"+key+":-}", v, "a passed-through variable is the operator's, unset by default")
	}
	if c.AWS {
		for _, key := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"} {
			assert.Contains(t, s.Environment, key, "the operator's AWS settings pass")
		}
	}
	for _, p := range c.Pass {
		assert.True(t, slices.ContainsFunc(slices.Collect(maps.Keys(s.Environment)), func(k string) bool { return strings.HasPrefix(k+"=", p) }), "compose passes some %s*", p)
	}
}

// TestComposeClusterMatchesTable compares compose.cluster.yaml with the
// table as TestComposeMatchesTable does compose.yaml, but for what a
// cluster changes by nature: the NATS nodes (their own commands and
// ports, not compared), each component's list of the nodes' URLs, each
// worker's name, host and system label and the host directory of the
// sandboxes' NATS socket, and the second worker's Docker socket (the
// second engine's).
func TestComposeClusterMatchesTable(t *testing.T) {
	f := readCompose(t, "compose.cluster.yaml")
	rows := map[string]controlPlaneContainer{}
	for _, c := range controlPlane(upSettings{}) {
		rows[c.Service] = c
	}
	nodes := 0
	for name, s := range f.Services {
		if strings.HasPrefix(name, "nats-") {
			nodes++
			assert.Equal(t, rows["nats"].User, s.User, name)
			assert.Contains(t, s.Volumes, "${SANDOX_SECRETS_DIR:-/etc/sandox}/nats:"+natsAuthDir+":ro", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			except := composeExceptions{values: map[string]bool{"SANDOX_NATS_URL": true}}
			row := strings.TrimSuffix(strings.TrimSuffix(name, "-a"), "-b")
			if row == "orchestrator" {
				for _, k := range []string{"SANDOX_WORKER", "SANDOX_SYSTEM", "SANDOX_NATS_SOCKET"} {
					except.values[k] = true
				}
				except.extra = map[string]bool{"SANDOX_HOST": true}
				except.sources = map[string]bool{"/var/run/docker.sock": true}
			}
			c, ok := rows[row]
			require.True(t, ok, "%s is a row of the table", name)
			compareService(t, f, c, s, "sandox-"+name, except)
			assert.Equal(t, "nats://nats-1:4222,nats://nats-2:4222,nats://nats-3:4222", s.Environment["SANDOX_NATS_URL"])
		})
	}
	assert.Equal(t, 3, nodes, "NATS nodes")
	for _, name := range []string{"orchestrator-a", "orchestrator-b", "data", "search", "dashboard"} {
		assert.Contains(t, f.Services, name)
	}
}

// TestWithDefaults checks the interpolation the comparison uses.
func TestWithDefaults(t *testing.T) {
	assert.Equal(t, "sandox-nats", withDefaults("${COMPOSE_PROJECT_NAME:-sandox}-nats"))
	assert.Equal(t, "", withDefaults("${SANDOX_NEO4J_IMAGE:-}"))
	assert.Equal(t, "", withDefaults("${X:?set X}"))
	assert.Equal(t, "/a/b", withDefaults("${D:-/a}/b"))
	assert.Equal(t, "nats", path.Base(withDefaults("${S:-/etc/sandox}/nats")))
}
